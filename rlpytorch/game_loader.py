"""``GameLoader``: the engine side of a run, as arguments.

It builds ``elfpy.GameContext`` objects with the tags a trainer or evaluator
needs, and reads the observation shape and action count from the game's
spec. This is the one module of rlpytorch that touches the engine, and it
imports ``elfpy`` only when a context is made (``context_factory`` can replace
it, e.g. with a test double).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .args_provider import Arg, Configurable

__all__ = ["ACTOR_INPUTS", "ACTOR_REPLIES", "TRAIN_INPUTS", "GameLoader"]

ACTOR_INPUTS = ["s", "r", "terminal", "truncated", "episode_return", "episode_length"]
ACTOR_REPLIES = ["a", "pi", "V"]
TRAIN_INPUTS = ["s", "a", "pi", "V", "r", "terminal", "truncated"]


def _elfpy_context(game: str, **kwargs: Any) -> Any:
    import elfpy

    return elfpy.GameContext(game, **kwargs)


class GameLoader(Configurable):
    """Which game, how many copies, on how many threads, and the tags' shapes."""

    args = (
        Arg("game", "cartpole", "native game to play"),
        Arg("num_games", 64, "games run at once"),
        Arg("num_threads", 0, "engine worker threads (0: one per core)"),
        Arg("seed", 0, "seed of the games, the sampler and the model initialization"),
        Arg("deterministic", False, "same batches for the same seed, whatever the threads"),
        Arg("actor_batch", 64, "rows per actor batch"),
        Arg("train_batch", 64, "games per train window"),
        Arg("T", 6, "rows per train window (consecutive windows share one row)"),
        Arg("game_options", "", "the game's options, e.g. 'max_steps=200,foo=1'"),
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
        context_factory: Callable[..., Any] = _elfpy_context,
    ) -> None:
        self.game = game
        self.num_games = num_games
        self.num_threads = num_threads or os.cpu_count() or 1
        self.seed = seed
        self.deterministic = deterministic
        self.actor_batch = actor_batch
        self.train_batch = train_batch
        self.T = T
        self.options = _parse_options(game_options)
        self.context_factory = context_factory

    def context(self, num_games: int | None = None, seed: int | None = None) -> Any:
        """A context without tags (add your own)."""
        return self.context_factory(
            self.game,
            num_games=num_games or self.num_games,
            num_threads=self.num_threads,
            seed=self.seed if seed is None else seed,
            deterministic=self.deterministic,
            **self.options,
        )

    def train_context(self) -> Any:
        """A context with the ``actor`` and ``train`` tags of actor-critic training."""
        gc = self.context()
        gc.add_tag("actor", self.actor_batch, _actor_inputs(gc), ACTOR_REPLIES)
        gc.add_tag("train", self.train_batch, TRAIN_INPUTS, T=self.T)
        return gc

    def eval_context(self, num_games: int, seed: int | None = None) -> Any:
        """A context with only an ``actor`` tag, for evaluation."""
        gc = self.context(num_games=num_games, seed=seed)
        gc.add_tag("actor", min(self.actor_batch, num_games), _actor_inputs(gc), ACTOR_REPLIES)
        return gc

    @staticmethod
    def shapes(gc: Any) -> tuple[tuple[int, ...], int]:
        """Observation shape (key ``s``) and number of actions (``pi``'s width) of ``gc``."""
        spec = gc.spec("actor")
        return tuple(spec["s"].shape), int(spec["pi"].shape[0])


def _actor_inputs(gc: Any) -> list[str]:
    """The actor's inputs, plus ``won`` for games that report a winner."""
    return ACTOR_INPUTS + (["won"] if "won" in gc.spec() else [])


def _parse_options(text: str) -> dict[str, str]:
    options = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"game option {item!r} is not name=value")
        options[name.strip()] = value.strip()
    return options
