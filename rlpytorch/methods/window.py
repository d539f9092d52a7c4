"""Shared helpers for time-major ``[T, B]`` training windows.

A window row ``t`` holds state ``s_t``; ``r_{t+1}`` and ``terminal_{t+1}`` on
the next row say what the action taken at ``t`` earned and whether it ended
the episode (the engine auto-resets, so after a terminal the row already holds
the next episode's first state).

A return can be computed only up to a *cut*: the last row of the window, and
any row whose next step was a time-limit truncation (the true final state was
never seen, so the return there bootstraps from ``V(s_t)`` exactly as at the
window's end). Cut rows are left out of the loss.
"""

from __future__ import annotations

import torch
from torch import Tensor


def window_cuts(terminal: Tensor, truncated: Tensor | None = None) -> Tensor:
    """Rows ``t`` where returns bootstrap from ``V(s_t)``: ``[T, B]`` bool.

    ``cut[T-1]`` is always set; ``cut[t]`` is set when ``truncated[t+1]``.
    """
    cut = torch.zeros_like(terminal, dtype=torch.bool)
    cut[-1] = True
    if truncated is not None:
        cut[:-1] = truncated[1:].bool()
    return cut


def masked_mean(x: Tensor, mask: Tensor) -> Tensor:
    """Mean of ``x`` over the rows where ``mask`` is set (0 if none is)."""
    mask = mask.to(x.dtype)
    return (x * mask).sum() / mask.sum().clamp(min=1.0)
