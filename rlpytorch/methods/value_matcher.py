"""Regression of the value head onto return targets."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from ..args_provider import Arg, Configurable
from .window import masked_mean


class ValueMatcher(Configurable):
    """``loss = value_coef * mean_t 1/2 (V(s_t) - R_t)^2`` (or Huber with ``--value_loss huber``).

    ``V``, ``target`` (detached) and ``mask`` are ``[T, B]``; means run over
    the rows of ``mask``. Returns the loss and a dict of float stats.
    """

    args = (
        Arg("value_coef", 0.5, "weight of the value loss"),
        Arg(
            "value_loss",
            "mse",
            "regression loss of the value head",
            choices=("mse", "huber"),
        ),
    )

    def __init__(self, value_coef: float = 0.5, value_loss: str = "mse") -> None:
        self.value_coef = value_coef
        self.value_loss = value_loss

    def __call__(self, V: Tensor, target: Tensor, mask: Tensor) -> tuple[Tensor, dict[str, float]]:
        target = target.detach()
        if self.value_loss == "huber":
            per_row = F.smooth_l1_loss(V, target, reduction="none")
        else:
            per_row = 0.5 * (V - target).square()
        loss = masked_mean(per_row, mask)
        return self.value_coef * loss, {
            "value_loss": loss.item(),
            "value": masked_mean(V, mask).item(),
        }
