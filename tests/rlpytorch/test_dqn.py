"""DQN parts against hand-worked numbers, and DQN end to end on the fake CartPole."""

import math

import numpy as np
import pytest
import torch
from fakes import fake_loader

from rlpytorch.acting.sampler import Sampler
from rlpytorch.learners.value_trainer import ValueTrainer, value_interface
from rlpytorch.methods.categorical import categorical_loss, project_distribution
from rlpytorch.methods.dqn import DQN
from rlpytorch.methods.q_target import q_target
from rlpytorch.methods.target_network import TargetNetwork
from rlpytorch.methods.value_rescaling import rescale, unrescale
from rlpytorch.models.interface import ModelInterface
from rlpytorch.models.q_networks import QNetwork, QSettings, QValueHead
from rlpytorch.replay import Replay
from rlpytorch.run.eval_iters import evaluate
from rlpytorch.run.single_process import SingleProcessRun

SUPPORT = torch.tensor([-1.0, 0.0, 1.0])


def test_projection_splits_each_shifted_atom_between_its_neighbours():
    probs = torch.tensor([[0.2, 0.3, 0.5]])
    m = project_distribution(probs, torch.tensor([0.5]), torch.tensor([0.5]), SUPPORT)
    # Tz = 0.5 + 0.5 z = 0, 0.5, 1 -> indices 1, 1.5, 2: atom 1 gets 0.2 + 0.15, atom 2 gets 0.15 + 0.5
    torch.testing.assert_close(m, torch.tensor([[0.0, 0.35, 0.65]]))


def test_projection_after_an_end_puts_the_reward_on_its_two_atoms_and_clips_outside_the_support():
    probs = torch.tensor([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5]])
    m = project_distribution(probs, torch.tensor([0.25, 3.0]), torch.tensor([0.0, 0.9]), SUPPORT)
    # row 0: Tz = 0.25 everywhere, index 1.25 -> 0.75 on atom 1, 0.25 on atom 2; row 1: all clipped to v_max
    torch.testing.assert_close(m, torch.tensor([[0.0, 0.75, 0.25], [0.0, 0.0, 1.0]]))


def test_categorical_loss_is_the_cross_entropy_to_the_projected_target():
    log_p = torch.tensor([[0.5, 0.25, 0.25]]).log()
    loss = categorical_loss(log_p, torch.tensor([[0.0, 0.35, 0.65]]))
    assert loss.item() == pytest.approx(-(0.35 + 0.65) * math.log(0.25))


def test_q_target_plain_and_double():
    q_target_next = torch.tensor([[1.0, 3.0], [4.0, 2.0]])
    q_online_next = torch.tensor([[5.0, 0.0], [0.0, 5.0]])
    reward, discount = torch.tensor([1.0, 2.0]), torch.tensor([0.5, 0.0])
    # plain: max of the target net: 1 + 0.5 * 3, 2 + 0 * 4
    assert q_target(reward, discount, q_target_next).tolist() == [2.5, 2.0]
    # double: the learner picks a* = 0 and 1, the target net values them: 1 + 0.5 * 1, 2 + 0 * 2
    assert q_target(reward, discount, q_target_next, q_online_next).tolist() == [1.5, 2.0]


def test_dueling_head_subtracts_the_mean_advantage():
    head = QValueHead(2, 3, dueling=True)
    with torch.no_grad():
        head.advantage.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
        head.advantage.bias.zero_()
        head.value.weight.copy_(torch.tensor([[2.0, 0.0]]))
        head.value.bias.fill_(1.0)
    Q = head(torch.tensor([[1.0, 2.0]]))["Q"]
    # A = 1, 2, 3 (mean 2), V = 2 * 1 + 1 = 3: Q = 3 + (-1, 0, 1)
    assert Q.tolist() == [[2.0, 3.0, 4.0]]


def test_categorical_head_q_is_the_mean_of_its_distribution():
    head = QValueHead(2, 2, num_atoms=3, v_min=-1.0, v_max=1.0)
    out = head(torch.randn(5, 2))
    torch.testing.assert_close(out["Q"], (out["log_p"].exp() * SUPPORT).sum(-1))
    torch.testing.assert_close(out["log_p"].exp().sum(-1), torch.ones(5, 2))


def _interface():
    torch.manual_seed(0)
    return value_interface(QNetwork({"s": (1,)}, 2, QSettings(hidden=4, layers=1)), ModelInterface(lr=0.0))


def test_target_network_copies_periodically():
    mi = _interface()
    with torch.no_grad():
        for p in mi["model"].parameters():
            p.add_(1.0)
    update = TargetNetwork(target_period=3)
    update(mi, 2)
    first = lambda name: next(mi[name].parameters())  # noqa: E731
    assert not torch.equal(first("target"), first("model"))
    update(mi, 3)
    assert torch.equal(first("target"), first("model"))


def test_target_network_polyak_moves_a_fraction_tau():
    mi = _interface()
    before = next(mi["target"].parameters()).clone()
    with torch.no_grad():
        for p in mi["model"].parameters():
            p.add_(1.0)
    TargetNetwork(polyak_tau=0.25)(mi, 1)
    torch.testing.assert_close(next(mi["target"].parameters()), before + 0.25)


def test_value_rescaling_by_hand_and_its_inverse():
    x = torch.tensor([0.0, 3.0, -8.0, 99.0])
    # h(3) = sqrt(4) - 1 + 0.003 = 1.003; h(-8) = -(3 - 1) - 0.008; h(99) = 9 + 0.099
    torch.testing.assert_close(rescale(x), torch.tensor([0.0, 1.003, -2.008, 9.099]))
    torch.testing.assert_close(unrescale(rescale(x)), x, atol=1e-3, rtol=1e-4)


def test_dqn_step_regresses_on_the_double_target_with_importance_weights():
    mi = _interface()
    method = DQN(double=True, q_loss="mse", target=TargetNetwork(1000))
    batch = {"s": torch.tensor([[0.0], [1.0]]), "next_s": torch.tensor([[1.0], [2.0]]), "a": torch.tensor([0, 1]),
             "r": torch.tensor([1.0, 0.0]), "discount": torch.tensor([0.5, 0.0]),
             "weight": torch.tensor([1.0, 0.5])}
    per_row, priorities, _ = method.loss(mi, batch)
    with torch.no_grad():
        q = mi["model"](batch["s"])["Q"][[0, 1], [0, 1]]
        a_star = mi["model"](batch["next_s"])["Q"][0].argmax()
        y0 = 1.0 + 0.5 * mi["target"](batch["next_s"])["Q"][0, a_star]
    torch.testing.assert_close(priorities, torch.stack([(q[0] - y0).abs(), q[1].abs()]))
    torch.testing.assert_close(per_row, 0.5 * priorities.square())
    stats, _ = method.step(mi, batch)
    assert stats["loss"] == pytest.approx(((per_row * batch["weight"]).mean()).item())


def test_epsilon_schedule_moves_linearly_then_stays():
    sampler = Sampler("epsilon_greedy", epsilon=1.0, epsilon_final=0.1, epsilon_frames=100)
    sampler.anneal(50)
    assert sampler.epsilon == pytest.approx(0.55)
    sampler.anneal(1000)
    assert sampler.epsilon == pytest.approx(0.1)


@pytest.mark.parametrize("variant", [{}, {"n_step": 3, "prioritized": True, "dueling": True, "num_atoms": 11}])
def test_dqn_trains_on_the_fake_engine_holding_the_replay_ratio(variant):
    torch.manual_seed(0)
    loader = fake_loader(num_games=8, T=5)
    gc = loader.context(seed=0)
    settings = QSettings(hidden=16, dueling=variant.get("dueling", False), num_atoms=variant.get("num_atoms", 0))
    model = QNetwork(loader.observation_spec(gc), loader.num_actions(gc), settings)
    ValueTrainer.add_tags(loader, gc)
    replay = Replay(8, model.obs_keys, replay_capacity=2000, n_step=variant.get("n_step", 1),
                    prioritized=variant.get("prioritized", False), seed=0)
    trainer = ValueTrainer(value_interface(model), DQN(target=TargetNetwork(50)),
                           Sampler("epsilon_greedy", epsilon=1.0, epsilon_final=0.1, epsilon_frames=500, seed=0),
                           replay, replay_ratio=0.5, learning_starts=200, replay_batch=16)
    summary = SingleProcessRun(trainer, num_frames=400, save_dir="", progress=False).run(gc)
    assert summary.updates == pytest.approx(0.5 * (summary.frames - 200), abs=0.5 * 8 * 4 + 1)
    stats = trainer.replay.stats()
    assert stats["replay_rows"] == 8 * 49 and stats["replay_mb"] > 0  # 50 steps per game, windows up to row 49
    sample = {k: v for k, v in replay.sample(4).items() if k != "index"}
    assert np.isfinite(trainer.method.update(trainer.mi, sample)["loss"])
    result = evaluate(trainer.mi["model"], loader, 8, "greedy", progress=False, seed=0)
    assert len(result.returns) == 8
