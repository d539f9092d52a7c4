"""Outcome return: every step is credited with the reward that ends its episode."""

from __future__ import annotations

import torch
from torch import Tensor


class FinalReward:
    """``R_t = r_{t+1} + F_{t+1}`` if ``terminal_{t+1}`` else ``R_{t+1}``; ``R_t = V_t`` at cuts.

    For games whose only reward is the outcome (win +1, loss -1), swapping this
    in for ``DiscountedReward`` turns ActorCritic into REINFORCE with the
    outcome as return (plus a value baseline). Inside an unfinished episode the
    return is the value at the window's end; an episode cut by a time limit
    is worth ``F = V(final_s)`` besides its last reward. Shapes as ``DiscountedReward``.
    """

    def __call__(
        self, r: Tensor, terminal: Tensor, V: Tensor, cut: Tensor, final_value: Tensor | None = None
    ) -> Tensor:
        F = torch.zeros_like(V) if final_value is None else final_value.to(V.dtype)
        R = torch.empty_like(V)
        R[-1] = V[-1]
        for t in range(V.shape[0] - 2, -1, -1):
            step = torch.where(terminal[t + 1].bool(), r[t + 1].to(V.dtype) + F[t + 1], R[t + 1])
            R[t] = torch.where(cut[t], V[t], step)
        return R
