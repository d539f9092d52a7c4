"""The worker pool: many games on few threads, and no CPU burnt when idle."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter

import numpy as np
import pytest

import elfpy

from .helpers import os_threads


def wait_until_quiet(window: float = 0.2) -> None:
    """Blocks until this process spends a `window` of wall-clock time using
    under 5% of it in CPU: the engine finished what it was given. A fixed
    sleep is too short on a loaded machine; an engine that never goes quiet
    (spins) fails by the test's timeout."""
    while True:
        start = time.process_time()
        time.sleep(window)
        if time.process_time() - start < 0.05 * window:
            return


@pytest.mark.timeout(60)
def test_1024_games_on_2_threads_step_every_game():
    before = os_threads()
    gc = elfpy.GameContext("cartpole", num_games=1024, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=512, inputs=["s", "episode_length", "terminal"], replies=["a"])
    gc.add_tag("train", batch_size=256, T=4, inputs=["s", "a", "r", "terminal"])
    rng = np.random.default_rng(0)
    rows = Counter()
    windows = Counter()

    def actor(batch):
        ids = batch.game_ids.tolist()
        assert len(set(ids)) == len(ids) == 512
        rows.update(ids)
        return {"a": rng.integers(0, 2, len(batch))}

    def train(batch):
        assert batch["s"].shape == (4, 256, 4)
        windows.update(batch.game_ids.tolist())

    gc.reg_callback("actor", actor)
    gc.reg_callback("train", train)
    with gc:
        assert os_threads() == before + 2, "1024 games must run on 2 OS threads"
        while min(rows.values(), default=0) < 10 or len(rows) < 1024:
            gc.run()
    assert sorted(rows) == list(range(1024))
    assert len(windows) == 1024


@pytest.mark.timeout(60)
def test_started_idle_context_uses_about_no_cpu():
    gc = elfpy.GameContext("cartpole", num_games=1024, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=256, inputs=["s", "r", "terminal"], replies=["a"], timeout_ms=10)
    gc.add_tag("train", batch_size=256, T=5, inputs=["s", "a", "r", "terminal"], timeout_ms=10)
    gc.reg_callback("actor", lambda b: {"a": np.zeros(len(b), np.int64)})
    gc.reg_callback("train", lambda b: None)
    with gc:
        for _ in range(20):
            gc.run()
        wait_until_quiet()  # the games reached the batches now pending, however slow the machine
        start = time.process_time()
        time.sleep(1.0)
        used = time.process_time() - start
    assert used < 0.05, f"an idle context used {used:.3f} s of CPU in 1 s"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "steps, train",
    [
        (1, dict()),
        # 8 rows of a batch that times out at 5 ms but needs 16 to be delivered
        (1, dict(timeout_ms=5, min_batch=16)),
        # no rows at all in a batch that would be delivered at once
        (0, dict(timeout_ms=0)),
    ],
    ids=["no_timeout", "rows_below_min_batch", "zero_timeout_no_rows"],
)
def test_run_waiting_for_a_batch_that_can_not_come_uses_about_no_cpu(steps, train):
    # 8 games step `steps` times, then wait for a held actor batch, so run()
    # can only wait (until Ctrl-C, after 1 s): waiting should cost nothing.
    gc = elfpy.GameContext("counter", num_games=8, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=8, inputs=["count"], replies=["a"])
    gc.add_tag("train", batch_size=64, inputs=["count"], **train)
    delivered = []
    gc.reg_callback("train", lambda batch: delivered.append(len(batch)))
    with gc:
        batches = iter(gc)
        for _ in range(steps):
            next(batches).reply({"a": np.zeros(8, np.int64)})
        assert next(batches).tag == "actor"  # held, never replied
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
        start = time.process_time()
        with pytest.raises(KeyboardInterrupt):
            timer.start()  # inside: a signal that beats run() on a loaded machine still lands here
            gc.run()
        used = time.process_time() - start
        timer.join()
    assert delivered == [], "a batch below min_batch was delivered"
    assert used < 0.05, f"run() used {used:.3f} s of CPU waiting 1 s for a batch"
