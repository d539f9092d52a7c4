"""Sphinx configuration: the API reference is built from the docstrings of the installed elfpy and rlpytorch.

Build with `bash scripts/build_docs.sh` (warnings are errors). Docstrings are reStructuredText read by autodoc;
the Markdown pages (design.md, third_party.md, the tour) are read by myst-parser.
"""

import dataclasses
import inspect
import typing

from sphinx.util.inspect import stringify_signature

project = "ELF"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_autosummary/*.tmp"]
html_theme = "alabaster"

# One page per module (api.rst walks both packages), each documenting what the module defines. A package's
# re-exports (its __all__) are documented where they are defined, so every object has one page to link to.
autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
myst_heading_anchors = 3


def _dataclass_signature(app, what, name, obj, options, signature, return_annotation):
    """A dataclass's signature with each field's annotation resolved in the module that declared the field.

    A subclass's generated ``__init__`` reads inherited annotations (strings, under ``from __future__ import
    annotations``) in the subclass's module, where the name may be unknown or mean something else; unresolved,
    Sphinx links a bare ``Replay`` to whichever ``Replay`` it finds. ``typing.get_type_hints`` walks the MRO
    and reads each class's annotations in its own module.
    """
    if what != "class" or not dataclasses.is_dataclass(obj) or signature is None:
        return None
    try:
        hints = typing.get_type_hints(obj)
    except NameError:  # an annotation imported only for type checkers: keep autodoc's signature
        return None
    signature_ = inspect.signature(obj)
    parameters = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature_.parameters.values()]
    resolved = signature_.replace(parameters=parameters, return_annotation=inspect.Signature.empty)
    return stringify_signature(resolved, unqualified_typehints=True), return_annotation


def setup(app):
    app.connect("autodoc-process-signature", _dataclass_signature)
