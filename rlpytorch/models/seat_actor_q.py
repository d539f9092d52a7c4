"""Decentralised actors and centralised critics, one of each per seat (MADDPG).

``SeatActorQ`` (registered ``seat_actor_q``) is built from the parts of
``actor_q.py`` for a game of ``S`` seats that share one observation layout
and one Box action key (a PettingZoo game hosted by ``elfpy.pz_host``):

- ``actor``: ``S`` ``DeterministicActorHead``\\ s, ``mu_i(o_i) = c + h tanh(MLP_i(o_i))``:
  seat ``i``'s actor reads only seat ``i``'s own observation row. Parameters
  per seat by default, as in Lowe et al. (2017): the seats' agents may play
  different roles. ``share_actors``: one actor for every seat, ``mu(o_i)``
  (parameter sharing, as independent learners on one policy do);
- ``critics``: ``QCritics(S)`` over the joint vector
  ``[o_1; ..; o_S; a_1_norm; ..; a_S_norm]`` (``a_norm = (a - c) / h``): critic ``i``
  is ``Q_i(o_1..o_S, a_1..a_S)``, the ``S`` critics run side by side.

Joint tensors put the seats in the second-to-last place of an observation or
action: ``x`` ``[..., S, obs_dim]``, ``a`` ``[..., S, D]``. Acting on a batch of
rows, each row's actor is that of its seat: ``forward`` reads ``obs["seat"]``
(``[B]``, the acting paths add it for a model with ``reads_seats``, from
``batch.seats``). A centralised critic cannot value one row alone, so
``forward``'s ``V`` is NaN ("no estimate").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from ..acting.act import SEAT_KEY
from ..core.args_provider import Configurable, at_least, setting
from ..core.settings import net_arch_setting
from .actor_critic import _spec
from .actor_q import DeterministicActorHead, QCritics, box_bounds, widths
from .base import Model
from .encoders import MLPEncoder

__all__ = ["SeatActorQ", "SeatActorQSettings"]


@dataclass
class SeatActorQSettings(Configurable):
    """The settings of ``seat_actor_q`` models."""

    net_arch: str = net_arch_setting()
    seats: int = setting(0, "seat_actor_q models: seats of the game, one actor and one critic each "
                            "(0: every seat of the game it is built for)", bounds=at_least(0))
    share_actors: bool = setting(False, "seat_actor_q models: one actor for every seat (parameter sharing) "
                                        "instead of one per seat; the critics stay one per seat")


class SeatActorQ(Model):
    """Per seat ``i``: an actor ``mu_i(o_i)`` and a centralised critic ``Q_i(o_1..o_S, a_1..a_S)``."""

    name = "seat_actor_q"
    Settings: ClassVar[type[SeatActorQSettings]] = SeatActorQSettings
    reads_seats = True
    temperature = None  # deterministic actors: no entropy temperature

    def __init__(self, obs_spec: Any, num_actions: Any, settings: SeatActorQSettings | None = None) -> None:
        super().__init__()
        spec, settings = _spec(obs_spec), settings or SeatActorQSettings()
        if settings.seats < 2:
            raise ValueError(f"seat_actor_q models (MADDPG) need a game of at least 2 seats, one per agent; "
                             f"got seats = {settings.seats}")
        images = [k for k, e in spec.items() if e.is_image or e.is_pixels or e.is_tokens]
        if images:
            raise ValueError(f"seat_actor_q models read vector observations; {images} are images or token sequences")
        low, high = box_bounds(num_actions, self.name)
        self.seats = settings.seats
        self.obs_keys = tuple(spec)
        self.obs_shapes = {key: entry.shape for key, entry in spec.items()}
        self.flatten = MLPEncoder(spec, None, 0, 0, "relu")  # no layers: flattened, concatenated observations
        hidden = widths(settings.net_arch)
        self.actor = nn.ModuleList(DeterministicActorHead(self.flatten.out_dim, hidden, low, high)
                                   for _ in range(1 if settings.share_actors else self.seats))
        self.policy_family = self.actor[0].family
        self.critics = QCritics(self.seats, self.seats * (self.flatten.out_dim + len(low)), hidden)
        self.register_buffer("action_center", torch.as_tensor((high + low) / 2))
        self.register_buffer("action_half", torch.as_tensor((high - low) / 2))

    def encode(self, obs: Mapping[str, Tensor]) -> Tensor:
        """``[..., obs_dim]``: the (normalised, when the model normalises) observations, flattened."""
        return self.flatten(self.as_obs({k: obs[k] for k in self.obs_keys}))

    @property
    def shared(self) -> bool:
        """Whether one actor plays every seat."""
        return len(self.actor) == 1

    def actions(self, x: Tensor) -> Tensor:
        """Every seat's action from its own observation: ``x`` ``[..., S, obs_dim]`` -> ``[..., S, D]``."""
        if self.shared:
            return self.actor[0](x)["action"]
        return torch.stack([actor(x[..., i, :])["action"] for i, actor in enumerate(self.actor)], -2)

    def act_rows(self, x: Tensor, seats: Tensor) -> Tensor:
        """``[B, D]``: row ``b``'s action by the actor of its seat ``seats[b]`` (``x`` ``[B, obs_dim]``)."""
        if self.shared:
            return self.actor[0](x)["action"]
        action = torch.empty(*x.shape[:-1], self.action_dim, device=x.device)
        for i, actor in enumerate(self.actor):
            rows = seats == i
            if rows.any():
                action[rows] = actor(x[rows])["action"]
        return action

    @property
    def action_dim(self) -> int:
        return int(self.action_center.shape[0])

    def joint(self, x: Tensor, a: Tensor) -> Tensor:
        """The critics' input ``[..., S * (obs_dim + D)]`` from ``x`` ``[..., S, obs_dim]``, ``a`` ``[..., S, D]``."""
        a_norm = (a - self.action_center) / self.action_half
        return torch.cat([x.flatten(-2), a_norm.flatten(-2)], -1)

    def q_values(self, x: Tensor, a: Tensor) -> Tensor:
        """``[S, ...]``: ``Q_i(o_1..o_S, a_1..a_S)`` of every seat ``i`` at the joint ``x``, ``a``."""
        return self.critics(self.joint(x, a))

    def q_each(self, x: Tensor, a: Tensor) -> Tensor:
        """``[S, ...]``: critic ``i`` at the joint ``x`` and its own joint action ``a[i]``
        (``a`` ``[S, ..., S, D]``)."""
        return self.critics.each(self.joint(x.expand(self.seats, *x.shape), a))

    def forward(self, obs: Mapping[str, Tensor]) -> dict[str, Tensor]:
        if SEAT_KEY not in obs:
            raise ValueError(f"seat_actor_q models act on rows of known seats: obs needs {SEAT_KEY!r} "
                             f"([B], each row's seat) beside {list(self.obs_keys)}")
        action = self.act_rows(self.encode(obs), obs[SEAT_KEY].long())
        return {"action": action, "V": torch.full(action.shape[:-1], float("nan"), device=action.device)}
