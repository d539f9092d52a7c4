"""Build a model by its registered name and settings, optionally from a checkpoint."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..acting.prev_inputs import PrevInputs
from ..core.args_provider import Arg, ArgsError, Bounds, Configurable, setting, settings_record
from . import GRUActorCritic, LSTMActorCritic, MLPActorCritic, SharedActorCritic, default_model_name
from . import obs_spec as normalized_spec
from .actor_q import ActorQ
from .base import CheckpointError, Model, read_checkpoint
from .normalization import add_normalizers
from .q_networks import GRUQNetwork, LSTMQNetwork, QNetwork
from .seat_actor_q import SeatActorQ

__all__ = ["MODELS", "ModelLoader", "load_model", "register_model"]

MODELS: dict[str, type[Model]] = {}


def register_model(cls: type[Model]) -> type[Model]:
    """Make ``cls`` loadable by its ``name`` (usable as a class decorator).

    ``cls.Settings`` must be a ``Configurable`` dataclass of its settings, and
    ``cls(obs_spec, num_actions, settings)`` must build the model (``obs_spec``:
    a mapping of observation key to spec, see ``models.obs_spec``). Models may
    share settings (same name, default and help): each name appears once in
    the parser.
    """
    settings_cls = getattr(cls, "Settings", None)
    if not (isinstance(settings_cls, type) and issubclass(settings_cls, Configurable)):
        raise TypeError(f"{cls.__name__}.Settings must be a Configurable dataclass of the model's settings")
    if MODELS.get(cls.name, cls) is not cls:
        raise KeyError(f"model name {cls.name!r} already registered by {MODELS[cls.name]}")
    MODELS[cls.name] = cls
    return cls


for _cls in (MLPActorCritic, SharedActorCritic, LSTMActorCritic, GRUActorCritic, QNetwork, LSTMQNetwork, GRUQNetwork,
             ActorQ, SeatActorQ):
    register_model(_cls)


def model_settings() -> tuple[Arg, ...]:
    """The settings of every registered model, each name once."""
    shared: dict[str, Arg] = {}
    for model_cls in MODELS.values():
        for arg in model_cls.Settings.settings():
            if shared.setdefault(arg.name, arg) != arg:
                raise ArgsError(f"models declare {arg.name!r} differently ({model_cls.__name__})")
    return tuple(shared.values())


@dataclass(eq=False)
class ModelLoader(Configurable):
    """Chooses the model class (``--model``) and the checkpoint to start from (``--load``).

    ``--model auto`` picks from the observation spec: ``shared`` (conv / token
    encoders) when some key is an image or a token sequence, else ``mlp``.
    The models' own settings (e.g. ``--hidden``) are one group of the parser;
    ``values`` holds those given (the others take the model's defaults).
    """

    model: str = setting("auto", "registered model name (auto: chosen from the observation spec)")
    load: str = setting("", "checkpoint to start from (empty: fresh weights)")
    norm_obs: bool = setting(False, "normalize observations by their running mean and variance (merged over "
                                    "ranks; saved in checkpoints; evaluation uses them as saved)")
    norm_reward: bool = setting(False, "scale rewards by the running std of the discounted return (VecNormalize)")
    norm_gamma: float = setting(0.99, "discount of the returns whose std scales rewards with --norm_reward",
                                bounds=Bounds(0, 1))
    prev_action: bool = setting(False, "the model also reads the previous action (one-hot for discrete actions; "
                                       "zero at episode starts)")
    prev_reward: bool = setting(False, "the model also reads the previous reward (zero at episode starts)")
    values: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.model != "auto" and self.model not in MODELS:
            raise ArgsError(f"--model: unknown model {self.model!r}; registered: {sorted(MODELS)}")

    @classmethod
    def arg_groups(cls) -> dict[str, tuple[Arg, ...]]:
        return {**super().arg_groups(), "models": model_settings()}

    @classmethod
    def from_config(cls, config: Any, **extra: Any) -> ModelLoader:
        """Its own settings and the models' settings from ``config``."""
        given = settings_record(config)
        values = {arg.name: given[arg.name] for arg in model_settings() if arg.name in given}
        return super().from_config(config, **{"values": values, **extra})

    def model_class(self, obs_spec: Mapping[str, Any]) -> type[Model]:
        """The chosen class (``auto`` resolved against ``obs_spec``)."""
        return MODELS[default_model_name(obs_spec) if self.model == "auto" else self.model]

    def build(self, obs_spec: Mapping[str, Any], num_actions: int, seats: int = 1) -> Model:
        """A model of the chosen class with the given settings, loaded if asked, for a game of ``seats`` seats."""
        model = _construct(self.model_class(obs_spec), obs_spec, num_actions, self.values,
                           self.prev_action, self.prev_reward, seats)
        add_normalizers(model, self.norm_obs, self.norm_reward, self.norm_gamma)
        if self.load:
            model.load(self.load)
        return model


def _construct(cls: type[Model], obs_spec: Mapping[str, Any], num_actions: int, values: Mapping[str, Any],
               prev_action: bool = False, prev_reward: bool = False, seats: int = 1) -> Model:
    """``cls`` built on ``obs_spec`` and, when asked, the previous action and reward
    (two more float observation keys, see ``rlpytorch.acting.prev_inputs``). A model with a
    part per seat (a ``seats`` setting, 0 meaning the game's) is built for ``seats``."""
    prev = PrevInputs(num_actions, prev_action, prev_reward) if prev_action or prev_reward else None
    if prev is not None:
        obs_spec = normalized_spec(obs_spec)
        clash = sorted(set(prev.keys) & set(obs_spec))
        if clash:
            raise ValueError(f"the game already has observation keys {clash}; --prev_action/--prev_reward add them")
        obs_spec = {**obs_spec, **prev.shapes()}
    settings = cls.Settings.from_config(values)
    if getattr(settings, "seats", None) == 0:
        settings.seats = seats
    model = cls(obs_spec, num_actions, settings)
    model.prev_inputs = prev
    return model


def load_model(path: str | Path, obs_spec: Mapping[str, Any], num_actions: int, seats: int = 1) -> Model:
    """Rebuild the model saved at ``path`` from the settings stored with it (for a game of ``seats`` seats)."""
    checkpoint = read_checkpoint(path)
    if checkpoint["model"] not in MODELS:
        raise CheckpointError(f"{path} holds a model named {checkpoint['model']!r}, which no registered model is "
                              f"(registered: {sorted(MODELS)})")
    cls = MODELS[checkpoint["model"]]
    args = checkpoint["args"]
    model = _construct(cls, obs_spec, num_actions, args, args.get("prev_action", False), args.get("prev_reward", False),
                       seats)
    add_normalizers(model, args.get("norm_obs", False), args.get("norm_reward", False), args.get("norm_gamma", 0.99))
    model.load_weights(checkpoint["state_dict"], source=str(path))
    model.step = int(checkpoint["step"])
    return model
