"""Heads: features ``[..., F]`` in, a dict of named outputs out.

Each head is small (one linear layer, optionally preceded by hidden layers)
and names what it returns, so a model's output is the union of its heads':

- ``PolicyHead``: ``pi`` ``[..., A]``, softmax probabilities of discrete actions;
- ``ValueHead``: ``V`` ``[...]``;
- ``QHead``: ``Q`` ``[..., A]``, one action value per discrete action;
- ``GaussianHead``: ``mean`` and ``std`` ``[..., D]`` of a diagonal Gaussian
  over continuous actions (``std`` from a learned, state-independent log).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from .layers import DirectSequential

__all__ = ["GaussianHead", "PolicyHead", "QHead", "ValueHead"]


def _linear_stack(in_dim: int, hidden: Sequence[int], out_dim: int) -> DirectSequential:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(in_dim, width), nn.ReLU()]
        in_dim = width
    layers.append(nn.Linear(in_dim, out_dim))
    return DirectSequential(*layers)


class PolicyHead(nn.Module):
    """``pi = softmax(W x + b)``; the last layer starts near zero (orthogonal, gain 0.01),
    so the initial policy is close to uniform."""

    def __init__(self, in_dim: int, num_actions: int, hidden: Sequence[int] = ()) -> None:
        super().__init__()
        self.net = _linear_stack(in_dim, hidden, num_actions)
        nn.init.orthogonal_(self.net[-1].weight, gain=0.01)
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        return {"pi": self.net(x).softmax(-1)}


class ValueHead(nn.Module):
    """``V = w x + b``."""

    def __init__(self, in_dim: int, hidden: Sequence[int] = ()) -> None:
        super().__init__()
        self.net = _linear_stack(in_dim, hidden, 1)

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        return {"V": self.net(x).squeeze(-1)}


class QHead(nn.Module):
    """``Q = W x + b``: one value per discrete action."""

    def __init__(self, in_dim: int, num_actions: int, hidden: Sequence[int] = ()) -> None:
        super().__init__()
        self.net = _linear_stack(in_dim, hidden, num_actions)

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        return {"Q": self.net(x)}


class GaussianHead(nn.Module):
    """``mean = W x + b``, ``std = exp(log_std)`` with ``log_std`` a learned vector."""

    def __init__(self, in_dim: int, action_dim: int, hidden: Sequence[int] = (), init_std: float = 1.0) -> None:
        super().__init__()
        self.net = _linear_stack(in_dim, hidden, action_dim)
        nn.init.orthogonal_(self.net[-1].weight, gain=0.01)
        nn.init.zeros_(self.net[-1].bias)
        self.log_std = nn.Parameter(torch.full((action_dim,), float(torch.tensor(init_std).log())))

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        mean = self.net(x)
        return {"mean": mean, "std": self.log_std.exp().expand_as(mean)}
