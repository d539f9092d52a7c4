"""A GTP (Go Text Protocol, version 2) engine on the C++ rules and search.

    python -m elfpy.gtp --load MODEL.pt2 --playouts 200 [--board_size 9]

speaks GTP on stdin/stdout. MODEL is a network exported with torch.export
taking ``(s, legal)`` and returning ``(policy, value)`` (``python -m
rlpytorch.train --method alphazero`` writes one beside each checkpoint);
without ``--load`` the search uses equal priors and value 0. Commands: protocol_version, name, version,
known_command, list_commands, boardsize, clear_board, komi, play, genmove,
undo, final_score, showboard, quit. Errors (illegal moves, unknown commands,
bad arguments: a vertex off the board or malformed, a komi that is not a
finite decimal number) are answered ``? message``, and so is a command that
fails for any other reason: no command ends the engine but ``quit`` or the
end of its input. The search of a genmove is kept, and the next genmove
starts from its subtree of the moves played since (``--no-reuse_tree``: a
fresh search each time). After the game's end (two passes in a row) ``genmove``
answers ``pass`` and changes nothing (GTP's genmove never fails); ``play``
is refused until ``undo`` or ``clear_board``.

The network file is read by ``elfpy.network_file.load_network``, which
refuses any file that could run code.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import TextIO

from elfpy.go import play

NAME = "elf-go"
VERSION = "0.1"
MAX_KOMI = 10_000.0  # beyond any board's area (19x19: 361), and scores stay exact in the engine's float32


class GtpError(Exception):
    """A command failed; the message goes after '? '."""


class GtpEngine:
    """The game state (moves from the empty board) and the command handlers."""

    def __init__(self, evaluator: play.Evaluator = play.uniform_evaluator, playouts: int = play.PLAYOUTS,
                 board_size: int = play.BOARD_SIZE, komi: float = play.KOMI, leaves: int = play.LEAVES,
                 resign_threshold: float = play.RESIGN_THRESHOLD,
                 pass_only_when_done: bool = play.PASS_ONLY_WHEN_DONE, sampled_moves: int = 0, seed: int = 0,
                 reuse_tree: bool = play.REUSE_TREE) -> None:
        self.evaluator = evaluator
        self.reuse_tree = reuse_tree
        self._tree: play.TreeSearch | None = None  # the last genmove's search, kept while the game follows it
        self.sampled_moves = sampled_moves  # play.search: the game's first moves drawn by visits
        self.seed = seed
        self.pass_only_when_done = pass_only_when_done
        self.playouts = playouts
        self.leaves = leaves
        self.resign_threshold = resign_threshold
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
        size = int(_number(args, INTEGER))
        if size not in (9, 13, 19):
            raise GtpError("unacceptable size")
        self.board_size = size
        self.moves = []
        self.close()
        return ""

    def clear_board(self, args: list[str]) -> str:
        self.moves = []
        self.close()
        return ""

    def set_komi(self, args: list[str]) -> str:
        komi = _number(args, DECIMAL)
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
            play.observe(self.board_size, self.komi, moves)
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
        try:
            result = self._search(color).genmove()
        except BaseException:
            self.close()  # a search that failed midway cannot go on
            raise
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

    def _search(self, color: str) -> play.TreeSearch:
        """The kept search if it stands at this position with `color` to move, else a fresh one."""
        tree = self._tree
        if tree is not None and not (tree.usable and tree.moves == len(self.moves) and tree.to_move == color):
            self.close()
        if self._tree is None:
            self._tree = play.TreeSearch(self.evaluator, self.board_size, self.komi, self.moves, color, self.playouts,
                                         self.leaves, self.resign_threshold, self.pass_only_when_done,
                                         self.sampled_moves, seed=self.seed + len(self.moves),
                                         reuse_tree=self.reuse_tree)
        return self._tree

    def _follow(self, color: str, action: int) -> None:
        """The kept search plays `action`, about to be made, if it stands at this position; else it ends."""
        tree = self._tree
        if tree is None:
            return
        if not (tree.can_play and tree.moves == len(self.moves) and tree.to_move == color):
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
        return play.observe(self.board_size, self.komi, self.moves)


def _color(word: str) -> str:
    color = word.lower()
    if color in ("b", "black"):
        return "b"
    if color in ("w", "white"):
        return "w"
    raise GtpError("invalid color")


INTEGER = re.compile(r"[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")  # no nan, inf, exponent or underscore


def _number(args: list[str], form: re.Pattern) -> float:
    if len(args) != 1 or not form.fullmatch(args[0]):
        raise GtpError("syntax error")
    return float(args[0])


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
                        help="simulations per genmove (default: %(default)s)")
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
    args = parser.parse_args(argv)
    if args.sampled_moves < 0 or args.seed < 0:
        parser.error(f"--sampled_moves and --seed must be >= 0, got {args.sampled_moves} and {args.seed}")
    try:
        evaluator = load_evaluator(args.load) if args.load else play.uniform_evaluator
    except (OSError, ValueError) as error:  # a missing or refused file (NetworkFileError is a ValueError)
        parser.error(str(error))
    sys.stdin.reconfigure(errors="replace")  # a byte that is not UTF-8 makes an unknown command, not an exit
    engine = GtpEngine(evaluator, args.playouts, args.board_size, args.komi, args.leaves, args.resign_threshold,
                       args.pass_only_when_done, args.sampled_moves, args.seed, args.reuse_tree)
    serve(engine, sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
