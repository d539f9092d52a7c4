"""The gymnasium space of a game's actions, read from its key specs.

``key_space`` is the one place that turns a ``KeySpec`` (role, dtype, shape,
bounds) into a space; once the engine reports ``spec[key].space`` itself it
becomes that one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["action_space", "key_space"]


def key_space(key: Any) -> spaces.Space:
    """An integer scalar -> ``Discrete(high + 1)``, an integer vector ->
    ``MultiDiscrete`` (every component ``high + 1`` values), a float key -> ``Box``."""
    low, high = key.bounds if key.bounds is not None else (-np.inf, np.inf)
    if np.issubdtype(key.dtype, np.integer):
        if key.bounds is None or low != 0:
            raise ValueError(f"integer action '{key.name}' needs bounds (0, n - 1), got {key.bounds}")
        n = int(high) + 1
        return spaces.Discrete(n) if not key.shape else spaces.MultiDiscrete(np.full(key.shape, n))
    return spaces.Box(low, high, key.shape, key.dtype)


def action_space(spec: Mapping[str, Any]) -> spaces.Space:
    """The space of the game's action keys: the one key's, or a ``Dict`` of several."""
    keys = {name: key_space(key) for name, key in spec.items() if key.role == "action"}
    if not keys:
        raise ValueError(f"the game has no action key; its keys: {sorted(spec)}")
    return next(iter(keys.values())) if len(keys) == 1 else spaces.Dict(keys)
