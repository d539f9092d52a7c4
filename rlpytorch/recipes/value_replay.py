"""Value replay: DQN and its family, R2D2 and DRQN.

The actor replies only the greedy (or epsilon-greedy) action; the windows
carry what the replay stores (observations, ``a``, ``r``, ``terminal``,
``truncated``, and a recurrent model's state), one lane per game seat; the
``ValueTrainer`` learns from sampled rows at ``--replay_ratio`` (DQN) or
sampled sequences (R2D2, DRQN: ``in_sequences``, n-step targets summed inside
the sequence).
"""

from __future__ import annotations

from typing import Any

from ..acting.prev_inputs import prev_shapes
from ..acting.sampler import Sampler
from ..core import distributed
from ..core.args_provider import Configurable
from ..core.game_loader import GameLoader
from ..core.seeding import stream_seeds
from ..learners.value_trainer import ValueTrainer, value_interface
from ..models.base import Model
from ..models.interface import ModelInterface
from ..models.q_networks import QValueHead
from ..replay import Replay
from .engine import EngineRecipe


class ValueReplay(EngineRecipe):
    """A Q method learning from a replay of the games' transitions (``in_sequences``: of sequences)."""

    def __init__(self, method: type, in_sequences: bool = False) -> None:
        super().__init__(method)
        self.in_sequences = in_sequences

    def learning_components(self) -> list[type[Configurable]]:
        return [self.method, Replay, Sampler, ValueTrainer]

    def add_tags(self, loader: GameLoader, context: Any, model: Model) -> Any:
        return ValueTrainer.add_tags(loader, context, model.state_size, prev_shapes(model))

    def check_model(self, config: Any, model: Model) -> None:
        if not any(isinstance(m, QValueHead) for m in model.modules()):
            raise ValueError(f"--method {config.method} needs a Q model (--model q, q_lstm or q_gru), "
                             f"not {model.name!r}")
        if distributed.is_distributed():
            raise ValueError(f"--method {config.method} does not run under torchrun (its replay is one "
                             "process's)")

    def build_trainer(self, config: Any, loader: GameLoader, context: Any, model: Model,
                      mi: ModelInterface) -> ValueTrainer:
        self.check_model(config, model)
        if self.in_sequences:
            learner = self.method.from_config(config, n_step=config.n_step)
            sequence_length = learner.replay_length
        else:
            learner, sequence_length = self.method.from_config(config), 0
        replay_seed, sampler_seed = stream_seeds(config.seed, 2)
        replay = Replay.from_config(config, num_lanes=loader.num_games * context.num_seats, obs_keys=model.obs_keys,
                                    gamma=learner.gamma, sequence_length=sequence_length, seed=replay_seed)
        return ValueTrainer.from_config(config, mi=value_interface(model, mi), method=learner,
                                        sampler=Sampler.from_config(config, seed=sampler_seed), replay=replay,
                                        seats_per_game=context.num_seats, statistics=loader.statistic_keys(context))
