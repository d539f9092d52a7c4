"""The multi-process runner: the learner trains in its own process, and every way
a run can end (budget, Ctrl-C, failure here, failure or death of the learner)
stops the engine and leaves no learner process behind."""

import itertools
import os
import signal

import pytest
import torch
from fakes import fake_context

from rlpytorch.models.base import read_checkpoint
from rlpytorch.run.multi_process import LearnerError, MultiProcessRun


class BrokenMethod:
    """A method whose update fails, to be pickled into the learner process."""

    def update(self, mi, batch):
        raise ValueError("gradient exploded on purpose")


def runner(trainer, tmp_path, **kwargs):
    options = {"num_frames": 2000, "log_every": 10**9, "progress": False, "save_dir": str(tmp_path)}
    # A generous join timeout: the tests check that the learner exits by itself,
    # which a loaded machine may slow down, never how fast.
    return MultiProcessRun(trainer, join_timeout=60.0, **{**options, **kwargs})


def test_learner_process_trains_and_its_weights_reach_actor_and_checkpoint(trainer, tmp_path):
    gc = fake_context()
    initial = trainer.mi["model"].heads["value"].net[-1].bias.clone()
    # With one slot and back-pressure the games hand window n over only once window n - 1 is learned
    # from, and the learner publishes every 2 updates (actor_sync_every) before it frees the slot: after
    # window n the actor acts with version (n - 1) // 2 or n // 2, whatever the machine's speed or load.
    run = runner(trainer, tmp_path, run_config={"runner": "multi"}, when_behind="wait", batch_slots=1)
    acted_with = []  # per actor batch during the run: the weights version it acted with, and its value bias
    act = trainer.actor

    def recording_actor(batch):
        acted_with.append((run._seen_version, trainer.mi["actor"].heads["value"].net[-1].bias.clone()))
        return act(batch)

    trainer.actor = recording_actor
    summary = run.run(gc)
    assert gc.stopped and not run._learner.is_alive() and run._learner.exitcode == 0
    assert summary.updates > 0 and run._version.value > 0
    assert not torch.equal(trainer.mi["model"].heads["value"].net[-1].bias, initial)
    # During the run (not only by the final copy) the actor acted with weights the learner published:
    # every version in turn (one per 2 windows), each new one with new weights.
    versions = {}
    for version, bias in acted_with:
        versions.setdefault(version, bias)
    assert sorted(versions) == list(range(len(versions))) and len(versions) >= summary.updates // 2 - 1
    torch.testing.assert_close(versions[0], initial)
    for older, newer in itertools.pairwise(sorted(versions)):
        assert not torch.equal(versions[older], versions[newer]), (older, newer)
    actor, learner = trainer.mi["actor"], trainer.mi["model"]
    torch.testing.assert_close(actor.heads["value"].net[-1].bias, learner.heads["value"].net[-1].bias)
    checkpoint = read_checkpoint(tmp_path / "last.pt")
    assert checkpoint["step"] == summary.updates and checkpoint["args"] == {"runner": "multi"}


def test_failure_in_the_learner_is_raised_here_with_its_traceback(trainer, tmp_path):
    trainer.method = BrokenMethod()
    gc = fake_context()
    run = runner(trainer, tmp_path, num_frames=10**9)
    with pytest.raises(LearnerError, match="gradient exploded on purpose"):
        run.run(gc)
    assert gc.stopped and not run._learner.is_alive()


def test_death_of_the_learner_is_raised_here(trainer, tmp_path):
    gc = fake_context()
    run = runner(trainer, tmp_path, num_frames=10**9)
    actor = trainer.actor
    calls = 0

    def actor_that_kills_the_learner(batch):
        nonlocal calls
        calls += 1
        if calls == 5:
            os.kill(run._learner.pid, signal.SIGKILL)
        return actor(batch)

    trainer.actor = actor_that_kills_the_learner
    with pytest.raises(LearnerError, match=r"exited unexpectedly \(killed by SIGKILL\)"):
        run.run(gc)
    assert gc.stopped


def test_an_engine_that_fails_to_start_leaves_no_learner_behind(trainer, tmp_path):
    """Left running, the learner would hold this process's exit for good:
    multiprocessing joins it after a SIGTERM, which it ignores."""
    gc = fake_context()

    def start():
        raise ValueError("the engine refused to start")

    gc.start = start
    run = runner(trainer, tmp_path)
    with pytest.raises(ValueError, match="refused to start"):
        run.run(gc)
    assert not run._learner.is_alive() and run._learner.exitcode == 0  # asked to stop: it exited by itself


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_ctrl_c_or_failure_here_stops_the_learner_cleanly(trainer, tmp_path, error):
    gc = fake_context()
    run = runner(trainer, tmp_path, num_frames=10**9)
    actor = trainer.actor
    calls = 0

    def failing_actor(batch):
        nonlocal calls
        calls += 1
        if calls == 200:
            raise error("stop here")
        return actor(batch)

    trainer.actor = failing_actor
    if error is KeyboardInterrupt:
        assert run.run(gc).interrupted
    else:
        with pytest.raises(RuntimeError, match="stop here"):
            run.run(gc)
    assert gc.stopped
    assert run._learner.exitcode == 0  # it exited by itself, not terminated


class SlowMethod:
    """The trainer's method, slowed so the learner falls behind the games."""

    def __init__(self, inner):
        self.inner = inner

    def update(self, mi, batch):
        import time

        time.sleep(0.02)
        return self.inner.update(mi, batch)


class CountingRun(MultiProcessRun):
    """Counts the frames of every window the games hand to the train callback."""

    def _enqueue(self, batch):
        from rlpytorch.run.single_process import window_frames

        self.frames_windowed = getattr(self, "frames_windowed", 0) + window_frames(batch)
        self.windows = getattr(self, "windows", 0) + 1
        return super()._enqueue(batch)


@pytest.mark.parametrize("when_behind", ["drop", "wait"])
def test_frames_learned_and_dropped_add_up_to_the_windows_and_waiting_drops_none(trainer, tmp_path, when_behind):
    trainer.method = SlowMethod(trainer.method)
    gc = fake_context()
    options = {"num_frames": 3000, "log_every": 10**9, "progress": False, "save_dir": str(tmp_path)}
    run = CountingRun(trainer, join_timeout=30.0, batch_slots=1, when_behind=when_behind, **options)
    run.run(gc)
    per_window = run.frames_windowed // run.windows  # the fake engine's windows are all one size
    assert run.frames_windowed == per_window * run.windows > 0
    # Every window is either learned from or dropped, whole; waiting drops none.
    assert run.frames_learned + run.dropped * per_window == run.frames_windowed
    if when_behind == "wait":
        assert run.dropped == 0
    assert run._extra_stats()["frames_learned"] == run.frames_learned
