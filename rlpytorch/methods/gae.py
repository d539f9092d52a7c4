"""Generalized Advantage Estimation (Schulman et al., 2016)."""

from __future__ import annotations

from torch import Tensor

from ..args_provider import Arg, Configurable
from .window import backward_returns


class GAE(Configurable):
    """Targets ``R_t = A_t + V_t`` where

    ``delta_t = r_{t+1} + gamma ((1 - terminal_{t+1}) V_{t+1} + F_{t+1}) - V_t``,
    ``A_t = delta_t + gamma lambda (1 - terminal_{t+1}) A_{t+1}``, and ``A_t = 0``
    at cuts (so ``R = V`` there). ``F`` is ``V(final_s)`` on truncated terminal
    rows, else 0. ``lambda = 1`` gives ``DiscountedReward``; ``lambda = 0`` the
    one-step TD target. Shapes as ``DiscountedReward``.
    """

    args = (Arg("gae_lambda", 0.95, "GAE lambda (used when --returns gae)"),)

    def __init__(self, gamma: float = 0.99, gae_lambda: float = 0.95) -> None:
        self.gamma = gamma
        self.gae_lambda = gae_lambda

    def __call__(
        self, r: Tensor, terminal: Tensor, V: Tensor, cut: Tensor, final_value: Tensor | None = None
    ) -> Tensor:
        # Scanned as R = A + V, so A_{t+1} = R_{t+1} - V_{t+1} and A = 0 at cuts.
        def step(t: int, R_next: Tensor, F_next: Tensor) -> Tensor:
            alive = 1.0 - terminal[t + 1].to(V.dtype)
            delta = r[t + 1] + self.gamma * (alive * V[t + 1] + F_next) - V[t]
            return V[t] + delta + self.gamma * self.gae_lambda * alive * (R_next - V[t + 1])

        return backward_returns(V, cut, final_value, step)
