"""The callbacks of value-based training on replay (DQN family, R2D2, DRQN).

``ValueTrainer.actor`` answers the ``actor`` tag: epsilon-greedy on the
actor copy's ``Q`` (the ``Sampler`` with its schedule), replying ``a`` and, for
a recurrent model, ``h``: the state the step started from, declared with
``gc.add_key`` and kept in the history so sequence replay can start from it.
``ValueTrainer.train`` answers the ``train`` tag: the ``[T, B]`` window goes
into the ``Replay``, then the learner makes as many updates as the replay
ratio owes (``replay_ratio`` updates per environment frame after
``learning_starts``), each followed by its priority update; the actor copy is
refreshed every ``actor_sync_every`` updates. Acting never waits for a number
of updates: the ratio is held by the frames counted, whatever the batch sizes.

``value_interface`` gathers the learner, its acting copy and its target
network; ``GameLoader.add_value_tags`` adds the two tags to a context.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .args_provider import Configurable, setting
from .game_loader import STATE_KEY
from .model_base import Model
from .model_interface import ModelInterface
from .prev_inputs import add_final_inputs
from .replay import Replay
from .sampler import Sampler
from .trainer import ActingRecord, actor_sync_setting, device_setting, lanes_of, observations, replied_inputs

__all__ = ["ValueTrainer", "value_interface"]


def value_interface(model: Model, mi: ModelInterface | None = None) -> ModelInterface:
    """``mi`` (its optimizer settings) holding the learner ``model`` (optimized),
    its ``actor`` copy and its ``target`` network."""
    mi = (mi or ModelInterface()).add_actor_critic(model)
    target = mi.add_model("target", model.clone())
    target.requires_grad_(False)
    return mi


@dataclass(eq=False)
class ValueTrainer(ActingRecord, Configurable):
    """Actor and train callbacks over ``mi`` (``model``, ``actor``, ``target``) and a ``Replay``."""

    mi: ModelInterface
    method: Any  # DQN, R2D2 or DRQN: step(mi, batch) -> (stats, priorities)
    sampler: Sampler
    replay: Replay
    replay_ratio: float = setting(0.25, "learning updates per environment frame (after --learning_starts)")
    learning_starts: int = setting(1000, "frames played before the first update")
    replay_batch: int = setting(64, "transitions (or sequences) per update")
    device: str = device_setting()
    actor_sync_every: int = actor_sync_setting()
    seats_per_game: int = 1
    statistics: tuple[str, ...] = ()  # the game's episode statistics keys (GameLoader.statistic_keys)

    def __post_init__(self) -> None:
        if self.replay_ratio <= 0:
            raise ValueError(f"replay_ratio must be > 0 updates per frame, got {self.replay_ratio}")
        self.start_record()

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply epsilon-greedy ``a`` (and ``h``, the previous inputs) for every row; record finished episodes."""
        self.record_acting(batch)
        self.sampler.anneal(self.frames)
        model = self.mi["actor"]
        obs, prev = observations(model, batch, self.actor_on, self.previous, self.actor_staging)
        reply = {}
        with torch.inference_mode():
            if self.states is None:
                Q = model(obs)["Q"]
            else:
                h = self.states.get(batch)
                reset = torch.as_tensor(np.asarray(batch["terminal"])).to(self.actor_on).unsqueeze(0)
                out = model({k: v.unsqueeze(0) for k, v in obs.items()}, h, reset)
                self.states.set(batch, out["state"])
                Q = out["Q"][0]
                reply[STATE_KEY] = h.cpu().numpy()
            a, _ = self.sampler(Q)
        reply["a"] = a.cpu().numpy()
        inputs = replied_inputs(batch, a, prev, self.previous)
        return {**reply, **{key: value.cpu().numpy() for key, value in inputs.items()}}

    def train(self, batch: Mapping[str, Any]) -> None:
        """Store the window, then make the updates the replay ratio owes."""
        self.store(batch)
        owed = int(self.replay_ratio * (self.frames - self.learning_starts)) - self.updates
        if owed > 0 and len(self.replay) == 0:  # every lane still shorter than the n-step horizon
            return
        for _ in range(owed):
            self.learn()

    def store(self, batch: Mapping[str, Any]) -> None:
        """Put a window batch into the replay, each (game, seat) its own lane."""
        window = {key: torch.as_tensor(np.asarray(batch[key])) for key in batch.keys()}  # views: no copy
        add_final_inputs(self.mi["model"], window)
        self.replay.add(window, lanes_of(batch, self.seats_per_game))

    def learn(self) -> None:
        """One update on a replayed batch, then its priorities and the actor copy."""
        if self.total_frames:
            self.replay.anneal(self.frames / self.total_frames)
        sample = self.replay.sample(self.replay_batch)
        index = sample.pop("index")
        if self.window_staging is not None:  # a GPU: through pinned buffers
            sample = self.window_staging.to_device(sample)
        else:
            sample = {k: v.to(self.device, non_blocking=True) for k, v in sample.items()}
        stats, priorities = self.method.step(self.mi, sample)
        self.replay.update_priorities(index, priorities)
        self.updates += 1
        if self.updates % self.actor_sync_every == 0:
            self.mi.update_model("actor", "model")
        self.update_stats.add({**stats, **self.replay.stats(), **self.exploration_stats()})

    def exploration_stats(self) -> dict[str, float]:
        """What the stats line says of exploration: epsilon."""
        return {"epsilon": self.sampler.epsilon}
