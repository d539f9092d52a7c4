"""Named set-ups of Python-hosted games: an environment factory plus hooks.

`GameContext("gym:ALE/Pong-v5", num_games=16, preset="atari")` runs Pong
with the standard DQN preprocessing instead of raw frames. A preset is a
factory `make(env_id, **env_kwargs)` and optional `preprocess` and
`reshape_reward` hooks (see `elfpy.gym_host`); add one to `PRESETS`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

# Gymnasium ids whose environments live in a plugin package that must be
# imported first (gymnasium registers them on import).
_PLUGINS = {"ALE/": "ale_py", "MiniGrid-": "minigrid", "BabyAI-": "minigrid"}


def make_gym_env(env_id: str, **kwargs: Any) -> Any:
    """gymnasium.make(env_id), importing the package that registers it."""
    import gymnasium

    for prefix, module in _PLUGINS.items():
        if env_id.startswith(prefix):
            importlib.import_module(module)
    return gymnasium.make(env_id, **kwargs)


class Preset(NamedTuple):
    make: Callable[..., Any]
    preprocess: Callable[[Any], Any] | None = None
    reshape_reward: Callable[[Any, Any, float, bool], float] | None = None


def atari_env(env_id: str, noop_max: int = 30, frame_skip: int = 4, screen_size: int = 84, stack: int = 4,
              terminal_on_life_loss: bool = False, **kwargs: Any) -> Any:
    """The standard Atari preprocessing (Mnih et al. 2015; Machado et al. 2018):
    up to `noop_max` no-ops at reset, `frame_skip` with max-pooling of the last
    two frames, `screen_size` grayscale, `stack` frames stacked ([stack, 84, 84]
    uint8). Sticky actions stay as the v5 environments set them.
    `terminal_on_life_loss` ends an episode with each lost life (episodic life)."""
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    env = make_gym_env(env_id, frameskip=1, **kwargs)  # the wrapper skips frames, max-pooling them
    env = AtariPreprocessing(env, noop_max=noop_max, frame_skip=frame_skip, screen_size=screen_size,
                             terminal_on_life_loss=terminal_on_life_loss, grayscale_obs=True)
    return FrameStackObservation(env, stack)


def clip_reward(observation: Any, action: Any, reward: float, done: bool) -> float:
    """The sign of the reward, as DQN and A3C trained on Atari."""
    return float(np.sign(reward))


PRESETS: dict[str, Preset] = {
    "atari": Preset(atari_env, reshape_reward=clip_reward),
}


def resolve(game: Any, preset: str | None, env_kwargs: dict[str, Any]) -> tuple[str, Preset]:
    """A hosted game's name and set-up: its factory (taking no arguments)
    and the preset's hooks. `game` is "gym:<id>" or a callable factory."""
    if callable(game):
        if preset is not None:
            raise ValueError("a preset applies to 'gym:<id>' games, not to a factory")
        name = getattr(game, "__name__", type(game).__name__)
        return f"py:{name}", Preset(functools.partial(game, **env_kwargs))
    env_id = game[len("gym:"):]
    if preset is None:
        return game, Preset(functools.partial(make_gym_env, env_id, **env_kwargs))
    if preset not in PRESETS:
        raise ValueError(f"unknown preset '{preset}'; valid presets: {sorted(PRESETS)}")
    chosen = PRESETS[preset]
    return f"{game} ({preset})", chosen._replace(make=functools.partial(chosen.make, env_id, **env_kwargs))
