"""The lambda-return (Sutton & Barto, 12.1), computed recursively."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from .window import alive_after, backward_returns, final_after


@dataclass
class LambdaReturn:
    """``G_t = r_{t+1} + gamma ((1 - terminal_{t+1}) ((1 - lambda) V_{t+1} + lambda G_{t+1}) + F_{t+1})``

    with ``G_t = V_t`` at cuts and ``F`` = ``V(final_s)`` on truncated terminal
    rows, else 0. It mixes n-step returns with weights ``(1 - lambda)
    lambda^(n-1)``; ``lambda = 1`` gives ``DiscountedReward``. Shapes as
    ``DiscountedReward``.
    """

    gamma: float
    td_lambda: float

    def __call__(
        self, r: Tensor, terminal: Tensor, V: Tensor, cut: Tensor, final_value: Tensor | None = None
    ) -> Tensor:
        alive = alive_after(terminal, V.dtype)
        mixed_v = (1.0 - self.td_lambda) * V[1:]
        base = r[1:].to(V.dtype) + self.gamma * (alive * mixed_v + final_after(final_value, V))
        return backward_returns(V, cut, base, self.gamma * self.td_lambda * alive)
