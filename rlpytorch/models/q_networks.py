"""Action-value models for the DQN family: feed-forward (``q``) and recurrent
(``q_lstm``, ``q_gru``), each ``default_encoder`` (-> ``RecurrentCore``) -> ``QValueHead``.

The head is plain (``Q = W x + b``), dueling (``--dueling``: ``Q = V + A -
mean_a A``), and/or categorical (``--num_atoms N > 1``: C51's distribution
over ``N`` atoms evenly spaced on ``[v_min, v_max]``, ``Q = sum_j z_j p_j``).
They return ``Q`` (and ``log_p`` ``[..., A, N]`` when categorical);
``GreedyPolicy`` wraps one so that it also returns its greedy policy ``pi``
(one-hot on ``argmax Q``) and ``V = max_a Q``, which the actor-critic
evaluation and tools play unchanged.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from ..args_provider import Arg, Configurable
from ..model_base import Model
from .actor_critic import _spec
from .branch import BranchModel
from .encoders import ACTIVATION, CHANNELS, EMBED_DIM, HIDDEN, LAYERS, default_encoder
from .recurrent import CORE_HIDDEN, RecurrentCore

__all__ = ["GRUQNetwork", "GreedyPolicy", "LSTMQNetwork", "QNetwork", "QValueHead"]

DUELING = Arg("dueling", False, "Q models: dueling head, Q = V + A - mean_a A")
NUM_ATOMS = Arg("num_atoms", 0, "Q models: atoms of the categorical (C51) value distribution (0: plain Q)")
V_MIN = Arg("v_min", -10.0, "Q models with atoms: smallest atom")
V_MAX = Arg("v_max", 10.0, "Q models with atoms: largest atom")
Q_ARGS = (HIDDEN, LAYERS, ACTIVATION, CHANNELS, EMBED_DIM, DUELING, NUM_ATOMS, V_MIN, V_MAX)


class QValueHead(nn.Module):
    """features ``[..., F]`` -> ``Q`` ``[..., A]`` (plain, dueling and/or categorical)."""

    def __init__(self, in_dim: int, num_actions: int, dueling: bool = False, num_atoms: int = 0,
                 v_min: float = -10.0, v_max: float = 10.0) -> None:
        super().__init__()
        if num_atoms == 1 or (num_atoms > 1 and v_max <= v_min):
            raise ValueError(f"a categorical head needs num_atoms >= 2 and v_max > v_min; got {num_atoms}, "
                             f"[{v_min}, {v_max}]")
        self.num_actions = num_actions
        self.atoms = max(num_atoms, 1)
        self.advantage = nn.Linear(in_dim, num_actions * self.atoms)
        self.value = nn.Linear(in_dim, self.atoms) if dueling else None
        self.register_buffer("support", torch.linspace(v_min, v_max, num_atoms) if num_atoms > 1 else None)

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        out = self.advantage(x).unflatten(-1, (self.num_actions, self.atoms))
        if self.value is not None:
            out = self.value(x).unsqueeze(-2) + out - out.mean(-2, keepdim=True)
        if self.support is None:
            Q = out.squeeze(-1)
            result = {"Q": Q}
        else:
            log_p = out.log_softmax(-1)
            Q = (log_p.exp() * self.support).sum(-1)
            result = {"Q": Q, "log_p": log_p}
        return result


class GreedyPolicy(Model):
    """A Q model seen as a policy: its outputs plus ``pi = onehot(argmax_a Q)`` and ``V = max_a Q``."""

    def __init__(self, q_model: Model) -> None:
        super().__init__()
        self.q_model = q_model
        self.obs_keys = q_model.obs_keys
        self.state_size = q_model.state_size
        self.step = q_model.step

    def forward(self, *args: Any) -> dict[str, Tensor]:
        out = dict(self.q_model(*args))
        Q = out["Q"]
        out["pi"] = nn.functional.one_hot(Q.argmax(-1), Q.shape[-1]).to(Q.dtype)
        out["V"] = Q.max(-1).values
        return out


class QNetwork(BranchModel, Configurable):
    """``default_encoder`` (MLP for vectors, conv for images) -> ``QValueHead``."""

    name = "q"
    args = Q_ARGS

    def __init__(self, obs_spec: Any, num_actions: int, hidden: int = 64, layers: int = 2, activation: str = "tanh",
                 channels: str = "32,32", embed_dim: int = 32, dueling: bool = False, num_atoms: int = 0,
                 v_min: float = -10.0, v_max: float = 10.0) -> None:
        spec = _spec(obs_spec)
        encoder = default_encoder(spec, hidden, layers, activation, channels, embed_dim)
        head = QValueHead(encoder.out_dim, num_actions, dueling, num_atoms, v_min, v_max)
        super().__init__({"q": (encoder, head)}, obs_keys=tuple(spec))


class _RecurrentQNetwork(BranchModel, Configurable):
    """``default_encoder`` -> ``RecurrentCore(kind)`` -> ``QValueHead`` (R2D2, DRQN)."""

    kind = "lstm"
    args = (*Q_ARGS, CORE_HIDDEN)

    def __init__(self, obs_spec: Any, num_actions: int, hidden: int = 64, layers: int = 2, activation: str = "tanh",
                 channels: str = "32,32", embed_dim: int = 32, dueling: bool = False, num_atoms: int = 0,
                 v_min: float = -10.0, v_max: float = 10.0, core_hidden: int = 64) -> None:
        spec = _spec(obs_spec)
        encoder = default_encoder(spec, hidden, layers, activation, channels, embed_dim)
        core = RecurrentCore(self.kind, encoder.out_dim, core_hidden)
        head = QValueHead(core.out_dim, num_actions, dueling, num_atoms, v_min, v_max)
        super().__init__({"q": (encoder, head)}, obs_keys=tuple(spec), core=core)


class LSTMQNetwork(_RecurrentQNetwork):
    """Recurrent Q network with an LSTM core."""

    name = "q_lstm"
    kind = "lstm"


class GRUQNetwork(_RecurrentQNetwork):
    """Recurrent Q network with a GRU core."""

    name = "q_gru"
    kind = "gru"
