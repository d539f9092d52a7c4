"""A damaged checkpoint is named and refused: truncated, random, or with a byte
changed anywhere, it raises one ``CheckpointError`` naming the file (torch's
own reader loads a changed tensor byte silently, e.g. as a NaN weight); the
scripts print that one line. Checkpoints written before the check still load."""

import io
import os
import zipfile
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlpytorch import evaluate, training
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.base import CheckpointError, CheckpointNotFoundError, read_checkpoint

PRETRAINED = sorted((Path(__file__).resolve().parents[2] / "pretrained").glob("*.pt"))


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> bytes:
    """A checkpoint's bytes (weights, step, arguments)."""
    path = tmp_path_factory.mktemp("saved") / "good.pt"
    torch.manual_seed(0)
    MLPActorCritic((4,), 2, ModelSettings(hidden=8)).save(path, args={"game": "cartpole"})
    return path.read_bytes()


def same(a, b) -> bool:
    """Equal contents, tensors bit for bit (NaN included)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and \
            a.numpy().tobytes() == b.numpy().tobytes()
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def weight_record(saved: bytes) -> zipfile.ZipInfo:
    with zipfile.ZipFile(io.BytesIO(saved)) as archive:
        return next(info for info in archive.infolist() if "/data/" in info.filename)


def refused(path: Path) -> str:
    with pytest.raises(CheckpointError) as error:
        read_checkpoint(path)
    assert str(path) in str(error.value)
    return str(error.value)


def test_a_truncated_random_or_empty_file_is_refused_by_name(tmp_path, saved):
    for name, data in [("half.pt", saved[: len(saved) // 2]), ("tail_cut.pt", saved[:-10]),
                       ("random.pt", os.urandom(len(saved))), ("empty.pt", b"")]:
        (tmp_path / name).write_bytes(data)
        assert "damaged or not a checkpoint" in refused(tmp_path / name)
    with pytest.raises(CheckpointNotFoundError, match="no checkpoint file at .*absent.pt"):
        read_checkpoint(tmp_path / "absent.pt")


def test_a_changed_weight_byte_fails_its_crc_where_torch_alone_loads_it(tmp_path, saved):
    record = weight_record(saved)
    with zipfile.ZipFile(io.BytesIO(saved)) as archive:
        offset = saved.index(archive.read(record.filename), record.header_offset)
    damaged = bytearray(saved)
    damaged[offset : offset + 4] = b"\xff\xff\xff\xff"  # a float32 NaN
    path = tmp_path / "flipped.pt"
    path.write_bytes(bytes(damaged))
    assert torch.load(path, weights_only=True)["state_dict"]  # torch's reader takes it
    assert "fails its CRC-32" in refused(path)


@settings(max_examples=150, deadline=None)
@given(position=st.floats(0, 1, exclude_max=True), mask=st.integers(1, 255))
def test_any_changed_byte_is_refused_or_changes_nothing_loaded(tmp_path_factory, saved, position, mask):
    damaged = bytearray(saved)
    damaged[int(position * len(saved))] ^= mask
    path = tmp_path_factory.mktemp("flip") / "damaged.pt"
    path.write_bytes(bytes(damaged))
    try:
        loaded = read_checkpoint(path)
    except CheckpointError as error:
        assert str(path) in str(error)
        return
    good = tmp_path_factory.mktemp("good") / "good.pt"
    good.write_bytes(saved)
    assert same(loaded, read_checkpoint(good))  # (a byte nothing reads: a timestamp, padding)


def test_a_record_marked_as_a_folder_is_refused(tmp_path, saved):
    """torch's reader reads a record marked a folder as no bytes, leaving its tensor uninitialized."""
    name = weight_record(saved).filename.encode()
    entry = saved.rindex(b"PK\x01\x02", 0, saved.rindex(name))  # the record's entry in the central directory
    damaged = bytearray(saved)
    damaged[entry + 38] |= 0x10  # external attributes: the DOS folder bit
    path = tmp_path / "folder.pt"
    path.write_bytes(bytes(damaged))
    refused(path)


def test_a_pickle_that_would_run_code_is_refused(tmp_path):
    path = tmp_path / "code.pt"
    torch.save({"model": "mlp", "state_dict": {}, "step": 0, "args": {}, "hook": os.system}, path)
    assert "damaged or not a checkpoint" in refused(path)


@pytest.mark.parametrize("path", PRETRAINED, ids=lambda path: path.name)
def test_the_pretrained_checkpoints_still_load(path):
    assert read_checkpoint(path)["state_dict"]


def test_the_scripts_print_one_line_naming_the_damaged_file(tmp_path, saved, capsys):
    path = tmp_path / "half.pt"
    path.write_bytes(saved[: len(saved) // 2])
    for main, argv in [(evaluate.main, ["--load", str(path)]), (training.main, ["--resume", str(path)]),
                       (training.main, ["--load", str(path), "--save_dir", str(tmp_path / "run")])]:
        with pytest.raises(SystemExit) as stop:
            training.command_line(main, "prog", argv)
        assert stop.value.code.startswith(f"prog: error: {path} is damaged")
        assert "\n" not in stop.value.code
    assert not (tmp_path / "run").exists()  # the run that failed to load left no folder


def test_a_record_marked_encrypted_is_refused(tmp_path, saved):
    """Found by the byte-flip test: zipfile asks for a password (RuntimeError) for such a record."""
    name = weight_record(saved).filename.encode()
    entry = saved.rindex(b"PK\x01\x02", 0, saved.rindex(name))
    damaged = bytearray(saved)
    damaged[entry + 8] |= 0x01  # general-purpose flags: the encryption bit
    path = tmp_path / "encrypted.pt"
    path.write_bytes(bytes(damaged))
    assert "damaged or not a checkpoint" in refused(path)
