"""DQN on CartPole: rlpytorch (native CartPole through GameContext) beside Stable-Baselines3's DQN.

Stable-Baselines3 runs its rl-zoo CartPole-v1 hyperparameters (lr 2.3e-3,
batch 64, buffer 100k, learning_starts 1000, gamma 0.99, target update every
10 steps, train_freq 256 with 128 gradient steps, epsilon to 0.04 over the
first 8,000 steps (exploration fraction 0.16 of its 50K steps; kept in steps
when ``--sb3_steps`` differs), net [256, 256]) on one Gymnasium CartPole-v1. Its replay ratio
is 128 / 256 = 0.5 updates per environment step; rlpytorch runs at the same
ratio (``replay_ratio=0.5``) with its own other settings (the shipped config
``dqn_cartpole``: ``rlpytorch.config``, trained by ``rlpytorch.train``). A run
stops when the mean return of its last 100 training episodes reaches 475;
one that never does counts as its whole frame budget. Seeds are interleaved
(rlpytorch seed s, SB3 seed s, then s + 1), every seed counted, medians
reported with wall and CPU seconds; each rlpytorch run is then evaluated
greedily over 100 episodes (not timed).

``--memory`` instead trains R2D2 (LSTM) and feed-forward DQN on the memory
game (the cue must be recalled ``delay`` steps later) and evaluates both.

    python benchmarks/bench_dqn.py --seeds 5
    python benchmarks/bench_dqn.py --memory
    python benchmarks/bench_dqn.py --seeds 5 --record   # append the figures to benchmarks/results.jsonl
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from dataclasses import dataclass

import numpy as np
import report
import torch

import rlpytorch
from rlpytorch import evaluate

TARGET = 475.0
RATIO = 0.5
ZOO_STEPS = 50_000  # rl-zoo's budget; its epsilon decays over the first 16% of it, whatever --sb3_steps
QUIET = {"progress": False, "num_threads": 1, "log_every": 10**9}


@dataclass
class Result:
    name: str
    seed: int
    frames: int
    wall: float
    cpu: float
    reached: bool
    greedy: float = float("nan")


def run_ours(seed: int, budget: int) -> Result:
    """``rlpytorch.config("dqn_cartpole", ...)`` trained by ``rlpytorch.train`` (timed), then
    ``python -m rlpytorch.evaluate`` of its run folder over 100 episodes (not timed)."""
    with tempfile.TemporaryDirectory() as run_dir:
        config = rlpytorch.config("dqn_cartpole", seed=seed, num_frames=budget, replay_ratio=RATIO,
                                  stop_at_return=TARGET, save_dir=run_dir, eval_at_end=False, **QUIET)
        wall, cpu = time.perf_counter(), time.process_time()
        summary = rlpytorch.train(config).summary
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        greedy = evaluate.main(["--load", run_dir, "--episodes", "100", "--no-progress"]).mean
    reached = summary.target_reached_at is not None
    return Result("rlpytorch DQN", seed, summary.frames, wall, cpu, reached, greedy)


def run_sb3(seed: int, budget: int) -> Result:
    import gymnasium as gym
    from stable_baselines3 import DQN as SB3DQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor

    class StopAtTarget(BaseCallback):
        def _on_step(self) -> bool:
            infos = self.model.ep_info_buffer
            return not (len(infos) >= 100 and np.mean([e["r"] for e in infos]) >= TARGET)

    model = SB3DQN("MlpPolicy", Monitor(gym.make("CartPole-v1")), learning_rate=2.3e-3, batch_size=64,
                   buffer_size=100_000, learning_starts=1000, gamma=0.99, target_update_interval=10, train_freq=256,
                   gradient_steps=128, exploration_fraction=0.16 * ZOO_STEPS / budget, exploration_final_eps=0.04,
                   policy_kwargs={"net_arch": [256, 256]}, seed=seed, verbose=0)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(budget, callback=StopAtTarget())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    infos = model.ep_info_buffer
    reached = len(infos) >= 100 and np.mean([e["r"] for e in infos]) >= TARGET
    return Result("SB3 DQN (rl-zoo)", seed, model.num_timesteps, wall, cpu, reached)


def cartpole(args: argparse.Namespace) -> None:
    results: list[Result] = []
    for seed in range(args.seed, args.seed + args.seeds):
        for run, budget in ((run_ours, args.frames), (run_sb3, args.sb3_steps)):
            r = run(seed, budget)
            results.append(r)
            print(f"{r.name} seed {r.seed}: {r.frames:,} frames, {r.wall:.1f} s wall, {r.cpu:.1f} s CPU, "
                  f"reached {r.reached}" + ("" if np.isnan(r.greedy) else f", greedy {r.greedy:.1f}"), flush=True)
    report.publish(cartpole_figures(results, args.sb3_steps), args)


def cartpole_figures(results: list[Result], sb3_steps: int) -> list[dict]:
    """The page's figures: frames, wall and CPU seconds to the target of each
    seed (a run that missed it at its whole budget, counted as a failure)."""
    budget = f"{sb3_steps // 1000}K"
    theirs = f"SB3 DQN (rl-zoo), {budget} budget"
    rows = {"rlpytorch DQN": "rlpytorch DQN" if sb3_steps == ZOO_STEPS else f"rlpytorch DQN, beside SB3 at {budget}",
            "SB3 DQN (rl-zoo)": theirs}
    figures = []
    for metric, unit, value in (("frames", "", "frames"), ("wall", "s", "wall"), ("CPU", "s", "cpu")):
        for name, row in rows.items():
            rs = [r for r in results if r.name == name]
            ours = name.startswith("rlpytorch")
            goal = {"label": "the issue's goal", "ratio": 10} if ours and metric == "wall" else None
            figures.append(dict(benchmark="dqn", row=row, metric=metric, unit=unit,
                                values=[getattr(r, value) for r in rs], better="lower",
                                failures=sum(not r.reached for r in rs), peer=theirs if ours else None,
                                reference=goal))
    return figures


def memory(args: argparse.Namespace) -> None:
    """R2D2 (the shipped config ``r2d2_memory``) and a feed-forward DQN with
    the same budget, replay and exploration, each built by ``rlpytorch.config``,
    trained by ``rlpytorch.train`` and evaluated greedily."""
    frames, delay = args.memory_frames, args.delay
    common = dict(seed=args.seed, num_frames=frames, game_options=f"delay={delay}", epsilon_frames=frames // 3,
                  eval_episodes=200, save_dir="", **QUIET)
    runs = {  # a shipped config's name (or None) and the settings over it
        "r2d2": ("r2d2_memory", {}),
        "dqn": (None, dict(method="dqn", game="memory", num_games=16, actor_batch=16, train_batch=16, T=9,
                           model="q", hidden=32, lr=0.002, gamma=0.9, n_step=1, target_period=100,
                           replay_capacity=20000, replay_ratio=0.125, replay_batch=32, learning_starts=500,
                           epsilon_final=0.05)),
    }
    names = {"r2d2": "R2D2 (LSTM Q, stored state, burn-in 4)", "dqn": "feed-forward Double DQN"}
    figures = []
    for kind, (file, settings) in runs.items():
        out = rlpytorch.train(rlpytorch.config(file, **settings, **common))
        summary = out.summary
        print(f"memory delay {delay}, {kind}: {summary.frames:,} frames, {summary.updates:,} updates, "
              f"training mean {summary.mean_return:.2f}, greedy {out.eval.mean:.2f}", flush=True)
        figures.append(dict(benchmark="r2d2", row=names[kind], metric="greedy return, 200 episodes", unit="",
                            values=[out.eval.mean], better="higher",
                            peer=None if kind == "dqn" else names["dqn"]))
    report.publish(figures, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frames", type=int, default=150_000, help="rlpytorch frame budget per run")
    parser.add_argument("--sb3_steps", type=int, default=ZOO_STEPS,
                        help=f"SB3 step budget per run (rl-zoo: {ZOO_STEPS})")
    parser.add_argument("--memory", action=argparse.BooleanOptionalAction, default=False,
                        help="R2D2 vs feed-forward DQN on the memory game")
    parser.add_argument("--memory_frames", type=int, default=20_000)
    parser.add_argument("--delay", type=int, default=4)
    report.add_options(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}; "
          f"shared, loaded machine (figures noisy); rlpytorch settings --config dqn_cartpole, "
          f"replay ratio {RATIO}", flush=True)
    memory(args) if args.memory else cartpole(args)


if __name__ == "__main__":
    main()
