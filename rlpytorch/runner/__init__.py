"""Loops that drive the engine: single process, multi-process, evaluation."""

from .eval_iters import EvalIters, evaluate
from .multi_process import LearnerError, MultiProcessRun
from .single_process import RunSummary, SingleProcessRun, progress_setting

__all__ = [
    "EvalIters",
    "LearnerError",
    "MultiProcessRun",
    "RunSummary",
    "SingleProcessRun",
    "evaluate",
    "progress_setting",
]
