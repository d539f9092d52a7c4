"""rlpytorch: reinforcement learning in PyTorch on the engine's batches.

Components are small and replaceable, each declaring its own settings
(``core.args_provider``); data is time-major ``[T, B, ...]`` throughout. This
package never imports the engine: it sees batches as mappings of arrays.

The Python entry point is the same as the command line's::

    import rlpytorch
    run = rlpytorch.train(rlpytorch.config("cartpole_fast"))

``config``, ``train`` (a function), ``Training`` and ``Run`` come from
``rlpytorch.training``, imported on first use: importing ``rlpytorch`` loads
no torch and no engine. The command line is ``python -m rlpytorch.train``, a
script over the same function.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Run", "Training", "config", "train"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module(".training", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
