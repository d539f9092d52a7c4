"""Generalized Advantage Estimation (Schulman et al., 2016)."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from .window import alive_after, backward_returns, final_after


@dataclass
class GAE:
    """Targets ``R_t = A_t + V_t`` where

    ``delta_t = r_{t+1} + gamma ((1 - terminal_{t+1}) V_{t+1} + F_{t+1}) - V_t``,
    ``A_t = delta_t + gamma lambda (1 - terminal_{t+1}) A_{t+1}``, and ``A_t = 0``
    at cuts (so ``R = V`` there). ``F`` is ``V(final_s)`` on truncated terminal
    rows, else 0. ``lambda = 1`` gives ``DiscountedReward``; ``lambda = 0`` the
    one-step TD target. Shapes as ``DiscountedReward``.
    """

    gamma: float
    gae_lambda: float

    def __call__(
        self, r: Tensor, terminal: Tensor, V: Tensor, cut: Tensor, final_value: Tensor | None = None
    ) -> Tensor:
        # Scanned as R = A + V, so A_{t+1} = R_{t+1} - V_{t+1} and A = 0 at cuts.
        # R_t = V_t + delta_t + gamma lambda alive (R_{t+1} - V_{t+1}): linear in R_{t+1}.
        alive = alive_after(terminal, V.dtype)
        decay = self.gamma * self.gae_lambda * alive
        delta = r[1:].to(V.dtype) + self.gamma * (alive * V[1:] + final_after(final_value, V)) - V[:-1]
        return backward_returns(V, cut, V[:-1] + delta - decay * V[1:], decay)
