"""MinAtar runs beside MinAtar's published DQN, as a markdown table.

    python benchmarks/minatar_table.py runs/minatar5/dqn [MORE_ROOTS ...]
        [--frames 100000 250000] [--tolerance 12500]
    python benchmarks/minatar_table.py ROOTS ... --plot minatar_five_games.png
    python benchmarks/minatar_table.py --read-figure learning_curves.png

A root holds run folders (any depth: the launcher's ``game=.../seed<N>`` or
the stored ``<game>/seed<N>``), each with ``progress.csv`` and
``config.yaml``; a run's game and seed come from its config.yaml. The value
at F frames is the ``return_mean`` (the mean of the last 100 training
episodes) of the row nearest to F, if one is within the tolerance (the rows
fall every 25,008 frames, and a run stopped and resumed has a row at each),
else the run has none there. Each root is one column: the mean over seeds
and each seed's value. ``--plot`` draws one panel per game instead: each
root's mean over seeds (one standard deviation shaded, as rlpytorch.plot)
and the published read-off as points with their +-.

The published column is DQN's blue line in MinAtar's README figure
(``img/learning_curves.gif``, commit 4241f24: 30 seeds, a moving average of
100 training episodes), read by pixel with ``--read-figure`` (the figure
converted to PNG, 3038 x 1629): that prints PUBLISHED below. The figure has
no table, so its numbers exist only as this read-off.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path

import numpy as np

from rlpytorch.core.plain_yaml import load_yaml

# ``--read-figure`` on the figure of MinAtar 4241f24 gives these: (value, +-)
# at each frame count, per game. Asterix 100K and SpaceInvaders 250K and 500K
# are read through the line drawn over the blue one there. Re-run it rather
# than edit them.
PUBLISHED = {
    "Asterix": {100000: (0.5, 0.1), 250000: (0.8, 0.1), 500000: (1.0, 0.2), 1000000: (7.3, 0.4)},
    "Breakout": {100000: (4.2, 0.9), 250000: (6.8, 0.3), 500000: (8.3, 0.4), 1000000: (9.2, 0.4)},
    "Freeway": {100000: (5.6, 0.3), 250000: (6.3, 1.0), 500000: (34.6, 1.3), 1000000: (47.8, 0.3)},
    "Seaquest": {100000: (0.5, 0.1), 250000: (0.8, 0.1), 500000: (0.9, 0.1), 1000000: (1.0, 0.1)},
    "SpaceInvaders": {100000: (17.3, 3.4), 250000: (20.7, 4.1), 500000: (27.0, 1.4), 1000000: (32.6, 1.1)},
}
GAMES = tuple(PUBLISHED)

# --- our runs ----------------------------------------------------------------


def game_name(game_id):
    """``gym:MinAtar/Breakout-v0`` -> ``Breakout``."""
    return game_id.rsplit("/", 1)[-1].split("-v")[0]


def load_runs(root):
    """{game: {seed: (frames, return_mean) arrays}} of every run under ``root``."""
    runs = {}
    for csv_path in sorted(Path(root).rglob("progress.csv")):
        config = load_yaml((csv_path.parent / "config.yaml").read_text())
        with open(csv_path, newline="") as f:
            rows = [(float(r["frames"]), float(r["return_mean"])) for r in csv.DictReader(f)
                    if r["return_mean"] not in ("", "nan")]
        frames_and_returns = np.array(rows, dtype=float).reshape(-1, 2)
        runs.setdefault(game_name(config["game"]), {})[int(config["seed"])] = tuple(frames_and_returns.T)
    if not runs:
        raise FileNotFoundError(f"no progress.csv under {root}")
    return runs


def value_at(run, frames, tolerance):
    """The return_mean of the row nearest ``frames``, None if none is within ``tolerance``."""
    xs, ys = run
    if not len(xs):
        return None
    nearest = int(np.argmin(np.abs(xs - frames)))
    return float(ys[nearest]) if abs(xs[nearest] - frames) <= tolerance else None


def cell(values):
    """``mean (v0, v1, ...)`` over the seeds that have a value; a dash for a seed without."""
    present = [v for v in values if v is not None]
    if not present:
        return "-"
    seeds = ", ".join("-" if v is None else f"{v:.1f}" for v in values)
    return f"{statistics.mean(present):.1f} ({seeds})"


def table(roots, frame_counts, tolerance):
    """The markdown table: one row per game and frame count, one column per root."""
    loaded = [load_runs(root) for root in roots]
    header = ["game", "frames", *(f"{Path(root).name}: mean (per seed)" for root in roots),
              "published DQN (read-off)"]
    lines = ["| " + " | ".join(header) + " |", "|---|---:|" + "---:|" * (len(roots) + 1)]
    for game in sorted({g for runs in loaded for g in runs}):
        for frames in frame_counts:
            cells = []
            for runs in loaded:
                seeds = runs.get(game, {})
                cells.append(cell([value_at(seeds[s], frames, tolerance) for s in sorted(seeds)]))
            ref = PUBLISHED.get(game, {}).get(frames)
            cells.append(f"{ref[0]:g} +- {ref[1]:g}" if ref else "-")
            lines.append(f"| {game} | {frames // 1000}K | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_games(roots, out):
    """One panel per game: each root's curve (rlpytorch.plot's mean and spread
    over the seeds) and the published read-off's points."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    from elfpy.files import atomic_path
    from rlpytorch.plot import load_curves

    fig, axes = plt.subplots(1, len(GAMES), figsize=(4 * len(GAMES), 3.6))
    for ax, game in zip(axes, GAMES, strict=True):
        for root in roots:
            folders = [p for p in sorted(Path(root).iterdir()) if p.is_dir() and game in load_runs(p)]
            for curve in load_curves(folders):
                grid, ys = curve.on_grid()
                mean, std = ys.mean(axis=0), ys.std(axis=0)
                (line,) = ax.plot(grid, mean, label=f"{Path(root).name} ({len(curve.runs)} seeds)")
                ax.fill_between(grid, mean - std, mean + std, color=line.get_color(), alpha=0.2, linewidth=0)
        shown = [(f, v, e) for f, (v, e) in PUBLISHED[game].items() if f <= ax.get_xlim()[1]]
        ax.errorbar([f for f, _, _ in shown], [v for _, v, _ in shown], yerr=[e for _, _, e in shown], fmt="ko",
                    capsize=3,
                    label="MinAtar's DQN, published (read off)")
        ax.set_title(game)
        ax.set_xlabel("frames")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean of the last 100 training episodes")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(out) as tmp:  # matplotlib picks the format by the suffix, which the name keeps
        fig.savefig(tmp, dpi=90)
    plt.close(fig)


# --- the published figure ----------------------------------------------------

# The figure's panels in reading order (top row left to right, then the
# bottom row), and each panel's y tick labels from bottom to top, as printed
# on it: the pixels give the ticks' places, not their labels.
PANELS = ("Seaquest", "Breakout", "Asterix", "Freeway", "SpaceInvaders")
Y_LABELS = {"Seaquest": (0, 5, 10, 15, 20), "Breakout": (0, 5, 10, 15), "Asterix": (0, 5, 10, 15, 20),
            "Freeway": (0, 10, 20, 30, 40, 50), "SpaceInvaders": (0, 50, 100, 150, 200)}
X_LABELS = (0, 1, 2, 3, 4, 5)  # millions of frames, every panel
DQN_BLUE = np.array([1, 115, 178])  # the blue line's solid colour in the GIF's palette
BLUE_DISTANCE = 60  # RGB distance still counted as the line (its antialiased edge), not its pale band
LINE_SATURATION = 80  # max - min of RGB: every line's colour is above, the pale bands and greys below
HIDDEN_SEARCH = 15  # columns either side searched when another line covers the blue one at a frame


def runs_of(mask):
    """(start, stop) of each run of True in a 1-D mask."""
    padded = np.concatenate([[False], mask, [False]]).astype(int)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2], edges[1::2], strict=True))


def axes_boxes(ink):
    """(left, top, right, bottom) of each panel's frame, in reading order: two
    long vertical dark lines (the spines, 2-4 pixels thick) of the same height,
    joined by a dark line along the top and one along the bottom."""
    dark = ink > 0.6
    spines = []  # [first column, last column, top row, bottom row]
    for x in range(dark.shape[1]):
        for top, stop in (run for run in runs_of(dark[:, x]) if run[1] - run[0] > 300):
            if spines and spines[-1][1] == x - 1 and abs(spines[-1][2] - top) < 5:
                spines[-1][1] = x
            else:
                spines.append([x, x, top, stop])
    boxes = []
    for index, (first, inner, top, stop) in enumerate(spines):
        for _, last, other_top, _ in spines[index + 1:]:
            joined = [y for y in range(top - 5, stop + 5) if dark[y, inner + 1:last].all()]
            if abs(other_top - top) < 5 and joined:
                boxes.append((first, top, last, max(joined)))  # the spines run on below, into the first x tick
                break
    return sorted(boxes, key=lambda box: (box[1] > dark.shape[0] / 2, box[0]))  # the two rows, then left to right


def tick_centres(profile, offset):
    """Centres (ink-weighted) of the ticks along a strip's mean ink profile."""
    centres = []
    for start, stop in runs_of(profile > 0.05):
        if profile[start:stop].max() > 0.3:
            index = np.arange(start, stop)
            centres.append(offset + float((index * profile[start:stop]).sum() / profile[start:stop].sum()))
    return centres


def fit_axis(centres, labels, what):
    """label = a + b * pixel, least squares over the ticks, and the largest
    residual in labels (how well the ticks sit on a line)."""
    if len(centres) != len(labels):
        raise ValueError(f"{what}: found {len(centres)} ticks at {np.round(centres, 1)}, expected {len(labels)}")
    slope, intercept = np.polyfit(centres, labels, 1)
    residual = float(np.max(np.abs(intercept + slope * np.array(centres) - labels)))
    return intercept, slope, residual


def blue_rows(blue, column, top, bottom):
    return np.flatnonzero(blue[top:bottom + 1, column]) + top


def read_blue(blue, lines, x, top, bottom):
    """(centre row, half-height, covered) of the blue line at pixel column
    ``x``: the middle and half the extent of its pixels there (the line's
    width and, where the curve is steep, its rise across the column). Where
    another line is drawn over it, the blue one lies under that line's pixels:
    the run of line pixels (``lines``: any line's colour) in the column nearest
    where the blue line's visible neighbours put it, the nearest columns either
    side that show it."""
    column = int(round(x))
    rows = blue_rows(blue, column, top, bottom)
    if len(rows):
        return (rows.min() + rows.max()) / 2, (rows.max() - rows.min() + 1) / 2, False
    sides = []
    for step in (-1, 1):
        for offset in range(1, HIDDEN_SEARCH + 1):
            rows = blue_rows(blue, column + step * offset, top, bottom)
            if len(rows):
                sides.append((column + step * offset, (rows.min() + rows.max()) / 2))
                break
    if not sides:
        raise ValueError(f"the blue line is hidden within {HIDDEN_SEARCH} columns of x={column}")
    if len(sides) == 2:
        (x0, row0), (x1, row1) = sides
        expected = row0 + (row1 - row0) * (x - x0) / (x1 - x0)
    else:
        expected = sides[0][1]
    covers = [(start + top, stop - 1 + top) for start, stop in runs_of(lines[top:bottom + 1, column])]
    first, last = min(covers, key=lambda run: 0 if run[0] <= expected <= run[1] else
                      min(abs(run[0] - expected), abs(run[1] - expected)))
    return (first + last) / 2, (last - first + 1) / 2, True


def read_figure(path, frame_counts):
    """{game: {frames: (value, +-, hidden)}} of the blue DQN line, and each
    panel's axis fit residuals. The x axis maps the ticks 0-5M, the y axis the
    panel's labels; the +- is the line's half-height at that column in the
    panel's units plus the y axis fit's largest residual."""
    from PIL import Image

    image = np.asarray(Image.open(path).convert("RGB")).astype(float)
    ink = 1 - image.mean(axis=2) / 255
    blue = np.linalg.norm(image - DQN_BLUE, axis=2) < BLUE_DISTANCE
    lines = image.max(axis=2) - image.min(axis=2) > LINE_SATURATION
    boxes = axes_boxes(ink)
    if len(boxes) != len(PANELS):
        raise ValueError(f"found {len(boxes)} panels, expected {len(PANELS)}: {boxes}")
    read, fits = {}, {}
    for game, (left, top, right, bottom) in zip(PANELS, boxes, strict=True):
        x_ticks = tick_centres(ink[bottom + 5:bottom + 10, left - 8:right + 9].mean(axis=0), left - 8)
        y_ticks = tick_centres(ink[top - 8:bottom + 9, left - 10:left - 5].mean(axis=1), top - 8)
        x0, x_slope, x_residual = fit_axis(x_ticks, X_LABELS, f"{game} x")
        y0, y_slope, y_residual = fit_axis(sorted(y_ticks, reverse=True), Y_LABELS[game], f"{game} y")
        fits[game] = (x_residual * 1e6, y_residual)
        read[game] = {}
        for frames in frame_counts:
            x = (frames / 1e6 - x0) / x_slope
            centre, half, hidden = read_blue(blue, lines, x, top + 3, bottom - 3)
            read[game][frames] = (y0 + y_slope * centre, abs(y_slope) * half + y_residual, hidden)
    return read, fits


def print_read_off(path, frame_counts):
    read, fits = read_figure(path, frame_counts)
    for game in GAMES:
        x_residual, y_residual = fits[game]
        print(f"{game}: axis fits within {x_residual:.0f} frames and {y_residual:.3f} units")
    print("PUBLISHED = {")
    for game in GAMES:
        points = ", ".join(f"{f}: ({v:.1f}, {max(e, 0.1):.1f})" for f, (v, e, _) in read[game].items())
        print(f'    "{game}": {{{points}}},')
    print("}")
    hidden = [f"{game} {f // 1000}K" for game in GAMES for f, (_, _, h) in read[game].items() if h]
    if hidden:
        print("the blue line covered by another, read as the covering line's pixels: " + ", ".join(hidden))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path, help="folders of run folders; one table column each")
    parser.add_argument("--frames", type=int, nargs="+", default=None,
                        help="frame counts to tabulate (default: 100000 250000) or to read off the figure "
                             "(default: 100000 250000 500000 1000000)")
    parser.add_argument("--tolerance", type=int, default=12500,
                        help="the farthest a row may be from a frame count (default: %(default)s)")
    parser.add_argument("--plot", type=Path, default=None,
                        help="draw the roots' curves, one panel per game, to this image instead of the table")
    parser.add_argument("--read-figure", type=Path, default=None,
                        help="read the published DQN line off MinAtar's figure (a PNG) instead")
    args = parser.parse_args(argv)
    if args.read_figure:
        print_read_off(args.read_figure, args.frames or [100000, 250000, 500000, 1000000])
    elif args.roots and args.plot:
        plot_games(args.roots, args.plot)
        print(f"{args.plot}: {', '.join(map(str, args.roots))}")
    elif args.roots:
        print(table(args.roots, args.frames or [100000, 250000], args.tolerance))
    else:
        parser.error("give run roots, or --read-figure")


if __name__ == "__main__":
    main()
