"""A self-play run keeps one history: resumed after a kill between two
checkpoints, its ``progress.csv``, ``log.txt`` and TensorBoard have each count
of leaf evaluations once and in order; an error in its loop leaves a
checkpoint at the count reached, unless it broke off an SGD step. No step
waits for a time: the test polls for a file, and pytest-timeout bounds a hang."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from test_alphazero import TINY, self_play
from test_alphazero_signals import flags

from rlpytorch.models.base import read_checkpoint
from rlpytorch.plot import read_columns
from rlpytorch.run.self_play import AlphaZero
from rlpytorch.training import main

# Runs the command line of argv[2:], held at its second checkpoint before
# anything of it is written (argv[1] is touched then): the first is last.pt,
# and the stats lines after it are logged.
HELD_AT_SECOND_SAVE = """
import sys, time
from pathlib import Path
from rlpytorch.run.self_play import AlphaZero
from rlpytorch.training import main

save, saves = AlphaZero.save, []

def held_save(self):
    saves.append(self.frames)
    if len(saves) == 2:
        Path(sys.argv[1]).touch()
        while True:
            time.sleep(1)
    save(self)

AlphaZero.save = held_save
main(sys.argv[2:])
"""


def csv_frames(run: Path) -> list[int]:
    return [int(f) for f in read_columns(run / "progress.csv", "frames", "frames")[0]]


def log_frames(run: Path) -> list[int]:
    """The leaf evaluations of log.txt's stats lines (its notes have none)."""
    return [int(found[1]) for line in (run / "log.txt").read_text().splitlines()
            if (found := re.search(r"(?:^| )frames=(\d+)", line))]


def tensorboard_steps(run: Path) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run))
    events.Reload()
    return [event.step for event in events.Scalars("frames")]


def test_a_self_play_run_killed_between_checkpoints_resumes_with_each_count_logged_once_in_order(tmp_path):
    run, held = tmp_path / "run", tmp_path / "held"
    process = subprocess.Popen([sys.executable, "-c", HELD_AT_SECOND_SAVE, str(held), *flags(TINY),
                                "--num_frames", "1000000000", "--save_every", "400", "--no-progress",
                                "--save_dir", str(run)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while not held.exists():
            assert process.poll() is None, process.communicate()
            time.sleep(0.01)
    finally:
        process.kill()  # SIGKILL: nothing of the run's own ending runs
        process.communicate()
    checkpoint = read_checkpoint(run / "last.pt")["resume"]["frames"]
    before = csv_frames(run)
    assert max(before) > checkpoint and max(log_frames(run)) > checkpoint  # the killed try logged past it

    main(["--resume", str(run), "--num_frames", str(checkpoint + 400)])
    frames = csv_frames(run)
    kept = [f for f in before if f <= checkpoint]
    assert frames[: len(kept)] == kept and frames[-1] >= checkpoint + 400
    assert all(a < b for a, b in zip(frames, frames[1:], strict=False)), frames
    assert log_frames(run) == frames  # each row's stats line, once
    assert tensorboard_steps(run) == frames


def test_a_batch_that_owes_several_lines_of_steps_logs_one_at_its_count(tmp_path):
    run = tmp_path / "run"
    history = self_play(num_frames=400, updates_per_batch=3, log_every=2, save_dir=str(run)).history
    frames = csv_frames(run)
    assert len(frames) > 3 and all(a < b for a, b in zip(frames, frames[1:], strict=False)), frames
    assert frames == [h["frames"] for h in history] == log_frames(run) == tensorboard_steps(run)


@pytest.mark.parametrize("broken, after, saved", [("evaluate", 300, True), ("update", 300, False),
                                                   ("evaluate", 0, False)],
                         ids=["in the games' callback", "inside an SGD step", "before the first leaf"])
def test_an_error_in_the_loop_saves_on_the_way_out_where_the_state_is_sound(tmp_path, monkeypatch, broken, after,
                                                                            saved):
    """At 300 leaf evaluations the network is training (from 168 on); at 0 there is nothing to keep."""
    run = tmp_path / "run"
    working = getattr(AlphaZero, broken)

    def breaking(self, *args):
        if self.frames >= after:
            raise RuntimeError("it broke")
        return working(self, *args)

    monkeypatch.setattr(AlphaZero, broken, breaking)
    with pytest.raises(RuntimeError, match="it broke") as error:
        self_play(num_frames=1_000_000_000, save_dir=str(run))
    if not saved:  # the training state may be half updated, or holds nothing: the try is taken back
        assert not run.exists()
        return
    assert f"--resume {run} continues the run from its last checkpoint" in error.value.__notes__
    state = read_checkpoint(run / "last.pt")["resume"]
    assert state["frames"] >= 300 and state["history"]["frames"] == state["frames"]

    monkeypatch.setattr(AlphaZero, broken, working)
    resumed = main(["--resume", str(run), "--num_frames", str(state["frames"] + 200)]).history
    assert resumed[0]["frames"] > state["frames"] and resumed[-1]["frames"] >= state["frames"] + 200


def test_a_way_out_save_that_fails_for_room_leaves_the_first_error_to_tell(tmp_path, monkeypatch):
    run = tmp_path / "run"
    evaluate = AlphaZero.evaluate

    def breaking(self, batch):
        if self.frames >= 300:
            raise RuntimeError("it broke")
        return evaluate(self, batch)

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(AlphaZero, "evaluate", breaking)
    monkeypatch.setattr(torch, "save", full_disk)
    with pytest.raises(RuntimeError, match="it broke"):
        self_play(num_frames=1_000_000_000, save_dir=str(run))
    assert not run.exists()  # no checkpoint was written: the try is taken back


def test_a_kill_between_the_replay_window_and_last_pt_leaves_a_run_that_resumes(tmp_path):
    """A save writes the window as replay.next.npz, then last.pt, then renames the
    window: killed before the rename, last.pt is the new checkpoint and replay.npz
    the old one's window; the resume takes the window that matches last.pt."""
    run = tmp_path / "run"
    self_play(num_frames=400, save_dir=str(run))
    state = read_checkpoint(run / "last.pt")["resume"]
    (run / "replay.npz").rename(run / "replay.next.npz")
    with np.load(run / "replay.next.npz", allow_pickle=False) as saved:  # the previous checkpoint's window
        older = {name: saved[name] for name in ("planes", "pi", "z")}
    np.savez_compressed(run / "replay.npz", **older, added=state["replay_added"] - 1)

    resumed = main(["--resume", str(run), "--num_frames", str(state["frames"] + 200)]).history
    assert resumed[-1]["frames"] >= state["frames"] + 200
    assert not (run / "replay.next.npz").exists()  # the resumed run's own save renamed its window
