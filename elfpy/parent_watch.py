"""Helper processes that end with the process that started them.

A process of the platform that serves another (a hosted game's worker, a
training's learner, a run the launcher started) must not outlive it: should
its parent die without stopping it (SIGKILL, the out-of-memory killer), it
would go on holding cores and memory with nobody to serve, or block for ever
writing into a pipe nobody reads. `signal_when_parent_exits` sends the process
a signal once its parent is gone: SIGKILL for a helper with nothing of its own
to save, SIGTERM for a run, which saves and ends.

The wait is on a pidfd (Linux 5.3 and later), which becomes readable the moment
the parent ends, in a daemon thread: it acts whatever the main thread is doing
(inside a long step, blocked on a lock the dead parent held). It follows the
parent process, not the thread that started this one, as Linux's
``PR_SET_PDEATHSIG`` would: a context made in a thread that has ended since
keeps its workers. Where there is no pidfd the thread polls the parent's pid.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time

__all__ = ["signal_when_parent_exits", "wait_for_parent_exit"]

_POLL_S = 0.2  # where there is no pidfd: how often the parent's pid is checked


def wait_for_parent_exit(parent: int) -> None:
    """Block until process ``parent``, this process's parent, has ended (at once if it already has)."""
    try:
        handle = os.pidfd_open(parent)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        while os.getppid() == parent:
            time.sleep(_POLL_S)
        return
    try:
        # Still our parent once opened: the pidfd is the parent's, not that of a
        # process given its pid after it ended.
        if os.getppid() == parent:
            select.select([handle], [], [])
    finally:
        os.close(handle)


def signal_when_parent_exits(parent: int, number: signal.Signals, delay_s: float = 0.0) -> None:
    """Send ``number`` to this process ``delay_s`` seconds after its parent ``parent``
    ended (a delay lets a process that notices by itself exit cleanly first)."""
    def watch() -> None:
        wait_for_parent_exit(parent)
        time.sleep(delay_s)
        os.kill(os.getpid(), number)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
