"""SGF (FF[4]) records of Go games, and ``SgfWriter``, which saves each
self-play game that ``python -m rlpytorch.train --method alphazero`` reports
(``--game_writer elfpy.go.sgf:SgfWriter``) with its Tromp-Taylor result."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from elfpy.files import write_text_atomically
from elfpy.go import play

RESIGN = play.RESIGN


def sgf_point(action: int, size: int) -> str:
    """SGF coordinates: column then row letters from the top left; "" for a pass."""
    if action == size * size:
        return ""
    row, column = divmod(action, size)
    return "abcdefghijklmnopqrs"[column] + "abcdefghijklmnopqrs"[row]


def to_sgf(moves: Sequence[tuple[str, int]], board_size: int, komi: float, result: str) -> str:
    """``moves``: (``"b"`` or ``"w"``, action) pairs; a resignation ends the list
    without a move (say so in ``result``, e.g. "W+R")."""
    body = "".join(f";{color.upper()}[{sgf_point(action, board_size)}]" for color, action in moves)
    return f"(;FF[4]GM[1]SZ[{board_size}]KM[{komi:g}]RU[Tromp-Taylor]PB[elf-go]PW[elf-go]RE[{result}]{body})\n"


def result_text(moves: Sequence[tuple[str, int]], board_size: int, komi: float, resigned: str | None) -> str:
    """"B+R" / "W+R" after a resignation by `resigned`, else the Tromp-Taylor
    score of the final position ("B+3.5", "W+0.5", "0")."""
    if resigned:
        return "W+R" if resigned == "b" else "B+R"
    score = play.observe(board_size, komi, [(c, play.vertex(a, board_size)) for c, a in moves]).score
    return "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"


class SgfWriter:
    """Writes ``game_000001.sgf``, ... into `directory`; called as
    ``writer(game_id, moves, players, reward)`` with the actions played,
    +1/-1 for black/white per move and black's final reward."""

    def __init__(self, directory: str, board_size: str | int = play.BOARD_SIZE, komi: str | float = play.KOMI,
                 **_options: str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.board_size = int(board_size)
        self.komi = float(komi)
        self.count = 0

    def __call__(self, game_id: int, moves: Sequence[int], players: Sequence[float], reward: float) -> Path:
        colored = [("b" if p > 0 else "w", int(a)) for a, p in zip(moves, players, strict=True)]
        resigned = colored[-1][0] if colored and colored[-1][1] == RESIGN else None
        played = [m for m in colored if m[1] != RESIGN]
        self.count += 1
        path = self.directory / f"game_{self.count:06d}.sgf"
        write_text_atomically(path, to_sgf(played, self.board_size, self.komi,
                                           result_text(played, self.board_size, self.komi, resigned)))
        return path
