"""A run the launcher started ends with the launcher, saved.

The launcher starts each run in a session of its own (so that a terminal's
Ctrl-C reaches a run once, through the launcher) and names itself in the run's
environment (``LAUNCHER_PID``; under Ray, the task's worker process names
itself). Should the launcher die without stopping its runs (SIGKILL, the
out-of-memory killer, a lost job slot), each run sends itself SIGTERM the
moment its parent is gone (``elfpy.parent_watch``): it saves and ends as
interrupted, as if the launcher had stopped it, and the same launch command
resumes it. Without this the runs would go on training unseen, holding their
cores, and a new launch would start second copies beside them.
"""

from __future__ import annotations

import os
import signal

from elfpy.parent_watch import signal_when_parent_exits

__all__ = ["LAUNCHER_PID", "watch_launcher"]

LAUNCHER_PID = "RLPYTORCH_LAUNCHER_PID"


def watch_launcher() -> None:
    """When started by the launcher: SIGTERM to this process once the launcher is gone
    (the run's stop handler runs in its main thread: it saves and ends). The variable
    is taken out of the environment, so the run's own children do not inherit it."""
    launcher = os.environ.pop(LAUNCHER_PID, None)
    if launcher is not None:
        signal_when_parent_exits(int(launcher), signal.SIGTERM)
