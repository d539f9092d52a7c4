"""The engine's hand-offs between threads, counted (not timed): a small batch
is stepped on the calling thread with no wake-up, a large one by the pool."""

import numpy as np
import pytest

import elfpy


def _handoffs_per_batch(num_games: int, num_threads: int, batches: int) -> dict[str, float]:
    gc = elfpy.GameContext("cartpole", num_games=num_games, num_threads=num_threads, seed=0)
    gc.add_tag("actor", batch_size=num_games, inputs=["s"], replies=["a"])
    actions = np.zeros(num_games, np.int64)
    gc.reg_callback("actor", lambda batch: {"a": actions})
    gc.start()
    try:
        for _ in range(20):  # the first batches' cost is not yet measured
            gc.run()
        before = gc.handoffs()
        for _ in range(batches):
            gc.run()
        after = gc.handoffs()
    finally:
        gc.stop()
    counts = ("worker_wakeups", "caller_sleeps", "batches_stepped_by_caller", "batches_given_to_pool")
    return {k: (after[k] - before[k]) / batches for k in counts}


@pytest.mark.parametrize("num_threads", [1, 2])
def test_a_small_batch_steps_on_the_caller_without_waking_a_thread(num_threads):
    # The choice rests on measured thread CPU, which a loaded machine (another
    # process on the sibling core, a VM's stolen time) inflates now and then:
    # hence "most batches". Handing every batch over, as before, gives 0 here.
    per_batch = _handoffs_per_batch(64, num_threads, 400)
    assert per_batch["batches_stepped_by_caller"] > 0.8, per_batch
    assert per_batch["batches_given_to_pool"] < 0.2, per_batch
    assert per_batch["worker_wakeups"] < 0.2, per_batch
    assert per_batch["caller_sleeps"] < 0.2, per_batch


def test_a_large_batch_goes_to_the_pool_and_the_counters_see_it():
    # Not the wake-ups: a worker still leaving its last task when the caller
    # replies takes the next batch without being woken (seen on CI: 0 a batch).
    # One batch in 64 is stepped on the caller to keep its cost measured.
    per_batch = _handoffs_per_batch(16384, 1, 128)  # about 1 ms of work: far above two wake-ups
    assert per_batch["batches_stepped_by_caller"] == 2 / 128, per_batch
    assert per_batch["batches_given_to_pool"] == 126 / 128, per_batch

