"""The gymnasium space of a game's actions, read from its key specs.

Every action key's spec carries its space (``spec[key].space``: Discrete,
MultiDiscrete or Box, stated by the game); a game with several action keys
acts in the ``Dict`` of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gymnasium import spaces

__all__ = ["action_keys", "action_space", "key_space"]


def key_space(key: Any) -> spaces.Space:
    """The space of one action key (its ``KeySpec.space``)."""
    if key.space is None:
        raise ValueError(f"key '{key.name}' has no action space (role {key.role!r})")
    return key.space


def action_keys(spec: Mapping[str, Any]) -> list[str]:
    """The game's action keys: ``a``, or the entries of a Dict action."""
    return [name for name, key in spec.items() if key.role == "action"]


def action_space(spec: Mapping[str, Any]) -> spaces.Space:
    """The space of the game's action keys: the one key's, or a ``Dict`` of several."""
    keys = {name: key_space(key) for name, key in spec.items() if key.role == "action"}
    if not keys:
        raise ValueError(f"the game has no action key; its keys: {sorted(spec)}")
    return next(iter(keys.values())) if len(keys) == 1 else spaces.Dict(keys)
