"""Shared helpers for the engine tests.

The engine under test is `elfpy.GameContext`; the games are the native
CartPole and the two test games in cpp/games/testing: `counter` (reward of the
k-th step of an episode is k * (a + 1); its `count` key is the game's total
step count) and `duel` (two seats; the higher pick wins the round).
"""

from __future__ import annotations

import gc
import os

import numpy as np


def os_threads() -> int:
    """Number of OS threads in this process, once contexts that are only
    garbage (left by other tests) have been collected and their workers joined."""
    gc.collect()
    return len(os.listdir("/proc/self/task"))


def add_policy_keys(gc) -> int:
    """Declares the actor-critic reply keys `pi` (a policy over the game's
    Discrete action `a`) and `V` (a value), which the engine does not invent;
    returns the number of actions."""
    num_actions = int(gc.spec()["a"].space.n)
    gc.add_key("pi", "float32", [num_actions], "the actor's policy")
    gc.add_key("V", "float32", [], "the actor's value estimate")
    return num_actions


def copy_batch(batch) -> dict:
    """A batch's tag, rows and arrays, copied out of the engine's buffers."""
    return {
        "tag": batch.tag,
        "game_ids": batch.game_ids.copy(),
        "seats": batch.seats.copy(),
        "arrays": {key: np.array(value, copy=True) for key, value in batch.items()},
    }
