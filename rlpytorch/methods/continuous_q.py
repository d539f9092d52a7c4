"""Parts of the off-policy actor-critic methods on Box actions (DDPG, TD3, SAC).

``clipped_double_q_target`` and ``soft_q_target`` are the critics' bootstrapped
targets, ``smoothed_target_action`` TD3's target policy smoothing,
``critic_regression`` the critics' loss, ``frozen`` keeps the critics' weights
out of the actor's backward pass, ``TravellingGenerator`` lets a method's
random generator go to a learner process and into checkpoints. All batches are ``[B, ...]`` replayed
transitions: ``r`` is the (n-step) discounted reward sum and ``discount``
the ``gamma^k`` of the bootstrap, 0 after a real episode end; a time-limit
truncation bootstraps from the state the episode ended in (``Replay``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor, nn

__all__ = [
    "TravellingGenerator",
    "clipped_double_q_target",
    "critic_regression",
    "frozen",
    "smoothed_target_action",
    "soft_q_target",
]


class TravellingGenerator:
    """Pickles a method's ``generator`` as its state: a ``torch.Generator`` itself
    does not reach a spawned process (``--runner multi``'s learner), where the
    method then draws the numbers it would have drawn here."""

    generator: torch.Generator

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "generator": bytes(self.generator.get_state().numpy())}

    def __setstate__(self, state: dict[str, Any]) -> None:
        generator = torch.Generator()
        generator.set_state(torch.frombuffer(bytearray(state["generator"]), dtype=torch.uint8))
        self.__dict__.update({**state, "generator": generator})

    def state_dict(self) -> dict[str, Any]:
        """The generator's state (to resume a run)."""
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.generator.set_state(state["generator"])


def clipped_double_q_target(r: Tensor, discount: Tensor, q_next: Tensor) -> Tensor:
    """``y = r + discount * min_i Q'_i(s', a')`` over the critics' targets ``q_next``
    ``[n, B]`` (one critic, DDPG: ``Q'(s', a')``). Detached."""
    with torch.no_grad():
        return r + discount * q_next.min(0).values


def soft_q_target(r: Tensor, discount: Tensor, q_next: Tensor, next_log_prob: Tensor, alpha: Tensor) -> Tensor:
    """SAC: ``y = r + discount * (min_i Q'_i(s', a') - alpha log pi(a'|s'))``,
    ``a' ~ pi(.|s')``. Detached."""
    with torch.no_grad():
        return r + discount * (q_next.min(0).values - alpha * next_log_prob)


def smoothed_target_action(action: Tensor, noise_std: float, noise_clip: float, low: Tensor, high: Tensor,
                           generator: torch.Generator | None = None) -> Tensor:
    """TD3's target policy smoothing: ``a' = clip(mu'(s') + h clip(eps, -c, c), low, high)``,
    ``eps ~ N(0, noise_std^2)``, ``c = noise_clip``, ``h = (high - low) / 2`` (noise in
    units of the half-range). ``noise_std = 0``: ``a' = mu'(s')``."""
    if noise_std == 0:
        return action
    eps = torch.randn(action.shape, generator=generator, device=action.device) * noise_std
    smoothed = action + eps.clamp(-noise_clip, noise_clip) * (high - low) / 2
    return torch.minimum(torch.maximum(smoothed, low), high)


def critic_regression(q: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Per row: ``l = sum_i (Q_i(s, a) - y)^2`` over the critics ``q`` ``[n, B]`` (the mean over rows
    is the loss of DDPG's, TD3's and MADDPG's reference code, and twice SAC's), and the new replay
    priorities ``|Q_0(s, a) - y|``."""
    error = q - y
    return error.square().sum(0), error[0].detach().abs()


@contextmanager
def frozen(module: nn.Module) -> Iterator[None]:
    """``module``'s parameters take no gradient inside the block (the actor's loss
    flows through the critics to the action, not into their weights)."""
    params = [p for p in module.parameters() if p.requires_grad]
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in params:
            p.requires_grad_(True)
