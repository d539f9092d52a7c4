"""Regression of the value head onto return targets, optionally clipped (PPO)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from ..core.args_provider import Configurable, at_least, setting
from .window import mask_weights


@dataclass
class ValueMatcher(Configurable):
    """``loss = value_coef * mean_t l(V(s_t), R_t)``, ``l(v, R) = 1/2 (v - R)^2`` (or Huber).

    With ``value_clip = c > 0`` and the values ``V_old`` the targets were
    computed against, each row takes the larger of the plain and the clipped
    error, ``max(l(V, R), l(V_old + clip(V - V_old, -c, c), R))``, so one update
    gains nothing by moving ``V`` further than ``c`` from ``V_old`` (PPO's value
    clipping). ``V``, ``target`` (detached), ``mask`` and ``V_old`` are ``[T, B]``;
    means run over the rows of ``mask``. Returns the loss and a dict of float stats.
    """

    value_coef: float = setting(0.5, "weight of the value loss", bounds=at_least(0))
    value_loss: str = setting("mse", "regression loss of the value head", choices=("mse", "huber"))
    value_clip: float = setting(0.0, "clip the value's move from the old value to this (0: no clipping)",
                                bounds=at_least(0))

    def error(self, V: Tensor, target: Tensor) -> Tensor:
        """``l(V, target)`` per row."""
        if self.value_loss == "huber":
            return F.smooth_l1_loss(V, target, reduction="none")
        return 0.5 * (V - target).square()

    def __call__(
        self, V: Tensor, target: Tensor, mask: Tensor, V_old: Tensor | None = None
    ) -> tuple[Tensor, dict[str, float]]:
        target = target.detach()
        per_row = self.error(V, target)
        if self.value_clip > 0 and V_old is not None:
            V_old = V_old.detach().to(V.dtype)
            clipped = V_old + (V - V_old).clamp(-self.value_clip, self.value_clip)
            per_row = torch.maximum(per_row, self.error(clipped, target))
        weight = mask_weights(mask, per_row.dtype)
        loss = (per_row * weight).sum()
        return self.value_coef * loss, {
            "value_loss": loss.item(),
            "value": (V.detach() * weight).sum().item(),
        }
