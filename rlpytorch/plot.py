"""Learning curves from run folders: ``python -m rlpytorch.plot RUN_DIR [RUN_DIR ...] --out curves.png``.

Every ``progress.csv`` under the given folders is one run. Runs are grouped
into curves by their folder: a run in a folder named ``seed<N>`` belongs to
its parent's curve (the layout ``rlpytorch.launch`` writes), any other run is
a curve of its own. A curve is the mean over its runs, with the spread over
runs shaded (one standard deviation, or the minimum to the maximum), on a
common x axis (frames or wall seconds) up to where every run of the group has
data, so a mean never mixes runs that stopped early with runs that did not.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from elfpy.files import atomic_path

__all__ = ["Curve", "load_curves", "main", "plot_curves"]

_SEED_FOLDER = re.compile(r"seed[-_]?\d+")
_GRID_POINTS = 200


class Curve:
    """The runs of one setting: ``x`` and ``y`` columns of each run's CSV."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def add_run(self, x: np.ndarray, y: np.ndarray) -> None:
        keep = ~(np.isnan(x) | np.isnan(y))
        if keep.any():
            self.runs.append((x[keep], y[keep]))

    def on_grid(self) -> tuple[np.ndarray, np.ndarray]:
        """A common x grid, from the first x any run has to the last x every
        run has, and the runs' y interpolated on it: ``[runs, points]``."""
        start = min(x[0] for x, _ in self.runs)
        stop = min(x[-1] for x, _ in self.runs)
        grid = np.linspace(start, stop, _GRID_POINTS) if stop > start else np.array([stop])
        return grid, np.stack([np.interp(grid, x, y) for x, y in self.runs])


def read_columns(csv_path: Path, x_key: str, y_key: str) -> tuple[np.ndarray, np.ndarray]:
    """Columns ``x_key`` and ``y_key`` of a progress CSV as floats (empty cells: NaN)."""
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    missing = [key for key in (x_key, y_key) if rows and key not in rows[0]]
    if missing:
        named = " and ".join(map(repr, missing))
        raise ValueError(f"{csv_path}: no column{'s' * (len(missing) > 1)} {named}; columns: {sorted(rows[0])}")

    def column(key: str) -> np.ndarray:
        return np.array([float(row[key]) if row[key] not in ("", None) else math.nan for row in rows])

    return column(x_key), column(y_key)


def curve_folder(run_dir: Path) -> Path:
    """The folder naming a run's curve: its parent for ``seed<N>`` folders, else itself."""
    return run_dir.parent if _SEED_FOLDER.fullmatch(run_dir.name) else run_dir


def curve_labels(folders: Sequence[Path]) -> dict[Path, str]:
    """Each curve folder's label: its path below the folders' common parent, so that
    settings of the same name in two sweeps (``dqn/game=X``, ``rainbow/game=X``) stay
    apart; a lone folder is labelled by its name."""
    unique = sorted(set(folders))
    if len(unique) == 1:
        return {unique[0]: unique[0].name}
    common = Path(os.path.commonpath([f.resolve() for f in unique]))
    return {f: f.resolve().relative_to(common).as_posix() for f in unique}


def load_curves(paths: Sequence[Path], x_key: str = "frames", y_key: str = "return_mean") -> list[Curve]:
    """Every run under ``paths`` (folders searched for ``progress.csv``), grouped into curves."""
    runs: list[tuple[Path, Path]] = []
    for path in paths:
        found = sorted(Path(path).rglob("progress.csv")) if Path(path).is_dir() else [Path(path)]
        if not found:
            raise FileNotFoundError(f"no progress.csv under {path}")
        runs += [(curve_folder(csv_path.parent), csv_path) for csv_path in found]
    labels = curve_labels([folder for folder, _ in runs])
    curves: dict[str, Curve] = {}
    for folder, csv_path in runs:
        label = labels[folder]
        curves.setdefault(label, Curve(label)).add_run(*read_columns(csv_path, x_key, y_key))
    return [curve for curve in curves.values() if curve.runs]


def plot_curves(curves: Sequence[Curve], out: Path, x_key: str, y_key: str, spread: str = "std",
                title: str = "") -> None:
    """Draws each curve's mean with its spread shaded, and saves to ``out`` (.png or .svg)."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for curve in curves:
        grid, ys = curve.on_grid()
        mean = ys.mean(axis=0)
        low, high = (mean - ys.std(axis=0), mean + ys.std(axis=0)) if spread == "std" else (ys.min(0), ys.max(0))
        (line,) = ax.plot(grid, mean, label=f"{curve.label} ({len(curve.runs)} runs)")
        ax.fill_between(grid, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel({"frames": "frames", "time": "wall seconds"}.get(x_key, x_key))
    ax.set_ylabel(y_key)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_path(out) as tmp:  # matplotlib picks the format by the suffix, which the name keeps
        fig.savefig(tmp)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> list[Curve]:
    parser = argparse.ArgumentParser(prog="python -m rlpytorch.plot", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (searched for progress.csv) or CSV files")
    parser.add_argument("--out", type=Path, default=Path("curves.png"),
                        help="image to write: .png or .svg (default: %(default)s)")
    parser.add_argument("--x", default="frames", choices=("frames", "time"),
                        help="x axis: frames or wall seconds (default: %(default)s)")
    parser.add_argument("--y", default="return_mean", help="CSV column to plot (default: %(default)s)")
    parser.add_argument("--spread", default="std", choices=("std", "minmax"),
                        help="shaded spread over runs: one standard deviation, or the minimum to the maximum "
                             "(default: %(default)s)")
    parser.add_argument("--title", default="", help="title of the figure (default: none)")
    args = parser.parse_args(argv)
    try:
        import matplotlib  # noqa: F401  (checked first: no run's files are read for a plot that cannot be drawn)
    except ImportError:
        parser.error("drawing needs matplotlib: pip install 'elf-platform[plot]'")
    try:
        curves = load_curves(args.runs, args.x, args.y)
    except (OSError, ValueError) as error:  # a missing folder or file, a column it lacks: one line
        parser.error(str(error))
    if not curves:
        parser.error(f"no run has values in columns {args.x!r} and {args.y!r}")
    plot_curves(curves, args.out, args.x, args.y, args.spread, args.title)
    print(f"{args.out}: " + ", ".join(f"{c.label} ({len(c.runs)} runs)" for c in curves))
    return curves


if __name__ == "__main__":
    main()
