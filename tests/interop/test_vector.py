"""Native games as Gymnasium vector envs, and through Stable-Baselines3."""

import warnings

import gymnasium as gym
import numpy as np
import pytest

import elfpy

THETA_LIMIT = 12 * 2 * np.pi / 360


def test_make_vector_has_the_game_spaces():
    env = elfpy.make_vector("cartpole", num_envs=8, seed=0)
    assert isinstance(env, gym.vector.VectorEnv)
    assert env.single_action_space == gym.spaces.Discrete(2)
    assert env.single_observation_space.shape == (4,)
    assert env.observation_space.shape == (8, 4)
    assert env.action_space.shape == (8,)
    observation, info = env.reset(seed=3)
    assert observation.shape == (8, 4) and observation.dtype == np.float32
    assert np.all(np.abs(observation) <= 0.05)
    env.close()


def test_same_step_episode_end_returns_next_first_state_and_final_observation():
    env = elfpy.make_vector("cartpole", num_envs=4, seed=0, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    env.reset()
    ends = 0
    for _ in range(60):  # always pushing right topples the pole within ~10 steps
        observation, reward, terminated, truncated, info = env.step(np.ones(4, dtype=np.int64))
        assert np.all(reward == 1.0)
        if terminated.any():
            final = np.stack(info["final_obs"][info["_final_obs"]])
            assert list(info["_final_info"]) == list(info["_final_obs"]) and info["final_info"] == {}
            assert np.all((np.abs(final[:, 0]) > 2.4) | (np.abs(final[:, 2]) > THETA_LIMIT))
            assert np.all(np.abs(observation[terminated]) <= 0.05)  # already the next episode
            ends += int(terminated.sum())
        assert not truncated.any()
    assert ends >= 4
    env.close()


def test_reset_with_same_seed_repeats_the_run():
    env = elfpy.make_vector("cartpole", num_envs=4)
    runs = []
    for _ in range(2):
        first, _ = env.reset(seed=11)
        steps = [env.step(np.array([0, 1, 0, 1]))[0] for _ in range(20)]
        runs.append(np.concatenate([first[None], np.stack(steps)]))
    np.testing.assert_array_equal(runs[0], runs[1])
    env.close()


def test_multi_seat_game_is_refused():
    with pytest.raises(ValueError, match="seats"):
        elfpy.make_vector("duel", num_envs=2)


@pytest.mark.timeout(300)
def test_stable_baselines3_a2c_learns_through_the_adapter():
    from stable_baselines3 import A2C
    from stable_baselines3.common.evaluation import evaluate_policy

    from elfpy.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("cartpole", num_envs=8, seed=0)
    model = A2C("MlpPolicy", venv, seed=0, device="cpu")
    model.learn(total_timesteps=4000)
    mean_return, _ = evaluate_policy(model, venv, n_eval_episodes=10, warn=False)
    venv.close()
    assert mean_return > 60  # random play averages about 22


def test_the_sb3_adapter_is_made_without_warnings_and_without_a_render_mode():
    from elfpy.sb3 import make_sb3_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3 warns where it cannot read the env's render_mode
        venv = make_sb3_vec_env("cartpole", num_envs=2, seed=0)
    assert venv.render_mode is None
    venv.close()


def test_integer_and_dict_observations_get_finite_bounded_spaces():
    env = elfpy.make_vector("minirts", num_envs=2, seed=0, board=True)
    space = env.single_observation_space
    assert isinstance(space, gym.spaces.Dict)
    assert space["board"] == gym.spaces.Box(0, 255, space["board"].shape, np.uint8)
    observation, _ = env.reset(seed=0)
    for key, value in observation.items():
        assert space[key].contains(np.asarray(value[0])), key
    env.close()
