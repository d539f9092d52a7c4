"""The reference point of the multi-agent result: the uniform random policy's
mean episode return per agent on mpe2's simple_spread, hosted like the
training run (`pz:mpe2.simple_spread_v3`, max_cycles 25).

    python benchmarks/bench_multiagent.py --episodes 960

Compare with `python -m rlpytorch.train --config ppo_simple_spread`
(docs/results/2026-11-27-multi-agent.md).
"""

from __future__ import annotations

import argparse

import numpy as np

import elfpy


def random_returns(episodes: int, num_games: int, seed: int) -> np.ndarray:
    """Returns of the first `episodes` seat-episodes played with uniform random actions."""
    gc = elfpy.GameContext("pz:mpe2.simple_spread_v3", num_games=num_games, num_workers=2, seed=seed,
                           max_cycles=25)
    seats = gc.num_seats
    gc.add_tag("actor", batch_size=num_games * seats, inputs=["terminal", "episode_return", "episode_length"],
               replies=["a"])
    rng = np.random.default_rng(seed)
    returns: list[float] = []
    with gc:
        for batch in gc:
            ended = np.asarray(batch["terminal"]) & (np.asarray(batch["episode_length"]) > 0)
            returns += np.asarray(batch["episode_return"])[ended].tolist()
            batch.reply({"a": rng.integers(0, 5, len(batch))})
            if len(returns) >= episodes:
                break
    return np.asarray(returns[:episodes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=960)
    parser.add_argument("--num_games", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    returns = random_returns(args.episodes, args.num_games, args.seed)
    print(f"simple_spread, uniform random actions: mean return per agent {returns.mean():.2f} "
          f"± {returns.std() / np.sqrt(len(returns)):.2f} (s.e.) over {len(returns)} seat-episodes")


if __name__ == "__main__":
    main()
