"""DQN (Mnih et al., 2015) and its combinable variants, on replayed transitions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor

from ..core.args_provider import Configurable, at_least, part, setting
from ..core.settings import double_setting, gamma_setting
from ..models.interface import ModelInterface
from .categorical import categorical_loss, project_distribution
from .q_target import greedy_next_action, q_target
from .replayed_update import ReplayedUpdate
from .target_network import TargetNetwork

__all__ = ["DQN"]


@dataclass(eq=False)
class DQN(ReplayedUpdate, Configurable):
    """``loss = sum_i w_i l(Q(s_i, a_i), y_i) / B``, ``y_i = reward_i + discount_i Q'(x'_i, a*_i)``.

    ``r`` and ``discount`` come from the replay (``--n_step``: the n-step
    sum and ``gamma^k``, 0 after a real end); ``x'`` is the bootstrap state;
    ``Q'`` the target network (``TargetNetwork``: periodic copy or Polyak);
    ``a* = argmax Q(x')`` with ``--double``, else ``argmax Q'(x')``; ``w`` the
    importance weights of prioritized replay (1 for uniform); ``l`` Huber or
    squared error. A model with atoms (``--num_atoms``, C51) is trained on
    ``l = -sum_j m_j log p_j(s, a)``, ``m`` the projection of ``r +
    discount Z'(x', a*)`` onto the atoms. ``--dueling`` is the model's head. All
    switches combine (Rainbow without noisy nets: ``--double --dueling
    --num_atoms 51 --n_step 3 --prioritized``). The new priorities are
    ``|y - Q|`` (or the cross-entropy, for C51).

    The batch (``Replay.sample``): the model's observation keys, ``next_<key>``,
    ``a``, ``r``, ``discount`` and ``weight``, all ``[B, ...]``.
    """

    gamma: float = gamma_setting()
    double: bool = double_setting()
    q_loss: str = setting("huber", "regression loss of Q on its target", choices=("huber", "mse"))
    grad_clip: float = setting(10.0, "max global gradient norm (0: no clipping)", bounds=at_least(0))
    target: TargetNetwork = part(TargetNetwork)

    # Settings of other components that suit DQN (rlpytorch.train applies them as
    # defaults): the CartPole set-up of docs/results/2026-11-27-value-based.md.
    run_defaults: ClassVar[Mapping[str, Any]] = {
        "model": "q", "sampler": "epsilon_greedy", "epsilon": 1.0,
        "epsilon_frames": 10_000, "T": 9, "activation": "relu", "hidden": 128, "n_step": 3,
        "target_period": 200, "replay_ratio": 0.5,
    }

    def loss(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> tuple[Tensor, Tensor, dict[str, float]]:
        """Per-row losses (unweighted), the new priorities, and stats."""
        model, target = mi["model"], mi["target"]
        obs = {k: batch[k] for k in model.obs_keys}
        nxt = {k: batch["next_" + k] for k in model.obs_keys}
        a = batch["a"].long()
        B = len(a)
        if self.double:  # one pass of the learner over both states; only the first half gets gradients
            both = model({k: torch.cat([obs[k], nxt[k]]) for k in obs})
            out = {k: v[:B] for k, v in both.items()}
            q_online_next = both["Q"][B:].detach()
        else:
            out, q_online_next = model(obs), None
        with torch.no_grad():
            out_target = target(nxt)
        if "log_p" in out:
            a_star = greedy_next_action(q_online_next, out_target["Q"])
            probs = out_target["log_p"].exp()[torch.arange(len(a)), a_star]
            m = project_distribution(probs, batch["r"].float(), batch["discount"].float(), model_support(model))
            per_row = categorical_loss(out["log_p"][torch.arange(len(a)), a], m)
            return per_row, per_row.detach(), {"q": out["Q"].detach().gather(-1, a[:, None]).mean().item()}
        q = out["Q"].gather(-1, a.unsqueeze(-1)).squeeze(-1)
        y = q_target(batch["r"].float(), batch["discount"].float(), out_target["Q"], q_online_next)
        error = q - y
        per_row = F.smooth_l1_loss(q, y, reduction="none") if self.q_loss == "huber" else 0.5 * error.square()
        return per_row, error.detach().abs(), {"q": q.detach().mean().item()}


def model_support(model: torch.nn.Module) -> Tensor:
    """The atoms of a categorical Q model's head."""
    supports = [m.support for m in model.modules() if getattr(m, "support", None) is not None]
    if len(supports) != 1:
        raise ValueError(f"{type(model).__name__} has no categorical head (set --num_atoms > 1)")
    return supports[0]
