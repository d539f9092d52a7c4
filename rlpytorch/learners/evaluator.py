"""Evaluation: play a fixed model for a set number of episodes and report their returns.

``Evaluator.actor`` answers the ``actor`` tag as ``Trainer.actor`` does (the
same acting, without learning) and keeps the counted episodes;
``run.eval_iters`` drives the games until it is done.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..acting.act import RecurrentStates, act, previous_actions
from ..acting.sampler import Sampler
from ..core.args_provider import Configurable, at_least, setting
from ..models.base import Model
from .trainer import episodes_in, lanes_of

__all__ = ["EvalResult", "Evaluator", "check_eval_episodes"]


@dataclass(frozen=True)
class EvalResult:
    """Returns of the evaluated episodes, their episode statistics, and a summary."""

    returns: np.ndarray
    lengths: np.ndarray
    statistics: dict[str, np.ndarray]

    @property
    def mean(self) -> float:
        return float(self.returns.mean())

    @property
    def std(self) -> float:
        return float(self.returns.std())

    def statistic_mean(self, name: str) -> float:
        """Mean of episode statistic ``name`` (MiniRTS's ``won``: the win rate)."""
        return float(self.statistics[name].mean())

    def __str__(self) -> str:
        text = f"{len(self.returns)} episodes: return {self.mean:.2f} ± {self.std:.2f}"
        text += f", length {self.lengths.mean():.1f}"
        return text + "".join(f", {name} {self.statistic_mean(name):.3f}" for name in self.statistics)


def check_eval_episodes(episodes: int) -> None:
    """Raises unless ``episodes`` can be evaluated (checked before training, not after it)."""
    if episodes < 1:
        raise ValueError(f"eval_episodes must be >= 1, got {episodes} (--no-eval_at_end skips evaluation)")


@dataclass(eq=False)
class Evaluator(Configurable):
    """Plays ``eval_episodes`` episodes with a fixed model and reports their returns.

    Counting the first episodes to finish would favour short ones, so the set
    of counted episodes is fixed in advance: the first ``k`` episodes of lanes
    ``0..M-1`` (``k = ceil(N / lanes)``, ``M = ceil(N / k)``), a lane being one
    seat of one game (``seats_per_game`` of them per game: in a game of several
    seats each seat's episode counts, as in training's stats). The game's
    episode ``statistics`` keys are read on terminal rows and averaged.
    """

    model: Model
    num_games: int
    eval_episodes: int = setting(100, "episodes per evaluation", aliases=("episodes",), bounds=at_least(0))
    eval_sampler: str = setting("greedy", "how the evaluated policy acts", choices=("greedy", "multinomial"))
    device: str = "cpu"
    seed: int | None = None

    statistics: tuple[str, ...] = ()  # the game's episode statistics keys
    seats_per_game: int = 1

    def __post_init__(self) -> None:
        check_eval_episodes(self.eval_episodes)
        episodes = self.eval_episodes
        self.model.to(self.device)
        self.sampler = Sampler(self.eval_sampler, seed=self.seed)
        self.per_lane = math.ceil(episodes / (self.num_games * self.seats_per_game))
        self.lanes = math.ceil(episodes / self.per_lane)
        self.statistics = tuple(self.statistics)
        self.finished: dict[int, list[tuple[float, int, tuple[float, ...]]]] = {k: [] for k in range(self.lanes)}
        self.frames = 0
        self.states = RecurrentStates(self.model.state_size, self.device) if self.model.state_size else None
        self.previous = previous_actions(self.model, self.device)

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply like ``Trainer.actor`` and record the counted episodes."""
        self.frames += len(batch)
        rows, returns, lengths, stats = episodes_in(batch, self.statistics)
        lanes = lanes_of(batch, self.seats_per_game)[rows]
        for i, lane in enumerate(lanes.tolist()):
            episodes = self.finished.get(lane)
            if episodes is not None and len(episodes) < self.per_lane:
                episodes.append((returns[i], lengths[i], tuple(stats[name][i] for name in self.statistics)))
        return act(self.model, self.sampler, batch, self.device, self.states, previous=self.previous)

    @property
    def episodes_done(self) -> int:
        """Counted episodes finished so far."""
        return sum(len(e) for e in self.finished.values())

    @property
    def done(self) -> bool:
        return self.episodes_done >= self.per_lane * self.lanes

    def result(self) -> EvalResult:
        """The first ``eval_episodes`` counted episodes, in lane order."""
        rows = [e for lane in range(self.lanes) for e in self.finished[lane]][: self.eval_episodes]
        if not rows:
            raise RuntimeError("no episode finished yet")
        returns, lengths, stats = zip(*rows, strict=True)
        values = np.asarray(stats, np.float64).reshape(len(rows), len(self.statistics))
        statistics = {name: values[:, k] for k, name in enumerate(self.statistics)}
        return EvalResult(np.asarray(returns), np.asarray(lengths), statistics)
