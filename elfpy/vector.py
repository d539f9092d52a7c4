"""Single-seat games as Gymnasium vector environments, for other libraries.

`make_vector("cartpole", num_envs=8)` returns a `gymnasium.vector.VectorEnv`
whose env i is game i of a deterministic GameContext (row i of every batch is
env i); the game may be native or Python-hosted ("gym:<id>" or a factory).

Autoreset: `autoreset_mode=` one of Gymnasium's `AutoresetMode`s (also in
`metadata["autoreset_mode"]`), each as Gymnasium's `SyncVectorEnv` does it:

- NEXT_STEP (the default, as Gymnasium's): the step that ends an episode
  returns the state it ended in; the env's next step ignores its action and
  returns the next episode's first state with reward 0 and neither flag set
  (the engine resets the game on that reply: `GameContext.defer_resets`).
- SAME_STEP (the engine's own way, and Stable-Baselines3's): the step that
  ends an episode returns the next episode's first state; the state it ended
  in is in `infos["final_obs"]`, an object array with one entry per env
  (None for the others), and the ended env's info in `infos["final_info"]`,
  each with its mask (`_final_obs`, `_final_info`).
- DISABLED: the step that ends an episode returns the state it ended in,
  and the env steps again once `reset(options={"reset_mask": mask})` started
  its next episode (the other envs keep their state).

Spaces are the game's spec: an observation key's space where the game
states one (a native game's bounds are its Gymnasium counterpart's, a hosted
environment keeps its own space), else a Box over the dtype's values; an
action key's space (each MultiDiscrete component's count, each Box
element's bounds), and a game with several action keys (a Dict action) acts
in the `gymnasium.spaces.Dict` of them, so `step` takes a dict of one array
per key.

Seeding: `reset(seed=s)` starts every env afresh, from a context seeded `s`
(`np_random_seed` is then `s`); `reset()` continues the stream: its context
is seeded with the next draw of `np_random` (the first `reset()` uses the
`seed` given to `make_vector`), so it never replays earlier episodes.

A refused action (outside its space, of the wrong shape or dtype) raises
ValueError naming the key, row and game; no env stepped, and the env takes
the next valid action as if the refused one had never come.

Rendering: with `render_mode="rgb_array"`, `render()` returns one RGB frame
per env of the state its row shows (`elfpy.vector_render` says which games
draw themselves, and how); `metadata["render_modes"]` lists it for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from elfpy.context import GameContext, KeySpec
from elfpy.vector_render import Renderer, make_renderer

_TAG = "step"


def observation_space_of(spec: KeySpec) -> gym.Space:
    """The Gymnasium space of an observation key: the one its game states, else a
    Box of its bounds (or its dtype's range), MultiBinary for booleans."""
    if spec.space is not None:
        return spec.space
    if spec.dtype == np.bool_:
        return gym.spaces.MultiBinary(spec.shape if spec.shape else 1)
    if spec.bounds is not None:
        low, high = spec.bounds
    elif np.issubdtype(spec.dtype, np.integer):
        low, high = np.iinfo(spec.dtype).min, np.iinfo(spec.dtype).max
    else:
        low, high = -np.inf, np.inf
    return gym.spaces.Box(low, high, spec.shape, spec.dtype)


def _reset_mask(options: Mapping[str, Any] | None, num_envs: int) -> np.ndarray | None:
    """The `reset_mask` option, checked with the errors of Gymnasium's SyncVectorEnv, or None."""
    options = dict(options or {})
    mask = options.pop("reset_mask", None)
    if options:
        raise ValueError(f"reset options {sorted(options)}: the engine's games take none (only 'reset_mask')")
    if mask is None:
        return None
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not mask.any():
        raise ValueError(f"`options['reset_mask']` must contain a boolean array with at least one True value, "
                         f"got reset_mask={mask}")
    return mask


class NativeVectorEnv(VectorEnv):
    """A single-seat game as a Gymnasium VectorEnv (see module docstring)."""

    def __init__(self, game: str | Callable[..., Any], num_envs: int, num_threads: int | None = None, seed: int = 0,
                 *, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, render_mode: str | None = None,
                 **game_options: Any) -> None:
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"autoreset_mode must be one of {[mode.value for mode in AutoresetMode]}, "
                             f"got {autoreset_mode!r}") from None
        self._same_step = self.autoreset_mode is AutoresetMode.SAME_STEP
        self._disabled = self.autoreset_mode is AutoresetMode.DISABLED
        self._next_step = self.autoreset_mode is AutoresetMode.NEXT_STEP
        self.game = game
        self.num_envs = num_envs
        self.render_mode = render_mode
        self._renderer: Renderer | None = make_renderer(game, render_mode, game_options)
        self._num_threads = num_threads
        self._options = self._renderer.game_options if self._renderer else game_options
        self._np_random, self._np_random_seed = seeding.np_random(seed)
        self._next_seed = seed  # the first reset() without a seed starts where make_vector was told to
        self._context: GameContext | None = None
        probe = GameContext(game, num_games=1, num_threads=1, **self._options)
        if probe.num_seats != 1:
            probe.stop()
            raise ValueError(f"game '{probe.game}' has {probe.num_seats} seats; make_vector needs a single-seat game")
        keys = probe.spec()
        hidden = self._renderer.hidden_keys if self._renderer else ()
        self._observation_keys = [k for k, s in keys.items() if s.role == "observation" and k not in hidden]
        self._action_keys = [k for k, s in keys.items() if s.role == "action"]
        self._name = probe.game
        probe.stop()
        if not self._action_keys:
            raise ValueError(f"game '{self._name}' has no action key; make_vector needs one")
        # The only key of a game with one (the usual case, which step() keeps quick), else None.
        self._action_key = self._action_keys[0] if len(self._action_keys) == 1 else None
        self._observation_key = self._observation_keys[0] if len(self._observation_keys) == 1 else None
        self.metadata = {"autoreset_mode": self.autoreset_mode,
                         "render_modes": ["rgb_array"] if self._renderer else []}
        observed = {k: observation_space_of(keys[k]) for k in self._observation_keys}
        self.single_observation_space = self._joint(observed) if len(observed) == 1 else gym.spaces.Dict(observed)
        self._box_keys = {k for k, space in observed.items() if isinstance(space, gym.spaces.Box)}
        actions = {k: keys[k].space for k in self._action_keys}
        self.single_action_space = actions[self._action_keys[0]] if len(actions) == 1 else gym.spaces.Dict(actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self._batch = None
        # DISABLED: which envs ended (they wait for a reset_mask), the next
        # episodes' first states the engine already has, and the observation
        # last returned (a reset_mask keeps the other envs' entries).
        self._ended = np.zeros(num_envs, np.bool_)
        self._first: dict[str, np.ndarray] = {}
        self._last: dict[str, np.ndarray] = {}

    def _joint(self, values: dict[str, Any]) -> Any:
        """One key's value as it is, several keys' as a dict (the observation space's form)."""
        return values[self._observation_keys[0]] if len(values) == 1 else values

    def _arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        return {k: self._batch[prefix + k].copy() for k in self._observation_keys}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Starts every env afresh (a new engine context, see "Seeding" above),
        or with `options={"reset_mask": mask}` (DISABLED only) the ended envs' next episodes."""
        mask = _reset_mask(options, self.num_envs)
        if mask is not None:
            return self._reset_ended(mask, seed)
        super().reset(seed=seed)  # np_random and np_random_seed, as Gymnasium's VectorEnv sets them
        context_seed = seed if seed is not None else self._next_seed
        self._next_seed = int(self.np_random.integers(2**63))
        self._stop_context()
        context = GameContext(self.game, num_games=self.num_envs, num_threads=self._num_threads,
                              seed=context_seed, deterministic=True, **self._options)
        inputs = [*self._observation_keys, "r", "terminal", "truncated"]
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            context.defer_resets()
        else:
            inputs += ["final_" + k for k in self._observation_keys]
        if self._renderer:
            inputs += [k for k in self._renderer.hidden_keys if k not in inputs]
        context.add_tag(_TAG, batch_size=self.num_envs, inputs=inputs, replies=self._action_keys)
        context.start()
        self._context = context
        self._batch = next(iter(context))
        self._ended[:] = False
        self._last = self._arrays()
        return self._joint({k: v.copy() for k, v in self._last.items()}), {}

    def _reset_ended(self, mask: np.ndarray, seed: int | None) -> tuple[Any, dict]:
        """DISABLED: the next episodes of the envs in `mask`, which must have ended
        (the engine reset them as they ended; the others are not stepped)."""
        if self.autoreset_mode is not AutoresetMode.DISABLED or self._context is None:
            raise ValueError("options['reset_mask'] restarts ended envs with autoreset_mode=DISABLED after a "
                             "first reset(); here reset() without it restarts every env")
        if seed is not None:
            raise ValueError("reset_mask with a seed: the ended envs' next episodes are already drawn from the "
                             "seed of the last full reset(seed=...)")
        running = np.flatnonzero(mask & ~self._ended)
        if running.size:
            raise ValueError(f"options['reset_mask'] resets envs {running.tolist()}, whose episodes go on: the "
                             "engine restarts only envs whose episode ended (reset() without it restarts all)")
        for key, first in self._first.items():
            self._last[key][mask] = first[mask]
        self._ended &= ~mask
        return self._joint({k: v.copy() for k, v in self._last.items()}), {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        if self._context is None:
            raise RuntimeError("call reset() before step()")
        key = self._action_key
        replies = {key: np.asarray(actions)} if key is not None else self._replies(actions)
        if self._disabled and self._ended.any():
            raise ValueError(f"envs {np.flatnonzero(self._ended).tolist()} ended their episode: with "
                             "autoreset_mode=DISABLED, reset(options={'reset_mask': mask}) starts their next one")
        self._batch = batch = self._batch.reply_and_next(replies, refusal_keeps_batch=True)
        # Fresh arrays, as SyncVectorEnv returns: one numpy call each (the
        # batch's views are overwritten by the next step).
        views = batch.arrays
        terminal, truncated = views["terminal"], views["truncated"]
        terminated = np.greater(terminal, truncated)  # terminal and not truncated
        truncated = truncated.copy()
        rewards = views["r"].astype(np.float64)
        key = self._observation_key
        if self._next_step and key is not None:  # the default, and the usual game: nothing more to do
            return views[key].copy(), rewards, terminated, truncated, {}
        if key is not None:
            observation = {key: views[key].copy()}
        else:
            observation = self._arrays()
        infos: dict[str, Any] = {}
        if self._same_step:
            if terminal.any():
                infos = self._final_infos(terminal.copy())
        elif self._disabled:
            ended = terminal.copy()
            if ended.any():  # the ended envs show the state they ended in until a reset_mask
                self._first = observation
                observation = {k: np.where(ended.reshape(-1, *[1] * (v.ndim - 1)), batch["final_" + k], v)
                               for k, v in observation.items()}
                self._ended = ended
            self._last = observation
            observation = {k: v.copy() for k, v in observation.items()}
        return self._joint(observation), rewards, terminated, truncated, infos

    def _final_infos(self, ended: np.ndarray) -> dict[str, Any]:
        """SAME_STEP's infos: each ended env's final observation in an object array (a Box
        entry an array, 0-d for a scalar, as its samples are) and its info (none), with masks."""
        ended_envs = np.flatnonzero(ended)
        rows = {k: self._batch["final_" + k][ended_envs] for k in self._observation_keys}
        final_obs = np.empty(self.num_envs, dtype=object)  # all None (numpy's start for objects), quicker than full
        (key, only), = rows.items() if len(rows) == 1 else ((None, None),)
        if only is not None and (only.ndim > 1 or key not in self._box_keys):  # the common case, kept quick
            for env, row in zip(ended_envs.tolist(), only, strict=True):
                final_obs[env] = row
        else:
            for row, env in enumerate(ended_envs):
                final_obs[env] = self._joint({k: v[row, ...] if k in self._box_keys else v[row]
                                              for k, v in rows.items()})
        return {"final_obs": final_obs, "_final_obs": ended, "final_info": {}, "_final_info": ended.copy()}

    def _replies(self, actions: Any) -> dict[str, np.ndarray]:
        """The reply of every action key of a Dict action: the entries of `actions`."""
        if not isinstance(actions, Mapping) or set(actions) != set(self._action_keys):
            given = sorted(actions) if isinstance(actions, Mapping) else type(actions).__name__
            raise ValueError(f"game '{self._name}' acts in a Dict of {sorted(self._action_keys)}: step needs a dict "
                             f"of one array per key, got {given}")
        return {k: np.asarray(actions[k]) for k in self._action_keys}

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per env, of the state its last observation shows (render_mode="rgb_array")."""
        if self._renderer is None:
            if self.render_mode is None:
                return None  # as Gymnasium's envs do without a render mode
            raise ValueError(f"game '{self._name}' draws no frames; render_mode must be None")
        if self._context is None:
            raise RuntimeError("call reset() before render()")
        return self._renderer.frames(self._batch)

    def close_extras(self, **kwargs: Any) -> None:
        self._stop_context()
        if self._renderer:
            self._renderer.close()

    def _stop_context(self) -> None:
        if self._context is not None:
            self._context.stop()
            self._context = None


def make_vector(game: str | Callable[..., Any], num_envs: int, num_threads: int | None = None, seed: int = 0,
                **options: Any) -> NativeVectorEnv:
    """A single-seat game as a `gymnasium.vector.VectorEnv` of `num_envs` envs;
    `autoreset_mode` and `render_mode` as the module docstring says, the other
    keyword arguments are the game's options."""
    return NativeVectorEnv(game, num_envs, num_threads=num_threads, seed=seed, **options)
