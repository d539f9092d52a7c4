"""Python-hosted games in every state that could hang them: stop() returns
with a worker killed or stuck inside `step`, with batches held or replied,
from a `with` block that raises and from `__del__`; a step slower than
`step_timeout_s` is a GameError naming the environment and its worker; after
any GameError the workers and the shared block are already gone.

None of these asserts how long anything took: a hang fails by pytest-timeout.
"""

from __future__ import annotations

import gc as python_gc
import os
import signal
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import elfpy

from .helpers import assert_released, wait_for_file, wait_until_dead

pytestmark = pytest.mark.timeout(60, method="thread")  # a hang may be inside C++, out of reach of signals


class LoopingEnv(gym.Env):
    """Steps normally on action 0; on action 1 creates `marker` and loops
    forever inside `step` (it never returns, nor sees any request to stop)."""

    observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, marker: str = ""):
        self.marker = marker

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        if action == 1:
            open(self.marker, "w").close()
            while True:
                pass
        return np.zeros(1, np.float32), 0.0, False, False, {}


class SleepingEnv(LoopingEnv):
    """Like LoopingEnv, but sleeps inside `step` instead of looping."""

    def step(self, action):
        if action == 1:
            time.sleep(3600)
        return super().step(action)


class CallbackFailed(Exception):
    pass


def hosted(env=LoopingEnv, num_games: int = 2, batch_size: int = 2, **options) -> elfpy.GameContext:
    gc = elfpy.GameContext(env, num_games=num_games, num_workers=2, num_threads=2, **options)
    gc.add_tag("actor", batch_size=batch_size, inputs=["s"], replies=["a"])
    return gc


def actions(batch, value: int) -> dict:
    return {"a": np.full(len(batch), value, np.int64)}


def wait_until_step_sent(gc: elfpy.GameContext, game: int) -> None:
    """Blocks until the engine sent `game` a request its worker has not
    finished: an engine thread then waits for that worker."""
    board = gc._source._host.board
    while not board.pending(game):
        time.sleep(0.01)


def test_stop_returns_after_a_worker_was_killed_between_taking_and_replying_a_batch():
    gc = hosted()
    pids = gc.worker_pids
    gc.start()
    batch = next(iter(gc))
    os.kill(pids[1], signal.SIGKILL)  # worker 1 hosts game 1
    wait_until_dead(pids[1])
    batch.reply(actions(batch, 0))
    wait_until_step_sent(gc, 1)
    gc.stop()
    assert_released(pids)


def test_stop_returns_after_a_worker_was_killed_inside_step(tmp_path):
    gc = hosted(marker=str(tmp_path / "looping"))
    pids = gc.worker_pids
    gc.start()
    batch = next(iter(gc))
    batch.reply({"a": (batch.game_ids == 1).astype(np.int64)})  # game 1 (worker 1) loops
    wait_for_file(tmp_path / "looping")
    os.kill(pids[1], signal.SIGKILL)
    wait_until_dead(pids[1])
    gc.stop()
    assert_released(pids)


def test_stop_returns_while_workers_loop_inside_step(tmp_path):
    gc = hosted(marker=str(tmp_path / "looping"))
    pids = gc.worker_pids
    gc.start()
    batch = next(iter(gc))
    batch.reply(actions(batch, 1))
    wait_for_file(tmp_path / "looping")
    gc.stop()
    assert_released(pids)


def test_stop_returns_with_a_batch_held_while_another_game_loops_inside_step(tmp_path):
    gc = hosted(batch_size=1, marker=str(tmp_path / "looping"))
    pids = gc.worker_pids
    gc.start()
    batches = iter(gc)
    first = next(batches)
    first.reply(actions(first, 1))
    held = next(batches)  # the other game's batch, never replied
    assert held.game_ids[0] != first.game_ids[0]
    wait_for_file(tmp_path / "looping")
    gc.stop()
    assert_released(pids)


def test_stop_returns_with_a_batch_held_and_no_worker_stuck():
    gc = hosted()
    pids = gc.worker_pids
    gc.start()
    next(iter(gc))
    gc.stop()
    assert_released(pids)


def test_leaving_a_with_block_by_an_exception_stops_a_looping_worker(tmp_path):
    gc = hosted(marker=str(tmp_path / "looping"))
    pids = gc.worker_pids
    with pytest.raises(CallbackFailed):
        with gc:
            batch = next(iter(gc))
            batch.reply(actions(batch, 1))
            wait_for_file(tmp_path / "looping")
            raise CallbackFailed("the user's code failed")
    assert_released(pids)


def test_dropping_a_context_whose_workers_loop_inside_step_stops_them(tmp_path):
    gc = hosted(marker=str(tmp_path / "looping"))
    pids = gc.worker_pids
    gc.start()
    batches = iter(gc)
    batch = next(batches)
    batch.reply(actions(batch, 1))
    wait_for_file(tmp_path / "looping")
    python_gc.disable()  # refcounting alone must stop it: no wait for the cycle collector
    try:
        del batches, gc  # __del__ stops it, though the last batch is still held here
        assert_released(pids)
    finally:
        python_gc.enable()
    del batch


@pytest.mark.parametrize("env", [LoopingEnv, SleepingEnv], ids=["loops", "sleeps"])
def test_a_step_longer_than_step_timeout_fails_naming_game_environment_and_worker(env, tmp_path):
    # The timeout must not fire for the healthy environments, whose worker
    # processes a loaded machine may leave unscheduled for a while: 2 s, not
    # a fraction of one (the stuck one never returns, so only this is waited).
    gc = hosted(env, num_games=4, batch_size=4, step_timeout_s=2.0, marker=str(tmp_path / "looping"))
    pids = gc.worker_pids
    stuck = 2  # served by worker 1 (environments 2-3), which then never reaches environment 3
    gc.reg_callback("actor", lambda batch: {"a": (batch.game_ids == stuck).astype(np.int64)})
    pattern = (rf"game 2 \('py:{env.__name__}'\): environment 2 \(worker process 1, environments 2-3\) "
               r"did not finish its step within step_timeout_s = 2 s")
    with gc:
        with pytest.raises(elfpy.GameError, match=pattern):
            for _ in range(100):
                gc.run()
        assert_released(pids)  # the late worker is not replaced: the context failed and stopped its workers
        with pytest.raises(elfpy.GameError, match=pattern):
            gc.run()


def test_step_timeout_must_be_positive_and_is_for_hosted_games_only():
    with pytest.raises(ValueError, match="step_timeout_s"):
        elfpy.GameContext(LoopingEnv, num_games=2, step_timeout_s=0)
    with pytest.raises(ValueError, match="step_timeout_s.*Python-hosted"):
        elfpy.GameContext("cartpole", num_games=2, step_timeout_s=1.0)


def test_a_callback_failure_then_game_error_releases_the_workers_at_once():
    gc = hosted()
    pids = gc.worker_pids

    def fail(batch):
        raise CallbackFailed("bad luck")

    gc.reg_callback("actor", fail)
    with gc:
        with pytest.raises(CallbackFailed):
            gc.run()
        with pytest.raises(elfpy.GameError, match="bad luck"):
            gc.run()
        assert_released(pids)


LOOPING_PARENT = """
import sys, time
import gymnasium as gym
import numpy as np
import elfpy

class LoopingEnv(gym.Env):  # defined here, in __main__: it reaches the workers by value
    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, marker):
        self.marker = marker

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        open(self.marker + str(action), "w").close()
        while True:  # it never returns, nor sees any request to stop
            pass

gc = elfpy.GameContext(LoopingEnv, num_games=2, num_workers=2, num_threads=2, marker=sys.argv[1])
gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
gc.start()
batch = next(iter(gc))
batch.reply({"a": batch.game_ids.astype(np.int64)})  # both workers loop inside step
time.sleep(3600)
"""


def test_workers_looping_inside_step_end_when_their_parent_is_killed(tmp_path, marked_processes):
    """The parent's SIGKILL cannot close the board: the workers, which would loop
    for good, are killed once their parent is gone."""
    parent = subprocess.Popen([sys.executable, "-c", LOOPING_PARENT, str(tmp_path / "looping")],
                              env=marked_processes.env)
    try:
        for game in (0, 1):
            while not (tmp_path / f"looping{game}").exists():
                assert parent.poll() is None
                time.sleep(0.01)
        workers = [pid for pid, command in marked_processes.alive().items() if "worker_main" in command]
        assert len(workers) == 2
    finally:
        parent.kill()
        parent.wait()
    marked_processes.wait_until_none_alive()
