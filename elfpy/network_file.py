"""Networks in files: ``load_network`` reads a program saved with
``torch.export.save`` (``.pt2``) so that no file can run code.

``torch.export.load`` trusts its file. In torch 2.13 a ``.pt2`` runs code on
load through (``torch/export/pt2_archive/_package.py``,
``torch/_export/serde/serialize.py``):

* pickles: a legacy weights or constants file (``data/weights/model.pt``,
  ``data/constants/model.pt``) and the example inputs
  (``data/sample_inputs/model.pt``) go to ``deserialize_torch_artifact``,
  which retries a failed ``weights_only=True`` load with
  ``weights_only=False``; a weight or constant marked ``use_pickle`` is
  unpickled with ``weights_only=False``; opaque and custom objects with
  ``pickle.loads`` / TorchScript's unpickler; an archive that fails to load
  falls back to the 2.7 format, whose pickles take the same retry;
* shared libraries: AOTInductor entries (``data/aotinductor/``) are loaded;
* Python source: every symbolic shape (``expr_str``) goes to
  ``sympy.sympify``, which evaluates it, and ``.module()`` compiles
  ``guards_code`` with ``exec``; the weights' dotted paths go unescaped
  into the source code fx generates for the module (``_format_target``);
* imports: the input and output structures (pytree specs) may name a module
  (a defaultdict's factory, an enum), which torch imports.

So checking for pickle entries is not enough. The file is checked against
what ``rlpytorch.models.policy_value.export_evaluator`` writes, and anything
else is refused with ``NetworkFileError`` naming it:

* the archive holds only the entries such a file has (no legacy, pickled,
  opaque, AOTInductor or extra entries, no duplicate names), and every entry
  passes the zip CRC check;
* the example inputs entry is empty (the exporter drops the example inputs),
  and every weight and constant is raw tensor bytes (``use_pickle`` false),
  so nothing is unpickled at all;
* in the program and weight descriptions (JSON), every graph target is an
  ATen operator, every symbolic shape is arithmetic on symbols and integers,
  the input and output structures are tuples, lists and dicts keyed by
  names, and every other string is a name or dotted path, except the fields
  torch only keeps as text (stack traces, module stacks, ``guards_code``);
* ``guards_code`` is never run: the module is made with ``check_guards=False``
  (the batch size is still checked against its range by a hook).

The checked entries are written into a fresh archive in memory, and that is
what torch reads, so torch's zip reader cannot see anything but what was
checked. Converting the format instead (weights with ``weights_only=True``
plus the architecture as data) would need the architecture's code here, and
it lives in ``rlpytorch``, which ``elfpy`` does not import.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

import torch

__all__ = ["NetworkFileError", "load_network"]

MAX_BYTES = 1 << 30  # entries' total size: far above any network this project trains (9x9: 0.6 MB)

ENTRIES = re.compile(r"archive_format|archive_version|byteorder|\.data/version|\.data/serialization_id|"
                     r"models/model\.json|data/sample_inputs/model\.pt|data/weights/model_weights_config\.json|"
                     r"data/weights/weight_\d+|data/constants/model_constants_config\.json|"
                     r"data/constants/tensor_\d+")
PAYLOADS = {"data/weights/model_weights_config.json": "weight_", "data/constants/model_constants_config.json":
            "tensor_"}
TEXT_FIELDS = {"stack_trace", "nn_module_stack", "torch_fn", "torch_version", "guards_code",
               "as_float"}  # never evaluated (as_float holds "NaN", "Infinity")
TREE_SPECS = {"in_spec", "out_spec"}  # pytree specs: JSON whose contexts may name modules to import
TREE_TYPES = {None, "builtins.tuple", "builtins.list", "builtins.dict"}
NAME = re.compile(r"(?:[A-Za-z_]\w*(?:\.\w+)*)?")  # an identifier or dotted path ("" names the root module)
ATEN_OPERATOR = re.compile(r"torch\.ops\.aten\.[A-Za-z_]\w*\.[A-Za-z_]\w*")
SYMBOL = re.compile(r"Symbol\('[a-z]+\d+'(?:, [a-z]+=(?:True|False))*\)")
# Symbol names (letters then digits: no Python builtin is named so, only math in sympy such as atan2), integers:
ARITHMETIC = re.compile(r"(?:[a-z]+\d+|\d+|[-+*/() ])*")


class NetworkFileError(ValueError):
    """A network file that is refused or cannot be read; the message names it."""


def load_network(path: str | Path) -> torch.nn.Module:
    """The module of the program saved in ``path``, after the checks above."""
    archive = _checked_archive(Path(path))
    try:
        return torch.export.load(archive).module(check_guards=False)
    except Exception as error:  # any failure of torch's reader is this file's fault: say which file
        raise NetworkFileError(f"{path}: torch.export cannot load it: {error}") from error


def _checked_archive(path: Path) -> io.BytesIO:
    """The entries of ``path``, checked, in a new archive."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = _read_entries(archive, path)
    # ValueError: a damaged name is a UnicodeDecodeError inside zipfile
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError) as error:
        raise NetworkFileError(f"{path}: not a readable torch.export archive: {error}") from error
    try:
        _check_entries(entries, path)
    except RecursionError as error:
        raise NetworkFileError(f"{path}: its JSON is nested too deeply") from error
    copy = io.BytesIO()
    with zipfile.ZipFile(copy, "w", zipfile.ZIP_STORED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    copy.seek(0)
    return copy


def _read_entries(archive: zipfile.ZipFile, path: Path) -> dict[str, bytes]:
    infos = archive.infolist()
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        raise NetworkFileError(f"{path}: the archive names an entry twice")
    if sum(info.file_size for info in infos) > MAX_BYTES:
        raise NetworkFileError(f"{path}: the archive's entries hold more than {MAX_BYTES:,} bytes")
    return {name: archive.read(name) for name in names}  # read() checks each entry's CRC


def _check_entries(entries: dict[str, bytes], path: Path) -> None:
    roots = {name.split("/", 1)[0] for name in entries}
    if len(roots) != 1:
        raise NetworkFileError(f"{path}: not a torch.export archive (entries under {sorted(roots)})")
    root = roots.pop()
    inside = {name[len(root) + 1:]: data for name, data in entries.items()}
    for name in inside:
        if not ENTRIES.fullmatch(name):
            raise NetworkFileError(f"{path}: unexpected entry {root}/{name} (a network holds only its program "
                                   "and raw weights)")
    if inside.get("archive_format") != b"pt2" or "models/model.json" not in inside:
        raise NetworkFileError(f"{path}: not a torch.export archive")
    if inside.get("data/sample_inputs/model.pt"):
        raise NetworkFileError(f"{path}: it carries pickled example inputs; export the network again "
                               "(rlpytorch.models.policy_value.export_evaluator leaves them out)")
    _check_strings(_json(inside, "models/model.json", path), path)
    for config, prefix in PAYLOADS.items():
        _check_payloads(_json(inside, config, path), prefix, inside, path)


def _json(inside: dict[str, bytes], name: str, path: Path) -> Any:
    try:
        return json.loads(inside.get(name, b"{}"))
    except ValueError as error:
        raise NetworkFileError(f"{path}: {name} is not JSON: {error}") from error


def _check_payloads(config: Any, prefix: str, inside: dict[str, bytes], path: Path) -> None:
    """Every weight (or constant) is raw bytes of an entry beside its description."""
    _check_strings(config, path)
    folder = "data/weights/" if prefix == "weight_" else "data/constants/"
    payloads = config.get("config", {}) if isinstance(config, dict) else None
    if not isinstance(payloads, dict):
        raise NetworkFileError(f"{path}: {folder} has no description of its tensors")
    for fqn, payload in payloads.items():
        raw = isinstance(payload, dict) and payload.get("use_pickle") is False
        file = str(payload.get("path_name")) if raw else ""
        # an empty entry would have torch allocate the tensor at the size the description claims
        if not raw or not re.fullmatch(prefix + r"\d+", file) or not inside.get(folder + file):
            raise NetworkFileError(f"{path}: {fqn} is not stored as raw tensor bytes")


def _check_strings(value: Any, path: Path, field: str = "") -> None:
    """Every key and string in a JSON document, as the module docstring says."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_string(key, "key", path)
            _check_strings(item, path, key)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, path, field)
    elif isinstance(value, str) and field in TREE_SPECS:
        _check_tree_spec(value, path)
    elif isinstance(value, str) and field not in TEXT_FIELDS:
        _check_string(value, field, path)


def _check_tree_spec(text: str, path: Path) -> None:
    """Tuples, lists and dicts (keyed by names) of tensors: no context that names a module
    (a defaultdict's factory, an enum) for torch's pytree reader to import."""
    try:
        nodes = [json.loads(text)[1]]
        while nodes:
            node = nodes.pop()
            context = None if node["context"] is None else json.loads(node["context"])
            names = context is None or isinstance(context, list) and all(
                isinstance(key, str) and NAME.fullmatch(key) for key in context)
            if node["type"] not in TREE_TYPES or not names:
                raise ValueError(node["type"])
            nodes.extend(node["children_spec"])
    except (ValueError, TypeError, KeyError, IndexError) as error:
        raise NetworkFileError(f"{path}: refused input or output structure {text[:80]!r}") from error


def _check_string(text: str, field: str, path: Path) -> None:
    if field == "target":
        fine = ATEN_OPERATOR.fullmatch(text)
    elif field == "expr_str":
        fine = ARITHMETIC.fullmatch(SYMBOL.sub("", text))
    else:
        fine = NAME.fullmatch(text)
    if not fine:
        raise NetworkFileError(f"{path}: refused {field} {text[:80]!r} (not plain data)")
