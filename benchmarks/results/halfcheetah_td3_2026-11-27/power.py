"""Section 29: how many runs it takes to see the TD3 gap, and to place it in one piece.

    python benchmarks/results/halfcheetah_td3_2026-11-27/power.py

Draws ``n`` runs per side, with replacement, from the runs on record (ours at the shipped config,
SB3's TD3; the groups of ``ranks.py``), and counts how often the one-sided Mann-Whitney test
shows ours below at p < 0.05: the power to show the gap at ``n`` runs a side, if the recorded
runs are the truth. "Half the gap" moves each of ours' runs up by half the difference of the
medians: the power to show one piece that carries half of it (the case where the gap is shared
between two of the five pieces whose draws differ: initial weights, exploration noise, replay
indices, target-policy noise, warm-up actions).
"""

from statistics import median

import numpy as np
from ranks import METRICS, runs
from scipy.stats import mannwhitneyu

OURS, SB3 = "ours, shipped, with section 29", "SB3, with section 29"
SIZES = (5, 10, 20, 35, 50, 60, 65, 80)
DRAWS = 2000


def power(ours: np.ndarray, sb3: np.ndarray, n: int, rng: np.random.Generator) -> float:
    """The share of ``DRAWS`` draws of ``n`` runs a side in which ours is shown below (p < 0.05)."""
    a, b = rng.choice(ours, (DRAWS, n)), rng.choice(sb3, (DRAWS, n))
    return float(np.mean(mannwhitneyu(a, b, alternative="less", axis=1).pvalue < 0.05))


def main() -> None:
    rng = np.random.default_rng(29)
    for metric in METRICS[::2]:  # the deterministic evaluation and the last-100 mean at 200K
        ours, sb3 = (np.array([r[metric] for r in runs(g)]) for g in (OURS, SB3))
        gap = median(sb3) - median(ours)
        print(f"{metric}: ours {len(ours)} runs, median {median(ours):,.0f}; SB3 {len(sb3)} runs, "
              f"median {median(sb3):,.0f}; gap {gap:,.0f}")
        for label, shifted in (("the whole gap", ours), ("half the gap", ours + gap / 2)):
            shown = ", ".join(f"n = {n}: {power(shifted, sb3, n, rng):.0%}" for n in SIZES)
            print(f"  {label}: {shown}")


if __name__ == "__main__":
    main()
