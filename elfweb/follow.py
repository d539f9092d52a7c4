"""A training run followed as it trains: its learning curve from ``progress.csv`` as rows are added, and
its latest checkpoint playing, taken up at the next episode after ``last.pt`` changes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elfweb.watch import Frame

CURVE_X, CURVE_Y = "frames", "return_mean"  # the columns rlpytorch.plot draws by default


def _stamp(path: Path) -> tuple[int, int] | None:
    """When and how large ``path`` last was written (None while absent): a change means a new file."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_mtime_ns, status.st_size


class FollowedRun:
    """``open_checkpoint(folder, seed)`` loads the folder's last checkpoint and returns
    ``(watch, model_step)``: the watched game its model plays."""

    def __init__(self, folder: str | Path, open_checkpoint: Callable[[Path, int], tuple[Any, int]],
                 seed: int = 0) -> None:
        from rlpytorch.run.run_dir import LAST_CHECKPOINT

        self.folder = Path(folder)
        self.checkpoint = self.folder / LAST_CHECKPOINT
        self.progress = self.folder / "progress.csv"
        self._open_checkpoint, self.seed = open_checkpoint, seed
        self._curve_stamp: tuple[int, int] | None = None
        self._load()

    def _load(self) -> None:
        self._checkpoint_stamp = _stamp(self.checkpoint)
        self.watch, self.model_step = self._open_checkpoint(self.folder, self.seed)
        self._curve_stamp = None  # the next curve says which checkpoint plays now

    def step(self) -> Frame:
        frame = self.watch.step()
        if self.watch.episode != frame.episode and _stamp(self.checkpoint) != self._checkpoint_stamp:
            self.watch.close()  # the episode just ended: the next one is the newer checkpoint's
            self.seed += 1
            self._load()
        return frame

    def curve(self) -> dict[str, Any] | None:
        """The learning curve message if ``progress.csv`` (or the checkpoint playing) changed since the
        last call, else None."""
        stamp = _stamp(self.progress)
        if stamp is None or stamp == self._curve_stamp:
            return None
        from rlpytorch.plot import read_columns

        x, y = read_columns(self.progress, CURVE_X, CURVE_Y)
        self._curve_stamp = stamp
        keep = ~(x != x) & ~(y != y)  # rows with both numbers (NaN is not equal to itself)
        return {"type": "curve", "x_key": CURVE_X, "y_key": CURVE_Y, "x": x[keep].tolist(), "y": y[keep].tolist(),
                "model_step": self.model_step}

    def command(self, action: int) -> None:
        self.watch.command(action)

    def restart(self) -> None:
        self.watch.restart()

    def close(self) -> None:
        self.watch.close()
