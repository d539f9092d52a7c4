"""MADDPG (Lowe et al., 2017): DDPG with a centralised critic per seat and decentralised actors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor

from ..models.interface import ModelInterface
from ..models.seat_actor_q import SeatActorQ
from .continuous_q import clipped_double_q_target, critic_regression, frozen
from .ddpg import DDPG

__all__ = ["MADDPG"]


@dataclass(eq=False)
class MADDPG(DDPG):
    """DDPG on joint transitions of ``S`` seats, for every seat ``i`` at once:

    critic: ``loss = sum_i live_i (Q_i(o, a) - y_i)^2``, averaged over the batch,
    ``y_i = r_i + gamma (1 - terminal_i) Q'_i(o', mu'_1(o'_1)..mu'_S(o'_S))``;
    actor: ``loss = -sum_i mean live_i Q_i(o, a_1..mu_i(o_i)..a_S)``, only seat ``i``'s
    replayed action replaced (the critics frozen), so actor ``i`` learns only through
    ``Q_i``; then the Polyak targets (``TargetNetwork``), as DDPG.

    ``mi``: ``model`` (a ``SeatActorQ``), its optimized parts ``critic`` and
    ``policy`` (every seat's critic and actor; their losses are sums over seats
    that share no parameter, so one Adam each is ``S`` independent ones, but
    ``--grad_clip`` bounds the norm over all seats together; a shared actor,
    ``--share_actors``, sums its seats' gradients), and ``target``. The batch
    (``Replay.sample`` with ``joint_seats = S``): joint observations ``[B, S, ...]``
    and ``next_<key>``, actions ``a`` ``[B, S, D]``,
    ``r`` and ``discount`` ``[B, S]`` (``gamma (1 - terminal_i)``, a time-limit
    truncation bootstrapping from its final observation), ``live`` ``[B, S]`` (false
    for a seat whose agent left the game's episode earlier: its rows are empty) and
    ``weight`` ``[B]``.
    """

    name: ClassVar[str] = "maddpg"
    # Lowe et al.'s MPE set-up where it fits one process: gamma 0.95, 2 x 64 units, tau 0.01.
    run_defaults: ClassVar[Mapping[str, Any]] = {
        "model": "seat_actor_q", "net_arch": "64,64", "gamma": 0.95, "polyak_tau": 0.01,
        "replay_batch": 256, "replay_capacity": 1_000_000, "T": 9,
    }

    def check_model(self, model: Any) -> None:
        """``ValueError`` unless ``model`` is a ``seat_actor_q`` model."""
        if not isinstance(model, SeatActorQ):
            raise ValueError(f"--method maddpg needs a seat_actor_q model (--model seat_actor_q), not {model.name!r}")

    def step(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> tuple[dict[str, float], Tensor]:
        """One update of every seat's critic, actor and targets; stats and priorities."""
        model, target = mi["model"], mi["target"]
        x = model.encode(batch)
        live = batch["live"].T.to(x.dtype)  # [S, B]
        with torch.no_grad():
            x_next = target.encode({k: batch["next_" + k] for k in model.obs_keys})
            q_next = target.q_values(x_next, target.actions(x_next))  # [S, B]: one critic per seat
            y = clipped_double_q_target(batch["r"].T.float(), batch["discount"].T.float(), q_next[None])
        q = model.q_values(x, batch["a"].float())
        per_row, _ = critic_regression(q * live, y * live)
        critic_loss = (per_row * batch["weight"].to(per_row.dtype)).mean()
        stats = {"q": q.detach().mean().item(), "critic_loss": critic_loss.item(),
                 "critic_grad_norm": mi.step("critic", critic_loss, self.grad_clip)}
        model.increment_step()
        with frozen(model.critics):
            actor_loss = self.actor_loss(model, x, batch["a"].float(), live)
        stats["actor_grad_norm"] = mi.step("policy", actor_loss, self.grad_clip)
        stats["actor_loss"] = actor_loss.item()
        self.target(mi, model.step)
        return stats, ((q - y).abs() * live).detach().max(0).values

    @staticmethod
    def actor_loss(model: SeatActorQ, x: Tensor, a: Tensor, live: Tensor) -> Tensor:
        """``-sum_i mean_b live_i Q_i(o, a_1..mu_i(o_i)..a_S)`` at the joint ``x`` ``[B, S, obs_dim]``,
        replayed actions ``a`` ``[B, S, D]``, ``live`` ``[S, B]``: critic ``i`` sees seat ``i``'s
        actor's action and the other seats' replayed ones."""
        seat = torch.eye(model.seats, dtype=torch.bool, device=x.device)[:, None, :, None]  # [critic, 1, seat, 1]
        own = torch.where(seat, model.actions(x), a)  # [S, B, S, D]: row i is critic i's joint action
        return -(model.q_each(x, own) * live).sum(0).mean()
