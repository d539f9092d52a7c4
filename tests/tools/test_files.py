"""elfpy.files: a written file lands whole, readable as a plain open() would
leave it, and a failed write leaves the old file and no temporary one."""

import os
import stat

import pytest

from elfpy.files import TEMPORARY_FILES, atomic_path, write_text_atomically


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
