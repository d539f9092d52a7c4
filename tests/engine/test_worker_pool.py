"""The worker pool: many games on few threads, and no CPU burnt when idle."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

import elfpy

from .helpers import os_threads


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


@pytest.mark.timeout(30)
def test_started_idle_context_uses_about_no_cpu():
    gc = elfpy.GameContext("cartpole", num_games=1024, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=256, inputs=["s", "r", "terminal"], replies=["a"], timeout_ms=10)
    gc.add_tag("train", batch_size=256, T=5, inputs=["s", "a", "r", "terminal"], timeout_ms=10)
    gc.reg_callback("actor", lambda b: {"a": np.zeros(len(b), np.int64)})
    gc.reg_callback("train", lambda b: None)
    with gc:
        for _ in range(20):
            gc.run()
        time.sleep(0.2)  # let the games reach the batches now pending
        start = time.process_time()
        time.sleep(1.0)
        used = time.process_time() - start
    assert used < 0.05, f"an idle context used {used:.3f} s of CPU in 1 s"
