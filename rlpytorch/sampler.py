"""Turn a policy into actions, and report the distribution actually sampled from.

Every discrete sampler returns ``(a, mu)``: the actions ``[B]`` and the
behaviour distribution ``mu`` ``[B, A]`` they were drawn from. The actor
replies ``mu`` as ``pi``, so the learner's importance weights ``pi/mu`` are
exact even when acting greedily or epsilon-greedily.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .args_provider import Configurable, setting

__all__ = [
    "Sampler",
    "epsilon_greedy",
    "gaussian_log_prob",
    "greedy",
    "sample_gaussian",
    "sample_multinomial",
]

SAMPLERS = ("multinomial", "greedy", "epsilon_greedy")


def sample_multinomial(pi: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Draw ``a ~ pi`` (inverse CDF, one uniform per row); ``mu = pi``."""
    u = torch.rand(pi.shape[:-1] + (1,), generator=generator, device=pi.device)
    a = (pi.cumsum(-1) < u * pi.sum(-1, keepdim=True)).sum(-1)
    return a.clamp(max=pi.shape[-1] - 1), pi


def greedy(pi: Tensor) -> tuple[Tensor, Tensor]:
    """``a = argmax pi``; ``mu`` is one-hot on it."""
    a = pi.argmax(-1)
    return a, torch.nn.functional.one_hot(a, pi.shape[-1]).to(pi.dtype)


def epsilon_greedy(pi: Tensor, epsilon: float, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Uniform action with probability ``epsilon``, else ``argmax pi``.

    ``mu = epsilon / A + (1 - epsilon) onehot(argmax pi)``.
    """
    num_actions = pi.shape[-1]
    best, onehot = greedy(pi)
    explore = torch.rand(best.shape, generator=generator, device=pi.device) < epsilon
    uniform = torch.randint(num_actions, best.shape, generator=generator, device=pi.device)
    a = torch.where(explore, uniform, best)
    return a, epsilon / num_actions + (1.0 - epsilon) * onehot


def sample_gaussian(mean: Tensor, std: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """Draw continuous actions ``a ~ N(mean, std^2)``, independently per dimension."""
    noise = torch.randn(mean.shape, generator=generator, device=mean.device)
    return mean + std * noise


def gaussian_log_prob(a: Tensor, mean: Tensor, std: Tensor) -> Tensor:
    """``log N(a; mean, std^2)`` summed over the last (action) dimension."""
    z = (a - mean) / std
    return (-0.5 * z.square() - std.log() - 0.5 * math.log(2 * math.pi)).sum(-1)


@dataclass(eq=False)
class Sampler(Configurable):
    """The actor's sampler, chosen by ``--sampler``; seeded (``seed``) for reproducible runs."""

    sampler: str = setting("multinomial", "how actions are drawn from pi", choices=SAMPLERS)
    epsilon: float = setting(0.05, "exploration rate of epsilon_greedy (at the start, with a schedule)")
    epsilon_final: float = setting(0.05, "epsilon_greedy with a schedule: the rate reached after --epsilon_frames")
    epsilon_frames: int = setting(0, "epsilon_greedy: frames for epsilon to move linearly to epsilon_final (0: fixed)")
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {self.sampler!r}; choose from {SAMPLERS}")
        self.epsilon_start = self.epsilon
        self.generator = torch.Generator()
        if self.seed is not None:
            self.generator.manual_seed(self.seed)

    def anneal(self, frames: int) -> None:
        """``epsilon = start + (final - start) min(1, frames / epsilon_frames)`` (no-op without a schedule)."""
        if self.epsilon_frames > 0:
            progress = min(1.0, frames / self.epsilon_frames)
            self.epsilon = self.epsilon_start + (self.epsilon_final - self.epsilon_start) * progress

    def __call__(self, pi: Tensor) -> tuple[Tensor, Tensor]:
        """Actions ``[B]`` (int64) and the behaviour distribution ``[B, A]``."""
        if pi.device.type != "cpu":  # the seeded generator lives on the CPU
            a, mu = self(pi.cpu())
            return a.to(pi.device), mu.to(pi.device)
        if self.sampler == "greedy":
            return greedy(pi)
        if self.sampler == "epsilon_greedy":
            return epsilon_greedy(pi, self.epsilon, self.generator)
        return sample_multinomial(pi, self.generator)
