"""Gymnasium's counting test env (tests/vector/test_autoreset_mode.py's `count_reset` / `count_step` on its
GenericTestEnv), hosted by the engine. Gymnasium gives each env its own `max_count` through `set_attr`; a hosted
env cannot be reached that way, so it learns it from the seed of its first reset, which names its game."""

from __future__ import annotations

import gymnasium as gym
from gymnasium.spaces import Discrete

from elfpy.gym_host import game_seed


class CountEnv(gym.Env):
    """Observation: the steps since reset; reward: the action; terminates after `max_count` steps."""

    observation_space = Discrete(5)
    action_space = Discrete(5)

    def __init__(self, max_counts: tuple[int, ...], seed: int = 0) -> None:
        self._max_count_of_seed = {game_seed(seed, game): count for game, count in enumerate(max_counts)}
        self.max_count = None
        self.count = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if self.max_count is None:
            self.max_count = self._max_count_of_seed[seed]
        self.count = 0
        return self.count, {}

    def step(self, action):
        self.count += 1
        return self.count, float(action), self.count == self.max_count, False, {}


def counting(max_counts: tuple[int, ...], seed: int = 0):
    """A factory of CountEnvs for the games of a context seeded `seed`."""
    return lambda: CountEnv(max_counts, seed)
