"""DDPG's parts on numbers worked by hand (its target, Polyak averaging, actions in
bounds, exploration), and DDPG through ``rlpytorch.train(rlpytorch.config(...))`` and ``evaluate``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

import rlpytorch
from rlpytorch import evaluate
from rlpytorch.acting.exploration import Exploration
from rlpytorch.core.distributions import Deterministic
from rlpytorch.learners.offpolicy_trainer import offpolicy_interface
from rlpytorch.methods import DDPG
from rlpytorch.methods.continuous_q import clipped_double_q_target, critic_regression
from rlpytorch.methods.target_network import TargetNetwork
from rlpytorch.models.actor_q import ActorQ, ActorQSettings, QCritics
from rlpytorch.models.base import read_checkpoint
from rlpytorch.models.interface import ModelInterface

PENDULUM_BOX = spaces.Box(-2.0, 2.0, (1,), np.float32)
SMALL = dict(num_games=8, actor_batch=8, train_batch=8, num_threads=1, progress=False,
             net_arch="32,32", replay_batch=32, learning_starts=200, eval_episodes=4)


def linear_model(critics: int = 1, head: str = "deterministic") -> ActorQ:
    """No hidden layers: ``a = c + h tanh(W s + b)``, ``Q_i = w_i . [s; a / h] + b_i``."""
    return ActorQ({"s": (3,)}, PENDULUM_BOX, ActorQSettings(net_arch="", critics=critics, actor_head=head))


def set_critics(critics: QCritics, weights: list[list[float]], bias: list[float]) -> None:
    with torch.no_grad():
        critics.layers[0].weight.copy_(torch.tensor(weights).unsqueeze(-1))
        critics.layers[0].bias.copy_(torch.tensor(bias).reshape(-1, 1, 1))


def transitions(next_s0: list[float], reward: list[float], discount: list[float]) -> dict[str, torch.Tensor]:
    B = len(reward)
    next_s = torch.zeros(B, 3)
    next_s[:, 0] = torch.tensor(next_s0)
    return {"s": torch.zeros(B, 3), "next_s": next_s, "a": torch.zeros(B, 1), "r": torch.tensor(reward),
            "discount": torch.tensor(discount), "weight": torch.ones(B)}


def test_clipped_double_q_target_takes_the_smaller_critic_and_the_replay_discount():
    q_next = torch.tensor([[3.0, 5.0], [4.0, 1.0]])  # [critic, row]
    y = clipped_double_q_target(torch.tensor([1.0, 2.0]), torch.tensor([0.9, 0.0]), q_next)
    # row 0: 1 + 0.9 * min(3, 4) = 3.7; row 1 ended (discount 0): 2
    assert y.tolist() == pytest.approx([3.7, 2.0])
    # one critic (DDPG): its own value
    assert clipped_double_q_target(torch.tensor([1.0]), torch.tensor([0.5]), torch.tensor([[4.0]])).item() == 3.0


def test_critic_regression_sums_squared_errors_over_critics_and_prioritizes_the_first():
    per_row, priorities = critic_regression(torch.tensor([[1.0, 0.0], [3.0, 3.0]]), torch.tensor([2.0, 1.0]))
    assert per_row.tolist() == pytest.approx([1 + 1, 1 + 4])
    assert priorities.tolist() == [1.0, 1.0]


def test_ddpg_step_regresses_the_critic_on_reward_plus_discounted_target_value_of_the_target_action():
    model = linear_model()
    mi = offpolicy_interface(model, ModelInterface(lr=1e-3))
    set_critics(model.critics, [[0.0, 0.0, 0.0, 0.0]], [0.0])  # Q(s, a) = 0
    set_critics(mi["target"].critics, [[1.0, 0.0, 0.0, 7.0]], [0.0])  # Q'(s', a') = s'_0 + 7 a' / 2
    with torch.no_grad():
        mi["target"].actor.net[0].weight.zero_()
        mi["target"].actor.net[0].bias.zero_()  # mu'(s') = 0 + 2 tanh(0) = 0
    stats, priorities = DDPG(seed=0).step(mi, transitions([2.0, 5.0], [1.0, 1.0], [0.5, 0.0]))
    # y = 1 + 0.5 * 2 = 2 and 1 + 0 * 5 = 1; loss = mean((0 - y)^2) = (4 + 1) / 2
    assert stats["critic_loss"] == pytest.approx(2.5)
    assert priorities.tolist() == pytest.approx([2.0, 1.0])
    assert model.step == 1 and "actor_loss" in stats  # DDPG moves the actor every update


def test_ddpg_actor_climbs_the_critic_without_changing_it():
    model = linear_model()
    mi = offpolicy_interface(model, ModelInterface(lr=1e-2))
    set_critics(model.critics, [[0.0, 0.0, 0.0, 1.0]], [0.0])  # Q(s, a) = a / 2: grows with a
    mi.update_model("target", "model")
    s = torch.zeros(1, 3)
    action_before = model.policy(model.encode({"s": s})).mode().item()
    # the replayed a = 2 has Q = 1 = y (reward 1, episode ended): the critic's own error is 0
    batch = {**transitions([0.0], [1.0], [0.0]), "a": torch.tensor([[2.0]])}
    critic_before = [p.clone() for p in model.critics.parameters()]
    stats = DDPG(seed=0).update(mi, batch)
    action_after = model.policy(model.encode({"s": s})).mode().item()
    assert stats["critic_loss"] == 0.0
    assert stats["actor_loss"] == pytest.approx(-action_before / 2, abs=1e-6)  # -Q(s, mu(s)) = -a / h
    assert action_after > action_before
    # the actor's loss flowed through the critic to the action and left nothing in the critic's weights
    for p, before in zip(model.critics.parameters(), critic_before, strict=True):
        assert p.grad is not None and not p.grad.any()
        torch.testing.assert_close(p, before)


def test_polyak_update_moves_the_target_by_tau_towards_the_learner():
    model = linear_model(critics=2)
    mi = offpolicy_interface(model, ModelInterface())
    with torch.no_grad():
        for p in mi["target"].critics.parameters():
            p.fill_(1.0)
        for p in model.critics.parameters():
            p.fill_(3.0)
    TargetNetwork(polyak_tau=0.25)(mi, 1)
    for p in mi["target"].critics.parameters():  # 0.75 * 1 + 0.25 * 3
        torch.testing.assert_close(p, torch.full_like(p, 1.5))


def test_deterministic_actions_and_explored_actions_stay_inside_an_asymmetric_box():
    box = spaces.Box(np.array([-1.0, 0.0], np.float32), np.array([3.0, 0.5], np.float32))
    model = ActorQ({"s": (3,)}, box, ActorQSettings(net_arch="16", critics=1, actor_head="deterministic"))
    with torch.no_grad():
        for p in model.actor.parameters():
            p.mul_(100.0)  # saturate the tanh
    s = torch.randn(500, 3) * 10
    a = model({"s": s})["action"]
    assert (a >= torch.tensor([-1.0, 0.0])).all() and (a <= torch.tensor([3.0, 0.5])).all()
    explore = Exploration(low=box.low.tolist(), high=box.high.tolist(), action_noise=5.0, random_frames=0, seed=1)
    noisy = explore(Deterministic(a.detach()), frames=10)
    assert (noisy >= torch.tensor([-1.0, 0.0])).all() and (noisy <= torch.tensor([3.0, 0.5])).all()
    assert not torch.equal(noisy, a)


def test_exploration_plays_uniform_actions_for_exactly_the_first_random_frames():
    explore = Exploration(low=[-2.0], high=[2.0], action_noise=0.0, random_frames=10, seed=0)
    mu = Deterministic(torch.full((8, 1), 0.5))
    first = explore(mu, frames=0)  # frames 0..7: all random
    second = explore(mu, frames=8)  # frames 8, 9 random, 10..15 the actor's (no noise)
    assert (first.abs() <= 2).all() and (first != 0.5).all()
    assert (second[:2] != 0.5).all() and (second[2:] == 0.5).all()
    # half-range noise units: std 0.1 on a [-2, 2] Box is a torque std of 0.2
    noisy = Exploration(low=[-2.0], high=[2.0], action_noise=0.1, seed=0)(Deterministic(torch.zeros(20000, 1)), 0)
    assert noisy.std().item() == pytest.approx(0.2, rel=0.03)


def test_warmup_noise_adds_the_actors_noise_to_the_uniform_warm_up_actions_clipped_to_the_box():
    mu = Deterministic(torch.zeros(20000, 1))
    plain = Exploration(low=[-2.0], high=[2.0], action_noise=0.1, random_frames=20000, seed=0)(mu, 0)
    noisy = Exploration(low=[-2.0], high=[2.0], action_noise=0.1, random_frames=20000, seed=0, warmup_noise=True)(mu, 0)
    # the same uniform draws, then N(0, 0.2^2) added (half-range units) and clipped to [-2, 2]
    inside = (noisy.abs() < 2) & (plain.abs() < 1.5)
    assert (noisy - plain)[inside].std().item() == pytest.approx(0.2, rel=0.03)
    assert (plain.abs() < 2).all() and (noisy.abs() <= 2).all()
    # SB3's warm-up: about 2 E[max(N(0, 0.2), 0)] / 4 = 4% of the actions land on a bound
    assert (noisy.abs() == 2).float().mean().item() == pytest.approx(0.04, rel=0.1)


def test_ddpg_refuses_a_model_other_than_a_deterministic_one_critic_actor_q():
    with pytest.raises(ValueError, match="needs --actor_head deterministic"):
        DDPG().check_model(linear_model(head="tanh_gaussian"))
    with pytest.raises(ValueError, match="needs 1 to 1 critics"):
        DDPG().check_model(linear_model(critics=2))
    with pytest.raises(ValueError, match="need one Box action"):
        ActorQ({"s": (4,)}, 2, ActorQSettings())


def test_ddpg_trains_on_native_pendulum_through_rlpytorch_train_and_evaluates(tmp_path):
    run_dir = tmp_path / "run"
    out = rlpytorch.train(rlpytorch.config(method="ddpg", game="pendulum", num_frames=600, replay_ratio=0.25,
                                           save_dir=str(run_dir), **SMALL))
    summary = out.summary
    assert summary.frames >= 600 and len(out.eval.returns) == 4
    assert summary.updates == pytest.approx(0.25 * (summary.frames - 200), abs=0.25 * 8 * 8 + 1)
    checkpoint = read_checkpoint(run_dir / "last.pt")
    assert checkpoint["model"] == "actor_q" and checkpoint["args"]["method"] == "ddpg"
    assert checkpoint["args"]["actor_head"] == "deterministic" and checkpoint["args"]["critics"] == 1
    result = evaluate.main(["--load", str(run_dir), "--no-progress", "--episodes", "4"])
    assert len(result.returns) == 4 and (result.returns < 0).all()


def test_ddpg_refuses_a_discrete_game():
    with pytest.raises(ValueError, match="need one Box action"):
        rlpytorch.train(rlpytorch.config(method="ddpg", game="cartpole", save_dir="", **SMALL))


def test_ddpg_learns_to_swing_the_native_pendulum_up_within_5000_frames():
    out = rlpytorch.train(rlpytorch.config(
        method="ddpg", game="pendulum", num_games=8, actor_batch=8, train_batch=8, num_threads=1, deterministic=True,
        seed=0, progress=False, num_frames=5000, learning_starts=500, replay_ratio=1, net_arch="64,64",
        replay_batch=64, save_dir="", eval_episodes=10))
    assert out.summary.frames == pytest.approx(5000, abs=64) and out.summary.updates >= 4400
    # untrained (and random) play scores about -1,200 per episode; a swung-up pendulum about -150
    assert out.eval.mean > -600, out.eval
