"""``EvalIters``: play a fixed model until the evaluator has its episodes."""

from __future__ import annotations

from typing import Any

from ..acting.prev_inputs import prev_shapes
from ..core.game_loader import GameLoader
from ..learners.evaluator import EvalResult, Evaluator
from ..models.base import Model
from .single_process import progress_bar

__all__ = ["EvalIters", "evaluate"]


class EvalIters:
    """Runs ``context`` (an ``actor`` tag only) until ``evaluator.done``.

    Shows a progress bar over counted episodes (on a terminal only:
    ``progress_bar``); Ctrl-C or an exception stops
    the engine before propagating.
    """

    def __init__(self, evaluator: Evaluator, progress: bool = True) -> None:
        self.evaluator = evaluator
        self.progress = progress

    def run(self, context: Any) -> EvalResult:
        """Evaluate on ``context`` and return the result."""
        evaluator = self.evaluator
        context.reg_callback("actor", evaluator.actor)
        total = evaluator.per_lane * evaluator.lanes
        with progress_bar(self.progress, total=total, unit="episode") as bar:
            context.start()
            try:
                while not evaluator.done:
                    context.run()
                    bar.update(evaluator.episodes_done - bar.n)
            finally:
                context.stop()
        return evaluator.result()


def evaluate(
    model: Model,
    loader: GameLoader,
    eval_episodes: int,
    eval_sampler: str,
    device: str = "cpu",
    progress: bool = True,
    *,
    seed: int,
) -> EvalResult:
    """Play ``eval_episodes`` episodes of ``loader``'s game with ``model``, acting
    by ``eval_sampler`` (see ``Evaluator``).

    One game per episode (up to 256 games; in a game of several seats, each
    seat's episode counts), seeded apart from the training of run seed ``seed``.
    """
    num_games = min(eval_episodes, 256)
    seed = seed + 1_000_003
    context = loader.eval_context(num_games, seed=seed, state_size=model.state_size, prev=prev_shapes(model))
    evaluator = Evaluator(model, num_games, eval_episodes, eval_sampler, device=device, seed=seed,
                          statistics=loader.statistic_keys(context), seats_per_game=context.num_seats)
    return EvalIters(evaluator, progress).run(context)
