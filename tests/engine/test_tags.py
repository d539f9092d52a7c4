"""Tags: batch sizes and shapes, specs, timeouts, buffers and T > 1 windows.

Most checks use the `counter` test game: its `count` key is the game's total
step count, its reward of the k-th step of an episode is k * (a + 1), and its
s[1] is the step within the episode, so every row can be checked exactly.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import defaultdict

import numpy as np
import pytest

import elfpy

from .helpers import add_policy_keys

# --- shapes and specs -----------------------------------------------------------


def test_actor_batch_has_batch_size_rows_shaped_by_the_spec():
    gc = elfpy.GameContext("cartpole", num_games=8, num_threads=2, seed=0)
    inputs = ["s", "r", "terminal", "truncated", "episode_return", "episode_length"]
    gc.add_tag("actor", batch_size=4, inputs=inputs, replies=["a"])
    spec = gc.spec("actor")
    with gc:
        for i, batch in enumerate(gc):
            assert batch.tag == "actor" and len(batch) == 4
            assert sorted(batch) == sorted(inputs)
            for key in inputs:
                assert batch[key].shape == (4, *spec[key].shape), key
                assert batch[key].dtype == spec[key].dtype, key
            assert batch.game_ids.shape == (4,) and len(set(batch.game_ids.tolist())) == 4
            assert set(batch.game_ids.tolist()) <= set(range(8))
            np.testing.assert_array_equal(batch.seats, 0)
            batch.reply({"a": np.ones(4, dtype=np.int64)})
            if i == 5:
                break


def test_train_batch_is_time_major_T_by_batch():
    gc = elfpy.GameContext("cartpole", num_games=8, num_threads=2, seed=0)
    add_policy_keys(gc)
    gc.add_tag("actor", batch_size=8, inputs=["s"], replies=["a", "pi", "V"])
    inputs = ["s", "a", "pi", "V", "r", "terminal"]
    gc.add_tag("train", batch_size=8, T=3, inputs=inputs)
    spec = gc.spec("train")
    with gc:
        for batch in gc:
            if batch.tag == "actor":
                n = len(batch)
                batch.reply(
                    {"a": np.zeros(n, np.int64), "pi": np.full((n, 2), 0.5, np.float32), "V": np.zeros(n, np.float32)}
                )
                continue
            assert len(batch) == 8
            assert batch["s"].shape == (3, 8, 4)
            assert batch["pi"].shape == (3, 8, 2)
            for key in inputs:
                assert batch[key].shape == (3, 8, *spec[key].shape), key
                assert batch[key].dtype == spec[key].dtype, key
            assert batch.game_ids.shape == (8,)
            # Values: the replies the actor gave, and each column one game's steps in time order
            # (CartPole's Euler step x_{t+1} = x_t + 0.02 x_dot_t, unless the episode ended at t+1).
            assert (batch["a"] == 0).all() and (batch["pi"] == 0.5).all() and (batch["V"] == 0).all()
            assert (batch["r"][1:] == 1).all()
            s, ended = batch["s"], batch["terminal"]
            assert not ended[1:].all()
            np.testing.assert_allclose(s[1:, :, 0][~ended[1:]], (s[:-1, :, 0] + 0.02 * s[:-1, :, 1])[~ended[1:]],
                                       rtol=1e-5, atol=1e-6)
            break


def test_spec_before_start_gives_dtype_shape_and_meaning_of_each_key():
    gc = elfpy.GameContext("cartpole", num_games=2)
    add_policy_keys(gc)
    gc.add_tag("actor", batch_size=2, inputs=["s", "r", "terminal"], replies=["a", "V"])
    spec = gc.spec("actor")
    assert sorted(spec) == ["V", "a", "r", "s", "terminal"]
    expected = {
        "s": (np.float32, (4,)),
        "r": (np.float32, ()),
        "terminal": (np.bool_, ()),
        "a": (np.int64, ()),
        "V": (np.float32, ()),
    }
    for key, (dtype, shape) in expected.items():
        assert spec[key].dtype == np.dtype(dtype), key
        assert spec[key].shape == shape, key
        assert isinstance(spec[key].meaning, str) and spec[key].meaning.strip(), key
    assert "pole" in spec["s"].meaning
    assert spec["a"].bounds == (0, 1)
    everything = gc.spec()
    assert {"s", "a", "r", "terminal", "truncated", "episode_return", "episode_length", "pi", "V"} <= set(everything)
    assert everything["pi"].shape == (2,)  # one probability per CartPole action


def test_extra_reply_key_is_declared_with_its_spec_and_comes_back_in_windows():
    gc = elfpy.GameContext("counter", num_games=4, num_threads=2, seed=0)
    gc.add_key("h", "float32", (3,), "a recurrent state")
    gc.add_tag("actor", batch_size=4, inputs=["count"], replies=["a", "h"])
    gc.add_tag("train", batch_size=4, T=3, inputs=["count", "h"])
    assert gc.spec("train")["h"].shape == (3,) and gc.spec("train")["h"].meaning == "a recurrent state"
    with gc:
        for batch in gc:
            if batch.tag == "actor":
                h = np.repeat(batch["count"].astype(np.float32)[:, None], 3, axis=1) + batch.game_ids[:, None] * 100
                batch.reply({"a": np.zeros(len(batch), np.int64), "h": h})
                continue
            expected = batch["count"].astype(np.float32) + batch.game_ids[None, :] * 100
            np.testing.assert_array_equal(batch["h"], np.repeat(expected[:, :, None], 3, axis=2))
            break


# --- timeouts -------------------------------------------------------------------


def hold_actor_batch_after(gc: elfpy.GameContext, steps: int):
    """Replies the first `steps` actor batches (8 games, batch 8) from a loop
    over batches and returns the next one unreplied: every game now waits
    for it, so no more rows reach any tag until it is replied."""
    batches = iter(gc)
    for step in range(steps):
        batch = next(batches)
        assert batch.tag == "actor"
        np.testing.assert_array_equal(batch["count"], step)
        batch.reply({"a": np.zeros(8, np.int64)})
    held = next(batches)
    assert held.tag == "actor"
    return held


@pytest.mark.timeout(60)
def test_timeout_delivers_partial_batch_of_the_rows_that_came():
    # 8 games step 5 times, then wait for a held actor batch: the train tags
    # hold 40 rows and 16 windows of their 64 and deliver them at the timeout.
    gc = elfpy.GameContext("counter", num_games=8, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=8, inputs=["count"], replies=["a"])
    gc.add_tag("train", batch_size=64, inputs=["count"], timeout_ms=300, min_batch=40)
    gc.add_tag("windows", batch_size=64, T=3, inputs=["count"], timeout_ms=300, min_batch=16)
    delivered = {}

    def keep(batch):
        delivered[batch.tag] = (batch.game_ids.copy(), batch["count"].copy())

    gc.reg_callback("train", keep)
    gc.reg_callback("windows", keep)
    with gc:
        hold_actor_batch_after(gc, steps=5)
        gc.run()
        gc.run()
    game_ids, count = delivered["train"]
    assert count.shape == (40,)
    assert sorted(zip(game_ids.tolist(), count.tolist(), strict=True)) == [(g, c) for g in range(8) for c in range(5)]
    game_ids, count = delivered["windows"]
    assert count.shape == (3, 16)
    assert sorted((g, tuple(w)) for g, w in zip(game_ids.tolist(), count.T.tolist(), strict=True)) == [
        (g, w) for g in range(8) for w in [(0, 1, 2), (2, 3, 4)]
    ]


@pytest.mark.timeout(60)
def test_timed_out_batch_is_delivered_while_other_tags_keep_batches_ready():
    # The train tag times out after 5 ms; Python sleeps 10 ms between run()
    # calls, so an actor batch is always ready when run() is called. The
    # partial train batch must still come long before it could fill (64 steps).
    gc = elfpy.GameContext("counter", num_games=64, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=64, inputs=["count"], replies=["a"])
    gc.add_tag("train", batch_size=4096, inputs=["count"], timeout_ms=5, min_batch=64)
    sizes = []
    gc.reg_callback("actor", lambda batch: {"a": np.zeros(len(batch), np.int64)})
    gc.reg_callback("train", lambda batch: sizes.append(len(batch)))
    steps = 0
    with gc:
        while not sizes and steps < 20:
            steps += gc.run() == "actor"
            time.sleep(0.01)
    assert sizes, f"no train batch after {steps} actor steps, each over twice its timeout"
    assert 64 <= sizes[0] < 4096


@pytest.mark.timeout(60)
def test_reply_tag_with_more_batch_than_games_delivers_them_all_given_a_timeout():
    gc = elfpy.GameContext("counter", num_games=4, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=8, inputs=["count"], replies=["a"], timeout_ms=1000)
    sizes = []
    with gc:
        for i, batch in enumerate(gc):
            sizes.append(len(batch))
            assert sorted(batch.game_ids.tolist()) == [0, 1, 2, 3]
            np.testing.assert_array_equal(batch["count"], i)
            batch.reply({"a": np.zeros(len(batch), np.int64)})
            if i == 4:
                break
    assert sizes == [4] * 5


# --- tags without replies, buffers --------------------------------------------------


@pytest.mark.timeout(60)
def test_tag_without_replies_does_not_hold_games_back():
    # Train tags whose batches can not fill for hundreds of steps: the games
    # must still step, and the actor see every step.
    gc = elfpy.GameContext("counter", num_games=8, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=8, inputs=["count"], replies=["a"])
    gc.add_tag("train", batch_size=5000, inputs=["count", "r"])
    gc.add_tag("train_windows", batch_size=1000, T=6, inputs=["count", "r"])
    with gc:
        for step, batch in enumerate(gc):
            assert batch.tag == "actor"
            np.testing.assert_array_equal(batch["count"], step)
            batch.reply({"a": np.zeros(8, np.int64)})
            if step == 100:
                break


@pytest.mark.timeout(60)
def test_games_keep_stepping_while_python_holds_a_batch():
    gc = elfpy.GameContext("counter", num_games=8, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=8, inputs=["count"], replies=["a"])
    gc.add_tag("train", batch_size=8, inputs=["count"])
    actor_buffers = []  # a `count` view of every actor buffer seen
    with gc:
        for batch in gc:
            if batch.tag == "actor":
                if not any(np.shares_memory(batch["count"], seen) for seen in actor_buffers):
                    actor_buffers.append(batch["count"])
                batch.reply({"a": np.zeros(8, np.int64)})
                continue
            step = int(batch["count"][0])
            if step < 3:
                continue
            # Hold this train batch: the games go on and write their next
            # step into an actor buffer meanwhile.
            held = batch["count"]
            np.testing.assert_array_equal(held, step)
            # However long a loaded machine takes: if no game steps, the test's
            # timeout fails it.
            while not any((view == step + 1).all() for view in actor_buffers):
                time.sleep(0.001)
            np.testing.assert_array_equal(held, step)  # the held batch is not overwritten
            break


# --- T > 1 windows -------------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("T", [2, 3, 8])
def test_windows_of_a_game_tile_its_steps_for_any_T(T):
    gc = elfpy.GameContext("counter", num_games=5, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=5, inputs=["count"], replies=["a"])
    gc.add_tag("train", batch_size=3, T=T, inputs=["count"])
    starts = defaultdict(list)
    with gc:
        for batch in gc:
            if batch.tag == "actor":
                batch.reply({"a": np.zeros(5, np.int64)})
                continue
            assert batch["count"].shape == (T, 3)
            for b, game in enumerate(batch.game_ids.tolist()):
                window = batch["count"][:, b]
                np.testing.assert_array_equal(window, window[0] + np.arange(T))
                starts[game].append(int(window[0]))
            if len(starts) == 5 and min(len(v) for v in starts.values()) >= 4:
                break
    for game, firsts in starts.items():
        assert sorted(firsts) == [k * (T - 1) for k in range(len(firsts))], (game, firsts)


WINDOW_T = 5
WINDOW_GAMES = 6
WINDOW_KEYS = [
    "s",
    "final_s",
    "count",
    "a",
    "pi",
    "V",
    "r",
    "terminal",
    "truncated",
    "episode_return",
    "episode_length",
]


def actor_reply(game_ids: np.ndarray, count: np.ndarray) -> dict:
    """Replies that encode (game, step), so windows can be checked row by row."""
    g = game_ids.astype(np.int64)
    c = count.astype(np.int64)
    a = (g + c) % 3
    pi = (g * 1000 + c * 10)[..., None] + np.arange(3)
    V = g * 1000 + c + 0.5
    return {"a": a, "pi": pi.astype(np.float32), "V": V.astype(np.float32)}


@pytest.fixture(scope="module")
def windows():
    """Plays 6 counter games (actor batches of 3) until every game has sent at
    least 12 windows of T = 5; returns each game's windows sorted by step and
    what the actor saw and replied per (game, count)."""
    gc = elfpy.GameContext("counter", num_games=WINDOW_GAMES, num_threads=2, seed=7)
    add_policy_keys(gc)
    gc.add_tag("actor", batch_size=3, inputs=["s", "count"], replies=["a", "pi", "V"])
    gc.add_tag("train", batch_size=WINDOW_GAMES, T=WINDOW_T, inputs=WINDOW_KEYS)
    actor_rows = {}  # (game, count) -> (episode step, action)
    per_game = defaultdict(list)

    def actor(batch):
        replies = actor_reply(batch.game_ids, batch["count"])
        for g, c, s, a in zip(
            batch.game_ids.tolist(),
            batch["count"].tolist(),
            batch["s"][:, 1].tolist(),
            replies["a"].tolist(),
            strict=True,
        ):
            actor_rows[(g, c)] = (int(s), a)
        return replies

    def train(batch):
        assert len(batch) == WINDOW_GAMES
        for b, game in enumerate(batch.game_ids.tolist()):
            per_game[game].append({key: batch[key][:, b].copy() for key in WINDOW_KEYS})

    gc.reg_callback("actor", actor)
    gc.reg_callback("train", train)
    with gc:
        while len(per_game) < WINDOW_GAMES or min(len(w) for w in per_game.values()) < 12:
            gc.run()
    for game in per_game:
        per_game[game].sort(key=lambda w: int(w["count"][0]))
    return per_game, actor_rows


def test_windows_hold_the_a_pi_and_V_the_actor_replied(windows):
    per_game, _ = windows
    for game, game_windows in per_game.items():
        for window in game_windows:
            expected = actor_reply(np.full(WINDOW_T, game), window["count"])
            for key in ("a", "pi", "V"):
                np.testing.assert_array_equal(window[key], expected[key], err_msg=f"game {game}, key {key}")


def test_consecutive_windows_of_a_game_overlap_by_exactly_one_step(windows):
    per_game, _ = windows
    for game, game_windows in per_game.items():
        for k, window in enumerate(game_windows):
            steps = k * (WINDOW_T - 1) + np.arange(WINDOW_T)
            np.testing.assert_array_equal(window["count"], steps, err_msg=f"game {game}, window {k}")
        for before, after in itertools.pairwise(game_windows):
            for key in WINDOW_KEYS:
                np.testing.assert_array_equal(before[key][-1], after[key][0], err_msg=f"game {game}, key {key}")


def rows_of(game_windows: list[dict]) -> dict:
    """A game's rows in step order, from its overlapping windows."""
    return {key: np.concatenate([game_windows[0][key]] + [w[key][1:] for w in game_windows[1:]]) for key in WINDOW_KEYS}


def true_episodes(actor_rows: dict, game: int, last_count: int) -> list[tuple[int, int, float]]:
    """(first count, length, return) of each finished episode of a game, from
    what the actor saw (s[1] is the step in the episode) and replied: the k-th
    step of an episode earns k * (a + 1)."""
    starts = [c for c in range(last_count + 1) if actor_rows[(game, c)][0] == 0]
    episodes = []
    for start, end in itertools.pairwise(starts):
        length = end - start
        episode_return = sum(k * (actor_rows[(game, start + k - 1)][1] + 1) for k in range(1, length + 1))
        episodes.append((start, length, float(episode_return)))
    return episodes


def test_episode_returns_rebuilt_from_train_windows_equal_the_true_returns(windows):
    per_game, actor_rows = windows
    for game, game_windows in per_game.items():
        rows = rows_of(game_windows)
        np.testing.assert_array_equal(rows["count"], np.arange(len(rows["count"])))
        expected = true_episodes(actor_rows, game, int(rows["count"][-1]))
        assert len(expected) >= 5, (game, expected)
        # An episode runs from its first row (step 0, or the previous terminal
        # row) to its terminal row; its return is the sum of r after its first row.
        ends = np.flatnonzero(rows["terminal"])
        starts = np.concatenate([[0], ends[:-1]])
        rebuilt = [
            (int(start), int(end - start), float(rows["r"][start + 1 : end + 1].sum()))
            for start, end in zip(starts, ends, strict=True)
        ]
        assert rebuilt == expected[: len(rebuilt)], game
        assert len(rebuilt) >= len(expected) - 1
        # The engine's own statistics on terminal rows agree.
        np.testing.assert_array_equal(rows["episode_return"][ends], [e[2] for e in rebuilt])
        np.testing.assert_array_equal(rows["episode_length"][ends], [e[1] for e in rebuilt])
        assert not rows["truncated"].any()


def test_each_counter_game_keeps_one_episode_length(windows):
    per_game, actor_rows = windows
    for game, game_windows in per_game.items():
        rows = rows_of(game_windows)
        lengths = {e[1] for e in true_episodes(actor_rows, game, int(rows["count"][-1]))}
        assert len(lengths) == 1 and lengths <= {5, 6, 7}, (game, lengths)


def test_rows_follow_the_step_semantics(windows):
    per_game, _ = windows
    for _game, game_windows in per_game.items():
        rows = rows_of(game_windows)
        # The first row: no reward, not terminal, step 0 of the first episode.
        assert rows["r"][0] == 0 and not rows["terminal"][0] and rows["s"][0, 1] == 0
        # A terminal row already shows the next episode's first state, and in
        # final_s the state the episode ended in: its last step, same draw.
        terminal = rows["terminal"]
        np.testing.assert_array_equal(rows["s"][terminal, 1], 0)
        np.testing.assert_array_equal(rows["final_s"][terminal, 1], rows["s"][:-1][terminal[1:], 1] + 1)
        np.testing.assert_array_equal(rows["final_s"][terminal, 0], rows["s"][:-1][terminal[1:], 0])
        # Reward of the k-th step of an episode is k * (a + 1), a from the previous row.
        step_in_episode = np.where(rows["terminal"][1:], rows["s"][:-1, 1] + 1, rows["s"][1:, 1])
        np.testing.assert_array_equal(rows["r"][1:], step_in_episode * (rows["a"][:-1] + 1))
        # Length so far: on every row but a terminal one, the step in the episode.
        ongoing = ~rows["terminal"]
        np.testing.assert_array_equal(rows["episode_length"][ongoing], rows["s"][ongoing, 1])


# --- every row once, in order -----------------------------------------------------


def random_configuration(seed: int) -> dict:
    """A seeded random mix of games, threads, batch sizes, T and timeouts."""
    rng = random.Random(seed)
    num_games = rng.randint(1, 48)
    trains = []
    for k in range(rng.randint(1, 3)):
        batch_size = rng.randint(1, 3 * num_games)
        timeout_ms = rng.choice([None, 0, 1, 3])
        trains.append(
            dict(
                name=f"train{k}",
                T=rng.choice([1, 2, 3, 6]),
                batch_size=batch_size,
                timeout_ms=timeout_ms,
                min_batch=rng.randint(1, batch_size),
            )
        )
    return dict(
        num_games=num_games,
        num_threads=rng.randint(1, 4),
        actor_batch=rng.randint(1, num_games),
        actor_timeout_ms=rng.choice([None, 1]),
        trains=trains,
        runs=rng.randint(100, 300),
    )


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(8))
def test_every_row_reaches_every_tag_once_and_in_order(seed):
    config = random_configuration(seed)
    gc = elfpy.GameContext("counter", num_games=config["num_games"], num_threads=config["num_threads"], seed=seed)
    actor_timeout = config["actor_timeout_ms"]
    gc.add_tag("actor", batch_size=config["actor_batch"], inputs=["count"], replies=["a"], timeout_ms=actor_timeout)
    for train in config["trains"]:
        gc.add_tag(
            train["name"],
            batch_size=train["batch_size"],
            T=train["T"],
            inputs=["count"],
            timeout_ms=train["timeout_ms"],
            min_batch=train["min_batch"],
        )
    starts = defaultdict(list)  # (tag, game) -> first count of each row or window

    def actor(batch):
        assert len(batch) <= config["actor_batch"]
        for game, count in zip(batch.game_ids.tolist(), batch["count"].tolist(), strict=True):
            starts[("actor", game)].append(count)
        return {"a": np.zeros(len(batch), np.int64)}

    def train_callback(train):
        def callback(batch):
            if train["timeout_ms"] is None:
                assert len(batch) == train["batch_size"]
            else:
                assert train["min_batch"] <= len(batch) <= train["batch_size"]
            counts = batch["count"] if train["T"] > 1 else batch["count"][None]
            assert counts.shape == (train["T"], len(batch))
            np.testing.assert_array_equal(np.diff(counts, axis=0), 1)
            for game, first in zip(batch.game_ids.tolist(), counts[0].tolist(), strict=True):
                starts[(train["name"], game)].append(first)

        return callback

    gc.reg_callback("actor", actor)
    for train in config["trains"]:
        gc.reg_callback(train["name"], train_callback(train))
    # Until every game has acted too (a game that never does hangs the test): that is liveness, not a
    # count of batches. On a loaded machine a worker holding some games' first step can wait for a CPU
    # through all `runs` batches while the caller steps the others (first come, first served), as it
    # did once beside the whole suite.
    acted = set()
    with gc:
        runs = 0
        while runs < config["runs"] or len(acted) < config["num_games"]:
            gc.run()
            runs += 1
            acted = {game for tag, game in starts if tag == "actor"}
    strides = {"actor": 1, **{t["name"]: max(1, t["T"] - 1) for t in config["trains"]}}
    for (tag, game), firsts in starts.items():
        stride = strides[tag]
        assert sorted(firsts) == list(range(0, stride * len(firsts), stride)), (config, tag, game)
