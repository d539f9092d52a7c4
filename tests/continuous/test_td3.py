"""TD3's parts on numbers worked by hand: the smoothed target action (noise clipped,
actions in bounds), the clipped double-Q target over replayed transitions (a
real end does not bootstrap, a time-limit truncation bootstraps from the state
the episode ended in), the actor and the targets moving every d-th update."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

import rlpytorch
from rlpytorch.learners.offpolicy_trainer import offpolicy_interface
from rlpytorch.methods import TD3
from rlpytorch.methods.continuous_q import smoothed_target_action
from rlpytorch.models.actor_q import ActorQ, ActorQSettings, QCritics
from rlpytorch.models.interface import ModelInterface
from rlpytorch.replay import Replay

BOX = spaces.Box(-2.0, 2.0, (1,), np.float32)
GAMMA = 0.9


def twin_linear_model() -> ActorQ:
    return ActorQ({"s": (3,)}, BOX, ActorQSettings(net_arch="", critics=2, actor_head="deterministic"))


def set_critics(critics: QCritics, weights: list[list[float]], bias: list[float]) -> None:
    with torch.no_grad():
        critics.layers[0].weight.copy_(torch.tensor(weights).unsqueeze(-1))
        critics.layers[0].bias.copy_(torch.tensor(bias).reshape(-1, 1, 1))


def test_smoothing_noise_is_clipped_before_it_moves_the_action_and_the_action_stays_in_bounds():
    mu = torch.full((1000, 1), 1.5)
    low, high = torch.tensor([-2.0]), torch.tensor([2.0])
    # std 1e6: every eps is clipped to +-0.5, i.e. +-1 torque (half-range 2): 2.5 -> 2 (the bound), or 0.5
    a = smoothed_target_action(mu, 1e6, 0.5, low, high, torch.Generator().manual_seed(0))
    assert set(a.flatten().tolist()) == {2.0, 0.5}
    # small noise: a' = mu' + 2 eps with eps ~ N(0, 0.1^2) drawn from the same generator, nothing clipped
    eps = torch.randn((1000, 1), generator=torch.Generator().manual_seed(3)) * 0.1
    a = smoothed_target_action(torch.zeros(1000, 1), 0.1, 0.5, low, high, torch.Generator().manual_seed(3))
    torch.testing.assert_close(a, 2 * eps.clamp(-0.5, 0.5))
    assert smoothed_target_action(mu, 0.0, 0.5, low, high) is mu  # DDPG: no smoothing


def replay_of_a_truncation_then_a_termination() -> Replay:
    """One game: s_0 = 0 -> (r 10, time limit, ended in final_s = 9) -> s_1 = 1 (a new episode)
    -> (r 20, a real end) -> s_2 = 2."""
    s = np.zeros((3, 1, 3), np.float32)
    s[:, 0, 0] = [0.0, 1.0, 2.0]
    final_s = np.zeros((3, 1, 3), np.float32)
    final_s[1, 0, 0] = 9.0
    window = {"s": s, "final_s": final_s, "a": np.zeros((3, 1, 1), np.float32),
              "r": np.array([[0.0], [10.0], [20.0]], np.float32), "terminal": np.array([[False], [True], [True]]),
              "truncated": np.array([[False], [True], [False]])}
    replay = Replay(num_lanes=1, obs_keys=["s"], replay_capacity=16, gamma=GAMMA, seed=0)
    replay.add(window, np.array([0]))
    return replay


def test_td3_target_is_the_min_of_twin_targets_bootstrapping_truncations_not_terminations():
    replay = replay_of_a_truncation_then_a_termination()
    model = twin_linear_model()
    mi = offpolicy_interface(model, ModelInterface())
    set_critics(model.critics, [[0.0] * 4, [0.0] * 4], [0.0, 0.0])  # Q_i = 0: priorities are |y|
    # Q'_1 = s'_0 + 3 a'/2, Q'_2 = s'_0 + 1 - 3 a'/2 (the critics read a / 2), the target actor at mu' = 0
    set_critics(mi["target"].critics, [[1.0, 0.0, 0.0, 3.0], [1.0, 0.0, 0.0, -3.0]], [0.0, 1.0])
    with torch.no_grad():
        mi["target"].actor.net[0].weight.zero_()
        mi["target"].actor.net[0].bias.zero_()
    method = TD3(gamma=GAMMA, target_noise=0.0, seed=0)  # no smoothing: a' = mu'(s') = 0, min = s'_0
    batch = replay.sample(64)
    batch.pop("index")
    _, priorities = method.step(mi, batch)
    s0 = batch["s"][:, 0]
    # from s = 0: truncated, bootstraps from final_s = 9: y = 10 + 0.9 * min(9, 10) = 18.1; from s = 1: y = 20
    expected = torch.where(s0 == 0, 10.0 + GAMMA * 9.0, 20.0)
    assert set(s0.tolist()) == {0.0, 1.0}
    torch.testing.assert_close(priorities, expected)
    # with smoothing the target action moves, and the min over the twins sees it: y <= the unsmoothed one
    method = TD3(gamma=GAMMA, target_noise=0.2, target_noise_clip=0.5, seed=0)
    batch = {**batch, "r": torch.zeros(64), "discount": torch.ones(64), "s": torch.zeros(64, 3)}
    _, priorities = method.step(mi, batch)  # y = s'_0 + min(3 a'/2, 1 - 3 a'/2), |a'| <= 2 * 0.5
    boot = batch["next_s"][:, 0]
    # min(3 a'/2, 1 - 3 a'/2) for |a'| <= 1 lies in [-1.5, 0.5]; unsmoothed (a' = 0) it would be 0 everywhere
    assert (priorities <= boot + 0.5 + 1e-5).all() and (priorities >= boot - 1.5 - 1e-5).all()
    assert (priorities - boot).abs().max() > 1e-3


def test_td3_moves_the_actor_and_the_targets_only_every_policy_delay_updates():
    model = twin_linear_model()
    mi = offpolicy_interface(model, ModelInterface(lr=1e-2))
    method = TD3(policy_delay=3, seed=0)
    method.target.polyak_tau = 0.5
    batch = {"s": torch.randn(16, 3), "next_s": torch.randn(16, 3), "a": torch.rand(16, 1) * 4 - 2,
             "r": torch.randn(16), "discount": torch.full((16,), 0.9), "weight": torch.ones(16)}

    def snapshot(module: torch.nn.Module) -> list[torch.Tensor]:
        return [p.detach().clone() for p in module.parameters()]

    for update in range(1, 7):
        actor, target = snapshot(model.actor), snapshot(mi["target"])
        stats = method.update(mi, batch)
        moved = [not torch.equal(a, b) for a, b in zip(actor, snapshot(model.actor), strict=True)]
        target_moved = [not torch.equal(a, b) for a, b in zip(target, snapshot(mi["target"]), strict=True)]
        due = update % 3 == 0
        assert any(moved) == due and ("actor_loss" in stats) == due and any(target_moved) == due, update
    assert model.step == 6


def test_td3_needs_twin_critics_and_trains_on_hosted_pendulum():
    with pytest.raises(ValueError, match="needs 2 to"):
        TD3().check_model(ActorQ({"s": (3,)}, BOX, ActorQSettings(critics=1, actor_head="deterministic")))
    out = rlpytorch.train(rlpytorch.config(
        method="td3", game="gym:Pendulum-v1", num_games=4, actor_batch=4, train_batch=4, num_workers=1,
        num_frames=400, learning_starts=200, replay_ratio=0.25, net_arch="16", replay_batch=16, progress=False,
        save_dir="", eval_episodes=2))
    assert out.summary.frames >= 400 and out.summary.updates >= 40 and len(out.eval.returns) == 2
    assert out.config.critics == 2 and out.config.policy_delay == 2


def test_a_run_seeds_initialisation_exploration_smoothing_and_replay_from_separate_streams():
    # one seed for all would explore with the numbers the initial weights were drawn from
    config = rlpytorch.config(method="td3", game="pendulum", num_games=2, actor_batch=2, train_batch=2,
                              num_frames=40, learning_starts=20, net_arch="8", replay_batch=4, seed=7,
                              progress=False, save_dir="", eval_at_end=False)
    with rlpytorch.Training(config) as training:
        trainer = training.session.trainer
        seeds = [torch.initial_seed(), trainer.sampler.generator.initial_seed(),
                 trainer.method.generator.initial_seed(), trainer.replay.sampler.rng.bit_generator.seed_seq.entropy]
    assert seeds[0] == 7 and len(set(seeds)) == 4
    torch.manual_seed(7)
    init = set(torch.rand(100_000).tolist())
    warm_up = torch.rand(1000, generator=torch.Generator().manual_seed(seeds[1])).tolist()
    assert sum(u in init for u in warm_up) < 30  # chance: about 6
