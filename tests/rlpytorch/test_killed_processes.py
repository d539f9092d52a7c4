"""Whatever process of a multi-process training is killed (SIGKILL: it cannot
stop the others), every other process of it ends: the main process, the learner,
the hosted game's workers and multiprocessing's resource tracker. A learner or
worker killed ends the run with one line naming it.

Each test polls the process table until the run's processes are gone; a process
that stays is caught by pytest-timeout (and killed by the fixture)."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

TRAIN = [sys.executable, "-m", "rlpytorch.train", "--game", "gym:CartPole-v1", "--num_workers", "2",
         "--runner", "multi", "--num_games", "4", "--actor_batch", "4", "--train_batch", "4", "--num_threads", "1",
         "--num_frames", "1000000000", "--log_every", "200", "--no-progress", "--no-eval_at_end"]


def started_training(tmp_path, marked_processes) -> tuple[subprocess.Popen, dict[int, str]]:
    """A training under way (stats written: the learner has learned), and its processes."""
    run = subprocess.Popen([*TRAIN, "--save_dir", str(tmp_path / "run")], env=marked_processes.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not (tmp_path / "run" / "progress.csv").exists():
        assert run.poll() is None, run.communicate()
        time.sleep(0.1)  # polls for a file; pytest-timeout bounds a hang
    return run, marked_processes.alive()


def one_of(processes: dict[int, str], part: str) -> int:
    (pid, *_) = [pid for pid, command in processes.items() if part in command]
    return pid


def test_killing_the_main_process_ends_the_learner_the_workers_and_the_resource_tracker(tmp_path,
                                                                                       marked_processes):
    run, processes = started_training(tmp_path, marked_processes)
    for part in ("spawn_main", "resource_tracker", "worker_main"):
        one_of(processes, part)  # each is there to be ended
    run.kill()
    run.communicate()
    marked_processes.wait_until_none_alive()


@pytest.mark.parametrize("victim, message", [
    ("spawn_main", r"learner process failed: exited unexpectedly \(killed by SIGKILL\)"),
    ("worker_main", r"game 'gym:CartPole-v1': worker process \d \(pid \d+, games \d-\d\) died with exit code -9"),
], ids=["learner", "hosted worker"])
def test_killing_the_learner_or_a_worker_ends_the_run_in_one_line_naming_it(tmp_path, marked_processes, victim,
                                                                             message):
    run, processes = started_training(tmp_path, marked_processes)
    os.kill(one_of(processes, victim), signal.SIGKILL)
    _, stderr = run.communicate()
    assert run.returncode == 1
    (line,) = stderr.splitlines()
    assert line.startswith("python -m rlpytorch.train: error: ")
    assert re.search(message, line), line
    marked_processes.wait_until_none_alive()
