"""Bad input and faults: each gives a clear error, never a hang.

Every test that could hang runs under a short pytest timeout; none asserts
how long anything took.
"""

from __future__ import annotations

import gc as python_gc
import os
import re
import signal
import threading
import time

import numpy as np
import pytest

import elfpy

from .helpers import os_threads


def counter_context(num_games: int = 4, batch_size: int = 4, **options) -> elfpy.GameContext:
    gc = elfpy.GameContext("counter", num_games=num_games, num_threads=2, seed=1, **options)
    gc.add_tag("actor", batch_size=batch_size, inputs=["s", "count"], replies=["a"])
    return gc


def zeros(batch) -> dict:
    return {"a": np.zeros(len(batch), dtype=np.int64)}


# --- unknown names ---------------------------------------------------------


def test_unknown_game_raises_value_error_listing_registered_games():
    with pytest.raises(ValueError, match="no_such_game") as error:
        elfpy.GameContext("no_such_game", num_games=1)
    for game in ("cartpole", "counter", "duel"):
        assert game in str(error.value)


def test_unknown_game_option_raises_value_error_listing_valid_options():
    with pytest.raises(ValueError, match="max_step") as error:
        elfpy.GameContext("cartpole", num_games=1, max_step=10)
    assert "max_steps" in str(error.value)
    with pytest.raises(ValueError) as error:
        elfpy.GameContext("counter", num_games=1, fail_at=3)
    for option in ("episode_length", "fail_at_step", "num_actions"):
        assert option in str(error.value)


def test_unknown_tag_raises_value_error_listing_tags():
    gc = counter_context()
    gc.add_tag("train", batch_size=4, T=3, inputs=["s", "r"])
    with pytest.raises(ValueError, match="'critic'") as error:
        gc.reg_callback("critic", zeros)
    assert "actor" in str(error.value) and "train" in str(error.value)
    with pytest.raises(ValueError, match="'critic'") as error:
        gc.spec("critic")
    assert "actor" in str(error.value) and "train" in str(error.value)


def test_unknown_input_key_raises_value_error_listing_keys():
    gc = elfpy.GameContext("cartpole", num_games=2)
    with pytest.raises(ValueError, match="'obs'") as error:
        gc.add_tag("actor", batch_size=2, inputs=["obs"], replies=["a"])
    for key in ("s", "a", "r", "terminal", "truncated", "episode_return", "final_s"):
        assert re.search(rf"\b{key}\b", str(error.value)), key


def test_unknown_reply_key_raises_value_error_listing_keys():
    gc = elfpy.GameContext("cartpole", num_games=2)
    with pytest.raises(ValueError, match="'action'") as error:
        gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["action"])
    assert re.search(r"\ba\b", str(error.value))


def test_unknown_key_of_a_batch_raises_key_error_listing_its_inputs():
    gc = counter_context()
    with gc:
        batch = next(iter(gc))
        with pytest.raises(KeyError, match="'r'") as error:
            batch["r"]
        assert "count" in str(error.value) and "'s'" in str(error.value)
        batch.reply(zeros(batch))


def test_malformed_game_option_raises_value_error_naming_it():
    for bad in ("many", 2.5, 0):
        with pytest.raises(ValueError, match="max_steps"):
            elfpy.GameContext("cartpole", num_games=1, max_steps=bad)


def test_fewer_than_one_game_or_thread_raises_value_error():
    with pytest.raises(ValueError, match="num_games"):
        elfpy.GameContext("cartpole", num_games=0)
    with pytest.raises(ValueError, match="num_threads"):
        elfpy.GameContext("cartpole", num_games=2, num_threads=0)


@pytest.mark.parametrize(
    "config, match",
    [
        (dict(name="actor", batch_size=4, inputs=["s"]), "twice"),
        (dict(name="t", batch_size=0, inputs=["s"]), "batch_size"),
        (dict(name="t", batch_size=4, inputs=[]), "input"),
        (dict(name="t", batch_size=4, inputs=["s"], min_batch=5), "min_batch"),
        (dict(name="t", batch_size=4, inputs=["s"], T=0), "T"),
        (dict(name="critic", batch_size=4, inputs=["s", "a"], replies=["V"]), "'a'"),
        (dict(name="t", batch_size=4, inputs=["s"], replies=["r"]), "'r'"),
    ],
    ids=[
        "duplicate_name",
        "zero_batch_size",
        "no_inputs",
        "min_batch_above_batch_size",
        "zero_T",
        "reply_key_as_input_of_a_reply_tag",
        "engine_key_as_reply",
    ],
)
def test_invalid_tag_raises_value_error_naming_the_tag(config, match):
    gc = counter_context()
    with pytest.raises(ValueError, match=match) as error:
        gc.add_tag(**config)
    assert f"'{config['name']}'" in str(error.value)
    assert gc.spec("actor")  # the context is still usable
    if config["name"] != "actor":
        with pytest.raises(ValueError):
            gc.spec(config["name"])  # the bad tag was not added


def test_configuring_after_start_raises_runtime_error():
    gc = counter_context()
    gc.start()
    with pytest.raises(RuntimeError, match="start"):
        gc.add_tag("train", batch_size=4, inputs=["s"])
    with pytest.raises(RuntimeError, match="start"):
        gc.add_key("h", "float32", (2,))
    gc.stop()


# --- configurations that could never run --------------------------------------


def test_batch_size_larger_than_games_on_a_reply_tag_raises_at_start():
    gc = counter_context(num_games=4, batch_size=8)
    with pytest.raises(ValueError, match="actor") as error:
        gc.start()
    assert "8" in str(error.value) and "4" in str(error.value)
    gc.stop()


def test_action_that_no_tag_replies_raises_at_start():
    gc = elfpy.GameContext("counter", num_games=2)
    gc.add_tag("train", batch_size=2, T=3, inputs=["s", "r"])
    with pytest.raises(ValueError, match="'a'"):
        gc.start()
    gc.stop()


def test_action_replied_by_two_tags_raises_at_start():
    gc = elfpy.GameContext("counter", num_games=2)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    gc.add_tag("actor_too", batch_size=2, inputs=["s"], replies=["a"])
    with pytest.raises(ValueError, match="'a'"):
        gc.start()
    gc.stop()


def test_tag_with_replies_and_history_is_rejected():
    gc = elfpy.GameContext("counter", num_games=2)
    with pytest.raises(ValueError, match="actor"):
        gc.add_tag("actor", batch_size=2, T=4, inputs=["s"], replies=["a"])


def test_inputs_given_as_a_string_raise_type_error():
    gc = elfpy.GameContext("counter", num_games=2)
    with pytest.raises(TypeError):
        gc.add_tag("actor", batch_size=2, inputs="s", replies=["a"])


# --- lifecycle ------------------------------------------------------------------


def test_run_before_start_raises_runtime_error():
    gc = counter_context()
    gc.reg_callback("actor", zeros)
    with pytest.raises(RuntimeError, match="start"):
        gc.run()


def test_start_twice_raises_runtime_error():
    gc = counter_context()
    gc.start()
    with pytest.raises(RuntimeError, match="twice"):
        gc.start()
    gc.stop()


@pytest.mark.timeout(60)
def test_stop_twice_is_a_no_op():
    gc = counter_context()
    gc.reg_callback("actor", zeros)
    gc.start()
    gc.run()
    gc.stop()
    gc.stop()


def test_stop_before_start_returns_and_start_after_stop_raises():
    gc = counter_context()
    gc.stop()
    with pytest.raises(RuntimeError):
        gc.start()


@pytest.mark.timeout(60)
def test_run_after_stop_raises_runtime_error():
    gc = counter_context()
    gc.reg_callback("actor", zeros)
    gc.start()
    gc.run()
    gc.stop()
    with pytest.raises(RuntimeError, match="stopped"):
        gc.run()


@pytest.mark.timeout(60)
def test_stop_joins_every_worker_thread():
    before = os_threads()
    gc = elfpy.GameContext("counter", num_games=64, num_threads=3)
    gc.add_tag("actor", batch_size=32, inputs=["s"], replies=["a"])
    gc.reg_callback("actor", zeros)
    gc.start()
    assert os_threads() == before + 3
    for _ in range(10):
        gc.run()
    gc.stop()
    assert os_threads() == before


@pytest.mark.timeout(60)
def test_batch_without_callback_raises_value_error_naming_the_tag():
    gc = counter_context()
    gc.start()
    with pytest.raises(ValueError, match="actor"):
        gc.run()
    gc.stop()


@pytest.mark.timeout(60)
def test_asking_for_the_next_batch_before_replying_raises():
    gc = counter_context()
    with gc:
        batches = iter(gc)
        next(batches)
        with pytest.raises(RuntimeError, match="actor"):
            next(batches)


def test_a_caller_holding_every_game_is_waited_for_not_called_stuck():
    # Every game waits for the reply to the batch the caller holds: nothing
    # moves, but the caller can still reply, so the engine must not report a
    # deadlock (it does when nothing at all can move; see Context::Stuck).
    gc = elfpy.GameContext("cartpole", num_games=4, num_threads=2)
    gc.add_tag("actor", batch_size=4, inputs=["s"], replies=["a"])
    with gc:
        batches = iter(gc)
        batch = next(batches)
        for _ in range(3):
            assert gc._ctx.wait(20) is None
        batch.reply({"a": np.zeros(4, np.int64)})
        assert len(next(batches)) == 4


# --- faults while running -----------------------------------------------------


class CallbackFailed(Exception):
    pass


@pytest.mark.timeout(60)
def test_callback_exception_comes_out_of_run_and_stop_returns():
    calls = []

    def callback(batch):
        calls.append(len(batch))
        if len(calls) == 3:
            raise CallbackFailed("bad luck on the third batch")
        return zeros(batch)

    gc = counter_context(num_games=8, batch_size=4)
    gc.reg_callback("actor", callback)
    gc.start()
    gc.run()
    gc.run()
    with pytest.raises(CallbackFailed, match="third batch"):
        gc.run()
    with pytest.raises(RuntimeError):
        gc.run()  # the context is failed: no more batches, and no hang
    gc.stop()
    assert len(calls) == 3


@pytest.mark.timeout(60)
def test_exception_in_a_game_raises_game_error_naming_game_id_and_message():
    gc = counter_context(num_games=4, batch_size=2, fail_at_step=3)
    gc.reg_callback("actor", zeros)
    gc.start()
    with pytest.raises(elfpy.GameError) as error:
        for _ in range(100):
            gc.run()
    message = str(error.value)
    assert "failed on purpose at step 3" in message
    game = re.search(r"\bgame (\d+)\b", message)
    assert game is not None and 0 <= int(game.group(1)) < 4, message
    assert isinstance(error.value, RuntimeError)
    with pytest.raises(elfpy.GameError):
        gc.run()  # stays failed
    gc.stop()


@pytest.mark.timeout(60)
def test_train_callback_exception_comes_out_of_run():
    gc = counter_context()
    gc.add_tag("train", batch_size=4, T=3, inputs=["count"])
    gc.reg_callback("actor", zeros)

    def train(batch):
        raise CallbackFailed("train failed")

    gc.reg_callback("train", train)
    gc.start()
    with pytest.raises(CallbackFailed, match="train failed"):
        for _ in range(20):
            gc.run()
    with pytest.raises(RuntimeError):
        gc.run()
    gc.stop()


@pytest.mark.timeout(60)
def test_exception_in_a_game_reaches_a_loop_over_batches():
    gc = counter_context(num_games=4, batch_size=4, fail_at_step=5)
    with gc:
        with pytest.raises(elfpy.GameError, match="failed on purpose at step 5"):
            for batch in gc:
                batch.reply(zeros(batch))


@pytest.mark.timeout(60)
def test_exception_in_a_game_names_the_game():
    gc = elfpy.GameContext("counter", num_games=1, num_threads=1, fail_at_step=2)
    gc.add_tag("actor", batch_size=1, inputs=["s"], replies=["a"])
    gc.reg_callback("actor", zeros)
    with gc:
        with pytest.raises(elfpy.GameError) as error:
            for _ in range(5):
                gc.run()
    assert re.search(r"\bgame 0\b", str(error.value)) and "counter" in str(error.value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("key", "message"), [
    ("r", r"game \d \('counter'\): seat 0's reward \(key 'r'\) is nan at step 3"),
    ("s", r"game \d \('counter'\): seat 0's observation 's' is inf at element 1 at step 3"),
], ids=["reward", "observation"])
def test_a_non_finite_reward_or_observation_is_a_game_error_naming_game_seat_and_key(key, message):
    gc = elfpy.GameContext("counter", num_games=4, num_threads=2, nonfinite_at_step=3, nonfinite_key=key)
    gc.add_tag("actor", batch_size=4, inputs=["s", "r"], replies=["a"])
    seen = []

    def actor(batch):
        seen.append((batch["s"].copy(), batch["r"].copy()))
        return zeros(batch)

    gc.reg_callback("actor", actor)
    with gc:
        with pytest.raises(elfpy.GameError, match=message):
            for _ in range(10):
                gc.run()
    assert len(seen) == 3 and all(np.isfinite(s).all() and np.isfinite(r).all() for s, r in seen)


@pytest.mark.timeout(60)
def test_a_non_finite_observation_only_a_training_window_reads_is_refused_too():
    gc = elfpy.GameContext("counter", num_games=2, num_threads=1, nonfinite_at_step=3, nonfinite_key="s")
    gc.add_tag("actor", batch_size=2, inputs=["count"], replies=["a"])
    gc.add_tag("train", batch_size=2, T=3, inputs=["s"])
    gc.reg_callback("actor", zeros)
    gc.reg_callback("train", lambda batch: None)
    with gc:
        with pytest.raises(elfpy.GameError, match=r"seat 0's observation 's' is inf at element 1 at step 3"):
            for _ in range(20):
                gc.run()


def test_nonfinite_key_takes_only_what_the_counter_can_spoil():
    with pytest.raises(ValueError, match="nonfinite_key must be 'r' or 's', got 'count'"):
        elfpy.GameContext("counter", num_games=1, nonfinite_key="count")


def test_step_cpu_ns_refuses_a_negative_time():
    with pytest.raises(ValueError, match="step_cpu_ns must be 0 or more, got -5"):
        elfpy.GameContext("counter", num_games=1, step_cpu_ns=-5)


@pytest.mark.timeout(60)
def test_stop_while_games_are_busy_returns_and_joins_workers():
    before = os_threads()
    gc = elfpy.GameContext("cartpole", num_games=2048, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=512, inputs=["s"], replies=["a"])
    gc.add_tag("train", batch_size=256, T=3, inputs=["s", "a"])
    gc.reg_callback("actor", lambda b: {"a": np.ones(len(b), np.int64)})
    gc.reg_callback("train", lambda b: None)
    gc.start()
    for _ in range(7):
        gc.run()  # the last replies are being consumed as stop() comes
    gc.stop()
    assert os_threads() == before


@pytest.mark.timeout(60)
def test_dropping_a_started_context_joins_its_workers():
    before = os_threads()
    gc = counter_context()
    gc.start()
    assert os_threads() == before + 2
    del gc
    python_gc.collect()
    assert os_threads() == before


def threads_now() -> int:
    """OS threads of this process, counted without running the cycle collector."""
    return len(os.listdir("/proc/self/task"))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("replied", [False, True], ids=["batch_held", "batch_replied"])
def test_dropping_a_context_in_iteration_mode_stops_it_without_the_cycle_collector(replied):
    """`del` alone stops it (its batch does not keep it alive through a cycle),
    whether the batch handed out last was replied or is still held."""
    before = os_threads()
    gc = counter_context()
    gc.start()
    batches = iter(gc)
    batch = next(batches)
    if replied:
        batch.reply(zeros(batch))
        batch = next(batches)
    assert threads_now() == before + 2
    python_gc.disable()
    try:
        del gc, batches  # the batch we keep must not keep the context alive
        assert threads_now() == before
    finally:
        python_gc.enable()
    with pytest.raises(RuntimeError, match="outlived its GameContext"):
        batch.reply(zeros(batch))

# --- bad replies: ValueError naming tag and key, and no game steps on garbage --------


def run_into_bad_reply(bad_reply, match: str):
    """Steps 8 counter games (batches of 4) for a few steps, then replies
    `bad_reply(batch)` to one batch. Checks the error, that no game of that
    batch then steps (no buffer ever shows it at a later step) and that the
    context stays failed."""
    gc = counter_context(num_games=8, batch_size=4)
    buffers = []  # (game_ids, count) views of each distinct buffer of the tag
    with gc:
        batches = iter(gc)
        for _ in range(8):
            batch = next(batches)
            if not any(np.shares_memory(batch["count"], seen) for _, seen in buffers):
                buffers.append((batch.game_ids, batch["count"]))
            batch.reply(zeros(batch))
        assert len(buffers) >= 2
        batch = next(batches)
        steps = dict(zip(batch.game_ids.tolist(), batch["count"].tolist(), strict=True))
        with pytest.raises(ValueError) as error:
            batch.reply(bad_reply(batch))
        message = str(error.value)
        assert "'actor'" in message and "'a'" in message, message
        assert re.search(match, message), message
        time.sleep(0.1)  # time enough for a game that wrongly resumed to write its next step
        for game_ids, counts in buffers:
            for game, count in zip(game_ids.tolist(), counts.tolist(), strict=True):
                assert count <= steps.get(game, count), f"game {game} stepped after a bad reply"
        with pytest.raises(RuntimeError):
            next(batches)
    return message


@pytest.mark.timeout(60)
def test_reply_with_wrong_shape_names_tag_and_key():
    run_into_bad_reply(lambda b: {"a": np.zeros((len(b), 2), dtype=np.int64)}, r"shape")
    run_into_bad_reply(lambda b: {"a": np.zeros(len(b) - 1, dtype=np.int64)}, r"shape")


@pytest.mark.timeout(60)
def test_reply_with_float_for_an_integer_action_names_tag_and_key():
    run_into_bad_reply(lambda b: {"a": np.full(len(b), 1.5)}, r"float64")


@pytest.mark.timeout(60)
def test_reply_missing_a_key_names_tag_and_key():
    run_into_bad_reply(lambda b: {"b": np.zeros(len(b), dtype=np.int64)}, r"missing")


@pytest.mark.timeout(60)
def test_reply_with_out_of_range_action_names_tag_key_and_value():
    def bad(batch):
        a = np.zeros(len(batch), dtype=np.int64)
        a[-1] = 7  # counter's actions are 0, 1, 2
        return {"a": a}

    message = run_into_bad_reply(bad, r"\b7\b")
    assert re.search(r"\[0, 2\]", message), message


@pytest.mark.timeout(60)
def test_reply_with_negative_action_is_rejected():
    run_into_bad_reply(lambda b: {"a": np.full(len(b), -1, dtype=np.int64)}, r"-1")


@pytest.mark.timeout(60)
def test_reply_with_an_unexpected_key_names_tag_and_key():
    gc = counter_context()
    with gc:
        batch = next(iter(gc))
        with pytest.raises(ValueError, match="'actor'") as error:
            batch.reply({"a": np.zeros(4, np.int64), "V": np.zeros(4, np.float32)})
        assert "'V'" in str(error.value)


@pytest.mark.timeout(60)
def test_callback_returning_no_dict_raises_value_error_naming_the_tag():
    gc = counter_context()
    gc.reg_callback("actor", lambda batch: None)
    with gc:
        with pytest.raises(ValueError, match="'actor'"):
            gc.run()


# --- Ctrl-C -------------------------------------------------------------------


def interrupt_after(seconds: float) -> threading.Timer:
    """A Ctrl-C `seconds` after it is started. Start it inside the
    `pytest.raises` block: on a loaded machine the signal may land before the
    call it is meant for."""
    return threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))


def interrupt_when(event: threading.Event) -> threading.Thread:
    """Ctrl-C once `event` is set (bounded by the test's timeout)."""
    thread = threading.Thread(target=lambda: event.wait() and os.kill(os.getpid(), signal.SIGINT))
    thread.start()
    return thread


@pytest.mark.timeout(60)
def test_ctrl_c_while_run_waits_stops_the_context():
    before = os_threads()
    gc = counter_context(num_games=4, batch_size=4)
    gc.reg_callback("actor", zeros)
    gc.start()
    # Take the only batch without replying: every game now waits for it, so
    # run() can only wait until Ctrl-C.
    next(iter(gc))
    timer = interrupt_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        # If a loaded machine delays run() past the signal, the Ctrl-C lands
        # on the way in: still a Ctrl-C while run() is called, never a miss.
        timer.start()
        gc.run()
    timer.join()
    assert os_threads() == before, "worker threads still alive after Ctrl-C"
    with pytest.raises(RuntimeError, match="stopped"):
        gc.run()
    gc.stop()


@pytest.mark.timeout(60)
def test_ctrl_c_while_a_callback_runs_stops_the_context():
    before = os_threads()

    entered = threading.Event()

    def slow_callback(batch):
        entered.set()
        time.sleep(10)  # Ctrl-C lands here: it is sent once the callback runs
        return zeros(batch)

    gc = counter_context(num_games=4, batch_size=4)
    gc.reg_callback("actor", slow_callback)
    gc.start()
    timer = interrupt_when(entered)
    with pytest.raises(KeyboardInterrupt):
        gc.run()
    timer.join()
    assert os_threads() == before, "worker threads still alive after Ctrl-C"
    with pytest.raises(RuntimeError, match="stopped"):
        gc.run()
    gc.stop()
