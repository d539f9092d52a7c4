"""Ready-made actor-critic models, each a composition of encoders, heads and
(for the recurrent ones) a core. All take the observation spec (a shape, or a
mapping of key to ``KeySpec``/``ObsKey``/shape) and the action space (a
number of discrete actions, or a gymnasium space: ``heads.policy_head`` picks
the policy head), and return the policy's parameters (``pi`` ``[..., A]`` for
discrete actions, ``mean``/``std`` for Box ones) and ``V`` ``[...]``.

| name | composition | default for |
|---|---|---|
| ``mlp`` | separate policy and value MLP trunks over all keys | vector observations (CartPole) |
| ``shared`` | ``default_encoder`` (conv / MLP / tokens) shared by both heads | images (MiniRTS ``s``, ``v``) |
| ``lstm``, ``gru`` | ``default_encoder`` -> recurrent core -> both heads | (choose with ``--model``) |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..args_provider import Configurable
from .branch import BranchModel
from .encoders import ACTIVATION, CHANNELS, EMBED_DIM, HIDDEN, LAYERS, MLPEncoder, ObsKey, default_encoder, obs_spec
from .heads import BOX_POLICY, ValueHead, policy_head
from .recurrent import CORE_HIDDEN, RecurrentCore

__all__ = ["GRUActorCritic", "LSTMActorCritic", "MLPActorCritic", "SharedActorCritic", "default_model_name"]


class MLPActorCritic(BranchModel, Configurable):
    """Two branches with their own MLP trunk: ``policy`` -> ``pi``, ``value`` -> ``V``.

    Separate trunks keep the value regression from disturbing the policy.
    """

    name = "mlp"
    args = (HIDDEN, LAYERS, ACTIVATION, BOX_POLICY)

    def __init__(
        self,
        obs_spec: Any,
        num_actions: Any,
        hidden: int = 64,
        layers: int = 2,
        activation: str = "tanh",
        box_policy: str = "gaussian",
    ) -> None:
        spec = _spec(obs_spec)
        policy = MLPEncoder(spec, None, hidden, layers, activation)
        value = MLPEncoder(spec, None, hidden, layers, activation)
        super().__init__(
            {
                "policy": (policy, policy_head(policy.out_dim, num_actions, box_policy)),
                "value": (value, ValueHead(value.out_dim)),
            },
            obs_keys=tuple(spec),
        )


class SharedActorCritic(BranchModel, Configurable):
    """One encoder chosen from the spec (``default_encoder``), run once for both heads."""

    name = "shared"
    args = (HIDDEN, LAYERS, ACTIVATION, CHANNELS, EMBED_DIM, BOX_POLICY)

    def __init__(
        self,
        obs_spec: Any,
        num_actions: Any,
        hidden: int = 64,
        layers: int = 2,
        activation: str = "tanh",
        channels: str = "32,32",
        embed_dim: int = 32,
        box_policy: str = "gaussian",
    ) -> None:
        spec = _spec(obs_spec)
        encoder = default_encoder(spec, hidden, layers, activation, channels, embed_dim)
        super().__init__(
            {
                "policy": (encoder, policy_head(encoder.out_dim, num_actions, box_policy)),
                "value": (encoder, ValueHead(encoder.out_dim)),
            },
            obs_keys=tuple(spec),
        )


class _RecurrentActorCritic(BranchModel, Configurable):
    """``default_encoder`` -> ``RecurrentCore(kind)`` -> policy and value heads."""

    kind = "lstm"
    args = (HIDDEN, LAYERS, ACTIVATION, CHANNELS, EMBED_DIM, CORE_HIDDEN, BOX_POLICY)

    def __init__(
        self,
        obs_spec: Any,
        num_actions: Any,
        hidden: int = 64,
        layers: int = 2,
        activation: str = "tanh",
        channels: str = "32,32",
        embed_dim: int = 32,
        core_hidden: int = 64,
        box_policy: str = "gaussian",
    ) -> None:
        spec = _spec(obs_spec)
        encoder = default_encoder(spec, hidden, layers, activation, channels, embed_dim)
        core = RecurrentCore(self.kind, encoder.out_dim, core_hidden)
        super().__init__(
            {
                "policy": (encoder, policy_head(core.out_dim, num_actions, box_policy)),
                "value": (encoder, ValueHead(core.out_dim)),
            },
            obs_keys=tuple(spec),
            core=core,
        )


class LSTMActorCritic(_RecurrentActorCritic):
    """Recurrent actor-critic with an LSTM core (state: ``h`` and ``c``)."""

    name = "lstm"
    kind = "lstm"


class GRUActorCritic(_RecurrentActorCritic):
    """Recurrent actor-critic with a GRU core."""

    name = "gru"
    kind = "gru"


def _spec(spec: Any) -> dict[str, ObsKey]:
    spec = obs_spec(spec)
    if not spec:
        raise ValueError("the model needs at least one observation key")
    return spec


def default_model_name(spec: Mapping[str, Any] | Any) -> str:
    """``shared`` when some key is an image or a token sequence, else ``mlp``."""
    entries = obs_spec(spec).values()
    return "shared" if any(e.is_image or e.is_pixels or e.is_tokens for e in entries) else "mlp"
