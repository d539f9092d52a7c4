"""Heads: features ``[..., F]`` in, a dict of named outputs out.

Each head is small (one linear layer, optionally preceded by hidden layers)
and names what it returns, so a model's output is the union of its heads':

- ``PolicyHead``: ``pi`` ``[..., A]``, softmax probabilities of discrete actions;
- ``ValueHead``: ``V`` ``[...]``;
- ``QHead``: ``Q`` ``[..., A]``, one action value per discrete action;
- ``GaussianHead``: ``mean`` and ``std`` ``[..., D]`` of a diagonal Gaussian
  over continuous actions (``std`` from a learned, state-independent log, or
  with ``state_dependent`` from the features); with ``low``/``high`` a
  tanh-squashed Gaussian inside them;
- ``MultiCategoricalHead``: ``pi`` ``[..., sum(nvec)]``, one softmax per component;
- ``DictPolicyHead``: one policy head per action key, outputs prefixed ``key.``.

A policy head carries its ``family`` (``rlpytorch.core.distributions``): the
distribution it parameterises. ``policy_head`` builds the head an action space
calls for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor, nn

from ..core.distributions import CategoricalFamily, DictFamily, GaussianFamily, MultiCategoricalFamily
from .layers import DirectSequential

__all__ = [
    "BOX_POLICIES",
    "DictPolicyHead",
    "GaussianHead",
    "MultiCategoricalHead",
    "PolicyHead",
    "QHead",
    "ValueHead",
    "policy_head",
]

# How a Box action is drawn: a Gaussian with a learned state-independent
# log-std (the game clips), the same with the log-std computed from the
# features, or a tanh-squashed Gaussian inside the bounds.
BOX_POLICIES = ("gaussian", "state_gaussian", "tanh_gaussian")


def _small_last_layer(net: DirectSequential) -> DirectSequential:
    """Start the last layer near zero (orthogonal, gain 0.01): a near-uniform categorical,
    a Gaussian mean near 0."""
    nn.init.orthogonal_(net[-1].weight, gain=0.01)
    nn.init.zeros_(net[-1].bias)
    return net


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
        self.net = _small_last_layer(_linear_stack(in_dim, hidden, num_actions))
        self.family = CategoricalFamily()

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        return {"pi": self.net(x).softmax(-1)}


class MultiCategoricalHead(nn.Module):
    """``pi = [softmax(z_1), ..., softmax(z_k)]`` with ``z = W x + b`` split by ``nvec``:
    independent categoricals for a MultiDiscrete action, side by side."""

    def __init__(self, in_dim: int, nvec: Sequence[int], hidden: Sequence[int] = ()) -> None:
        super().__init__()
        self.nvec = [int(n) for n in nvec]
        self.net = _small_last_layer(_linear_stack(in_dim, hidden, sum(self.nvec)))
        self.family = MultiCategoricalFamily(self.nvec)

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        logits = self.net(x).split(self.nvec, dim=-1)
        return {"pi": torch.cat([z.softmax(-1) for z in logits], -1)}


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
    """``mean = W x + b``, ``std = exp(log_std)`` with ``log_std`` a learned vector, or
    with ``state_dependent`` ``log_std = clamp(W' x + b', -20, 2)``.

    With ``low`` and ``high`` (per dimension) the family is the tanh-squashed
    Gaussian inside them (``mean`` and ``std`` are then those of the pre-tanh
    variable); without, actions are unbounded and the game clips them."""

    def __init__(
        self,
        in_dim: int,
        action_dim: int,
        hidden: Sequence[int] = (),
        init_std: float = 1.0,
        state_dependent: bool = False,
        low: Sequence[float] | None = None,
        high: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        self.net = _small_last_layer(_linear_stack(in_dim, hidden, action_dim))
        init_log_std = float(np.log(init_std))
        if state_dependent:
            self.log_std_net = _linear_stack(in_dim, hidden, action_dim)
            nn.init.zeros_(self.log_std_net[-1].weight)
            nn.init.constant_(self.log_std_net[-1].bias, init_log_std)
        else:
            self.log_std = nn.Parameter(torch.full((action_dim,), init_log_std))
        self.state_dependent = state_dependent
        self.family = GaussianFamily(low, high)

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        mean = self.net(x)
        if self.state_dependent:
            return {"mean": mean, "std": self.log_std_net(x).clamp(-20.0, 2.0).exp()}
        return {"mean": mean, "std": self.log_std.exp().expand_as(mean)}


class DictPolicyHead(nn.Module):
    """One policy head per action key on the same features; each output ``name``
    of key ``k``'s head is returned as ``k.name``."""

    def __init__(self, heads: Mapping[str, nn.Module]) -> None:
        super().__init__()
        self.parts = nn.ModuleDict(heads)
        self.family = DictFamily({key: head.family for key, head in heads.items()})

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        return {f"{key}.{name}": value for key, head in self.parts.items() for name, value in head(x).items()}


def policy_head(in_dim: int, space: Any, box_policy: str = "gaussian", hidden: Sequence[int] = ()) -> nn.Module:
    """The policy head for an action space: an ``int`` n or ``Discrete(n)`` -> ``PolicyHead``,
    ``MultiDiscrete`` -> ``MultiCategoricalHead``, ``Box`` -> ``GaussianHead`` as
    ``box_policy`` says (see ``BOX_POLICIES``), ``Dict`` -> ``DictPolicyHead``."""
    if isinstance(space, (int, np.integer)):
        return PolicyHead(in_dim, int(space), hidden)
    if isinstance(space, spaces.Discrete):
        if space.start != 0:
            raise ValueError(f"a categorical policy picks actions 0..n-1; {space} starts at {space.start}")
        return PolicyHead(in_dim, int(space.n), hidden)
    if isinstance(space, spaces.MultiDiscrete):
        return MultiCategoricalHead(in_dim, space.nvec.reshape(-1).tolist(), hidden)
    if isinstance(space, spaces.Box):
        if box_policy not in BOX_POLICIES:
            raise ValueError(f"unknown box_policy {box_policy!r}; choose from {BOX_POLICIES}")
        if len(space.shape) != 1:
            raise ValueError(f"Box actions must be vectors for a Gaussian policy, got shape {space.shape}")
        bounds = {}
        if box_policy == "tanh_gaussian":
            if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
                raise ValueError(f"a tanh-squashed Gaussian needs finite bounds, got {space}")
            bounds = {"low": space.low.tolist(), "high": space.high.tolist()}
        return GaussianHead(in_dim, space.shape[0], hidden, state_dependent=box_policy == "state_gaussian", **bounds)
    if isinstance(space, spaces.Dict):
        return DictPolicyHead({key: policy_head(in_dim, part, box_policy, hidden) for key, part in space.items()})
    raise ValueError(f"no policy head for action space {space}")
