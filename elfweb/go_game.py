"""A Go game played by clicking, against a network, the built-in search or a second person.

The rules, the opponent's search and the score are GTP's (``elfpy.gtp.GtpEngine``
on ``elfpy/go/play.py``): a move is played only if the engine's rules allow it,
the opponent answers with ``genmove``, and the result is ``final_score``'s
Tromp-Taylor count. The person plays black; against ``None`` (no opponent)
the person plays both colours in turn.
"""

from __future__ import annotations

from typing import Any

from elfpy.go import play
from elfpy.gtp import GtpEngine, GtpError


class IllegalMove(ValueError):
    """A move the rules refuse (the page says so; the game goes on)."""


class GoGame:
    def __init__(self, evaluator: play.Evaluator | None, playouts: int, board_size: int = play.BOARD_SIZE,
                 komi: float = play.KOMI) -> None:
        self.has_opponent = evaluator is not None
        self.engine = GtpEngine(evaluator or play.uniform_evaluator, playouts, board_size, komi)
        self.playouts = playouts
        self.visits: list[list[float]] | None = None  # the opponent's last search: each point's share of its visits
        self.pass_visits = 0.0
        self.result: str | None = None  # "B+3.5", "W+R", ... once the game is over
        self.last_opponent_value: float | None = None

    @property
    def size(self) -> int:
        return self.engine.board_size

    def _to_move(self) -> str:
        moves = self.engine.moves
        return "w" if moves and moves[-1][0] == "b" else "b"

    def _over_by_passes(self) -> bool:
        moves = self.engine.moves
        return len(moves) >= 2 and all(where == "pass" for _, where in moves[-2:])

    def move(self, row: int, col: int) -> None:
        if not (0 <= row < self.size and 0 <= col < self.size):
            raise IllegalMove(f"({row}, {col}) is off the {self.size}x{self.size} board")
        self._play(play.vertex(row * self.size + col, self.size))

    def pass_move(self) -> None:
        self._play("pass")

    def resign(self) -> None:
        self._check_going_on()
        self.result = "W+R" if self._to_move() == "b" else "B+R"

    def undo(self) -> None:
        """Takes back the person's last move (and the opponent's answer to it)."""
        if not self.engine.moves:
            raise IllegalMove("no move to undo")
        self.result = None
        self.visits = None
        for _ in range(2 if self.has_opponent and len(self.engine.moves) >= 2 else 1):
            self.engine.undo([])

    def _check_going_on(self) -> None:
        if self.result is not None:
            raise IllegalMove(f"the game is over ({self.result}); undo, or open a new game")

    def _play(self, where: str) -> None:
        self._check_going_on()
        self.visits = None
        try:
            self.engine.play([self._to_move(), where])
        except GtpError as error:
            raise IllegalMove(f"{where}: {error}") from None
        if self._finished():
            return
        if self.has_opponent:
            self.engine.last_search = None
            answer = self.engine.genmove([self._to_move()])
            if self.engine.last_search is not None:
                shares = self.engine.last_search.visits
                self.visits = shares[:self.size * self.size].reshape(self.size, self.size).round(4).tolist()
                self.pass_visits = round(float(shares[self.size * self.size]), 4)
            if answer == "resign":
                self.result = "B+R"
                return
            self._finished()

    def _finished(self) -> bool:
        if self._over_by_passes():
            self.result = self.engine.final_score([])
        return self.result is not None

    def state(self) -> dict[str, Any]:
        position = play.observe(self.size, self.engine.komi, self.engine.moves)
        return {"size": self.size, "stones": position.stones.astype(int).tolist(), "to_move": position.to_move,
                "moves": [f"{color.upper()} {where}" for color, where in self.engine.moves],
                "score": position.score, "result": self.result, "opponent": self.has_opponent,
                "visits": self.visits, "pass_visits": self.pass_visits if self.visits is not None else None,
                "playouts": self.playouts}

    def close(self) -> None:
        self.engine.close()
