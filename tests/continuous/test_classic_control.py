"""Native continuous games against Gymnasium, row by row.

`pendulum` against Pendulum-v1 and `mountain_car_continuous` against
MountainCarContinuous-v0: one game on one actor tag; at the start of every
episode Gymnasium's env is put in the state the game's first observation
shows, both get the same actions (in and out of the action bounds), and every
observation, reward, termination and truncation must agree. The games draw
their own initial states, so Gymnasium's reset is overridden, not matched.
Mountain car's states agree bit for bit (both compute in float32); the
pendulum's within 1e-4 over whole episodes (its angle is recovered from the
float32 cos and sin, within about 1e-7).
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pytest

import elfpy

INPUTS = ["s", "final_s", "r", "terminal", "truncated", "episode_return", "episode_length"]


def pendulum_state(s: np.ndarray) -> np.ndarray:
    """Pendulum-v1's (angle, angular velocity) behind an observation (cos, sin, velocity).

    The angle comes back through atan2 of float32 values, within about 1e-7."""
    return np.array([np.arctan2(float(s[1]), float(s[0])), float(s[2])], dtype=np.float64)


def mountain_car_state(s: np.ndarray) -> np.ndarray:
    """MountainCarContinuous-v0 keeps its state in float32: the observation itself."""
    return np.array(s, dtype=np.float32)


def drive_both(
    game: str,
    env_id: str,
    state_of: Callable[[np.ndarray], np.ndarray],
    policy: Callable[[np.ndarray, np.random.Generator], float],
    num_episodes: int,
    atol: float,
    seed: int = 0,
    resync: bool = False,
    **options,
) -> dict:
    """Plays `num_episodes` episodes of `game` and `env_id` side by side with the
    same actions; asserts every row agrees; returns how the episodes ended.

    With `resync`, Gymnasium's state is set from the game's observation before
    every step (one-step dynamics from equal states), not only at episode starts:
    a controller that balances the pendulum upright acts on the game's rows, and
    replayed open loop on Gymnasium the tiny difference of the recovered initial
    angle would grow exponentially at the unstable top."""
    rng = np.random.default_rng(seed)
    env = gym.make(env_id)
    env.reset(seed=seed)
    ended = {"terminated": [], "truncated": [], "lengths": [], "returns": []}
    episode, length, total = 0, 0, 0.0

    def start_episode(first_obs: np.ndarray) -> None:
        env.reset()
        env.unwrapped.state = state_of(first_obs)

    gc = elfpy.GameContext(game, num_games=1, num_threads=1, seed=seed, **options)
    gc.add_tag("actor", batch_size=1, inputs=INPUTS, replies=["a"])
    expected = None
    with gc:
        for batch in gc:
            s = batch["s"][0].copy()
            if expected is None:
                start_episode(s)
            else:
                obs, reward, terminated, truncated = expected
                where = f"episode {episode}, step {length}"
                assert batch["r"][0] == pytest.approx(reward, rel=1e-5, abs=atol), where
                assert bool(batch["terminal"][0]) == (terminated or truncated), where
                assert bool(batch["truncated"][0]) == (truncated and not terminated), where
                if terminated or truncated:
                    np.testing.assert_allclose(batch["final_s"][0], obs, rtol=0, atol=atol, err_msg=where)
                    assert batch["episode_length"][0] == length, where
                    assert batch["episode_return"][0] == pytest.approx(total, rel=1e-4), where
                    ended["terminated" if terminated else "truncated"].append(episode)
                    ended["lengths"].append(length)
                    ended["returns"].append(total)
                    episode, length, total = episode + 1, 0, 0.0
                    if episode == num_episodes:
                        break
                    start_episode(s)  # auto-reset: s is the next episode's first state
                else:
                    np.testing.assert_allclose(s, obs, rtol=0, atol=atol, err_msg=where)
                    if resync:
                        env.unwrapped.state = state_of(s)
            a = np.array([policy(s, rng)], dtype=np.float32)
            batch.reply({"a": a[None]})  # [B = 1, 1]
            obs, reward, terminated, truncated, _ = env.step(a)
            expected = (obs, reward, terminated, truncated)
            length += 1
            total += float(reward)
    return ended


def random_torque(s: np.ndarray, rng: np.random.Generator) -> float:
    """Uniform in [-3, 3]: a third of the torques beyond the bounds, which both clip."""
    return float(rng.uniform(-3.0, 3.0))


def swing_up(s: np.ndarray, rng: np.random.Generator) -> float:
    """Pump energy (torque along the velocity), then balance near the top; saturates often."""
    cos, sin, velocity = (float(v) for v in s)
    if cos > 0.9:
        return float(-10.0 * np.arctan2(sin, cos) - 2.0 * velocity)
    return 2.5 if velocity >= 0 else -2.5


def test_pendulum_matches_gymnasium_for_random_torques_until_each_200_step_truncation():
    ended = drive_both("pendulum", "Pendulum-v1", pendulum_state, random_torque, num_episodes=3, atol=1e-4)
    assert ended["truncated"] == [0, 1, 2] and ended["terminated"] == []
    assert ended["lengths"] == [200, 200, 200]


def test_pendulum_matches_gymnasium_when_swung_up_and_balanced():
    ended = drive_both(
        "pendulum", "Pendulum-v1", pendulum_state, swing_up, num_episodes=2, atol=1e-5, seed=3, resync=True
    )
    assert ended["lengths"] == [200, 200]
    assert max(ended["returns"]) > -400  # the controller really reached the top (a random policy: about -1200)


def test_pendulum_max_steps_and_gravity_options():
    ended = drive_both(
        "pendulum", "Pendulum-v1", pendulum_state, random_torque, num_episodes=3, atol=1e-4, max_steps=200, g=10.0
    )
    assert ended["lengths"] == [200] * 3
    gc = elfpy.GameContext("pendulum", num_games=1, num_threads=1, max_steps=5)
    gc.add_tag("actor", batch_size=1, inputs=["terminal", "truncated"], replies=["a"])
    with gc:
        ends = []
        for i, batch in enumerate(gc):
            ends.append(bool(batch["truncated"][0]))
            batch.reply({"a": np.zeros((1, 1), np.float32)})
            if i == 10:
                break
    assert [i for i, end in enumerate(ends) if end] == [5, 10]


def push_along_velocity(s: np.ndarray, rng: np.random.Generator) -> float:
    """Push with the velocity (reaches the goal), with noise that sometimes leaves [-1, 1]."""
    return float(np.sign(s[1]) * 1.0 + rng.normal(0.0, 0.3))


def random_force(s: np.ndarray, rng: np.random.Generator) -> float:
    return float(rng.uniform(-1.5, 1.5))


def test_mountain_car_continuous_matches_gymnasium_through_goals():
    ended = drive_both(
        "mountain_car_continuous",
        "MountainCarContinuous-v0",
        mountain_car_state,
        push_along_velocity,
        num_episodes=4,
        atol=0.0,
    )
    assert ended["terminated"] == [0, 1, 2, 3], ended
    assert all(r > 80 for r in ended["returns"])


def test_mountain_car_continuous_matches_gymnasium_until_the_999_step_truncation():
    ended = drive_both(
        "mountain_car_continuous",
        "MountainCarContinuous-v0",
        mountain_car_state,
        random_force,
        num_episodes=1,
        atol=0.0,
        seed=1,
    )
    assert ended["truncated"] == [0] and ended["lengths"] == [999]


def test_box_action_spec_of_the_continuous_games():
    for game, high, obs_shape in (("pendulum", 2.0, (3,)), ("mountain_car_continuous", 1.0, (2,))):
        spec = elfpy.GameContext(game, num_games=1, num_threads=1).spec()
        assert spec["a"].role == "action" and spec["a"].dtype == np.float32
        assert spec["a"].shape == (1,) and spec["a"].bounds == (-high, high)
        assert spec["a"].space == gym.spaces.Box(-high, high, (1,), np.float32)
        assert spec["s"].shape == obs_shape and spec["s"].role == "observation"


def test_nan_action_is_refused_naming_tag_and_key():
    gc = elfpy.GameContext("pendulum", num_games=1, num_threads=1)
    gc.add_tag("actor", batch_size=1, inputs=["s"], replies=["a"])
    with pytest.raises(ValueError, match="tag 'actor', key 'a'.* replied nan .*must be finite"):
        with gc:
            for batch in gc:
                batch.reply({"a": np.full((1, 1), np.nan, np.float32)})
