"""Named set-ups of Python-hosted games: an environment factory plus hooks.

`GameContext("gym:ALE/Pong-v5", num_games=16, preset="atari")` runs Pong
with the standard DQN preprocessing instead of raw frames; preset="minigrid"
turns MiniGrid's dict observation (image, direction, mission text) into
arrays; preset="minatar" gives MinAtar's object planes channels first. A
preset is a factory `make(env, **env_kwargs)` (`env`: the id's EnvSpec, see
`registered_spec`) and optional `preprocess` and `reshape_reward` hooks (see
`elfpy.gym_host`); add one to `PRESETS`.
"""

from __future__ import annotations

import functools
import importlib
import re
import zlib
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

# Gymnasium ids whose environments live in a plugin package that must be
# imported first: most register on import; "module:function" names the
# registering function of one that only declares a gymnasium.envs entry point
# (which gymnasium 1.x no longer loads by itself).
_PLUGINS = {"ALE/": "ale_py", "MiniGrid-": "minigrid", "BabyAI-": "minigrid", "MinAtar/": "minatar.gym:register_envs"}
_EXTRAS = {"ale_py": "atari", "minigrid": "minigrid", "minatar.gym": "minatar"}  # the package's extra (setup.py)


def registered_spec(env_id: str) -> Any:
    """The Gymnasium registry's EnvSpec of `env_id` in this process (importing
    the plugin package that registers it). Workers are fresh interpreters
    whose registry lacks what the user's script registered
    (`gymnasium.register(...)`), so they make their environments from this
    spec rather than from the id."""
    import gymnasium

    for prefix, plugin in _PLUGINS.items():
        module, _, register = plugin.partition(":")
        if env_id.startswith(prefix):
            try:
                imported = importlib.import_module(module)
            except ImportError:
                raise ValueError(f"game 'gym:{env_id}' needs {module.partition('.')[0]}: "
                                 f"pip install 'elf-platform[{_EXTRAS[module]}]'") from None
            if register and env_id not in gymnasium.registry:
                getattr(imported, register)()
    return gymnasium.spec(env_id)


def make_gym_env(env: Any, **kwargs: Any) -> Any:
    """gymnasium.make(env), `env` being an EnvSpec (see `registered_spec`) or
    a registered id."""
    import gymnasium

    return gymnasium.make(registered_spec(env) if isinstance(env, str) else env, **kwargs)


class Preset(NamedTuple):
    make: Callable[..., Any]
    preprocess: Callable[[Any], Any] | None = None
    reshape_reward: Callable[[Any, Any, float, bool], float] | None = None
    # Inclusive value bounds of preprocessed observation keys, stated in the
    # spec (e.g. a token vocabulary, so models embed the key).
    bounds: dict[str, tuple[float, float]] | None = None


def atari_env(env: Any, noop_max: int = 30, frame_skip: int = 4, screen_size: int = 84, stack: int = 4,
              terminal_on_life_loss: bool = False, **kwargs: Any) -> Any:
    """The standard Atari preprocessing (Mnih et al. 2015; Machado et al. 2018):
    up to `noop_max` no-ops at reset, `frame_skip` with max-pooling of the last
    two frames, `screen_size` grayscale, `stack` frames stacked ([stack, 84, 84]
    uint8). Sticky actions stay as the v5 environments set them.
    `terminal_on_life_loss` ends an episode with each lost life (episodic life)."""
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    env = make_gym_env(env, frameskip=1, **kwargs)  # the wrapper skips frames, max-pooling them
    env = AtariPreprocessing(env, noop_max=noop_max, frame_skip=frame_skip, screen_size=screen_size,
                             terminal_on_life_loss=terminal_on_life_loss, grayscale_obs=True)
    return FrameStackObservation(env, stack)


def clip_reward(observation: Any, action: Any, reward: float, done: bool) -> float:
    """The sign of the reward, as DQN and A3C trained on Atari."""
    return float(np.sign(reward))


# MiniGrid: the dict observation as numbers. The words of every MiniGrid and
# BabyAI mission (minigrid 3.2.0); a word's id is its place here plus one, so
# append new words, never reorder.
MINIGRID_WORDS = (
    "a", "after", "and", "at", "avoid", "ball", "behind", "blue", "box", "door", "end", "fetch", "find",
    "from", "front", "get", "go", "goal", "green", "grey", "hallway", "in", "key", "lava", "left", "matching",
    "must", "near", "next", "object", "of", "on", "open", "opening", "pick", "purple", "put", "reach", "red",
    "right", "room", "rooms", "square", "the", "then", "to", "traverse", "unlock", "up", "use", "yellow",
    "you", "your", ",",
)
MINIGRID_OTHER_WORDS = 64  # buckets for words not in the list (CRC-32 of the word)
MINIGRID_VOCAB = 1 + len(MINIGRID_WORDS) + MINIGRID_OTHER_WORDS  # token ids lie in [0, MINIGRID_VOCAB)
MINIGRID_MISSION_TOKENS = 48  # the longest mission seen (BabyAI) has 37 tokens
_WORD_IDS = {word: i + 1 for i, word in enumerate(MINIGRID_WORDS)}
_TOKEN = re.compile(r"[a-z]+|[^\sa-z]")


def mission_tokens(text: str, length: int = MINIGRID_MISSION_TOKENS) -> np.ndarray:
    """A mission as int64 token ids ``[length]``: lower-cased words and
    punctuation, a known word its fixed id, any other one of
    ``MINIGRID_OTHER_WORDS`` buckets by CRC-32 (the same in every process,
    unlike ``hash``). Right-aligned, padded with 0 in front, so a GRU's last
    state follows the last word; a longer mission keeps its first ``length``."""
    ids = [_WORD_IDS.get(word) or 1 + len(MINIGRID_WORDS) + zlib.crc32(word.encode()) % MINIGRID_OTHER_WORDS
           for word in _TOKEN.findall(text.lower())][:length]
    tokens = np.zeros(length, np.int64)
    if ids:
        tokens[length - len(ids):] = ids
    return tokens


def minigrid_observation(observation: dict[str, Any]) -> dict[str, np.ndarray]:
    """MiniGrid's dict observation as arrays the default models read:
    ``image`` float32 ``[3, 7, 7]`` (channels first: object, colour and state
    indices of the agent's egocentric view, unscaled, as torch-rl feeds them),
    ``direction`` int64 ``[]`` (0-3, scalar: models skip it unless named in
    ``--obs_keys``) and ``mission`` int64 ``[MINIGRID_MISSION_TOKENS]``
    (``mission_tokens``). Other keys pass through.

    The preset states ``mission``'s bounds [0, MINIGRID_VOCAB), so
    ``--model auto`` reads it with the token encoder (embedding + GRU).
    Where the mission never changes (DoorKey, Empty, ...) the image alone
    is enough: ``--obs_keys image``."""
    out = {key: np.asarray(value) for key, value in observation.items()
           if key not in ("image", "direction", "mission")}
    out["image"] = np.ascontiguousarray(np.asarray(observation["image"], np.float32).transpose(2, 0, 1))
    out["direction"] = np.asarray(observation["direction"], np.int64)
    out["mission"] = mission_tokens(observation["mission"])
    return out


def minatar_observation(observation: Any) -> np.ndarray:
    """MinAtar's boolean object planes ``[10, 10, C]`` as float32 ``[C, 10, 10]``, so the
    default model reads them with the conv encoder (as MinAtar's own DQN does) rather
    than flattening them into an MLP."""
    return np.ascontiguousarray(np.asarray(observation, np.float32).transpose(2, 0, 1))


PRESETS: dict[str, Preset] = {
    "atari": Preset(atari_env, reshape_reward=clip_reward),
    "minigrid": Preset(make_gym_env, preprocess=minigrid_observation,
                       bounds={"mission": (0.0, float(MINIGRID_VOCAB - 1))}),
    "minatar": Preset(make_gym_env, preprocess=minatar_observation),
}


def resolve(game: Any, preset: str | None, env_kwargs: dict[str, Any]) -> tuple[str, Preset]:
    """A hosted game's name and set-up: its factory (taking no arguments)
    and the preset's hooks. `game` is "gym:<id>", "pz:<module>" (a PettingZoo
    game, `elfpy.pz_host`) or a callable factory (an AECEnv it returns is
    stepped turn by turn, `elfpy.pz_host.as_parallel`)."""
    if callable(game):
        if preset is not None:
            raise ValueError("a preset applies to 'gym:<id>' games, not to a factory")
        from elfpy.pz_host import make_from_factory

        name = getattr(game, "__name__", type(game).__name__)
        return f"py:{name}", Preset(functools.partial(make_from_factory, game, **env_kwargs))
    if game.startswith("pz:"):
        if preset is not None:
            raise ValueError(f"a preset applies to 'gym:<id>' games, not to the PettingZoo game '{game}'")
        from elfpy.pz_host import make_parallel_env

        return game, Preset(functools.partial(make_parallel_env, game[len("pz:"):], **env_kwargs))
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"unknown preset '{preset}'; valid presets: {sorted(PRESETS)}")
    spec = registered_spec(game[len("gym:"):])
    if preset is None:
        return game, Preset(functools.partial(make_gym_env, spec, **env_kwargs))
    chosen = PRESETS[preset]
    return f"{game} ({preset})", chosen._replace(make=functools.partial(chosen.make, spec, **env_kwargs))
