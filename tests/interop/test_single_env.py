"""`elfpy.make`: every native single-seat game as one gymnasium.Env passes Gymnasium's and Stable-Baselines3's
environment checkers, and resets as Gymnasium's envs do."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import elfpy

# Every registered game with one seat: the engine's own test games (counter, picks, steer) included, since a
# user may reach them too; duel and go_mcts have several seats.
SINGLE_SEAT = [game for game in elfpy.games() if elfpy.GameContext(game, num_games=1, num_threads=1).num_seats == 1]
# The checkers play random actions of the space: Go's illegal ones (an error by default) must then end the game.
CHECKED_OPTIONS = {"go": {"illegal_move_loses": True}}


def test_the_single_seat_games_are_the_ones_expected():
    assert set(SINGLE_SEAT) >= {"cartpole", "pendulum", "mountain_car_continuous", "memory", "minirts", "go"}
    assert "duel" not in SINGLE_SEAT and "go_mcts" not in SINGLE_SEAT


@pytest.mark.parametrize("game", SINGLE_SEAT)
def test_gymnasium_check_env(game):
    env = elfpy.make(game, **CHECKED_OPTIONS.get(game, {}))
    assert isinstance(env, gym.Env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning is a failed convention, except these two of Gymnasium's own:
        warnings.filterwarnings("ignore", message=".*Box observation space (minimum|maximum) value is")  # unbounded
        warnings.filterwarnings("ignore", message=".*we recommend using a symmetric and normalized space")
        check_env(env, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("game", SINGLE_SEAT)
def test_stable_baselines3_check_env(game):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = elfpy.make(game, **CHECKED_OPTIONS.get(game, {}))
    sb3_check_env(env, warn=False)
    env.close()


@pytest.mark.parametrize("game", ["cartpole", "minirts"])
def test_render_check(game):
    env = elfpy.make(game, render_mode="rgb_array", **({"map_size": 12} if game == "minirts" else {}))
    check_env(env)
    env.reset()
    assert env.render().shape[-1] == 3
    env.close()


def test_reset_after_an_episode_starts_the_next_and_a_seed_repeats_the_first():
    env = elfpy.make("cartpole")
    first, _ = env.reset(seed=7)
    again, _ = env.reset(seed=7)
    np.testing.assert_array_equal(first, again)
    terminated = truncated = False
    while not (terminated or truncated):
        observation, reward, terminated, truncated, _ = env.step(1)
        assert reward == 1.0
    assert terminated and (abs(observation[2]) > 12 * 2 * np.pi / 360 or abs(observation[0]) > 2.4)
    with pytest.raises(RuntimeError, match="the episode ended: call reset"):
        env.step(1)
    following, _ = env.reset()
    assert np.all(np.abs(following) <= 0.05) and not np.array_equal(following, first)
    env.step(0)
    env.close()


def test_a_scalar_observation_is_a_box_of_one_element():
    env = elfpy.make("counter")
    assert env.observation_space["count"].shape == (1,)
    observation, _ = env.reset()
    assert observation["count"].shape == (1,) and observation in env.observation_space
    env.close()


@pytest.mark.parametrize(("moves", "reward"), [([0, 0], 1.0), ([0, 1, 1], -1.0)],
                         ids=["white_plays_on_a_stone", "black_plays_on_a_stone"])
def test_go_with_illegal_move_loses_ends_the_game_lost_by_the_mover(moves, reward):
    env = elfpy.make("go", illegal_move_loses=True)
    env.reset()
    for move in moves[:-1]:
        assert env.step(move)[1:4] == (0.0, False, False)
    _, got, terminated, truncated, _ = env.step(moves[-1])  # on an occupied point: the mover loses
    assert terminated and not truncated and got == reward  # the reward is black's
    env.close()
    plain = elfpy.make("go")  # by default an illegal move is an error naming it
    plain.reset()
    plain.step(0)
    with pytest.raises(elfpy.GameError, match="illegal move W A9: occupied"):
        plain.step(0)
    plain.close()
