"""Action-value models for the DQN family: feed-forward (``q``) and recurrent
(``q_lstm``, ``q_gru``), each ``default_encoder`` (-> ``RecurrentCore``) -> ``QValueHead``.

The head is plain (``Q = W x + b``), dueling (``--dueling``: ``Q = V + A -
mean_a A``), and/or categorical (``--num_atoms N > 1``: C51's distribution
over ``N`` atoms evenly spaced on ``[v_min, v_max]``, ``Q = sum_j z_j p_j``).
They return ``Q`` (and ``log_p`` ``[..., A, N]`` when categorical), and the
greedy policy ``pi = onehot(argmax_a Q)`` with ``V = max_a Q``, so evaluation,
``predict`` and videos play them like any policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from ..core.args_provider import at_least, setting
from .actor_critic import ModelSettings, _spec
from .branch import BranchModel
from .recurrent import RecurrentCore

__all__ = ["GRUQNetwork", "LSTMQNetwork", "QNetwork", "QSettings", "QValueHead"]


@dataclass
class QSettings(ModelSettings):
    """The ready-made models' settings and the Q head's."""

    dueling: bool = setting(False, "Q models: dueling head, Q = V + A - mean_a A")
    num_atoms: int = setting(0, "Q models: atoms of the categorical (C51) value distribution (0: plain Q)",
                             bounds=at_least(0))
    v_min: float = setting(-10.0, "Q models with atoms: smallest atom")
    v_max: float = setting(10.0, "Q models with atoms: largest atom")

    def head(self, in_dim: int, num_actions: Any) -> QValueHead:
        """The Q head these settings describe; ``num_actions`` must count one Discrete action."""
        if not isinstance(num_actions, int):
            raise ValueError(f"Q models need one Discrete action; this game's action space is {num_actions}")
        return QValueHead(in_dim, num_actions, self.dueling, self.num_atoms, self.v_min, self.v_max)


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
        greedy = Q.detach()
        result["pi"] = nn.functional.one_hot(greedy.argmax(-1), self.num_actions).to(Q.dtype)
        result["V"] = greedy.max(-1).values
        return result


class QNetwork(BranchModel):
    """``default_encoder`` (MLP for vectors, conv for images) -> ``QValueHead``."""

    name = "q"
    Settings: ClassVar[type[QSettings]] = QSettings

    def __init__(self, obs_spec: Any, num_actions: int, settings: QSettings | None = None) -> None:
        spec, settings = _spec(obs_spec), settings or QSettings()
        encoder = settings.encoder(spec)
        super().__init__({"q": (encoder, settings.head(encoder.out_dim, num_actions))}, obs_keys=tuple(spec),
                         obs_shapes={key: entry.shape for key, entry in spec.items()})


class _RecurrentQNetwork(BranchModel):
    """``default_encoder`` -> ``RecurrentCore(kind)`` -> ``QValueHead`` (R2D2, DRQN)."""

    kind = "lstm"
    Settings: ClassVar[type[QSettings]] = QSettings

    def __init__(self, obs_spec: Any, num_actions: int, settings: QSettings | None = None) -> None:
        spec, settings = _spec(obs_spec), settings or QSettings()
        encoder = settings.encoder(spec)
        core = RecurrentCore(self.kind, encoder.out_dim, settings.core_hidden)
        super().__init__({"q": (encoder, settings.head(core.out_dim, num_actions))}, obs_keys=tuple(spec),
                         obs_shapes={key: entry.shape for key, entry in spec.items()}, core=core)


class LSTMQNetwork(_RecurrentQNetwork):
    """Recurrent Q network with an LSTM core."""

    name = "q_lstm"
    kind = "lstm"


class GRUQNetwork(_RecurrentQNetwork):
    """Recurrent Q network with a GRU core."""

    name = "q_gru"
    kind = "gru"
