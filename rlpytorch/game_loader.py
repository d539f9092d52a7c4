"""``GameLoader``: the engine side of a run, as arguments.

It builds ``elfpy.GameContext`` objects with the tags a trainer or evaluator
needs (and the reply key ``h`` of a recurrent model), and reads the
observation spec and action count from the game's spec. This is the one
module of rlpytorch that touches the engine, and it imports ``elfpy`` only
when a context is made (``context_factory`` can replace it, e.g. with a test
double).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .args_provider import Arg, Configurable
from .distributions import BEHAVIOUR_LOGP, BEHAVIOUR_PI
from .spaces import action_space

__all__ = ["ACTOR_INPUTS", "ACTOR_REPLIES", "STATE_KEY", "TRAIN_INPUTS", "GameLoader", "parse_options"]

# Besides the observation keys the model reads (and, for training, their
# ``final_`` copies where the game has them, so a time-limit truncation can
# bootstrap from the state it ended in), and ``h`` for recurrent models:
ACTOR_INPUTS = ["r", "terminal", "truncated", "episode_return", "episode_length"]
ACTOR_REPLIES = ["a", "pi", "V"]
TRAIN_INPUTS = ["a", "pi", "V", "r", "terminal", "truncated"]
STATE_KEY = "h"  # a recurrent model's per-game state, replied by the actor and kept in the history


def _elfpy_context(game: str, **kwargs: Any) -> Any:
    import elfpy

    return elfpy.GameContext(game, **kwargs)


class GameLoader(Configurable):
    """Which game, how many copies, on how many threads, and the tags' shapes."""

    args = (
        Arg("game", "cartpole", "game to play: a native game, or 'gym:<Gymnasium id>' hosted in worker processes"),
        Arg("num_games", 64, "games run at once"),
        Arg("num_threads", 0, "engine worker threads (0: one per core; gym games: one per worker process)"),
        Arg("seed", 0, "seed of the games, the sampler and the model initialization"),
        Arg("deterministic", False, "same batches for the same seed, whatever the threads"),
        Arg("actor_batch", 64, "rows per actor batch"),
        Arg("train_batch", 64, "games per train window"),
        Arg("T", 6, "rows per train window (consecutive windows share one row)"),
        Arg("game_options", "", "the game's options, e.g. 'max_steps=200,foo=1' (gym games: keyword arguments "
            "of gymnasium.make, values as Python literals)"),
        Arg("num_workers", 0, "gym games: worker processes hosting the environments (0: one per core)"),
        Arg("preset", "", "gym games: a standard set-up from elfpy.gym_presets, e.g. 'atari'"),
        Arg("obs_keys", "", "observation keys the model reads, comma-separated (empty: all with a shape)"),
    )

    def __init__(
        self,
        game: str = "cartpole",
        num_games: int = 64,
        num_threads: int = 0,
        seed: int = 0,
        deterministic: bool = False,
        actor_batch: int = 64,
        train_batch: int = 64,
        T: int = 6,
        game_options: str = "",
        obs_keys: str = "",
        num_workers: int = 0,
        preset: str = "",
        context_factory: Callable[..., Any] = _elfpy_context,
    ) -> None:
        self.game = game
        self.num_games = num_games
        self.num_threads = num_threads or None  # None: the engine picks (one per core, or per gym worker)
        self.seed = seed
        self.deterministic = deterministic
        self.actor_batch = actor_batch
        self.train_batch = train_batch
        self.T = T
        self.hosted = game.startswith("gym:")
        self.options = parse_options(game_options, literal=self.hosted)
        if self.hosted:
            self.options.update(num_workers=num_workers or None, preset=preset or None)
        elif num_workers or preset:
            raise ValueError(f"--num_workers and --preset are for 'gym:<id>' games, not the native game {game!r}")
        self.obs_keys = [k.strip() for k in obs_keys.split(",") if k.strip()]
        self.context_factory = context_factory

    def context(self, num_games: int | None = None, seed: int | None = None) -> Any:
        """A context without tags (add your own, or call ``add_train_tags``)."""
        return self.context_factory(
            self.game,
            num_games=num_games or self.num_games,
            num_threads=self.num_threads,
            seed=self.seed if seed is None else seed,
            deterministic=self.deterministic,
            **self.options,
        )

    def observation_spec(self, gc: Any) -> dict[str, Any]:
        """The observation keys the model reads, with their ``KeySpec``: ``--obs_keys``,
        or every observation key of the game with at least one dimension (scalars
        such as MiniRTS's ``frames`` are bookkeeping)."""
        spec = gc.spec()
        if self.obs_keys:
            unknown = [k for k in self.obs_keys if k not in spec]
            if unknown:
                raise ValueError(f"--obs_keys {unknown} are not keys of {self.game!r}; its keys: {sorted(spec)}")
            return {k: spec[k] for k in self.obs_keys}
        return {k: v for k, v in spec.items() if v.role == "observation" and len(v.shape) > 0}

    @staticmethod
    def num_actions(gc: Any) -> Any:
        """Width of the behaviour policy ``pi`` (the game's one discrete action);
        for any other action space, the gymnasium space (``spaces.action_space``)."""
        spec = gc.spec()
        return int(spec["pi"].shape[0]) if "pi" in spec else action_space(spec)

    def add_train_tags(self, gc: Any, state_size: int = 0) -> Any:
        """Add the ``actor`` and ``train`` tags of actor-critic training to ``gc``.

        ``state_size > 0`` (a recurrent model) declares the reply key ``h``
        ``[state_size]`` that the actor replies and the windows carry.
        """
        obs = list(self.observation_spec(gc))
        spec = gc.spec()
        finals = [f"final_{k}" for k in obs if f"final_{k}" in spec]
        state = self._add_state_key(gc, state_size)
        behaviour = _behaviour_keys(gc)
        gc.add_tag("actor", self.actor_batch, obs + _actor_inputs(gc), behaviour(ACTOR_REPLIES) + state)
        gc.add_tag("train", self.train_batch, obs + finals + behaviour(TRAIN_INPUTS) + state, T=self.T)
        return gc

    def train_context(self, state_size: int = 0) -> Any:
        """A new context with the ``actor`` and ``train`` tags (see ``add_train_tags``)."""
        return self.add_train_tags(self.context(), state_size)

    def eval_context(self, num_games: int, seed: int | None = None, state_size: int = 0) -> Any:
        """A context with only an ``actor`` tag, for evaluation."""
        gc = self.context(num_games=num_games, seed=seed)
        obs = list(self.observation_spec(gc))
        state = self._add_state_key(gc, state_size)
        replies = _behaviour_keys(gc)(ACTOR_REPLIES) + state
        gc.add_tag("actor", min(self.actor_batch, num_games), obs + _actor_inputs(gc), replies)
        return gc

    @staticmethod
    def _add_state_key(gc: Any, state_size: int) -> list[str]:
        if not state_size:
            return []
        gc.add_key(STATE_KEY, "float32", [state_size], "recurrent state the actor started this step from")
        return [STATE_KEY]


def _behaviour_keys(gc: Any) -> Callable[[list[str]], list[str]]:
    """How the actor describes its behaviour policy: ``pi`` for one discrete action
    (the engine declares it), else ``logp`` (declared here): the returned function
    puts the right one in a key list."""
    if BEHAVIOUR_PI in gc.spec():
        return list
    gc.add_key(BEHAVIOUR_LOGP, "float32", [], "log-probability of the replied action under the behaviour policy")
    return lambda keys: [BEHAVIOUR_LOGP if k == BEHAVIOUR_PI else k for k in keys]


def _actor_inputs(gc: Any) -> list[str]:
    """The actor's inputs, plus ``won`` for games that report a winner."""
    return ACTOR_INPUTS + (["won"] if "won" in gc.spec() else [])


def parse_options(text: str, literal: bool = False) -> dict[str, Any]:
    """'a=1,b=x' as a dict; values stay text (native games parse their own)
    unless `literal`, where '1' becomes 1 and 'x' stays 'x'."""
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"game option {item!r} is not name=value")
        options[name.strip()] = _literal(value.strip()) if literal else value.strip()
    return options


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
