"""SAC (Haarnoja et al., 2018) on replayed transitions: twin soft Q critics, a
tanh-squashed Gaussian actor, automatic entropy temperature."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor

from ..core.args_provider import Configurable, at_least, part, setting
from ..core.settings import gamma_setting
from ..models.interface import ModelInterface
from .continuous_q import TravellingGenerator, critic_regression, frozen, soft_q_target
from .ddpg import check_actor_q
from .target_network import TargetNetwork
from .temperature import temperature_loss

__all__ = ["SAC"]


@dataclass(eq=False)
class SAC(TravellingGenerator, Configurable):
    """One update on a replayed batch, in Stable-Baselines3's order:

    - temperature: ``J(alpha) = -mean log_alpha (log pi(a|s) + H_target)``, ``a ~ pi(.|s)``,
      ``H_target = -dim(A)`` by default (``temperature_loss``);
    - critics: ``loss = sum_i w_i sum_j (Q_j(s_i, a_i) - y_i)^2 / 2 / B`` with
      ``y = r + discount (min_j Q'_j(s', a') - alpha log pi(a'|s'))``, ``a' ~ pi(.|s')``
      (the current actor; ``Q'`` the target critics);
    - actor: ``loss = mean_i (alpha log pi(a_i|s_i) - min_j Q_j(s_i, a_i))``, ``a_i ~ pi(.|s_i)``
      reparameterised;
    - targets: ``theta' <- (1 - tau) theta' + tau theta`` (``TargetNetwork``, ``--polyak_tau``).

    ``alpha`` is the temperature before this update's step; the temperature and
    the actor take their step together (``offpolicy_interface``: the losses
    share no parameter, one backward pass serves both). ``log pi`` is the
    density of the action scaled to ``[-1, 1]`` (``log pi(a) + sum_d log h_d``, ``h``
    the half-range), as in Haarnoja et al.'s and Stable-Baselines3's code, so that
    the target ``-dim(A)`` means the same whatever the bounds. ``mi`` and the
    batch are DDPG's (``offpolicy_interface``, ``Replay.sample``).
    """

    gamma: float = gamma_setting()
    grad_clip: float = setting(0.0, "max global gradient norm of each network (0: no clipping)", bounds=at_least(0))
    target_entropy: str = setting("auto", "SAC: the entropy the temperature aims at ('auto': -dim(A)), a number")
    learn_temperature: bool = setting(True, "SAC: learn alpha (else it stays at --init_temperature)")
    target: TargetNetwork = part(TargetNetwork)
    seed: int | None = None

    name: ClassVar[str] = "sac"
    # Settings of other components that suit it (rlpytorch.train applies them as defaults):
    # Stable-Baselines3's SAC defaults.
    run_defaults: ClassVar[Mapping[str, Any]] = {
        "model": "actor_q", "lr": 3e-4,
        "polyak_tau": 0.005, "replay_ratio": 1.0, "replay_batch": 256, "learning_starts": 100,
        "replay_capacity": 1_000_000, "T": 9,
    }

    def __post_init__(self) -> None:
        if self.target_entropy != "auto":
            try:
                float(self.target_entropy)
            except ValueError:
                raise ValueError(f"target_entropy must be 'auto' or a number, got {self.target_entropy!r}") from None
        self.generator = torch.Generator()
        if self.seed is not None:
            self.generator.manual_seed(self.seed)

    def check_model(self, model: Any) -> None:
        """``ValueError`` unless ``model`` is an ``actor_q`` model with a Gaussian actor."""
        check_actor_q(model, self.name, False, (1, 2**31))

    def entropy_target(self, action_dim: int) -> float:
        """``H_target``: ``-dim(A)``, or the number given."""
        return -float(action_dim) if self.target_entropy == "auto" else float(self.target_entropy)

    def sample(self, model: Any, x: Tensor) -> tuple[Tensor, Tensor]:
        """``a ~ pi(.|s)`` (reparameterised) and ``log pi`` of ``a`` scaled to ``[-1, 1]``."""
        policy = model.policy(x)
        a, log_prob = policy.sample_with_log_prob(self.generator if x.device.type == "cpu" else None)
        return a, log_prob + policy.half.log().sum(-1)

    def step(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> tuple[dict[str, float], Tensor]:
        """One update of temperature, critics, actor and targets; its stats and the new priorities."""
        model, target = mi["model"], mi["target"]
        x = model.encode({k: batch[k] for k in model.obs_keys})
        a_pi, log_prob = self.sample(model, x)
        alpha = model.temperature.alpha
        stats = {"alpha": alpha.item(), "entropy": -log_prob.detach().mean().item()}
        with torch.no_grad():
            a_next, log_prob_next = self.sample(model, model.encode({k: batch["next_" + k] for k in model.obs_keys}))
            q_next = target.q_values(target.encode({k: batch["next_" + k] for k in model.obs_keys}), a_next)
            y = soft_q_target(batch["r"].float(), batch["discount"].float(), q_next, log_prob_next, alpha)
        q = model.q_values(x, batch["a"].float())
        per_row, priorities = critic_regression(q, y)
        critic_loss = 0.5 * (per_row * batch["weight"].to(per_row.dtype)).mean()  # SAC's J_Q: half the squares
        stats.update(q=q[0].detach().mean().item(), critic_loss=critic_loss.item(),
                     critic_grad_norm=mi.step("critic", critic_loss, self.grad_clip))
        with frozen(model.critics):
            actor_loss = (alpha * log_prob - model.q_values(x, a_pi).min(0).values).mean()
        loss = actor_loss
        if self.learn_temperature:
            loss = loss + temperature_loss(model.temperature.log_alpha, log_prob, self.entropy_target(model.action_dim))
        stats.update(actor_loss=actor_loss.item(), actor_grad_norm=mi.step("policy", loss, self.grad_clip))
        model.increment_step()
        self.target(mi, model.step)
        return stats, priorities

    def update(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> dict[str, float]:
        """``step`` without the priorities (the trainer's ``Method`` protocol)."""
        return self.step(mi, batch)[0]
