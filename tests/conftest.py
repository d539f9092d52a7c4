"""Fixtures shared by every test folder."""

import contextlib
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
import torch
from hypothesis import settings

# The suite is deterministic: property tests draw the same examples on every
# run, so a CI run cannot fail on a draw no earlier run made. To search for
# new failing examples, run with HYPOTHESIS_PROFILE=explore (random draws)
# and turn each one found into a plain test. No example is timed (deadline=None):
# Hypothesis's default 200 ms deadline per example fails on a loaded machine.
settings.register_profile("suite", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

# The stop-signal tests send SIGINT to the runs they start. A shell without job
# control starts a background command (`bash .ci/run &`) with SIGINT ignored, the
# children inherit that, and a run keeps an ignored signal ignored (as nohup's
# SIGHUP): the tests would wait for a run that never stops. A handler is not
# inherited across exec, so with one here every child starts with the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def one_torch_thread():
    """Torch's spinning intra-op threads beside the engine's worker slow a
    2-core machine several times over (train.py and evaluate.py use 1)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class MarkedProcesses:
    """The processes started with ``env`` (a unique variable in the environment,
    which every process they start in turn inherits, Ray's and multiprocessing's
    included): Linux's /proc tells which of them are still running."""

    def __init__(self) -> None:
        self.variable = f"ELF_TEST_MARK={uuid.uuid4().hex}"
        name, _, value = self.variable.partition("=")
        self.env = {**os.environ, name: value}

    def alive(self) -> dict[int, str]:
        """pid -> command line of each marked process still running (a zombie has ended)."""
        found = {}
        for folder in Path("/proc").glob("[0-9]*"):
            try:
                marked = self.variable.encode() in (folder / "environ").read_bytes().split(b"\0")
                state = (folder / "stat").read_text().rpartition(")")[2].split()[0]
                if marked and state != "Z":
                    found[int(folder.name)] = (folder / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                pass  # ended meanwhile, or another user's
        return found

    def wait_until_none_alive(self) -> None:
        """Returns once every marked process has ended (pytest-timeout bounds a process that stays)."""
        while self.alive():
            time.sleep(0.1)


@pytest.fixture
def marked_processes():
    """``MarkedProcesses``; any of them still running at the test's end is killed."""
    marked = MarkedProcesses()
    yield marked
    for pid in marked.alive():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
