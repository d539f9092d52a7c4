"""Replay parts fed by a train tag's ``[T, B]`` windows: ``LaneStore`` (each step
stored once, frame-based storage for stacked frames), ``UniformSampler`` and
``PrioritizedSampler`` (on a ``SumTree``), n-step targets (``nstep_targets``),
composed by ``Replay`` into transitions ``[B]`` or sequences ``[L, B]``; and
AlphaZero's ``PositionReplay`` of self-play positions with the board's
``symmetries``. It imports only from ``rlpytorch.core``."""

from .lanes import LaneStore
from .nstep import NStep, nstep_targets
from .prioritized import PrioritizedSampler
from .replay import Replay
from .sum_tree import SumTree
from .uniform import UniformSampler

__all__ = ["LaneStore", "NStep", "PrioritizedSampler", "Replay", "SumTree", "UniformSampler", "nstep_targets"]
