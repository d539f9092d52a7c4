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
A signal that arrives before the code that handles it is in place
(``stops_passed_on``: a run's loop, not started yet) is kept and given to
that handler as it is installed.
A writer that wants a file name (imageio, matplotlib) gets one from
``atomic_path``, the same mechanism: SGF records, pictures, plots and videos
land whole too.

A log that grows line by line (``log.txt``, ``progress.csv``'s rows) gets
each line by ``append_line``: one ``write`` of the whole line to a file opened
for appending, then ``fsync``. A line is then either in the file whole or not
at all, whatever signal arrives; only a crash of the machine (or a full disk)
inside that one write could leave a part of the last line. Its cost: about
0.3 ms a line.

A folder that one process writes into at a time (a run's folder, a sweep's)
is held by ``lock_folder``: an OS file lock (``fcntl.flock``) on ``.lock`` in
it, which the kernel drops when the process ends however it ends, so no lock
outlives a crash or a ``kill -9``. A second writer is refused
(``FolderInUseError``), in one line naming the folder and the holder's pid.
``writing_into`` turns what can go wrong while writing into such a folder
(it was removed, the disk is full, it became read-only) into one line
(``FolderError``), and never re-creates a folder that vanished.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["LOCK_FILE", "TEMPORARY_FILES", "FolderError", "FolderGoneError", "FolderInUseError", "FolderLock",
           "append_line", "atomic_path", "deferred_signals", "lock_folder", "stop_signals_handled",
           "stops_passed_on", "write_atomically", "write_text_atomically", "writing_into"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
TEMPORARY_FILES = ".*.tmp*"  # the names of atomic_path's temporary files (a glob)
LOCK_FILE = ".lock"  # lock_folder's file in the folder it holds


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
        if _waiting_stops and _waiting_stops[-1]:  # signals a stops_passed_on block kept for this handler
            waiting = list(dict.fromkeys(_waiting_stops[-1]))
            _waiting_stops[-1].clear()
            for number in waiting:
                handler(number)
        yield
    finally:
        for number, handler_before in previous.items():
            signal.signal(number, handler_before)


_waiting_stops: list[list[int]] = []  # per stops_passed_on block, the signals kept for the next handler


@contextlib.contextmanager
def stops_passed_on() -> Iterator[None]:
    """Within the block, a SIGINT or SIGTERM waits for the next handler that
    ``stop_signals_handled`` installs in it (a run's loop, which then stops
    after its first batch and saves), which gets it as it is installed; one no
    handler took is delivered, when the block ends, to the handler in place
    before it."""
    waiting: list[int] = []
    with stop_signals_handled(waiting.append):
        _waiting_stops.append(waiting)
        try:
            yield
        finally:
            _waiting_stops.remove(waiting)
    for number in dict.fromkeys(waiting):
        signal.raise_signal(number)


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


class FolderError(RuntimeError):
    """A folder the platform writes into cannot be used (held by another
    process, removed, full, read-only); the message is one line naming it."""


class FolderInUseError(FolderError):
    """Another process holds the folder (``lock_folder``)."""


class FolderGoneError(FolderError):
    """The folder was removed while it was in use."""


class FolderLock:
    """A held ``lock_folder`` lock: ``release()`` (or leaving a ``with``
    block) gives it up and removes the lock file; the end of the process does too."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder, self._fd = folder, fd

    def release(self) -> None:
        if self._fd < 0:
            return
        try:
            # Only our own file: a removed folder may have been made again, by someone else.
            if os.path.samestat(os.fstat(self._fd), os.stat(self.folder / LOCK_FILE)):
                os.unlink(self.folder / LOCK_FILE)
        except OSError:  # gone already, or the folder read-only: the lock ends with the descriptor anyway
            pass
        os.close(self._fd)
        self._fd = -1

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_folder(folder: str | Path, what: str = "folder") -> FolderLock:
    """Hold ``folder`` (made if missing) for this process, or raise
    ``FolderInUseError`` naming the process that holds it (``what`` names the
    folder's kind in the message, e.g. '--save_dir'). The lock is not
    inherited by child processes (Python opens files close-on-exec)."""
    folder = Path(folder)
    path = folder / LOCK_FILE
    while True:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 20).decode(errors="replace").strip()
            os.close(fd)
            raise FolderInUseError(f"{what} {folder} is in use by process {holder or '(starting)'}: "
                                   "one process writes into it at a time") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            locked_in_place = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            locked_in_place = False
        if locked_in_place:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return FolderLock(folder, fd)
        # Its holder removed the file (or the folder) between our open and our lock: try afresh.
        os.close(fd)


@contextlib.contextmanager
def writing_into(folder: str | Path) -> Iterator[None]:
    """Write into ``folder`` within the block: a folder that no longer exists
    is a ``FolderGoneError`` (it is not made again), a write that fails for
    room or permission (``OSError``) a ``FolderError``, each one line naming the folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FolderGoneError(f"{folder} was removed while in use")
    try:
        yield
    except OSError as error:
        if not folder.is_dir():
            raise FolderGoneError(f"{folder} was removed while in use") from None
        raise FolderError(f"cannot write into {folder}: {error.strerror or error}") from None
