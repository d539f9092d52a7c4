"""Files that land whole: what the library writes for later reading.

A file read back later (a checkpoint, ``config.yaml``, ``run.yaml``, a
rewritten ``progress.csv``) is written by ``write_atomically``: into a
temporary file in the same folder, flushed to disk, then moved into place with
``os.replace``, with SIGINT and SIGTERM held off meanwhile
(``deferred_signals``). A reader finds the old file or the new one, never a
part; a Ctrl-C or ``kill`` during the write takes effect once the file is in
place, and no temporary file stays behind (on any other failure it is removed;
one left by SIGKILL, which nothing can hold off, is removed by the next run
in the folder: ``rlpytorch.run.run_dir.write_run_files``). Its cost: about 1 ms a file.
A writer that wants a file name (imageio, matplotlib) gets one from
``atomic_path``, the same mechanism: SGF records, pictures, plots and videos
land whole too.

A log that grows line by line (``log.txt``, ``progress.csv``'s rows) gets
each line by ``append_line``: one ``write`` of the whole line to a file opened
for appending, then ``fsync``. A line is then either in the file whole or not
at all, whatever signal arrives; only a crash of the machine (or a full disk)
inside that one write could leave a part of the last line. Its cost: about
0.3 ms a line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["TEMPORARY_FILES", "append_line", "atomic_path", "deferred_signals", "stop_signals_handled",
           "write_atomically", "write_text_atomically"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
TEMPORARY_FILES = ".*.tmp*"  # the names of atomic_path's temporary files (a glob)


@contextlib.contextmanager
def stop_signals_handled(handler: Callable[[int], Any]) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM call ``handler(signal number)``;
    the previous handlers are put back after it. A signal the process ignores
    stays ignored. Outside the main thread, where Python runs no signal
    handler, it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for number in STOP_SIGNALS:
        # None: a handler set outside Python, which it could not put back
        if signal.getsignal(number) not in (None, signal.SIG_IGN):
            previous[number] = signal.signal(number, lambda number, frame: handler(number))
    try:
        yield
    finally:
        for number, handler_before in previous.items():
            signal.signal(number, handler_before)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver them to the
    handlers in place before it (Ctrl-C's ``KeyboardInterrupt``, a run's stop
    handler, or the default: the process ends). Nested blocks deliver to the
    enclosing block, which holds them in turn. When the block raises, its
    exception ends the work and the held signals are dropped."""
    arrived: list[int] = []
    with stop_signals_handled(arrived.append):
        yield
    for number in dict.fromkeys(arrived):
        signal.raise_signal(number)  # the restored handler runs now (and may raise)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# The mode a plain open() would give a new file: read and write for all, less the umask.
_CREATED_MODE = 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary file name next to ``path`` for a writer that wants a name
    rather than a file object (it ends in ``path``'s suffix, by which libraries
    such as imageio choose a format). When the block ends, the file is flushed
    to disk and moved to ``path``; if the block raises, it is removed. SIGINT
    and SIGTERM are held off meanwhile."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with deferred_signals():
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".tmp{path.suffix}")
        os.close(fd)
        tmp = Path(name)  # matches TEMPORARY_FILES
        try:
            yield tmp
            with open(tmp, "rb") as written:
                os.fsync(written.fileno())
            os.chmod(tmp, _CREATED_MODE)  # mkstemp's 0600 would hide the file from other users
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def write_atomically(path: str | Path, write: Callable[[IO[bytes]], Any]) -> None:
    """Write ``path`` whole or not at all: ``write(file)`` fills a temporary
    file next to it, which is flushed to disk and moved into place."""
    with atomic_path(path) as tmp, open(tmp, "wb") as file:
        write(file)


def write_text_atomically(path: str | Path, text: str) -> None:
    """``write_atomically`` for text (UTF-8)."""
    write_atomically(path, lambda f: f.write(text.encode()))


def append_line(path: str | Path, line: str) -> None:
    """Append ``line`` (a newline added) to ``path`` in one write, then flush it to disk."""
    data = (line + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        written = os.write(fd, data)
        if written != len(data):  # a regular file takes a whole write unless the disk is full
            raise OSError(f"{path}: wrote {written} of {len(data)} bytes (disk full?)")
        os.fsync(fd)
    finally:
        os.close(fd)
