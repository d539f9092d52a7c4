"""``EvalIters``: play a fixed model until the evaluator has its episodes."""

from __future__ import annotations

from typing import Any

from ..acting.prev_inputs import prev_shapes
from ..core.game_loader import GameLoader
from ..learners.trainer import EvalResult, Evaluator
from ..models.base import Model
from .single_process import progress_bar

__all__ = ["EvalIters", "evaluate"]


class EvalIters:
    """Runs ``gc`` (an ``actor`` tag only) until ``evaluator.done``.

    Shows a progress bar over counted episodes (on a terminal only:
    ``progress_bar``); Ctrl-C or an exception stops
    the engine before propagating.
    """

    def __init__(self, evaluator: Evaluator, progress: bool = True) -> None:
        self.evaluator = evaluator
        self.progress = progress

    def run(self, gc: Any) -> EvalResult:
        """Evaluate on ``gc`` and return the result."""
        evaluator = self.evaluator
        gc.reg_callback("actor", evaluator.actor)
        total = evaluator.per_lane * evaluator.lanes
        with progress_bar(self.progress, total=total, unit="episode") as bar:
            gc.start()
            try:
                while not evaluator.done:
                    gc.run()
                    bar.update(evaluator.episodes_done - bar.n)
            finally:
                gc.stop()
        return evaluator.result()


def evaluate(
    model: Model,
    loader: GameLoader,
    eval_episodes: int,
    eval_sampler: str,
    device: str = "cpu",
    progress: bool = True,
) -> EvalResult:
    """Play ``eval_episodes`` episodes of ``loader``'s game with ``model``, acting
    by ``eval_sampler`` (see ``Evaluator``).

    One game per episode (up to 256 games; in a game of several seats, each
    seat's episode counts), seeded apart from training.
    """
    num_games = min(eval_episodes, 256)
    seed = loader.seed + 1_000_003
    gc = loader.eval_context(num_games, seed=seed, state_size=model.state_size, prev=prev_shapes(model))
    evaluator = Evaluator(model, num_games, eval_episodes, eval_sampler, device=device, seed=seed,
                          statistics=loader.statistic_keys(gc), seats_per_game=gc.num_seats)
    return EvalIters(evaluator, progress).run(gc)
