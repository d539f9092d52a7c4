"""Outcome return: every step is credited with the reward that ends its episode."""

from __future__ import annotations

import torch
from torch import Tensor

from .window import backward_returns


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
        def step(t: int, R_next: Tensor, F_next: Tensor) -> Tensor:
            return torch.where(terminal[t + 1].bool(), r[t + 1].to(V.dtype) + F_next, R_next)

        return backward_returns(V, cut, final_value, step)
