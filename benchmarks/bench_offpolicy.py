"""Off-policy continuous control on Pendulum: rlpytorch's SAC and TD3 on the native
``pendulum`` beside Stable-Baselines3's SAC on Gymnasium's Pendulum-v1.

rlpytorch trains with the shipped configs ``pendulum_sac`` and ``pendulum_td3``
(``rlpytorch.config``, run by ``rlpytorch.Training``; 16 games, networks 64x64,
replay ratio 0.25 updates per frame for SAC, 0.5 for TD3). Stable-Baselines3 2.x SAC runs its rl-zoo
Pendulum-v1 hyperparameters (lr 1e-3, else SAC's defaults: 256x256 networks,
batch 256, one update per step, i.e. replay ratio 1) on one environment, and
again at rlpytorch's replay ratio (``train_freq=4``: one update every 4 steps).
A run stops when the mean return of its last 100 training episodes reaches
-200 (a run with fewer than 100 finished episodes never counts as reached);
one that never does counts at its whole budget. Wall and CPU seconds (this
process, the engine's threads included) are those of the whole training call,
set-up included. Seeds are interleaved (each contender's seed s, then s + 1),
every seed counted; medians and ratios are printed as Markdown. The runs'
``progress.csv`` files land in ``--out`` (curves: ``python -m rlpytorch.plot``).

    python benchmarks/bench_offpolicy.py --seeds 5 --sb3_seeds 3 --out /tmp/offpolicy
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from offpolicy_runs import sb3_progress, train_keeping_trainer

import rlpytorch

TARGET = -200.0
QUIET = {"progress": False, "num_threads": 1, "eval_at_end": False, "save_every": 0}


@dataclass
class Result:
    name: str
    seed: int
    frames: int  # at the target, or the budget
    wall: float
    cpu: float
    reached: bool
    episodes: int
    final_mean: float  # mean return of the last 100 training episodes at the end


def run_ours(method: str, seed: int, budget: int, out: Path) -> Result:
    """``rlpytorch.config("pendulum_<method>")`` trained by ``rlpytorch.Training``, stopping at the target."""
    config = rlpytorch.config(f"pendulum_{method}", seed=seed, num_frames=budget, stop_at_return=TARGET,
                              save_dir=str(out / f"rlpytorch_{method}" / f"seed{seed}"), **QUIET)
    wall, cpu = time.perf_counter(), time.process_time()
    result, trainer = train_keeping_trainer(config)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    summary, episodes = result.summary, trainer.episodes
    reached = summary.target_reached_at is not None and len(episodes.returns) >= 100
    return Result(f"rlpytorch {method.upper()}", seed, summary.frames, wall, cpu, reached, episodes.total,
                  episodes.mean_return)


def run_sb3(seed: int, budget: int, out: Path, train_freq: int) -> Result:
    """Stable-Baselines3 SAC, rl-zoo's Pendulum-v1 settings, one update every ``train_freq`` steps."""
    import gymnasium as gym
    from stable_baselines3 import SAC
    from stable_baselines3.common.monitor import Monitor

    folder = out / f"sb3_sac_ratio{1 / train_freq:g}" / f"seed{seed}"
    model = SAC("MlpPolicy", Monitor(gym.make("Pendulum-v1")), learning_rate=1e-3, train_freq=train_freq,
                gradient_steps=1, seed=seed, device="cpu", verbose=0)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(budget, callback=sb3_progress(folder, stop_at=TARGET))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    returns = [e["r"] for e in model.ep_info_buffer]
    reached = bool(len(returns) >= 100 and np.mean(returns) >= TARGET)
    name = "SB3 SAC (rl-zoo)" if train_freq == 1 else f"SB3 SAC (rl-zoo, train_freq {train_freq})"
    episodes = len(model.ep_info_buffer) if len(returns) < 100 else -1  # -1: 100 or more (SB3 keeps 100)
    return Result(name, seed, model.num_timesteps, wall, cpu, reached, episodes, float(np.mean(returns)))


def table(results: list[Result]) -> str:
    lines = ["| trainer | seeds reaching -200 | median frames | median wall s | median CPU s | "
             "last-100 mean at the end |", "|---|---:|---:|---:|---:|---|"]
    for name in dict.fromkeys(r.name for r in results):
        rs = [r for r in results if r.name == name]
        finals = ", ".join(f"{r.final_mean:.0f}" for r in rs)
        lines.append(f"| {name} | {sum(r.reached for r in rs)} of {len(rs)} | "
                     f"{np.median([r.frames for r in rs]):,.0f} | {np.median([r.wall for r in rs]):.1f} | "
                     f"{np.median([r.cpu for r in rs]):.1f} | {finals} |")
    medians = {name: (np.median([r.wall for r in results if r.name == name]),
                      np.median([r.cpu for r in results if r.name == name])) for name in dict.fromkeys(
                          r.name for r in results)}
    sb3 = [name for name in medians if name.startswith("SB3")]
    for ours in (name for name in medians if name.startswith("rlpytorch")):
        for theirs in sb3:
            lines.append(f"\n{theirs} / {ours}: wall {medians[theirs][0] / medians[ours][0]:.1f}x, "
                         f"CPU {medians[theirs][1] / medians[ours][1]:.1f}x")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5, help="seeds of each rlpytorch method")
    parser.add_argument("--sb3_seeds", type=int, default=3, help="seeds of each Stable-Baselines3 run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+", default=["sac", "td3"])
    parser.add_argument("--frames", type=int, default=40_000, help="rlpytorch frame budget per run")
    parser.add_argument("--sb3_steps", type=int, default=30_000, help="SB3 step budget per run")
    parser.add_argument("--sb3_train_freqs", type=int, nargs="*", default=[1, 4],
                        help="SB3 runs: one update every N steps (1: rl-zoo; 4: rlpytorch's replay ratio 0.25)")
    parser.add_argument("--out", type=Path, default=Path("offpolicy_runs"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}; "
          f"shared, loaded machine (figures noisy); load average {os.getloadavg()[0]:.1f}", flush=True)
    results: list[Result] = []
    for seed in range(args.seed, args.seed + max(args.seeds, args.sb3_seeds)):
        runs = [lambda m=m, s=seed: run_ours(m, s, args.frames, args.out) for m in args.methods] if seed < \
            args.seed + args.seeds else []
        if seed < args.seed + args.sb3_seeds:
            runs += [lambda f=f, s=seed: run_sb3(s, args.sb3_steps, args.out, f) for f in args.sb3_train_freqs]
        for run in runs:
            results.append(run())
            print(json.dumps(asdict(results[-1])), flush=True)
            (args.out / "results.json").write_text(json.dumps([asdict(r) for r in results], indent=1))
    text = table(results) + f"\n\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    print(text)
    (args.out / "results.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
