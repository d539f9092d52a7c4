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


# --- autoreset modes on a native game ------------------------------------------------------------------------


def _toppled(state: np.ndarray) -> np.ndarray:
    return (np.abs(state[..., 0]) > 2.4) | (np.abs(state[..., 2]) > THETA_LIMIT)


def test_next_step_is_the_default_and_ignores_the_action_of_the_reset_step():
    runs = []
    for reset_step_action in (0, 1):
        env = elfpy.make_vector("cartpole", num_envs=2, seed=5)
        assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
        observation, _ = env.reset()
        trajectory, resets = [observation], 0
        ended = np.zeros(2, bool)
        for _ in range(40):
            action = np.where(ended, reset_step_action, 1)  # the reset step's action must not matter
            observation, reward, terminated, truncated, info = env.step(action)
            assert info == {}
            if ended.any():  # the step after an end: the next episode's first state, reward 0, no flag
                resets += int(ended.sum())
                assert np.all(reward[ended] == 0) and not terminated[ended].any() and not truncated[ended].any()
                assert np.all(np.abs(observation[ended]) <= 0.05)
            assert np.all(_toppled(observation[terminated]))  # the state the episode ended in
            assert np.all(reward[~ended] == 1)
            ended = terminated | truncated
            trajectory.append(observation)
        assert resets >= 2
        runs.append(np.stack(trajectory))
        env.close()
    np.testing.assert_array_equal(runs[0], runs[1])


def test_disabled_returns_the_ended_state_until_a_reset_mask_starts_the_next_episode():
    env = elfpy.make_vector("cartpole", num_envs=3, seed=0, autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    env.reset()
    pushes = np.array([1, 0, 1])
    for _ in range(60):
        observation, reward, terminated, truncated, _ = env.step(pushes)
        if terminated.any():
            break
    assert terminated.any() and np.all(_toppled(observation[terminated]))
    with pytest.raises(ValueError, match=r"ended their episode: with autoreset_mode=DISABLED, reset\(options="):
        env.step(pushes)
    if not terminated.all():
        with pytest.raises(ValueError, match="whose episodes go on"):
            env.reset(options={"reset_mask": np.ones(3, bool)})
    running = observation[~terminated]
    first, info = env.reset(options={"reset_mask": terminated})
    assert info == {} and np.all(np.abs(first[terminated]) <= 0.05)
    np.testing.assert_array_equal(first[~terminated], running)  # the other envs did not step
    observation, reward, *_ = env.step(pushes)
    assert np.all(reward == 1)
    env.close()


def test_same_step_final_obs_is_an_object_array_of_each_ended_envs_state():
    env = elfpy.make_vector("minirts", num_envs=2, seed=0, autoreset_mode="SameStep", map_size=12,
                            frame_skip=100)
    env.reset()
    for _ in range(200):
        _, _, terminated, truncated, info = env.step(np.zeros(2, np.int64))
        if "final_obs" in info:
            break
    ended = terminated | truncated
    assert info["final_obs"].dtype == object and list(info["_final_obs"]) == list(ended)
    for i in range(2):
        if ended[i]:
            assert env.single_observation_space.contains(info["final_obs"][i])
        else:
            assert info["final_obs"][i] is None
    env.close()


# --- spaces --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "gymnasium_id"), [("cartpole", "CartPole-v1"), ("pendulum", "Pendulum-v1"),
                                                    ("mountain_car_continuous", "MountainCarContinuous-v0")])
def test_native_games_declare_their_gymnasium_counterparts_spaces(game, gymnasium_id):
    env = elfpy.make_vector(game, num_envs=2)
    theirs = gym.make(gymnasium_id)
    assert env.single_observation_space == theirs.observation_space
    assert env.single_action_space == theirs.action_space
    env.close()
    theirs.close()


@pytest.mark.parametrize("gymnasium_id", ["CartPole-v1", "FrozenLake-v1", "Acrobot-v1"])
def test_hosted_games_keep_their_environments_observation_space(gymnasium_id):
    env = elfpy.make_vector(f"gym:{gymnasium_id}", num_envs=2, num_workers=1)
    theirs = gym.make(gymnasium_id)
    assert env.single_observation_space == theirs.observation_space
    observation, _ = env.reset()
    assert observation in env.observation_space
    env.close()
    theirs.close()


# --- seeding -------------------------------------------------------------------------------------------------


def _first_states(env, seeds):
    return [env.reset(seed=seed)[0] for seed in seeds]


def test_reset_without_a_seed_continues_the_stream_instead_of_replaying():
    env = elfpy.make_vector("cartpole", num_envs=4)
    first, again, further = _first_states(env, [42, None, None])
    assert env.np_random_seed == 42
    assert not np.array_equal(first, again) and not np.array_equal(again, further)
    other = elfpy.make_vector("cartpole", num_envs=4)
    for mine, theirs in zip([first, again, further], _first_states(other, [42, None, None]), strict=True):
        np.testing.assert_array_equal(mine, theirs)  # the stream is the seed's
    env.close()
    other.close()


# --- refused actions -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("bad", "message"), [
    (np.array([0, 2, 1, 0]), r"key 'a': row 1 \(game 1\) replied 2, valid range \[0, 1\]"),
    (np.array([0, 1]), r"key 'a': reply has shape \(2,\), expected \(4,\)"),
    (np.array([0.0, 1.0, 1.0, 0.0]), "reply has dtype float64, expected int64"),
], ids=["out_of_range", "wrong_shape", "wrong_dtype"])
def test_a_refused_action_raises_and_the_next_valid_one_steps_as_if_it_never_came(bad, message):
    actions = [np.array([0, 1, 1, 0]), np.array([1, 1, 0, 0])]
    env, clean = (elfpy.make_vector("cartpole", num_envs=4, seed=3) for _ in range(2))
    env.reset()
    clean.reset()
    with pytest.raises(ValueError, match=message):
        env.step(bad)
    for action in actions:
        mine, theirs = env.step(action), clean.step(action)
        np.testing.assert_array_equal(mine[0], theirs[0])
        np.testing.assert_array_equal(mine[1], theirs[1])
    env.close()
    clean.close()


def test_the_sb3_adapter_needs_a_same_step_env():
    from elfpy.sb3 import ElfVecEnv

    env = elfpy.make_vector("cartpole", num_envs=2)
    with pytest.raises(ValueError, match="autoreset_mode=AutoresetMode.SAME_STEP"):
        ElfVecEnv(env)
    env.close()


# --- rendering -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "options", "shape"), [
    ("gym:CartPole-v1", {"num_workers": 1}, (400, 600, 3)),
    ("cartpole", {}, (400, 600, 3)),
    ("pendulum", {}, (500, 500, 3)),
    ("mountain_car_continuous", {}, (400, 600, 3)),
    ("minirts", {"map_size": 12}, (12 * 16, 12 * 16, 3)),
])
def test_render_rgb_array_gives_one_frame_per_env_of_its_state(game, options, shape):
    env = elfpy.make_vector(game, num_envs=2, seed=0, render_mode="rgb_array", **options)
    assert env.render_mode == "rgb_array" and env.metadata["render_modes"] == ["rgb_array"]
    env.reset()
    before = env.render()
    for _ in range(10):
        env.step(env.action_space.sample())
    after = env.render()
    assert len(before) == 2 and all(frame.shape == shape and frame.dtype == np.uint8 for frame in before)
    assert not all(np.array_equal(b, a) for b, a in zip(before, after, strict=True))  # the states moved
    if game == "minirts":  # the board it draws from is not an observation the caller asked for
        assert "board" not in env.single_observation_space.spaces
    env.close()


def test_hosted_render_is_the_environments_own_frame():
    env = elfpy.make_vector("gym:CartPole-v1", num_envs=1, seed=0, num_workers=1, render_mode="rgb_array")
    observation, _ = env.reset()
    theirs = gym.make("CartPole-v1", render_mode="rgb_array")
    theirs.reset(seed=0)
    theirs.unwrapped.state = observation[0].astype(np.float64)
    np.testing.assert_array_equal(env.render()[0], theirs.render())
    env.close()
    theirs.close()


def test_render_without_a_mode_is_none_and_a_game_that_cannot_draw_says_so():
    env = elfpy.make_vector("cartpole", num_envs=1)
    env.reset()
    assert env.render_mode is None and env.render() is None
    env.close()
    with pytest.raises(ValueError, match="game 'counter' draws no frames"):
        elfpy.make_vector("counter", num_envs=1, render_mode="rgb_array")
    with pytest.raises(ValueError, match="render_mode must be one of"):
        elfpy.make_vector("cartpole", num_envs=1, render_mode="human")


def test_render_frames_is_refused_where_no_frame_comes_from_one_environment():
    with pytest.raises(ValueError, match="render_frames needs a single-agent environment made with "
                                         "render_mode='rgb_array', got render_mode=None"):
        elfpy.GameContext("gym:CartPole-v1", num_games=1, num_workers=1, render_frames=True)
    with pytest.raises(ValueError, match="render_frames needs a single-agent environment"):
        elfpy.GameContext("pz:mpe2.simple_spread_v3", num_games=1, num_workers=1, render_frames=True,
                          render_mode="rgb_array")
    with pytest.raises(ValueError, match="render_frames: only for Python-hosted games"):
        elfpy.GameContext("cartpole", num_games=1, render_frames=True)
