"""Small Gymnasium environments for the tests of hosted spaces, observation
checks (dtype, shape, finite values) and worker timeouts. In a module of their own: worker processes
import it to unpickle the factories, and it imports nothing heavy."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from elfpy.gym_host import game_seed

MULTI_DISCRETE = spaces.MultiDiscrete([3, 2])
BOX = spaces.Box(np.array([-1.0, -5.0], np.float32), np.array([1.0, 5.0], np.float32))
DICT = spaces.Dict({"md": MULTI_DISCRETE, "box": BOX})

HANGING_GAME = 1  # the game whose environment misbehaves (a context seeded 0, two games, two workers)


def _flat(action) -> np.ndarray:
    """An action's values side by side (a Dict's entries in its order)."""
    parts = action.values() if isinstance(action, dict) else [action]
    return np.concatenate([np.asarray(part, np.float32).reshape(-1) for part in parts])


class EchoEnv(gym.Env):
    """Observes the last action it was given, as float32 values (zeros at
    first), so a test sees what reached env.step; never ends."""

    def __init__(self, action_space: spaces.Space) -> None:
        self.action_space = action_space
        self.size = _flat(action_space.sample()).size
        self.observation_space = spaces.Box(-np.inf, np.inf, (self.size,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(self.size, np.float32), {}

    def step(self, action):
        return _flat(action), 0.0, False, False, {}


def multi_discrete() -> EchoEnv:
    return EchoEnv(MULTI_DISCRETE)


def box() -> EchoEnv:
    return EchoEnv(BOX)


def dict_of_both() -> EchoEnv:
    return EchoEnv(DICT)


class DriftEnv(gym.Env):
    """Observes {"level", "pos"}: an integer level and two positions; the
    environment of game HANGING_GAME changes one of them in its first step,
    as `drift` says: "dtype" (level 0.7) or "shape" (three positions)."""

    action_space = spaces.Discrete(2)

    def __init__(self, drift: str) -> None:
        self.drift = drift
        self.drifts = False

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.drifts = seed == game_seed(0, HANGING_GAME)
        return {"level": 0, "pos": np.zeros(2, np.float32)}, {}

    def step(self, action):
        observation = {"level": 0, "pos": np.zeros(2, np.float32)}
        if self.drifts and self.drift == "dtype":
            observation["level"] = 0.7
        if self.drifts and self.drift == "shape":
            observation["pos"] = np.zeros(3, np.float32)
        return observation, 0.0, False, False, {}


def drifting_dtype() -> DriftEnv:
    return DriftEnv("dtype")


def drifting_shape() -> DriftEnv:
    return DriftEnv("shape")


class SpoilingEnv(gym.Env):
    """Observes two float64 zeros, rewards 0 and never ends, except that the
    environment of game HANGING_GAME returns a non-finite value in step
    SPOILED_STEP, as `spoil` says: "reward" (an infinite reward) or
    "observation" (a NaN in s[1])."""

    observation_space = spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = spaces.Discrete(2)

    def __init__(self, spoil: str) -> None:
        self.spoil = spoil
        self.spoils = False
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.spoils = seed == game_seed(0, HANGING_GAME)
        return np.zeros(2), {}

    def step(self, action):
        self.t += 1
        observation, reward = np.zeros(2), 0.0
        if self.spoils and self.t == SPOILED_STEP:
            if self.spoil == "reward":
                reward = float("inf")
            else:
                observation[1] = np.nan
        return observation, reward, False, False, {}


SPOILED_STEP = 3


def spoiled_reward() -> SpoilingEnv:
    return SpoilingEnv("reward")


def spoiled_observation() -> SpoilingEnv:
    return SpoilingEnv("observation")


class HangingResetEnv(gym.Env):
    """Hangs in its first reset in game HANGING_GAME (seeded as a context
    seeded 0 seeds it); every other game's resets and steps are instant."""

    observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed == game_seed(0, HANGING_GAME):
            time.sleep(3600)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), 0.0, False, False, {}


class HangingProbeEnv(HangingResetEnv):
    """Hangs in every reset seeded as game 0's (the one that reads the
    game's spaces), or with `in_constructor` when made."""

    def __init__(self, in_constructor: bool = False) -> None:
        if in_constructor:
            time.sleep(3600)

    def reset(self, *, seed=None, options=None):
        if seed == game_seed(0, 0):
            time.sleep(3600)
        return super().reset(seed=seed)


def hanging_constructor() -> HangingProbeEnv:
    return HangingProbeEnv(in_constructor=True)


def hanging_first_reset() -> HangingProbeEnv:
    return HangingProbeEnv()


class TwoStepDictEnv(gym.Env):
    """Observes {"t": steps so far, "pos": (t, -t)}; ends after two steps."""

    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observe(), {}

    def observe(self):
        return {"t": self.t, "pos": np.array([self.t, -self.t], np.float32)}

    def step(self, action):
        self.t += 1
        return self.observe(), 1.0, self.t == 2, False, {}
