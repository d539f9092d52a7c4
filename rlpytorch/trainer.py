"""The callbacks that the engine calls with its batches.

``Trainer.actor`` answers the ``actor`` tag: batched inference with the
lagging actor model under ``torch.inference_mode``, replying ``a``, ``pi`` (the
behaviour distribution; ``logp``, the action's log-probability, for actions
other than one discrete one) and ``V``; for a recurrent model also ``h``, the state
it started the step from (``RecurrentStates`` keeps one per game and seat). ``Trainer.train`` answers the ``train``
tag: one ``[T, B]`` window, one optimizer step, and the actor copy refreshed
every ``actor_sync_every`` updates. ``Evaluator.actor`` plays without learning
and collects finished episodes.

A batch is any mapping of key to array (numpy views from the engine are valid
only during the callback): ``to_tensors`` moves it to the device with one copy
(none on CPU), and nothing here keeps a reference after returning.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from torch import Tensor

from .args_provider import Arg, Configurable
from .distributions import behaviour_key, policy_family, policy_of
from .model_base import Model
from .model_interface import ModelInterface
from .sampler import Sampler
from .stats import EpisodeStats, RunningMean

__all__ = ["EvalResult", "Evaluator", "RecurrentStates", "Trainer", "act", "episodes_in", "to_tensors"]


class Method(Protocol):
    """What the trainer needs of a method (``ActorCritic`` is one)."""

    def update(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> dict[str, float]: ...


def to_tensors(
    batch: Mapping[str, Any], keys: Iterable[str] | None, device: torch.device
) -> dict[str, Tensor]:
    """The ``keys`` present in ``batch`` (all with None) as tensors on ``device``
    (zero-copy on CPU)."""
    present = list(batch.keys())
    if keys is None:
        keys = present
    else:
        present_set = set(present)
        keys = [k for k in keys if k in present_set]
    return {key: torch.as_tensor(np.asarray(batch[key])).to(device, non_blocking=True) for key in keys}


class RecurrentStates:
    """The recurrent state of every (game, seat), kept between actor calls.

    Starts at zero and grows as new game ids appear. ``get`` returns the state
    a row continues from (the model zeroes it itself on the row's ``terminal``).
    """

    def __init__(self, state_size: int, device: torch.device | str = "cpu") -> None:
        self.state_size = state_size
        self.states = torch.zeros(0, 1, state_size, device=device)

    def _index(self, batch: Any) -> tuple[Tensor, Tensor]:
        games = torch.as_tensor(np.asarray(batch.game_ids), dtype=torch.long)
        seats = getattr(batch, "seats", None)
        seats = torch.zeros_like(games) if seats is None else torch.as_tensor(np.asarray(seats), dtype=torch.long)
        n_games = max(int(games.max()) + 1, self.states.shape[0])
        n_seats = max(int(seats.max()) + 1, self.states.shape[1])
        if (n_games, n_seats) != tuple(self.states.shape[:2]):
            grown = self.states.new_zeros(n_games, n_seats, self.state_size)
            grown[: self.states.shape[0], : self.states.shape[1]] = self.states
            self.states = grown
        device = self.states.device
        return games.to(device), seats.to(device)

    def get(self, batch: Any) -> Tensor:
        """``[B, S]``: the state each row of ``batch`` continues from."""
        games, seats = self._index(batch)
        return self.states[games, seats]

    def set(self, batch: Any, state: Tensor) -> None:
        """Store ``state`` ``[B, S]`` as the state after each row of ``batch``."""
        games, seats = self._index(batch)
        self.states[games, seats] = state.to(self.states.device)


def episodes_in(
    batch: Mapping[str, Any],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Rows of ``batch`` where an episode just ended: ``(rows, returns, lengths, wins)``.

    Needs ``terminal``, ``episode_return`` and ``episode_length`` among its keys
    (empty arrays otherwise); ``wins`` comes from a ``won`` key, None without one.
    """
    keys = set(batch.keys())
    if not {"terminal", "episode_return", "episode_length"} <= keys:
        empty = np.zeros(0)
        return empty.astype(np.int64), empty, empty, None
    rows = np.flatnonzero(np.asarray(batch["terminal"]))
    if rows.size == 0:  # most batches: no episode ended, and indexing costs more than the check
        return rows, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, bool) if "won" in keys else None
    returns = np.asarray(batch["episode_return"])[rows].astype(np.float64)
    lengths = np.asarray(batch["episode_length"])[rows].astype(np.int64)
    wins = np.asarray(batch["won"])[rows].astype(bool) if "won" in keys else None
    return rows, returns, lengths, wins


class Trainer(Configurable):
    """Actor and train callbacks over a ``ModelInterface`` with ``model`` and ``actor``."""

    args = (
        Arg("device", "cpu", "torch device of models and batches: cpu, cuda, cuda:1, ..."),
        Arg("actor_sync_every", 1, "copy the learner into the actor every N updates"),
        Arg(
            "lr_schedule",
            "linear",
            "learning rate over the run: constant, or linear decay to 0 at the frame budget",
            choices=("constant", "linear"),
        ),
    )

    def __init__(
        self,
        mi: ModelInterface,
        method: Method,
        sampler: Sampler,
        device: str = "cpu",
        actor_sync_every: int = 1,
        lr_schedule: str = "linear",
    ) -> None:
        self.device = torch.device(device)
        self.mi = mi.to(self.device)
        self.method = method
        self.sampler = sampler
        self.actor_sync_every = actor_sync_every
        self.lr_schedule = lr_schedule
        self.total_frames = 0  # the run's frame budget, set by the runner
        self.frames = 0
        self.updates = 0
        self.episodes = EpisodeStats()
        self.update_stats = RunningMean()
        self.states = RecurrentStates(mi["actor"].state_size, self.device) if mi["actor"].state_size else None

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply ``a``, ``pi`` and ``V`` for every row; record finished episodes."""
        self.frames += len(batch)
        _, returns, lengths, wins = episodes_in(batch)
        if len(returns):
            self.episodes.add(returns, lengths, wins)
        return act(self.mi["actor"], self.sampler, batch, self.device, self.states)

    def train(self, batch: Mapping[str, Any]) -> None:
        """One update on a time-major ``[T, B]`` window."""
        tensors = to_tensors(batch, None, self.device)
        if self.lr_schedule == "linear" and self.total_frames:
            self.mi.scale_lr(max(0.0, 1.0 - self.frames / self.total_frames))
        self.update_stats.add(self.method.update(self.mi, tensors))
        self.updates += 1
        if self.updates % self.actor_sync_every == 0:
            self.mi.update_model("actor", "model")


def act(
    model: Model,
    sampler: Sampler,
    batch: Mapping[str, Any],
    device: torch.device,
    states: RecurrentStates | None = None,
) -> dict[str, np.ndarray]:
    """Batched inference on the model's observation keys: actions, behaviour
    policy and value; for a recurrent model (``states`` given) also ``h``, the
    state each row started from, and the games' states move one step on.

    The behaviour policy is replied as ``pi`` (the distribution) for one
    discrete action and as ``logp`` (the log-probability of the replied action)
    for every other space (``distributions.behaviour_key``)."""
    obs = to_tensors(batch, model.obs_keys, device)
    family = policy_family(model)
    with torch.inference_mode():
        if states is None:
            out = model(obs)
        else:  # one step of [T = 1, B] from each game's state
            h = states.get(batch).to(device)
            reset = torch.as_tensor(np.asarray(batch["terminal"])).to(device).unsqueeze(0)
            out = model({k: v.unsqueeze(0) for k, v in obs.items()}, h, reset)
            states.set(batch, out["state"])
            out = {k: v[0] for k, v in out.items() if k != "state"}
        a, mu = sampler(policy_of(family, out))
    reply = {"a": a.cpu().numpy(), behaviour_key(family): mu.cpu().numpy(), "V": out["V"].cpu().numpy()}
    if states is not None:
        reply["h"] = h.cpu().numpy()
    return reply


@dataclass(frozen=True)
class EvalResult:
    """Returns of the evaluated episodes and their summary."""

    returns: np.ndarray
    lengths: np.ndarray
    wins: np.ndarray | None

    @property
    def mean(self) -> float:
        return float(self.returns.mean())

    @property
    def std(self) -> float:
        return float(self.returns.std())

    @property
    def win_rate(self) -> float:
        """Fraction of games won (NaN for games without a winner)."""
        return float(self.wins.mean()) if self.wins is not None else math.nan

    def __str__(self) -> str:
        text = f"{len(self.returns)} episodes: return {self.mean:.2f} ± {self.std:.2f}"
        text += f", length {self.lengths.mean():.1f}"
        return text + ("" if self.wins is None else f", win rate {self.win_rate:.3f}")


class Evaluator(Configurable):
    """Plays ``eval_episodes`` episodes with a fixed model and reports their returns.

    Counting the first episodes to finish would favour short ones, so the set
    of counted episodes is fixed in advance: the first ``k`` episodes of games
    ``0..M-1`` (``k = ceil(N / num_games)``, ``M = ceil(N / k)``). A game that
    reports a ``won`` key on terminal rows gets a win rate.
    """

    args = (
        Arg("eval_episodes", 100, "episodes per evaluation", aliases=("episodes",)),
        Arg("eval_sampler", "greedy", "how the evaluated policy acts", choices=("greedy", "multinomial")),
    )

    def __init__(
        self,
        model: Model,
        num_games: int,
        eval_episodes: int = 100,
        eval_sampler: str = "greedy",
        device: str = "cpu",
        seed: int | None = None,
    ) -> None:
        if eval_episodes < 1:
            raise ValueError(f"eval_episodes must be >= 1, got {eval_episodes} (--no-eval_at_end skips evaluation)")
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.sampler = Sampler(eval_sampler, seed=seed)
        self.num_episodes = eval_episodes
        self.per_game = math.ceil(eval_episodes / num_games)
        self.games = math.ceil(eval_episodes / self.per_game)
        self.finished: dict[int, list[tuple[float, int, bool]]] = {g: [] for g in range(self.games)}
        self.frames = 0
        self.states = RecurrentStates(model.state_size, self.device) if model.state_size else None

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply like ``Trainer.actor`` and record the counted episodes."""
        self.frames += len(batch)
        rows, returns, lengths, wins = episodes_in(batch)
        game_ids = np.asarray(batch.game_ids)[rows]
        for i, game in enumerate(game_ids.tolist()):
            episodes = self.finished.get(game)
            if episodes is not None and len(episodes) < self.per_game:
                episodes.append((returns[i], lengths[i], None if wins is None else bool(wins[i])))
        return act(self.model, self.sampler, batch, self.device, self.states)

    @property
    def episodes_done(self) -> int:
        """Counted episodes finished so far."""
        return sum(len(e) for e in self.finished.values())

    @property
    def done(self) -> bool:
        return self.episodes_done >= self.per_game * self.games

    def result(self) -> EvalResult:
        """The first ``eval_episodes`` counted episodes, in game order."""
        rows = [e for g in range(self.games) for e in self.finished[g]][: self.num_episodes]
        if not rows:
            raise RuntimeError("no episode finished yet")
        returns, lengths, wins = zip(*rows, strict=True)
        has_wins = all(w is not None for w in wins)
        return EvalResult(np.asarray(returns), np.asarray(lengths), np.asarray(wins) if has_wins else None)
