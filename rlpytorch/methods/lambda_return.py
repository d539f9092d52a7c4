"""The lambda-return (Sutton & Barto, 12.1), computed recursively."""

from __future__ import annotations

from torch import Tensor

from ..args_provider import Arg, Configurable
from .window import backward_returns


class LambdaReturn(Configurable):
    """``G_t = r_{t+1} + gamma ((1 - terminal_{t+1}) ((1 - lambda) V_{t+1} + lambda G_{t+1}) + F_{t+1})``

    with ``G_t = V_t`` at cuts and ``F`` = ``V(final_s)`` on truncated terminal
    rows, else 0. It mixes n-step returns with weights ``(1 - lambda)
    lambda^(n-1)``; ``lambda = 1`` gives ``DiscountedReward``. Shapes as
    ``DiscountedReward``.
    """

    args = (
        Arg(
            "td_lambda",
            0.95,
            "lambda of the lambda-return (used when --returns lambda)",
        ),
    )

    def __init__(self, gamma: float = 0.99, td_lambda: float = 0.95) -> None:
        self.gamma = gamma
        self.td_lambda = td_lambda

    def __call__(
        self, r: Tensor, terminal: Tensor, V: Tensor, cut: Tensor, final_value: Tensor | None = None
    ) -> Tensor:
        def step(t: int, G_next: Tensor, F_next: Tensor) -> Tensor:
            alive = 1.0 - terminal[t + 1].to(V.dtype)
            mixed = (1.0 - self.td_lambda) * V[t + 1] + self.td_lambda * G_next
            return r[t + 1] + self.gamma * (alive * mixed + F_next)

        return backward_returns(V, cut, final_value, step)
