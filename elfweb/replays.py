"""Saved games to scrub through: a MiniRTS replay (``elfpy.render.minirts.Replay``, JSON) re-simulated
and checked against its boards' CRCs, or a Go game in SGF (as ``elfpy.go.sgf`` writes them) replayed
on the engine's rules. ``show(index)`` is the message that draws position ``index`` of ``count``."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

from elfpy.go import play
from elfpy.render import minirts
from elfpy.render.minirts import board_to_image
from elfweb.watch import BOARD_SCALE, png_bytes

MAX_FILE_BYTES = 16 << 20  # a long MiniRTS replay is a few MB of JSON; an SGF game a few kB


def _read(path: str | Path) -> str:
    path = Path(path)
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path}: over {MAX_FILE_BYTES >> 20} MB, too large for a replay")
    return path.read_text()


class MiniRtsReplay:
    def __init__(self, path: str | Path) -> None:
        _read(path)  # the size check, before JSON parses it
        self.replay = minirts.Replay.load(path)
        try:
            self.boards = minirts.verify(self.replay).boards
        except minirts.ReplayMismatch as error:  # the game does not reproduce it: another build, or edited
            raise ValueError(f"{path}: {error}") from None
        self.count = len(self.boards)

    def show(self, index: int) -> dict[str, Any]:
        index = min(index, self.count - 1)
        image = png_bytes(board_to_image(self.boards[index], scale=BOARD_SCALE))
        last = index == self.count - 1
        final_return = self.replay.rewards[0] if self.replay.rewards else 0.0  # seat 0's, on the final step
        return {"type": "frame", "image": "data:image/png;base64," + base64.b64encode(image).decode("ascii"),
                "step": index, "episode": 0, "episode_return": final_return if last else 0.0,
                "action": None if last else self.replay.actions[index][0], "pi": None, "value": None,
                "action_names": [], "index": index, "count": self.count, "playing": False}

    def close(self) -> None:
        """Nothing runs between seeks."""


SGF_MOVE = re.compile(r";\s*([BW])\[([^\]]*)\]")  # any value: one that is not a point is refused below
SGF_LETTERS = "abcdefghijklmnopqrs"  # SGF's coordinates: column letter, then row letter, from the top left


class SgfReplay:
    def __init__(self, path: str | Path) -> None:
        text = _read(path)
        size = re.search(r"SZ\[(\d+)\]", text)
        komi = re.search(r"KM\[([-+]?\d+(?:\.\d+)?)\]", text)
        result = re.search(r"RE\[([^\]]*)\]", text)
        self.size = int(size.group(1)) if size else 19  # SGF's default
        if self.size not in (9, 13, 19):
            raise ValueError(f"{path}: board size {self.size}; the Go games are 9, 13 or 19")
        self.komi = float(komi.group(1)) if komi else play.KOMI
        self.result = result.group(1) if result else None
        self.moves: list[play.Move] = []
        for color, point in SGF_MOVE.findall(text):
            if point in ("", "tt"):  # a pass (tt: the older form, on boards up to 19x19)
                where = "pass"
            elif len(point) == 2 and set(point) <= set(SGF_LETTERS[:self.size]):
                where = play.vertex(SGF_LETTERS.index(point[1]) * self.size + SGF_LETTERS.index(point[0]), self.size)
            else:
                raise ValueError(f"{path}: move {color}[{point[:10]}] is off the {self.size}x{self.size} board")
            self.moves.append((color.lower(), where))
        play.observe(self.size, self.komi, self.moves)  # ValueError naming the move if one is illegal
        self.count = len(self.moves) + 1

    def show(self, index: int) -> dict[str, Any]:
        index = min(index, self.count - 1)
        moves = self.moves[:index]
        position = play.observe(self.size, self.komi, moves)
        return {"type": "go", "size": self.size, "stones": position.stones.astype(int).tolist(),
                "to_move": position.to_move, "moves": [f"{c.upper()} {w}" for c, w in moves],
                "score": position.score, "result": self.result if index == self.count - 1 else None,
                "opponent": False, "index": index, "count": self.count}

    def close(self) -> None:
        """Nothing runs between seeks."""
