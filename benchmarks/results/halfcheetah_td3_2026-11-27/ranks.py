"""The HalfCheetah note's group figures for TD3 (sections 13-28), from the ``result_*.json``
files beside this script: each group's runs, median and range, and for each pair of groups
compared in the note, in how many pairs of runs the first is ahead, the one-sided
Mann-Whitney p that the first lies below the second, and the two-sided p:

    python benchmarks/results/halfcheetah_td3_2026-11-27/ranks.py

A group is a set of file-name patterns, so a run added under a pattern joins its group.
``last100_at_200K`` is the mean of the last 100 training episodes at 200K steps, read from
the run's ``progress.csv`` (``result_<name>_seed<S>.json`` -> ``<name>/seed<S>/progress.csv``).
"""

import csv
import json
from pathlib import Path
from statistics import median

from scipy.stats import mannwhitneyu

HERE = Path(__file__).resolve().parent
GROUPS = {
    "ours": ["result_rlpytorch_td3_seed*.json", "result_rlpytorch_td3_streams_seed*.json"],
    "ours, split streams": ["result_rlpytorch_td3_streams_seed*.json"],
    "SB3": ["result_sb3_td3_seed*.json"],
    "swap": ["result_swap_td3_seed*.json"],
    "swap + our exploration": ["result_swap_td3_ourexploration_seed*.json"],
    "swap + our exploration, replay": ["result_swap_td3_ourexploration_ourreplay_seed*.json"],
    "swap + our exploration, engine's HalfCheetah": ["result_swap_td3_ourexploration_engineenv_seed*.json"],
    "ours, the critic loss summed as SB3's": ["result_rlpytorch_td3_sumloss_seed*.json"],
    "ours, the critic loss summed and the warm-up's noise as SB3's": [
        "result_rlpytorch_td3_sumloss_warmupnoise_seed*.json"],
}
# Section 23: SB3's TD3 at seeds 7-12 beside its first seven, and ours' runs since the split streams.
GROUPS["SB3, seeds 0-6"] = ["result_sb3_td3_seed[0-6].json"]
GROUPS["SB3, seeds 7-12"] = ["result_sb3_td3_seed[7-9].json", "result_sb3_td3_seed1[0-2].json"]
GROUPS["ours since the split streams"] = (
    GROUPS["ours, split streams"] + GROUPS["ours, the critic loss summed as SB3's"]
    + GROUPS["ours, the critic loss summed and the warm-up's noise as SB3's"])
GROUPS["our model, HalfCheetah's first reset seeded as the engine seeds it"] = [
    "result_rlpytorch_td3_*seed*.json", "result_swap_td3_ourexploration_engineenv_seed*.json",
    "result_swap_td3_ourexploration_ourreplay_engineresetseed_seed*.json"]
GROUPS["SB3's loop, at most our model, update, exploration"] = (
    GROUPS["SB3"] + GROUPS["swap"] + GROUPS["swap + our exploration"])
# Section 21: the same computations up to the seed of HalfCheetah's first reset, split by where the game runs.
GROUPS["our model and update, HalfCheetah in the engine"] = (
    GROUPS["ours, split streams"] + GROUPS["swap + our exploration, engine's HalfCheetah"])
GROUPS["our model and update, HalfCheetah in SB3's process"] = (
    GROUPS["swap"] + GROUPS["swap + our exploration"] + GROUPS["swap + our exploration, replay"])
# Section 24: the first reset's seed from both sides: SB3's TD3 seeded as the engine seeds it, and the swap
# with all our pieces, seeded as SB3 seeds it, at seeds 6 and 7, then 8 and 9.
GROUPS["SB3, first reset seeded as the engine seeds it"] = ["result_sb3_td3_engineresetseed_seed*.json"]
GROUPS["swap + our exploration, replay, seeds 6-7"] = ["result_swap_td3_ourexploration_ourreplay_seed[6-7].json"]
GROUPS["swap + our exploration, replay, seeds 6-9"] = ["result_swap_td3_ourexploration_ourreplay_seed[6-9].json"]
# Section 25: the shipped config (the critic loss summed, no warm-up noise) at seeds 10-11 and 18 onward.
# The new runs' files are named apart so that the earlier sections' groups keep their runs.
GROUPS["ours, shipped"] = GROUPS["ours, the critic loss summed as SB3's"] + ["result_rlpytorch_shipped_td3_seed*.json"]
GROUPS["ours, other split-stream runs"] = (
    GROUPS["ours, split streams"] + GROUPS["ours, the critic loss summed and the warm-up's noise as SB3's"])
# Section 26: more seeds on both sides, named apart so that section 25's groups keep their runs.
GROUPS["ours, shipped, section 26's new seeds"] = ["result_rlpytorch_shipped_s26_td3_seed*.json"]
GROUPS["SB3, section 26's new seeds"] = ["result_sb3_s26_td3_seed*.json"]
GROUPS["ours, shipped, with section 26"] = GROUPS["ours, shipped"] + GROUPS["ours, shipped, section 26's new seeds"]
GROUPS["SB3, with section 26"] = GROUPS["SB3"] + GROUPS["SB3, section 26's new seeds"]
# Section 27: SB3 at seeds 13-16 and ours at 27-28, named apart again.
GROUPS["SB3, section 27's new seeds"] = ["result_sb3_s27_td3_seed*.json"]
GROUPS["ours, shipped, with section 27"] = (
    GROUPS["ours, shipped, with section 26"] + ["result_rlpytorch_shipped_s27_td3_seed*.json"])
GROUPS["SB3, with section 27"] = GROUPS["SB3, with section 26"] + GROUPS["SB3, section 27's new seeds"]
# Section 28: SB3 at seeds 17-19 (its updates logged) and ours at 29, named apart again.
GROUPS["SB3, section 28's new seeds"] = ["result_sb3_s28_td3_seed*.json"]
GROUPS["ours, shipped, with section 28"] = (
    GROUPS["ours, shipped, with section 27"] + ["result_rlpytorch_shipped_s28_td3_seed*.json"])
GROUPS["SB3, with section 28"] = GROUPS["SB3, with section 27"] + GROUPS["SB3, section 28's new seeds"]
# Section 29: SB3 at seeds 20-21 and ours at 30-31, a pair at a time side by side, named apart again.
GROUPS["ours, shipped, with section 29"] = (
    GROUPS["ours, shipped, with section 28"] + ["result_rlpytorch_shipped_s29_td3_seed*.json"])
GROUPS["SB3, with section 29"] = GROUPS["SB3, with section 28"] + ["result_sb3_s29_td3_seed*.json"]
COMPARED = [
    ("ours", "SB3"),
    ("ours, split streams", "SB3"),
    ("ours", "swap + our exploration"),
    ("ours, split streams", "swap + our exploration"),
    ("swap + our exploration", "SB3"),
    ("swap + our exploration", "swap"),
    ("ours", "SB3's loop, at most our model, update, exploration"),
    ("ours", "swap + our exploration, replay"),
    ("ours, split streams", "swap + our exploration, replay"),
    ("swap + our exploration, replay", "swap + our exploration"),
    ("ours", "swap + our exploration, engine's HalfCheetah"),
    ("our model and update, HalfCheetah in the engine", "our model and update, HalfCheetah in SB3's process"),
    ("ours, the critic loss summed as SB3's", "SB3"),
    ("ours, the critic loss summed as SB3's", "ours, split streams"),
    ("ours, the critic loss summed and the warm-up's noise as SB3's", "SB3"),
    ("ours, the critic loss summed and the warm-up's noise as SB3's", "ours, split streams"),
    ("SB3, seeds 7-12", "SB3, seeds 0-6"),
    ("ours since the split streams", "SB3"),
    ("our model, HalfCheetah's first reset seeded as the engine seeds it",
     "our model and update, HalfCheetah in SB3's process"),
    ("ours since the split streams", "swap + our exploration, replay"),
    ("SB3, first reset seeded as the engine seeds it", "SB3"),
    ("ours since the split streams", "SB3, first reset seeded as the engine seeds it"),
    ("ours since the split streams", "swap + our exploration, replay, seeds 6-7"),
    ("ours since the split streams", "swap + our exploration, replay, seeds 6-9"),
    ("ours, shipped", "SB3"),
    ("ours, shipped", "ours, other split-stream runs"),
    ("ours, shipped, with section 26", "SB3, with section 26"),
    ("SB3, section 26's new seeds", "SB3"),
    ("ours, shipped, section 26's new seeds", "ours, shipped"),
    ("ours, shipped, with section 27", "SB3, with section 27"),
    ("SB3, section 27's new seeds", "SB3, with section 26"),
    ("ours, shipped, with section 28", "SB3, with section 28"),
    ("SB3, section 28's new seeds", "SB3, with section 27"),
    ("ours, shipped, with section 29", "SB3, with section 29"),
    ("swap + our exploration, replay", "SB3, with section 29"),
]
METRICS = ("eval_mean", "last10_train_mean", "last100_at_200K")


def runs(group: str) -> list[dict]:
    files = sorted({f for pattern in GROUPS[group] for f in HERE.glob(pattern)})
    return [{**json.loads(f.read_text()), "last100_at_200K": last100_at_200k(f)} for f in files]


def last100_at_200k(result: Path) -> float:
    name, seed = result.stem.removeprefix("result_").rsplit("_seed", 1)
    with open(HERE / name / f"seed{seed}" / "progress.csv") as f:
        last = list(csv.DictReader(f))[-1]
    if int(float(last["frames"])) != 200_000:
        raise ValueError(f"{result.name}: progress.csv ends at {last['frames']} steps, not 200K")
    return float(last["return_mean"])


def main() -> None:
    for metric in METRICS:
        print(f"{metric}:")
        for group in GROUPS:
            values = sorted(r[metric] for r in runs(group))
            print(f"  {group}: {len(values)} runs, median {median(values):,.0f}, "
                  f"{values[0]:,.0f}-{values[-1]:,.0f}")
        for first, second in COMPARED:
            a, b = ([r[metric] for r in runs(g)] for g in (first, second))
            ahead = sum(x > y for x in a for y in b)
            p = mannwhitneyu(a, b, alternative="less").pvalue
            both_ways = mannwhitneyu(a, b).pvalue
            print(f"  {first} ahead of {second}: {ahead} of {len(a) * len(b)} pairs, p = {p:.3g} "
                  f"(two-sided {both_ways:.3g})")


if __name__ == "__main__":
    main()
