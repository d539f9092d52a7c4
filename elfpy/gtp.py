"""A GTP (Go Text Protocol, version 2) engine on the C++ rules and search.

    python -m elfpy.gtp --load MODEL.pt2 --playouts 200 [--board_size 9]

speaks GTP on stdin/stdout. MODEL is a network exported with torch.export
taking ``(s, legal)`` and returning ``(policy, value)`` (``python -m
rlpytorch.train --method alphazero`` writes one beside each checkpoint);
without ``--load`` the search uses equal priors and value 0. Commands: protocol_version, name, version,
known_command, list_commands, boardsize, clear_board, komi, play, genmove,
undo, final_score, final_status_list, time_settings, kgs-time_settings,
time_left, showboard, quit.

Every number is range-checked. A command-line option out of range (a komi
not finite or beyond 10000, a board size other than 9, 13 or 19 or one the
network cannot evaluate, playouts or leaves below 1, ...) is refused in one
line before the engine speaks. Errors (illegal moves, unknown commands, bad
arguments: a vertex off the board or malformed, a komi that is not a finite
decimal number, a time that is not a GTP int, 0 to 2^31 - 1) are answered
``? message``; ``boardsize`` of a size the network cannot play answers ``?
unacceptable size``; a command that fails for any other reason is answered
so too: no command ends the engine but ``quit`` or the end of its input.

The search of a genmove is kept, and the next genmove starts from its
subtree of the moves played since (``--no-reuse_tree``: a fresh search each
time). Without a clock each search makes ``--playouts`` simulations. With
one (``time_settings``: GTP's absolute time or Canadian byo-yomi;
``kgs-time_settings``: also none and Japanese byo-yomi) each search runs
until its share of the time left is spent (``elfpy.go.clock.move_budget``:
the main time left over the moves still to come, plus what byo-yomi gives
each move for certain, less ``--lag_buffer`` seconds), at most
``--max_playouts``; ``time_left`` tells the engine its time, and between two
``time_left`` it takes each genmove's time off its own clock. ``clear_board``
restarts the clocks.

After the game's end (two passes in a row) ``genmove`` answers ``pass`` and
changes nothing (GTP's genmove never fails); ``play`` resumes the game, as
GNU Go plays on. Scoring is Tromp-Taylor: ``final_score`` counts every stone
on the board, so ``final_status_list`` lists them all ``alive`` (one string a
line), none ``dead`` and none in ``seki``.

The network file is read by ``elfpy.network_file.load_network``, which
refuses any file that could run code.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections.abc import Callable
from typing import TextIO

import numpy as np

from elfpy.go import clock, play

NAME = "elf-go"
VERSION = "0.1"
MAX_KOMI = 10_000.0  # beyond any board's area (19x19: 361), and scores stay exact in the engine's float32
BOARD_SIZES = (9, 13, 19)  # the Go games' (cpp/games/go/options.h); a network may play fewer
GTP_INT_MAX = 2**31 - 1  # GTP 2's int: 0 <= x <= 2^31 - 1 (and the C++ options' int)
MAX_LEAVES = 4096  # one batch row per leaf: past a few thousand the buffers, not the search, fill the memory
# With a clock the time decides where each search stops; this bounds its tree's memory (9x9: about 170 MB).
CLOCK_PLAYOUTS = 100_000
STATUSES = ("alive", "dead", "seki")  # final_status_list's, GTP 2 section 6.3.6


class GtpError(Exception):
    """A command failed; the message goes after '? '."""


class GtpEngine:
    """The game state (moves from the empty board) and the command handlers."""

    def __init__(self, evaluator: play.Evaluator = play.uniform_evaluator, playouts: int = play.PLAYOUTS,
                 board_size: int = play.BOARD_SIZE, komi: float = play.KOMI, leaves: int = play.LEAVES,
                 resign_threshold: float = play.RESIGN_THRESHOLD,
                 pass_only_when_done: bool = play.PASS_ONLY_WHEN_DONE, sampled_moves: int = 0, seed: int = 0,
                 reuse_tree: bool = play.REUSE_TREE, max_playouts: int = CLOCK_PLAYOUTS,
                 lag_buffer: float = clock.LAG_BUFFER, now: Callable[[], float] = time.monotonic) -> None:
        """ValueError naming the setting if one is out of range, or if
        `evaluator` cannot evaluate a `board_size` board."""
        _check_range("playouts", playouts, 1, GTP_INT_MAX)
        _check_range("max_playouts", max_playouts, 1, GTP_INT_MAX)
        _check_range("leaves", leaves, 1, MAX_LEAVES)
        _check_range("sampled_moves", sampled_moves, 0, GTP_INT_MAX)
        _check_range("seed", seed, 0, 2**63 - 1)  # the engine's seeds are 64-bit; each game's adds its move count
        _check_range("komi", komi, -MAX_KOMI, MAX_KOMI)
        _check_range("resign_threshold", resign_threshold, -1.0, 1.0)
        _check_range("lag_buffer", lag_buffer, 0.0, float(GTP_INT_MAX))
        self.evaluator = evaluator
        self.reuse_tree = reuse_tree
        self._tree: play.TreeSearch | None = None  # the last genmove's search, kept while the game follows it
        self.sampled_moves = sampled_moves  # play.search: the game's first moves drawn by visits
        self.seed = seed
        self.pass_only_when_done = pass_only_when_done
        self.playouts = playouts
        self.leaves = leaves
        self.resign_threshold = resign_threshold
        self.max_playouts = max_playouts
        self.lag_buffer = lag_buffer
        self.now = now  # the clock a search's time is measured by (seconds)
        self.time_control: clock.TimeControl | None = None  # None: no clock, each search makes `playouts`
        self.clocks = {"b": clock.ClockState(0.0), "w": clock.ClockState(0.0)}  # each side's time left
        self.last_search: play.SearchResult | None = None  # the last genmove's search (its root's visits)
        self._evaluation_errors: dict[int, str | None] = {}  # board size -> why the evaluator cannot play it
        if not isinstance(board_size, int) or board_size not in BOARD_SIZES:
            raise ValueError(f"board_size must be one of {', '.join(map(str, BOARD_SIZES))}, got {board_size}")
        if (error := self._evaluation_error(board_size)) is not None:
            raise ValueError(f"board_size {board_size}: the network cannot evaluate a {board_size}x{board_size} "
                             f"board ({error})")
        self.board_size = board_size
        self.komi = komi
        self.moves: list[play.Move] = []
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda args: "2",
            "name": lambda args: NAME,
            "version": lambda args: VERSION,
            "known_command": lambda args: "true" if args and args[0] in self.commands else "false",
            "list_commands": lambda args: "\n".join(self.commands),
            "boardsize": self.boardsize,
            "clear_board": self.clear_board,
            "komi": self.set_komi,
            "play": self.play,
            "genmove": self.genmove,
            "undo": self.undo,
            "final_score": self.final_score,
            "final_status_list": self.final_status_list,
            "time_settings": self.time_settings,
            "kgs-time_settings": self.kgs_time_settings,
            "time_left": self.time_left,
            "showboard": self.showboard,
            "quit": lambda args: "",
        }

    def handle(self, line: str) -> tuple[str, bool]:
        """One command line -> (the response with its blank line, whether to quit);
        ('', False) for an empty or comment line."""
        words = line.split("#", 1)[0].split()
        if not words:
            return "", False
        ident = words.pop(0) if words[0].isascii() and words[0].isdigit() else ""
        if not words:
            return f"?{ident} no command\n\n", False
        name, args = words[0].lower(), words[1:]
        handler = self.commands.get(name)
        if handler is None:
            return f"?{ident} unknown command\n\n", False
        try:
            result = handler(args)
        except GtpError as error:
            return f"?{ident} {error}\n\n", False
        except Exception as error:  # a failure the engine did not foresee still gets its answer, on one line
            return f"?{ident} {name} failed: {' '.join(f'{type(error).__name__}: {error}'.split())}\n\n", False
        return f"={ident} {result}\n\n", name == "quit"

    # --- commands ------------------------------------------------------------

    def boardsize(self, args: list[str]) -> str:
        size = _gtp_int(_one(args))
        if size not in BOARD_SIZES or self._evaluation_error(size) is not None:
            raise GtpError("unacceptable size")
        self.board_size = size
        return self.clear_board([])

    def clear_board(self, args: list[str]) -> str:
        self.moves = []
        self._restart_clocks()
        self.close()
        return ""

    def _evaluation_error(self, size: int) -> str | None:
        if size not in self._evaluation_errors:
            self._evaluation_errors[size] = play.evaluation_error(self.evaluator, size, self.leaves)
        return self._evaluation_errors[size]

    def set_komi(self, args: list[str]) -> str:
        komi = _decimal(_one(args))
        if abs(komi) > MAX_KOMI:
            raise GtpError("komi out of range")
        self.komi = komi
        self.close()
        return ""

    def play(self, args: list[str]) -> str:
        if len(args) != 2:
            raise GtpError("syntax error")
        color, where = _color(args[0]), args[1]
        if where.lower() == "resign":
            return ""
        try:
            where = play.vertex(play.parse_vertex(where, self.board_size), self.board_size)
        except ValueError as error:
            raise GtpError("invalid vertex") from error
        moves = [*self.moves, (color, where)]
        try:
            play.observe(self.board_size, self.komi, _rules_moves(moves))
        except ValueError as error:
            raise GtpError("illegal move") from error
        self._follow(color, play.parse_vertex(where, self.board_size))
        self.moves = moves
        return ""

    def genmove(self, args: list[str]) -> str:
        if len(args) != 1:
            raise GtpError("syntax error")
        color = _color(args[0])
        if len(self.moves) >= 2 and all(where == "pass" for _, where in self.moves[-2:]):
            return "pass"  # the game is over: nothing to search, nothing to play
        budget = self.move_budget(color)
        started = self.now()
        try:
            tree = self._search(color, self.playouts if budget is None else self.max_playouts)
            result = tree.genmove(None if budget is None else lambda: self.now() - started >= budget)
            self.last_search = result
        except BaseException:
            self.close()  # a search that failed midway cannot go on
            raise
        if self.time_control is not None:  # until the next time_left, the engine keeps its own clock
            self.clocks[color] = clock.spend(self.time_control, self.clocks[color], self.now() - started)
        if not self._tree.usable:
            self.close()
        if result.action == play.RESIGN:
            return "resign"
        where = play.vertex(result.action, self.board_size)
        self.moves.append((color, where))
        return where

    def undo(self, args: list[str]) -> str:
        if not self.moves:
            raise GtpError("cannot undo")
        self.moves.pop()
        self.close()
        return ""

    def close(self) -> None:
        """Ends the kept search and its thread (the next genmove starts a fresh one)."""
        if self._tree is not None:
            self._tree.close()
            self._tree = None

    def __enter__(self) -> GtpEngine:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def move_budget(self, color: str) -> float | None:
        """The seconds `color`'s next search may spend (``clock.move_budget``); None without a clock."""
        if self.time_control is None:
            return None
        return clock.move_budget(self.time_control, self.clocks[color], len(self.moves), self.board_size,
                                 self.lag_buffer)

    def _search(self, color: str, playouts: int) -> play.TreeSearch:
        """The kept search if it stands at this position with `color` to move
        and stops at `playouts`, else a fresh one."""
        moves = _rules_moves(self.moves)
        tree = self._tree
        if tree is not None and not (tree.usable and tree.moves == len(moves) and tree.to_move == color
                                     and tree.playouts == playouts):
            self.close()
        if self._tree is None:
            self._tree = play.TreeSearch(self.evaluator, self.board_size, self.komi, moves, color, playouts,
                                         self.leaves, self.resign_threshold, self.pass_only_when_done,
                                         self.sampled_moves, seed=self.seed + len(moves),
                                         reuse_tree=self.reuse_tree)
        return self._tree

    def _follow(self, color: str, action: int) -> None:
        """The kept search plays `action`, about to be made, if it stands at this position; else it ends."""
        tree = self._tree
        if tree is None:
            return
        if not (tree.can_play and tree.moves == len(_rules_moves(self.moves)) and tree.to_move == color):
            self.close()
            return
        try:
            tree.play(action)
        except BaseException:
            self.close()
            raise

    def final_score(self, args: list[str]) -> str:
        score = self._position().score
        if score == 0:
            return "0"
        return f"{'B' if score > 0 else 'W'}+{abs(score):g}"

    def final_status_list(self, args: list[str]) -> str:
        """Tromp-Taylor's statuses, those final_score counts by: every stone on
        the board is alive (one line per string, as GNU Go answers), none dead,
        none in seki."""
        status = _one(args).lower()
        if status not in STATUSES:
            raise GtpError("invalid status")
        if status != "alive":
            return ""
        return "\n".join(" ".join(play.vertex(point, self.board_size) for point in string)
                         for string in _strings(self._position().stones))

    def time_settings(self, args: list[str]) -> str:
        if len(args) != 3:
            raise GtpError("syntax error")
        main, byo_yomi, stones = (_gtp_int(word) for word in args)
        return self._set_time_control(clock.TimeControl.from_time_settings(main, byo_yomi, stones))

    def kgs_time_settings(self, args: list[str]) -> str:
        """KGS's: none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN PERIOD STONES."""
        if not args:
            raise GtpError("syntax error")
        system, numbers = args[0].lower(), [_gtp_int(word) for word in args[1:]]
        counts = {clock.NO_LIMIT: 0, clock.ABSOLUTE: 1, clock.BYOYOMI: 3, clock.CANADIAN: 3}
        if system not in counts:
            raise GtpError("unknown time system")
        if len(numbers) != counts[system]:
            raise GtpError("syntax error")
        if system == clock.NO_LIMIT:
            control = clock.TimeControl(clock.NO_LIMIT)
        elif system == clock.CANADIAN:  # KGS: the arguments of time_settings, and their meaning
            control = clock.TimeControl.from_time_settings(*numbers)
        elif system == clock.BYOYOMI and 0 not in numbers[1:]:
            control = clock.TimeControl(clock.BYOYOMI, *numbers)
        else:  # absolute, or a byo-yomi of no time or no periods
            control = clock.TimeControl(clock.ABSOLUTE, numbers[0])
        return self._set_time_control(control)

    def time_left(self, args: list[str]) -> str:
        if len(args) != 3:
            raise GtpError("syntax error")
        color, seconds, stones = _color(args[0]), _gtp_int(args[1]), _gtp_int(args[2])
        self.clocks[color] = clock.ClockState(float(seconds), stones)
        return ""

    def _set_time_control(self, control: clock.TimeControl) -> str:
        self.time_control = control
        self._restart_clocks()
        return ""

    def _restart_clocks(self) -> None:
        """Both sides' clocks as a game starts: a new game restarts them (as Leela Zero's clear_board does)."""
        if self.time_control is not None:
            self.clocks = dict.fromkeys("bw", self.time_control.start())

    def showboard(self, args: list[str]) -> str:
        position = self._position()
        size = self.board_size
        columns = "   " + " ".join(play.vertex(c, size)[0] for c in range(size))
        lines = [columns]
        for row in range(size):
            cells = " ".join(".XO"[int(v)] for v in position.stones[row])
            lines.append(f"{size - row:2d} {cells} {size - row:2d}")
        lines.append(columns)
        lines.append(f"{'Black' if position.to_move == 'b' else 'White'} to move, komi {self.komi:g}")
        return "\n" + "\n".join(lines)

    def _position(self) -> play.Position:
        return play.observe(self.board_size, self.komi, _rules_moves(self.moves))


def _rules_moves(moves: list[play.Move]) -> list[play.Move]:
    """`moves` as the rules are given them. The rules end the game at two
    passes in a row; a move after them resumes the game, as GNU Go plays on:
    the two passes are dropped, which changes no position (a pass places no
    stone, superko is positional and the colours are explicit), only the
    passes' snapshots in the network's history planes."""
    game: list[play.Move] = []
    for move in moves:
        if len(game) >= 2 and game[-1][1] == game[-2][1] == "pass":
            del game[-2:]
        game.append(move)
    return game


def _strings(stones: np.ndarray) -> list[list[int]]:
    """The strings (connected stones of one colour) of a [N, N] board (0
    empty), each its points (row * N + column) in board order, in the board
    order of their first points."""
    size = len(stones)
    seen = np.zeros_like(stones, dtype=bool)
    strings = []
    for start in zip(*np.nonzero(stones), strict=True):
        if seen[start]:
            continue
        seen[start] = True
        string, frontier = [], [start]
        while frontier:
            row, column = frontier.pop()
            string.append(row * size + column)
            for near in ((row - 1, column), (row + 1, column), (row, column - 1), (row, column + 1)):
                if 0 <= near[0] < size and 0 <= near[1] < size and not seen[near] and stones[near] == stones[start]:
                    seen[near] = True
                    frontier.append(near)
        strings.append(sorted(string))
    return strings


def _color(word: str) -> str:
    color = word.lower()
    if color in ("b", "black"):
        return "b"
    if color in ("w", "white"):
        return "w"
    raise GtpError("invalid color")


INTEGER = re.compile(r"[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")  # no nan, inf, exponent or underscore


def _one(args: list[str]) -> str:
    if len(args) != 1:
        raise GtpError("syntax error")
    return args[0]


def _gtp_int(word: str) -> int:
    """GTP 2's int (0 <= x <= 2^31 - 1); '? syntax error' for anything else."""
    if not INTEGER.fullmatch(word) or len(word) > len(str(GTP_INT_MAX)) or int(word) > GTP_INT_MAX:
        raise GtpError("syntax error")
    return int(word)


def _decimal(word: str) -> float:
    if not DECIMAL.fullmatch(word):
        raise GtpError("syntax error")
    return float(word)


def _check_range(name: str, value: float, low: float, high: float) -> None:
    """ValueError naming the setting unless `value` is a number in [low, high]
    (nan is not), a whole one if the bounds are."""
    kinds = (int,) if isinstance(low, int) else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not (math.isfinite(value) and low <= value <= high):
        whole = "an integer" if kinds == (int,) else "a number"
        raise ValueError(f"{name} must be {whole} in [{low}, {high}], got {value}")


def serve(engine: GtpEngine, stdin: TextIO, stdout: TextIO) -> None:
    """Answers commands from `stdin` until quit or end of input, then closes `engine`."""
    with engine:
        for line in stdin:
            response, done = engine.handle(line)
            if response:
                stdout.write(response)
                stdout.flush()
            if done:
                return


def load_evaluator(path: str) -> play.Evaluator:
    """A network saved with torch.export, taking (s, legal) -> (policy, value);
    ``NetworkFileError`` naming ``path`` if the file is refused (see
    ``elfpy.network_file``), ValueError naming it if the network cannot
    evaluate a position (e.g. one of another board size)."""
    import torch  # here, not at the top: GTP without a network does without torch

    from elfpy.network_file import load_network

    module = load_network(path)

    def evaluate(s, legal):
        with torch.inference_mode():
            try:
                policy, value = module(torch.from_numpy(s), torch.from_numpy(legal))
            except RuntimeError as error:
                raise ValueError(f"{path} cannot evaluate planes {list(s.shape)}: {error}") from error
        return policy.numpy(), value.numpy()

    return evaluate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m elfpy.gtp", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", default="", help="network exported with torch.export (default: no network)")
    parser.add_argument("--playouts", type=int, default=play.PLAYOUTS,
                        help="simulations per genmove (default: %(default)s) while no clock is set")
    parser.add_argument("--leaves", type=int, default=play.LEAVES,
                        help="leaves evaluated together per search step (default: %(default)s)")
    parser.add_argument("--board_size", type=int, default=play.BOARD_SIZE, help="board side (default: %(default)s)")
    parser.add_argument("--komi", type=float, default=play.KOMI, help="komi (default: %(default)s)")
    parser.add_argument("--resign_threshold", type=float, default=play.RESIGN_THRESHOLD,
                        help="resign below this value (-1: never) (default: %(default)s)")
    parser.add_argument("--pass_only_when_done", action=argparse.BooleanOptionalAction,
                        default=play.PASS_ONLY_WHEN_DONE,
                        help="pass only when every other legal move fills an own single-point eye (as go9.yaml's "
                             "self-play: its networks never learn when to pass)")
    parser.add_argument("--sampled_moves", type=int, default=0,
                        help="the game's first N moves (both colours counted) are drawn in proportion to the "
                             "search's visits, so that games vary (default: %(default)s, always the most visited)")
    parser.add_argument("--seed", type=int, default=0, help="seed of those draws (default: %(default)s)")
    parser.add_argument("--reuse_tree", action=argparse.BooleanOptionalAction, default=play.REUSE_TREE,
                        help="keep the search's subtree of the moves played, both sides', for the next genmove "
                             "(default: %(default)s)")
    parser.add_argument("--max_playouts", type=int, default=CLOCK_PLAYOUTS,
                        help="with a clock (time_settings, kgs-time_settings): each search runs until its share of "
                             "the time left is spent, at most this many simulations (default: %(default)s)")
    parser.add_argument("--lag_buffer", type=float, default=clock.LAG_BUFFER,
                        help="with a clock: seconds kept back from each move's time for the way to the controller "
                             "(default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        evaluator = load_evaluator(args.load) if args.load else play.uniform_evaluator
        engine = GtpEngine(evaluator, args.playouts, args.board_size, args.komi, args.leaves, args.resign_threshold,
                           args.pass_only_when_done, args.sampled_moves, args.seed, args.reuse_tree,
                           args.max_playouts, args.lag_buffer)
    except (OSError, ValueError) as error:  # a missing or refused file (NetworkFileError is a ValueError), a setting
        parser.error(str(error))
    sys.stdin.reconfigure(errors="replace")  # a byte that is not UTF-8 makes an unknown command, not an exit
    serve(engine, sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
