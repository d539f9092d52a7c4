"""``GameLoader``: the engine side of a run, as arguments.

It builds ``elfpy.GameContext`` objects with the tags a trainer or evaluator
needs (and the reply key ``h`` of a recurrent model), and reads the
observation spec and action count from the game's spec. This is the one
module of rlpytorch that touches the engine, and it makes a context only
through ``context_factory`` (which a test double can replace); the engine's
counts are bounded by ``elfpy.limits.MAX_COUNT`` already when parsed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gymnasium import spaces

from elfpy.limits import MAX_COUNT

from .args_provider import Configurable, at_least, setting, short_repr
from .distributions import BEHAVIOUR_LOGP, BEHAVIOUR_PI
from .spaces import action_keys, action_space

__all__ = [
    "ACTOR_INPUTS",
    "ACTOR_REPLIES",
    "STATE_KEY",
    "GameLoader",
    "parse_options",
]

# Besides the observation keys the model reads (and, for training, their
# ``final_`` copies where the game has them, so a time-limit truncation can
# bootstrap from the state it ended in), and ``h`` for recurrent models:
ACTOR_INPUTS = ["r", "terminal", "truncated", "episode_return", "episode_length"]
# In the reply and window keys a trainer declares (``add_tags``), ``a`` stands for the game's
# action keys (a Dict action's entries), ``pi`` for the behaviour policy's key (``logp`` for other
# than one Discrete action); pi and V are declared here (add_key). An evaluation's actor replies:
ACTOR_REPLIES = ["a", "pi", "V"]
STATE_KEY = "h"  # a recurrent model's per-game state, replied by the actor and kept in the history
# A model's previous action / reward inputs (rlpytorch.acting.prev_inputs): key -> shape, replied like ``h``.
PrevShapes = Mapping[str, Sequence[int]]


def _elfpy_context(game: str, **kwargs: Any) -> Any:
    import elfpy

    return elfpy.GameContext(game, **kwargs)


@dataclass(eq=False)
class GameLoader(Configurable):
    """Which game, how many copies, on how many threads, and the tags' shapes."""

    game: str = setting(
        "cartpole", "game to play: a native game, or 'gym:<Gymnasium id>' or 'pz:<PettingZoo module>' (one seat "
        "per agent) hosted in worker processes"
    )
    num_games: int = setting(64, "games run at once", bounds=at_least(1, MAX_COUNT))
    num_threads: int = setting(0, "engine worker threads (0: one per core; gym games: one per worker process)",
                               bounds=at_least(0, MAX_COUNT))
    deterministic: bool = setting(False, "same batches for the same seed, whatever the threads")
    actor_batch: int = setting(64, "rows per actor batch", bounds=at_least(1, MAX_COUNT))
    alternate: bool = setting(False, "alternating sampler: the actor's batches are the two halves of the games, "
                                     "one half steps while the other's batch is on the device (--actor_batch unused)")
    train_batch: int = setting(64, "games per train window", bounds=at_least(1, MAX_COUNT))
    T: int = setting(6, "rows per train window (consecutive windows share one row)", bounds=at_least(2, MAX_COUNT))
    game_options: str = setting(
        "",
        "the game's options, e.g. 'max_steps=200,foo=1' (gym games: keyword arguments "
        "of gymnasium.make, values as Python literals)",
    )
    num_workers: int = setting(0, "gym/pz games: worker processes hosting the environments; envpool games: "
                                  "envpool's threads (0: one per core)", bounds=at_least(0, MAX_COUNT))
    preset: str = setting("", "gym games: a standard set-up from elfpy.gym_presets, e.g. 'atari'")
    obs_keys: str = setting("", "observation keys the model reads, comma-separated (empty: all with a shape)")
    context_factory: Callable[..., Any] = field(default=_elfpy_context, repr=False)

    def __post_init__(self) -> None:
        # Games stepped outside the engine's own code (Python-hosted, envpool's threads): they
        # take --num_workers and their options are Python literals.
        self.hosted = self.game.startswith(("gym:", "pz:", "envpool:"))
        self.options = parse_options(self.game_options, literal=self.hosted)
        if self.hosted:
            self.options.update(num_workers=self.num_workers or None, preset=self.preset or None)
        elif self.num_workers or self.preset:
            raise ValueError(
                f"--num_workers and --preset are for 'gym:', 'pz:' or 'envpool:' games, not the native game "
                f"{self.game!r}"
            )
        self.model_keys = [k.strip() for k in self.obs_keys.split(",") if k.strip()]

    def context(self, num_games: int | None = None, *, seed: int) -> Any:
        """A context without tags (add your own, or a trainer's: ``Trainer.add_tags``), its games
        seeded with ``seed`` (the run's seed is not the loader's: ``core.seeding.RunSeed``)."""
        return self.context_factory(
            self.game,
            num_games=num_games or self.num_games,
            num_threads=self.num_threads or None,  # None: the engine picks (one per core, or per gym worker)
            seed=seed,
            deterministic=self.deterministic,
            **self.options,
        )

    def observation_spec(self, context: Any) -> dict[str, Any]:
        """The observation keys the model reads, with their ``KeySpec``: ``--obs_keys``,
        or every observation key of the game with at least one dimension (scalars
        such as MiniRTS's ``frames`` are bookkeeping)."""
        spec = context.spec()
        if self.model_keys:
            unknown = [k for k in self.model_keys if k not in spec]
            if unknown:
                raise ValueError(f"--obs_keys {unknown} are not keys of {self.game!r}; its keys: {sorted(spec)}")
            return {k: spec[k] for k in self.model_keys}
        return {k: v for k, v in spec.items() if v.role == "observation" and len(v.shape) > 0}

    @staticmethod
    def num_actions(context: Any) -> Any:
        """What the model's policy head is built for: the number of values of the
        game's one Discrete action, else its action space (MultiDiscrete, Box, or
        a Dict of several action keys: ``spaces.action_space``)."""
        space = action_space(context.spec())
        return int(space.n) if isinstance(space, spaces.Discrete) else space

    @staticmethod
    def statistic_keys(context: Any) -> list[str]:
        """The game's episode statistics (role "statistic", e.g. MiniRTS's ``won``)."""
        return [k for k, v in context.spec().items() if v.role == "statistic"]

    def add_tags(self, context: Any, actor_replies: Sequence[str], window_keys: Sequence[str], state_size: int = 0,
                 prev: PrevShapes | None = None) -> Any:
        """Add to ``context`` the ``actor`` tag, replying ``actor_replies``, and the
        ``train`` tag, windows of ``T`` steps carrying the observations (and
        their ``final_`` copies) and ``window_keys``: the keys a trainer declares
        (``learners.trainer.ActingRecord.add_tags``).

        ``state_size > 0`` (a recurrent model) declares the reply key ``h``
        ``[state_size]`` that the actor replies and the windows carry; ``prev``
        (``prev_inputs.prev_shapes(model)``) the previous-input keys, likewise.
        """
        obs = list(self.observation_spec(context))
        spec = context.spec()
        finals = [f"final_{k}" for k in obs if f"final_{k}" in spec]
        state = self._add_state_key(context, state_size) + _add_prev_keys(context, prev)
        behaviour = _add_policy_keys(context) if "pi" in actor_replies else BEHAVIOUR_PI
        replies, inputs = _with(context, behaviour, actor_replies), _with(context, behaviour, window_keys)
        context.add_tag("actor", self.acting_batch(context), obs + _actor_inputs(context), replies + state)
        context.add_tag("train", self.train_batch, obs + finals + inputs + state, T=self.T)
        return context

    def acting_batch(self, context: Any) -> int:
        """Rows per batch of the training ``actor`` tag: ``--actor_batch``, or with
        ``--alternate`` half of the game seats (rounded up).

        Alternating: while the batch of one half is on the device (and Python
        waits for it), the engine's workers step the other half, whose replies
        went out just before. In deterministic mode the engine's fixed groups
        make the halves the first and the second half of the games, served in
        turn; otherwise a batch is the first half of the games to send, and the
        halves stay apart as long as the device, not the games, is the slower.
        """
        if not self.alternate:
            return self.actor_batch
        seats = self.num_games * context.num_seats
        if seats < 2:
            raise ValueError(f"--alternate needs at least 2 game seats to split in halves, got {seats}")
        return (seats + 1) // 2

    def eval_context(self, num_games: int, seed: int, state_size: int = 0, prev: PrevShapes | None = None) -> Any:
        """A context of games seeded with ``seed`` with only an ``actor`` tag, for evaluation."""
        context = self.context(num_games=num_games, seed=seed)
        obs = list(self.observation_spec(context))
        state = self._add_state_key(context, state_size) + _add_prev_keys(context, prev)
        replies = _with(context, _add_policy_keys(context), ACTOR_REPLIES) + state
        context.add_tag("actor", min(self.actor_batch, num_games), obs + _actor_inputs(context), replies)
        return context

    @staticmethod
    def _add_state_key(context: Any, state_size: int) -> list[str]:
        if not state_size:
            return []
        context.add_key(STATE_KEY, "float32", [state_size], "recurrent state the actor started this step from")
        return [STATE_KEY]


def _add_prev_keys(context: Any, prev: PrevShapes | None) -> list[str]:
    """Declare the previous-input keys a model reads (replied by its actor, kept in the history)."""
    for key, shape in (prev or {}).items():
        context.add_key(key, "float32", list(shape), "the model's previous-step input, as the actor fed it")
    return list(prev or {})


def _add_policy_keys(context: Any) -> str:
    """Declare the reply keys of the behaviour policy and ``V`` (the value), and
    return the policy's key: ``pi`` ``[n]``, the distribution sampled from, for
    one Discrete action; ``logp`` ``[]``, the log-probability of the replied
    action, for every other space (``distributions.behaviour_key``)."""
    num_actions = GameLoader.num_actions(context)
    if isinstance(num_actions, int):
        context.add_key(BEHAVIOUR_PI, "float32", [num_actions], "behaviour policy the actor sampled from")
    else:
        context.add_key(BEHAVIOUR_LOGP, "float32", [],
                        "log-probability of the replied action under the behaviour policy")
    context.add_key("V", "float32", [], "the actor's value estimate of s")
    return BEHAVIOUR_PI if isinstance(num_actions, int) else BEHAVIOUR_LOGP


def _with(context: Any, behaviour: str, keys: list[str]) -> list[str]:
    """``keys`` with the behaviour policy's key in the place of ``pi`` and the
    game's action keys (a Dict action's entries) in the place of ``a``."""
    named = {BEHAVIOUR_PI: [behaviour], "a": action_keys(context.spec())}
    return [name for k in keys for name in named.get(k, [k])]


def _actor_inputs(context: Any) -> list[str]:
    """The actor's inputs, plus the game's episode statistics."""
    return ACTOR_INPUTS + GameLoader.statistic_keys(context)


def parse_options(text: str, literal: bool = False) -> dict[str, Any]:
    """'a=1,b=x' as a dict; values stay text (native games parse their own)
    unless `literal`, where '1' becomes 1 and 'x' stays 'x'."""
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"game option {short_repr(item)} is not name=value")
        options[name.strip()] = _literal(value.strip()) if literal else value.strip()
    return options


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
