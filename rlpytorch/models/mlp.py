"""A multilayer-perceptron actor-critic for vector observations (CartPole & co)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ..args_provider import Arg, Configurable
from ..model_base import Model

_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def _mlp(sizes: Sequence[int], activation: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for n_in, n_out in itertools.pairwise(sizes):
        layers += [nn.Linear(n_in, n_out), _ACTIVATIONS[activation]()]
    return nn.Sequential(*layers)


class MLPActorCritic(Model, Configurable):
    """Separate policy and value MLPs over the flattened observation.

    ``forward(s)`` takes ``[..., *obs_shape]`` and returns ``pi`` ``[..., A]``
    (softmax probabilities) and ``V`` ``[...]``; any leading shape works, so
    the same call serves ``[B]`` actor batches and ``[T, B]`` train windows.
    Separate trunks keep the value regression from disturbing the policy.
    """

    name = "mlp"
    args = (
        Arg("hidden", 64, "width of each hidden layer"),
        Arg("layers", 2, "number of hidden layers"),
        Arg("activation", "tanh", "hidden activation", choices=tuple(_ACTIVATIONS)),
    )

    def __init__(
        self,
        obs_shape: Sequence[int],
        num_actions: int,
        hidden: int = 64,
        layers: int = 2,
        activation: str = "tanh",
    ) -> None:
        super().__init__()
        self.obs_shape = tuple(obs_shape)
        obs_size = int(torch.tensor(self.obs_shape).prod()) if self.obs_shape else 1
        sizes = [obs_size] + [hidden] * layers
        self.policy = nn.Sequential(_mlp(sizes, activation), nn.Linear(sizes[-1], num_actions))
        self.value = nn.Sequential(_mlp(sizes, activation), nn.Linear(sizes[-1], 1))
        nn.init.orthogonal_(self.policy[-1].weight, gain=0.01)
        nn.init.zeros_(self.policy[-1].bias)

    def forward(self, s: Tensor) -> dict[str, Tensor]:
        """Policy probabilities ``pi`` and state value ``V`` for observations ``s``."""
        lead = s.shape[: s.dim() - len(self.obs_shape)]
        x = s.reshape(*lead, -1).float()
        return {"pi": self.policy(x).softmax(-1), "V": self.value(x).squeeze(-1)}
