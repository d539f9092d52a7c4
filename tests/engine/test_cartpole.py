"""CartPole: the engine's game against Gymnasium's CartPole-v1, step for step.

One game on one actor tag; Gymnasium's env is put in the same state at the
start of every episode and given the same actions, and every observation,
reward, termination and truncation must agree.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import elfpy


def balancing_action(s: np.ndarray) -> int:
    """A PD controller on the pole angle that keeps CartPole up for 500 steps."""
    x, x_dot, theta, theta_dot = (float(v) for v in s)
    return int(theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0)


def drive_both(num_random_episodes: int, num_balanced_episodes: int, seed: int = 0) -> dict:
    """Plays episodes in our CartPole and Gymnasium's side by side; asserts
    each step agrees and returns how the episodes ended."""
    rng = np.random.default_rng(seed)
    env = gym.make("CartPole-v1")
    env.reset(seed=seed)
    ended = {"terminated": [], "truncated": [], "lengths": [], "steps": 0}
    episode, length = 0, 0
    total = num_random_episodes + num_balanced_episodes

    def start_episode(first_obs: np.ndarray) -> None:
        assert np.all(np.abs(first_obs) <= 0.05), f"initial state out of [-0.05, 0.05]: {first_obs}"
        env.reset()
        env.unwrapped.state = np.array(first_obs, dtype=np.float64)

    gc = elfpy.GameContext("cartpole", num_games=1, num_threads=1, seed=seed)
    gc.add_tag(
        "actor",
        batch_size=1,
        inputs=["s", "final_s", "r", "terminal", "truncated", "episode_return", "episode_length"],
        replies=["a"],
    )
    expected = None  # what Gymnasium says this row must hold
    with gc:
        for batch in gc:
            s = batch["s"][0].copy()
            if expected is None:
                assert not batch["terminal"][0] and batch["r"][0] == 0.0
                start_episode(s)
            else:
                obs, reward, terminated, truncated = expected
                assert batch["r"][0] == pytest.approx(reward)
                assert bool(batch["terminal"][0]) == (terminated or truncated), (episode, length)
                assert bool(batch["truncated"][0]) == (truncated and not terminated), (episode, length)
                if terminated or truncated:
                    assert batch["episode_length"][0] == length and batch["episode_return"][0] == length
                    # The state the episode ended in, which s no longer shows.
                    np.testing.assert_allclose(
                        batch["final_s"][0], obs, rtol=0, atol=1e-5, err_msg=f"episode {episode}, final state"
                    )
                    ended["terminated" if terminated else "truncated"].append(episode)
                    ended["lengths"].append(length)
                    episode, length = episode + 1, 0
                    if episode == total:
                        break
                    start_episode(s)  # auto-reset: s is already the next episode's first state
                else:
                    np.testing.assert_allclose(s, obs, rtol=0, atol=1e-5, err_msg=f"episode {episode}, step {length}")
            a = int(rng.integers(0, 2)) if episode < num_random_episodes else balancing_action(s)
            batch.reply({"a": np.array([a], dtype=np.int64)})
            obs, reward, terminated, truncated, _ = env.step(a)
            expected = (obs, reward, terminated, truncated)
            length += 1
            ended["steps"] += 1
    return ended


@pytest.mark.timeout(60)
def test_cartpole_matches_gymnasium_through_terminations():
    ended = drive_both(num_random_episodes=8, num_balanced_episodes=0)
    assert ended["terminated"] == list(range(8)), ended
    assert ended["truncated"] == []


@pytest.mark.timeout(60)
def test_cartpole_matches_gymnasium_for_500_steps_until_truncation():
    ended = drive_both(num_random_episodes=0, num_balanced_episodes=2, seed=1)
    assert ended["truncated"] == [0, 1], ended
    assert ended["terminated"] == []
    assert ended["lengths"] == [500, 500]


def test_cartpole_max_steps_option_truncates_episodes():
    gc = elfpy.GameContext("cartpole", num_games=2, num_threads=1, seed=3, max_steps=7)
    gc.add_tag("actor", batch_size=2, inputs=["s", "terminal", "truncated", "episode_length"], replies=["a"])
    rows = []
    with gc:
        for i, batch in enumerate(gc):
            rows.append((batch["terminal"].copy(), batch["truncated"].copy(), batch["episode_length"].copy()))
            batch.reply({"a": np.array([balancing_action(s) for s in batch["s"]], dtype=np.int64)})
            if i == 15:
                break
    terminal = np.array([r[0] for r in rows])
    truncated = np.array([r[1] for r in rows])
    lengths = np.array([r[2] for r in rows])
    # A balanced pole survives 7 steps, so every episode ends by truncation at 7.
    np.testing.assert_array_equal(terminal[[7, 14]], True)
    np.testing.assert_array_equal(truncated, terminal)
    assert terminal.sum() == 4
    np.testing.assert_array_equal(lengths[[7, 14]], 7)
