"""``EvalIters``: play a fixed model until the evaluator has its episodes."""

from __future__ import annotations

from typing import Any

from tqdm import tqdm

from ..trainer import EvalResult, Evaluator

__all__ = ["EvalIters"]


class EvalIters:
    """Runs ``gc`` (an ``actor`` tag only) until ``evaluator.done``.

    Shows a progress bar over counted episodes; Ctrl-C or an exception stops
    the engine before propagating.
    """

    def __init__(self, evaluator: Evaluator, progress: bool = True) -> None:
        self.evaluator = evaluator
        self.progress = progress

    def run(self, gc: Any) -> EvalResult:
        """Evaluate on ``gc`` and return the result."""
        evaluator = self.evaluator
        gc.reg_callback("actor", evaluator.actor)
        total = evaluator.per_game * evaluator.games
        with tqdm(total=total, unit="episode", disable=not self.progress) as bar:
            gc.start()
            try:
                while not evaluator.done:
                    gc.run()
                    bar.update(evaluator.episodes_done - bar.n)
            finally:
                gc.stop()
        return evaluator.result()
