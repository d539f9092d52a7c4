"""GNU Go as an opponent over GTP: a client for a GTP program's process
(``GtpProcess``), GNU Go's (``GnuGo``) and one match game against a
``GtpEngine`` (``play_game``), with or without a referee's clock.

GNU Go runs with Tromp-Taylor's rules as far as it has them: area scoring
(``--chinese-rules``), positional superko, and every dead stone captured
before it passes (``--capture-all-dead``), so that at the end no stone is
dead by agreement and both programs can score the same board. Debian installs
it in ``/usr/games`` (``apt-get install gnugo``; ``scripts/setup.sh`` does).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from elfpy.go import clock, play
from elfpy.gtp import GtpEngine

TROMP_TAYLOR = ("--chinese-rules", "--positional-superko", "--capture-all-dead")


def gnugo_path() -> str | None:
    """Where the ``gnugo`` program is (the PATH, then /usr/games), or None."""
    return shutil.which("gnugo", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/games"]))


class GtpProcess:
    """A GTP program's process (``argv``, called ``name`` in errors); ``send``
    returns the answer's text."""

    def __init__(self, argv: list[str], name: str) -> None:
        self.name = name
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, command: str) -> str:
        """The answer to ``command``; RuntimeError naming both if the program refuses it or exits."""
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        lines: list[str] = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} exited (code {self.process.poll()}) after: {command}")
            if line.strip() == "" and lines:
                break
            if line.strip():
                lines.append(line.strip())
        answer = " ".join(lines)
        if not answer.startswith("="):
            raise RuntimeError(f"{self.name}: {command} -> {answer}")
        return answer[1:].strip()

    def close(self) -> None:
        if self.process.poll() is None:
            self.send("quit")
        self.process.wait()

    def __enter__(self) -> GtpProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if exc_info[0] is None:
            self.close()
        else:  # the pipe may be in any state: do not talk to it
            self._kill()

    def _kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            pipe.close()


class GnuGo(GtpProcess):
    """GNU Go over GTP, with Tromp-Taylor's rules as far as it has them."""

    def __init__(self, level: int = 1, size: int = play.BOARD_SIZE, komi: float = play.KOMI, seed: int = 0) -> None:
        program = gnugo_path()
        if program is None:
            raise FileNotFoundError("GNU Go not found on the PATH nor in /usr/games: apt-get install gnugo "
                                    "(scripts/setup.sh installs it)")
        super().__init__([program, "--mode", "gtp", "--level", str(level), *TROMP_TAYLOR], "gnugo")
        try:
            self.send(f"boardsize {size}")
            self.send(f"komi {komi}")
            self.send(f"set_random_seed {seed}")  # varies its choice among moves of equal value
        except BaseException:
            self._kill()
            raise


@dataclass(frozen=True)
class MatchGame:
    """How one game against GNU Go ended."""

    ours: str  # our colour, "b" or "w"
    moves: int
    resigned: str | None  # the colour that resigned, if one did
    score: str  # our Tromp-Taylor result ("B+3.5"), or "" after a resignation or a loss on time
    gnugo_score: str  # GNU Go's own count of the same board
    out_of_time: str | None = None  # the colour that lost on time, if one did (a game with a clock)

    @property
    def winner(self) -> str:
        loser = self.resigned or self.out_of_time
        if loser:
            return "w" if loser == "b" else "b"
        return self.score[0].lower()


def play_game(engine: GtpEngine, gnugo: GnuGo, ours: str, time_control: clock.TimeControl | None = None,
              now: Callable[[], float] = time.monotonic) -> MatchGame:
    """Plays ``engine`` as ``ours`` against ``gnugo`` from the empty board until
    two passes in a row, a resignation, a loss on time or 2 N^2 moves; each
    side's move goes to the other, which refuses an illegal one (GtpEngine by
    its answer, GNU Go by RuntimeError).

    With `time_control` the referee keeps a clock as gogui-twogtp does: both
    programs are sent the control (``time_settings``) before the first move
    and the mover its time left (``time_left``, whole seconds) before each
    genmove; each genmove's time, by `now`, comes off the mover's clock, and
    a side that overruns it loses on time."""
    limit = 2 * engine.board_size ** 2
    clocks = None if time_control is None else dict.fromkeys("bw", time_control.start())
    if time_control is not None:
        _tell_engine(engine, time_control.command())
        gnugo.send(time_control.command())
    color, passes, resigned, out_of_time = "b", 0, None, None
    while passes < 2 and len(engine.moves) < limit:
        if clocks is not None:
            left = clocks[color]
            time_left = f"time_left {color} {math.floor(max(left.seconds, 0))} {left.stones}"
            if color == ours:
                _tell_engine(engine, time_left)
            else:
                gnugo.send(time_left)
        started = now()
        if color == ours:
            move = engine.handle(f"genmove {color}")[0][2:].strip()
        else:
            move = gnugo.send(f"genmove {color}")
        if clocks is not None:
            clocks[color] = clock.spend(time_control, clocks[color], now() - started)
            if clocks[color].out_of_time:
                out_of_time = color
                break
        if move.lower() != "resign":
            if color == ours:
                gnugo.send(f"play {color} {move}")
            else:
                _tell_engine(engine, f"play {color} {move}", f"GNU Go played {color} {move}")
        if move.lower() == "resign":
            resigned = color
            break
        passes = passes + 1 if move.lower() == "pass" else 0
        color = "w" if color == "b" else "b"
    score = "" if resigned or out_of_time else engine.handle("final_score")[0][2:].strip()
    return MatchGame(ours, len(engine.moves), resigned, score, gnugo.send("final_score"), out_of_time)


def _tell_engine(engine: GtpEngine, command: str, what: str = "") -> None:
    """Sends `command` to `engine`; RuntimeError naming it (or `what`) if the engine refuses it."""
    answer = engine.handle(command)[0]
    if not answer.startswith("="):
        raise RuntimeError(f"{what or command}, which the engine refuses: {answer.strip()}")
