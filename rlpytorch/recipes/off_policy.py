"""Off-policy control on Box actions: DDPG, TD3, SAC; and MADDPG, their joint multi-agent form.

The actor replies the policy's action plus ``Exploration``'s noise (uniform
random for the first ``--learning_starts`` frames); the windows go to a
replay, one lane per game seat, and the ``OffPolicyTrainer`` learns from
sampled transitions at ``--replay_ratio``. MADDPG (``Joint``) learns every
seat of a game together: the ``JointTrainer`` joins a game's seat windows
into one row of a replay with one lane per game.
"""

from __future__ import annotations

from typing import Any

from ..acting.exploration import Exploration
from ..acting.prev_inputs import prev_shapes
from ..core import distributed
from ..core.args_provider import Configurable
from ..core.distributions import DeterministicFamily
from ..core.game_loader import GameLoader
from ..core.seeding import stream_seeds
from ..learners.offpolicy_trainer import JointTrainer, OffPolicyTrainer, offpolicy_interface
from ..models.base import Model
from ..models.interface import ModelInterface
from ..replay import Replay
from .engine import EngineRecipe


class OffPolicy(EngineRecipe):
    """An actor-critic method on Box actions, learning from a replay of each seat's transitions."""

    trainer = OffPolicyTrainer

    def learning_components(self) -> list[type[Configurable]]:
        return [self.method, Replay, Exploration, OffPolicyTrainer]

    def add_tags(self, loader: GameLoader, context: Any, model: Model) -> Any:
        return self.trainer.add_tags(loader, context, model.state_size, prev_shapes(model))

    def check_run(self, config: Any, loader: GameLoader, context: Any, model: Model) -> None:
        """``ValueError`` unless the model fits the method and the run can hold its replay."""
        if distributed.is_distributed():
            raise ValueError(f"--method {config.method} does not run under torchrun (its replay is one "
                             "process's)")
        if config.warmup_noise and not isinstance(model.policy_family, DeterministicFamily):
            raise ValueError(f"--warmup_noise adds a deterministic actor's noise; --method {config.method} "
                             "explores by sampling its own policy")

    def replay_lanes(self, loader: GameLoader, context: Any) -> dict[str, int]:
        """The replay's lanes: one per game seat."""
        return {"num_lanes": loader.num_games * context.num_seats}

    def build_trainer(self, config: Any, loader: GameLoader, context: Any, model: Model,
                      mi: ModelInterface) -> OffPolicyTrainer:
        method_seed, replay_seed, exploration_seed = stream_seeds(config.seed, 3)
        learner = self.method.from_config(config, seed=method_seed)
        learner.check_model(model)
        self.check_run(config, loader, context, model)
        replay = Replay.from_config(config, **self.replay_lanes(loader, context), obs_keys=model.obs_keys,
                                    gamma=learner.gamma, seed=replay_seed)
        family = model.policy_family
        exploration = Exploration.from_config(config, low=family.low, high=family.high,
                                              random_frames=config.learning_starts, seed=exploration_seed)
        return self.trainer.from_config(config, mi=offpolicy_interface(model, mi), method=learner,
                                        sampler=exploration, replay=replay, seats_per_game=context.num_seats,
                                        statistics=loader.statistic_keys(context))


class Joint(OffPolicy):
    """MADDPG: every seat of a game learned together, from joint transitions (one replay lane per game)."""

    trainer = JointTrainer

    def check_run(self, config: Any, loader: GameLoader, context: Any, model: Model) -> None:
        super().check_run(config, loader, context, model)
        method, seats = config.method, context.num_seats
        if config.runner != "single":
            raise ValueError(f"--method {method} runs with --runner single (its trainer joins a game's seats)")
        if seats < 2 or model.seats != seats:
            raise ValueError(f"--method {method} learns from every seat of a game together: it needs a game of "
                             f"at least 2 seats and a model of as many; game {loader.game!r} has {seats}, the "
                             f"model {model.seats}")

    def replay_lanes(self, loader: GameLoader, context: Any) -> dict[str, int]:
        """One lane per game, every seat on each row."""
        return {"num_lanes": loader.num_games, "joint_seats": context.num_seats}
