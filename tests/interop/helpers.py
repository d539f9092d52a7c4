"""Shared helpers for the tests of Python-hosted games."""

from __future__ import annotations

import os
import time

import pytest


def memfd_count() -> int:
    """Shared blocks this process still holds (memfds show up as fd links)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += "elf-gym-board" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return count


def assert_released(pids: list[int]) -> None:
    """The worker processes are gone (exited and reaped) and no shared block is held."""
    assert pids
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already reaped: no such child
        assert not os.path.exists(f"/proc/{pid}")
    assert memfd_count() == 0


def wait_until_dead(pid: int) -> None:
    """Blocks until process `pid` (a child not yet reaped) is a zombie."""
    while open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)


def wait_for_file(path) -> None:
    """Blocks until `path` exists (a worker's sign that it reached a point)."""
    while not os.path.exists(path):
        time.sleep(0.01)
