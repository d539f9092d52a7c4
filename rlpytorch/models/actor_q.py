"""Actor and continuous Q critics for off-policy control on Box actions (DDPG, TD3, SAC).

Parts, each reusable on its own:

- ``EnsembleLinear``: ``n`` independent linear layers applied in one batched
  matrix product (``torch.baddbmm``), so twin critics cost one call per layer;
- ``QCritics``: ``n`` critics ``Q_i(x)``, each an MLP over one input vector ``x``
  (``[..., in_dim]`` -> ``[n, ...]``). Built for the concatenation of
  observations and actions, ``x = [obs; a]``: a centralised critic over several
  seats (MADDPG) is the same part over their concatenated observations and actions;
- ``DeterministicActorHead``: ``a = c + h tanh(W x + b)``, inside the Box
  ``[low, high]`` (``c`` its centre, ``h`` its half-range);
- ``SquashedGaussianHead``: ``mean`` and state-dependent ``std`` of the pre-tanh
  Gaussian of ``TanhGaussian`` (the squashed Gaussian of SAC);
- ``ActorQ`` (registered ``actor_q``): an actor MLP with one of these heads and
  ``--critics`` critics over ``[obs; a_norm]``, ``a_norm = (a - c) / h`` in
  ``[-1, 1]``; with a stochastic actor also SAC's temperature ``log_alpha``, so a
  checkpoint carries it.

Heads are derived from the action key's Box in the spec (finite bounds, a
vector); observations are vectors (flattened and concatenated).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor, nn

from ..core.args_provider import Configurable, above, at_least, setting
from ..core.distributions import DeterministicFamily, GaussianFamily
from ..core.settings import net_arch_setting
from .actor_critic import _spec
from .base import Model
from .encoders import MLPEncoder
from .layers import DirectSequential

__all__ = [
    "ACTOR_HEADS",
    "ActorQ",
    "ActorQSettings",
    "DeterministicActorHead",
    "EnsembleLinear",
    "QCritics",
    "SquashedGaussianHead",
    "Temperature",
    "box_bounds",
]

ACTOR_HEADS = ("deterministic", "tanh_gaussian")


def box_bounds(space: Any, model: str = "actor_q") -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of a Box action space that an actor can squash into: a vector
    with finite bounds; anything else is a ``ValueError`` naming the space (and ``model``)."""
    if not isinstance(space, spaces.Box):
        shown = spaces.Discrete(space) if isinstance(space, int) else space  # one Discrete action comes as its n
        raise ValueError(f"{model} models need one Box action; this game's action space is {shown}")
    if len(space.shape) != 1 or not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
        raise ValueError(f"{model} models need a vector Box action with finite bounds, got {space}")
    return space.low.astype(np.float32), space.high.astype(np.float32)


def _mlp(sizes: Sequence[int]) -> DirectSequential:
    """Linear layers with ReLU between them (none after the last)."""
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return DirectSequential(*layers)


class EnsembleLinear(nn.Module):
    """``y_i = x_i W_i + b_i`` for ``i < n``: ``x`` ``[n, B, in]`` (or ``[B, in]``, shared) -> ``[n, B, out]``.

    Initialised as ``nn.Linear`` is, each member independently: ``U(-1/sqrt(in), 1/sqrt(in))``."""

    def __init__(self, n: int, in_dim: int, out_dim: int) -> None:
        super().__init__()
        bound = 1.0 / math.sqrt(in_dim)
        self.weight = nn.Parameter(torch.empty(n, in_dim, out_dim).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(n, 1, out_dim).uniform_(-bound, bound))

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() == 2:
            x = x.expand(self.weight.shape[0], *x.shape)
        return torch.baddbmm(self.bias, x, self.weight)


class QCritics(nn.Module):
    """``n`` critics ``Q_i(x)``, MLPs ``in_dim -> *hidden -> 1`` with ReLU, run side by side:
    ``x`` ``[..., in_dim]`` -> ``[n, ...]`` (every critic on the same inputs), or with ``each``
    ``x`` ``[n, ..., in_dim]`` -> ``[n, ...]`` (critic ``i`` on its own inputs ``x[i]``)."""

    def __init__(self, n: int, in_dim: int, hidden: Sequence[int]) -> None:
        super().__init__()
        if n < 1:
            raise ValueError(f"a critic ensemble needs n >= 1 critics, got {n}")
        sizes = [in_dim, *hidden, 1]
        self.n = n
        self.layers = nn.ModuleList(EnsembleLinear(n, a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True))

    def forward(self, x: Tensor) -> Tensor:
        return self._run(x.reshape(-1, x.shape[-1])).reshape(self.n, *x.shape[:-1])

    def each(self, x: Tensor) -> Tensor:
        """Critic ``i`` on ``x[i]``: ``[n, ..., in_dim]`` -> ``[n, ...]``."""
        if x.shape[0] != self.n:
            raise ValueError(f"QCritics.each needs one input per critic: [{self.n}, ..., in], got {list(x.shape)}")
        return self._run(x.reshape(self.n, -1, x.shape[-1])).reshape(x.shape[:-1])

    def _run(self, y: Tensor) -> Tensor:
        """``[B, in]`` (shared) or ``[n, B, in]`` -> ``[n, B, 1]``."""
        for i, layer in enumerate(self.layers):
            y = layer(y)
            if i < len(self.layers) - 1:
                y = torch.relu(y)
        return y


class DeterministicActorHead(nn.Module):
    """``action = c + h tanh(MLP(x))``, ``c = (high + low) / 2``, ``h = (high - low) / 2``:
    always inside the bounds."""

    def __init__(self, in_dim: int, hidden: Sequence[int], low: np.ndarray, high: np.ndarray) -> None:
        super().__init__()
        self.net = _mlp([in_dim, *hidden, len(low)])
        self.register_buffer("action_center", torch.as_tensor((high + low) / 2))
        self.register_buffer("action_half", torch.as_tensor((high - low) / 2))
        self.family = DeterministicFamily(low.tolist(), high.tolist())

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        return {"action": self.action_center + self.action_half * torch.tanh(self.net(x))}


class SquashedGaussianHead(nn.Module):
    """A trunk ``MLP(x)`` shared by ``mean = W z + b`` and ``log std = clamp(W' z + b', -20, 2)``:
    the pre-tanh Gaussian of a ``TanhGaussian`` inside ``[low, high]``."""

    def __init__(self, in_dim: int, hidden: Sequence[int], low: np.ndarray, high: np.ndarray) -> None:
        super().__init__()
        self.trunk = DirectSequential(*_mlp([in_dim, *hidden]), nn.ReLU()) if hidden else DirectSequential()
        width = hidden[-1] if hidden else in_dim
        self.mean = nn.Linear(width, len(low))
        self.log_std = nn.Linear(width, len(low))
        self.family = GaussianFamily(low.tolist(), high.tolist())

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        z = self.trunk(x)
        return {"mean": self.mean(z), "std": self.log_std(z).clamp(-20.0, 2.0).exp()}


def widths(net_arch: str) -> list[int]:
    """``"64,64"`` -> ``[64, 64]``."""
    return [int(w) for w in net_arch.split(",") if w.strip()]


@dataclass
class ActorQSettings(Configurable):
    """The settings of ``actor_q`` models."""

    net_arch: str = net_arch_setting()
    critics: int = setting(2, "actor_q models: number of Q critics (1: DDPG, 2: TD3's and SAC's twins)",
                           bounds=at_least(1))
    actor_head: str = setting("tanh_gaussian", "actor_q models: deterministic (DDPG, TD3) or a tanh-squashed "
                                               "Gaussian (SAC)", choices=ACTOR_HEADS)
    init_temperature: float = setting(1.0, "actor_q models with a Gaussian actor: SAC's initial alpha", bounds=above(0))

    @property
    def widths(self) -> list[int]:
        return widths(self.net_arch)


class Temperature(nn.Module):
    """SAC's entropy temperature ``alpha = exp(log_alpha)``, learned through ``log_alpha``."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        if alpha <= 0:
            raise ValueError(f"the initial temperature must be > 0, got {alpha}")
        self.log_alpha = nn.Parameter(torch.tensor(math.log(alpha)))

    @property
    def alpha(self) -> Tensor:
        """``exp(log_alpha)``, detached: a coefficient of the other losses."""
        return self.log_alpha.detach().exp()


class ActorQ(Model):
    """``actor``: ``flatten(obs) -> DeterministicActorHead | SquashedGaussianHead``;
    ``critics``: ``QCritics(n)`` over ``[flatten(obs); (a - c) / h]``; ``temperature``
    (Gaussian actor only). ``forward(obs)`` returns the actor's outputs (``action``,
    or ``mean``/``std``) and ``V = min_i Q_i(s, mode)``, so evaluation, ``predict``
    and videos play it like any policy; the methods use ``encode``, ``policy`` and
    ``q_values``."""

    name = "actor_q"
    Settings: ClassVar[type[ActorQSettings]] = ActorQSettings

    def __init__(self, obs_spec: Any, num_actions: Any, settings: ActorQSettings | None = None) -> None:
        super().__init__()
        spec, settings = _spec(obs_spec), settings or ActorQSettings()
        images = [k for k, e in spec.items() if e.is_image or e.is_pixels or e.is_tokens]
        if images:
            raise ValueError(f"actor_q models read vector observations; {images} are images or token sequences")
        if settings.actor_head not in ACTOR_HEADS:
            raise ValueError(f"unknown actor_head {settings.actor_head!r}; choose from {ACTOR_HEADS}")
        low, high = box_bounds(num_actions)
        self.obs_keys = tuple(spec)
        self.obs_shapes = {key: entry.shape for key, entry in spec.items()}
        self.flatten = MLPEncoder(spec, None, 0, 0, "relu")  # no layers: flattened, concatenated observations
        widths = settings.widths
        head = DeterministicActorHead if settings.actor_head == "deterministic" else SquashedGaussianHead
        self.actor = head(self.flatten.out_dim, widths, low, high)
        self.policy_family = self.actor.family
        self.critics = QCritics(settings.critics, self.flatten.out_dim + len(low), widths)
        self.register_buffer("action_center", torch.as_tensor((high + low) / 2))
        self.register_buffer("action_half", torch.as_tensor((high - low) / 2))
        self.temperature = Temperature(settings.init_temperature) if settings.actor_head != "deterministic" else None

    @property
    def action_dim(self) -> int:
        return int(self.action_center.shape[0])

    @property
    def deterministic(self) -> bool:
        return isinstance(self.policy_family, DeterministicFamily)

    def encode(self, obs: Mapping[str, Tensor] | Tensor) -> Tensor:
        """``[..., obs_dim]``: the (normalised, when the model normalises) observations, flattened."""
        return self.flatten(self.as_obs(obs))

    def policy(self, x: Tensor) -> Any:
        """The actor's policy at encoded observations ``x``: ``Deterministic`` or ``TanhGaussian``."""
        return self.policy_family(self.actor(x))

    def q_values(self, x: Tensor, a: Tensor) -> Tensor:
        """``[n, ...]``: every critic's ``Q_i(s, a)`` at encoded observations ``x``."""
        return self.critics(torch.cat([x, (a - self.action_center) / self.action_half], -1))

    def forward(self, obs: Mapping[str, Tensor] | Tensor) -> dict[str, Tensor]:
        x = self.encode(obs)
        out = self.actor(x)
        out["V"] = self.q_values(x, self.policy_family(out).mode()).min(0).values
        return out
