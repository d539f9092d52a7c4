"""Method parts are values: a returns part of one's own in ActorCritic and PPO, by hand and on CartPole;
names (the command line's) build the built-in parts."""

import math
from dataclasses import dataclass, field

import pytest
import torch
from fakes import cartpole_window
from torch import nn

from rlpytorch.acting.sampler import Sampler
from rlpytorch.core.args_provider import ArgsProvider
from rlpytorch.core.game_loader import GameLoader
from rlpytorch.learners.trainer import Trainer
from rlpytorch.methods import (
    GAE,
    PPO,
    ActorCritic,
    ClippedPolicyGradient,
    DiscountedReward,
    LambdaReturn,
    PolicyGradient,
    ValueMatcher,
)
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.base import Model
from rlpytorch.models.interface import ModelInterface


@dataclass
class ConstantReturns:
    """A returns part of our own: every target is ``value``. It notes the shape of each window it is called on."""

    value: float
    windows: list[tuple[int, ...]] = field(default_factory=list)

    def __call__(self, r, terminal, V, cut, final_value=None):
        self.windows.append(tuple(V.shape))
        return torch.full_like(V, self.value)


class OneValue(Model):
    """``V(s) = v`` in every state (one weight) and a policy of its own logits."""

    def __init__(self, v: float) -> None:
        super().__init__()
        self.v = nn.Parameter(torch.tensor(v))
        self.logits = nn.Parameter(torch.zeros(2))

    def forward(self, obs):
        rows = obs["s"].shape[:-1]
        return {"pi": self.logits.softmax(-1).expand(*rows, 2), "V": self.v.expand(rows)}


@pytest.mark.parametrize(
    "make",
    [
        lambda returns: ActorCritic(returns=returns, grad_clip=0.0),
        lambda returns: PPO(returns=returns, grad_clip=0.0, ppo_epochs=1, minibatches=1, seed=0),
    ],
    ids=["actor_critic", "ppo"],
)
def test_a_returns_part_of_ones_own_sets_the_targets_of_an_update(make):
    # V = 0.5 everywhere and targets R = 2: the value loss is 1/2 (0.5 - 2)^2 = 1.125 on each of the
    # T - 1 = 4 trained rows; its gradient on v is value_coef (v - R) = 0.5 (0.5 - 2) = -0.75 (the policy
    # gradient takes R - V detached), so one SGD step of lr 0.1 moves v to 0.5 + 0.075.
    model = OneValue(0.5)
    mi = ModelInterface(optimizer="sgd", lr=0.1).add_actor_critic(model)
    returns = ConstantReturns(2.0)
    method = make(returns)
    stats = method.update(mi, cartpole_window(T=5, B=3))
    assert method.returns is returns and returns.windows == [(5, 3)]
    assert stats["value_loss"] == pytest.approx(1.125)
    assert model.v.item() == pytest.approx(0.575)


def test_names_build_the_built_in_parts_from_the_methods_settings():
    config = ArgsProvider([ActorCritic]).parse(["--returns", "lambda", "--gamma", "0.9", "--td_lambda", "0.5"])
    assert ActorCritic.from_config(config).returns == LambdaReturn(0.9, 0.5)
    assert PPO.from_config({"gamma": 0.8}).returns == GAE(0.8, 0.95)  # PPO's default part
    assert ActorCritic(returns="gae", gae_lambda=0.3).returns == GAE(0.99, 0.3)


def test_the_parts_compose_positionally_in_the_order_of_the_sum_as_in_elf():
    method = ActorCritic(PolicyGradient(entropy_coef=0.05), DiscountedReward(0.9), ValueMatcher(value_coef=1.0))
    assert method.policy_gradient.entropy_coef == 0.05 and method.returns == DiscountedReward(0.9)
    assert method.value_matcher.value_coef == 1.0
    ppo = PPO(ClippedPolicyGradient(clip_eps=0.1), GAE(0.9, 0.8), ValueMatcher(), seed=0)
    assert ppo.policy_gradient.clip_eps == 0.1 and ppo.returns == GAE(0.9, 0.8)


def test_a_part_in_the_wrong_place_is_a_type_error_naming_the_field():
    with pytest.raises(TypeError, match="ActorCritic: policy_gradient must be a PolicyGradient, got DiscountedReward"):
        ActorCritic(DiscountedReward(0.9), PolicyGradient(), ValueMatcher())
    with pytest.raises(TypeError, match="ActorCritic: value_matcher must be a ValueMatcher, got 0.5"):
        ActorCritic(PolicyGradient(), "gae", 0.5)
    with pytest.raises(TypeError, match="PPO: policy_gradient must be a ClippedPolicyGradient"):
        PPO(PolicyGradient())


def test_a_returns_that_is_neither_a_built_in_name_nor_a_part_is_refused():
    with pytest.raises(ValueError, match=r"unknown returns 'mine'; choose from \('discounted', 'gae'"):
        ActorCritic(returns="mine")
    with pytest.raises(TypeError, match=r"returns must be one of .* or a returns part, a callable"):
        PPO(returns=0.9)


def test_actor_critic_trains_on_cartpole_with_a_returns_part_of_ones_own():
    loader = GameLoader(game="cartpole", num_games=8, num_threads=1, actor_batch=8, train_batch=8, T=5,
                        deterministic=True)
    gc = loader.context(seed=0)
    torch.manual_seed(0)
    model = MLPActorCritic(loader.observation_spec(gc), loader.num_actions(gc), ModelSettings(hidden=16))
    Trainer.add_tags(loader, gc)
    returns = ConstantReturns(1.0)
    method = ActorCritic(returns=returns)
    trainer = Trainer(ModelInterface(lr=1e-2).add_actor_critic(model), method, Sampler(seed=0))
    stats = []
    update = method.update
    method.update = lambda mi, window: stats.append(update(mi, window)) or stats[-1]
    gc.reg_callback("actor", trainer.actor)
    gc.reg_callback("train", trainer.train)
    with gc:
        while trainer.updates < 30:
            gc.run()
    assert returns.windows == [(5, 8)] * trainer.updates and model.step == trainer.updates
    assert all(math.isfinite(value) for update_stats in stats for value in update_stats.values())
    assert stats[-1]["value"] == pytest.approx(1.0, abs=0.1)  # the values went to the part's targets (1; CartPole's
    # own discounted returns take them past 6 in as many updates)
