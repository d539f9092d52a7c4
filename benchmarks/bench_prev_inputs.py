"""Why a model may want its previous action and reward: a two-armed bandit, with and without them.

Each episode of ``Bandit-v0`` (defined here, hosted by the engine in worker
processes) secretly picks one of two arms to pay 1 (the other pays 0) and
lasts ``pulls`` steps; the observation is a constant. The only way to find
the paying arm is what the last pull earned, so without ``--prev_action
--prev_reward`` any policy expects ``pulls / 2``; with them, pulling at random
once and then staying on a paying arm (switching after a miss) expects
``pulls - 1/2``. Trains PPO with an LSTM (the same settings, the same seed)
both ways and evaluates greedily.

    python benchmarks/bench_prev_inputs.py --frames 30000
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import rlpytorch

ENV_ID = "Bandit-v0"  # registered below; the hosted games get its spec (and this class) pickled


class Bandit(gym.Env):
    """Two arms, one pays 1 per pull for the whole episode (drawn at reset); ``pulls`` pulls."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, pulls: int = 10) -> None:
        self.pulls = pulls

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.paying = int(self.np_random.integers(2))
        self.step_count = 0
        return np.ones(1, np.float32), {}

    def step(self, action):
        self.step_count += 1
        reward = float(int(action) == self.paying)
        return np.ones(1, np.float32), reward, self.step_count >= self.pulls, False, {}


gym.register(id=ENV_ID, entry_point=Bandit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save_dir", default="",
                        help="keep each run's folder as DIR/observation_only and DIR/previous_inputs (for plots)")
    args = parser.parse_args()
    common = dict(game=f"gym:{ENV_ID}", method="ppo", model="lstm", num_games=16, actor_batch=16, train_batch=16,
                  num_workers=1, T=11, lr=1e-3, num_frames=args.frames, log_every=1500, eval_episodes=200,
                  seed=args.seed, progress=False)
    for name, previous in (("observation_only", False), ("previous_inputs", True)):
        save_dir = f"{args.save_dir}/{name}" if args.save_dir else ""
        run = rlpytorch.train(rlpytorch.config(**common, prev_action=previous, prev_reward=previous,
                                               save_dir=save_dir))
        label = "--prev_action --prev_reward" if previous else "(no previous inputs)"
        print(f"PPO lstm {label}: greedy {run.eval}", flush=True)


if __name__ == "__main__":
    main()
