"""Ready-made models; register new ones with ``model_loader.register_model``."""

from .mlp import MLPActorCritic

__all__ = ["MLPActorCritic"]
