"""One game as a single `gymnasium.Env`: `elfpy.make("cartpole")`.

For the tools that take one environment (Gymnasium's and Stable-Baselines3's
`check_env`, wrappers, scripts written for `gymnasium.make`). It is env 0 of
a `make_vector` env without autoreset (`AutoresetMode.DISABLED`): the engine
has the next episode's first state ready when one ends, so `reset()` after
an episode starts the next one at once, continuing the game's random
stream; `reset(seed=s)` (or a `reset()` in the middle of an episode) starts
afresh from a new context, seeded `s` or with the next draw of `np_random`,
so resets are deterministic as Gymnasium's `check_env` wants them.

A scalar Box observation (a key of shape ()) is a Box of shape (1,) here:
Stable-Baselines3's `check_env` cannot index a 0-d observation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from elfpy.vector import NativeVectorEnv


def _at_least_1d(space: gym.Space) -> gym.Space:
    """`space` with each scalar Box (of a Dict too) of shape (1,)."""
    if isinstance(space, gym.spaces.Dict):
        return gym.spaces.Dict({key: _at_least_1d(entry) for key, entry in space.spaces.items()})
    if isinstance(space, gym.spaces.Box) and space.shape == ():
        return gym.spaces.Box(space.low.reshape(1), space.high.reshape(1), (1,), space.dtype)
    return space


def _row(batched: np.ndarray, space: gym.Space) -> Any:
    """Row 0 of a batched observation key, a Box's shaped as its space."""
    return batched[0].reshape(space.shape) if isinstance(space, gym.spaces.Box) else batched[0]


class SingleEnv(gym.Env):
    """A single-seat game as one `gymnasium.Env` (see module docstring)."""

    def __init__(self, game: str | Callable[..., Any], seed: int = 0, num_threads: int | None = 1,
                 render_mode: str | None = None, **game_options: Any) -> None:
        self._vector = NativeVectorEnv(game, 1, num_threads=num_threads, seed=seed,
                                       autoreset_mode=AutoresetMode.DISABLED, render_mode=render_mode, **game_options)
        self.observation_space = _at_least_1d(self._vector.single_observation_space)
        self.action_space = self._vector.single_action_space
        self.render_mode = render_mode
        self.metadata = {"render_modes": self._vector.metadata["render_modes"], "render_fps": 30}
        self._np_random, self._np_random_seed = self._vector.np_random, self._vector.np_random_seed
        self._episode_over = False
        self._started = False

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """A new episode: (observation, info); with `seed`, the game's stream starts anew from it."""
        if options:
            raise ValueError(f"reset options {sorted(options)}: the engine's games take none")
        if seed is None and self._started and self._episode_over:
            observation, info = self._vector.reset(options={"reset_mask": np.ones(1, np.bool_)})
        else:
            observation, info = self._vector.reset(seed=seed)
        self._np_random, self._np_random_seed = self._vector.np_random, self._vector.np_random_seed
        self._started, self._episode_over = True, False
        return self._unbatched(observation), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """One step: (observation, reward, terminated, truncated, info), as `gymnasium.Env.step`."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._episode_over:
            raise RuntimeError("the episode ended: call reset() before step()")
        if isinstance(self.action_space, gym.spaces.Dict):
            batched = {key: np.asarray(value)[None] for key, value in action.items()}
        else:
            batched = np.asarray(action)[None]
        observation, reward, terminated, truncated, info = self._vector.step(batched)
        self._episode_over = bool(terminated[0] or truncated[0])
        return self._unbatched(observation), float(reward[0]), bool(terminated[0]), bool(truncated[0]), info

    def _unbatched(self, observation: Any) -> Any:
        """Env 0's observation, each Box key shaped as its space (a scalar as [1])."""
        if isinstance(observation, dict):
            return {key: _row(value, self.observation_space[key]) for key, value in observation.items()}
        return _row(observation, self.observation_space)

    def render(self) -> np.ndarray | None:
        """The game's picture (with `render_mode="rgb_array"`), else None."""
        frames = self._vector.render()
        return None if frames is None else frames[0]

    def close(self) -> None:
        """Stops the game's engine."""
        self._vector.close()


def make(game: str | Callable[..., Any], seed: int = 0, **options: Any) -> SingleEnv:
    """A single-seat game (native or Python-hosted) as one `gymnasium.Env`;
    `render_mode` as `make_vector`'s, the other keyword arguments are the game's options."""
    return SingleEnv(game, seed=seed, **options)
