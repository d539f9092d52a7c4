"""The engine's reply checks as a property (``hypothesis``): for random
Discrete, MultiDiscrete and Box action specs and random replies, a reply is
accepted exactly when every integer lies in its own component's range (and
every Box value is finite: a finite value outside [low, high] passes, the
game clips it); a refused reply is a ValueError and no game steps.

The games are remote games whose "worker" is the test itself: the board
needs shared memory, not processes. The engine asks each game for its first
reset, the test answers, and a game that steps is one whose worker is sent a
second request.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfpy import _elf

NUM_GAMES = 2

pytestmark = pytest.mark.timeout(120, method="thread")  # a hang may be inside C++, out of reach of signals


def _observation() -> dict:
    return {"name": "s", "dtype": "float32", "shape": [1], "meaning": "", "role": "observation", "bounds": None}


def _action(dtype: str, shape: list[int], space: tuple, bounds: tuple | None = None) -> dict:
    return {"name": "a", "dtype": dtype, "shape": shape, "meaning": "", "role": "action", "bounds": bounds,
            "space": space}


@st.composite
def discrete(draw):
    """(key, replies, accepted) for a Discrete space starting anywhere."""
    n, start = draw(st.integers(1, 6)), draw(st.integers(-3, 3))
    dtype = draw(st.sampled_from(["int64", "int32"]))
    replies = np.array(draw(st.lists(st.integers(start - 2, start + n + 1), min_size=NUM_GAMES, max_size=NUM_GAMES)))
    key = _action(dtype, [], ("discrete", [n], [], []), (float(start), float(start + n - 1)))
    return key, replies, bool(np.all((replies >= start) & (replies < start + n)))


@st.composite
def multi_discrete(draw):
    """(key, replies, accepted) for a MultiDiscrete space of 1 to 4 components."""
    nvec = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    dtype = draw(st.sampled_from(["int64", "int32"]))
    rows = st.tuples(*(st.integers(-2, n + 1) for n in nvec))
    replies = np.array(draw(st.lists(rows, min_size=NUM_GAMES, max_size=NUM_GAMES)))
    key = _action(dtype, [len(nvec)], ("multi_discrete", nvec, [], []))
    return key, replies, bool(np.all((replies >= 0) & (replies < np.array(nvec))))


@st.composite
def box(draw):
    """(key, replies, accepted) for a Box with per-element bounds, values in and out of them, NaN and infinities."""
    size = draw(st.integers(1, 3))
    bound = st.floats(-10, 10, width=32)
    pairs = [sorted(draw(st.tuples(bound, bound))) for _ in range(size)]
    dtype = draw(st.sampled_from(["float32", "float64"]))
    value = st.one_of(st.floats(-20, 20, width=32), st.sampled_from([math.nan, math.inf, -math.inf]))
    rows = st.lists(value, min_size=size, max_size=size)
    replies = np.array(draw(st.lists(rows, min_size=NUM_GAMES, max_size=NUM_GAMES)), dtype)
    key = _action(dtype, [size], ("box", [], [low for low, _ in pairs], [high for _, high in pairs]))
    return key, replies, bool(np.all(np.isfinite(replies)))


class RemoteGames:
    """NUM_GAMES remote games over an in-process board, their first resets
    answered, and an actor tag replying `a`."""

    def __init__(self, action: dict) -> None:
        self.board = _elf.RemoteBoard([_observation(), action], NUM_GAMES, 1)
        self.memory = bytearray(self.board.bytes())
        self.board.attach(self.memory)
        self.board.ready(0)
        self.ctx = _elf.Context("replies", self.board, 1, 0, True)
        self.ctx.add_tag("actor", NUM_GAMES, ["s"], ["a"], 1, -1, 1, [])
        self.ctx.start()
        for game in self.board.await_work(0, 100):  # every game's first reset was requested by now
            self.board.finish(game, 0.0, False, False)

    def reply(self, replies: np.ndarray) -> bool:
        """Replies the first batch; whether the engine accepted it."""
        ref = None
        while ref is None:
            ref = self.ctx.wait(100)
        tag, _, buffer, size = ref
        self.ctx.reply_array(tag, buffer, 0)[:size] = replies
        try:
            self.ctx.submit_replies(*ref)
        except ValueError:
            return False
        return True

    def requests(self) -> list[int]:
        return [self.board.requests(game) for game in range(NUM_GAMES)]

    def close(self) -> None:
        self.board.close()
        self.ctx.stop()


@settings(max_examples=150, deadline=None)
@given(st.one_of(discrete(), multi_discrete(), box()))
def test_a_reply_is_accepted_iff_every_component_is_inside_its_own_space(case):
    key, replies, expected = case
    games = RemoteGames(key)
    try:
        accepted = games.reply(replies)
        assert accepted == expected, (key["space"], replies.tolist())
        if accepted:
            while games.requests() != [2] * NUM_GAMES:  # every game's step reaches its worker
                time.sleep(0.001)
        else:
            assert games.requests() == [1] * NUM_GAMES  # the first resets only: no game stepped
    finally:
        games.close()


def test_a_malformed_space_is_one_clear_error():
    counts = _action("int64", [2], ("multi_discrete", [3, 2, 4], [], []))
    board = _elf.RemoteBoard([_observation(), counts], NUM_GAMES, 1)
    board.attach(bytearray(board.bytes()))
    with pytest.raises(ValueError, match=r"action 'a' needs one count per element \(2\), got 3"):
        _elf.Context("replies", board, 1, 0, True)
    board.close()
