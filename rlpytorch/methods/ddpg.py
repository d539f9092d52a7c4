"""DDPG (Lillicrap et al., 2016) on replayed transitions, and the base TD3 builds on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor

from ..core.args_provider import Configurable, at_least, part, setting
from ..core.settings import gamma_setting
from ..models.actor_q import ActorQ
from ..models.interface import ModelInterface
from .continuous_q import TravellingGenerator, clipped_double_q_target, critic_regression, frozen
from .target_network import TargetNetwork

__all__ = ["DDPG", "check_actor_q"]


def check_actor_q(model: Any, method: str, deterministic: bool, critics: tuple[int, int]) -> None:
    """``ValueError`` unless ``model`` is an ``actor_q`` model with the actor and the number of
    critics (``critics``: the least and the most) that ``method`` needs."""
    if not isinstance(model, ActorQ):
        raise ValueError(f"--method {method} needs an actor_q model (--model actor_q), not {model.name!r}")
    head = "deterministic" if deterministic else "tanh_gaussian"
    if model.deterministic != deterministic:
        raise ValueError(f"--method {method} needs --actor_head {head}")
    if not critics[0] <= model.critics.n <= critics[1]:
        raise ValueError(f"--method {method} needs {critics[0]} to {critics[1]} critics, "
                         f"got --critics {model.critics.n}")


@dataclass(eq=False)
class DDPG(TravellingGenerator, Configurable):
    """Critic: ``loss = sum_i w_i (Q(s_i, a_i) - y_i)^2 / B``, ``y = r + discount Q'(s', mu'(s'))``
    (TD3: summed over the critics, as Fujimoto et al.'s and Stable-Baselines3's code);
    actor: ``loss = -mean_i Q(s_i, mu(s_i))``; then ``theta' <- (1 - tau) theta' + tau theta``
    (``TargetNetwork`` with ``--polyak_tau``) for actor and critic.

    ``mi``: ``model`` (an ``ActorQ`` with a deterministic actor, one critic), its
    optimized parts ``critic`` and ``policy``, and ``target``. The batch
    (``Replay.sample``): the model's observation keys, ``next_<key>``, ``a``,
    ``r``, ``discount``, ``weight`` (prioritized replay's importance weights).
    TD3 changes the target action, the number of critics and how often the actor
    and the targets move (``target_action``, ``actor_due``).
    """

    gamma: float = gamma_setting()
    grad_clip: float = setting(0.0, "max global gradient norm of each network (0: no clipping)", bounds=at_least(0))
    target: TargetNetwork = part(TargetNetwork)
    seed: int | None = None

    name: ClassVar[str] = "ddpg"
    critics: ClassVar[tuple[int, int]] = (1, 1)
    # Settings of other components that suit it (rlpytorch.train applies them as defaults):
    # Stable-Baselines3's DDPG/TD3 defaults (Fujimoto et al.'s set-up).
    run_defaults: ClassVar[Mapping[str, Any]] = {
        "model": "actor_q", "actor_head": "deterministic", "critics": 1, "net_arch": "400,300",
        "polyak_tau": 0.005, "replay_ratio": 1.0, "replay_batch": 256,
        "replay_capacity": 1_000_000, "T": 9,
    }

    def __post_init__(self) -> None:
        self.generator = torch.Generator()
        if self.seed is not None:
            self.generator.manual_seed(self.seed)

    def check_model(self, model: Any) -> None:
        """``ValueError`` unless ``model`` fits this method (see ``check_actor_q``)."""
        check_actor_q(model, self.name, True, self.critics)

    def target_action(self, target: ActorQ, x_next: Tensor) -> Tensor:
        """The action the target bootstraps with: ``mu'(s')``."""
        return target.policy(x_next).mode()

    def actor_due(self, updates: int) -> bool:
        """Whether the actor and the targets move after critic update ``updates``: every time."""
        return True

    def step(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> tuple[dict[str, float], Tensor]:
        """One critic update, then (when due) one actor update and the targets; stats and priorities."""
        model, target = mi["model"], mi["target"]
        x = model.encode({k: batch[k] for k in model.obs_keys})
        with torch.no_grad():
            x_next = target.encode({k: batch["next_" + k] for k in model.obs_keys})
            q_next = target.q_values(x_next, self.target_action(target, x_next))
            y = clipped_double_q_target(batch["r"].float(), batch["discount"].float(), q_next)
        q = model.q_values(x, batch["a"].float())
        per_row, priorities = critic_regression(q, y)
        critic_loss = (per_row * batch["weight"].to(per_row.dtype)).mean()
        stats = {"q": q[0].detach().mean().item(), "critic_loss": critic_loss.item(),
                 "critic_grad_norm": mi.step("critic", critic_loss, self.grad_clip)}
        model.increment_step()
        if self.actor_due(model.step):
            with frozen(model.critics):
                actor_loss = -model.q_values(x, model.policy(x).mode())[0].mean()
            stats["actor_grad_norm"] = mi.step("policy", actor_loss, self.grad_clip)
            stats["actor_loss"] = actor_loss.item()
            self.target(mi, model.step)
        return stats, priorities

    def update(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> dict[str, float]:
        """``step`` without the priorities (the trainer's ``Method`` protocol)."""
        return self.step(mi, batch)[0]
