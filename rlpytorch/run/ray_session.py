"""The launcher's Ray (``rlpytorch.launch --backend ray``): a Ray it starts ends with it.

``ray_session`` connects for the sweep: to the Ray the caller initialized, to
the cluster at ``--ray_address`` (else ``RAY_ADDRESS``, else one running on this
machine), or else to a Ray it starts on this machine. That last one is shut
down when the sweep ends, however it ends: ``ray.shutdown()`` when the
launcher returns or raises; when the launcher is killed outright (SIGKILL),
Ray's own processes end with it but for two (its dashboard and runtime-env
agents, whose exit hangs once the raylet is gone), and a guard process ends
those. Started beside Ray, in a session of its own, the guard learns Ray's
session folder, waits until the launcher closes a pipe (which the kernel
closes when the launcher dies), and kills every process that still holds a
file in that folder (each of Ray's holds its logs there; Ray renames its
processes, so neither their names nor their environment would tell). The runs
hold none: they stop by themselves, saved (``rlpytorch.run.launcher_watch``).

A Ray worker that exits kills its children by default (SIGKILL), which would
lose a run's last frames each time a sweep ends early; the tasks turn that
off (``RUNS_OUTLIVE_THEIR_WORKER``) so that a run whose task ends without
stopping it sees its parent gone and stops itself the way a stopped run does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["RUNS_OUTLIVE_THEIR_WORKER", "ray_session"]

# The runtime environment of the launcher's tasks: the worker leaves its children
# (the runs) alone when it exits, so that they save (Ray's documented switch).
RUNS_OUTLIVE_THEIR_WORKER = {"env_vars": {"RAY_kill_child_processes_on_worker_exit": "0"}}


@contextlib.contextmanager
def ray_session(ray: Any, address: str) -> Iterator[None]:
    """Ray for the block: the caller's if it initialized Ray, else the cluster
    at ``address`` or the one ``ray.init`` finds, else a Ray started here, which
    ends with the block or with this process."""
    if ray.is_initialized():
        yield
        return
    guard = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, start_new_session=True)
    try:
        context = ray.init(address=address or None, log_to_driver=False)
        folder = getattr(context, "address_info", {}).get("session_dir")  # none through Ray Client (ray://)
        try:
            if folder and set(_children()) & set(_holding_files_in(folder)):  # ray.init started it: our own
                guard.stdin.write(folder.encode())
                guard.stdin.flush()
            yield
        finally:
            ray.shutdown()
    finally:
        guard.stdin.close()  # the guard ends what shutdown left, then itself
        guard.wait()


def _children() -> list[int]:
    """This process's children (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):  # ended meanwhile
            if int(stat.read_text().rpartition(")")[2].split()[1]) == os.getpid():
                found.append(int(stat.parent.name))
    return found


def _holding_files_in(folder: str) -> list[int]:
    """The processes of this machine with a file open in ``folder`` (Linux's /proc)."""
    found = []
    for fds in Path("/proc").glob("[0-9]*/fd"):
        with contextlib.suppress(OSError):  # ended meanwhile, or not ours to read
            if any(os.readlink(fd).startswith(folder + os.sep) for fd in fds.iterdir()):
                found.append(int(fds.parent.name))
    return found


def guard() -> None:
    """Read Ray's session folder (none: not a Ray of the launcher's own) until the
    launcher closes the pipe or dies, then kill every process left of that Ray
    (the launcher aside: as Ray's driver it holds its log there as it exits)."""
    launcher = os.getppid()
    folder = sys.stdin.buffer.read().decode()
    if folder:
        for pid in set(_holding_files_in(folder)) - {launcher, os.getpid()}:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    guard()
