"""Statistics of a run: finished episodes, averaged update stats, and their logs.

``StatsLogger`` writes each record as one readable line on stdout and, given
the run's folder, also as a line of ``log.txt``, a row of ``progress.csv`` and
TensorBoard scalars (``torch.utils.tensorboard``). Each line of ``log.txt``
and each row of ``progress.csv`` lands whole (one write, flushed to disk:
``elfpy.files.append_line``); a new column rewrites ``progress.csv``
atomically. A folder removed while the run writes into it, a full disk or a
read-only folder end the run with one line (``elfpy.files.writing_into``).

A resumed run continues one history: ``cut_history`` first cuts
``progress.csv`` and ``log.txt`` back to its checkpoint (``history_mark``,
kept in the checkpoint, says where they stood), so that each frame count is
logged once and in order however the earlier try ended, and TensorBoard's
reader drops the steps past the last row kept (``SummaryWriter(purge_step=...)``).

With ``--track wandb`` the same records also go to a Weights & Biases run
(``WandbRun``), kept in the run's folder (``wandb/``; ``WANDB_MODE=offline``
needs no account, ``wandb sync`` uploads it later). Its id is kept in
``wandb_id.txt``, so a resumed run goes on with the same W&B run. wandb is
optional: it is imported only for ``--track wandb``.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from elfpy.files import append_line, write_atomically, write_text_atomically, writing_into

from .args_provider import ArgsError, Configurable, setting

__all__ = ["SCREEN_WIDTH", "EpisodeStats", "RunningMean", "StatsLogger", "WandbRun", "cut_history", "fit_screen",
           "format_record", "history_mark"]


class EpisodeStats:
    """The last ``window`` finished episodes: returns, lengths, and the
    episode statistics the game declares (e.g. ``won``), each by its key."""

    def __init__(self, window: int = 100) -> None:
        self.returns: deque[float] = deque(maxlen=window)
        self.lengths: deque[int] = deque(maxlen=window)
        self.statistics: dict[str, deque[float]] = {}
        self.window = window
        self.total = 0
        self._mean_return: float | None = None  # cached: read after every batch, changes only in add

    def add(
        self,
        returns: Iterable[float],
        lengths: Iterable[int],
        statistics: Mapping[str, Iterable[float]] | None = None,
    ) -> None:
        """Record finished episodes and their statistics' values (by key)."""
        returns, lengths = list(returns), list(lengths)
        self.returns.extend(returns)
        self.lengths.extend(lengths)
        for name, values in (statistics or {}).items():
            self.statistics.setdefault(name, deque(maxlen=self.window)).extend(values)
        self.total += len(returns)
        self._mean_return = None

    def state_dict(self) -> dict[str, Any]:
        """The window's episodes and the total count (to resume a run)."""
        floats = lambda values: [float(v) for v in values]  # noqa: E731 (numpy scalars are not weights-only safe)
        return {"returns": floats(self.returns), "lengths": [int(n) for n in self.lengths], "total": self.total,
                "statistics": {name: floats(values) for name, values in self.statistics.items()}}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.returns = deque(state["returns"], maxlen=self.window)
        self.lengths = deque(state["lengths"], maxlen=self.window)
        self.statistics = {name: deque(values, maxlen=self.window) for name, values in state["statistics"].items()}
        self.total = int(state["total"])
        self._mean_return = None

    @property
    def mean_return(self) -> float:
        """Mean return of the window (NaN before the first episode ends)."""
        if self._mean_return is None:
            self._mean_return = float(np.mean(self.returns)) if self.returns else math.nan
        return self._mean_return

    def summary(self) -> dict[str, float]:
        """Mean/std/min/max return, mean length (NaN when unknown), and the
        mean of each episode statistic as ``<key>_mean`` (``won_mean``: the win rate)."""
        r = np.asarray(self.returns, dtype=np.float64)
        empty = r.size == 0
        return {
            "episodes": float(self.total),
            "return_mean": math.nan if empty else float(r.mean()),
            "return_std": math.nan if empty else float(r.std()),
            "return_min": math.nan if empty else float(r.min()),
            "return_max": math.nan if empty else float(r.max()),
            "length_mean": math.nan if empty else float(np.mean(self.lengths)),
            **{f"{name}_mean": float(np.mean(values)) for name, values in self.statistics.items()},
        }


class RunningMean:
    """Averages named floats between two ``pop`` calls (e.g. losses per interval), each
    over the calls that gave it: TD3's actor loss, given every second update, is the
    mean of those updates, not half of it."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, values: Mapping[str, float]) -> None:
        """Accumulate one set of values."""
        for key, value in values.items():
            self.sums[key] += value
            self.counts[key] += 1

    def state_dict(self) -> dict[str, Any]:
        """The sums and counts since the last ``pop`` (to resume a run)."""
        return {"sums": {key: float(value) for key, value in self.sums.items()}, "counts": dict(self.counts)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.sums = defaultdict(float, state["sums"])
        # A checkpoint written before the counts were kept per key holds one "count" for all.
        counts = state["counts"] if "counts" in state else dict.fromkeys(state["sums"], state["count"])
        self.counts = defaultdict(int, counts)

    def pop(self) -> dict[str, float]:
        """The means since the last ``pop``, then reset."""
        means = {key: value / self.counts[key] for key, value in self.sums.items()}
        self.sums.clear()
        self.counts.clear()
        return means


SCREEN_WIDTH = 100  # the most columns a stats line takes on stdout (log.txt gets it whole, progress.csv every value)
FIELD_SEPARATOR = "  "  # between the fields of a stats line: where a line too wide for the screen is cut

# The stats line's short names, in the order shown: the progress first (so that a line cut to the screen
# keeps it), then whether the learner keeps up (under --runner multi), then its losses; the episode
# statistics' means (``won``) come after the return.
_SHORT = {
    "frames": "F",
    "return_mean": "R",
    "eval_return_mean": "eval R",
    "length_mean": "len",
    "fps": "FPS",
    "time": "t",
    "updates": "U",
    "replay_ratio_achieved": "U/F",
    "waited": "waited",
    "dropped": "dropped",
    "updates_dropped": "U dropped",
    "loss": "loss",
    "policy_loss": "pL",
    "value_loss": "vL",
    "entropy": "H",
    "grad_norm": "|g|",
    "ratio": "rho",
    "approx_kl": "KL",
    "clip_fraction": "clip",
    "frames_learned": "F learned",
    "frames_all_ranks": "F(all ranks)",
}
_COUNTS = ("frames", "frames_learned", "frames_all_ranks", "updates", "fps")  # shown as whole numbers


def format_record(record: Mapping[str, float]) -> str:
    """One readable line: the known keys, short-named, in a fixed order (the
    episode statistics' means, ``<key>_mean``, by their key after the return),
    each value to 3 significant digits, counts and time (seconds) whole."""
    statistics = [key for key, value in record.items() if key.endswith("_mean") and key not in _SHORT
                  and not math.isnan(value)]
    parts = []
    for key, short in _SHORT.items():
        value = record.get(key)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        std = key.replace("_mean", "_std")
        if key.endswith("return_mean") and std in record:
            parts.append(f"{short} {value:.1f}±{record[std]:.1f}")
        elif key in _COUNTS:
            parts.append(f"{short} {value:,.0f}")
        elif key == "time":
            parts.append(f"{short} {value:,.0f}s")
        else:
            parts.append(f"{short} {value:.3g}")
        if key == "return_mean":
            parts += [f"{name.removesuffix('_mean')} {record[name]:.3g}" for name in statistics]
    return FIELD_SEPARATOR.join(parts)


def fit_screen(line: str, width: int = SCREEN_WIDTH) -> str:
    """``line`` as stdout shows it: whole if it fits in ``width`` columns, else
    its fields up to the last that fits and "…" (the rest is in log.txt and progress.csv)."""
    if len(line) <= width:
        return line
    cut = line.rfind(FIELD_SEPARATOR, 0, width - 2 + len(FIELD_SEPARATOR))  # room for " …"
    return (line[:cut] + " …") if cut > 0 else line[:width - 1] + "…"


class WandbRun:
    """A Weights & Biases run in ``log_dir`` (its ``wandb/`` folder) that takes the
    records, ``frames`` their x axis. The project is ``WANDB_PROJECT`` (else
    'rlpytorch'), the run's name its folder, its config ``run_config``; the run's
    id, kept in ``wandb_id.txt``, makes a resumed run go on with the same W&B run."""

    ID_FILE = "wandb_id.txt"

    def __init__(self, log_dir: Path, run_config: Mapping[str, Any] | None = None) -> None:
        try:
            import wandb
        except ImportError:
            raise ArgsError("--track wandb needs the wandb package: pip install 'elf-platform[wandb]'") from None
        id_file = log_dir / self.ID_FILE
        run_id = id_file.read_text().strip() if id_file.exists() else uuid.uuid4().hex[:12]
        if not re.fullmatch(r"[\w-]+", run_id):
            raise ArgsError(f"{id_file}: {run_id[:40]!r} is not a W&B run id (letters, digits, _ and -)")
        self._wandb = wandb
        try:
            self.run = wandb.init(project=os.environ.get("WANDB_PROJECT") or "rlpytorch", dir=str(log_dir),
                                  name=str(log_dir), id=run_id, resume="allow", config=dict(run_config or {}))
        except wandb.Error as error:  # not logged in, a bad setting of the environment
            raise ArgsError(f"--track wandb: {error}") from None
        if not id_file.exists():
            write_text_atomically(id_file, run_id + "\n")
        self.run.define_metric("frames")
        self.run.define_metric("*", step_metric="frames")  # records of one frame count (stats, evaluation) meet

    def log(self, record: Mapping[str, float]) -> None:
        self.run.log(dict(record))

    def close(self) -> None:
        self.run.finish()
        # finish() can return before wandb's service has written the run's file
        # (wandb 0.31, offline: 1 run in 8 left a 7-byte file); teardown waits
        # for the service to exit, so the run folder holds the whole record.
        self._wandb.teardown()


TRACKERS = {"wandb": WandbRun}


@dataclass(eq=False)
class StatsLogger(Configurable):
    """Writes records as lines (by ``formatter``) to stdout (``echo``; a line
    wider than ``SCREEN_WIDTH`` cut to it) and, with a ``log_dir``, to
    ``log.txt`` (whole), ``progress.csv`` (every value, in full), TensorBoard
    events and the experiment tracker of ``track`` (given ``run_config``)."""

    log_dir: str | Path | None = None
    tensorboard: bool = setting(True, "write TensorBoard events into the run's folder")
    track: str = setting("none", "also log the records to an experiment tracker, its files in the run's folder: "
                                 "wandb (Weights & Biases; WANDB_MODE=offline needs no account)",
                         choices=("none", *TRACKERS))
    echo: bool = True
    formatter: Callable[[Mapping[str, float]], str] = format_record
    run_config: Mapping[str, Any] | None = None  # the run's configuration, for the tracker

    def __post_init__(self) -> None:
        self.log_dir = Path(self.log_dir) if self.log_dir else None
        self.columns: list[str] = []
        self.records: list[dict[str, float]] = []  # this process's records, in order
        self._rows: list[dict[str, float]] = []
        self._tb = None
        self._tracker = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self._read_csv()  # a resumed run's rows: kept when a new column makes the file be rewritten
            if self.tensorboard:
                from torch.utils.tensorboard import SummaryWriter

                # A resumed run: the reader drops what an earlier try logged past the rows kept.
                frames = [_frames(row) for row in self._rows if not math.isnan(_frames(row))]
                purge = int(max(frames)) + 1 if frames else None
                _after_earlier_event_files(self.log_dir)
                self._tb = SummaryWriter(str(self.log_dir), purge_step=purge)
            if self.track != "none":
                self._tracker = TRACKERS[self.track](self.log_dir, self.run_config)

    def log(self, record: Mapping[str, float]) -> None:
        """Write one record; ``record["frames"]`` is the x axis of TensorBoard."""
        self.records.append(dict(record))
        if self.log_dir is not None:  # the row first: cut_history goes by the rows
            with writing_into(self.log_dir):
                self._write_csv(record)
        line = self.formatter(record)
        self._show(fit_screen(line))
        self._keep(line)
        if self._tb is not None:
            step = int(record.get("frames", 0))
            for key, value in record.items():
                self._tb.add_scalar(key, value, step)
            self._tb.flush()
        if self._tracker is not None:
            self._tracker.log(record)

    def note(self, line: str) -> None:
        """Print ``line`` (with ``echo``) and append it to ``log.txt``."""
        self._show(line)
        self._keep(line)

    def _show(self, line: str) -> None:
        if self.echo:
            print(line, flush=True)

    def _keep(self, line: str) -> None:
        if self.log_dir is not None:
            with writing_into(self.log_dir):
                append_line(self.log_dir / "log.txt", line)

    def _read_csv(self) -> None:
        self._rows, self.columns = _read_rows(self.log_dir / "progress.csv")

    def _write_csv(self, record: Mapping[str, float]) -> None:
        self._rows.append(dict(record))
        new = [key for key in record if key not in self.columns]
        path = self.log_dir / "progress.csv"
        if new:  # a new column (e.g. losses after the first update): rewrite the file
            self.columns += new
            write_text_atomically(path, self._csv_text(self._rows, header=True))
        else:
            append_line(path, self._csv_text([record]).removesuffix("\n"))

    def _csv_text(self, rows: Iterable[Mapping[str, Any]], header: bool = False) -> str:
        return _csv_text(self.columns, rows, header)

    def close(self) -> None:
        """Close the TensorBoard writer and the tracker's run (the log files are closed after each line)."""
        if self._tb is not None:
            self._tb.close()
        if self._tracker is not None:
            self._tracker.close()


def history_mark(log_dir: Path) -> int:
    """Where a run's history stands in ``log_dir``: the size of its ``log.txt``
    (0 without one), which a checkpoint keeps for ``cut_history``."""
    path = log_dir / "log.txt"
    return path.stat().st_size if path.exists() else 0


def cut_history(log_dir: Path, frames: int, log_bytes: int) -> None:
    """Cut the history in ``log_dir`` back to a checkpoint at ``frames``
    (``history_mark`` then was ``log_bytes``): the rows of ``progress.csv``
    past ``frames`` go, and with them what ``log.txt`` got after the
    checkpoint. Rows at ``frames`` or before stay, and so does all of
    ``log.txt`` when no row is past them (the run ended at its checkpoint: its
    last stats line and notes came after it). A record's row is written before
    its line, so a line past the checkpoint always has its row past it too."""
    path = log_dir / "progress.csv"
    rows, columns = _read_rows(path)
    kept = [row for row in rows if not _frames(row) > frames]
    if len(kept) == len(rows):
        return
    log = log_dir / "log.txt"
    with writing_into(log_dir):
        write_text_atomically(path, _csv_text(columns, kept, header=True))
        if log.exists() and log.stat().st_size > log_bytes:
            with open(log, "rb") as file:
                before = file.read(log_bytes)
            write_atomically(log, lambda file: file.write(before))


def _read_rows(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """The rows and the columns of a ``progress.csv`` (none when there is no file)."""
    if not path.exists():
        return [], []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return list(reader), list(reader.fieldnames or [])


def _frames(row: Mapping[str, str]) -> float:
    """A row's frame count (NaN where it has none)."""
    try:
        return float(row.get("frames") or "nan")
    except ValueError:
        return math.nan


def _csv_text(columns: list[str], rows: Iterable[Mapping[str, Any]], header: bool = False) -> str:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, restval="", lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


def _after_earlier_event_files(log_dir: Path) -> None:
    """Wait, at most a second, until a new TensorBoard event file sorts after those in
    ``log_dir``: its name starts with the second it was made, then the host and pid, and
    the reader applies a purge only to the files before it. A try killed within its first
    second and resumed at once (by a process of smaller pid) would otherwise sort first."""
    made = [int(name.split(".")[3]) for name in os.listdir(log_dir)
            if name.startswith("events.out.tfevents.") and name.split(".")[3].isdigit()]
    if made and max(made) >= int(time.time()):
        time.sleep(max(made) + 1 - time.time())
