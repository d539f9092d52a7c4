"""AlphaZero: self-play searched by the game, one network evaluating its leaves and learning from its records.

The game (e.g. ``go_mcts``) searches on the engine's threads and asks for
leaf evaluations on the tag ``eval``; ``run.self_play.AlphaZero`` answers them
in batches with a ``PolicyValueNet`` and takes SGD steps on its replay window
between batches (``PolicyValueLoss``: ``-sum pi log p + value_coef (z - v)^2``).
The run folder, resume and the command line are every method's
(``python -m rlpytorch.train --method alphazero --config go9``); the network
is judged by matches (``elfpy.gtp`` against GNU Go, ``benchmarks/bench_go.py``),
not by a return, so the run has no final evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import distributed
from ..core.args_provider import ArgsError, Configurable, settings_record
from ..core.game_loader import GameLoader
from ..core.seeding import RunSeed
from ..core.settings import save_dir_setting, torch_threads_setting
from ..core.stats import StatsLogger
from ..run.self_play import AlphaZero, format_selfplay
from ..run.single_process import RunSummary


@dataclass
class SelfPlayScript(Configurable):
    """Choices of a self-play run: its folder and torch's threads."""

    save_dir: str = save_dir_setting()
    torch_threads: int = torch_threads_setting()


class SelfPlaySession:
    """A built self-play run; ``learn(frames)`` plays and trains that many more leaf evaluations."""

    def __init__(self, selfplay: AlphaZero, context: Any, logger: StatsLogger) -> None:
        self.selfplay, self.context, self.logger = selfplay, context, logger

    @property
    def frames(self) -> int:
        return self.selfplay.frames

    @property
    def model(self) -> Any:
        return self.selfplay.net

    def learn(self, frames: int) -> RunSummary:
        context = self.context if self.context is not None else self.selfplay.context(self.selfplay.engine_starts + 1)
        self.context = None  # a stopped context does not start again
        self.selfplay.num_frames = self.selfplay.frames + frames
        self.selfplay.play_and_train(context)
        return RunSummary(self.selfplay.frames, self.selfplay.net.step, self.selfplay.seconds(), float("nan"),
                          interrupted=self.selfplay.interrupted)

    def evaluate_at_end(self) -> None:
        """No final evaluation: a self-play network is judged by matches (see the module's docstring)."""
        return None

    def close(self) -> None:
        if self.context is not None:
            self.context.stop()
        self.logger.close()


class AlphaZeroRecipe:
    """Self-play with the game's own search (one network, one process)."""

    run_defaults: Mapping[str, Any] = {}

    def components(self) -> list[type[Configurable]]:
        return [SelfPlayScript, RunSeed, GameLoader, AlphaZero, StatsLogger]

    def check_settings(self, config: Any) -> None:
        if distributed.launched():
            raise ArgsError("--method alphazero runs in one process, not under torchrun")

    def learner_device(self, config: Any) -> str:
        return config.device

    def start(self, config: Any, loader: GameLoader, run_dir: Path | None,
              resumed: tuple[Path, Mapping[str, Any]] | None, main_rank: bool,
              announce: Callable[[], None]) -> SelfPlaySession:
        """The run built (network, replay window, the games' context); a ``resumed``
        (checkpoint file, its content) run continues in that file's folder, where its replay window is."""
        if resumed is not None and (run_dir is None or run_dir.resolve() != resumed[0].parent.resolve()):
            raise ValueError(f"a resumed self-play run continues in its own folder {resumed[0].parent}, "
                             "where its replay window is")
        context = None
        try:
            selfplay = AlphaZero.from_config(config, loader=loader, seed=config.seed, run_dir=run_dir,
                                             run_config=settings_record(config))
            context = selfplay.prepare(resumed[0] if resumed is not None else None)
            announce()  # after it (a resumed run's history cut back) the logger reads the rows kept
            selfplay.logger = StatsLogger.from_config(config, log_dir=run_dir, formatter=format_selfplay)
        except BaseException:
            if context is not None:
                context.stop()
            raise
        return SelfPlaySession(selfplay, context, selfplay.logger)
