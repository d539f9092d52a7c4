"""Discounted n-step return, bootstrapped from the value at the window's end."""

from __future__ import annotations

import torch
from torch import Tensor


class DiscountedReward:
    """``R_t = r_{t+1} + gamma ((1 - terminal_{t+1}) R_{t+1} + F_{t+1})``, with ``R_t = V_t`` at cuts.

    ``F`` (``final_value``) is ``V(final_s)`` on the terminal rows of
    time-limit truncations (the episode was cut, not over) and 0 elsewhere;
    None means 0 everywhere. ``r``, ``terminal``, ``V``, ``cut`` and ``F`` are
    ``[T, B]``; ``V`` should be detached. The last row is always a cut, so
    ``R_{T-1} = V(s_{T-1})``. Returns the targets ``R`` ``[T, B]``.
    """

    def __init__(self, gamma: float = 0.99) -> None:
        self.gamma = gamma

    def __call__(
        self, r: Tensor, terminal: Tensor, V: Tensor, cut: Tensor, final_value: Tensor | None = None
    ) -> Tensor:
        F = torch.zeros_like(V) if final_value is None else final_value.to(V.dtype)
        R = torch.empty_like(V)
        R[-1] = V[-1]
        for t in range(V.shape[0] - 2, -1, -1):
            alive = 1.0 - terminal[t + 1].to(V.dtype)
            step = r[t + 1] + self.gamma * (alive * R[t + 1] + F[t + 1])
            R[t] = torch.where(cut[t], V[t], step)
        return R
