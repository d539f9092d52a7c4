"""envpool's environments as the engine's games ("envpool:<task>"): the
batches hold exactly what envpool alone returns for the same seed and
actions (observations, rewards, ends, the observation an episode ended in,
the next episode's first); the engine's tags, [T, B] windows, determinism
and reply checks work as for native games; an envpool error is a GameError
naming the game; stop() returns in every state and leaves no thread.

None of these asserts how long anything took: a hang fails by pytest-timeout.
"""

from __future__ import annotations

import threading

import envpool
import numpy as np
import pytest

import elfpy

pytestmark = [
    pytest.mark.timeout(60, method="thread"),  # a hang may be inside C++, out of reach of signals
    # envpool's own Gymnasium spaces (the reference below) cast its float64 bounds to float32 at every reset
    pytest.mark.filterwarnings("ignore:.*Box (low|high)'s precision lowered:UserWarning"),
]

ROW_KEYS = ["s", "r", "terminal", "truncated", "episode_return", "episode_length", "final_s"]


class EnvpoolAlone:
    """envpool stepped directly, with the engine's auto-reset: an environment
    whose step ended its episode is stepped once more at once (envpool then
    resets it), its last observation kept as the final one."""

    def __init__(self, task: str, num_envs: int, seed: int, **options) -> None:
        self.pool = envpool.make(task, env_type="gymnasium", num_envs=num_envs, batch_size=num_envs, seed=seed,
                                 **options)
        self.observation, _ = self.pool.reset()
        self.final = np.zeros_like(self.observation)
        self.episode_return = np.zeros(num_envs, np.float32)
        self.episode_length = np.zeros(num_envs, np.int32)

    def step(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        observation, reward, terminated, truncated, _ = self.pool.step(actions)
        over = terminated | truncated
        self.episode_return += reward
        self.episode_length += 1
        row = {"r": reward, "terminal": over, "truncated": truncated, "episode_return": self.episode_return.copy(),
               "episode_length": self.episode_length.copy()}
        ended = np.flatnonzero(over).astype(np.int32)
        if len(ended):
            self.final[ended] = observation[ended]
            observation[ended], *_ = self.pool.step(actions[ended], ended)
            self.episode_return[ended] = 0
            self.episode_length[ended] = 0
        self.observation = observation
        return {**row, "s": observation, "final_s": self.final}


def actor_context(task: str, num_games: int, batch: int, seed: int = 0, **kwargs) -> elfpy.GameContext:
    gc = elfpy.GameContext(task, num_games=num_games, seed=seed, **kwargs)
    gc.add_tag("actor", batch_size=batch, inputs=ROW_KEYS, replies=["a"])
    return gc


def assert_rows_equal(batch, expected: dict[str, np.ndarray], step: int) -> None:
    games = batch.game_ids
    for key in ROW_KEYS:
        if key == "final_s":  # meaningful on terminal rows only
            rows = batch["terminal"]
            np.testing.assert_array_equal(batch[key][rows], expected[key][games][rows], err_msg=f"{key}, step {step}")
        else:
            np.testing.assert_array_equal(batch[key], expected[key][games], err_msg=f"{key}, step {step}")


@pytest.mark.parametrize(("task", "options", "steps"), [
    ("Pong-v5", {"max_episode_steps": 40}, 130),  # frames as envpool makes them; episodes cut by its time limit
    ("CartPole-v1", {}, 300),  # episodes that terminate every few dozen random steps
])
def test_batches_hold_what_envpool_alone_returns(task, options, steps):
    num_games, seed = 4, 11
    alone = EnvpoolAlone(task, num_games, seed, **options)
    gc = actor_context(f"envpool:{task}", num_games, num_games, seed=seed, **options)
    actions_space = gc.spec()["a"].space
    rng = np.random.default_rng(0)
    expected = {"s": alone.observation, "final_s": alone.final, "r": np.zeros(num_games, np.float32),
                "terminal": np.zeros(num_games, bool), "truncated": np.zeros(num_games, bool),
                "episode_return": np.zeros(num_games, np.float32), "episode_length": np.zeros(num_games, np.int32)}
    ends = 0
    gc.start()
    try:
        for step, batch in enumerate(gc):
            assert sorted(batch.game_ids) == list(range(num_games))
            assert_rows_equal(batch, expected, step)
            ends += int(batch["terminal"].sum())
            if step == steps:
                break
            actions = rng.integers(0, actions_space.n, num_games)
            batch.reply({"a": actions[batch.game_ids]})
            expected = alone.step(actions)
    finally:
        gc.stop()
    assert ends >= num_games  # every game ended an episode at least once


def test_deterministic_batches_depend_on_the_seed_only():
    def run(seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
        gc = actor_context("envpool:CartPole-v1", 16, 4, seed=seed, deterministic=True, num_workers=2)
        seen = []
        with gc:
            for index, batch in enumerate(gc):
                seen.append((batch.game_ids.copy(), batch["s"].copy()))
                if index == 60:
                    break
                # replies from the observations, so a different batch changes the run
                batch.reply({"a": (batch["s"][:, 2] > 0).astype(np.int64)})
        return seen

    first, again, other = run(3), run(3), run(4)
    for (ids, s), (ids_again, s_again) in zip(first, again, strict=True):
        np.testing.assert_array_equal(ids, ids_again)
        np.testing.assert_array_equal(s, s_again)
    assert any(not np.array_equal(s, s_other) for (_, s), (_, s_other) in zip(first, other, strict=True))


def test_train_windows_are_consecutive_rows_of_the_actor_batches():
    T = 5
    gc = actor_context("envpool:CartPole-v1", 8, 4, seed=1)
    gc.add_tag("train", batch_size=4, inputs=["s", "a", "terminal"], T=T)
    rows: dict[tuple[int, int], np.ndarray] = {}  # (game, step of the game) -> s, from the actor
    steps = np.zeros(8, int)
    windows = []
    rng = np.random.default_rng(0)
    with gc:
        for batch in gc:
            if batch.tag == "actor":
                for row, game in enumerate(batch.game_ids):
                    rows[game, steps[game]] = batch["s"][row].copy()
                    steps[game] += 1
                batch.reply({"a": rng.integers(0, 2, len(batch))})
            else:
                assert batch["s"].shape == (T, 4, 4) and batch["a"].shape == (T, 4)
                windows.append((batch.game_ids.copy(), batch["s"].copy()))
                if len(windows) == 12:
                    break
    starts: dict[int, int] = {}  # a game's windows overlap by one row
    for game_ids, s in windows:
        for column, game in enumerate(game_ids):
            start = starts.get(game, 0)
            for t in range(T):
                np.testing.assert_array_equal(s[t, column], rows[game, start + t])
            starts[game] = start + T - 1


def test_a_reply_outside_the_action_space_is_refused_before_any_game_steps():
    gc = actor_context("envpool:Pong-v5", 4, 4)
    board = gc._source._host.board
    with gc:
        batch = next(iter(gc))
        with pytest.raises(ValueError, match="'a'.*6"):
            batch.reply({"a": np.array([0, 1, 6, 2])})
        assert [board.requests(game) for game in range(4)] == [1, 1, 1, 1]  # the first resets only


def serving_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("elfpy envpool:")]


@pytest.mark.parametrize("state", ["created", "started", "batch held", "batch replied", "stopped twice"])
def test_stop_returns_in_every_state_and_joins_the_serving_thread(state):
    gc = actor_context("envpool:CartPole-v1", 8, 4)
    host = gc._source._host
    if state != "created":
        gc.start()
    if state in ("batch held", "batch replied"):
        batch = next(iter(gc))
        if state == "batch replied":
            batch.reply({"a": np.zeros(len(batch), np.int64)})
    gc.stop()
    if state == "stopped twice":
        gc.stop()
    assert host._pool is None
    assert serving_threads() == []


def test_an_envpool_error_is_a_game_error_naming_the_game():
    gc = actor_context("envpool:CartPole-v1", 8, 8)
    host = gc._source._host

    def broken_recv(*args, **kwargs):
        raise RuntimeError("the emulator broke")

    with gc:
        batch = next(iter(gc))
        host._pool.recv = broken_recv
        batch.reply({"a": np.zeros(8, np.int64)})
        with pytest.raises(elfpy.GameError, match=r"game \d+ \('envpool:CartPole-v1'\).*the emulator broke"):
            next(iter(gc))
        assert serving_threads() == []  # a GameError releases the source at once


def test_a_non_finite_reward_from_envpool_is_a_game_error_naming_game_seat_and_key():
    gc = actor_context("envpool:CartPole-v1", 8, 8)
    host = gc._source._host
    recv = host._pool.recv

    def nan_reward_recv(*args, **kwargs):
        observation, reward, terminated, truncated, info = recv(*args, **kwargs)
        return observation, np.full_like(reward, np.nan), terminated, truncated, info

    with gc:
        batch = next(iter(gc))
        host._pool.recv = nan_reward_recv
        batch.reply({"a": np.zeros(8, np.int64)})
        with pytest.raises(elfpy.GameError, match=r"game \d+ \('envpool:CartPole-v1'\): seat 0's reward \(key 'r'\) "
                                                  r"is nan at step 1"):
            next(iter(gc))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"game": "envpool:NoSuchGame-v5"}, "envpool has no task 'NoSuchGame-v5'"),
    ({"no_such_option": 1}, "no_such_option"),
    ({"preset": "atari"}, "preset: only for Python-hosted games"),
    ({"step_timeout_s": -1}, "step_timeout_s must be a positive"),
])
def test_bad_settings_are_one_clear_error(kwargs, message):
    game = kwargs.pop("game", "envpool:CartPole-v1")
    with pytest.raises(ValueError, match=message):
        elfpy.GameContext(game, num_games=2, **kwargs)
    assert serving_threads() == []


def test_rlpytorch_trains_on_an_envpool_game_with_its_workers_and_literal_options(tmp_path):
    import rlpytorch

    result = rlpytorch.train(rlpytorch.config(
        game="envpool:CartPole-v1", num_workers=1, game_options="max_episode_steps=20", num_games=8, actor_batch=8,
        train_batch=8, num_frames=400, eval_at_end=False, progress=False, save_dir=str(tmp_path / "r")))
    assert result.summary.frames >= 400
    assert result.config.num_workers == 1
    # episodes cut at 20 steps by the option, passed to envpool as the integer 20
    assert 0 < result.summary.mean_return <= 20
