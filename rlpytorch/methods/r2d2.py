"""R2D2 (Kapturowski et al., 2019) and DRQN (Hausknecht & Stone, 2015): recurrent
Q-learning on replayed sequences."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor

from ..core.args_provider import Bounds, Configurable, at_least, part, setting, settings_record
from ..core.settings import double_setting
from ..models.interface import ModelInterface
from ..replay.nstep import nstep_targets
from .q_target import greedy_next_action
from .replayed_update import ReplayedUpdate
from .target_network import TargetNetwork
from .value_rescaling import rescale, unrescale

__all__ = ["DRQN", "R2D2"]


@dataclass(eq=False)
class R2D2(ReplayedUpdate, Configurable):
    """On sequences ``[burn_in + L, B]``: both networks start from the stored state
    ``h`` of row 0 (zero without ``stored_state``), the learner runs the first
    ``burn_in`` rows without gradient, and for each trained row ``t``

        y_t = h( G_t + D_t h^-1( Q'(x_{t+k}, a*) ) ),   a* = argmax_a Q(x_{t+k}, a)

    (``G``, ``D``, ``k``: the n-step sum, discount and bootstrap row of
    ``nstep_targets`` inside the sequence, ``x = final_s`` after a truncation;
    ``h`` the value rescaling, identity without it). ``loss = mean_b w_b
    mean_t 1/2 (Q(s_t, a_t) - y_t)^2`` over rows with a target; the sequence's
    new priority is ``eta max_t |delta_t| + (1 - eta) mean_t |delta_t|``.
    """

    gamma: float = setting(0.997, "discount factor", bounds=Bounds(0, 1))
    sequence_length: int = setting(16, "trained rows per replayed sequence (after the burn-in)", bounds=at_least(1))
    burn_in: int = setting(8, "rows replayed before the trained ones only to warm up the recurrent state",
                           bounds=at_least(0))
    value_rescaling: bool = setting(True, "learn h(Q), h(x) = sign(x)(sqrt(|x| + 1) - 1) + 1e-3 x")
    stored_state: bool = setting(True, "start each sequence from the actor's stored state h (else from zero)")
    double: bool = double_setting()
    priority_eta: float = setting(0.9, "sequence priority eta max|delta| + (1 - eta) mean|delta|", bounds=Bounds(0, 1))
    grad_clip: float = setting(40.0, "max global gradient norm (0: no clipping)", bounds=at_least(0))
    target: TargetNetwork = part(TargetNetwork)
    n_step: int = 1  # Replay's --n_step (the run passes it): the targets are summed inside the sequence

    # Settings of other components that suit R2D2 (rlpytorch.train applies them as defaults).
    run_defaults: ClassVar[Mapping[str, Any]] = {
        "model": "q_lstm", "sampler": "epsilon_greedy", "epsilon": 1.0,
        "epsilon_frames": 50_000, "T": 9, "activation": "relu",
        "n_step": 5, "prioritized": True,
    }

    def __post_init__(self) -> None:
        if self.sequence_length < 2 or self.burn_in < 0:
            raise ValueError(f"sequence_length must be >= 2 and burn_in >= 0; got {self.sequence_length}, "
                             f"{self.burn_in}")

    @property
    def replay_length(self) -> int:
        """Rows per replayed sequence: burn-in plus trained rows (``Replay(sequence_length=...)``)."""
        return self.burn_in + self.sequence_length

    def loss(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> tuple[Tensor, Tensor, dict[str, float]]:
        """Per-sequence losses ``[B]``, their new priorities, and stats."""
        model, target = mi["model"], mi["target"]
        obs = {k: batch[k] for k in model.obs_keys}
        reset = batch["terminal"].bool()
        B, burn = reset.shape[1], self.burn_in
        start = batch["h"][0] if self.stored_state else reset.new_zeros(B, model.state_size, dtype=torch.float32)
        with torch.no_grad():
            state = start
            if burn:
                state = model({k: v[:burn] for k, v in obs.items()}, start, reset[:burn])["state"]
            out_target = target(obs, start, reset)
        trained = {k: v[burn:] for k, v in obs.items()}
        out = model(trained, state, reset[burn:])
        Q, Q_target = out["Q"], out_target["Q"][burn:]
        truncated = batch["truncated"][burn:] if "truncated" in batch else None
        steps = nstep_targets(batch["r"][burn:].float(), reset[burn:], truncated, self.gamma, self.n_step)
        A = Q.shape[-1]
        at_boot = steps.boot.unsqueeze(-1).expand(*steps.boot.shape, A)
        next_target = Q_target.gather(0, at_boot)
        next_online = Q.detach().gather(0, at_boot) if self.double else None
        if steps.final.any():
            final_target, final_online = self._final_values(mi, batch, out, out_target, steps.boot, steps.final)
            final = steps.final.unsqueeze(-1)
            next_target = torch.where(final, final_target, next_target)
            next_online = None if next_online is None else torch.where(final, final_online, next_online)
        a_star = greedy_next_action(next_online, next_target)
        value = next_target.gather(-1, a_star.unsqueeze(-1)).squeeze(-1)
        if self.value_rescaling:
            y = rescale(steps.r + steps.discount * unrescale(value))
        else:
            y = steps.r + steps.discount * value
        q = Q.gather(-1, batch["a"][burn:].long().unsqueeze(-1)).squeeze(-1)
        mask = steps.valid.float()
        error = (q - y.detach()) * mask
        count = mask.sum(0).clamp(min=1.0)
        per_seq = (0.5 * error.square()).sum(0) / count
        delta = error.detach().abs()
        priority = self.priority_eta * delta.max(0).values + (1 - self.priority_eta) * delta.sum(0) / count
        return per_seq, priority, {"q": (q.detach() * mask).sum().item() / mask.sum().clamp(min=1).item()}

    def _final_values(self, mi: ModelInterface, batch: Mapping[str, Tensor], out: Mapping[str, Tensor],
                      out_target: Mapping[str, Tensor], boot: Tensor, final: Tensor) -> tuple[Tensor, Tensor]:
        """``Q'`` and ``Q`` of the states episodes ended in, at the bootstrap rows of ``final``
        rows, each continuing from the state carried into that row (before its reset)."""
        model, target = mi["model"], mi["target"]
        burn = self.burn_in
        t, b = final.nonzero(as_tuple=True)
        row = boot[t, b]
        obs = {k: batch["final_" + k][burn:][row, b].unsqueeze(0) for k in model.obs_keys}
        no_reset = torch.zeros(1, len(b), dtype=torch.bool, device=row.device)
        shape = (*final.shape, out["Q"].shape[-1])
        with torch.no_grad():
            q_t = target(obs, out_target["states_in"][burn:][row, b], no_reset)["Q"][0]
            q_o = model(obs, out["states_in"][row, b].detach(), no_reset)["Q"][0]
        final_target, final_online = out["Q"].new_zeros(shape), out["Q"].new_zeros(shape)
        final_target[t, b], final_online[t, b] = q_t, q_o
        return final_target, final_online


class DRQN(R2D2):
    """R2D2's loss without its additions: sequences start from a zero state, no
    burn-in, no value rescaling (``y = G + D Q'(x', a*)``), one-step targets.

    The same settings as R2D2, with these defaults (``run_defaults``, applied
    by ``rlpytorch.train`` and by ``from_config``)."""

    run_defaults: ClassVar[Mapping[str, Any]] = {
        **R2D2.run_defaults, "gamma": 0.99, "burn_in": 0, "value_rescaling": False, "stored_state": False,
        "n_step": 1, "prioritized": False,
    }

    @classmethod
    def from_config(cls, config: Any, **extra: Any) -> DRQN:
        return super().from_config({**cls.run_defaults, **settings_record(config)}, **extra)
