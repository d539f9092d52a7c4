"""bench_mujoco_sac.py's ``--contender swap``: Stable-Baselines3's TD3 loop acting with
our model and training it with our update, SB3's own networks left untouched."""

from __future__ import annotations

import importlib
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import TD3 as SB3TD3

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
WARM_UP, STEPS = 50, 80


def weights(module: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def changed(before: list[torch.Tensor], module: torch.nn.Module) -> bool:
    return any(not torch.equal(b, p) for b, p in zip(before, module.parameters(), strict=True))


def test_swap_acts_with_and_trains_our_model_inside_sb3s_loop(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = importlib.import_module("bench_mujoco_sac")
    sb3 = SB3TD3("MlpPolicy", gym.make(bench.ENV_ID), learning_starts=WARM_UP, batch_size=16, seed=0, device="cpu",
                 policy_kwargs={"net_arch": [8, 8]})
    model = bench.swap_in_ours(sb3, seed=0)
    ours = {"actor": weights(model.actor), "critics": weights(model.critics)}
    theirs = {"actor": weights(sb3.actor), "critic": weights(sb3.critic)}
    sb3.learn(STEPS)
    assert sb3._n_updates == STEPS - WARM_UP  # one of our updates after each step past the warm-up
    assert changed(ours["actor"], model.actor) and changed(ours["critics"], model.critics)
    assert not changed(theirs["actor"], sb3.actor) and not changed(theirs["critic"], sb3.critic)
    obs, _ = gym.make(bench.ENV_ID).reset(seed=1)
    with torch.no_grad():
        expected = model.policy(model.encode(torch.as_tensor(obs))).mode().numpy()
    np.testing.assert_allclose(sb3.predict(obs, deterministic=True)[0], expected, rtol=1e-6)


def test_swap_with_our_exploration_stores_the_actions_our_exploration_draws(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = importlib.import_module("bench_mujoco_sac")
    from rlpytorch.acting.exploration import Exploration
    from rlpytorch.core.distributions import Deterministic
    from rlpytorch.core.seeding import stream_seeds

    sb3 = SB3TD3("MlpPolicy", gym.make(bench.ENV_ID), learning_starts=WARM_UP, batch_size=16, seed=0, device="cpu",
                 policy_kwargs={"net_arch": [8, 8]})
    model = bench.swap_in_ours(sb3, seed=3, our_exploration=True)
    sb3.train = lambda gradient_steps, batch_size: None  # the policy stays put: its actions can be redrawn
    sb3.learn(STEPS)
    obs = torch.as_tensor(sb3.replay_buffer.observations[:STEPS, 0])
    with torch.no_grad():
        mu = model.policy(model.encode(obs)).mode()
    explore = Exploration(low=[-1.0] * 6, high=[1.0] * 6, random_frames=WARM_UP, seed=stream_seeds(3, 3)[2])
    ours = torch.cat([explore(Deterministic(mu[t : t + 1]), t) for t in range(STEPS)]).numpy()
    # our uniform warm-up, then our noise on our policy's action, clipped: not SB3's draws
    np.testing.assert_allclose(sb3.replay_buffer.actions[:STEPS, 0], ours, atol=1e-6)


def test_swap_with_our_replay_trains_on_the_transitions_sb3_stores(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = importlib.import_module("bench_mujoco_sac")
    from rlpytorch.replay import Replay

    replays, batches = [], []
    sample = Replay.sample

    def recorded_sample(self, batch_size):
        replays.append(self)
        batches.append(sample(self, batch_size))
        return batches[-1]

    monkeypatch.setattr(Replay, "sample", recorded_sample)
    env = gym.make(bench.ENV_ID, max_episode_steps=30)  # two time limits within the run
    sb3 = SB3TD3("MlpPolicy", env, learning_starts=WARM_UP, batch_size=16, seed=0, device="cpu",
                 policy_kwargs={"net_arch": [8, 8]})
    bench.swap_in_ours(sb3, seed=0, our_replay=True)
    sb3.learn(STEPS)
    assert len(batches) == sb3._n_updates == STEPS - WARM_UP  # every update drew from our replay
    batches.append(sample(replays[0], 3000))  # and, drawn enough, it holds every step SB3 stored but the last
    theirs = sb3.replay_buffer
    observations = theirs.observations[:STEPS, 0]
    seen = set()
    for b in batches:
        for k in range(len(b["s"])):
            (i,) = np.flatnonzero((observations == b["s"][k].numpy()).all(1))  # each state is met once
            seen.add(int(i))
            ended = theirs.dones[i, 0] * (1 - theirs.timeouts[i, 0])  # a time limit bootstraps
            np.testing.assert_array_equal(b["a"][k].numpy(), theirs.actions[i, 0])
            np.testing.assert_array_equal(b["next_s"][k].numpy(), theirs.next_observations[i, 0])
            assert b["reward"][k].item() == theirs.rewards[i, 0]
            assert b["discount"][k].item() == np.float32(sb3.gamma * (1 - ended))
            assert b["weight"][k].item() == 1
    assert seen == set(range(STEPS - 1))
    assert theirs.timeouts[:STEPS, 0].sum() == 2


def test_engine_env_steps_halfcheetah_through_the_engine_as_gymnasium_steps_it(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = importlib.import_module("bench_mujoco_sac")
    from elfpy import sb3 as elf_sb3
    from elfpy.gym_host import game_seed

    made, make = [], elf_sb3.make_sb3_vec_env

    def short_episodes(game, num_envs, seed):  # the bench's engine env, with two time limits within the run
        made.append(make(game, num_envs, seed=seed, max_episode_steps=30))
        return made[-1]

    monkeypatch.setattr(elf_sb3, "make_sb3_vec_env", short_episodes)
    env = bench.sb3_env(seed=3, engine=True)
    assert env.venv is made[0]
    try:
        sb3 = SB3TD3("MlpPolicy", env, learning_starts=WARM_UP, batch_size=16, seed=3, device="cpu",
                     policy_kwargs={"net_arch": [8, 8]})
        sb3.learn(STEPS)
    finally:
        env.close()  # the engine's worker process
    stored = sb3.replay_buffer
    gym_env = gym.make(bench.ENV_ID, max_episode_steps=30)
    obs, _ = gym_env.reset(seed=game_seed(3, 0))  # the first reset of the engine's game 0
    for t in range(STEPS):
        np.testing.assert_array_equal(stored.observations[t, 0], obs)
        obs, reward, terminated, truncated, _ = gym_env.step(stored.actions[t, 0])
        np.testing.assert_array_equal(stored.next_observations[t, 0], obs)  # the final state at a time limit
        assert stored.rewards[t, 0] == np.float32(reward)
        assert stored.timeouts[t, 0] == (truncated and not terminated)
        if terminated or truncated:
            obs, _ = gym_env.reset()
    assert stored.timeouts[:STEPS, 0].sum() == 2


def test_engine_reset_seed_seeds_gymnasiums_first_reset_as_the_engine_seeds_game_0(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = importlib.import_module("bench_mujoco_sac")
    from elfpy.sb3 import make_sb3_vec_env

    engine = make_sb3_vec_env(f"gym:{bench.ENV_ID}", 1, seed=5)
    try:
        expected = engine.reset()[0]
    finally:
        engine.close()
    sb3 = SB3TD3("MlpPolicy", bench.sb3_env(seed=5, engine=False), seed=5, device="cpu",
                 policy_kwargs={"net_arch": [8, 8]})
    assert not np.array_equal(sb3.get_env().reset()[0], expected)  # SB3 seeds it with the run's seed itself
    bench.seed_first_reset_as_engine(sb3, 5)
    sb3.learn(1)  # learn()'s first reset reads the seed
    np.testing.assert_array_equal(sb3.replay_buffer.observations[0, 0], expected)


def test_sb3_update_stats_log_sb3s_updates_without_changing_the_run(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = importlib.import_module("bench_mujoco_sac")

    def run(logged: bool) -> tuple[list[torch.Tensor], dict[str, float] | None]:
        sb3 = SB3TD3("MlpPolicy", gym.make(bench.ENV_ID), learning_starts=WARM_UP, batch_size=16, seed=0,
                     device="cpu", policy_kwargs={"net_arch": [8, 8]})
        stats = bench.SB3UpdateStats(sb3) if logged else None
        sb3.learn(STEPS)
        return weights(sb3.actor) + weights(sb3.critic), stats and stats.pop()

    plain, _ = run(False)
    hooked, means = run(True)
    assert all(torch.equal(a, b) for a, b in zip(plain, hooked, strict=True))  # the hooks draw nothing
    assert set(means) == set(bench.SB3UpdateStats.columns)
    assert means["critic_loss"] > 0 and means["critic_grad_norm"] > 0 and means["actor_grad_norm"] > 0
