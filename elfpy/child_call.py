"""A call into a game that may hang, made in a child process under a timeout.

A hosted game's first look (make an environment, reset it, read its spaces)
comes before any worker process exists, so the workers' step timeout cannot
cover it; a thread stuck in a game's code cannot be stopped, a process can.
`call_in_child(function, arguments, timeout_s)` runs `function(*arguments)`
in a fresh interpreter (not a fork: the caller may have threads) that
inherits this process's sys.path, and returns what it returns, raises what it
raises (with a note saying where), or kills it and raises TimeoutError once
the call has taken `timeout_s` seconds. The clock starts when the child is up
(its interpreter's start and imports are no call into the game), as a
worker's first reset is timed from when its worker serves. The function, its
arguments and its result travel through cloudpickle, so lambdas and the
user's own functions work; what the game prints goes to stderr.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

import cloudpickle

_STARTED = b"+"  # the child's first byte: it is up, and the timed call begins


def interpreter_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of a child interpreter that imports what this one does:
    this process's, with `extra` and this process's sys.path as PYTHONPATH.
    PYTHONSAFEPATH keeps `python -c` from putting the working folder first
    (Python 3.11 on): an `elfpy` there (a second checkout) would otherwise be
    the child's, and a worker of another build misreads the shared block."""
    return {**os.environ, **extra, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path),
            "PYTHONSAFEPATH": "1"}


def call_in_child(function: Callable[..., Any], arguments: tuple, timeout_s: float) -> Any:
    """`function(*arguments)` in a child process, at most `timeout_s` seconds
    once the child is up (TimeoutError after that, the child killed)."""
    process = subprocess.Popen([sys.executable, "-c", "from elfpy.child_call import child_main; child_main()"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=interpreter_environment({}))
    try:
        with process.stdin:
            process.stdin.write(cloudpickle.dumps((function, arguments)))
        answer = _answer(process.stdout.fileno(), timeout_s)
    finally:  # a timeout, Ctrl-C or an answer: the child is gone before this returns
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()
    if not answer:
        raise RuntimeError(f"the child process calling {getattr(function, '__name__', function)} died with exit "
                           f"code {process.returncode} before it answered")
    returned, value = pickle.loads(answer)
    if returned:
        return value
    raise value


def _answer(fd: int, timeout_s: float) -> bytes:
    """The child's pickled answer (empty if it died first), read within
    `timeout_s` seconds of its first byte."""
    if os.read(fd, 1) != _STARTED:
        return b""
    deadline = time.monotonic() + timeout_s
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no answer within {timeout_s} s")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def child_main() -> None:
    """The child's entry point: the call comes pickled on stdin, the answer goes
    to stdout, whose descriptor is kept for it alone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's, which then kills this process
    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the game prints goes to stderr, not into the answer
    started = False
    try:
        function, arguments = pickle.loads(sys.stdin.buffer.read())
        answer.write(_STARTED)
        answer.flush()
        started = True
        result = (True, function(*arguments))
    except Exception as error:
        where = traceback.extract_tb(error.__traceback__)[-1]
        error.add_note(f"(raised at {where.filename}:{where.lineno}, in a child process)")
        result = (False, error)
    try:
        data = cloudpickle.dumps(result)
    except Exception as error:  # an answer that cannot be pickled: its text
        data = cloudpickle.dumps((False, RuntimeError(f"the child's answer {result[1]!r} cannot be pickled: {error}")))
    answer.write((b"" if started else _STARTED) + data)
    answer.flush()
    # Skip the interpreter's teardown, as a worker does: nothing is left to free.
    sys.stderr.flush()
    os._exit(0)
