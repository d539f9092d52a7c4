"""The run folder's name, and what --load accepts."""

import datetime

import pytest
import torch

from rlpytorch.run.run_dir import checkpoint_path, remover, resolve_run_dir, versions, write_run_files


def test_time_in_the_folder_name_is_the_start_time():
    now = datetime.datetime(2026, 1, 2, 3, 4, 5)
    assert str(resolve_run_dir("runs/{time}", now)) == "runs/20260102-030405"
    assert str(resolve_run_dir("runs/pong", now)) == "runs/pong"
    assert resolve_run_dir("") is None


def test_load_takes_a_checkpoint_or_a_run_folder_and_names_what_is_missing(tmp_path):
    (tmp_path / "last.pt").write_bytes(b"x")
    (tmp_path / "model_100.pt").write_bytes(b"x")
    assert checkpoint_path(tmp_path) == tmp_path / "last.pt"
    assert checkpoint_path(tmp_path / "model_100.pt") == tmp_path / "model_100.pt"
    with pytest.raises(FileNotFoundError, match="no checkpoint at .*empty"):
        checkpoint_path(tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="empty/last.pt"):
        checkpoint_path(tmp_path / "empty")


def test_versions_name_the_commit_python_and_torch():
    found = versions()
    assert found["torch"] == torch.__version__
    assert found["commit"] is None or len(found["commit"].rstrip("+")) == 40


def test_a_failed_start_takes_back_what_it_wrote(tmp_path):
    new = tmp_path / "new"
    undo = remover(new)
    write_run_files(new, {"seed": 0}, ["train"])
    undo()
    assert not new.exists()  # the run made it: gone
    given = tmp_path / "given"
    given.mkdir()
    (given / "notes.txt").write_text("mine")
    undo = remover(given)
    write_run_files(given, {"seed": 0}, ["train"])
    (given / "logs").mkdir()
    undo()
    assert [path.name for path in given.iterdir()] == ["notes.txt"]  # what was there stays


def test_a_resumed_run_removes_the_temporary_files_a_killed_save_left(tmp_path):
    (tmp_path / ".last.pt.x1y2.tmp").write_bytes(b"half a checkpoint")
    (tmp_path / "notes.tmp").write_text("not ours")
    write_run_files(tmp_path, {"seed": 0}, ["train"], resumed_from=tmp_path / "last.pt")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["config.yaml", "notes.tmp", "run.yaml"]
