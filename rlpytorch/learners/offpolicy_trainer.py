"""The callbacks of off-policy actor-critic training on Box actions (DDPG, TD3, SAC).

``OffPolicyTrainer`` is the ``ValueTrainer`` (replay, replay ratio, learning
starts, actor copy) with another actor: the acting copy's policy explored by
``Exploration`` (uniform random actions for the first ``learning_starts``
frames, then Gaussian noise on a deterministic actor, or the squashed
Gaussian's own samples), replying ``a``. ``offpolicy_interface`` gathers the
learner (an ``ActorQ``), its acting copy, its target network and one optimizer
per learned part: ``critic`` (the critics) and ``policy`` (the actor and, for
a Gaussian actor, the temperature).

``JointTrainer`` (MADDPG) is the ``OffPolicyTrainer`` for a ``SeatActorQ``:
each row acts by its seat's actor, and the train windows pass through
``SeatWindows``, which joins every seat of a game into one window
``[T, 1, S, ...]``, stored in a replay of joint transitions (one lane per game).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from ..acting.act import to_tensors
from ..acting.exploration import Exploration
from ..models.actor_q import ActorQ
from ..models.interface import ModelInterface
from .seat_windows import SeatWindows
from .value_trainer import ValueTrainer

__all__ = ["JointTrainer", "OffPolicyTrainer", "offpolicy_interface"]


def offpolicy_interface(model: ActorQ, mi: ModelInterface | None = None) -> ModelInterface:
    """``mi`` (its optimizer settings) holding ``model`` (the learner, saved in checkpoints),
    its ``actor`` copy and ``target`` network, and the optimized parts ``critic`` and
    ``policy``, each with its own optimizer. A Gaussian actor's temperature is
    optimized with the actor: their losses share no parameter, so one Adam over
    both, stepped on the sum of the two losses, is one backward pass where two
    Adams would take two, with the same updates."""
    mi = mi or ModelInterface()
    mi.add_model("model", model)
    for name, copy in (("actor", model.clone()), ("target", model.clone())):
        mi.add_model(name, copy).requires_grad_(False)
    mi.add_model("critic", model.critics, optimize=True)
    policy = model.actor if model.temperature is None else nn.ModuleList([model.actor, model.temperature])
    mi.add_model("policy", policy, optimize=True)
    return mi


@dataclass(eq=False)
class OffPolicyTrainer(ValueTrainer):
    """Actor and train callbacks over ``mi`` (``offpolicy_interface``) and a ``Replay``."""

    sampler: Exploration  # type: ignore[assignment]  # the actor's exploration, in the sampler's place
    interface = staticmethod(offpolicy_interface)  # the learner, actor copy, target, critic and policy parts

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply the explored action ``a`` for every row; record finished episodes."""
        first_frame = self.frames
        self.record_acting(batch)
        model = self.mi["actor"]
        with torch.inference_mode():
            policy = model.policy(model.encode(to_tensors(batch, model.obs_keys, self.device)))
        return {"a": self.sampler(policy, first_frame).numpy()}

    def exploration_stats(self) -> dict[str, float]:
        return {}


@dataclass(eq=False)
class JointTrainer(OffPolicyTrainer):
    """Actor and train callbacks of MADDPG over ``mi`` (a ``SeatActorQ``) and a ``Replay``
    of joint transitions (``joint_seats`` = the game's seats, one lane per game).

    A train window batch holds one column per (game, seat) in no fixed order;
    ``SeatWindows`` queues them per (game, seat) and hands back each game's
    window as soon as every seat's has come (every seat of a game steps together,
    so the k-th windows of its seats cover the same steps): its keys
    ``[T, 1, S, ...]`` are one lane's rows, every seat's step on each row.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self.seat_windows = SeatWindows(range(self.seats_per_game), games=1)

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply each row's explored action by its seat's actor; record finished episodes."""
        first_frame = self.frames
        self.record_acting(batch)
        model = self.mi["actor"]
        seats = torch.as_tensor(np.asarray(batch.seats, np.int64))
        with torch.inference_mode():
            action = model.act_rows(model.encode(to_tensors(batch, model.obs_keys, self.device)), seats)
        return {"a": self.sampler(model.policy_family({"action": action}), first_frame).numpy()}

    def windows(self, batch: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], np.ndarray]]:
        """Each game's joint window, once every seat's has come, in the game's lane."""
        for joint in self.seat_windows.add(batch):
            game_ids = joint.pop("game_ids")
            yield joint, game_ids

    def games_restarted(self) -> None:
        """New games: windows still waiting for their other seats belong to the old ones."""
        super().games_restarted()
        self.seat_windows = SeatWindows(range(self.seats_per_game), games=1)
