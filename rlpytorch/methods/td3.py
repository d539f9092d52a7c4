"""TD3 (Fujimoto et al., 2018): DDPG with twin critics, target policy smoothing and delayed updates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor

from ..core.args_provider import at_least, setting
from ..models.actor_q import ActorQ
from .continuous_q import smoothed_target_action
from .ddpg import DDPG

__all__ = ["TD3"]


@dataclass(eq=False)
class TD3(DDPG):
    """DDPG's update with three changes:

    - twin critics (``--critics 2``), each regressed on ``y = r + discount *
      min_i Q'_i(s', a')`` (clipped double Q);
    - target policy smoothing: ``a' = clip(mu'(s') + h clip(eps, -c, c), low, high)``,
      ``eps ~ N(0, target_noise^2)``, ``c = target_noise_clip``, ``h`` the half-range;
    - delayed updates: the actor (``loss = -mean Q_1(s, mu(s))``) and the targets
      (Polyak) move only after every ``policy_delay``-th critic update.
    """

    policy_delay: int = setting(2, "TD3: the actor and the targets move every N critic updates", bounds=at_least(1))
    target_noise: float = setting(0.2, "TD3: std of the target policy smoothing noise, in half-range units",
                                  bounds=at_least(0))
    target_noise_clip: float = setting(0.5, "TD3: the smoothing noise is clipped to +-this (half-range units)",
                                       bounds=at_least(0))

    name: ClassVar[str] = "td3"
    critics: ClassVar[tuple[int, int]] = (2, 2**31)
    run_defaults: ClassVar[Mapping[str, Any]] = {**DDPG.run_defaults, "critics": 2}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.policy_delay < 1 or self.target_noise < 0 or self.target_noise_clip < 0:
            raise ValueError(f"TD3 needs policy_delay >= 1 and non-negative noise; got {self.policy_delay}, "
                             f"{self.target_noise}, {self.target_noise_clip}")

    def target_action(self, target: ActorQ, x_next: Tensor) -> Tensor:
        """``a'``: the target actor's action, smoothed."""
        with torch.no_grad():
            low = target.action_center - target.action_half
            high = target.action_center + target.action_half
            generator = self.generator if x_next.device.type == "cpu" else None
            return smoothed_target_action(target.policy(x_next).mode(), self.target_noise, self.target_noise_clip,
                                          low, high, generator)

    def actor_due(self, updates: int) -> bool:
        return updates % self.policy_delay == 0
