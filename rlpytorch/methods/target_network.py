"""The target network of value-based methods: a slow copy of the learner."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..core.args_provider import Bounds, Configurable, at_least, setting
from ..models.interface import ModelInterface

__all__ = ["TargetNetwork"]


@dataclass(eq=False)
class TargetNetwork(Configurable):
    """After update ``k``: ``theta' <- theta`` when ``k % target_period == 0`` (periodic copy),
    or, with ``polyak_tau = tau > 0``, ``theta' <- (1 - tau) theta' + tau theta`` after every update.

    ``theta`` is ``mi["model"]``, ``theta'`` is ``mi["target"]``.
    """

    target_period: int = setting(500, "copy the learner into the target network every N updates", bounds=at_least(1))
    polyak_tau: float = setting(
        0.0, "instead of copies: theta' <- (1 - tau) theta' + tau theta every update (0: copies)", bounds=Bounds(0, 1)
    )

    def __post_init__(self) -> None:
        if self.target_period < 1 or not 0.0 <= self.polyak_tau <= 1.0:
            raise ValueError(f"target_period must be >= 1 and polyak_tau in [0, 1]; "
                             f"got {self.target_period}, {self.polyak_tau}")

    def __call__(self, mi: ModelInterface, updates: int) -> None:
        """Bring ``mi["target"]`` along after the learner's ``updates``-th update."""
        if self.polyak_tau > 0:
            target, model = mi["target"], mi["model"]
            with torch.no_grad():
                dst = list(target.state_dict(keep_vars=True).values())
                src = list(model.state_dict(keep_vars=True).values())
                floats = [(d, s) for d, s in zip(dst, src, strict=True) if d.is_floating_point()]
                torch._foreach_lerp_([d for d, _ in floats], [s for _, s in floats], self.polyak_tau)
            target.step = model.step
        elif updates % self.target_period == 0:
            mi.update_model("target", "model")
