"""Discounted n-step return, bootstrapped from the value at the window's end."""

from __future__ import annotations

from torch import Tensor

from .window import backward_returns


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
        def step(t: int, R_next: Tensor, F_next: Tensor) -> Tensor:
            alive = 1.0 - terminal[t + 1].to(V.dtype)
            return r[t + 1] + self.gamma * (alive * R_next + F_next)

        return backward_returns(V, cut, final_value, step)
