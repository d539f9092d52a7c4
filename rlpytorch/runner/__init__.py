"""Loops that drive the engine: single process, multi-process, evaluation."""

from .eval_iters import EvalIters, evaluate
from .single_process import RunSummary, SingleProcessRun

__all__ = ["EvalIters", "RunSummary", "SingleProcessRun", "evaluate"]
