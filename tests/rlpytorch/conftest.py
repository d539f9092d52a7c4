"""Shared fixtures: a small actor-critic setup. The helpers the tests import
are in ``fakes`` (pytest puts this folder on the import path, so it imports
as is; a name of its own, unlike ``conftest``, also resolves in the learner
processes the multi-process tests spawn)."""

import pytest
import torch

from rlpytorch.acting.sampler import Sampler
from rlpytorch.learners.trainer import Trainer
from rlpytorch.methods import ActorCritic
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.interface import ModelInterface


@pytest.fixture
def trainer():
    torch.manual_seed(0)
    mi = ModelInterface(lr=1e-3).add_actor_critic(MLPActorCritic((4,), 2, ModelSettings(hidden=16)))
    return Trainer(mi, ActorCritic.from_config({}), Sampler(seed=0), actor_sync_every=2)
