"""Recipes: one per family of methods, each owning its components, tags, model checks and trainer.

A recipe is what ``python -m rlpytorch.train --method NAME`` (and
``rlpytorch.train(config)``) assembles a run from: the components whose
settings the run offers, the keys its actor replies and its windows carry,
the checks its model must pass, and the trainer (or, for AlphaZero, the
self-play loop) it drives. ``RECIPES`` maps each method's name to its recipe.

Layer: above ``run`` (it builds runners), below the entry points.

- ``OnPolicy``: ActorCritic, PPO (``on_policy``)
- ``ValueReplay``: DQN, R2D2, DRQN (``value_replay``)
- ``OffPolicy``: DDPG, TD3, SAC; ``Joint``: MADDPG (``off_policy``)
- ``AlphaZeroRecipe``: self-play searched by the game (``alphazero``)
"""

from ..methods import DDPG, DQN, DRQN, MADDPG, PPO, R2D2, SAC, TD3, ActorCritic
from .alphazero import AlphaZeroRecipe
from .engine import EngineRecipe, EngineSession, TrainScript
from .off_policy import Joint, OffPolicy
from .on_policy import OnPolicy
from .value_replay import ValueReplay

RECIPES = {
    "actor_critic": OnPolicy(ActorCritic),
    "ppo": OnPolicy(PPO, seeded=True),
    "dqn": ValueReplay(DQN),
    "r2d2": ValueReplay(R2D2, in_sequences=True),
    "drqn": ValueReplay(DRQN, in_sequences=True),
    "ddpg": OffPolicy(DDPG),
    "td3": OffPolicy(TD3),
    "sac": OffPolicy(SAC),
    "maddpg": Joint(MADDPG),
    "alphazero": AlphaZeroRecipe(),
}

__all__ = ["RECIPES", "AlphaZeroRecipe", "EngineRecipe", "EngineSession", "Joint", "OffPolicy", "OnPolicy",
           "TrainScript", "ValueReplay"]
