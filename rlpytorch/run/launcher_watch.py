"""A run the launcher started ends with the launcher, saved.

The launcher starts each run in a session of its own (so that a terminal's
Ctrl-C reaches a run once, through the launcher) and names itself in the run's
environment (``LAUNCHER_PID``). Should the launcher die without stopping its
runs (SIGKILL, the out-of-memory killer, a lost job slot), each run notices
that its parent changed and sends itself SIGTERM: it saves and ends as
interrupted, as if the launcher had stopped it, and the same launch command
resumes it. Without this the runs would go on training unseen, holding their
cores, and a new launch would start second copies beside them.

A poll (a daemon thread, once a second) rather than Linux's
``PR_SET_PDEATHSIG``: that one follows the thread that started the process,
not the process, and exists on Linux only; the engine's hosted game workers
watch their parent the same way.
"""

from __future__ import annotations

import os
import signal
import threading
import time

__all__ = ["LAUNCHER_PID", "watch_launcher"]

LAUNCHER_PID = "RLPYTORCH_LAUNCHER_PID"
POLL_SECONDS = 1.0


def watch_launcher() -> None:
    """When started by the launcher: SIGTERM to this process once the launcher is gone.
    The variable is taken out of the environment, so the run's own children do not inherit it."""
    launcher = os.environ.pop(LAUNCHER_PID, None)
    if launcher is not None:
        threading.Thread(target=_end_with, args=(int(launcher),), name="launcher-watch", daemon=True).start()


def _end_with(launcher: int) -> None:
    while os.getppid() == launcher:
        time.sleep(POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)  # the run's stop handler runs in its main thread: it saves and ends
