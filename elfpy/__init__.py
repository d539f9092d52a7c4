"""elfpy: the Python face of the ELF engine.

Games run in C++ worker threads; their states reach Python in batches, one
stream per tag, either through callbacks (`reg_callback` + `run`) or by
iterating over the context. See `GameContext` for the loop and the meaning of
every key.

Importing the package loads no C++: its public names are looked up in their
modules on first use (PEP 562), so the engine-free modules (`elfpy.files`,
`elfpy.parent_watch`, `elfpy.limits`, ...) serve rlpytorch's models, methods
and replay without loading `elfpy._elf` and what it brings in.
"""

from __future__ import annotations

import importlib
from typing import Any

# Each public name and the module it lives in.
_HOMES = {
    "GameError": "elfpy._elf",
    "Batch": "elfpy.context",
    "GameContext": "elfpy.context",
    "KeySpec": "elfpy.context",
    "TagInfo": "elfpy.context",
    "games": "elfpy.context",
    "SingleEnv": "elfpy.single_env",
    "make": "elfpy.single_env",
    "NativeVectorEnv": "elfpy.vector",
    "make_vector": "elfpy.vector",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'elfpy' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # found once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
