"""Single-seat games as Gymnasium vector environments, for other libraries.

`make_vector("cartpole", num_envs=8)` returns a `gymnasium.vector.VectorEnv`
whose env i is game i of a deterministic GameContext (row i of every batch is
env i); the game may be native or Python-hosted ("gym:<id>" or a factory).
Episodes reset in the same step they end, as in the engine
(`AutoresetMode.SAME_STEP`): the observation returned with terminated or
truncated set is the next episode's first one, and the state the episode
ended in is in `infos["final_obs"]` (masked by `infos["_final_obs"]`).

Spaces are the game's spec as it is: an action key's space (each
MultiDiscrete component's count, each Box element's bounds), and a game with
several action keys (a Dict action) acts in the `gymnasium.spaces.Dict` of
them, so `step` takes a dict of one array per key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from elfpy.context import GameContext, KeySpec

_TAG = "step"


def _observation_space(spec: KeySpec) -> gym.Space:
    if spec.dtype == np.bool_:
        return gym.spaces.MultiBinary(spec.shape if spec.shape else 1)
    if spec.bounds is not None:
        low, high = spec.bounds
    elif np.issubdtype(spec.dtype, np.integer):
        low, high = np.iinfo(spec.dtype).min, np.iinfo(spec.dtype).max
    else:
        low, high = -np.inf, np.inf
    return gym.spaces.Box(low, high, spec.shape, spec.dtype)


class NativeVectorEnv(VectorEnv):
    """A single-seat game as a Gymnasium VectorEnv (see module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, game: str | Callable[..., Any], num_envs: int, num_threads: int | None = None, seed: int = 0,
                 **game_options: Any) -> None:
        self.game = game
        self.num_envs = num_envs
        self._num_threads = num_threads
        self._seed = seed
        self._options = game_options
        self._context: GameContext | None = None
        probe = GameContext(game, num_games=1, num_threads=1, **game_options)
        if probe.num_seats != 1:
            raise ValueError(f"game '{probe.game}' has {probe.num_seats} seats; make_vector needs a single-seat game")
        keys = probe.spec()
        self._observation_keys = [k for k, s in keys.items() if s.role == "observation"]
        self._action_keys = [k for k, s in keys.items() if s.role == "action"]
        self._name = probe.game
        probe.stop()
        if not self._action_keys:
            raise ValueError(f"game '{self._name}' has no action key; make_vector needs one")
        self.single_observation_space = self._joint({k: _observation_space(keys[k]) for k in self._observation_keys})
        actions = {k: keys[k].space for k in self._action_keys}
        self.single_action_space = actions[self._action_keys[0]] if len(actions) == 1 else gym.spaces.Dict(actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self._batches = None
        self._batch = None

    def _joint(self, spaces: dict[str, gym.Space]) -> gym.Space:
        return spaces[self._observation_keys[0]] if len(spaces) == 1 else gym.spaces.Dict(spaces)

    def _observation(self, prefix: str = "") -> Any:
        arrays = {k: self._batch[prefix + k].copy() for k in self._observation_keys}
        return arrays[self._observation_keys[0]] if len(arrays) == 1 else arrays

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Starts every env afresh (a new engine context, seeded with `seed` if given)."""
        if seed is not None:
            self._seed = seed
        self._stop_context()
        context = GameContext(self.game, num_games=self.num_envs, num_threads=self._num_threads,
                              seed=self._seed, deterministic=True, **self._options)
        inputs = [*self._observation_keys, *("final_" + k for k in self._observation_keys),
                  "r", "terminal", "truncated"]
        context.add_tag(_TAG, batch_size=self.num_envs, inputs=inputs, replies=self._action_keys)
        context.start()
        self._context = context
        self._batches = iter(context)
        self._batch = next(self._batches)
        return self._observation(), {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        if self._context is None:
            raise RuntimeError("call reset() before step()")
        self._batch.reply(self._replies(actions))
        self._batch = next(self._batches)
        ended = self._batch["terminal"].copy()
        truncated = self._batch["truncated"].copy()
        infos: dict[str, Any] = {}
        if ended.any():
            infos["final_obs"] = self._observation("final_")
            infos["_final_obs"] = ended
        rewards = self._batch["r"].astype(np.float64)
        return self._observation(), rewards, ended & ~truncated, truncated, infos

    def _replies(self, actions: Any) -> dict[str, np.ndarray]:
        """The reply of every action key: `actions` itself for one key, its entries for a Dict action."""
        if len(self._action_keys) == 1:
            return {self._action_keys[0]: np.asarray(actions)}
        if not isinstance(actions, Mapping) or set(actions) != set(self._action_keys):
            given = sorted(actions) if isinstance(actions, Mapping) else type(actions).__name__
            raise ValueError(f"game '{self._name}' acts in a Dict of {sorted(self._action_keys)}: step needs a dict "
                             f"of one array per key, got {given}")
        return {k: np.asarray(actions[k]) for k in self._action_keys}

    def close_extras(self, **kwargs: Any) -> None:
        self._stop_context()

    def _stop_context(self) -> None:
        if self._context is not None:
            self._context.stop()
            self._context = None


def make_vector(game: str | Callable[..., Any], num_envs: int, num_threads: int | None = None, seed: int = 0,
                **game_options: Any) -> NativeVectorEnv:
    """A single-seat game as a `gymnasium.vector.VectorEnv` of `num_envs` envs."""
    return NativeVectorEnv(game, num_envs, num_threads=num_threads, seed=seed, **game_options)
