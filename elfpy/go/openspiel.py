"""Replays random games move by move in the engine's ``go`` and in OpenSpiel's
``go`` and compares them: the legal moves before every move, the stones
after every move (so every capture), the end of the game and its score.

Conventions reconciled here:
  * Actions: ours are ``row * N + column`` with row 0 at the top (GTP row N);
    OpenSpiel's row 0 is at the bottom (GTP row 1). The pass is ``N * N`` in both.
  * Ko: OpenSpiel's legal moves forbid only the simple ko (retaking at once);
    a move that recreates an older position stays legal there and ends the
    game (its ``superko`` flag). Ours forbid any move that recreates an
    earlier position (positional superko). So OpenSpiel may offer a move we
    do not: each such move is checked to recreate a position seen earlier in
    the game and counted as ``superko_only``; the random player picks from our
    legal moves, so OpenSpiel's superko ending never happens.
  * Score: OpenSpiel reports only the winner. Our Tromp-Taylor difference S
    (black area - white area) is checked exactly by replaying the game in
    OpenSpiel with komi S - 0.5 (black must win) and S + 0.5 (white must win).
  * Length: both end a game after two passes in a row or 2 * N * N moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import elfpy
from elfpy.go.play import BOARD_SIZE, KOMI


@dataclass
class RulesReport:
    """Counts from a replay; every ``*_mismatches`` count must be 0."""

    games: int = 0
    moves: int = 0
    captures: int = 0  # moves that removed stones
    superko_only: int = 0  # moves legal in OpenSpiel, recreating an earlier position (illegal here)
    legal_mismatches: int = 0
    board_mismatches: int = 0
    end_mismatches: int = 0
    score_mismatches: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def mismatches(self) -> int:
        return self.legal_mismatches + self.board_mismatches + self.end_mismatches + self.score_mismatches

    def note(self, text: str) -> None:
        if len(self.examples) < 5:
            self.examples.append(text)


def to_openspiel(action: int, size: int) -> int:
    """Our action index as OpenSpiel's (rows counted from the bottom)."""
    if action == size * size:
        return action
    row, column = divmod(action, size)
    return (size - 1 - row) * size + column


def _openspiel_stones(state, size: int) -> np.ndarray:
    """OpenSpiel's stones in our layout: 0 empty, 1 black, 2 white, row 0 at the top."""
    planes = np.asarray(state.observation_tensor(0), dtype=np.float32).reshape(4, size, size)
    stones = (planes[0] > 0) * 1 + (planes[1] > 0) * 2
    return stones[::-1].astype(np.uint8)


class _Replay:
    """One game's OpenSpiel state, its moves and the positions it has seen."""

    def __init__(self, pyspiel, game) -> None:
        self.pyspiel = pyspiel
        self.state = game.new_initial_state()
        self.moves: list[int] = []
        self.seen = {np.zeros(game.num_distinct_actions() - 1, np.uint8).tobytes()}
        self.stones_before = 0


def compare_random_games(num_games: int, board_size: int = BOARD_SIZE, komi: float = KOMI, seed: int = 0,
                         parallel: int = 32) -> RulesReport:
    """Plays `num_games` uniformly random games (over our legal moves), `parallel`
    at a time in the engine, mirroring each in OpenSpiel."""
    import pyspiel

    size = board_size
    params = {"board_size": size, "komi": komi}
    game = pyspiel.load_game("go", params)
    rng = np.random.default_rng(seed)
    report = RulesReport()
    parallel = min(parallel, num_games)
    gc = elfpy.GameContext("go", num_games=parallel, num_threads=1, seed=seed, deterministic=True,
                           board_size=size, komi=komi)
    gc.add_tag("actor", batch_size=parallel, inputs=["legal", "stones", "terminal", "final_stones", "final_score"],
               replies=["a"])
    gc.start()
    replays = [_Replay(pyspiel, game) for _ in range(parallel)]
    started = parallel
    try:
        for batch in gc:
            actions = np.zeros(len(batch), np.int64)
            for row, g in enumerate(batch.game_ids):
                replay = replays[g]
                if batch["terminal"][row] and replay is not None:
                    _check_end(replay, report, size, komi, batch["final_stones"][row],
                               float(batch["final_score"][row]) + komi)
                    report.games += 1
                    if started >= num_games:
                        replays[g] = None
                    else:
                        replays[g] = _Replay(pyspiel, game)
                        started += 1
                    replay = replays[g]
                if replay is None:
                    actions[row] = size * size  # finished: the game goes on passing, unobserved
                    continue
                legal, stones = batch["legal"][row], batch["stones"][row]
                _check_position(replay, report, size, legal, stones)
                choices = np.flatnonzero(legal)
                actions[row] = int(rng.choice(choices))
                replay.moves.append(int(actions[row]))
                replay.state.apply_action(to_openspiel(int(actions[row]), size))
                report.moves += 1
            batch.reply({"a": actions})
            if all(r is None for r in replays):
                break
    finally:
        gc.stop()
    return report


def _check_position(replay: _Replay, report: RulesReport, size: int, legal: np.ndarray,
                    stones: np.ndarray) -> None:
    """Compares the position before a move: stones and legal moves."""
    state = replay.state
    where = f"game {report.games}, move {len(replay.moves)}"
    if not np.array_equal(_openspiel_stones(state, size), stones):
        report.board_mismatches += 1
        report.note(f"{where}: stones differ")
    key = stones.tobytes()
    placed = int(np.count_nonzero(stones))
    if replay.moves and replay.moves[-1] != size * size and placed <= replay.stones_before:
        report.captures += 1
    replay.stones_before = placed
    replay.seen.add(key)
    if state.is_terminal():
        return
    theirs = np.zeros(size * size + 1, np.uint8)
    for action in state.legal_actions():
        theirs[to_openspiel(action, size)] = 1  # the mapping is its own inverse
    for action in np.flatnonzero(legal != theirs):
        if legal[action]:
            report.legal_mismatches += 1
            report.note(f"{where}: {action} legal here, not in OpenSpiel")
            continue
        child = state.clone()
        child.apply_action(to_openspiel(int(action), size))
        if _openspiel_stones(child, size).tobytes() in replay.seen:
            report.superko_only += 1
        else:
            report.legal_mismatches += 1
            report.note(f"{where}: {action} legal in OpenSpiel only, repeats no position")


def _check_end(replay: _Replay, report: RulesReport, size: int, komi: float, final_stones: np.ndarray,
               area: float) -> None:
    """The engine ended the game (final position `final_stones`, black - white
    area `area`); OpenSpiel must end it too, with the same stones and score."""
    state = replay.state
    where = f"game {report.games}"
    if not state.is_terminal():
        report.end_mismatches += 1
        report.note(f"{where}: over here after {len(replay.moves)} moves, not in OpenSpiel")
        return
    if not np.array_equal(_openspiel_stones(state, size), final_stones):
        report.board_mismatches += 1
        report.note(f"{where}: final stones differ")
    for offset, black_wins in ((-0.5, True), (0.5, False)):
        game = replay.pyspiel.load_game("go", {"board_size": size, "komi": area + offset})
        check = game.new_initial_state()
        for action in replay.moves:
            check.apply_action(to_openspiel(action, size))
        if (check.returns()[0] > 0) != black_wins:
            report.score_mismatches += 1
            report.note(f"{where}: area difference {area} disagrees with OpenSpiel at komi {area + offset}")
            return
    ours = 1.0 if area - komi > 0 else -1.0 if area - komi < 0 else 0.0
    if state.returns()[0] != ours:
        report.score_mismatches += 1
        report.note(f"{where}: winner differs")
