"""ActorCritic's and PPO's policy parts on Box actions, on numbers worked by hand,
and the actor / learner wiring on the native pendulum: the actor replies its
behaviour log-probability ``logp``, windows carry it, updates use it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rlpytorch.acting.act import act
from rlpytorch.acting.sampler import Sampler
from rlpytorch.core.distributions import DiagGaussian
from rlpytorch.core.game_loader import GameLoader
from rlpytorch.learners.trainer import Trainer
from rlpytorch.methods import PPO, ActorCritic, ClippedPolicyGradient, PolicyGradient
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.interface import ModelInterface

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def col(*values):
    return torch.tensor(values, dtype=torch.float32).unsqueeze(1)


def gaussian_window():
    """Two rows, one action dimension, std 1: row 0 takes a = 1 under mean 0
    (log pi = -1/2 - log sqrt(2 pi)), row 1 takes a = 0 under mean 0 (log pi = -log sqrt(2 pi))."""
    mean = torch.zeros(2, 1, 1, requires_grad=True)
    pi = DiagGaussian(mean, torch.ones(2, 1, 1))
    a = torch.tensor([[[1.0]], [[0.0]]])
    # behaviour log-probabilities: row 0 has rho = exp(log 2) = 2, row 1 rho = exp(-log 2) = 1/2
    log_pi = torch.tensor([[-0.5 - LOG_SQRT_2PI], [-LOG_SQRT_2PI]])
    mu = log_pi - torch.tensor([[math.log(2.0)], [-math.log(2.0)]])
    return mean, pi, mu, a, col(1.0, -1.0), torch.ones(2, 1, dtype=torch.bool)


def test_policy_gradient_weights_box_actions_by_the_truncated_density_ratio():
    mean, pi, mu, a, adv, mask = gaussian_window()
    loss, stats = PolicyGradient(entropy_coef=0.0, ratio_clamp=1.0)(pi, mu, a, adv, mask)
    # rho = min(2, 1) = 1 on row 0, 1/2 on row 1: loss = -(1 * 1 * log pi_0 + 0.5 * -1 * log pi_1) / 2
    expected = -((-0.5 - LOG_SQRT_2PI) - 0.5 * (-LOG_SQRT_2PI)) / 2
    assert loss.item() == pytest.approx(expected)
    assert stats["ratio"] == pytest.approx(0.75)
    loss.backward()
    # d log N(a; m, 1) / dm = a - m: row 0 gives -(1 * 1 * 1) / 2, row 1 gives 0
    assert mean.grad.flatten().tolist() == pytest.approx([-0.5, 0.0])


def test_policy_gradient_entropy_bonus_is_the_gaussian_entropy():
    _, pi, mu, a, adv, mask = gaussian_window()
    loss0, _ = PolicyGradient(entropy_coef=0.0, ratio_clamp=1.0)(pi, mu, a, adv, mask)
    loss1, stats = PolicyGradient(entropy_coef=0.1, ratio_clamp=1.0)(pi, mu, a, adv, mask)
    assert stats["entropy"] == pytest.approx(0.5 + LOG_SQRT_2PI)  # std 1
    assert (loss0 - loss1).item() == pytest.approx(0.1 * (0.5 + LOG_SQRT_2PI))


def test_clipped_surrogate_on_box_actions_uses_the_density_ratio():
    mean, pi, mu, a, adv, mask = gaussian_window()
    loss, stats = ClippedPolicyGradient(clip_eps=0.2, entropy_coef=0.0)(pi, mu, a, adv, mask)
    # row 0: min(2 * 1, 1.2 * 1) = 1.2; row 1: min(0.5 * -1, 0.8 * -1) = -0.8
    assert loss.item() == pytest.approx(-(1.2 - 0.8) / 2)
    assert stats["clip_fraction"] == 1.0
    assert stats["approx_kl"] == pytest.approx(((1 - math.log(2)) + (-0.5 + math.log(2))) / 2)
    loss.backward()
    assert mean.grad.abs().sum().item() == 0.0  # both clipped
    mean2, pi2, mu2, a2, adv2, mask2 = gaussian_window()
    loss2, _ = ClippedPolicyGradient(clip_eps=2.0, entropy_coef=0.0)(pi2, mu2, a2, adv2, mask2)
    loss2.backward()
    # unclipped: d(-rho A / 2)/dm = -rho A (a - m) / 2: row 0: -2 * 1 * 1 / 2 = -1; row 1: 0
    assert mean2.grad.flatten().tolist() == pytest.approx([-1.0, 0.0])


def test_sampler_draws_box_actions_and_reports_their_log_probability():
    pi = DiagGaussian(torch.tensor([[0.5, -1.0]]).expand(4, 2), torch.tensor([0.1, 2.0]).expand(4, 2))
    a, logp = Sampler(seed=0)(pi)
    assert a.shape == (4, 2) and torch.allclose(logp, pi.log_prob(a))
    a2, _ = Sampler(seed=0)(pi)
    assert torch.equal(a, a2)  # seeded
    greedy, _ = Sampler(sampler="greedy")(pi)
    assert greedy.tolist() == [[0.5, -1.0]] * 4
    with pytest.raises(ValueError, match="epsilon_greedy"):
        Sampler(sampler="epsilon_greedy")(pi)


def pendulum_setup(method):
    loader = GameLoader(game="pendulum", num_games=8, num_threads=1, actor_batch=8, train_batch=8, T=5)
    gc = loader.context(seed=0)
    space = loader.num_actions(gc)
    torch.manual_seed(0)
    model = MLPActorCritic(loader.observation_spec(gc), space, ModelSettings(hidden=16))
    Trainer.add_tags(loader, gc)
    trainer = Trainer(ModelInterface(lr=1e-3).add_actor_critic(model), method, Sampler(seed=0))
    gc.reg_callback("actor", trainer.actor)
    gc.reg_callback("train", trainer.train)
    return gc, model, trainer


def test_actor_replies_float_actions_and_their_log_probability_on_pendulum():
    gc, model, _ = pendulum_setup(ActorCritic.from_config({}))
    assert gc.spec()["logp"].role == "extra" and "pi" not in gc.spec()
    assert "logp" in gc.tag_info("actor").replies and "logp" in gc.tag_info("train").inputs
    batch = {"s": np.tile(np.array([[1.0, 0.0, 0.0]], np.float32), (8, 1))}
    reply = act(model, Sampler(seed=1), batch, torch.device("cpu"))
    assert reply["a"].dtype == np.float32 and reply["a"].shape == (8, 1)
    out = model(torch.as_tensor(batch["s"]))
    expected = DiagGaussian(out["mean"], out["std"]).log_prob(torch.as_tensor(reply["a"]))
    np.testing.assert_allclose(reply["logp"], expected.detach().numpy(), rtol=1e-5)
    gc.stop()


@pytest.mark.parametrize(
    "method", [ActorCritic.from_config({}), PPO.from_config({"seed": 0, "minibatches": 1, "ppo_epochs": 1})]
)
def test_methods_train_on_pendulum_windows_and_the_first_ratio_is_one(method):
    """The first window was played by the initial weights, which the learner still
    has at its first step (PPO: one pass, one minibatch): the density ratio must be 1 there."""
    gc, model, trainer = pendulum_setup(method)
    recorded = []
    update = method.update
    method.update = lambda mi, batch: recorded.append(update(mi, batch)) or recorded[-1]
    with gc:
        while trainer.updates < 3:
            gc.run()
    assert model.step == 3 and len(recorded) == 3
    assert recorded[0]["ratio"] == pytest.approx(1.0, abs=1e-5)
    assert all(math.isfinite(v) for stats in recorded for v in stats.values())
