"""Models built from parts: encoders (chosen from the observation spec), heads,
an optional recurrent core, composed by ``BranchModel``. Ready-made ones are in
``actor_critic.py``; register new ones with ``loader.register_model``. The layer
also holds the ``Model`` base class and checkpoints (``base``), the model a run
trains with its optimizer (``interface``) and observation and reward
normalization (``normalization``). It may import ``core`` and ``acting``."""

from .actor_critic import (
    GRUActorCritic,
    LSTMActorCritic,
    MLPActorCritic,
    ModelSettings,
    SharedActorCritic,
    default_model_name,
)
from .branch import BranchModel
from .encoders import (
    ConvEncoder,
    MLPEncoder,
    MultiEncoder,
    ObsKey,
    PixelEncoder,
    TokenEncoder,
    default_encoder,
    obs_spec,
)
from .heads import GaussianHead, PolicyHead, QHead, ValueHead
from .recurrent import RecurrentCore

__all__ = [
    "BranchModel",
    "ConvEncoder",
    "GRUActorCritic",
    "GaussianHead",
    "LSTMActorCritic",
    "MLPActorCritic",
    "MLPEncoder",
    "ModelSettings",
    "MultiEncoder",
    "ObsKey",
    "PixelEncoder",
    "PolicyHead",
    "QHead",
    "RecurrentCore",
    "SharedActorCritic",
    "TokenEncoder",
    "ValueHead",
    "default_encoder",
    "default_model_name",
    "obs_spec",
]
