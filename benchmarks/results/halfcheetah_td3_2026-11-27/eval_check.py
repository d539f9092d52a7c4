"""Our TD3 runs' final evaluation against a plain Gymnasium one (the HalfCheetah note's section 21):
each run's last checkpoint, from the folders ``bench_mujoco_sac.py --contender rlpytorch --algo td3``
writes (``runs/td3/rlpytorch_td3/seed<S>`` beside ``runs/td3/result_rlpytorch_td3_seed<S>.json``),
evaluated again as the run did (``rlpytorch.evaluate``, 10 greedy episodes on its evaluation games)
and on 50 episodes of a fresh ``gym.make("HalfCheetah-v5")`` reset with seeds 10,000-10,049,
the actor's action at every step:

    python benchmarks/results/halfcheetah_td3_2026-11-27/eval_check.py runs/td3 4 5 6
"""

import json
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from rlpytorch.evaluate import evaluate, load_trained

EPISODES, FIRST_SEED = 50, 10_000


def gymnasium_returns(model: torch.nn.Module) -> np.ndarray:
    env, returns = gym.make("HalfCheetah-v5"), []
    for i in range(EPISODES):
        obs, _ = env.reset(seed=FIRST_SEED + i)
        total, done = 0.0, False
        while not done:
            with torch.no_grad():
                a = model.policy(model.encode(torch.as_tensor(obs, dtype=torch.float32)[None])).mode()[0]
            obs, reward, terminated, truncated, _ = env.step(a.numpy())
            total, done = total + reward, terminated or truncated
        returns.append(total)
    return np.array(returns)


def main(out: Path, seeds: list[int]) -> None:
    torch.set_num_threads(1)
    for seed in seeds:
        model, loader = load_trained(out / "rlpytorch_td3" / f"seed{seed}")
        recorded = json.loads((out / f"result_rlpytorch_td3_seed{seed}.json").read_text())
        again, returns = evaluate(model, loader, 10, "greedy"), gymnasium_returns(model)
        print(f"seed {seed}: recorded {recorded['eval_mean']:,.0f} +- {recorded['eval_std']:,.0f}; again {again}; "
              f"Gymnasium, {EPISODES} episodes: {returns.mean():,.0f} +- {returns.std():,.0f} "
              f"(lowest {returns.min():,.0f})", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: eval_check.py RUNS_FOLDER SEED...")
    main(Path(sys.argv[1]), [int(s) for s in sys.argv[2:]])
