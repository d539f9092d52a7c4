"""Whole-game windows for centralised critics: ``[T, B]`` -> ``[T, G, S]``.

A train tag's window batch holds one column per (game, seat), in no fixed
order: the columns of one game's seats may sit anywhere in it, or in the next
batch. A centralised critic (MADDPG's ``Q(o_1..o_S, a_1..a_S)``) needs every
seat of a game at the same steps. Every seat of a game steps together, so the
k-th window a seat sends a tag covers the same steps as the k-th window of
every other seat of that game, and the engine delivers each (game, seat)'s
windows in the order it sent them. ``SeatWindows`` therefore queues windows
per (game, seat) and, once every seat of a game has one, takes the oldest of
each: a game's joint window ``[T, S, ...]``. ``add`` returns full batches of
``games`` joint windows as ``key -> [T, games, S, ...]`` (seats in the order
given), plus ``game_ids`` ``[games]``.

Windows are copied (a batch's arrays are only valid during its callback).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["SeatWindows"]


class SeatWindows:
    """Joins the windows of ``seats`` of each game into ``[T, games, len(seats), ...]`` batches."""

    def __init__(self, seats: Sequence[int], games: int) -> None:
        if not seats or games < 1:
            raise ValueError(f"SeatWindows needs at least one seat and games >= 1, got seats {list(seats)}, "
                             f"games {games}")
        self.seats = list(seats)
        self.games = games
        self._place = {seat: i for i, seat in enumerate(self.seats)}
        self._queues: dict[int, list[deque]] = {}
        self._joined: list[tuple[int, dict[str, np.ndarray]]] = []

    def add(self, batch: Mapping[str, Any]) -> list[dict[str, np.ndarray]]:
        """Queue a window batch (with ``game_ids`` and ``seats``); return the joint batches now complete."""
        game_ids = np.asarray(batch.game_ids).tolist()
        seats = np.asarray(batch.seats).tolist()
        out = []
        for column, (game, seat) in enumerate(zip(game_ids, seats, strict=True)):
            if seat not in self._place:
                raise ValueError(f"window of seat {seat} (game {game}), but SeatWindows joins seats {self.seats}")
            queues = self._queues.setdefault(game, [deque() for _ in self.seats])
            queues[self._place[seat]].append({k: np.array(v[:, column]) for k, v in batch.items()})
            if all(queues):
                windows = [queue.popleft() for queue in queues]
                self._joined.append((game, {k: np.stack([w[k] for w in windows], axis=1) for k in windows[0]}))
            if len(self._joined) == self.games:
                out.append(self._emit())
        return out

    def _emit(self) -> dict[str, np.ndarray]:
        games, windows = zip(*self._joined, strict=True)
        self._joined = []
        joint = {k: np.stack([w[k] for w in windows], axis=1) for k in windows[0]}
        joint["game_ids"] = np.asarray(games, np.int64)
        return joint
