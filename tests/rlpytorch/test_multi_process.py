"""The multi-process runner: the learner trains in its own process, and every way
a run can end (budget, Ctrl-C, failure here, failure or death of the learner)
stops the engine and leaves no learner process behind."""

import os
import signal

import pytest
import torch
from conftest import fake_context

from rlpytorch.model_base import read_checkpoint
from rlpytorch.runner import LearnerError, MultiProcessRun


class BrokenMethod:
    """A method whose update fails, to be pickled into the learner process."""

    def update(self, mi, batch):
        raise ValueError("gradient exploded on purpose")


def runner(trainer, tmp_path, **kwargs):
    options = {"num_frames": 2000, "log_every": 10**9, "progress": False, "save_dir": str(tmp_path)}
    return MultiProcessRun(trainer, join_timeout=10.0, **{**options, **kwargs})


def test_learner_process_trains_and_its_weights_reach_actor_and_checkpoint(trainer, tmp_path):
    gc = fake_context()
    initial = trainer.mi["model"].heads["value"].net[-1].bias.clone()
    run = runner(trainer, tmp_path, run_config={"runner": "multi"})
    summary = run.run(gc)
    assert gc.stopped and not run._learner.is_alive() and run._learner.exitcode == 0
    assert summary.updates > 0 and run._version.value > 0
    assert not torch.equal(trainer.mi["model"].heads["value"].net[-1].bias, initial)
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
    with pytest.raises(LearnerError, match="exit code -9"):
        run.run(gc)
    assert gc.stopped


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
