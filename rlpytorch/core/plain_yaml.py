"""YAML without anchors and aliases: every YAML file the platform reads or writes.

An alias (``*name``) repeats an anchored node (``&name``). Read with
``yaml.safe_load``, a few hundred bytes of aliases of aliases (a "billion
laughs") make a value whose printed or copied form is billions of elements
long: a config's error message, a printed configuration or a deep copy of it
would then run until memory is gone. Settings are plain values, which never
need an alias, so ``load_yaml`` refuses the first alias it meets (in time
linear in the text) and ``dump_yaml`` never writes one (a value shared twice
is written twice), so that what the platform writes it reads back.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["AliasNotAllowed", "dump_yaml", "load_yaml"]


class AliasNotAllowed(yaml.MarkedYAMLError):
    """A YAML alias (``*name``), refused where it stands (``problem_mark``)."""


class _NoAliasLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises ``AliasNotAllowed`` at the first alias,
    before the node it repeats is looked up."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.get_event()
            raise AliasNotAllowed(problem=f"aliases are not allowed in configs (found *{event.anchor[:60]})",
                                  problem_mark=event.start_mark)
        return super().compose_node(parent, index)


class _NoAliasDumper(yaml.SafeDumper):
    """``yaml.SafeDumper`` that writes a value shared twice twice, never as an alias."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, but an alias raises ``AliasNotAllowed`` (a
    ``yaml.MarkedYAMLError``), and nesting deeper than Python's recursion
    limit a ``yaml.YAMLError`` rather than a ``RecursionError``."""
    try:
        return yaml.load(text, Loader=_NoAliasLoader)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply") from None


def dump_yaml(data: Any, *, sort_keys: bool = True) -> str:
    """``yaml.safe_dump(data)`` without anchors or aliases (``load_yaml`` reads it back)."""
    return yaml.dump(data, Dumper=_NoAliasDumper, sort_keys=sort_keys)
