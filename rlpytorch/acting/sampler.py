"""Turn a policy into actions, and report the distribution actually sampled from.

Every discrete sampler returns ``(a, mu)``: the actions ``[B]`` and the
behaviour distribution ``mu`` ``[B, A]`` they were drawn from. The actor
replies ``mu`` as ``pi``, so the learner's importance weights ``pi/mu`` are
exact even when acting greedily or epsilon-greedily. A policy over any other
action space is a ``Distribution`` (``rlpytorch.core.distributions``); the sampler
then returns the actions and their log-probability ``logp`` under it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..core.args_provider import Bounds, Configurable, at_least, setting
from ..core.distributions import Categorical, Distribution

__all__ = [
    "Sampler",
    "epsilon_greedy",
    "greedy",
    "sample_multinomial",
]

SAMPLERS = ("multinomial", "greedy", "epsilon_greedy")


def sample_multinomial(pi: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Draw ``a ~ pi`` (inverse CDF, one uniform per row); ``mu = pi``."""
    return Categorical(pi).sample(generator), pi


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


@dataclass(eq=False)
class Sampler(Configurable):
    """The actor's sampler, chosen by ``--sampler``; seeded (``seed``) for reproducible runs."""

    sampler: str = setting("multinomial", "how actions are drawn from pi", choices=SAMPLERS)
    epsilon: float = setting(0.05, "exploration rate of epsilon_greedy (at the start, with a schedule)",
                             bounds=Bounds(0, 1))
    epsilon_final: float = setting(0.05, "epsilon_greedy with a schedule: the rate reached after --epsilon_frames",
                                   bounds=Bounds(0, 1))
    epsilon_frames: int = setting(0, "epsilon_greedy: frames for epsilon to move linearly to epsilon_final (0: fixed)",
                                  bounds=at_least(0))
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {self.sampler!r}; choose from {SAMPLERS}")
        self.epsilon_start = self.epsilon
        self._generators: dict[torch.device, torch.Generator] = {}
        self.generator = self.generator_for(torch.device("cpu"))

    def generator_for(self, device: torch.device) -> torch.Generator:
        """The generator that draws on ``device``, one per device, each seeded
        with ``seed``: a policy on a GPU is sampled there, without a round trip
        through the host (its draws differ from the CPU's, as its arithmetic does)."""
        generator = self._generators.get(device)
        if generator is None:
            generator = self._generators[device] = torch.Generator(device)
            if self.seed is not None:
                generator.manual_seed(self.seed)
        return generator

    def state_dict(self) -> dict[str, Any]:
        """The generator's state and the current epsilon (to resume a run)."""
        return {"generator": self.generator.get_state(), "epsilon": self.epsilon}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.generator.set_state(state["generator"])
        self.epsilon = float(state["epsilon"])

    def anneal(self, frames: int) -> None:
        """``epsilon = start + (final - start) min(1, frames / epsilon_frames)`` (no-op without a schedule)."""
        if self.epsilon_frames > 0:
            progress = min(1.0, frames / self.epsilon_frames)
            self.epsilon = self.epsilon_start + (self.epsilon_final - self.epsilon_start) * progress

    def __call__(self, pi: Tensor | Distribution) -> tuple[Tensor, Tensor]:
        """Actions ``[B]`` (int64) and the behaviour distribution ``[B, A]``; for a
        ``Distribution``, actions and their log-probability ``[B]``."""
        if isinstance(pi, Distribution):
            return self._sample_distribution(pi)
        if self.sampler == "greedy":
            return greedy(pi)
        if self.sampler == "epsilon_greedy":
            return epsilon_greedy(pi, self.epsilon, self.generator_for(pi.device))
        return sample_multinomial(pi, self.generator_for(pi.device))

    def _sample_distribution(self, pi: Distribution) -> tuple[Tensor, Tensor]:
        """``multinomial`` samples, ``greedy`` takes the mode (its ``logp`` is still
        under ``pi``: only evaluation acts greedily on such spaces)."""
        if self.sampler == "epsilon_greedy":
            raise ValueError("the epsilon_greedy sampler is for one discrete action; use multinomial or greedy")
        if self.sampler == "greedy":
            a = pi.mode()
        else:
            a = pi.sample(self.generator_for(pi.device))
        return a, pi.log_prob(a)
