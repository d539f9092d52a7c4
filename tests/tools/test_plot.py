"""rlpytorch.plot: runs grouped by folder, means on a common grid, images written."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from rlpytorch import plot


def write_progress(folder: Path, frames: list[float], returns: list[float | str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "progress.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["frames", "time", "return_mean"])
        for i, (x, y) in enumerate(zip(frames, returns, strict=True)):
            writer.writerow([x, i * 0.5, y])


def test_seed_folders_form_one_curve_and_other_folders_their_own(tmp_path: Path) -> None:
    write_progress(tmp_path / "lr=1e-3" / "seed0", [0, 100], [1, 2])
    write_progress(tmp_path / "lr=1e-3" / "seed1", [0, 100], [3, 4])
    write_progress(tmp_path / "single", [0, 100], [5, 6])
    curves = {c.label: c for c in plot.load_curves([tmp_path])}
    assert sorted(curves) == ["lr=1e-3", "single"]
    assert len(curves["lr=1e-3"].runs) == 2 and len(curves["single"].runs) == 1


def test_same_setting_in_two_sweeps_gives_two_curves_named_by_their_paths(tmp_path: Path) -> None:
    write_progress(tmp_path / "dqn" / "game=X" / "seed0", [0, 100], [1, 2])
    write_progress(tmp_path / "rainbow" / "game=X" / "seed0", [0, 100], [3, 4])
    write_progress(tmp_path / "rainbow" / "game=X" / "seed1", [0, 100], [5, 6])
    curves = {c.label: c for c in plot.load_curves([tmp_path / "dqn", tmp_path / "rainbow" / "game=X"])}
    assert sorted(curves) == ["dqn/game=X", "rainbow/game=X"]
    assert len(curves["dqn/game=X"].runs) == 1 and len(curves["rainbow/game=X"].runs) == 2


def test_curve_mean_is_taken_where_every_run_has_data(tmp_path: Path) -> None:
    # seed0 goes to 200 frames, seed1 stops at 100: the grid ends at 100.
    write_progress(tmp_path / "a" / "seed0", [0, 100, 200], [0, 10, 20])
    write_progress(tmp_path / "a" / "seed1", [0, 100], [10, 30])
    (curve,) = plot.load_curves([tmp_path])
    grid, ys = curve.on_grid()
    assert grid[0] == 0 and grid[-1] == 100
    # At x = 50: seed0 interpolates to 5, seed1 to 20.
    middle = np.argmin(np.abs(grid - 50))
    assert ys[:, middle] == pytest.approx([grid[middle] / 10, 10 + grid[middle] / 5])
    assert ys.mean(0)[-1] == pytest.approx(20.0)  # (10 + 30) / 2


def test_rows_without_a_value_are_left_out(tmp_path: Path) -> None:
    write_progress(tmp_path / "a", [0, 50, 100], ["", 1, 3])
    (curve,) = plot.load_curves([tmp_path])
    x, y = curve.runs[0]
    assert x.tolist() == [50, 100] and y.tolist() == [1, 3]


def test_main_writes_png_and_svg_over_time_axis(tmp_path: Path) -> None:
    write_progress(tmp_path / "runs" / "seed0", [0, 100, 200], [1, 2, 3])
    write_progress(tmp_path / "runs" / "seed1", [0, 100, 200], [2, 3, 5])
    for name in ("curves.png", "curves.svg"):
        out = tmp_path / name
        plot.main([str(tmp_path / "runs"), "--out", str(out), "--x", "time", "--spread", "minmax"])
        assert out.stat().st_size > 1000
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_unknown_column_is_named(tmp_path: Path) -> None:
    write_progress(tmp_path / "a", [0, 1], [1, 2])
    with pytest.raises(ValueError, match="win_rate"):
        plot.load_curves([tmp_path], y_key="win_rate")


def test_folder_without_runs_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="progress.csv"):
        plot.load_curves([tmp_path])
