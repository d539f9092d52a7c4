"""R2D2's invertible value rescaling (Pohlen et al., 2018; Kapturowski et al., 2019)."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["rescale", "unrescale"]

EPS = 1e-3


def rescale(x: Tensor, eps: float = EPS) -> Tensor:
    """``h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x``."""
    return torch.sign(x) * (torch.sqrt(x.abs() + 1.0) - 1.0) + eps * x


def unrescale(y: Tensor, eps: float = EPS) -> Tensor:
    """``h^-1(y) = sign(y) (((sqrt(1 + 4 eps (|y| + 1 + eps)) - 1) / (2 eps))^2 - 1)``."""
    root = (torch.sqrt(1.0 + 4.0 * eps * (y.abs() + 1.0 + eps)) - 1.0) / (2.0 * eps)
    return torch.sign(y) * (root.square() - 1.0)
