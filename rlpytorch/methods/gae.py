"""Generalized Advantage Estimation (Schulman et al., 2016)."""

from __future__ import annotations

import torch
from torch import Tensor

from ..args_provider import Arg, Configurable


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
        F = torch.zeros_like(V) if final_value is None else final_value.to(V.dtype)
        A = torch.zeros_like(V)
        for t in range(V.shape[0] - 2, -1, -1):
            alive = 1.0 - terminal[t + 1].to(V.dtype)
            delta = r[t + 1] + self.gamma * (alive * V[t + 1] + F[t + 1]) - V[t]
            step = delta + self.gamma * self.gae_lambda * alive * A[t + 1]
            A[t] = torch.where(cut[t], torch.zeros_like(step), step)
        return A + V
