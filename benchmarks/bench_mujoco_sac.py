"""SAC on HalfCheetah-v5 for 200K steps: rlpytorch beside Stable-Baselines3, the same settings.

rlpytorch trains with the shipped config ``mujoco_halfcheetah_sac``
(``rlpytorch.config``, run by ``rlpytorch.Training``; Gymnasium's
HalfCheetah-v5 hosted in a worker process);
Stable-Baselines3 runs SAC with rl-zoo's HalfCheetah settings (its defaults
plus ``learning_starts=10000``: networks 256x256, lr 3e-4, batch 256, one
update per step, automatic temperature) on one ``HalfCheetah-v5``. Both take
the same number of environment steps and updates. Reported per run: the mean
return of the last 10 training episodes, a deterministic evaluation over 10
episodes after training (not timed), wall seconds of training, and CPU
seconds of this process (the engine's threads included, the hosted
environment's worker process not; rlpytorch's also cover its set-up and the
final evaluation, seconds against the hour of training). Each run writes ``progress.csv`` (``frames``, ``time``,
``return_mean``) under ``--out`` as it goes, for ``python -m rlpytorch.plot``.

A contender per process, so the two can run side by side on two cores:

    python benchmarks/bench_mujoco_sac.py --contender rlpytorch --out runs/cheetah &
    python benchmarks/bench_mujoco_sac.py --contender sb3 --out runs/cheetah
    python benchmarks/bench_mujoco_sac.py --report --out runs/cheetah
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from offpolicy_runs import sb3_progress, train_keeping_trainer

import rlpytorch

ENV_ID = "HalfCheetah-v5"
EVAL_EPISODES = 10


def run_ours(steps: int, seed: int, folder: Path) -> dict:
    config = rlpytorch.config("mujoco_halfcheetah_sac", num_frames=steps, seed=seed, save_dir=str(folder),
                              progress=False, log_every=2000, eval_episodes=EVAL_EPISODES)
    cpu = time.process_time()
    result, trainer = train_keeping_trainer(config)
    wall, cpu = result.summary.seconds, time.process_time() - cpu  # CPU: training and the final evaluation
    returns = trainer.episodes.returns
    return {"contender": "rlpytorch SAC", "seed": seed, "steps": result.summary.frames, "wall_s": wall,
            "cpu_s": cpu, "last10_train_mean": float(np.mean(list(returns)[-10:])),
            "eval_mean": result.eval.mean, "eval_std": result.eval.std}


def run_sb3(steps: int, seed: int, folder: Path) -> dict:
    import gymnasium as gym
    from stable_baselines3 import SAC
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    model = SAC("MlpPolicy", Monitor(gym.make(ENV_ID)), learning_starts=10_000, seed=seed, device="cpu", verbose=0)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, callback=sb3_progress(folder))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    last10 = [e["r"] for e in model.ep_info_buffer][-10:]
    mean, std = evaluate_policy(model, Monitor(gym.make(ENV_ID)), n_eval_episodes=EVAL_EPISODES, deterministic=True)
    return {"contender": "SB3 SAC (rl-zoo)", "seed": seed, "steps": model.num_timesteps, "wall_s": wall,
            "cpu_s": cpu, "last10_train_mean": float(np.mean(last10)), "eval_mean": float(mean),
            "eval_std": float(std)}


def report(out: Path) -> str:
    rows = [json.loads(p.read_text()) for p in sorted(out.glob("result_*.json"))]
    lines = ["| trainer | seed | steps | last 10 training episodes | deterministic, 10 episodes | wall s | CPU s |",
             "|---|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['contender']} | {r['seed']} | {r['steps']:,} | {r['last10_train_mean']:.0f} | "
                     f"{r['eval_mean']:.0f} ± {r['eval_std']:.0f} | {r['wall_s']:.0f} | {r['cpu_s']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contender", choices=("rlpytorch", "sb3"))
    parser.add_argument("--report", action=argparse.BooleanOptionalAction, default=False,
                        help="print the table of the results under --out")
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("cheetah_runs"))
    args = parser.parse_args()
    if args.report or args.contender is None:
        print(report(args.out))
        return
    torch.set_num_threads(1)
    run = run_ours if args.contender == "rlpytorch" else run_sb3
    result = run(args.steps, args.seed, args.out / f"{args.contender}_sac" / f"seed{args.seed}")
    print(json.dumps(result), flush=True)
    (args.out / f"result_{args.contender}_seed{args.seed}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
