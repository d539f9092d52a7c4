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

``add_value_tags`` adds the two tags to a context; ``num_actions`` reads the
game's action count from its spec (the one place that does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from .args_provider import Arg, Configurable
from .game_loader import ACTOR_INPUTS, STATE_KEY, GameLoader
from .model_base import Model
from .model_interface import ModelInterface
from .model_loader import register_model
from .models.q_networks import GRUQNetwork, LSTMQNetwork, QNetwork
from .replay import Replay
from .sampler import Sampler
from .stats import EpisodeStats, RunningMean
from .trainer import RecurrentStates, episodes_in, to_tensors

__all__ = ["ValueTrainer", "add_value_tags", "lanes_of", "num_actions", "value_interface"]

for _cls in (QNetwork, LSTMQNetwork, GRUQNetwork):
    register_model(_cls)

TRAIN_INPUTS = ["a", "r", "terminal", "truncated"]


def num_actions(gc: Any) -> int:
    """Number of discrete actions of the game's action ``a``."""
    return int(gc.spec()["a"].bounds[1]) + 1


def add_value_tags(loader: GameLoader, gc: Any, state_size: int = 0) -> Any:
    """Add the ``actor`` (replies ``a``, and ``h`` for a recurrent model) and ``train``
    (``[T, B]`` windows of what replay stores) tags of value-based training to ``gc``."""
    obs = list(loader.observation_spec(gc))
    spec = gc.spec()
    finals = [f"final_{k}" for k in obs if f"final_{k}" in spec]
    state = []
    if state_size:
        gc.add_key(STATE_KEY, "float32", [state_size], "recurrent state the actor started this step from")
        state = [STATE_KEY]
    won = ["won"] if "won" in spec else []
    gc.add_tag("actor", loader.actor_batch, obs + ACTOR_INPUTS + won, ["a", *state])
    gc.add_tag("train", loader.train_batch, obs + finals + TRAIN_INPUTS + state, T=loader.T)
    return gc


def value_interface(model: Model, config: Mapping[str, Any] | None = None) -> ModelInterface:
    """The learner ``model`` (optimized), its ``actor`` copy and its ``target`` network."""
    mi = ModelInterface.actor_critic(model, dict(config or {}))
    target = mi.add_model("target", model.clone())
    target.requires_grad_(False)
    return mi


def lanes_of(batch: Any, seats_per_game: int) -> np.ndarray:
    """The replay lane of every column: one per (game, seat)."""
    games = np.asarray(batch.game_ids, np.int64)
    seats = getattr(batch, "seats", None)
    return games * seats_per_game + (0 if seats is None else np.asarray(seats, np.int64))


class ValueTrainer(Configurable):
    """Actor and train callbacks over ``mi`` (``model``, ``actor``, ``target``) and a ``Replay``."""

    args = (
        Arg("replay_ratio", 0.25, "learning updates per environment frame (after --learning_starts)"),
        Arg("learning_starts", 1000, "frames played before the first update"),
        Arg("replay_batch", 64, "transitions (or sequences) per update"),
        Arg("device", "cpu", "torch device of models and batches: cpu, cuda, cuda:1, ..."),
        Arg("actor_sync_every", 1, "copy the learner into the actor every N updates"),
    )

    def __init__(
        self,
        mi: ModelInterface,
        method: Any,
        sampler: Sampler,
        replay: Replay,
        replay_ratio: float = 0.25,
        learning_starts: int = 1000,
        replay_batch: int = 64,
        device: str = "cpu",
        actor_sync_every: int = 1,
        seats_per_game: int = 1,
    ) -> None:
        if replay_ratio <= 0:
            raise ValueError(f"replay_ratio must be > 0 updates per frame, got {replay_ratio}")
        self.device = torch.device(device)
        self.mi = mi.to(self.device)
        self.method = method
        self.sampler = sampler
        self.replay = replay
        self.replay_ratio = replay_ratio
        self.learning_starts = learning_starts
        self.replay_batch = replay_batch
        self.actor_sync_every = actor_sync_every
        self.seats_per_game = seats_per_game
        self.total_frames = 0  # the run's frame budget, set by the runner
        self.frames = 0
        self.updates = 0
        self.episodes = EpisodeStats()
        self.update_stats = RunningMean()
        actor = mi["actor"]
        self.states = RecurrentStates(actor.state_size, self.device) if actor.state_size else None

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply epsilon-greedy ``a`` (and ``h``) for every row; record finished episodes."""
        self.frames += len(batch)
        _, returns, lengths, wins = episodes_in(batch)
        if len(returns):
            self.episodes.add(returns, lengths, wins)
        self.sampler.anneal(self.frames)
        model = self.mi["actor"]
        obs = to_tensors(batch, model.obs_keys, self.device)
        reply = {}
        with torch.inference_mode():
            if self.states is None:
                Q = model(obs)["Q"]
            else:
                h = self.states.get(batch)
                reset = torch.as_tensor(np.asarray(batch["terminal"])).to(self.device).unsqueeze(0)
                out = model({k: v.unsqueeze(0) for k, v in obs.items()}, h, reset)
                self.states.set(batch, out["state"])
                Q = out["Q"][0]
                reply[STATE_KEY] = h.cpu().numpy()
            a, _ = self.sampler(Q)
        reply["a"] = a.cpu().numpy()
        return reply

    def train(self, batch: Mapping[str, Any]) -> None:
        """Store the window, then make the updates the replay ratio owes."""
        self.replay.add(batch, lanes_of(batch, self.seats_per_game))
        owed = int(self.replay_ratio * (self.frames - self.learning_starts)) - self.updates
        if owed > 0 and len(self.replay) == 0:  # every lane still shorter than the n-step horizon
            return
        for _ in range(owed):
            self.learn()

    def learn(self) -> None:
        """One update on a replayed batch, then its priorities and the actor copy."""
        if self.total_frames:
            self.replay.anneal(self.frames / self.total_frames)
        sample = self.replay.sample(self.replay_batch)
        index = sample.pop("index")
        sample = {k: v.to(self.device, non_blocking=True) for k, v in sample.items()}
        stats, priorities = self.method.step(self.mi, sample)
        self.replay.update_priorities(index, priorities)
        self.updates += 1
        if self.updates % self.actor_sync_every == 0:
            self.mi.update_model("actor", "model")
        self.update_stats.add({**stats, **self.replay.stats(), "epsilon": self.sampler.epsilon})
