"""Discounted n-step return, bootstrapped from the value at the window's end."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from .window import alive_after, backward_returns, final_after


@dataclass
class DiscountedReward:
    """``R_t = r_{t+1} + gamma ((1 - terminal_{t+1}) R_{t+1} + F_{t+1})``, with ``R_t = V_t`` at cuts.

    ``F`` (``final_value``) is ``V(final_s)`` on the terminal rows of
    time-limit truncations (the episode was cut, not over) and 0 elsewhere;
    None means 0 everywhere. ``r``, ``terminal``, ``V``, ``cut`` and ``F`` are
    ``[T, B]``; ``V`` should be detached. The last row is always a cut, so
    ``R_{T-1} = V(s_{T-1})``. Returns the targets ``R`` ``[T, B]``.
    """

    gamma: float

    def __call__(
        self, r: Tensor, terminal: Tensor, V: Tensor, cut: Tensor, final_value: Tensor | None = None
    ) -> Tensor:
        base = r[1:].to(V.dtype) + self.gamma * final_after(final_value, V)
        return backward_returns(V, cut, base, self.gamma * alive_after(terminal, V.dtype))
