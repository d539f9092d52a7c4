"""Nothing is lost on a signal: ``python -m rlpytorch.train`` stopped by SIGINT
or SIGTERM, during training or in the middle of writing a checkpoint, saves
the frame it reached, leaves no temporary file, exits cleanly with the
status of an interrupted run (``training.INTERRUPTED``, 130), and
``--resume`` continues from that frame.

The subprocess is slowed at its first ``torch.save`` by a ``sitecustomize``
in the test's folder: it touches ``saving`` and waits for ``go``, which the
test creates only after sending the signal, so the signal arrives while the
checkpoint's temporary file is open. No step waits for a time: the test
polls for files, and pytest-timeout bounds a hang.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from elfpy.files import TEMPORARY_FILES, append_line, deferred_signals, write_text_atomically
from rlpytorch import training
from rlpytorch.models.base import read_checkpoint
from rlpytorch.run.single_process import SingleProcessRun

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--game", "cartpole", "--num_games", "8", "--actor_batch", "8", "--train_batch", "8", "--num_threads", "1",
         "--no-progress", "--no-eval_at_end", "--log_every", "500"]

PAUSE_AT_FIRST_SAVE = '''
import os, time
from pathlib import Path
import torch

_save, _paused = torch.save, []

def save(*args, **kwargs):
    if not _paused:
        _paused.append(True)
        folder = Path(os.environ["PAUSE_SAVE_IN"])
        (folder / "saving").touch()
        while not (folder / "go").exists():
            time.sleep(0.01)
    return _save(*args, **kwargs)

torch.save = save
'''


@pytest.fixture
def start_training(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """Starts ``python -m rlpytorch.train`` in ``tmp_path``, paused at its first
    save until the test creates ``go``. Whatever a failed test leaves running is
    killed at teardown: a run paused in its save holds SIGTERM off."""
    started = []

    def start(*extra: str, own_group: bool = False) -> subprocess.Popen:
        (tmp_path / "sitecustomize.py").write_text(PAUSE_AT_FIRST_SAVE)
        env = {**os.environ, "PAUSE_SAVE_IN": str(tmp_path),
               "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")])}
        command = [sys.executable, "-m", "rlpytorch.train", *SMALL, "--num_frames", "100000000",
                   "--save_dir", str(tmp_path / "run"), *extra]
        process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=own_group)
        started.append((process, own_group))
        return process

    yield start
    for process, own_group in started:
        if process.poll() is None:
            if own_group:
                os.killpg(process.pid, signal.SIGKILL)  # the learner process too
            else:
                process.kill()
            process.communicate()


def wait_for(path: Path, process: subprocess.Popen) -> None:
    while not path.exists():
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)


def stats_lines(run: Path) -> list[str]:
    log = run / "log.txt"
    return [line for line in log.read_text().splitlines() if line.startswith("F ")] if log.exists() else []


def stopped_frames(stdout: str) -> int:
    """The frame a stopped run says it stopped at ("stopped by a signal at frame 1,200: ...")."""
    line = next(line for line in stdout.splitlines() if line.startswith("stopped by a signal at frame "))
    return int(line.split()[6].rstrip(":").replace(",", ""))


def check_stopped_cleanly(process: subprocess.Popen, run: Path) -> int:
    """The run exited as interrupted without a traceback, left no temporary file,
    and its last.pt holds the frame it says it trained; returns that frame."""
    stdout, stderr = process.communicate()
    assert process.returncode == training.INTERRUPTED, stderr
    assert "Traceback" not in stderr, stderr
    assert not list(run.glob(TEMPORARY_FILES))
    frames = stopped_frames(stdout)
    assert frames > 0
    assert read_checkpoint(run / "last.pt")["resume"]["trainer"]["frames"] == frames
    return frames


def check_resumes_at(run: Path, frames: int) -> None:
    result = training.main(["--resume", str(run), "--num_frames", str(frames + 500), "--no-progress"])
    assert result.summary.frames >= frames + 500
    assert f"resumed from {run / 'last.pt'} at {frames:,} frames" in (run / "log.txt").read_text()


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_checkpoint_lets_it_land_then_stops_and_resumes_there(tmp_path, start_training, number):
    process = start_training("--save_every", "1000")
    wait_for(tmp_path / "saving", process)  # model_<frames>.pt's temporary file is open
    run = tmp_path / "run"
    assert list(run.glob(TEMPORARY_FILES))
    process.send_signal(number)
    (tmp_path / "go").touch()
    frames = check_stopped_cleanly(process, run)
    assert (run / f"model_{frames}.pt").exists()  # the checkpoint under way was written, and no step after it
    check_resumes_at(run, frames)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_training_saves_the_frame_reached(tmp_path, start_training, number):
    process = start_training("--save_every", "0")
    (tmp_path / "go").touch()  # no pause: the only save is the final one
    run = tmp_path / "run"
    while len(stats_lines(run)) < 2:
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)
    process.send_signal(number)
    frames = check_stopped_cleanly(process, run)
    assert frames >= 1000
    check_resumes_at(run, frames)


def test_sigterm_to_every_process_of_a_multi_process_run_keeps_the_learners_state(tmp_path, start_training):
    """A job manager's SIGTERM reaches the learner process too: it ignores it,
    so it can still send its state (optimizer, counts) for the final save."""
    process = start_training("--runner", "multi", "--save_every", "0", own_group=True)
    (tmp_path / "go").touch()
    run = tmp_path / "run"
    while len(stats_lines(run)) < 2:
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGTERM)
    frames = check_stopped_cleanly(process, run)
    assert read_checkpoint(run / "last.pt")["resume"]["trainer"]["updates"] > 0
    assert frames >= 1000


@pytest.mark.parametrize("signals", [1, 2])
def test_a_stop_signal_ends_the_loop_after_the_batch_at_hand_and_a_second_at_once(trainer, tmp_path, signals):
    steps = []

    def step():
        steps.append("started")
        for _ in range(signals):
            os.kill(os.getpid(), signal.SIGTERM)
        steps.append("finished")

    before = signal.getsignal(signal.SIGTERM)
    summary = SingleProcessRun(trainer, save_dir=tmp_path, progress=False).loop(lambda: None, step, lambda: None)
    assert summary.interrupted and (tmp_path / "last.pt").exists()
    assert steps == ["started", "finished"] if signals == 1 else ["started"]
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_held_signal_is_delivered_once_the_block_ends():
    caught = []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: caught.append(number))
    try:
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            assert caught == []
        assert caught == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_files_land_whole_and_lines_are_appended_whole(tmp_path):
    path = tmp_path / "a.yaml"
    write_text_atomically(path, "x: 1\n")
    write_text_atomically(path, "x: 2\n")
    assert path.read_text() == "x: 2\n" and os.listdir(tmp_path) == ["a.yaml"]
    append_line(tmp_path / "log.txt", "one")
    append_line(tmp_path / "log.txt", "two")
    assert (tmp_path / "log.txt").read_text() == "one\ntwo\n"
