"""Gymnasium's vector wrappers (gymnasium.wrappers.vector) on `elfpy.make_vector`: every observation, action
and reward wrapper, and the common ones, run on a native and a hosted game in each autoreset mode they accept."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as wrappers

import elfpy

STEPS = 30
# Observation wrappers accept NEXT_STEP and DISABLED (Gymnasium refuses SAME_STEP: the final observation in
# infos would not be transformed), NormalizeObservation NEXT_STEP only; the others run in every mode.
ALL_MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED, AutoresetMode.SAME_STEP]
OBSERVATION_MODES = {"NormalizeObservation": [AutoresetMode.NEXT_STEP]}
DEFAULT_OBSERVATION_MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED]


def pixels_cartpole():
    return gym.wrappers.AddRenderObservation(gym.make("CartPole-v1", render_mode="rgb_array"))


# name -> (game, game options, the wrapper around an env)
OBSERVATION_WRAPPERS = {
    "TransformObservation": ("cartpole", {}, lambda env: wrappers.TransformObservation(env, lambda obs: obs * 2.0)),
    "VectorizeTransformObservation": ("pendulum", {}, lambda env: wrappers.VectorizeTransformObservation(
        env, gym.wrappers.TransformObservation, func=lambda obs: obs + 1.0,
        observation_space=gym.spaces.Box(0.0, 2.0, (3,), np.float32))),
    "FilterObservation": ("minirts", {"map_size": 12}, lambda env: wrappers.FilterObservation(env, ["v", "frames"])),
    "FlattenObservation": ("minirts", {"map_size": 12}, wrappers.FlattenObservation),
    "GrayscaleObservation": (pixels_cartpole, {"num_workers": 1}, wrappers.GrayscaleObservation),
    "ResizeObservation": (pixels_cartpole, {"num_workers": 1}, lambda env: wrappers.ResizeObservation(env, (40, 60))),
    "ReshapeObservation": ("cartpole", {}, lambda env: wrappers.ReshapeObservation(env, (2, 2))),
    "RescaleObservation": ("pendulum", {}, lambda env: wrappers.RescaleObservation(env, -1.0, 1.0)),
    "DtypeObservation": ("cartpole", {}, lambda env: wrappers.DtypeObservation(env, np.float64)),
    "NormalizeObservation": ("gym:CartPole-v1", {"num_workers": 1}, wrappers.NormalizeObservation),
}
ACTION_WRAPPERS = {
    "TransformAction": ("pendulum", {}, lambda env: wrappers.TransformAction(
        env, lambda action: action * 2.0, single_action_space=gym.spaces.Box(-1.0, 1.0, (1,), np.float32))),
    "VectorizeTransformAction": ("mountain_car_continuous", {}, lambda env: wrappers.VectorizeTransformAction(
        env, gym.wrappers.TransformAction, func=lambda action: action, action_space=env.single_action_space)),
    "ClipAction": ("pendulum", {}, wrappers.ClipAction),
    "RescaleAction": ("pendulum", {}, lambda env: wrappers.RescaleAction(env, -1.0, 1.0)),
}
REWARD_WRAPPERS = {
    "TransformReward": ("cartpole", {}, lambda env: wrappers.TransformReward(env, lambda reward: reward * 0.5)),
    "VectorizeTransformReward": ("cartpole", {}, lambda env: wrappers.VectorizeTransformReward(
        env, gym.wrappers.TransformReward, func=lambda reward: reward - 1.0)),
    "ClipReward": ("pendulum", {}, lambda env: wrappers.ClipReward(env, -1.0, 0.0)),
    "NormalizeReward": ("gym:Pendulum-v1", {"num_workers": 1}, wrappers.NormalizeReward),
}
COMMON_WRAPPERS = {
    "RecordEpisodeStatistics": ("cartpole", {}, wrappers.RecordEpisodeStatistics),
    "DictInfoToList": ("cartpole", {}, wrappers.DictInfoToList),
}


def _run(game, options, wrap, autoreset_mode):
    env = wrap(elfpy.make_vector(game, num_envs=3, seed=0, autoreset_mode=autoreset_mode, **options))
    env.action_space.seed(0)
    observation, _ = env.reset(seed=1)
    assert observation in env.observation_space
    for _ in range(STEPS):
        observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert reward.shape == (3,) and terminated.shape == truncated.shape == (3,)
        ended = terminated | truncated
        if autoreset_mode is AutoresetMode.DISABLED and ended.any():
            observation, _ = env.reset(options={"reset_mask": ended})
    env.close()
    return observation, info


def _observation_cases(accepted: bool) -> list[tuple[str, AutoresetMode]]:
    return [(name, mode) for name in sorted(OBSERVATION_WRAPPERS) for mode in ALL_MODES
            if (mode in OBSERVATION_MODES.get(name, DEFAULT_OBSERVATION_MODES)) == accepted]


@pytest.mark.parametrize(("name", "autoreset_mode"), _observation_cases(accepted=True))
def test_observation_wrappers(name, autoreset_mode):
    game, options, wrap = OBSERVATION_WRAPPERS[name]
    _run(game, options, wrap, autoreset_mode)


@pytest.mark.parametrize(("name", "autoreset_mode"), _observation_cases(accepted=False))
def test_observation_wrappers_refuse_the_modes_gymnasium_refuses(name, autoreset_mode):
    game, options, wrap = OBSERVATION_WRAPPERS[name]
    env = elfpy.make_vector(game, num_envs=2, autoreset_mode=autoreset_mode, **options)
    with pytest.raises(ValueError, match=r"Expected (env.metadata\['autoreset_mode'\]|autoreset_mode) to be"):
        wrap(env)
    env.close()


@pytest.mark.parametrize("autoreset_mode", ALL_MODES)
@pytest.mark.parametrize("name", sorted({**ACTION_WRAPPERS, **REWARD_WRAPPERS, **COMMON_WRAPPERS}))
def test_action_reward_and_common_wrappers(name, autoreset_mode):
    game, options, wrap = {**ACTION_WRAPPERS, **REWARD_WRAPPERS, **COMMON_WRAPPERS}[name]
    _run(game, options, wrap, autoreset_mode)


@pytest.mark.parametrize("autoreset_mode", ALL_MODES)
def test_record_episode_statistics_counts_the_engines_episodes(autoreset_mode):
    env = wrappers.RecordEpisodeStatistics(elfpy.make_vector("cartpole", num_envs=4, seed=0,
                                                             autoreset_mode=autoreset_mode))
    env.reset(seed=0)
    returns, lengths = [], []
    for _ in range(60):  # pushing right topples the pole within ~10 steps
        _, _, terminated, truncated, info = env.step(np.ones(4, np.int64))
        if "episode" in info:
            returns += list(info["episode"]["r"][info["_episode"]])
            lengths += list(info["episode"]["l"][info["_episode"]])
        ended = terminated | truncated
        if autoreset_mode is AutoresetMode.DISABLED and ended.any():
            env.reset(options={"reset_mask": ended})
    env.close()
    assert len(returns) >= 8 and returns == [float(length) for length in lengths]  # CartPole: 1 per step
    assert all(8 <= length <= 12 for length in lengths)
