"""The callbacks that the engine calls with its batches.

``Trainer.actor`` answers the ``actor`` tag: batched inference with the
lagging actor model (``acting.act.act``: replies ``a``, ``pi`` or ``logp``, ``V``,
and ``h`` / ``prev_`` inputs for models that need them; each game's recurrent
state and last action are kept between calls).
``Trainer.train`` answers the ``train`` tag: one ``[T, B]`` window, one optimizer step, and the actor copy refreshed
every ``actor_sync_every`` updates. (``learners.evaluator`` plays without
learning.)

The acting model and the learner may live on different devices
(``--actor_device``, ``--learner_device``, each defaulting to ``--device``): the
learner's weights are copied into the actor every ``actor_sync_every``
updates, across devices if need be. Batches for a CUDA device go through
pinned host buffers with non-blocking copies, and replies come back the same
way (``rlpytorch.core.transfer``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
import torch
from torch import Tensor

from ..acting.act import RecurrentStates, act, previous_actions
from ..acting.prev_inputs import add_final_inputs
from ..acting.sampler import Sampler
from ..core import distributed
from ..core.args_provider import Configurable, setting
from ..core.settings import actor_device_setting, actor_sync_setting, device_setting, learner_device_setting
from ..core.stats import EpisodeStats, RunningMean
from ..core.transfer import HostStaging, staging_for
from ..models.base import Model
from ..models.interface import ModelInterface
from ..models.normalization import normalize_window

__all__ = [
    "Trainer",
    "WindowLearning",
    "episodes_in",
    "lanes_of",
    "learner_interface",
    "learning_in_process",
    "learning_state",
    "load_learning_state",
]


class Method(Protocol):
    """What the trainer needs of a method (``ActorCritic`` is one)."""

    def update(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> dict[str, float]: ...


def episodes_in(
    batch: Mapping[str, Any], statistics: Sequence[str] = ()
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Rows of ``batch`` where an episode just ended: ``(rows, returns, lengths, stats)``.

    Needs ``terminal``, ``episode_return`` and ``episode_length`` among its keys
    (empty arrays otherwise); ``stats`` holds, for each of the game's episode
    ``statistics`` keys (role "statistic" in its spec), its values on those rows.
    """
    keys = set(batch.keys())
    if not {"terminal", "episode_return", "episode_length"} <= keys:
        empty = np.zeros(0)
        return empty.astype(np.int64), empty, empty, {}
    rows = np.flatnonzero(np.asarray(batch["terminal"]))
    if rows.size:  # a terminal row of length 0 ends no episode: a seat that left its game (elfpy.context)
        rows = rows[np.asarray(batch["episode_length"])[rows] != 0]
    if rows.size == 0:  # most batches: no episode ended, and indexing costs more than the check
        return rows, np.zeros(0), np.zeros(0, np.int64), {name: np.zeros(0) for name in statistics}
    returns = np.asarray(batch["episode_return"])[rows].astype(np.float64)
    lengths = np.asarray(batch["episode_length"])[rows].astype(np.int64)
    stats = {name: np.asarray(batch[name])[rows].astype(np.float64) for name in statistics}
    return rows, returns, lengths, stats


class ActingRecord:
    """What a trainer keeps while its games play: frames and updates counted,
    finished episodes, update stats, and each game's recurrent state. Needs
    ``mi`` (with its ``actor``), ``device`` and ``statistics``; the learner and
    the actor are placed on ``learner_device`` and ``actor_device`` (default:
    ``device``), each with a pinned staging if it is a CUDA device."""

    # Whether the learning half needs every window in order (replay: a missing
    # window would join steps that do not follow each other), so none is dropped.
    needs_every_window = False
    # The keys its actor replies and its windows carry (besides the observations
    # and a recurrent or previous-input state): "a" the game's action keys, "pi"
    # the behaviour policy's key (core.game_loader); a subclass declares its own.
    ACTOR_REPLIES: ClassVar[tuple[str, ...]] = ("a", "pi", "V")
    WINDOW_KEYS: ClassVar[tuple[str, ...]] = ("a", "pi", "V", "r", "terminal", "truncated")

    @classmethod
    def add_tags(cls, loader: Any, context: Any, state_size: int = 0, prev: Any = None) -> Any:
        """``context`` with the ``actor`` and ``train`` tags this trainer's callbacks
        serve (``loader``: the run's ``GameLoader``; ``state_size`` and ``prev``:
        the model's recurrent state and previous inputs)."""
        return loader.add_tags(context, cls.ACTOR_REPLIES, cls.WINDOW_KEYS, state_size, prev)

    def start_record(self, learner_device: str = "", actor_device: str = "") -> None:
        self.statistics = tuple(self.statistics)
        self.learner_on = torch.device(learner_device or self.device)
        self.actor_on = torch.device(actor_device or self.device)
        self.mi.to(self.learner_on)
        self.mi["actor"].to(self.actor_on)
        self.window_staging = staging_for(self.learner_on)
        self.actor_staging = staging_for(self.actor_on)
        self.total_frames = 0  # the run's frame budget, set by the runner
        self.frames = 0
        self.updates = 0
        self.episodes = EpisodeStats()
        self.update_stats = RunningMean()
        actor = self.mi["actor"]
        self.states = RecurrentStates(actor.state_size, self.actor_on) if actor.state_size else None
        self.previous = previous_actions(actor, self.actor_on)

    def training_state(self) -> dict[str, Any]:
        """What continues the run exactly (``rlpytorch.run.resume``): the learning half's
        state (``learning().state_dict()``: the models and optimizers, the method's
        random generator, on replay the replay), the counters, the finished episodes,
        the update stats since the last stats line, and the sampler's random generator."""
        return {
            **self.learning().state_dict(),
            "frames": self.frames,
            "updates": self.updates,
            "episodes": self.episodes.state_dict(),
            "update_stats": self.update_stats.state_dict(),
            "sampler": self.sampler.state_dict(),
        }

    def load_training_state(self, state: Mapping[str, Any]) -> None:
        """Restore what ``training_state`` returned; then ``games_restarted``."""
        self.learning().load_state_dict(state)
        self.frames, self.updates = int(state["frames"]), int(state["updates"])
        self.episodes.load_state_dict(state["episodes"])
        self.update_stats.load_state_dict(state["update_stats"])
        self.sampler.load_state_dict(state["sampler"])
        self.games_restarted()

    def games_restarted(self) -> None:
        """The games start new episodes (a fresh context): forget what belonged
        to the old ones, each game's recurrent state and running discounted return."""
        actor = self.mi["actor"]
        self.states = RecurrentStates(actor.state_size, self.actor_on) if actor.state_size else None
        self.previous = previous_actions(actor, self.actor_on)
        reward_norm = distributed.unwrap(self.mi["model"]).reward_norm
        if reward_norm is not None:
            reward_norm.returns.clear()

    @property
    def progress(self) -> float:
        """The run's progress, frames stepped over the budget (0 without one)."""
        return self.frames / self.total_frames if self.total_frames else 0.0

    def train(self, batch: Mapping[str, Any]) -> None:
        """The ``train`` callback: a time-major ``[T, B]`` window to the learning half
        (``learning()``), then the updates it makes, each counted, the actor copy
        following the learner every ``actor_sync_every`` updates."""
        learning = self.learning()
        for window, lanes in self.windows(batch):
            for stats in learning.take(window, lanes, self.frames, self.progress):
                self._updated(stats)
        for _ in range(learning.owed(self.updates)):
            self._updated(learning.update())

    def windows(self, batch: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Tensor], np.ndarray]]:
        """What the learning half takes of a window batch, as (window, lanes) pairs:
        the batch itself, each column the lane of its (game, seat)."""
        yield ({key: torch.as_tensor(np.asarray(batch[key])) for key in batch.keys()},  # views: no copy
               lanes_of(batch, self.seats_per_game))

    def _updated(self, stats: Mapping[str, float]) -> None:
        self.record_update(stats)
        if self.updates % self.actor_sync_every == 0:
            self.mi.update_model("actor", "model")

    def record_update(self, stats: Mapping[str, float]) -> None:
        """Count an update (made here or in a learner process) and keep its stats for the stats line."""
        self.updates += 1
        self.update_stats.add(stats)

    def run_stats(self) -> dict[str, float]:
        """Values of the run so far for each stats record (none here)."""
        return {}

    def record_acting(self, batch: Mapping[str, Any]) -> None:
        """Count an actor batch's frames and record the episodes it ends."""
        self.frames += len(batch)
        _, returns, lengths, stats = episodes_in(batch, self.statistics)
        if len(returns):
            self.episodes.add(returns, lengths, stats)


def lanes_of(batch: Any, seats_per_game: int) -> np.ndarray:
    """One id per column of a window (or row of a batch), dense over (game, seat)."""
    games = np.asarray(batch.game_ids, np.int64)
    seats = getattr(batch, "seats", None)
    return games * seats_per_game + (0 if seats is None else np.asarray(seats, np.int64))


@dataclass(eq=False)
class Trainer(ActingRecord, Configurable):
    """Actor and train callbacks over a ``ModelInterface`` with ``model`` and ``actor``."""

    mi: ModelInterface
    method: Method
    sampler: Sampler
    device: str = device_setting()
    actor_device: str = actor_device_setting()
    learner_device: str = learner_device_setting()
    actor_sync_every: int = actor_sync_setting()
    lr_schedule: str = setting(
        "linear",
        "learning rate over the run: constant, or linear decay to 0 at the frame budget",
        choices=("constant", "linear"),
    )

    seats_per_game: int = 1
    statistics: tuple[str, ...] = ()  # the game's episode statistics keys (GameLoader.statistic_keys)

    def __post_init__(self) -> None:
        self.start_record(self.learner_device, self.actor_device)

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply ``a``, ``pi`` and ``V`` for every row; record finished episodes."""
        self.record_acting(batch)
        return act(self.mi["actor"], self.sampler, batch, self.actor_on, self.states, self.actor_staging, self.previous)

    def learning(self) -> WindowLearning:
        """The learning half over this trainer's learner: one update per window."""
        return WindowLearning(self.mi, self.method, self.learner_on, self.window_staging, self.lr_schedule)

    def process_learning(self) -> Callable[[torch.device], WindowLearning]:
        """What builds the learning half in a learner process (``MultiProcessRun``): picklable."""
        return functools.partial(learning_in_process, WindowLearning, learner_interface,
                                 self.mi["model"].clone().cpu(), self.mi.setting_values(),
                                 method=self.method, lr_schedule=self.lr_schedule)


def learner_interface(model: Model, mi: ModelInterface) -> ModelInterface:
    """``mi`` holding the learner ``model`` (optimized): all an on-policy learner process needs."""
    mi.add_model("model", model, optimize=True)
    return mi


def learning_in_process(
    cls: type, interface: Callable[[Model, ModelInterface], ModelInterface], model: Model,
    mi_settings: Mapping[str, Any], device: torch.device, made_there: Mapping[str, Callable[[], Any]] | None = None,
    **fields: Any,
) -> Any:
    """A learning half ``cls`` built in a learner process: over ``interface(model)``
    on ``device`` (a ``ModelInterface`` with ``mi_settings``), with its pinned staging
    for a GPU, its ``fields``, and those ``made_there`` by their factories (an empty
    replay: small to send, where a replay's arrays are not)."""
    mi = interface(model.to(device), ModelInterface(**mi_settings))
    fields.update({name: make() for name, make in (made_there or {}).items()})
    return cls(mi=mi, device=device, staging=staging_for(device), **fields)


@dataclass(eq=False)
class WindowLearning:
    """The learning half of on-policy training, in the trainer's process or a
    learner process: one update of ``method`` on each window it takes.

    A learning half (this one, ``value_trainer.ReplayLearning``) ``take``s a
    window (its tensors may be reused as soon as ``take`` returns) and returns
    the stats of the updates it made on it; ``owed(updates)`` says how many more
    updates it owes (``update()`` makes one); ``model`` is the learner."""

    mi: ModelInterface
    method: Method
    device: torch.device
    staging: HostStaging | None = None
    lr_schedule: str = "constant"

    @property
    def model(self) -> Model:
        return distributed.unwrap(self.mi["model"])

    def take(self, window: Mapping[str, Tensor], lanes: np.ndarray, frames: int,
             progress: float) -> list[dict[str, float]]:
        """One update on ``window`` (columns of game seats ``lanes``) at ``progress`` of the run."""
        if self.staging is not None:  # a GPU: through pinned buffers
            window = self.staging.to_device(window)
        else:
            window = {k: v.to(self.device, non_blocking=True) for k, v in window.items()}
        add_final_inputs(self.model, window)  # from the raw rewards, before normalize_window scales them
        normalize_window(self.model, window, lanes)
        if self.lr_schedule == "linear":
            self.mi.scale_lr(max(0.0, 1.0 - progress))
        return [self.method.update(self.mi, window)]

    def owed(self, updates: int) -> int:
        """None: every update is made as its window is taken."""
        return 0

    def state_dict(self) -> dict[str, Any]:
        """What continues the learning exactly: ``learning_state``."""
        return learning_state(self.mi, self.method)

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        load_learning_state(self.mi, self.method, state)


def learning_state(mi: ModelInterface, method: Any) -> dict[str, Any]:
    """A learning half's models and optimizers (``mi``) and its method's random generator, if it has one."""
    return {"mi": mi.state_dict(), "method": method.state_dict() if hasattr(method, "state_dict") else {}}


def load_learning_state(mi: ModelInterface, method: Any, state: Mapping[str, Any]) -> None:
    """Restore what ``learning_state`` returned."""
    mi.load_state_dict(state["mi"])
    if hasattr(method, "load_state_dict"):
        method.load_state_dict(state["method"])
