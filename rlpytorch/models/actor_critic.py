"""Ready-made actor-critic models, each a composition of encoders, heads and
(for the recurrent ones) a core. All take the observation spec (a shape, or a
mapping of key to ``KeySpec``/``ObsKey``/shape) and the action space (a
number of discrete actions, or a gymnasium space: ``heads.policy_head`` picks
the policy head), and return the policy's parameters (``pi`` ``[..., A]`` for
discrete actions, ``mean``/``std`` for Box ones) and ``V`` ``[...]``. ::

    | name | composition | default for |
    |---|---|---|
    | ``mlp`` | separate policy and value MLP trunks over all keys | vector observations (CartPole) |
    | ``shared`` | ``default_encoder`` (conv / MLP / tokens) shared by both heads | images (MiniRTS ``s``, ``v``) |
    | ``lstm``, ``gru`` | ``default_encoder`` -> recurrent core -> both heads | (choose with ``--model``) |
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..core.args_provider import Configurable, at_least, setting
from .branch import BranchModel
from .encoders import ACTIVATIONS, MLPEncoder, ObsKey, default_encoder, obs_spec
from .heads import BOX_POLICIES, ValueHead, policy_head
from .recurrent import RecurrentCore

__all__ = [
    "GRUActorCritic",
    "LSTMActorCritic",
    "MLPActorCritic",
    "ModelSettings",
    "SharedActorCritic",
    "default_model_name",
]


@dataclass
class ModelSettings(Configurable):
    """The settings of the ready-made models (each reads those of its parts)."""

    hidden: int = setting(64, "width of hidden layers (MLP encoders, the conv encoder's output)", bounds=at_least(1))
    layers: int = setting(2, "hidden layers of MLP encoders", bounds=at_least(0))
    activation: str = setting("tanh", "hidden activation of MLP encoders", choices=tuple(ACTIVATIONS))
    channels: str = setting("32,32", "channels of the conv encoder's 3x3 layers, comma-separated")
    pool: bool = setting(True, "2x2 max-pooling after each of the conv encoder's layers (--no-pool keeps "
                               "every position: more weights in its linear layer)")
    embed_dim: int = setting(32, "token embedding width of the token-sequence encoder", bounds=at_least(1))
    core_hidden: int = setting(64, "state width of the recurrent core (lstm, gru models)", bounds=at_least(1))
    box_policy: str = setting(
        "gaussian", "policy for Box actions (discrete actions: categorical)", choices=BOX_POLICIES
    )

    def encoder(self, spec: Mapping[str, ObsKey]) -> Any:
        """``default_encoder`` of ``spec`` with these settings."""
        return default_encoder(spec, self.hidden, self.layers, self.activation, self.channels, self.embed_dim,
                               pool=self.pool)


class MLPActorCritic(BranchModel):
    """Two branches with their own MLP trunk: ``policy`` -> ``pi``, ``value`` -> ``V``.

    Separate trunks keep the value regression from disturbing the policy.
    """

    name = "mlp"
    Settings: ClassVar[type[ModelSettings]] = ModelSettings

    def __init__(self, obs_spec: Any, num_actions: Any, settings: ModelSettings | None = None) -> None:
        spec, settings = _spec(obs_spec), settings or ModelSettings()
        policy = MLPEncoder(spec, None, settings.hidden, settings.layers, settings.activation)
        value = MLPEncoder(spec, None, settings.hidden, settings.layers, settings.activation)
        super().__init__(
            {
                "policy": (policy, policy_head(policy.out_dim, num_actions, settings.box_policy)),
                "value": (value, ValueHead(value.out_dim)),
            },
            obs_keys=tuple(spec),
            obs_shapes={key: entry.shape for key, entry in spec.items()},
        )


class SharedActorCritic(BranchModel):
    """One encoder chosen from the spec (``default_encoder``), run once for both heads."""

    name = "shared"
    Settings: ClassVar[type[ModelSettings]] = ModelSettings

    def __init__(self, obs_spec: Any, num_actions: Any, settings: ModelSettings | None = None) -> None:
        spec, settings = _spec(obs_spec), settings or ModelSettings()
        encoder = settings.encoder(spec)
        super().__init__(
            {
                "policy": (encoder, policy_head(encoder.out_dim, num_actions, settings.box_policy)),
                "value": (encoder, ValueHead(encoder.out_dim)),
            },
            obs_keys=tuple(spec),
            obs_shapes={key: entry.shape for key, entry in spec.items()},
        )


class _RecurrentActorCritic(BranchModel):
    """``default_encoder`` -> ``RecurrentCore(kind)`` -> policy and value heads."""

    kind = "lstm"
    Settings: ClassVar[type[ModelSettings]] = ModelSettings

    def __init__(self, obs_spec: Any, num_actions: Any, settings: ModelSettings | None = None) -> None:
        spec, settings = _spec(obs_spec), settings or ModelSettings()
        encoder = settings.encoder(spec)
        core = RecurrentCore(self.kind, encoder.out_dim, settings.core_hidden)
        super().__init__(
            {
                "policy": (encoder, policy_head(core.out_dim, num_actions, settings.box_policy)),
                "value": (encoder, ValueHead(core.out_dim)),
            },
            obs_keys=tuple(spec),
            obs_shapes={key: entry.shape for key, entry in spec.items()},
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
