"""``Exploration``: how an off-policy actor on Box actions explores (DDPG, TD3, SAC).

The first ``random_frames`` frames of a run (the trainer's ``learning_starts``)
play uniform random actions in the Box, filling the replay before the first
update (with ``--warmup_noise``, plus a deterministic actor's noise, clipped to the
Box, as Stable-Baselines3 adds its action noise to every action). After them a
deterministic actor's action gets Gaussian noise,
``a = clip(mu(s) + h eps, low, high)``, ``eps ~ N(0, action_noise^2)`` per
dimension, with ``h = (high - low) / 2`` (the noise is in units of the
half-range, as Stable-Baselines3 adds it to actions scaled to [-1, 1]); a
stochastic actor (SAC's squashed Gaussian) explores by sampling its own policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..core.args_provider import Configurable, at_least, setting
from ..core.distributions import Deterministic, Distribution

__all__ = ["Exploration"]


@dataclass(eq=False)
class Exploration(Configurable):
    """Actions for a batch of rows from the actor's policy; see the module docstring."""

    low: Sequence[float]
    high: Sequence[float]
    action_noise: float = setting(0.1, "std of the Gaussian noise on a deterministic actor's actions, in units "
                                       "of the Box's half-range (DDPG, TD3)", bounds=at_least(0))
    warmup_noise: bool = setting(False, "a deterministic actor's noise is added to the warm-up's random actions too "
                                        "(clipped to the Box), as Stable-Baselines3 does")
    random_frames: int = 0
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.action_noise < 0:
            raise ValueError(f"action_noise must be >= 0, got {self.action_noise}")
        self.low_t = torch.as_tensor(self.low, dtype=torch.float32)
        self.high_t = torch.as_tensor(self.high, dtype=torch.float32)
        self.generator = torch.Generator()
        if self.seed is not None:
            self.generator.manual_seed(self.seed)

    def state_dict(self) -> dict[str, Any]:
        """The generator's state (to resume a run)."""
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.generator.set_state(state["generator"])

    def __call__(self, policy: Distribution, frames: int) -> Tensor:
        """Actions ``[B, D]`` for a batch whose first row is frame ``frames`` of the run
        (counted from 0): uniform on rows before ``random_frames``, else explored."""
        deterministic = isinstance(policy, Deterministic)
        if deterministic:
            mu = policy.action.cpu()
            noise = torch.randn(mu.shape, generator=self.generator) * self.action_noise * (self.high_t - self.low_t) / 2
            a = mu + noise
        else:
            a = policy.sample(self.generator if policy.device.type == "cpu" else None).cpu()
        random_rows = min(max(self.random_frames - frames, 0), len(a))
        if random_rows:
            u = torch.rand((random_rows, a.shape[-1]), generator=self.generator)
            a[:random_rows] = self.low_t + u * (self.high_t - self.low_t)
            if deterministic and self.warmup_noise:
                a[:random_rows] += noise[:random_rows]
        return torch.minimum(torch.maximum(a, self.low_t), self.high_t) if deterministic else a
