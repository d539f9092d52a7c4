"""rlpytorch: reinforcement learning in PyTorch on the engine's batches.

Components are small and replaceable, each declaring its own settings
(``core.args_provider``); data is time-major ``[T, B, ...]`` throughout. This
package never imports the engine: it sees batches as mappings of arrays.

The Python entry point is the same as the command line's::

    import rlpytorch
    run = rlpytorch.train(rlpytorch.config("cartpole_fast"))

``config``, ``train``, ``Training`` and ``Run`` come from ``rlpytorch.train``
(imported on first use, so ``python -m rlpytorch.train`` runs that module once).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Run", "Training", "config", "train"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = importlib.import_module(".train", __name__)
        return module if name == "train" else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
