"""Gymnasium's own vector-env tests, run on `elfpy.make_vector`.

Adapted from Gymnasium's tests/vector (https://github.com/Farama-Foundation/Gymnasium, MIT licence):
test_autoreset_mode.py (test_autoreset_next_step, test_autoreset_within_step, test_autoreset_disabled,
test_autoreset_metadata) and test_vector_env.py (test_random_seeding_basics, test_random_seeds_set_at_retrieval,
test_partial_reset_failure) and test_sync_vector_env.py (test_create_sync_vector_env,
test_reset_sync_vector_env, test_step_sync_vector_env, test_render_sync_vector). What changed, and why:
- their envs are GenericTestEnvs given `max_count` per env with `set_attr`; here the same counting env is hosted
  by the engine (tests/interop/count_env.py) and learns its `max_count` from its first reset's seed;
- np_random_seed is the one seed of the context (Gymnasium's VectorEnv), not SyncVectorEnv's tuple of per-env
  seeds: the engine's games have no Gymnasium seed of their own;
- a reset_mask may only restart envs whose episode ended (docs/compatibility.md, "Gymnasium");
- a final observation of a Discrete space is the engine's np.int64 where the hosted env returned an int.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from gymnasium.spaces import Box, Discrete, MultiDiscrete
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

import elfpy
from tests.interop.count_env import counting

MAX_COUNTS = (2, 3, 3)


@pytest.fixture
def count_envs(request):
    envs = elfpy.make_vector(counting(MAX_COUNTS), num_envs=3, num_workers=1, autoreset_mode=request.param)
    yield envs
    envs.close()


@pytest.mark.parametrize("count_envs", [AutoresetMode.NEXT_STEP], indirect=True)
def test_autoreset_next_step(count_envs):
    envs = count_envs
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP

    obs, info = envs.reset()
    assert np.all(obs == [0, 0, 0])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [1, 1, 1])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [False, False, False])
    assert np.all(truncations == [False, False, False])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [2, 2, 2])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [True, False, False])
    assert np.all(truncations == [False, False, False])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [0, 3, 3])
    assert np.all(rewards == [0, 2, 3])
    assert np.all(terminations == [False, True, True])
    assert np.all(truncations == [False, False, False])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [1, 0, 0])
    assert np.all(rewards == [1, 0, 0])
    assert np.all(terminations == [False, False, False])
    assert np.all(truncations == [False, False, False])
    assert info == {}


@pytest.mark.parametrize("count_envs", [AutoresetMode.SAME_STEP], indirect=True)
def test_autoreset_within_step(count_envs):
    envs = count_envs
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP

    obs, info = envs.reset()
    assert np.all(obs == [0, 0, 0])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [1, 1, 1])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [False, False, False])
    assert np.all(truncations == [False, False, False])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [0, 2, 2])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [True, False, False])
    assert np.all(truncations == [False, False, False])
    assert data_equivalence(
        info,
        {
            "final_obs": np.array([np.int64(2), None, None], dtype=object),
            "final_info": {},
            "_final_obs": np.array([True, False, False]),
            "_final_info": np.array([True, False, False]),
        },
    )

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [1, 0, 0])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [False, True, True])
    assert np.all(truncations == [False, False, False])
    assert data_equivalence(
        info,
        {
            "final_obs": np.array([None, np.int64(3), np.int64(3)], dtype=object),
            "final_info": {},
            "_final_obs": np.array([False, True, True]),
            "_final_info": np.array([False, True, True]),
        },
    )

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [0, 1, 1])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [True, False, False])
    assert np.all(truncations == [False, False, False])
    assert data_equivalence(
        info,
        {
            "final_obs": np.array([np.int64(2), None, None], dtype=object),
            "final_info": {},
            "_final_obs": np.array([True, False, False]),
            "_final_info": np.array([True, False, False]),
        },
    )


@pytest.mark.parametrize("count_envs", [AutoresetMode.DISABLED], indirect=True)
def test_autoreset_disabled(count_envs):
    envs = count_envs
    assert envs.metadata["autoreset_mode"] == AutoresetMode.DISABLED

    obs, info = envs.reset()
    assert np.all(obs == [0, 0, 0])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [1, 1, 1])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [False, False, False])
    assert np.all(truncations == [False, False, False])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [2, 2, 2])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [True, False, False])
    assert np.all(truncations == [False, False, False])
    assert info == {}

    obs, info = envs.reset(options={"reset_mask": terminations})
    assert np.all(obs == [0, 2, 2])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [1, 3, 3])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [False, True, True])
    assert np.all(truncations == [False, False, False])
    assert info == {}

    obs, info = envs.reset(options={"reset_mask": terminations})
    assert np.all(obs == [1, 0, 0])
    assert info == {}

    obs, rewards, terminations, truncations, info = envs.step([1, 2, 3])
    assert np.all(obs == [2, 1, 1])
    assert np.all(rewards == [1, 2, 3])
    assert np.all(terminations == [True, False, False])
    assert np.all(truncations == [False, False, False])
    assert info == {}


@pytest.mark.parametrize("game", ["cartpole", "gym:CartPole-v1"])
@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED,
                                            AutoresetMode.SAME_STEP])
def test_autoreset_metadata(game, autoreset_mode):
    envs = elfpy.make_vector(game, num_envs=2, autoreset_mode=autoreset_mode)
    assert envs.metadata["autoreset_mode"] == autoreset_mode
    envs.close()

    envs = elfpy.make_vector("cartpole", num_envs=2, autoreset_mode=autoreset_mode.value)
    assert envs.metadata["autoreset_mode"] == autoreset_mode
    envs.close()


def test_random_seeding_basics():
    seed = 42
    vector_env = elfpy.make_vector("cartpole", num_envs=4)
    vector_env.reset(seed=seed)
    assert vector_env.np_random_seed == seed
    # resetting with seed=None means seed remains the same
    vector_env.reset(seed=None)
    assert vector_env.np_random_seed == seed
    vector_env.close()


def test_random_seeds_set_at_retrieval():
    vector_env = elfpy.make_vector("cartpole", num_envs=4)
    # the default seed is make_vector's (0)
    assert vector_env.np_random_seed == 0
    vector_env.close()


def test_partial_reset_failure():
    envs = elfpy.make_vector("cartpole", num_envs=3, autoreset_mode=AutoresetMode.DISABLED)
    envs.reset()

    # Reset with mask of an incorrect shape
    with pytest.raises(ValueError, match=re.escape("`options['reset_mask']` must have shape `(3,)`, got (1,)")):
        envs.reset(options={"reset_mask": np.array([True])})

    with pytest.raises(ValueError, match=re.escape("`options['reset_mask']` must have shape `(3,)`, got (4,)")):
        envs.reset(options={"reset_mask": np.array([True, True, False, False])})

    # Reset with mask that is not a boolean array
    with pytest.raises(TypeError, match=re.escape("`options['reset_mask']` must have `dtype=np.bool_`, got int64")):
        envs.reset(options={"reset_mask": np.array([1, 1, 0], dtype=np.int64)})

    # Reset with a mask that is not a numpy array
    with pytest.raises(TypeError, match=re.escape("`options['reset_mask']` must be a numpy array, got <class 'list'>")):
        envs.reset(options={"reset_mask": [True, True, False]})

    # Reset with a mask that is all False
    with pytest.raises(ValueError, match=re.escape("`options['reset_mask']` must contain a boolean array with at "
                                                   "least one True value, got reset_mask=[False False False]")):
        envs.reset(options={"reset_mask": np.array([False, False, False])})

    envs.close()


def test_create_sync_vector_env():
    env = elfpy.make_vector("gym:FrozenLake-v1", num_envs=8, num_workers=1)
    env.close()

    assert env.num_envs == 8


@pytest.mark.parametrize("game", ["cartpole", "gym:CartPole-v1"])
def test_reset_sync_vector_env(game):
    env = elfpy.make_vector(game, num_envs=8)
    observations, infos = env.reset()
    env.close()

    assert isinstance(env.observation_space, Box)
    assert isinstance(observations, np.ndarray)
    assert observations.dtype == env.observation_space.dtype
    assert observations.shape == (8,) + env.single_observation_space.shape
    assert observations.shape == env.observation_space.shape


@pytest.mark.parametrize("use_single_action_space", [True, False])
def test_step_sync_vector_env(use_single_action_space):
    env = elfpy.make_vector("gym:FrozenLake-v1", num_envs=8, num_workers=1)
    env.reset()

    assert isinstance(env.single_action_space, Discrete)
    assert isinstance(env.action_space, MultiDiscrete)

    if use_single_action_space:
        actions = [env.single_action_space.sample() for _ in range(8)]
    else:
        actions = env.action_space.sample()
    observations, rewards, terminations, truncations, _ = env.step(actions)

    env.close()

    assert isinstance(env.observation_space, MultiDiscrete)
    assert isinstance(observations, np.ndarray)
    assert observations.dtype == env.observation_space.dtype
    assert observations.shape == (8,) + env.single_observation_space.shape
    assert observations.shape == env.observation_space.shape

    assert isinstance(rewards, np.ndarray)
    assert isinstance(rewards[0], (float, np.floating))
    assert rewards.ndim == 1
    assert rewards.size == 8

    assert isinstance(terminations, np.ndarray)
    assert terminations.dtype == np.bool_
    assert terminations.ndim == 1
    assert terminations.size == 8

    assert isinstance(truncations, np.ndarray)
    assert truncations.dtype == np.bool_
    assert truncations.ndim == 1
    assert truncations.size == 8


@pytest.mark.parametrize("game", ["cartpole", "gym:CartPole-v1"])
def test_render_sync_vector(game):
    envs = elfpy.make_vector(game, num_envs=3, render_mode="rgb_array")
    assert envs.render_mode == "rgb_array"

    envs.reset()
    rendered_frames = envs.render()
    assert isinstance(rendered_frames, tuple)
    assert len(rendered_frames) == envs.num_envs
    assert all(isinstance(frame, np.ndarray) for frame in rendered_frames)
    envs.close()

    envs = elfpy.make_vector(game, num_envs=3)
    assert envs.render_mode is None
    envs.close()
