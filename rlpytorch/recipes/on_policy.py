"""On-policy windows: ActorCritic and PPO.

The actor replies an action, its behaviour policy (``pi``, or ``logp`` for
other than one Discrete action) and ``V``; the engine gathers each game's
``T`` steps into windows, and the ``Trainer`` makes one update per window
(``learners.trainer``), with the method's importance correction for the
acting model's lag.
"""

from __future__ import annotations

from typing import Any

from ..acting.prev_inputs import prev_shapes
from ..acting.sampler import Sampler
from ..core.args_provider import Configurable
from ..core.game_loader import GameLoader
from ..core.seeding import stream_seeds
from ..learners.trainer import Trainer
from ..models.base import Model
from ..models.interface import ModelInterface
from .engine import EngineRecipe


class OnPolicy(EngineRecipe):
    """A method learning from windows of the policy that acted (``seeded``: it draws random numbers, e.g. PPO's
    minibatch order, and takes the run's seed)."""

    def __init__(self, method: type, seeded: bool = False) -> None:
        super().__init__(method)
        self.seeded = seeded

    def learning_components(self) -> list[type[Configurable]]:
        return [self.method, Sampler, Trainer]

    def learner_device(self, config: Any) -> str:
        return config.learner_device or config.device  # the Trainer may learn on a device of its own

    def add_tags(self, loader: GameLoader, context: Any, model: Model) -> Any:
        return Trainer.add_tags(loader, context, model.state_size, prev_shapes(model))

    def build_trainer(self, config: Any, loader: GameLoader, context: Any, model: Model,
                      mi: ModelInterface) -> Trainer:
        method_seed, sampler_seed = stream_seeds(config.seed, 2)
        method = self.method.from_config(config, **({"seed": method_seed} if self.seeded else {}))
        return Trainer.from_config(config, mi=mi.add_actor_critic(model), method=method,
                                   sampler=Sampler.from_config(config, seed=sampler_seed),
                                   seats_per_game=context.num_seats, statistics=loader.statistic_keys(context))
