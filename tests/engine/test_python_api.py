"""The Python face: games(), the context manager, iteration, callbacks,
zero-copy batches and replies from numpy or torch."""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym
import numpy as np
import pytest
import torch

import elfpy

from .helpers import os_threads


def counter_context(num_games: int = 4, batch_size: int = 4) -> elfpy.GameContext:
    gc = elfpy.GameContext("counter", num_games=num_games, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=batch_size, inputs=["s", "count", "r"], replies=["a"])
    return gc


def test_games_lists_the_registered_native_games():
    assert {"cartpole", "counter", "duel"} <= set(elfpy.games())
    assert elfpy.GameContext.games() == elfpy.games()


def test_game_options_give_name_default_and_help():
    options = {name: (default, text) for name, default, text in elfpy.GameContext.game_options("cartpole")}
    assert options["max_steps"][0] == "500" and options["max_steps"][1]
    names = {name for name, _, _ in elfpy.GameContext.game_options("counter")}
    assert names == {"episode_length", "fail_at_step", "nonfinite_at_step", "nonfinite_key", "num_actions",
                     "step_cpu_ns"}


def test_game_options_change_the_spec():
    gc = elfpy.GameContext("counter", num_games=1, num_actions=5)
    assert gc.spec()["a"].bounds == (0, 4)
    assert gc.spec()["a"].space == gym.spaces.Discrete(5)


def test_spec_roles_say_who_writes_each_key():
    spec = elfpy.GameContext("cartpole", num_games=1).spec()
    assert spec["s"].role == "observation"
    assert spec["a"].role == "action"
    assert spec["r"].role == "engine" and spec["terminal"].role == "engine"
    assert "pi" not in spec and "V" not in spec  # declared by whoever replies them (add_key)
    assert {k for k, v in spec.items() if v.role == "engine"} == {
        "r", "terminal", "truncated", "episode_return", "episode_length", "final_s"}


@pytest.mark.timeout(60)
def test_context_manager_starts_and_stops():
    before = os_threads()
    gc = counter_context()
    gc.reg_callback("actor", lambda b: {"a": np.zeros(len(b), np.int64)})
    with gc as entered:
        assert entered is gc
        assert gc.run() == "actor"
        assert os_threads() == before + 2
    assert os_threads() == before
    with pytest.raises(RuntimeError, match="stopped"):
        gc.run()


@pytest.mark.timeout(60)
def test_context_manager_stops_when_the_block_raises():
    before = os_threads()
    with pytest.raises(ZeroDivisionError):
        with counter_context():
            raise ZeroDivisionError
    assert os_threads() == before


@pytest.mark.timeout(60)
def test_iteration_yields_batches_to_reply_to():
    gc = elfpy.GameContext("duel", num_games=3, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=6, inputs=["s", "r"], replies=["a"])
    with gc:
        for i, batch in enumerate(gc):
            assert isinstance(batch, Mapping) and set(batch) == {"s", "r"}
            assert batch.tag == "actor" and len(batch) == 6
            assert sorted(zip(batch.game_ids.tolist(), batch.seats.tolist(), strict=True)) == [
                (g, s) for g in range(3) for s in range(2)
            ]
            np.testing.assert_array_equal(batch["s"][:, 2], i)  # the round
            batch.reply({"a": np.zeros(6, np.int64)})
            if i == 3:
                break


@pytest.mark.timeout(60)
def test_run_calls_each_tags_callback_and_returns_the_tag():
    gc = counter_context(num_games=4, batch_size=2)
    gc.add_tag("train", batch_size=4, T=3, inputs=["count"])
    calls = {"actor": 0, "train": 0}

    def actor(batch):
        calls["actor"] += 1
        return {"a": np.zeros(len(batch), np.int64)}

    def train(batch):
        calls["train"] += 1
        assert batch.tag == "train" and batch["count"].shape == (3, 4)

    gc.reg_callback("actor", actor)
    gc.reg_callback("train", train)
    returned = {"actor": 0, "train": 0}
    with gc:
        for _ in range(30):
            returned[gc.run()] += 1
    assert returned == calls and calls["train"] > 0


@pytest.mark.timeout(60)
def test_batch_arrays_are_zero_copy_views_of_the_engine_buffers():
    # 4 games, batch 4: consecutive batches alternate between buffers.
    gc = counter_context()
    kept = []
    with gc:
        for i, batch in enumerate(gc):
            kept.append(batch["count"])
            assert not batch["count"].flags.owndata
            batch.reply({"a": np.zeros(4, np.int64)})
            if i == 5:
                break
    buffers = []
    for view in kept:
        if not any(np.shares_memory(view, other) for other in buffers):
            buffers.append(view)
    assert len(buffers) >= 2, "a tag needs at least two buffers"
    assert not np.shares_memory(kept[0], kept[1]), "consecutive batches of a tag share a buffer"
    assert any(np.shares_memory(kept[0], later) for later in kept[2:]), "buffers are not reused: a copy was made"


@pytest.mark.timeout(60)
def test_torch_from_numpy_on_a_batch_shares_its_memory():
    gc = counter_context()
    with gc:
        batches = iter(gc)
        batch = next(batches)
        tensor = torch.from_numpy(batch["s"])
        assert tensor.data_ptr() == batch["s"].ctypes.data
        # The engine's next write into this buffer shows through the tensor.
        view, step = batch["count"], int(batch["count"][0])
        count_tensor = torch.from_numpy(view)
        batch.reply({"a": np.zeros(4, np.int64)})
        for batch in batches:
            batch.reply({"a": np.zeros(4, np.int64)})
            if np.shares_memory(batch["count"], view):
                break
        assert int(count_tensor[0]) > step
        np.testing.assert_array_equal(count_tensor.numpy(), batch["count"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["numpy", "torch", "list", "int32", "strided", "big_endian"])
def test_replies_may_be_numpy_torch_or_lists(kind):
    # Counter's reward of the k-th step is k * (a + 1): the reply must arrive intact,
    # whether the engine takes it as it is (a C-contiguous int64 array) or Python converts it.
    convert = {
        "numpy": lambda a: a,
        "torch": torch.from_numpy,
        "list": lambda a: a.tolist(),
        "int32": lambda a: a.astype(np.int32),
        "strided": lambda a: np.repeat(a, 2)[::2],
        "big_endian": lambda a: a.astype(">i8"),
    }[kind]
    gc = counter_context()
    last = {}
    with gc:
        for i, batch in enumerate(gc):
            for game, s, r in zip(batch.game_ids.tolist(), batch["s"][:, 1].tolist(), batch["r"].tolist(), strict=True):
                if game in last and s > 0:
                    assert r == s * (last[game] + 1), (kind, game, s, r)
            a = (batch.game_ids.astype(np.int64) + i) % 3
            last.update(zip(batch.game_ids.tolist(), a.tolist(), strict=True))
            batch.reply({"a": convert(a)})
            if i == 12:
                break


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["numpy", "list"])
def test_reply_and_next_hands_out_the_batches_that_reply_then_next_would(kind):
    def batches(fused: bool) -> list[np.ndarray]:
        gc = elfpy.GameContext("counter", num_games=4, num_threads=2, seed=3, deterministic=True)
        gc.add_tag("actor", batch_size=2, inputs=["s", "count", "r"], replies=["a"])
        seen = []
        with gc:
            iterator = iter(gc)
            batch = next(iterator)
            for i in range(12):
                seen.append(np.stack([batch.game_ids, batch["count"], batch["r"]]).astype(np.float64))
                a = (batch.game_ids.astype(np.int64) + i) % 3
                reply = {"a": a if kind == "numpy" else a.tolist()}
                if fused:
                    batch = batch.reply_and_next(reply)
                else:
                    batch.reply(reply)
                    batch = next(iterator)
        return seen

    np.testing.assert_array_equal(batches(fused=True), batches(fused=False))


@pytest.mark.timeout(60)
def test_reply_and_next_keeps_a_refused_batch_and_its_next_batch_waits_for_a_reply():
    gc = counter_context()
    with gc:
        iterator = iter(gc)
        batch = next(iterator)
        with pytest.raises(ValueError, match=r"tag 'actor', key 'a'.*\b7\b"):
            batch.reply_and_next({"a": np.full(4, 7, np.int64)}, refusal_keeps_batch=True)
        following = batch.reply_and_next({"a": np.zeros(4, np.int64)})
        assert following is not batch and len(following) == 4
        with pytest.raises(RuntimeError, match="already"):
            batch.reply_and_next({"a": np.zeros(4, np.int64)})
        with pytest.raises(RuntimeError, match="was not replied"):
            next(iterator)


@pytest.mark.timeout(60)
def test_a_batch_can_not_be_replied_twice():
    gc = counter_context()
    with gc:
        batch = next(iter(gc))
        batch.reply({"a": np.zeros(4, np.int64)})
        with pytest.raises(RuntimeError, match="already"):
            batch.reply({"a": np.zeros(4, np.int64)})


@pytest.mark.timeout(60)
def test_batch_arrays_stay_readable_after_the_context_is_dropped():
    import gc as python_gc

    before = os_threads()
    context = counter_context()
    with context:
        batch = next(iter(context))
        kept = batch["count"]
        expected = kept.copy()
        batch.reply({"a": np.zeros(4, np.int64)})
    del context, batch
    python_gc.collect()
    assert os_threads() == before
    np.testing.assert_array_equal(kept, expected)  # the memory is still there
