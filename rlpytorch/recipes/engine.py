"""What every engine-driven recipe shares: the run's script settings and its assembly.

A run of an engine-driven method is always the same chain: the games'
context, a model for their spaces, the family's trainer over that model (with
the tags its actor and its windows need), and a runner that drives the
context until the frame budget. ``EngineRecipe.start`` builds that chain; a
family (``OnPolicy``, ``ValueReplay``, ``OffPolicy``, ``Joint``) says only
what differs: its components, its model check, its tags and its trainer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import distributed
from ..core.args_provider import ArgsError, Configurable, setting, settings_record
from ..core.game_loader import GameLoader
from ..core.seeding import RunSeed
from ..core.settings import save_dir_setting, torch_threads_setting
from ..core.stats import StatsLogger
from ..learners.evaluator import EvalResult, Evaluator, check_eval_episodes
from ..models.base import Model
from ..models.interface import ModelInterface
from ..models.loader import ModelLoader
from ..run.eval_iters import evaluate
from ..run.multi_process import MultiProcessRun
from ..run.resume import engine_seed
from ..run.single_process import RunSummary, SingleProcessRun

RUNNERS = {"single": SingleProcessRun, "multi": MultiProcessRun}


@dataclass
class TrainScript(Configurable):
    """Choices of an engine-driven run: the runner, the run's folder, the final evaluation."""

    runner: str = setting("single", "single process, or the learner in its own process", choices=tuple(RUNNERS))
    save_dir: str = save_dir_setting()
    eval_at_end: bool = setting(True, "evaluate the trained model (see --eval_episodes)")
    torch_threads: int = torch_threads_setting()


def acting_device(config: Any) -> str:
    """Where evaluation plays: the acting model's device (``--actor_device``, else ``--device``)."""
    return getattr(config, "actor_device", "") or config.device  # (a value trainer acts where it learns)


class EngineSession:
    """A built engine-driven run: its context, model, trainer and runner.

    ``learn(frames)`` trains that many more frames (the first call on the
    context it was built with, each later one on the games' next start of the
    run's seed stream, as a resumed run does); ``evaluate`` plays the greedy
    (or ``--eval_sampler``) policy on games of its own."""

    def __init__(self, config: Any, loader: GameLoader, context: Any, model: Model, trainer: Any,
                 runner: SingleProcessRun, logger: StatsLogger) -> None:
        self.config, self.loader = config, loader
        self.context, self.model, self.trainer, self.runner, self.logger = context, model, trainer, runner, logger

    @property
    def frames(self) -> int:
        return self.trainer.frames

    def learn(self, frames: int) -> RunSummary:
        """Train ``frames`` more frames (or until ``--stop_at_return``)."""
        context = self.context if self.context is not None else self.runner.next_context()
        self.context = None  # a stopped context does not start again
        return self.runner.run(context, until=self.trainer.frames + frames)

    def evaluate_at_end(self) -> EvalResult | None:
        """With ``--eval_at_end``, the trained model over ``--eval_episodes`` episodes, acting by ``--eval_sampler``."""
        if not self.config.eval_at_end:
            return None
        return evaluate(distributed.unwrap(self.trainer.mi["model"]), self.loader, self.config.eval_episodes,
                        self.config.eval_sampler, device=acting_device(self.config),
                        progress=self.config.progress, seed=self.config.seed)

    def close(self) -> None:
        """Release what an unused context holds (a hosted one: its worker processes); safe when stopped."""
        if self.context is not None:
            self.context.stop()
        self.logger.close()


class EngineRecipe:
    """A family of methods that learn from the engine's batches through a trainer.

    Subclasses define ``learning_components`` (their settings' owners),
    ``add_tags`` (the keys their actor replies and their windows carry) and
    ``build_trainer`` (which checks the model first)."""

    def __init__(self, method: type) -> None:
        self.method = method

    @property
    def run_defaults(self) -> Mapping[str, Any]:
        """Settings of other components the method suggests (files and the command line override them)."""
        return self.method.run_defaults

    def learning_components(self) -> list[type[Configurable]]:
        raise NotImplementedError

    def add_tags(self, loader: GameLoader, context: Any, model: Model) -> Any:
        raise NotImplementedError

    def build_trainer(self, config: Any, loader: GameLoader, context: Any, model: Model,
                      mi: ModelInterface) -> Any:
        raise NotImplementedError

    def check_settings(self, config: Any) -> None:
        """Refuse settings that would fail only after training (``ArgsError``)."""
        if config.eval_at_end or config.eval_every:
            check_eval_episodes(config.eval_episodes)
        if distributed.launched() and config.runner != "single":
            raise ArgsError("under torchrun each rank is one process: use --runner single")

    def learner_device(self, config: Any) -> str:
        """The device the learner updates on (under torchrun, its process group's backend follows it)."""
        return config.device

    def components(self) -> list[type[Configurable]]:
        """Every component of a run of this method, in the order ``--help`` shows them."""
        return [TrainScript, RunSeed, GameLoader, ModelLoader, ModelInterface, *self.learning_components(),
                MultiProcessRun,  # its groups include SingleProcessRun's loop settings
                StatsLogger, Evaluator]

    def start(self, config: Any, loader: GameLoader, run_dir: Path | None,
              resumed: tuple[Path, Mapping[str, Any]] | None, main_rank: bool,
              announce: Callable[[], None]) -> EngineSession:
        """The run built: context, model, trainer, runner; a ``resumed`` run (checkpoint file, its content)
        with its training state loaded and its games' next start in the run's seed stream. ``announce``
        is called once all is built and checked, before anything is logged."""
        engine_starts = 0 if resumed is None else resumed[1]["resume"]["runner"]["engine_starts"] + 1
        context = loader.context(seed=engine_seed(config.seed, engine_starts))
        try:
            model = ModelLoader.from_config(config).build(loader.observation_spec(context), loader.num_actions(context),
                                                          context.num_seats)
            trainer = self.build_trainer(config, loader, context, model, ModelInterface.from_config(config))
            self.add_tags(loader, context, model)
            if distributed.is_distributed():
                trainer.mi.distribute()
            announce()  # everything is built: the run is written down
            record = settings_record(config)  # as checkpoints and trackers hold the run's settings
            logger = StatsLogger.from_config(config, log_dir=run_dir, echo=main_rank, run_config=record)
            periodic_eval = functools.partial(
                evaluate, loader=loader, eval_episodes=config.eval_episodes, eval_sampler="greedy",
                device=acting_device(config), progress=False, seed=config.seed)
            runner = RUNNERS[config.runner].from_config(
                config, trainer=trainer, logger=logger, run_config=record, save_dir=run_dir,
                periodic_eval=periodic_eval if main_rank else None, engine_starts=engine_starts,
                fresh_context=lambda k: self.add_tags(loader, loader.context(seed=engine_seed(config.seed, k)),
                                                      model))
            if resumed is not None:
                runner.load_training_state(resumed[1]["resume"])  # last before the run: it sets the random states
                logger.note(f"resumed from {resumed[0]} at {trainer.frames:,} frames, {trainer.updates:,} updates")
        except BaseException:
            context.stop()
            raise
        return EngineSession(config, loader, context, model, trainer, runner, logger)
