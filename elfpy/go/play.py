"""One position at a time, for players such as GTP: the position reached by a
list of moves (read from the engine's ``go`` game, so the rules are the C++
ones) and a tree search from it (the ``go_mcts`` game with one search, its
leaves evaluated by a Python callable). ``observe`` and ``search`` each run a
one-game context for the few steps they need (about a millisecond to set
up); ``TreeSearch`` keeps one for a whole game, so that each move's search
starts from the subtree the earlier ones grew (the other side's moves come
in through the game's ``external_moves``).

An evaluator is ``fn(s, legal) -> (policy, value)``: ``s`` the leaves'
feature planes ``[B, 23, N, N]`` (uint8; the game's ``s``), ``legal`` their legal moves
``[B, N * N + 1]``; ``policy`` ``[B, N * N + 1]`` probabilities and ``value``
``[B]`` in [-1, 1] for each leaf's side to move.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

import elfpy
from elfpy.game_defaults import option_default

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
Move = tuple[str, str]  # ("b" or "w", GTP vertex such as "D4" or "pass")

_COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips I
RESIGN = -2  # the `move` a search reports when its side resigns

# The Go games' defaults (cpp/games/go), for the tools around them (GTP, GNU Go,
# OpenSpiel, SGF): read from the games, never restated.
BOARD_SIZE = int(option_default("go", "board_size"))
KOMI = float(option_default("go", "komi"))
PLAYOUTS = int(option_default("go_mcts", "playouts"))
LEAVES = int(option_default("go_mcts", "leaves"))
RESIGN_THRESHOLD = float(option_default("go_mcts", "resign_threshold"))  # -1: never (go_mcts.cc says why)
PASS_ONLY_WHEN_DONE = option_default("go_mcts", "pass_only_when_done") == "true"
REUSE_TREE = option_default("go_mcts", "reuse_tree") == "true"


class Position(NamedTuple):
    stones: np.ndarray  # [N, N]: 0 empty, 1 black, 2 white; row 0 is the top
    legal: np.ndarray   # [N * N + 1]: 1 where legal, the pass last
    score: float        # Tromp-Taylor: black area - white area - komi
    to_move: str        # "b" or "w"


class SearchResult(NamedTuple):
    action: int          # row * N + column, N * N for a pass, RESIGN
    visits: np.ndarray   # the root's visit distribution
    value: float         # the root's value for the side to move


def vertex(action: int, size: int) -> str:
    """GTP vertex of an action ("D4", "pass")."""
    if action == size * size:
        return "pass"
    row, column = divmod(action, size)
    return f"{_COLUMNS[column]}{size - row}"


def parse_vertex(where: str, size: int) -> int:
    """The action of a GTP vertex ("D4", "d4", "pass"); ValueError naming it if it
    is not one on a ``size`` board (GTP's columns skip I; rows run 1..size)."""
    word = where.upper()
    if word == "PASS":
        return size * size
    column = _COLUMNS.find(word[:1]) if word[:1] else -1
    if 0 <= column < size and word[1:].isascii() and word[1:].isdigit() and 1 <= int(word[1:]) <= size:
        return (size - int(word[1:])) * size + column
    raise ValueError(f"{where!r} is not a vertex of the {size}x{size} board")


def moves_text(moves: Sequence[Move]) -> str:
    """The `moves` option of the Go games: "B D4, W pass"."""
    return ", ".join(f"{color.upper()} {where}" for color, where in moves)


def _options(board_size: int, komi: float, moves: Sequence[Move], to_move: str | None) -> dict:
    options = {"board_size": board_size, "komi": komi, "moves": moves_text(moves),
               "max_moves": max(2 * board_size * board_size, len(moves) + board_size * board_size)}
    if to_move:
        options["to_move"] = to_move
    return options


def observe(board_size: int, komi: float, moves: Sequence[Move], to_move: str | None = None) -> Position:
    """The position after `moves`; ValueError naming the move if one is illegal."""
    gc = elfpy.GameContext("go", num_games=1, num_threads=1, **_options(board_size, komi, moves, to_move))
    gc.add_tag("position", batch_size=1, inputs=["stones", "legal", "score", "to_move"], replies=["a"])
    with gc:
        batch = next(iter(gc))
        position = Position(batch["stones"][0].copy(), batch["legal"][0].copy(), float(batch["score"][0]),
                            "b" if int(batch["to_move"][0]) == 1 else "w")
        batch.reply({"a": np.array([board_size * board_size])})
    return position


def search(evaluator: Evaluator, board_size: int, komi: float, moves: Sequence[Move], to_move: str | None,
           playouts: int, leaves: int = LEAVES, resign_threshold: float = RESIGN_THRESHOLD,
           pass_only_when_done: bool = PASS_ONLY_WHEN_DONE, sampled_moves: int = 0, seed: int = 0) -> SearchResult:
    """The move a search of `playouts` simulations picks after `moves` (the most
    visited; no root noise), or RESIGN when its root value is below
    `resign_threshold`. With `pass_only_when_done` the search passes only when
    every other legal move fills its own single-point eye (the rule of
    self-play in `go9.yaml`, under which a network never learns when to pass).
    While fewer than `sampled_moves` moves have been played, the move is drawn
    in proportion to the visits instead (by `seed`), so that a match's games
    open differently rather than repeat."""
    with TreeSearch(evaluator, board_size, komi, moves, to_move, playouts, leaves, resign_threshold,
                    pass_only_when_done, sampled_moves, seed) as tree:
        return tree.genmove()


class TreeSearch:
    """One game's search kept from move to move (`search` is one move of it):
    `genmove` searches and plays the move, `play` plays the other side's
    move, and each keeps the subtree of the move played, so that the next
    search starts from the visits the last one gave that line. The search
    waits, using no processor, between a `genmove` and the next `play`.
    `moves` counts the game's moves; `to_move` is the side it searches for
    next. Once the game is over (two passes or a resignation) `usable` is
    False; so is it while fewer than N * N moves are left before the game's
    move limit, which a fresh search would put further off."""

    def __init__(self, evaluator: Evaluator, board_size: int, komi: float, moves: Sequence[Move],
                 to_move: str | None, playouts: int, leaves: int = LEAVES,
                 resign_threshold: float = RESIGN_THRESHOLD, pass_only_when_done: bool = PASS_ONLY_WHEN_DONE,
                 sampled_moves: int = 0, seed: int = 0, reuse_tree: bool = REUSE_TREE) -> None:
        self.evaluator = evaluator
        self.board_size = board_size
        self.playouts = playouts
        options = _options(board_size, komi, moves, to_move)
        self.max_moves = options["max_moves"]
        self.moves = len(moves)
        self.to_move = to_move or ("w" if moves and moves[-1][0] == "b" else "b")
        self.over = False
        self._last_was_pass = bool(moves) and moves[-1][1].lower() == "pass"
        self._gc = elfpy.GameContext("go_mcts", num_games=1, num_threads=1, seed=seed, playouts=playouts,
                                     leaves=leaves, dirichlet_alpha=0, temperature_moves=sampled_moves,
                                     resign_threshold=resign_threshold, resign_check=0,
                                     pass_only_when_done=pass_only_when_done, reuse_tree=reuse_tree,
                                     external_moves=True, **options)
        self._gc.add_tag("eval", batch_size=leaves, inputs=["s", "legal", "move", "visits", "root_value", "terminal"],
                         replies=["policy", "value", "play", "move_now"])
        self._gc.start()
        self._batches = iter(self._gc)
        self._held = None  # the batch that reported this search's move, answered by the next play or genmove
        self._next = None  # the batch after a play, fetched at once so that a refused move fails the play

    @property
    def usable(self) -> bool:
        return not self.over and self.moves + self.board_size ** 2 <= self.max_moves

    @property
    def can_play(self) -> bool:
        """Whether `play` may follow: a genmove came last, and the game goes on."""
        return self._held is not None and self.usable

    def genmove(self, stop: Callable[[], bool] | None = None) -> SearchResult:
        """The searched move for `to_move`, played (see `search`). `stop`, if
        given, is asked after each step's evaluations; once it answers True the
        move is played from the visits so far rather than at `playouts` (a
        player on a clock: `stop` says its time for the move is spent)."""
        if not self.usable:
            raise RuntimeError("the game of this search is over")
        if self._held is not None:  # a genmove for the other side: the search goes on from its root
            self._answer(self._held, play=0)
            self._held = None
        batch = self._next if self._next is not None else next(self._batches)
        self._next = None
        while True:
            first = int(np.flatnonzero(batch.seats == 0)[0])
            move = int(batch["move"][first])
            if move == -1:
                self._answer(batch, play=0, stop=stop)
                batch = next(self._batches)
                continue
            self._held = batch
            self.moves += 1
            self.to_move = "w" if self.to_move == "b" else "b"
            self.over = move == RESIGN or bool(batch["terminal"][first])
            self._last_was_pass = move == self.board_size ** 2
            return SearchResult(move, batch["visits"][first].copy(), float(batch["root_value"][first]))

    def play(self, action: int) -> None:
        """The other side's move (a legal one: the game fails on any other)."""
        if not self.can_play:
            raise RuntimeError("play follows a genmove of a game not over")
        self._answer(self._held, play=action + 1)
        self._held = None
        self._next = next(self._batches)
        self.moves += 1
        self.to_move = "w" if self.to_move == "b" else "b"
        self.over = action == self.board_size ** 2 and self._last_was_pass
        self._last_was_pass = action == self.board_size ** 2

    def _answer(self, batch, play: int, stop: Callable[[], bool] | None = None) -> None:
        replies = _evaluate(self.evaluator, batch)
        replies["play"] = np.zeros(len(batch), np.int64)
        replies["play"][batch.seats == 0] = play
        replies["move_now"] = np.zeros(len(batch), np.int64)
        replies["move_now"][batch.seats == 0] = stop is not None and stop()
        batch.reply(replies)

    def close(self) -> None:
        self._gc.stop()

    def __enter__(self) -> TreeSearch:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _evaluate(evaluator: Evaluator, batch) -> dict[str, np.ndarray]:
    policy, value = evaluator(batch["s"], batch["legal"])
    return {"policy": np.asarray(policy, np.float32), "value": np.asarray(value, np.float32).reshape(len(batch))}


def evaluation_error(evaluator: Evaluator, board_size: int, batch_size: int) -> str | None:
    """Why `evaluator` cannot evaluate `batch_size` positions of a
    `board_size` board (a network exported for one board size fails on any
    other), or None when it answers them with a policy and a value of their
    shapes."""
    planes = elfpy.GameContext("go", num_games=1, num_threads=1, board_size=board_size).spec()["s"].shape
    s = np.zeros((batch_size, *planes), np.uint8)
    legal = np.ones((batch_size, board_size * board_size + 1), np.uint8)
    try:
        policy, value = evaluator(s, legal)
    except Exception as error:  # whatever a network raises on a shape it was not made for
        return f"{type(error).__name__}: {error}"
    if np.shape(policy) != legal.shape or np.size(value) != batch_size:
        return f"policy {list(np.shape(policy))} and value {list(np.shape(value))} for {batch_size} positions"
    return None


def uniform_evaluator(s: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """No knowledge: equal priors over the legal moves, value 0."""
    policy = legal.astype(np.float32)
    return policy / policy.sum(axis=1, keepdims=True), np.zeros(len(s), np.float32)
