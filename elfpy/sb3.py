"""Stable-Baselines3 adapter: a single-seat game as an SB3 `VecEnv`.

>>> from stable_baselines3 import PPO
>>> from elfpy.sb3 import make_sb3_vec_env
>>> PPO("MlpPolicy", make_sb3_vec_env("cartpole", num_envs=8)).learn(10_000)

SB3 resets an env in the step its episode ends and wants the state it ended
in as `infos[i]["terminal_observation"]`, with `"TimeLimit.truncated"` set for
time limits: the engine's semantics (`elfpy.vector`'s AutoresetMode.SAME_STEP,
which this adapter makes and needs), so this is a thin translation. The
spaces are `elfpy.vector`'s: the game's own (a MultiDiscrete's counts, a
Box's per-element bounds, a Dict of several action keys).
Importing this module needs stable-baselines3 (`pip install 'elf-platform[sb3]'`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as error:
    raise ImportError(f"elfpy.sb3 needs Stable-Baselines3 ({error}): pip install 'elf-platform[sb3]'") from None

from elfpy.vector import AutoresetMode, NativeVectorEnv, make_vector


class ElfVecEnv(VecEnv):
    """Wraps a `NativeVectorEnv` (one engine context) as an SB3 VecEnv."""

    def __init__(self, env: NativeVectorEnv) -> None:
        if env.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise ValueError(f"an SB3 VecEnv resets in the step an episode ends: wrap a make_vector env made with "
                             f"autoreset_mode=AutoresetMode.SAME_STEP, not {env.autoreset_mode}")
        self.env = env  # before VecEnv's __init__, which reads its render_mode through get_attr
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        observation, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        return observation

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        observation, rewards, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        final = info.get("final_obs")
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = final[i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return observation, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.env, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        raise NotImplementedError(f"native games have no per-env method '{method_name}'")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, int) else list(indices)


def make_sb3_vec_env(game: str | Callable[..., Any], num_envs: int, num_threads: int | None = None, seed: int = 0,
                     **game_options: Any) -> ElfVecEnv:
    """A single-seat game (native or Python-hosted) as a Stable-Baselines3 VecEnv."""
    return ElfVecEnv(make_vector(game, num_envs, num_threads=num_threads, seed=seed,
                                 autoreset_mode=AutoresetMode.SAME_STEP, **game_options))
