"""Action spaces in the spec, the checks of replies against them, episode
statistics, and keys that only their replier declares."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import elfpy

from .helpers import add_policy_keys


def test_each_action_key_states_its_gymnasium_space():
    counter = elfpy.GameContext("counter", num_games=1, num_actions=4).spec()
    assert counter["a"].space == gym.spaces.Discrete(4) and counter["a"].bounds == (0, 3)
    picks = elfpy.GameContext("picks", num_games=1).spec()
    assert picks["a"].space == gym.spaces.MultiDiscrete([3, 5]) and picks["a"].shape == (2,)
    steer = elfpy.GameContext("steer", num_games=1).spec()["a"]
    assert steer.space == gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    assert steer.space.dtype == np.float32 and steer.bounds == (-1.0, 1.0)
    assert all(spec.space is None for spec in picks.values() if spec.role != "action")


def test_engine_declares_no_policy_or_value_and_add_key_declares_them():
    gc = elfpy.GameContext("cartpole", num_games=1)
    assert "pi" not in gc.spec() and "V" not in gc.spec()
    add_policy_keys(gc)
    assert gc.spec()["pi"].shape == (2,) and gc.spec()["pi"].role == "extra" and gc.spec()["pi"].space is None


def test_start_rejects_a_tag_reading_a_reply_key_no_tag_replies():
    gc = elfpy.GameContext("counter", num_games=4, num_threads=1)
    add_policy_keys(gc)
    gc.add_tag("actor", batch_size=4, inputs=["count"], replies=["a", "pi"])
    gc.add_tag("train", batch_size=4, T=3, inputs=["count", "a", "pi", "V"])
    with pytest.raises(ValueError, match="tag 'train' reads key 'V', which no tag with replies replies"):
        gc.start()
    gc.stop()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_box_reply_with_nan_or_infinity_names_tag_key_row_and_game_and_no_game_steps(bad):
    gc = elfpy.GameContext("steer", num_games=4, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=4, inputs=["s"], replies=["a"])
    with gc:
        batches = iter(gc)
        batch = next(batches)
        game = int(batch.game_ids[2])
        a = np.zeros((4, 2), np.float32)
        a[2, 1] = bad
        with pytest.raises(ValueError) as error:
            batch.reply({"a": a})
        message = str(error.value)
        assert re.search(rf"tag 'actor', key 'a': row 2 \(game {game}\) replied", message), message
        assert "at element 1; a Box action must be finite" in message
        with pytest.raises(elfpy.GameError, match="must be finite"):  # failed: no game steps any more
            next(batches)


def test_a_refused_reply_that_keeps_its_batch_can_be_replied_again_and_the_context_goes_on():
    gc = elfpy.GameContext("picks", num_games=2, num_threads=1, seed=0, deterministic=True)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    with gc:
        batches = iter(gc)
        batch = next(batches)
        with pytest.raises(ValueError, match=r"replied component 1 = 5, valid range \[0, 4\]"):
            batch.reply({"a": np.array([[2, 4], [0, 5]])}, refusal_keeps_batch=True)
        with pytest.raises(ValueError, match=r"reply has shape \(1, 2\), expected \(2, 2\)"):
            batch.reply({"a": np.array([[2, 4]])}, refusal_keeps_batch=True)
        batch.reply({"a": np.array([[2, 4], [0, 3]])})
        batch = next(batches)
        np.testing.assert_array_equal(batch["s"], [[2, 4], [0, 3]])  # the picks replied last


def test_box_values_outside_the_bounds_reach_the_game_unchanged_and_it_clips_them():
    gc = elfpy.GameContext("steer", num_games=2, num_threads=1, seed=0, deterministic=True)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    with gc:
        batches = iter(gc)
        batch = next(batches)
        batch.reply({"a": np.array([[7.0, 1.0], [-0.25, 3.0]], np.float32)})
        batch = next(batches)
        np.testing.assert_allclose(batch["s"], [[1.0, 1.0], [-0.25, -0.25]])  # (position, move as applied)


def test_multi_discrete_reply_out_of_its_component_range_names_the_component():
    gc = elfpy.GameContext("picks", num_games=2, num_threads=1)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    with gc:
        batch = next(iter(gc))
        expected = r"key 'a': row 1 \(game \d\) replied component 1 = 5, valid range \[0, 4\]"
        with pytest.raises(ValueError, match=expected):
            batch.reply({"a": np.array([[2, 4], [0, 5]])})


def test_minirts_won_is_an_episode_statistic_without_a_final_copy():
    spec = elfpy.GameContext("minirts", num_games=1, num_threads=1).spec()
    assert spec["won"].role == "statistic" and spec["won"].space is None
    assert "final_won" not in spec and "final_s" in spec
