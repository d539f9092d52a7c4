"""One position at a time, for players such as GTP: the position reached by a
list of moves (read from the engine's ``go`` game, so the rules are the C++
ones) and a tree search from it (the ``go_mcts`` game with one search, its
leaves evaluated by a Python callable). Each call runs a one-game context for
the few steps it needs (about a millisecond to set up).

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
    gc = elfpy.GameContext("go_mcts", num_games=1, num_threads=1, seed=seed, playouts=playouts, leaves=leaves,
                           dirichlet_alpha=0, temperature_moves=sampled_moves, resign_threshold=resign_threshold,
                           resign_check=0, pass_only_when_done=pass_only_when_done,
                           **_options(board_size, komi, moves, to_move))
    gc.add_tag("eval", batch_size=leaves, inputs=["s", "legal", "move", "visits", "root_value"],
               replies=["policy", "value"])
    with gc:
        for batch in gc:
            first = int(np.flatnonzero(batch.seats == 0)[0])
            if batch["move"][first] != -1:
                result = SearchResult(int(batch["move"][first]), batch["visits"][first].copy(),
                                      float(batch["root_value"][first]))
                batch.reply(_evaluate(evaluator, batch))
                return result
            batch.reply(_evaluate(evaluator, batch))
    raise RuntimeError("the search ended without a move")


def _evaluate(evaluator: Evaluator, batch) -> dict[str, np.ndarray]:
    policy, value = evaluator(batch["s"], batch["legal"])
    return {"policy": np.asarray(policy, np.float32), "value": np.asarray(value, np.float32).reshape(len(batch))}


def uniform_evaluator(s: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """No knowledge: equal priors over the legal moves, value 0."""
    policy = legal.astype(np.float32)
    return policy / policy.sum(axis=1, keepdims=True), np.zeros(len(s), np.float32)
