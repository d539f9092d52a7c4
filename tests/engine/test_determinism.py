"""Determinism: with deterministic=True and a seed, the batches (their order,
tags, rows and every array) do not depend on the number of threads."""

from __future__ import annotations

import numpy as np
import pytest

import elfpy

from .helpers import add_policy_keys, copy_batch

NUM_BATCHES = 150


def record(game: str, num_games: int, num_threads: int, seed: int, **options) -> list[dict]:
    """Runs a deterministic context and returns a copy of every batch, with
    actions drawn from a numpy Generator seeded like the context."""
    gc = elfpy.GameContext(game, num_games=num_games, num_threads=num_threads, seed=seed, deterministic=True, **options)
    num_actions = add_policy_keys(gc)
    channels = num_games * gc.num_seats
    gc.add_tag(
        "actor", batch_size=channels // 2, inputs=["s", "r", "terminal", "episode_return"], replies=["a", "pi", "V"]
    )
    gc.add_tag("train", batch_size=channels // 2, T=5, inputs=["s", "a", "pi", "V", "r", "terminal"])
    rng = np.random.default_rng(seed)
    batches = []

    def actor(batch):
        batches.append(copy_batch(batch))
        n = len(batch)
        pi = rng.dirichlet(np.ones(num_actions), size=n).astype(np.float32)
        a = np.array([rng.choice(num_actions, p=p / p.sum()) for p in pi.astype(np.float64)])
        return {"a": a, "pi": pi, "V": rng.standard_normal(n).astype(np.float32)}

    def train(batch):
        batches.append(copy_batch(batch))

    gc.reg_callback("actor", actor)
    gc.reg_callback("train", train)
    with gc:
        for _ in range(NUM_BATCHES):
            gc.run()
    return batches


def assert_same_batches(first: list[dict], second: list[dict], what: str) -> None:
    assert len(first) == len(second)
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        where = f"{what}: batch {i}"
        assert a["tag"] == b["tag"], where
        np.testing.assert_array_equal(a["game_ids"], b["game_ids"], err_msg=where)
        np.testing.assert_array_equal(a["seats"], b["seats"], err_msg=where)
        assert a["arrays"].keys() == b["arrays"].keys(), where
        for key in a["arrays"]:
            np.testing.assert_array_equal(a["arrays"][key], b["arrays"][key], err_msg=f"{where}, key {key}")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("game, num_games", [("cartpole", 16), ("duel", 6)])
def test_deterministic_batches_do_not_depend_on_thread_count(game, num_games):
    runs = {threads: record(game, num_games, threads, seed=5) for threads in (1, 2, 4)}
    tags = [b["tag"] for b in runs[1]]
    assert "train" in tags and "actor" in tags
    assert_same_batches(runs[1], runs[2], f"{game}, 1 vs 2 threads")
    assert_same_batches(runs[1], runs[4], f"{game}, 1 vs 4 threads")


@pytest.mark.timeout(60)
def test_deterministic_runs_with_another_seed_differ():
    first = record("cartpole", 16, 2, seed=5)
    second = record("cartpole", 16, 2, seed=6)
    assert not np.array_equal(first[0]["arrays"]["s"], second[0]["arrays"]["s"])
