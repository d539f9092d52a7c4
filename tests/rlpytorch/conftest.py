"""Shared fixtures: a small actor-critic setup over the fake CartPole engine."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from fake_engine import FakeGameContext  # noqa: E402

from rlpytorch.game_loader import GameLoader  # noqa: E402
from rlpytorch.methods import ActorCritic  # noqa: E402
from rlpytorch.model_interface import ModelInterface  # noqa: E402
from rlpytorch.models import MLPActorCritic  # noqa: E402
from rlpytorch.sampler import Sampler  # noqa: E402
from rlpytorch.trainer import Trainer  # noqa: E402


@pytest.fixture
def trainer():
    torch.manual_seed(0)
    mi = ModelInterface.actor_critic(MLPActorCritic((4,), 2, hidden=16), {"lr": 1e-3})
    return Trainer(mi, ActorCritic.from_config({}), Sampler(seed=0), actor_sync_every=2)


def fake_loader(num_games=8, T=5, seed=0, **options):
    """A ``GameLoader`` whose contexts are fake CartPoles (one batch = all games)."""
    return GameLoader(
        num_games=num_games,
        seed=seed,
        actor_batch=num_games,
        train_batch=num_games,
        T=T,
        game_options=",".join(f"{k}={v}" for k, v in options.items()),
        context_factory=FakeGameContext,
    )


def fake_context(num_games=8, T=5, seed=0, train=True, state_size=0, **options):
    loader = fake_loader(num_games, T, seed, **options)
    if train:
        return loader.train_context(state_size)
    return loader.eval_context(num_games, state_size=state_size)
