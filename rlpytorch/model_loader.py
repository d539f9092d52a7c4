"""Build a model by its registered name and arguments, optionally from a checkpoint."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .args_provider import Arg, ArgsError, Configurable
from .model_base import Model, read_checkpoint
from .models import GRUActorCritic, LSTMActorCritic, MLPActorCritic, SharedActorCritic, default_model_name

__all__ = ["MODELS", "ModelLoader", "load_model", "register_model"]

MODELS: dict[str, type[Model]] = {}


def register_model(cls: type[Model]) -> type[Model]:
    """Make ``cls`` loadable by its ``name`` (usable as a class decorator).

    ``cls`` must also be ``Configurable`` and take ``obs_spec`` (a mapping of
    observation key to spec, see ``models.obs_spec``) and ``num_actions``
    keywords besides its declared arguments. Models may share arguments (the
    same ``Arg``): each name appears once in the parser.
    """
    if not issubclass(cls, Configurable):
        raise TypeError(f"{cls.__name__} must be Configurable to be built from arguments")
    if MODELS.get(cls.name, cls) is not cls:
        raise KeyError(f"model name {cls.name!r} already registered by {MODELS[cls.name]}")
    MODELS[cls.name] = cls
    return cls


for _cls in (MLPActorCritic, SharedActorCritic, LSTMActorCritic, GRUActorCritic):
    register_model(_cls)


class ModelLoader(Configurable):
    """Chooses the model class (``--model``) and the checkpoint to start from (``--load``).

    ``--model auto`` picks from the observation spec: ``shared`` (conv / token
    encoders) when some key is an image or a token sequence, else ``mlp``.
    The models' own arguments (e.g. ``--hidden``) are one group of the parser.
    """

    args = (
        Arg("model", "auto", "registered model name (auto: chosen from the observation spec)"),
        Arg("load", "", "checkpoint to start from (empty: fresh weights)"),
    )

    def __init__(self, model: str = "auto", load: str = "") -> None:
        if model != "auto" and model not in MODELS:
            raise KeyError(f"unknown model {model!r}; registered: {sorted(MODELS)}")
        self.model = model
        self.load = load

    @classmethod
    def arg_groups(cls) -> dict[str, tuple[Arg, ...]]:
        shared: dict[str, Arg] = {}
        for model_cls in MODELS.values():
            for arg in model_cls.args:
                if shared.setdefault(arg.name, arg) != arg:
                    raise ArgsError(f"models declare {arg.name!r} differently ({model_cls.__name__})")
        return {cls.__name__: cls.args, "models": tuple(shared.values())}

    def model_class(self, obs_spec: Mapping[str, Any]) -> type[Model]:
        """The chosen class (``auto`` resolved against ``obs_spec``)."""
        return MODELS[default_model_name(obs_spec) if self.model == "auto" else self.model]

    def build(self, obs_spec: Mapping[str, Any], num_actions: int, config: Mapping[str, Any]) -> Model:
        """A model of the chosen class with ``config``'s model args, loaded if asked."""
        model = _construct(self.model_class(obs_spec), obs_spec, num_actions, config)
        if self.load:
            model.load(self.load)
        return model


def _construct(cls: type[Model], obs_spec: Mapping[str, Any], num_actions: int, config: Mapping[str, Any]) -> Model:
    return cls.from_config(config, obs_spec=obs_spec, num_actions=num_actions)


def load_model(path: str | Path, obs_spec: Mapping[str, Any], num_actions: int) -> Model:
    """Rebuild the model saved at ``path`` from the arguments stored with it."""
    checkpoint = read_checkpoint(path)
    cls = MODELS[checkpoint["model"]]
    model = _construct(cls, obs_spec, num_actions, checkpoint["args"])
    model.load_weights(checkpoint["state_dict"], source=str(path))
    model.step = int(checkpoint["step"])
    return model
