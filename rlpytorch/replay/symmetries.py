"""The eight symmetries of a square board (rotations and reflections), applied
alike to feature planes and to a policy over the board's points, for
augmenting board-game positions.

A policy has ``N * N`` entries for the points (row-major) followed by any
extra moves (such as a pass), which no symmetry moves.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["NUM_SYMMETRIES", "transform_planes", "transform_policy"]

NUM_SYMMETRIES = 8


def transform_planes(planes: Tensor, k: int) -> Tensor:
    """Symmetry ``k`` in [0, 8) of ``[..., N, N]``: rotate by ``k % 4`` quarter
    turns, then mirror left-right if ``k >= 4``."""
    out = torch.rot90(planes, k % 4, dims=(-2, -1))
    return torch.flip(out, dims=(-1,)) if k >= 4 else out


def transform_policy(policy: Tensor, k: int, board_size: int) -> Tensor:
    """The same symmetry on ``[..., N * N + extra]`` (the extra entries stay)."""
    area = board_size * board_size
    points = policy[..., :area].reshape(*policy.shape[:-1], board_size, board_size)
    moved = transform_planes(points, k).reshape(*policy.shape[:-1], area)
    return torch.cat([moved, policy[..., area:]], dim=-1)
