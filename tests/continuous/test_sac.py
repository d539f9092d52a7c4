"""SAC's parts on numbers worked by hand: the soft target with its entropy term,
the temperature loss and the sign of its gradient, squashed actions inside the
bounds; and a short learning run on the native pendulum, counted in frames."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gymnasium import spaces

import rlpytorch
from rlpytorch.learners.offpolicy_trainer import offpolicy_interface
from rlpytorch.methods import SAC
from rlpytorch.methods.continuous_q import soft_q_target
from rlpytorch.methods.temperature import temperature_loss
from rlpytorch.models.actor_q import ActorQ, ActorQSettings
from rlpytorch.models.interface import ModelInterface

BOX = spaces.Box(-2.0, 2.0, (1,), np.float32)
LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def gaussian_model(net_arch: str = "") -> ActorQ:
    return ActorQ({"s": (3,)}, BOX, ActorQSettings(net_arch=net_arch, critics=2, actor_head="tanh_gaussian"))


def test_soft_q_target_subtracts_alpha_times_the_next_log_probability_from_the_smaller_critic():
    q_next = torch.tensor([[4.0, 1.0], [3.0, 2.0]])  # [critic, row]
    y = soft_q_target(torch.tensor([1.0, 1.0]), torch.tensor([0.5, 0.0]), q_next, torch.tensor([-2.0, 7.0]),
                      torch.tensor(0.5))
    # row 0: 1 + 0.5 * (min(4, 3) - 0.5 * -2) = 1 + 0.5 * 4 = 3; row 1 ended: 1
    assert y.tolist() == pytest.approx([3.0, 1.0])


def test_temperature_gradient_lowers_alpha_above_the_target_entropy_and_raises_it_below():
    log_alpha = torch.zeros((), requires_grad=True)
    # entropy -mean(log pi) = 1 above the target -1: d/dlog_alpha = -mean(log pi - 1) = -(-1 - 1) = 2 > 0
    loss = temperature_loss(log_alpha, torch.tensor([-0.5, -1.5]), -1.0)
    loss.backward()
    assert loss.item() == 0.0 and log_alpha.grad.item() == pytest.approx(2.0)
    log_alpha.grad = None
    # entropy -2 below the target -1: gradient -mean(2 - 1) = -1 < 0, descent raises alpha
    loss = temperature_loss(torch.tensor(math.log(0.5)).requires_grad_(), torch.tensor([2.0, 2.0]), -1.0)
    assert loss.item() == pytest.approx(-math.log(0.5) * (2.0 - 1.0))
    temperature_loss(log_alpha, torch.tensor([2.0, 2.0]), -1.0).backward()
    assert log_alpha.grad.item() == pytest.approx(-1.0)


def test_sac_step_bootstraps_with_the_entropy_term_of_the_next_action_and_raises_a_low_entropy_temperature():
    model = gaussian_model()
    mi = offpolicy_interface(model, ModelInterface(lr=1e-2))
    with torch.no_grad():
        for p in model.critics.parameters():
            p.zero_()  # Q_j = 0: the new priorities are |y|
        for p in model.actor.parameters():
            p.zero_()
        model.actor.log_std.bias.fill_(-20.0)  # mean 0, std e^-20: a = 2 tanh(u) ~ 0
        target_critics = mi["target"].critics.layers[0]
        target_critics.weight.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]]).unsqueeze(-1))
        target_critics.bias.copy_(torch.tensor([0.0, -1.0]).reshape(2, 1, 1))  # Q'_1 = s'_0, Q'_2 = 2 s'_0 - 1
    B = 4
    next_s = torch.zeros(B, 3)
    next_s[:, 0] = torch.tensor([0.5, 2.0, 3.0, -1.0])
    batch = {"s": torch.zeros(B, 3), "next_s": next_s, "a": torch.zeros(B, 1), "r": torch.ones(B),
             "discount": torch.tensor([0.9, 0.9, 0.0, 0.9]), "weight": torch.ones(B)}
    generator = torch.Generator().manual_seed(7)  # the method's draws: eps for s, then eps' for s'
    torch.randn((B, 1), generator=generator)
    eps_next = torch.randn((B, 1), generator=generator).squeeze(-1)
    stats, priorities = SAC(seed=7).step(mi, batch)
    # log pi of the [-1, 1]-scaled action: log N(u; 0, e^-20) - log(1 - tanh(u)^2) = -eps'^2/2 + 20 - log sqrt(2 pi)
    log_prob_next = -0.5 * eps_next.square() + 20.0 - LOG_SQRT_2PI
    min_q = torch.minimum(next_s[:, 0], 2 * next_s[:, 0] - 1)  # 0, 2, 3, -3
    y = 1.0 + batch["discount"] * (min_q - 1.0 * log_prob_next)  # alpha = 1 (its value before this update)
    torch.testing.assert_close(priorities, y.abs(), rtol=1e-4, atol=1e-4)
    assert stats["alpha"] == 1.0 and stats["entropy"] < -15  # far below the target -1
    assert model.temperature.alpha.item() > 1.0  # so the temperature rose


def test_squashed_gaussian_actions_stay_inside_an_asymmetric_box():
    box = spaces.Box(np.array([-1.0, 0.0], np.float32), np.array([3.0, 0.5], np.float32))
    model = ActorQ({"s": (3,)}, box, ActorQSettings(net_arch="16", critics=2, actor_head="tanh_gaussian"))
    with torch.no_grad():
        for p in model.actor.parameters():
            p.mul_(50.0)
    policy = model.policy(model.encode({"s": torch.randn(2000, 3) * 10}))
    a, _ = policy.sample_with_log_prob()
    for actions in (a, policy.mode()):
        assert (actions >= torch.tensor([-1.0, 0.0])).all() and (actions <= torch.tensor([3.0, 0.5])).all()


def test_sac_needs_a_gaussian_actor():
    with pytest.raises(ValueError, match="needs --actor_head tanh_gaussian"):
        SAC().check_model(ActorQ({"s": (3,)}, BOX, ActorQSettings(actor_head="deterministic")))
    with pytest.raises(ValueError, match="target_entropy"):
        SAC(target_entropy="high")


def test_sac_refuses_warmup_noise_which_only_a_deterministic_actor_has():
    with pytest.raises(ValueError, match="--warmup_noise adds a deterministic actor's noise; --method sac"):
        rlpytorch.train(rlpytorch.config(method="sac", game="pendulum", warmup_noise=True, save_dir="",
                                         num_games=2, actor_batch=2, train_batch=2, num_threads=1, progress=False))
