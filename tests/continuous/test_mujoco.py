"""MuJoCo through the hosted path: the example configs' environments
(HalfCheetah-v5, Hopper-v5) under GameContext, trained by PPO with the
configs' tanh-squashed Gaussian policy for a few windows (a smoke test: the
wiring, not the learning, which is recorded in docs/results/2026-12-01-continuous-control.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rlpytorch.acting.sampler import Sampler
from rlpytorch.core.args_provider import read_config_file
from rlpytorch.core.game_loader import GameLoader
from rlpytorch.learners.trainer import Trainer
from rlpytorch.methods import PPO
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.interface import ModelInterface


@pytest.mark.parametrize(
    ("config_name", "obs_dim", "action_dim"),
    [("mujoco_halfcheetah_ppo", 17, 6), ("mujoco_hopper_ppo", 11, 3)],
)
def test_ppo_steps_a_hosted_mujoco_environment_from_its_config(config_name, obs_dim, action_dim):
    config = read_config_file(config_name)
    loader = GameLoader(game=config["game"], num_games=2, num_workers=1, actor_batch=2, train_batch=2, T=5)
    gc = loader.context(seed=0)
    space = loader.num_actions(gc)
    assert space.shape == (action_dim,) and loader.observation_spec(gc)["s"].shape == (obs_dim,)
    torch.manual_seed(0)
    settings = ModelSettings(hidden=16, box_policy=config["box_policy"])
    model = MLPActorCritic(loader.observation_spec(gc), space, settings)
    Trainer.add_tags(loader, gc)
    method = PPO.from_config({**config, "minibatches": 2, "ppo_epochs": 2, "seed": 0})
    trainer = Trainer(ModelInterface(lr=config["lr"]).add_actor_critic(model), method, Sampler(seed=0))
    actions = []

    def actor(batch):
        reply = trainer.actor(batch)
        actions.append(reply["a"].copy())
        return reply

    gc.reg_callback("actor", actor)
    gc.reg_callback("train", trainer.train)
    with gc:
        while trainer.updates < 2:
            gc.run()
    a = np.concatenate(actions)
    assert a.shape[1:] == (action_dim,) and np.all(np.abs(a) <= 1.0)  # squashed inside [-1, 1]
    stats = trainer.update_stats.pop()
    assert stats and all(math.isfinite(v) for v in stats.values())
