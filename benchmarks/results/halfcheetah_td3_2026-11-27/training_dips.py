"""Sudden low training episodes in the TD3 runs beside this file (the HalfCheetah note's section 27).

Both sides' ``progress.csv`` log, every 2,000 steps, the mean return of the last (up to) 100 training
episodes: ours with the count of episodes so far (``episodes``), SB3's at step ``frames`` with
``frames / 1000 - 1`` episodes done (its callback runs before the episode ending at that step is
counted; every episode is 1,000 steps). The running sums ``S_n = n * mean_n`` (n <= 100) and
``S_n = 100 * mean_n + S_{n-100}`` give the return of each 2,000-step window's pair of episodes.

A dip is a pair whose return falls below ``share`` of the median of the ten pairs around it (five on
each side), from 50K steps on; a flip onto the back in one episode of a pair makes one. Per group:
runs, dips per run at each share, the share of runs with any, and a one-sided Mann-Whitney test of
ours' counts against SB3's:

    python benchmarks/results/halfcheetah_td3_2026-11-27/training_dips.py
"""

import csv
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu

HERE = Path(__file__).parent
WINDOW, FROM_FRAMES, NEIGHBOURS = 100, 50_000, 5
SHARES = (0.5, 0.75)
GROUPS = {
    "ours, shipped": ["rlpytorch_td3_sumloss", "rlpytorch_shipped_td3", "rlpytorch_shipped_s26_td3",
                      "rlpytorch_shipped_s27_td3"],
    "ours, every split-stream run": ["rlpytorch_td3_streams", "rlpytorch_td3_sumloss",
                                     "rlpytorch_td3_sumloss_warmupnoise", "rlpytorch_shipped_td3",
                                     "rlpytorch_shipped_s26_td3", "rlpytorch_shipped_s27_td3"],
    "SB3": ["sb3_td3", "sb3_s26_td3", "sb3_s27_td3"],
}


def pair_returns(progress: Path) -> tuple[np.ndarray, np.ndarray]:
    """(frames, return of the two episodes ended in the 2,000 steps before) for each logged window."""
    with progress.open() as f:
        rows = list(csv.DictReader(f))
    ours = "episodes" in rows[0]
    sums, frames, pairs, last = {0: 0.0}, [], [], 0
    for row in rows:
        n = int(float(row["episodes"])) if ours else int(row["frames"]) // 1000 - 1
        if n <= 0 or row["return_mean"] in ("", "nan"):
            continue
        sums[n] = float(row["return_mean"]) * min(n, WINDOW) + (sums[n - WINDOW] if n > WINDOW else 0.0)
        if last and n - last == 2:
            frames.append(int(float(row["frames"])))
            pairs.append(sums[n] - sums[last])
        last = n
    return np.array(frames), np.array(pairs)


def dips(progress: Path, share: float) -> int:
    frames, pairs = pair_returns(progress)
    count = 0
    for i in np.flatnonzero(frames >= FROM_FRAMES):
        around = np.r_[pairs[max(0, i - NEIGHBOURS):i], pairs[i + 1:i + 1 + NEIGHBOURS]]
        count += pairs[i] < share * np.median(around)
    return int(count)


def main() -> None:
    counts = {}
    for group, folders in GROUPS.items():
        runs = sorted(p for folder in folders for p in (HERE / folder).glob("seed*/progress.csv"))
        counts[group] = {share: np.array([dips(p, share) for p in runs]) for share in SHARES}
        for share, c in counts[group].items():
            print(f"{group}: {len(runs)} runs; pairs below {share:.0%} of their neighbours' median: "
                  f"{c.mean():.2f} per run (median {np.median(c):.0f}, most {c.max()}), "
                  f"runs with any {np.mean(c > 0):.0%}")
    for group in ("ours, shipped", "ours, every split-stream run"):
        for share in SHARES:
            p = mannwhitneyu(counts[group][share], counts["SB3"][share], alternative="greater").pvalue
            print(f"{group} more dips than SB3 at {share:.0%}: one-sided Mann-Whitney p = {p:.3g}")


if __name__ == "__main__":
    main()
