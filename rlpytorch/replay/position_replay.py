"""``PositionReplay``: the replay window of self-play records, and
``SelfPlayRecords``, which turns a search game's batches into those records.

A record is (planes ``[C, N, N]`` of the position searched, the search's
visit distribution ``pi`` ``[A]``, the outcome ``z`` for the side that moved
there). The window keeps the last ``capacity`` records (oldest overwritten)
and samples uniformly, each sample under a random board symmetry when asked.
"""

from __future__ import annotations

import zipfile
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from elfpy.files import write_atomically

from .symmetries import NUM_SYMMETRIES, transform_planes, transform_policy

__all__ = ["PositionReplay", "RecordKeys", "SelfPlayRecords"]


class PositionReplay:
    def __init__(self, capacity: int, planes_shape: tuple[int, ...], num_actions: int) -> None:
        self.capacity = capacity
        self.planes = np.zeros((capacity, *planes_shape), np.uint8)
        self.pi = np.zeros((capacity, num_actions), np.float32)
        self.z = np.zeros(capacity, np.float32)
        self.size = 0
        self.added = 0  # records ever added

    def add(self, planes: np.ndarray, pi: np.ndarray, z: np.ndarray) -> None:
        for i in range(len(z)):
            slot = self.added % self.capacity
            self.planes[slot], self.pi[slot], self.z[slot] = planes[i], pi[i], z[i]
            self.added += 1
        self.size = min(self.added, self.capacity)

    def save(self, path: Path) -> None:
        """The window's contents to ``path`` (compressed ``.npz``; written whole or not at all)."""
        write_atomically(path, lambda f: np.savez_compressed(f, planes=self.planes, pi=self.pi, z=self.z,
                                                             added=self.added))

    def load(self, path: Path) -> None:
        """The contents ``save`` wrote, into a window of the same capacity and shapes; ValueError
        naming ``path`` if it holds anything else (no pickle is read: ``allow_pickle=False``)."""
        try:
            with np.load(path, allow_pickle=False) as saved:
                arrays = {name: saved[name] for name in ("planes", "pi", "z")}
                added = int(saved["added"])
        except (ValueError, TypeError, KeyError, EOFError, zipfile.BadZipFile) as error:
            raise ValueError(f"{path}: not a replay window written by PositionReplay.save ({error})") from error
        for name in ("planes", "pi", "z"):
            if arrays[name].shape != getattr(self, name).shape:
                raise ValueError(f"{path}: {name} has shape {arrays[name].shape}, this replay window "
                                 f"{getattr(self, name).shape} (another --replay_size or game?)")
            getattr(self, name)[:] = arrays[name]
        self.added = added
        self.size = min(self.added, self.capacity)

    def sample(self, n: int, rng: np.random.Generator, symmetries: bool) -> tuple[torch.Tensor, ...]:
        """(planes uint8 ``[n, C, N, N]``, pi ``[n, A]``, z ``[n]``)."""
        index = rng.integers(0, self.size, n)
        planes = torch.from_numpy(self.planes[index])
        pi = torch.from_numpy(self.pi[index])
        if symmetries:
            board_size = planes.shape[-1]
            ks = rng.integers(0, NUM_SYMMETRIES, n)
            for k in range(1, NUM_SYMMETRIES):
                rows = torch.from_numpy(np.flatnonzero(ks == k))
                if len(rows):
                    planes[rows] = transform_planes(planes[rows], k)
                    pi[rows] = transform_policy(pi[rows], k, board_size)
        return planes, pi, torch.from_numpy(self.z[index])


@dataclass(frozen=True)
class RecordKeys:
    """Which keys of a search game's batch carry the records (see the game's spec)."""

    state: str        # planes of the position a move was searched from
    visits: str       # its visit distribution
    move: str         # the move played (-1: none this row, -2: resigned)
    player: str       # who moved: +1 or -1, the sign that turns r into the mover's outcome
    resign_check: str = ""  # on a game's last row: 1 a would-be resigner lost, 2 it won
    reward: str = "r"
    terminal: str = "terminal"


@dataclass
class GameStats:
    games: int = 0
    moves: int = 0
    first_player_wins: int = 0  # games with r > 0
    resigned: int = 0
    checked: int = 0            # played-out games in which a side would have resigned
    false_resigns: int = 0      # ... and that side won

    @property
    def false_resign_rate(self) -> float:
        return self.false_resigns / self.checked if self.checked else 0.0


class SelfPlayRecords:
    """Collects each game's records until its end, then gives them their
    outcome ``z = r * player`` (``r`` the final reward of the side ``player =
    +1``) and adds them to the window, except those whose visits are all zero
    (moves of a fast search, which give no policy target).
    ``on_game_end(game_id, moves, players, r)`` sees every finished game (e.g.
    to write it as SGF)."""

    def __init__(self, keys: RecordKeys, replay: PositionReplay,
                 on_game_end: Callable[[int, list[int], list[float], float], None] | None = None) -> None:
        self.keys = keys
        self.replay = replay
        self.on_game_end = on_game_end
        self.pending: dict[int, list[tuple[np.ndarray, np.ndarray, float, int]]] = defaultdict(list)
        self.stats = GameStats()

    def add_batch(self, batch: Mapping[str, np.ndarray], game_ids: np.ndarray) -> None:
        k = self.keys
        moves = np.asarray(batch[k.move])
        for row in np.flatnonzero(moves != -1):
            game = int(game_ids[row])
            self.pending[game].append((batch[k.state][row].copy(), batch[k.visits][row].copy(),
                                       float(batch[k.player][row]), int(moves[row])))
            if batch[k.terminal][row]:
                self._finish(game, float(batch[k.reward][row]),
                             int(batch[k.resign_check][row]) if k.resign_check else 0)

    def _finish(self, game: int, reward: float, resign_check: int) -> None:
        records = self.pending.pop(game, [])
        if not records:
            return
        planes = np.stack([r[0] for r in records])
        pi = np.stack([r[1] for r in records])
        players = [r[2] for r in records]
        z = np.array([reward * p for p in players], np.float32)
        searched = pi.sum(axis=1) > 0
        self.replay.add(planes[searched], pi[searched], z[searched])
        moves = [r[3] for r in records]
        s = self.stats
        s.games += 1
        s.moves += len(records)
        s.first_player_wins += reward > 0
        s.resigned += moves[-1] == -2
        s.checked += resign_check > 0
        s.false_resigns += resign_check == 2
        if self.on_game_end is not None:
            self.on_game_end(game, moves, players, reward)
