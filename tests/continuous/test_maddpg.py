"""MADDPG's parts on numbers worked by hand (the per-seat critic targets, each actor's
gradient through its own critic and its own action only, joint transitions from the
replay), and MADDPG beside independent DDPG on mpe2's simple_spread through
``rlpytorch.train(rlpytorch.config(...))`` and ``evaluate``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gymnasium import spaces

import rlpytorch
from rlpytorch import evaluate
from rlpytorch.learners.offpolicy_trainer import offpolicy_interface
from rlpytorch.methods import MADDPG
from rlpytorch.models.base import read_checkpoint
from rlpytorch.models.interface import ModelInterface
from rlpytorch.models.seat_actor_q import SeatActorQ, SeatActorQSettings
from rlpytorch.replay import Replay

UNIT_BOX = spaces.Box(-1.0, 1.0, (1,), np.float32)  # centre 0, half-range 1: a_norm = a
SPREAD = dict(game="pz:mpe2.simple_spread_v3", game_options="max_cycles=25,continuous_actions=True",
              num_games=4, num_workers=1, actor_batch=12, train_batch=12, T=5,
              progress=False, net_arch="16", replay_batch=16, learning_starts=300,
              replay_ratio=0.1, eval_episodes=3)


def linear_model(seats: int = 2, net_arch: str = "") -> SeatActorQ:
    """Without hidden layers: ``mu_i(o_i) = tanh(w_i o_i + b_i)``, ``Q_i = v_i . [o_1; o_2; a_1; a_2] + c_i``."""
    return SeatActorQ({"s": (1,)}, UNIT_BOX, SeatActorQSettings(net_arch=net_arch, seats=seats))


def set_linear(model: SeatActorQ, actor_bias: list[float], critic_weights: list[list[float]],
               critic_bias: list[float]) -> None:
    with torch.no_grad():
        for actor, bias in zip(model.actor, actor_bias, strict=True):
            actor.net[0].weight.zero_()
            actor.net[0].bias.fill_(bias)
        model.critics.layers[0].weight.copy_(torch.tensor(critic_weights).unsqueeze(-1))
        model.critics.layers[0].bias.copy_(torch.tensor(critic_bias).reshape(-1, 1, 1))


def test_maddpg_critic_targets_are_each_seats_reward_plus_its_target_critic_at_the_target_actors_actions():
    model = linear_model()
    mi = offpolicy_interface(model, ModelInterface(lr=1e-3))
    set_linear(model, [0.0, 0.0], [[0.0] * 4, [0.0] * 4], [0.0, 0.0])  # Q_i(o, a) = 0
    # mu'_1 = tanh(atanh(0.5)) = 0.5, mu'_2 = -0.5; Q'_1 = o_1 + 2 o_2 + 4 a_1, Q'_2 = 3 o_1 - o_2 + 2 a_2 + 0.5
    set_linear(mi["target"], [math.atanh(0.5), math.atanh(-0.5)], [[1, 2, 4, 0], [3, -1, 0, 2]], [0.0, 0.5])
    batch = {"s": torch.zeros(2, 2, 1), "a": torch.zeros(2, 2, 1), "weight": torch.ones(2),
             "next_s": torch.tensor([[[1.0], [2.0]], [[0.0], [0.0]]]),
             "r": torch.tensor([[1.0, -1.0], [2.0, 3.0]]), "discount": torch.tensor([[0.5, 0.0], [0.95, 0.95]]),
             "live": torch.tensor([[True, True], [True, False]])}
    stats, priorities = MADDPG(seed=0).step(mi, batch)
    # row 0: Q'_1 = 1 + 4 + 2 = 7, y_1 = 1 + 0.5 * 7 = 4.5; Q'_2 = 3 - 2 - 1 + 0.5 = 0.5, y_2 = -1 + 0 = -1
    # row 1: Q'_1 = 0 + 0 + 2 = 2, y_1 = 2 + 0.95 * 2 = 3.9; seat 2 not live: left out
    # loss = mean over rows of sum_i (0 - y_i)^2 = ((4.5^2 + 1) + 3.9^2) / 2
    assert stats["critic_loss"] == pytest.approx(((4.5**2 + 1) + 3.9**2) / 2)
    assert priorities.tolist() == pytest.approx([4.5, 3.9])  # the largest error over live seats
    assert model.step == 1 and "actor_loss" in stats


@pytest.mark.parametrize("share_actors", [False, True])
def test_each_actor_learns_through_its_own_critic_with_only_its_own_action_replaced(share_actors):
    torch.manual_seed(0)
    model = SeatActorQ({"s": (1,)}, UNIT_BOX, SeatActorQSettings(net_arch="8", seats=3, share_actors=share_actors))
    assert len(model.actor) == (1 if share_actors else 3)
    x = torch.randn(5, 3, 1)
    a = torch.rand(5, 3, 1) * 2 - 1  # replayed actions
    MADDPG.actor_loss(model, x, a, torch.ones(3, 5)).backward()
    got = [p.grad.clone() for p in model.actor.parameters()]
    model.zero_grad()
    for i in range(3):  # -mean Q_i with seat i's action from its actor, the others as replayed; critic i only
        joint = a.clone()
        joint[:, i] = model.actor[0 if share_actors else i](x[:, i])["action"]
        (-model.q_values(x, joint)[i].mean()).backward()
    for g, p in zip(got, model.actor.parameters(), strict=True):
        torch.testing.assert_close(g, p.grad)
    # the joint actions critic i judges differ from the replayed ones at seat i only
    own = torch.where(torch.eye(3, dtype=torch.bool)[:, None, :, None], model.actions(x), a)
    for i in range(3):
        others = [j for j in range(3) if j != i]
        torch.testing.assert_close(own[i][:, others], a[:, others])
        assert not torch.equal(own[i][:, i], a[:, i])


def test_joint_replay_gives_every_seat_its_reward_discount_next_observation_and_liveness():
    # One game, 2 seats, 4 rows. Seat 0 is truncated at row 2 (final observation 99) and its row 3 is empty;
    # seat 1 plays on. s = 10 seat + t, r = t + 10 seat.
    s = np.array([[0, 10], [1, 11], [0, 12], [0, 13]], np.float32)[:, None, :, None]  # [T, B=1, S, 1]
    final = np.zeros_like(s)
    final[2, 0, 0] = 99.0
    terminal = np.zeros((4, 1, 2), bool)
    terminal[2:, 0, 0] = True
    truncated = np.zeros((4, 1, 2), bool)
    truncated[2, 0, 0] = True
    r = np.array([[0, 10], [1, 11], [2, 12], [0, 13]], np.float32)[:, None, :]
    replay = Replay(num_lanes=1, obs_keys=["s"], joint_seats=2, gamma=0.5, seed=0)
    replay.add({"s": s, "final_s": final, "a": np.zeros((4, 1, 2, 1), np.float32), "r": r, "terminal": terminal,
                "truncated": truncated}, np.array([0]))
    assert len(replay) == 3
    sample = replay.sample(64)
    expected = {  # row t (seat 1's observation 10 + t): reward, discount, next s, live
        10: ([1, 11], [0.5, 0.5], [1, 11], [True, True]),
        11: ([2, 12], [0.5, 0.5], [99, 12], [True, True]),  # seat 0's truncation bootstraps from its final s
        12: ([0, 13], [0.0, 0.5], [0, 13], [False, True]),  # seat 0 has left: its row is empty, then ended
    }
    seen = set()
    for b in range(64):
        reward, discount, next_s, live = expected[int(sample["s"][b, 1, 0])]
        seen.add(int(sample["s"][b, 1, 0]))
        assert sample["r"][b].tolist() == reward and sample["discount"][b].tolist() == discount
        assert sample["next_s"][b, :, 0].tolist() == next_s and sample["live"][b].tolist() == live
    assert seen == {10, 11, 12} and sample["a"].shape == (64, 2, 1)


def test_joint_replay_refuses_n_step_returns():
    with pytest.raises(ValueError, match="one-step transitions"):
        Replay(num_lanes=1, obs_keys=["s"], joint_seats=2, n_step=3)


@pytest.mark.parametrize("method", ["maddpg", "ddpg"])
def test_maddpg_and_independent_ddpg_train_on_simple_spread_through_rlpytorch_train(tmp_path, method):
    run_dir = tmp_path / method
    out = rlpytorch.train(rlpytorch.config(method=method, num_frames=900, save_dir=str(run_dir), **SPREAD))
    summary = out.summary
    assert summary.frames >= 900 and len(out.eval.returns) == 3
    assert summary.updates == pytest.approx(0.1 * (summary.frames - 300), abs=0.1 * 12 * 5 + 1)
    checkpoint = read_checkpoint(run_dir / "last.pt")
    if method == "maddpg":  # a model of the game's 3 seats, rebuilt by evaluate from the checkpoint
        assert checkpoint["model"] == "seat_actor_q" and checkpoint["args"]["seats"] == 0  # the game's
        assert sum(k.startswith("actor.") and k.endswith(".net.0.weight") for k in checkpoint["state_dict"]) == 3
    result = evaluate.main(["--load", str(run_dir), "--no-progress", "--episodes", "3"])
    assert len(result.returns) == 3 and (result.lengths == 25).all()


def test_maddpg_replay_rows_hold_every_seat_of_one_game_at_the_same_step():
    # odd batch sizes scatter a game's seats over different window batches
    config = rlpytorch.config(method="maddpg", num_frames=600, save_dir="", eval_at_end=False,
                              **{**SPREAD, "learning_starts": 600, "actor_batch": 5, "train_batch": 5, "T": 4})
    with rlpytorch.Training(config) as training:
        training.learn(config.num_frames)
        sample = training.session.trainer.replay.sample(200)
    for obs in (sample["s"], sample["next_s"]):  # simple_spread: [vel, pos, landmarks (6), the others' positions
        pos = obs[..., 2:4]                      # relative to one's own (2 x 2), communication]
        for i in range(3):
            for k, j in enumerate(j for j in range(3) if j != i):
                torch.testing.assert_close(obs[:, i, 10 + 2 * k : 12 + 2 * k], pos[:, j] - pos[:, i])
    assert sample["live"].all() and (sample["discount"] == 0.95).all()  # nobody leaves; time limits bootstrap


def test_maddpg_refuses_a_game_of_one_seat():
    with pytest.raises(ValueError, match="at least 2 seats"):
        rlpytorch.train(rlpytorch.config(method="maddpg", game="pendulum", save_dir="", progress=False))


def test_maddpg_refuses_discrete_actions_and_an_actor_q_model():
    discrete = {**SPREAD, "game_options": "max_cycles=25"}
    with pytest.raises(ValueError, match="seat_actor_q models need one Box action; .*Discrete"):
        rlpytorch.train(rlpytorch.config(method="maddpg", save_dir="", **discrete))
    with pytest.raises(ValueError, match="needs a seat_actor_q model"):
        rlpytorch.train(rlpytorch.config(method="maddpg", model="actor_q", actor_head="deterministic", critics=1,
                                         save_dir="", **SPREAD))


def test_maddpg_refuses_the_multi_process_runner():
    with pytest.raises(ValueError, match="runs with --runner single"):
        rlpytorch.train(rlpytorch.config(method="maddpg", runner="multi", save_dir="", **SPREAD))
