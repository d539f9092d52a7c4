"""A hosted game's spaces end to end: MultiDiscrete([3, 2]), a Box with
per-element bounds and a Dict of both are the environment's own in the
engine's spec, make_vector, the Stable-Baselines3 adapter and a model's
policy head; a reply outside one component's range is a ValueError before
any game of the batch steps; an observation that changes dtype or shape is
a GameError naming game, worker and key, and a NaN or infinite reward or
observation one naming game, seat and key; a first reset that hangs is
caught by step_timeout_s, in a worker or in the environment that reads the
game's spaces.

None of these asserts how long anything took: a hang fails by pytest-timeout.
"""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest
import torch

import elfpy
from elfpy.sb3 import ElfVecEnv, make_sb3_vec_env
from elfpy.vector import make_vector
from rlpytorch.core.spaces import action_space
from rlpytorch.models.heads import policy_head

from . import space_envs
from .helpers import assert_released

pytestmark = pytest.mark.timeout(60, method="thread")  # a hang may be inside C++, out of reach of signals

FACTORIES = {"multi_discrete": space_envs.multi_discrete, "box": space_envs.box, "dict": space_envs.dict_of_both}


def hosted(factory, num_games: int = 2, **options) -> elfpy.GameContext:
    """`num_games` games in as many worker processes, one actor tag replying every action key."""
    gc = elfpy.GameContext(factory, num_games=num_games, num_workers=num_games, num_threads=num_games,
                           deterministic=True, **options)
    roles = {name: key.role for name, key in gc.spec().items()}
    gc.add_tag("actor", batch_size=num_games, inputs=[k for k, role in roles.items() if role == "observation"],
               replies=[k for k, role in roles.items() if role == "action"])
    return gc


def requests(gc: elfpy.GameContext) -> list[int]:
    """How many requests each game's worker was sent (its first reset, then one per step)."""
    board = gc._source._host.board
    return [board.requests(game) for game in range(board.num_games)]


@pytest.mark.parametrize("name", FACTORIES)
def test_the_spec_make_vector_sb3_and_a_policy_head_keep_the_environments_space(name):
    expected = FACTORIES[name]().action_space
    gc = elfpy.GameContext(FACTORIES[name], num_games=1, num_workers=1, num_threads=1)
    spec = gc.spec()
    gc.stop()
    assert action_space(spec) == expected

    env = make_vector(FACTORIES[name], num_envs=2, seed=0, autoreset_mode="SameStep")  # for ElfVecEnv below
    assert env.single_action_space == expected
    assert env.action_space == gym.vector.utils.batch_space(expected, 2)
    env.reset(seed=0)
    action = env.action_space.sample()
    observation, *_ = env.step(action)
    flat = action.values() if isinstance(action, dict) else [action]
    np.testing.assert_array_equal(observation, np.concatenate([np.asarray(a, np.float32).reshape(2, -1) for a in flat],
                                                              axis=1))  # each env got its own action
    venv = ElfVecEnv(env)
    assert venv.action_space == expected and venv.observation_space == env.single_observation_space
    venv.close()

    head = policy_head(8, action_space(spec), box_policy="tanh_gaussian")
    out = head(torch.zeros(5, 8))
    if name in ("multi_discrete", "dict"):
        md = "md." if name == "dict" else ""
        assert out[md + "pi"].shape == (5, 3 + 2)  # one logit per value of each component
        family = head.parts["md"].family if name == "dict" else head.family
        assert family.nvec == [3, 2]
        torch.testing.assert_close(out[md + "pi"].reshape(5, -1).split([3, 2], -1)[1].sum(-1), torch.ones(5))
    if name in ("box", "dict"):
        box = "box." if name == "dict" else ""
        assert out[box + "mean"].shape == (5, 2)
        family = head.parts["box"].family if name == "dict" else head.family
        assert (family.low, family.high) == ([-1.0, -5.0], [1.0, 5.0])


def md_replies(name: str, md: np.ndarray) -> dict[str, np.ndarray]:
    """A reply of two rows with MultiDiscrete picks `md` (and a zero Box entry for the Dict game)."""
    return {"md": md, "box": np.zeros((2, 2), np.float32)} if name == "dict" else {"a": md}


@pytest.mark.parametrize("name", ["multi_discrete", "dict"])
def test_a_reply_outside_one_components_range_is_a_value_error_before_any_game_steps(name):
    gc = hosted(FACTORIES[name])
    pids = gc.worker_pids
    with gc:
        batches = iter(gc)
        batch = next(batches)
        batch.reply(md_replies(name, np.array([[2, 1], [2, 1]])))
        batch = next(batches)
        assert requests(gc) == [2, 2]  # the first reset and one step each
        game = int(batch.game_ids[1])
        key = "md" if name == "dict" else "a"
        # Row 1 picks 2 in component 1: within component 0's count (3), outside its own (2).
        with pytest.raises(ValueError, match=rf"key '{key}': row 1 \(game {game}\) replied component 1 = 2, "
                                             r"valid range \[0, 1\]"):
            batch.reply(md_replies(name, np.array([[2, 1], [0, 2]])))
        assert requests(gc) == [2, 2]  # no game stepped, the one of the valid row neither
    assert_released(pids)


def test_a_box_reply_keeps_each_elements_bounds_and_only_a_non_finite_value_is_refused():
    gc = hosted(space_envs.box)
    with gc:
        batches = iter(gc)
        batch = next(batches)
        # 3 lies outside element 0's bounds, inside element 1's: the game gets it as it is and clips it itself.
        batch.reply({"a": np.array([[3.0, -4.0], [0.5, 5.0]], np.float32)})
        batch = next(batches)
        np.testing.assert_array_equal(batch["s"][np.argsort(batch.game_ids)], [[3.0, -4.0], [0.5, 5.0]])
        with pytest.raises(ValueError, match=r"key 'a': row 0 \(game \d\) replied nan at element 1"):
            batch.reply({"a": np.array([[0.0, np.nan], [0.0, 0.0]], np.float32)})
        assert requests(gc) == [2, 2]


@pytest.mark.parametrize(("factory", "message"), [
    (space_envs.drifting_dtype, r"observation 'level' has dtype float64, but the game's spec says int64"),
    (space_envs.drifting_shape, r"observation 'pos' has shape \(3,\), but the game's spec says \(2,\)"),
], ids=["dtype", "shape"])
def test_an_observation_that_changes_dtype_or_shape_names_game_worker_and_key(factory, message):
    gc = hosted(factory)
    pids = gc.worker_pids
    gc.reg_callback("actor", lambda batch: {"a": np.zeros(len(batch), np.int64)})
    game = space_envs.HANGING_GAME
    pattern = (rf"game {game} \('py:{factory.__name__}'\): ValueError: {message}.*"
               rf"worker process {game} \(pid {pids[game]}, games {game}-{game}\)")
    with gc:
        with pytest.raises(elfpy.GameError, match=pattern):
            for _ in range(10):
                gc.run()
        assert_released(pids)


@pytest.mark.parametrize(("factory", "message"), [
    (space_envs.spoiled_reward, rf"seat 0's reward \(key 'r'\) is inf at step {space_envs.SPOILED_STEP}"),
    (space_envs.spoiled_observation,
     rf"seat 0's observation 's' is nan at element 1 at step {space_envs.SPOILED_STEP}"),
], ids=["reward", "observation"])
def test_a_non_finite_reward_or_observation_is_a_game_error_naming_game_seat_and_key(factory, message):
    gc = hosted(factory)
    pids = gc.worker_pids
    gc.reg_callback("actor", lambda batch: {"a": np.zeros(len(batch), np.int64)})
    pattern = rf"game {space_envs.HANGING_GAME} \('py:{factory.__name__}'\): {message}"
    with gc:
        with pytest.raises(elfpy.GameError, match=pattern):
            for _ in range(10):
                gc.run()
        assert_released(pids)


def test_a_first_reset_that_hangs_fails_run_after_step_timeout_and_stop_returns():
    # 2 s: the other game's first reset must beat it on a loaded machine too.
    gc = hosted(space_envs.HangingResetEnv, step_timeout_s=2.0)
    pids = gc.worker_pids
    gc.reg_callback("actor", lambda batch: {"a": np.zeros(len(batch), np.int64)})
    game = space_envs.HANGING_GAME
    pattern = (rf"game {game} \('py:HangingResetEnv'\): environment {game} \(worker process {game}, environments "
               rf"{game}-{game}\) did not finish its first reset within step_timeout_s = 2 s")
    with gc:
        with pytest.raises(elfpy.GameError, match=pattern):
            gc.run()
        assert_released(pids)
    gc.stop()


def child_pids() -> set[int]:
    """The processes whose parent is this one (reaped or not)."""
    children = set()
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                children.add(int(entry))
        except (OSError, IndexError):
            pass  # gone meanwhile
    return children


@pytest.mark.parametrize("factory", [space_envs.hanging_constructor, space_envs.hanging_first_reset],
                         ids=["constructor", "reset"])
def test_a_game_whose_spaces_probe_hangs_is_a_timeout_naming_the_game_from_the_constructor(factory):
    before = child_pids()
    pattern = (rf"^game 'py:{factory.__name__}': the environment made to read its spaces did not finish its "
               r"construction and first reset within step_timeout_s = 0.5 s$")
    with pytest.raises(elfpy.GameError, match=pattern):
        elfpy.GameContext(factory, num_games=2, num_workers=2, step_timeout_s=0.5)
    assert child_pids() == before  # the probe's process is gone (killed and reaped)


def test_with_step_timeout_s_the_spaces_probe_runs_elsewhere_and_its_errors_still_name_the_game():
    gc = hosted(space_envs.multi_discrete, step_timeout_s=30)
    assert gc.spec()["a"].space == space_envs.MULTI_DISCRETE
    gc.stop()
    with pytest.raises(ValueError, match=r"^game '.*box.*': box\(\) got an unexpected keyword argument 'size'"):
        elfpy.GameContext(space_envs.box, num_games=1, step_timeout_s=30, size=3)


def test_the_sb3_adapter_hands_each_env_its_own_dict_terminal_observation():
    venv = make_sb3_vec_env(space_envs.TwoStepDictEnv, num_envs=2, seed=0)
    observation = venv.reset()
    assert set(observation) == {"pos", "t"} and observation["pos"].shape == (2, 2)
    for _ in range(2):
        venv.step_async(np.zeros(2, np.int64))
        observation, _, dones, infos = venv.step_wait()
    venv.close()
    assert dones.all() and np.all(observation["t"] == 0)  # already the next episode
    for info in infos:
        final = info["terminal_observation"]
        assert final["t"] == 2
        np.testing.assert_array_equal(final["pos"], [2.0, -2.0])
