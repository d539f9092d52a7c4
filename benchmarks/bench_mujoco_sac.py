"""SAC (or TD3) on HalfCheetah-v5 for 200K steps: rlpytorch beside Stable-Baselines3, the same settings.

rlpytorch trains with the shipped config ``mujoco_halfcheetah_sac`` (``--algo td3``:
``mujoco_halfcheetah_td3``) (``rlpytorch.config``, run by ``rlpytorch.Training``;
Gymnasium's HalfCheetah-v5 hosted in a worker process); Stable-Baselines3 runs
its SAC or TD3 with rl-zoo's HalfCheetah settings on one ``HalfCheetah-v5``:
SAC, its defaults plus ``learning_starts=10000`` (networks 256x256, lr 3e-4,
batch 256, one update per step, automatic temperature); TD3, its defaults plus
``learning_starts=10000``, N(0, 0.1) action noise, lr 1e-3, batch 256, networks
400x300, one update per step (rl-baselines3-zoo ``hyperparams/sac.yml`` and
``td3.yml``, HalfCheetah-v4). Both take the same number of environment steps
and updates, one after each step (``--train_every N``: N updates after each N
steps, both sides). Reported per run: the mean return of the last 10 training
episodes, a deterministic evaluation over 10 episodes after training (not
timed; each episode's return too), wall seconds of training, and CPU seconds
of this process (the engine's threads included, the hosted environment's
worker process not; rlpytorch's also cover its set-up and the final
evaluation, seconds against the hour of training). Each run writes
``progress.csv`` (``frames``, ``time``, ``return_mean``) under ``--out`` as it goes, for
``python -m rlpytorch.plot``; rlpytorch's run also its checkpoint ``last.pt``.

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
from elfpy.files import write_text_atomically

ENV_ID = "HalfCheetah-v5"
EVAL_EPISODES = 10
LEARNING_STARTS = 10_000
# rl-zoo's settings beyond each algorithm's Stable-Baselines3 defaults (hyperparams/td3.yml:143-153).
SB3_SETTINGS = {
    "sac": {},
    "td3": {"learning_rate": 1e-3, "batch_size": 256, "policy_kwargs": {"net_arch": [400, 300]}},
}
TD3_ACTION_NOISE = 0.1


def label(contender: str, algo: str, train_every: int | None) -> str:
    name = {"rlpytorch": f"rlpytorch {algo.upper()}", "sb3": f"SB3 {algo.upper()} (rl-zoo)"}[contender]
    if train_every is None:
        return name
    schedule = "1 update per step" if train_every == 1 else f"{train_every} updates every {train_every} steps"
    return f"{name}, {schedule}"


def run_ours(algo: str, steps: int, seed: int, folder: Path, train_every: int | None) -> dict:
    schedule = {} if train_every is None else {"T": train_every + 1}  # a window of T - 1 steps, as many updates
    config = rlpytorch.config(f"mujoco_halfcheetah_{algo}", num_frames=steps, seed=seed, save_dir=str(folder),
                              progress=False, log_every=2000, eval_episodes=EVAL_EPISODES, **schedule)
    cpu = time.process_time()
    result, _ = train_keeping_trainer(config)
    wall, cpu = result.summary.seconds, time.process_time() - cpu  # CPU: training and the final evaluation
    return {"contender": label("rlpytorch", algo, train_every), "seed": seed, "steps": result.summary.frames,
            "wall_s": wall, "cpu_s": cpu, "last10_train_mean": float(np.mean(result.summary.returns[-10:])),
            "eval_mean": result.eval.mean, "eval_std": result.eval.std,
            "eval_returns": [round(float(r), 1) for r in result.eval.returns]}


def sb3_model(algo: str, env: object, seed: int, train_every: int | None) -> object:
    """Stable-Baselines3's SAC or TD3 with rl-zoo's HalfCheetah settings (and ``train_every``)."""
    from stable_baselines3 import SAC, TD3
    from stable_baselines3.common.noise import NormalActionNoise

    kwargs = {"learning_starts": LEARNING_STARTS, "seed": seed, "device": "cpu", "verbose": 0, **SB3_SETTINGS[algo]}
    if train_every is not None:
        kwargs.update(train_freq=train_every, gradient_steps=train_every)
    if algo == "td3":
        dims = env.action_space.shape[0]
        kwargs["action_noise"] = NormalActionNoise(np.zeros(dims), TD3_ACTION_NOISE * np.ones(dims))
    return (SAC if algo == "sac" else TD3)("MlpPolicy", env, **kwargs)


def run_sb3(algo: str, steps: int, seed: int, folder: Path, train_every: int | None) -> dict:
    import gymnasium as gym
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    model = sb3_model(algo, Monitor(gym.make(ENV_ID)), seed, train_every)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, callback=sb3_progress(folder))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    last10 = [e["r"] for e in model.ep_info_buffer][-10:]
    returns, _ = evaluate_policy(model, Monitor(gym.make(ENV_ID)), n_eval_episodes=EVAL_EPISODES,
                                 deterministic=True, return_episode_rewards=True)
    return {"contender": label("sb3", algo, train_every), "seed": seed, "steps": model.num_timesteps,
            "wall_s": wall, "cpu_s": cpu, "last10_train_mean": float(np.mean(last10)),
            "eval_mean": float(np.mean(returns)), "eval_std": float(np.std(returns)),
            "eval_returns": [round(float(r), 1) for r in returns]}


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
    parser.add_argument("--algo", choices=tuple(SB3_SETTINGS), default="sac")
    parser.add_argument("--train_every", type=int, default=None,
                        help="N updates after every N steps, both sides (default: 1, rl-zoo's and the "
                             "configs')")
    parser.add_argument("--report", action=argparse.BooleanOptionalAction, default=False,
                        help="print the table of the results under --out")
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("cheetah_runs"))
    args = parser.parse_args()
    if args.report or args.contender is None:
        print(report(args.out))
        return
    if args.train_every is not None and args.train_every < 1:
        parser.error(f"--train_every must be >= 1, got {args.train_every}")
    torch.set_num_threads(1)
    run = {"rlpytorch": run_ours, "sb3": run_sb3}[args.contender]
    name = f"{args.contender}_{args.algo}" + ("" if args.train_every is None else f"_every{args.train_every}")
    result = run(args.algo, args.steps, args.seed, args.out / name / f"seed{args.seed}", args.train_every)
    print(json.dumps(result), flush=True)
    write_text_atomically(args.out / f"result_{name}_seed{args.seed}.json", json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
