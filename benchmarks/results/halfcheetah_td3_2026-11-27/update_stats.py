"""Section 28: what the critics learn, ours beside SB3's. Both sides log their TD3 updates in
``progress.csv`` every 2,000 steps, means over the interval's updates: ``q`` (the first critic on
the update's batch, before its step), ``critic_loss`` (summed over the two critics), the global
gradient norms before each optimizer step, and ``actor_loss`` (``-Q_1(s, mu(s))``). Ours: the
shipped config's runs (the critic loss summed as SB3's); SB3: its runs that log them (from
section 28, ``SB3UpdateStats`` in ``bench_mujoco_sac.py``).

    python benchmarks/results/halfcheetah_td3_2026-11-27/update_stats.py

For each column and point: ours' median and range, and each SB3 run's value with the number of
ours' runs below it. The reading was fixed before SB3's runs ended (section 28): a column is a
lead if at two or more of the points where the training returns are level (30K, 50K, 75K, 100K
steps; 75K is the row at 76K, rows coming every 2,000 steps) every SB3 run lies beyond ours' range on the same side.
"""

import csv
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent
OURS = ["rlpytorch_td3_sumloss", "rlpytorch_shipped_td3", "rlpytorch_shipped_s26_td3", "rlpytorch_shipped_s27_td3"]
COLUMNS = ("return_mean", "q", "critic_loss", "critic_grad_norm", "actor_loss", "actor_grad_norm")
LEVEL = (30_000, 50_000, 76_000, 100_000)  # rows come every 2,000 steps: the declared 75K is the row at 76K
LATER = (150_000, 200_000)


def rows(run: Path) -> dict[int, dict[str, float]]:
    """A run's ``progress.csv`` by step: the columns that have a value at that step."""
    with open(run / "progress.csv") as f:
        return {int(float(r["frames"])): {c: float(r[c]) for c in COLUMNS if r.get(c)} for r in csv.DictReader(f)}


def sb3_runs() -> list[Path]:
    """SB3's runs whose ``progress.csv`` carries the update columns."""
    found = []
    for run in sorted(HERE.glob("sb3_*/seed*")):
        with open(run / "progress.csv") as f:
            if "q" in next(csv.reader(f)):
                found.append(run)
    return found


def at(runs: dict[str, dict[int, dict[str, float]]], column: str, step: int) -> dict[str, float]:
    """Each run's ``column`` in the row at ``step`` (the interval ending there), where it has one."""
    return {name: r[step][column] for name, r in runs.items() if step in r and column in r[step]}


def main() -> None:
    ours = {str(run.relative_to(HERE)): rows(run) for group in OURS for run in sorted(HERE.glob(f"{group}/seed*"))}
    theirs = {str(run.relative_to(HERE)): rows(run) for run in sb3_runs()}
    print(f"ours: {len(ours)} runs; SB3 with the update columns: {', '.join(theirs) or 'none'}")
    leads = []
    for column in COLUMNS:
        print(f"\n{column}:")
        beyond = 0
        for step in LEVEL + LATER:
            mine = sorted(at(ours, column, step).values())
            other = at(theirs, column, step)
            if not mine or not other:
                continue
            cells = ", ".join(f"{name} {v:,.3g} ({sum(m < v for m in mine)} below)" for name, v in other.items())
            print(f"  {step // 1000}K: ours median {median(mine):,.3g} ({mine[0]:,.3g} to {mine[-1]:,.3g}, "
                  f"{len(mine)} runs); SB3 {cells}")
            if step in LEVEL and (all(v > mine[-1] for v in other.values())
                                  or all(v < mine[0] for v in other.values())):
                beyond += 1
        if column != "return_mean" and beyond >= 2:
            leads.append(column)
    print(f"\nleads (every SB3 run beyond ours' range, one side, at 2+ of {[s // 1000 for s in LEVEL]}K): "
          f"{', '.join(leads) or 'none'}")
    print("\nrelative to q (looked at after the reading, so a description, not a test):")
    for column in ("critic_loss", "critic_grad_norm", "actor_grad_norm"):
        for step in LEVEL + LATER:
            mine = sorted(r[step][column] / r[step]["q"] for r in ours.values() if step in r and column in r[step])
            other = {name: r[step][column] / r[step]["q"] for name, r in theirs.items() if step in r}
            if mine and other:
                cells = ", ".join(f"{v:.3f} ({sum(m < v for m in mine)} below)" for v in other.values())
                print(f"  {column} / q at {step // 1000}K: ours median {median(mine):.3f} "
                      f"({mine[0]:.3f} to {mine[-1]:.3f}); SB3 {cells}")


if __name__ == "__main__":
    main()
