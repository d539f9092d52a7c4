"""The callbacks of value-based training on replay (DQN family, R2D2, DRQN).

``ValueTrainer.actor`` answers the ``actor`` tag: epsilon-greedy on the
actor copy's ``Q`` (the ``Sampler`` with its schedule), replying ``a`` and, for
a recurrent model, ``h``: the state the step started from, declared with
``context.add_key`` and kept in the history so sequence replay can start from it.
``ValueTrainer.train`` answers the ``train`` tag: the ``[T, B]`` window goes
to its learning half, ``ReplayLearning``, which stores it in the ``Replay``
and then owes as many updates as the replay ratio says (``replay_ratio``
updates per environment frame stepped after ``learning_starts``), each
followed by its priority update; the actor copy is refreshed every
``actor_sync_every`` updates. The ratio is held by the frames counted,
whatever the batch sizes. Under ``--runner multi`` the ``ReplayLearning``
(replay, learner, target, priorities) lives in the learner process
(``run.multi_process``) and the actor here keeps stepping the games.

``value_interface`` gathers the learner, its acting copy and its target
network; ``ValueTrainer.add_tags`` adds the two tags to a context.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor

from ..acting.act import observations, replied_inputs
from ..acting.prev_inputs import add_final_inputs
from ..acting.sampler import Sampler
from ..core.args_provider import Configurable, above, at_least, setting
from ..core.game_loader import STATE_KEY
from ..core.settings import actor_sync_setting, device_setting
from ..core.transfer import HostStaging
from ..models.base import Model
from ..models.interface import ModelInterface
from ..replay import Replay
from .trainer import ActingRecord, learning_in_process, learning_state, load_learning_state

__all__ = ["ReplayLearning", "ValueTrainer", "value_interface"]


def value_interface(model: Model, mi: ModelInterface | None = None) -> ModelInterface:
    """``mi`` (its optimizer settings) holding the learner ``model`` (optimized),
    its ``actor`` copy and its ``target`` network."""
    mi = (mi or ModelInterface()).add_actor_critic(model)
    target = mi.add_model("target", model.clone())
    target.requires_grad_(False)
    return mi


@dataclass(eq=False)
class ReplayLearning:
    """The learning half of training on replay, in the trainer's process or a
    learner process (``MultiProcessRun``): each window it takes goes into the
    replay; it owes ``replay_ratio`` updates per frame stepped after
    ``learning_starts`` (``trainer.WindowLearning`` says what a learning half does)."""

    mi: ModelInterface
    method: Any  # step(mi, batch) -> (stats, priorities)
    device: torch.device
    staging: HostStaging | None
    replay: Replay
    replay_ratio: float
    learning_starts: int
    replay_batch: int
    frames: int = 0  # frames stepped when the last window was taken
    progress: float = 0.0  # and the run's progress then (prioritized replay's beta follows it)

    @property
    def model(self) -> Model:
        return self.mi["model"]

    def take(self, window: Mapping[str, Tensor], lanes: np.ndarray, frames: int,
             progress: float) -> list[dict[str, float]]:
        """Store ``window`` (columns of game seats ``lanes``), taken after ``frames``
        frames stepped at ``progress`` of the run; no update is made here."""
        window = dict(window)
        add_final_inputs(self.mi["model"], window)
        self.replay.add(window, lanes)
        self.frames, self.progress = frames, progress
        return []

    def owed(self, updates: int) -> int:
        """Updates owed after ``updates``: ``int(replay_ratio (frames - learning_starts)) - updates``
        (none while every lane is still shorter than the n-step horizon)."""
        owed = int(self.replay_ratio * (self.frames - self.learning_starts)) - updates
        return owed if owed > 0 and len(self.replay) else 0

    def state_dict(self) -> dict[str, Any]:
        """What continues the learning exactly: ``learning_state`` and the replay's state
        (its tensors are the replay's own arrays: write them out before the next ``take``)."""
        return {**learning_state(self.mi, self.method), "replay": self.replay.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned; a state without a replay (a checkpoint
        written before replays were saved) leaves the replay empty. A loaded state goes on
        with games started afresh (``rlpytorch.run.resume``): the replay records the break here,
        where it lives (a learner process's replay never sees the trainer's ``games_restarted``)."""
        load_learning_state(self.mi, self.method, state)
        if "replay" in state:
            self.replay.load_state_dict(state["replay"])
            self.replay.games_restarted()

    def update(self) -> dict[str, float]:
        """One update on a replayed batch, then the priorities of its rows."""
        self.replay.anneal(self.progress)
        sample = self.replay.sample(self.replay_batch)
        index = sample.pop("index")
        if self.staging is not None:  # a GPU: through pinned buffers, but for the frames stored there
            there = {k: v for k, v in sample.items() if v.device.type != "cpu"}
            sample = {**self.staging.to_device({k: v for k, v in sample.items() if k not in there}), **there}
        else:
            sample = {k: v.to(self.device, non_blocking=True) for k, v in sample.items()}
        stats, priorities = self.method.step(self.mi, sample)
        self.replay.update_priorities(index, priorities)
        return {**stats, **self.replay.stats()}


@dataclass(eq=False)
class ValueTrainer(ActingRecord, Configurable):
    """Actor and train callbacks over ``mi`` (``model``, ``actor``, ``target``) and a ``Replay``."""

    mi: ModelInterface
    method: Any  # DQN, R2D2 or DRQN: step(mi, batch) -> (stats, priorities)
    sampler: Sampler
    replay: Replay
    replay_ratio: float = setting(0.25, "learning updates per environment frame (after --learning_starts)",
                                  bounds=above(0))
    learning_starts: int = setting(1000, "frames played before the first update", bounds=at_least(0))
    replay_batch: int = setting(64, "transitions (or sequences) per update", bounds=at_least(1))
    device: str = device_setting()
    actor_sync_every: int = actor_sync_setting()
    seats_per_game: int = 1
    statistics: tuple[str, ...] = ()  # the game's episode statistics keys (GameLoader.statistic_keys)

    needs_every_window: ClassVar[bool] = True  # the replay stores each game's steps in order
    ACTOR_REPLIES: ClassVar[tuple[str, ...]] = ("a",)  # the action only
    WINDOW_KEYS: ClassVar[tuple[str, ...]] = ("a", "r", "terminal", "truncated")  # what the replay stores
    # Gathers the learner, its acting copy and its target (rebuilt so in a learner process).
    interface: ClassVar[Callable[[Model, ModelInterface], ModelInterface]] = staticmethod(value_interface)

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

    def learning(self) -> ReplayLearning:
        """The learning half over this trainer's learner and replay, at the frames stepped so far
        (its updates are owed by them even when a call hands it no window: MADDPG's joining)."""
        return ReplayLearning(self.mi, self.method, self.learner_on, self.window_staging, self.replay,
                              **self._ratio_fields(), frames=self.frames, progress=self.progress)

    def process_learning(self) -> Callable[[torch.device], ReplayLearning]:
        """What builds the learning half in a learner process (``MultiProcessRun``), picklable:
        copies of the learner and its target, the method, and an empty replay of the same settings."""
        replay = self.replay
        empty_replay = functools.partial(type(replay), **{f.name: getattr(replay, f.name)
                                                          for f in dataclasses.fields(replay) if f.init})
        return functools.partial(learning_in_process, ReplayLearning, type(self).interface,
                                 self.mi["model"].clone().cpu(), self.mi.setting_values(),
                                 made_there={"replay": empty_replay}, method=self.method, **self._ratio_fields())

    def _ratio_fields(self) -> dict[str, Any]:
        return {"replay_ratio": self.replay_ratio, "learning_starts": self.learning_starts,
                "replay_batch": self.replay_batch}

    def games_restarted(self) -> None:
        """New games: besides what ``ActingRecord`` forgets, the replay records a break, so
        no stored step leads into a new game's first (``Replay.games_restarted``)."""
        super().games_restarted()
        self.replay.games_restarted()

    def record_update(self, stats: Mapping[str, float]) -> None:
        """Count an update and keep its stats, with the actor's exploration beside them."""
        super().record_update({**stats, **self.exploration_stats()})

    def run_stats(self) -> dict[str, float]:
        """The replay ratio achieved: updates per frame stepped after ``learning_starts``
        (below ``replay_ratio`` when a learner process falls behind and drops updates)."""
        learning_frames = self.frames - self.learning_starts
        return {"replay_ratio_achieved": self.updates / learning_frames if learning_frames > 0 else 0.0}

    def exploration_stats(self) -> dict[str, float]:
        """What the stats line says of exploration: epsilon."""
        return {"epsilon": self.sampler.epsilon}
