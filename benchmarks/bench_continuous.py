"""Continuous control on Pendulum: rlpytorch's PPO with a Gaussian policy on the
native ``pendulum`` game beside Stable-Baselines3's PPO on Gymnasium's Pendulum-v1.

Each contender trains from scratch for a fixed number of frames (environment
steps), then plays 100 episodes greedily (the Gaussian's mean; SB3:
``deterministic=True``) and reports their mean return. rlpytorch runs the
shipped config ``pendulum_ppo`` (``rlpytorch.config``, then ``rlpytorch.train``);
Stable-Baselines3 runs rl-zoo's tuned hyperparameters for PPO on Pendulum-v1
(4 environments, 1024 steps each per update, 10 epochs, gamma 0.9, GAE 0.95,
lr 1e-3, gSDE, observations and rewards normalised by VecNormalize). Wall seconds and the process's CPU
seconds of training are reported side by side. With ``--repeats N`` seeds
``seed .. seed+N-1`` run interleaved (rlpytorch, SB3, next seed).

    python benchmarks/bench_continuous.py --repeats 3 --out results.md
"""

from __future__ import annotations

import argparse
import io
import os
import time
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

import rlpytorch

ROOT = Path(__file__).resolve().parent.parent
EVAL_EPISODES = 100


@dataclass
class Result:
    name: str
    seed: int
    frames: int
    seconds: float
    cpu_seconds: float
    eval_mean: float
    eval_std: float


def run_rlpytorch(seed: int, frames: int | None) -> Result:
    """PPO from the config file on the native pendulum (``frames``: None keeps the
    config's budget), then 100 greedy episodes."""
    budget = {} if frames is None else {"num_frames": frames}
    config = rlpytorch.config("pendulum_ppo", seed=seed, save_dir="", progress=False, log_every=10**12,
                              eval_episodes=EVAL_EPISODES, **budget)
    cpu = time.process_time()
    with redirect_stdout(io.StringIO()):
        out = rlpytorch.train(config)
    cpu = time.process_time() - cpu
    summary, result = out.summary, out.eval
    return Result(
        "rlpytorch PPO (native pendulum)", seed, summary.frames, summary.seconds, cpu, result.mean, result.std
    )


def run_sb3(seed: int, frames: int) -> Result:
    """Stable-Baselines3 PPO with rl-zoo's Pendulum-v1 hyperparameters, then 100 deterministic episodes."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecNormalize

    env = VecNormalize(make_vec_env("Pendulum-v1", n_envs=4, seed=seed))
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=1024,
        gae_lambda=0.95,
        gamma=0.9,
        n_epochs=10,
        ent_coef=0.0,
        learning_rate=1e-3,
        clip_range=0.2,
        use_sde=True,
        sde_sample_freq=4,
        seed=seed,
        device="cpu",
    )
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=frames)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    eval_env = VecNormalize(make_vec_env("Pendulum-v1", n_envs=1, seed=seed + 1000), training=False, norm_reward=False)
    eval_env.obs_rms = env.obs_rms
    returns, _ = evaluate_policy(
        model, eval_env, n_eval_episodes=EVAL_EPISODES, deterministic=True, return_episode_rewards=True
    )
    return Result(
        "Stable-Baselines3 PPO (Pendulum-v1, rl-zoo)",
        seed,
        model.num_timesteps,
        seconds,
        cpu,
        float(np.mean(returns)),
        float(np.std(returns)),
    )


def table(results: list[Result]) -> str:
    lines = [
        f"| trainer | seed | frames | train wall s | train CPU s | greedy return, {EVAL_EPISODES} episodes |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.name} | {r.seed} | {r.frames:,} | {r.seconds:.0f} | {r.cpu_seconds:.0f} | "
            f"{r.eval_mean:.1f} ± {r.eval_std:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frames", type=int, default=None, help="rlpytorch frame budget (default: the config's)")
    parser.add_argument("--sb3_frames", type=int, default=100_000, help="Stable-Baselines3 frame budget (rl-zoo's)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--sb3", action=argparse.BooleanOptionalAction, default=True,
                        help="also run Stable-Baselines3 (--no-sb3: rlpytorch only)")
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = []
    for seed in range(args.seed, args.seed + args.repeats):
        results.append(run_rlpytorch(seed, args.frames))
        print(table(results[-1:]), flush=True)
        if args.sb3:
            results.append(run_sb3(seed, args.sb3_frames))
            print(table(results[-1:]), flush=True)
    text = table(results) + f"\n\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
