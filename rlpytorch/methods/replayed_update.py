"""The optimizer step of methods that learn from prioritized replay (DQN, R2D2)."""

from __future__ import annotations

from collections.abc import Mapping

from torch import Tensor

from ..models.interface import ModelInterface

__all__ = ["ReplayedUpdate"]


class ReplayedUpdate:
    """``loss = mean_i(w_i * l_i)``: each replayed row's (or sequence's) loss
    ``l_i`` weighted by the replay's importance weight ``w_i``; then the
    target network follows the learner. A subclass gives ``loss(mi, batch) ->
    (l, new priorities, stats)``, ``grad_clip`` and ``target``."""

    def step(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> tuple[dict[str, float], Tensor]:
        """One optimizer step on a replayed batch: its stats and the rows' new priorities."""
        per_row, priorities, stats = self.loss(mi, batch)
        loss = (per_row * batch["weight"].to(per_row.dtype)).mean()
        grad_norm = mi.step("model", loss, self.grad_clip)
        model = mi["model"]
        model.increment_step()
        self.target(mi, model.step)
        return {**stats, "loss": loss.item(), "grad_norm": grad_norm}, priorities

    def update(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> dict[str, float]:
        """``step`` without the priorities (the trainer's ``Method`` protocol)."""
        return self.step(mi, batch)[0]
