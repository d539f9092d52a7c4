"""elfpy.files: a written file lands whole, readable as a plain open() would
leave it, and a failed write leaves the old file and no temporary one."""

import errno
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from elfpy.files import (
    TEMPORARY_FILES,
    FolderError,
    FolderGoneError,
    FolderInUseError,
    atomic_path,
    lock_folder,
    stop_signals_handled,
    stops_passed_on,
    write_text_atomically,
    writing_into,
)

ROOT = Path(__file__).resolve().parents[2]


def test_a_written_file_has_the_mode_open_would_give_it(tmp_path):
    mask = os.umask(0o022)
    try:
        write_text_atomically(tmp_path / "config.yaml", "a: 1\n")
        with atomic_path(tmp_path / "plot.png") as name:
            name.write_bytes(b"png")
    finally:
        os.umask(mask)
    for path in (tmp_path / "config.yaml", tmp_path / "plot.png"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_writer_given_a_name_sees_the_suffix_and_its_file_lands_under_the_real_name(tmp_path):
    with atomic_path(tmp_path / "episode_0.gif") as name:
        assert name.parent == tmp_path and name.suffix == ".gif" and name.name.startswith(".episode_0.gif.")
        name.write_bytes(b"GIF89a")
    assert (tmp_path / "episode_0.gif").read_bytes() == b"GIF89a"
    assert not list(tmp_path.glob(TEMPORARY_FILES))


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_one(tmp_path):
    target = tmp_path / "net.pt2"
    target.write_bytes(b"the good one")
    with pytest.raises(RuntimeError, match="disk"), atomic_path(target) as name:
        name.write_bytes(b"half")
        raise RuntimeError("disk gone")
    assert target.read_bytes() == b"the good one"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["net.pt2"]


def test_a_removed_folder_is_not_made_again_and_a_failed_write_is_one_line_naming_it(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    with pytest.raises(FolderError, match=f"^cannot write into {folder}: No space left on device$"), \
            writing_into(folder):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    folder.rmdir()
    with pytest.raises(FolderGoneError, match=f"^{folder} was removed while in use$"), writing_into(folder):
        write_text_atomically(folder / "config.yaml", "a: 1\n")
    assert not folder.exists()


def test_a_stop_signal_before_its_handler_is_installed_is_given_to_it_and_otherwise_to_the_one_before():
    taken, before = [], []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: before.append(number))
    try:
        with stops_passed_on():
            os.kill(os.getpid(), signal.SIGTERM)
            with stop_signals_handled(taken.append):  # e.g. a run's loop, installed after the signal came
                assert taken == [signal.SIGTERM]
        assert before == []
        with stops_passed_on():
            os.kill(os.getpid(), signal.SIGTERM)
        assert before == [signal.SIGTERM]  # no handler took it: delivered as the block ends
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_folder_lock_is_refused_while_held_and_free_once_its_holder_is_killed(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from elfpy.files import lock_folder; "
                               "lock = lock_folder(sys.argv[1]); print('held', flush=True); sys.stdin.read()",
                               str(tmp_path / "f")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(FolderInUseError, match=f"folder {tmp_path / 'f'} is in use by process {holder.pid}"):
            lock_folder(tmp_path / "f")
    finally:
        holder.kill()
        holder.wait()
    with lock_folder(tmp_path / "f"):
        assert (tmp_path / "f" / ".lock").read_text() == f"{os.getpid()}\n"
    assert os.listdir(tmp_path / "f") == []  # released: its file gone too
    assert issubclass(FolderInUseError, FolderError)
