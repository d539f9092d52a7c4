"""Outcome return: every step is credited with the reward that ends its episode."""

from __future__ import annotations

from torch import Tensor

from .window import backward_returns, final_after


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
        ended = terminal[1:].to(V.dtype)
        base = ended * (r[1:].to(V.dtype) + final_after(final_value, V))
        return backward_returns(V, cut, base, 1.0 - ended)
