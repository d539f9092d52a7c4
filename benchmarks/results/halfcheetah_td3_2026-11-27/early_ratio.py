"""Section 28's second reading: the critic's gradient norm per unit of Q early in training,
SB3's TD3 beside ours, from the ``progress.csv`` rows both sides log (``update_stats.py``).

    python benchmarks/results/halfcheetah_td3_2026-11-27/early_ratio.py

The test, declared before its runs ended: at the row at 40K steps, ``critic_grad_norm / q`` of
SB3's five 40K-step runs (``short_sb3_td3``, seeds 20-24) against ours' five (``short_rlpytorch_td3``,
seeds 30-34); the one-sided Mann-Whitney p that SB3's lie above. Beside it, the rows at 30K and
40K of every run that has them: ours with the critic loss summed as SB3's (twenty 200K runs and
the five short ones), SB3's with its updates logged (three and five).
"""

from statistics import median

from scipy.stats import mannwhitneyu
from update_stats import HERE, rows

DECLARED = {"SB3": ["short_sb3_td3"], "ours": ["short_rlpytorch_td3"]}
ALL = {"SB3": ["short_sb3_td3", "sb3_s28_td3"],
       "ours": ["short_rlpytorch_td3", "rlpytorch_td3_sumloss", "rlpytorch_td3_sumloss_warmupnoise",
                "rlpytorch_shipped_td3", "rlpytorch_shipped_s26_td3", "rlpytorch_shipped_s27_td3",
                "rlpytorch_shipped_s28_td3"]}
COLUMNS = ("critic_grad_norm", "critic_loss")


def ratios(folders: list[str], column: str, step: int) -> list[float]:
    """``column / q`` in the row at ``step`` of every run under ``folders``."""
    steps = [rows(run)[step] for folder in folders for run in sorted(HERE.glob(f"{folder}/seed*"))]
    return [row[column] / row["q"] for row in steps]


def compare(groups: dict[str, list[str]], column: str, step: int) -> str:
    sb3, ours = (sorted(ratios(groups[side], column, step)) for side in ("SB3", "ours"))
    p = mannwhitneyu(sb3, ours, alternative="greater").pvalue
    return (f"{column} / q at {step // 1000}K: SB3 {len(sb3)} runs, median {median(sb3):.3f} "
            f"({sb3[0]:.3f} to {sb3[-1]:.3f}); ours {len(ours)}, median {median(ours):.3f} "
            f"({ours[0]:.3f} to {ours[-1]:.3f}); SB3 ahead in {sum(a > b for a in sb3 for b in ours)} of "
            f"{len(sb3) * len(ours)} pairs, one-sided p = {p:.3g}")


def main() -> None:
    print("the declared test (the short runs):")
    print("  " + compare(DECLARED, "critic_grad_norm", 40_000))
    print("beside it (every run with the rows):")
    for column in COLUMNS:
        for step in (30_000, 40_000):
            print("  " + compare(ALL, column, step))


if __name__ == "__main__":
    main()
