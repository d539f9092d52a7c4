"""Build a model by its registered name and arguments, optionally from a checkpoint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .args_provider import Arg, Configurable
from .model_base import Model, read_checkpoint
from .models import MLPActorCritic

__all__ = ["MODELS", "ModelLoader", "load_model", "register_model"]

MODELS: dict[str, type[Model]] = {}


def register_model(cls: type[Model]) -> type[Model]:
    """Make ``cls`` loadable by its ``name`` (usable as a class decorator).

    ``cls`` must also be ``Configurable`` and take ``obs_shape`` and
    ``num_actions`` keywords besides its declared arguments.
    """
    if not issubclass(cls, Configurable):
        raise TypeError(f"{cls.__name__} must be Configurable to be built from arguments")
    if MODELS.get(cls.name, cls) is not cls:
        raise KeyError(f"model name {cls.name!r} already registered by {MODELS[cls.name]}")
    MODELS[cls.name] = cls
    return cls


register_model(MLPActorCritic)


class ModelLoader(Configurable):
    """Chooses the model class (``--model``) and the checkpoint to start from (``--load``).

    The model's own arguments (e.g. ``--hidden``) come from its class; they are
    part of the parser through ``arg_groups``.
    """

    args = (
        Arg("model", "mlp", "registered model name"),
        Arg("load", "", "checkpoint to start from (empty: fresh weights)"),
    )

    def __init__(self, model: str = "mlp", load: str = "") -> None:
        if model not in MODELS:
            raise KeyError(f"unknown model {model!r}; registered: {sorted(MODELS)}")
        self.model_class = MODELS[model]
        self.load = load

    @classmethod
    def arg_groups(cls) -> dict[str, tuple[Arg, ...]]:
        groups = {cls.__name__: cls.args}
        for model_cls in MODELS.values():
            groups[model_cls.__name__] = model_cls.args
        return groups

    def build(self, obs_shape: Sequence[int], num_actions: int, config: Mapping[str, Any]) -> Model:
        """A model of the chosen class with ``config``'s model args, loaded if asked."""
        model = _construct(self.model_class, obs_shape, num_actions, config)
        if self.load:
            model.load(self.load)
        return model


def _construct(
    cls: type[Model],
    obs_shape: Sequence[int],
    num_actions: int,
    config: Mapping[str, Any],
) -> Model:
    return cls.from_config(config, obs_shape=tuple(obs_shape), num_actions=num_actions)


def load_model(path: str | Path, obs_shape: Sequence[int], num_actions: int) -> Model:
    """Rebuild the model saved at ``path`` from the arguments stored with it."""
    checkpoint = read_checkpoint(path)
    cls = MODELS[checkpoint["model"]]
    model = _construct(cls, obs_shape, num_actions, checkpoint["args"])
    model.load_weights(checkpoint["state_dict"], source=str(path))
    model.step = int(checkpoint["step"])
    return model
