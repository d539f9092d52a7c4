"""A run folder's life: one writer at a time, one history after ``--resume``,
and a folder that is usable however the run ends (a signal at any moment, a
game error, a full disk, a removed folder, a damaged ``run.yaml``).

The trainings run as subprocesses, held at a chosen moment by a
``sitecustomize`` in the test's folder (``PAUSE_AT``): it touches ``paused``
and waits for ``go``, so a signal or a kill arrives exactly there. No step
waits for a time: the tests poll for files, and pytest-timeout bounds a hang.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
import yaml

import rlpytorch
from rlpytorch import training
from rlpytorch.models.base import read_checkpoint

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--game", "cartpole", "--num_games", "8", "--actor_batch", "8", "--train_batch", "8", "--num_threads", "1",
         "--no-progress", "--no-eval_at_end", "--log_every", "200"]

SITECUSTOMIZE = '''
import os, time
from pathlib import Path

def _pause():
    folder = Path(os.environ["PAUSE_IN"])
    (folder / "paused").touch()
    while not (folder / "go").exists():
        time.sleep(0.01)

_point, _, _count = os.environ.get("PAUSE_AT", "").partition(":")
if _point == "save":  # the N-th torch.save into a file (a checkpoint; not the learner's state it sends)
    import torch
    _save, _saves = torch.save, []
    def _paused_save(state, file, *args, **kwargs):
        if hasattr(file, "name"):
            _saves.append(1)
            if len(_saves) == int(_count):
                _pause()
        return _save(state, file, *args, **kwargs)
    torch.save = _paused_save
elif _point == "run.yaml":  # once the run's files are written, before the run is built
    import elfpy.files
    _write = elfpy.files.write_text_atomically
    def _paused_write(path, text):
        _write(path, text)
        if str(path).endswith("run.yaml"):
            _pause()
    elfpy.files.write_text_atomically = _paused_write
elif _point == "loop":  # built, before the training loop starts (under --runner multi: the learner spawned)
    from rlpytorch.run.single_process import SingleProcessRun
    _loop = SingleProcessRun.loop
    def _paused_loop(self, *args):
        _pause()
        return _loop(self, *args)
    SingleProcessRun.loop = _paused_loop

if os.environ.get("FAIL_GAME_AFTER"):  # a game that fails after that many steps of each environment
    import gymnasium
    from gymnasium.envs.classic_control import CartPoleEnv

    class FailingCartPole(CartPoleEnv):
        steps = 0
        def step(self, action):
            FailingCartPole.steps += 1
            if FailingCartPole.steps > int(os.environ["FAIL_GAME_AFTER"]):
                raise RuntimeError("the game broke")
            return super().step(action)

    gymnasium.register("FailingCartPole-v0", entry_point=FailingCartPole, max_episode_steps=200)
'''


@pytest.fixture
def start_training(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """Starts ``python -m rlpytorch.train`` into ``tmp_path/run`` in a process
    group of its own (a multi-process run's learner with it), held at
    ``pause_at``; whatever a failed test leaves running is killed at teardown."""
    started = []

    def start(*extra: str, pause_at: str = "", env: dict | None = None, frames: int = 100_000_000,
              save_dir: Path | None = None) -> subprocess.Popen:
        (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
        environment = {**os.environ, "PAUSE_IN": str(tmp_path), "PAUSE_AT": pause_at, **(env or {}),
                       "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")])}
        command = [sys.executable, "-m", "rlpytorch.train", *SMALL, "--num_frames", str(frames),
                   "--save_dir", str(save_dir or tmp_path / "run"), *extra]
        process = subprocess.Popen(command, env=environment, cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()


def wait_for(path: Path, process: subprocess.Popen) -> None:
    while not path.exists():
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)


def csv_frames(run: Path) -> list[float]:
    rows = (run / "progress.csv").read_text().splitlines()
    column = rows[0].split(",").index("frames")
    return [float(row.split(",")[column]) for row in rows[1:]]


def log_frames(run: Path) -> list[int]:
    return [int(line.split()[1].replace(",", "")) for line in (run / "log.txt").read_text().splitlines()
            if line.startswith("F ")]


def tensorboard_steps(run: Path) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run))
    events.Reload()
    return [event.step for event in events.Scalars("frames")]


def strictly_increasing(values: list) -> bool:
    return all(a < b for a, b in zip(values, values[1:], strict=False))


def one_line_error(command: list[str]) -> str:
    """What the command line prints for ``command`` (train's arguments): one line, no traceback."""
    with pytest.raises(SystemExit) as exit_:
        training.command_line(training.main, training.PROG, command)
    message = str(exit_.value.code)
    assert message.startswith(f"{training.PROG}: error: ") and "\n" not in message, message
    return message


# One writer per folder.

@pytest.mark.parametrize("runner", ["single", "multi"])
def test_a_second_run_on_a_folder_in_use_is_refused_naming_the_process_that_holds_it(tmp_path, start_training,
                                                                                      runner):
    process = start_training("--runner", runner, "--save_every", "1000", pause_at="save:1")
    run = tmp_path / "run"
    wait_for(tmp_path / "paused", process)
    config = (run / "config.yaml").read_bytes()
    message = one_line_error([*SMALL, "--num_frames", "500", "--save_dir", str(run)])
    # The process that writes the folder holds it: under --runner multi the engine's, not the learner's.
    assert f"--save_dir {run} is in use by process {process.pid}" in message
    assert (run / "config.yaml").read_bytes() == config  # the second try wrote nothing into it
    os.killpg(process.pid, signal.SIGKILL)  # the kernel drops its lock: no stale lock survives
    process.communicate()
    with pytest.raises(ValueError, match="already holds a run"):  # refused for what it holds, not for a lock
        rlpytorch.train(rlpytorch.config(game="cartpole", num_frames=500, save_dir=str(run)))


# Resume continues one history.

@pytest.mark.parametrize("runner", ["single", "multi"])
def test_a_run_killed_between_checkpoints_resumes_with_each_frame_logged_once_in_order(tmp_path, start_training,
                                                                                       runner):
    # Held at the second checkpoint: the first one is last.pt, and rows past it are logged.
    process = start_training("--runner", runner, "--save_every", "1000", pause_at="save:3")
    run = tmp_path / "run"
    wait_for(tmp_path / "paused", process)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
    checkpoint = read_checkpoint(run / "last.pt")["resume"]["trainer"]["frames"]
    before = csv_frames(run)
    assert max(before) > checkpoint and max(log_frames(run)) > checkpoint  # the killed try logged past it

    training.main(["--resume", str(run), "--num_frames", str(checkpoint + 1000)])
    frames = csv_frames(run)
    assert strictly_increasing(frames) and frames[-1] >= checkpoint + 1000
    assert frames[: len([f for f in before if f <= checkpoint])] == [f for f in before if f <= checkpoint]
    assert strictly_increasing(log_frames(run))
    steps = tensorboard_steps(run)
    assert strictly_increasing(steps) and steps == [int(f) for f in frames]


def test_a_finished_run_resumed_for_more_frames_keeps_its_last_line_and_notes(tmp_path):
    run = tmp_path / "run"
    training.main([*SMALL, "--num_frames", "900", "--save_every", "0", "--save_dir", str(run)])
    log = (run / "log.txt").read_text()
    training.main(["--resume", str(run), "--num_frames", "1800"])
    assert (run / "log.txt").read_text().startswith(log)  # its final stats line and "trained ..." stay
    assert strictly_increasing(csv_frames(run)) and strictly_increasing(log_frames(run))


# A folder is always usable.

def test_sigterm_before_the_run_is_built_leaves_no_folder_and_one_line(tmp_path, start_training):
    process = start_training(pause_at="run.yaml")
    wait_for(tmp_path / "paused", process)
    assert (tmp_path / "run" / "config.yaml").exists()
    process.send_signal(signal.SIGTERM)
    (tmp_path / "go").touch()
    _, stderr = process.communicate()
    assert process.returncode == training.INTERRUPTED
    assert "Traceback" not in stderr and stderr.strip().splitlines()[-1] == (
        f"{training.PROG}: interrupted; nothing of the run was kept: the same command starts it again in "
        f"{tmp_path / 'run'}")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("runner", ["single", "multi"])
def test_sigterm_before_the_loop_starts_stops_it_at_once_saved_and_resumable(tmp_path, start_training, runner):
    """Under --runner multi the learner is running by then: the run stops it as at any stop."""
    process = start_training("--runner", runner, pause_at="loop")
    wait_for(tmp_path / "paused", process)
    process.send_signal(signal.SIGTERM)
    (tmp_path / "go").touch()
    stdout, stderr = process.communicate()
    run = tmp_path / "run"
    assert process.returncode == training.INTERRUPTED and "Traceback" not in stderr, stderr
    assert f"saved {run / 'last.pt'} (weights and training state at frame 0)" in stdout
    assert f"to go on: {training.PROG} --resume {run}" in stdout
    assert read_checkpoint(run / "last.pt")["resume"]["trainer"]["frames"] == 0
    assert training.main(["--resume", str(run), "--num_frames", "300"]).summary.frames >= 300


def test_a_game_error_after_some_frames_leaves_a_checkpoint_that_resume_continues(tmp_path, start_training):
    process = start_training("--game", "gym:FailingCartPole-v0", "--num_workers", "1", "--save_every", "0",
                             env={"FAIL_GAME_AFTER": "300"})
    _, stderr = process.communicate()
    run = tmp_path / "run"
    assert process.returncode == 1 and "the game broke" in stderr, stderr
    assert f"--resume {run} continues the run from its last checkpoint" in stderr
    state = read_checkpoint(run / "last.pt")["resume"]
    assert state["trainer"]["frames"] > 0 and state["history"]["frames"] == state["trainer"]["frames"]


def test_a_folder_removed_mid_run_ends_it_in_one_line_and_is_not_made_again(tmp_path, start_training):
    process = start_training("--save_every", "1000", pause_at="save:1")
    run = tmp_path / "run"
    wait_for(tmp_path / "paused", process)
    for path in sorted(run.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    run.rmdir()
    (tmp_path / "go").touch()
    _, stderr = process.communicate()
    assert process.returncode == 1
    assert stderr.strip().splitlines() == [f"{training.PROG}: error: {run} was removed while in use"]
    assert not run.exists()


def test_resume_with_a_damaged_run_yaml_is_one_line_and_writes_nothing(tmp_path):
    run = tmp_path / "run"
    training.main([*SMALL, "--num_frames", "500", "--save_dir", str(run)])
    (run / "run.yaml").write_text("command: [unclosed\n")
    before = {path.name: path.read_bytes() for path in run.iterdir()}
    message = one_line_error(["--resume", str(run), "--num_frames", "1000"])
    assert f"{run / 'run.yaml'} is damaged" in message
    assert {path.name: path.read_bytes() for path in run.iterdir()} == before


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS])
def test_a_save_that_fails_for_room_or_permission_is_one_line_and_takes_the_try_back(tmp_path, monkeypatch, error):
    run = tmp_path / "run"
    training.main([*SMALL, "--num_frames", "500", "--save_dir", str(run)])
    before = {name: (run / name).read_bytes() for name in ("config.yaml", "run.yaml", "last.pt")}

    def failing_save(*args, **kwargs):
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(torch, "save", failing_save)
    message = one_line_error(["--resume", str(run), "--num_frames", "1500", "--save_every", "400"])
    assert f"cannot write into {run}: {os.strerror(error)}" in message
    assert f"--resume {run} continues the run from its last checkpoint" in message
    assert {name: (run / name).read_bytes() for name in before} == before  # config.yaml not rewritten
    assert yaml.safe_load((run / "config.yaml").read_text())["num_frames"] == 500

    new = tmp_path / "new"
    message = one_line_error([*SMALL, "--num_frames", "1000", "--save_dir", str(new)])
    assert re.search(f"cannot write into {new}: .*nothing of the run was kept", message)
    assert not new.exists()
