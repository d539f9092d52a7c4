"""Network files (``.pt2``) cannot run code: every way torch.export.load would
run what a crafted file holds is refused by ``elfpy.network_file`` (and so by
every loader: GTP's ``--load``, ``load_evaluator``, bench_go), with one error
naming the file; a good network loads, and one is written whole or not at all."""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from elfpy.gtp import load_evaluator
from elfpy.network_file import NetworkFileError, load_network
from rlpytorch.models import policy_value
from rlpytorch.models.policy_value import PolicyValueNet, PolicyValueSettings, export_evaluator

ROOT = Path(__file__).resolve().parents[2]
PLANES = 23


class Payload:
    """Unpickled, it creates ``marker``: what a crafted file would run instead."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (self.marker,)


def pickled_payload(marker: Path) -> bytes:
    buffer = io.BytesIO()
    torch.save(Payload(marker), buffer)
    return buffer.getvalue()


def export(path: Path) -> Path:
    net = PolicyValueNet(PLANES, 9, 82, PolicyValueSettings(channels=4, blocks=1))
    export_evaluator(net, torch.zeros(2, PLANES, 9, 9, dtype=torch.uint8), torch.ones(2, 82, dtype=torch.uint8), path)
    return path


@pytest.fixture(scope="module")
def good_file(tmp_path_factory) -> Path:
    return export(tmp_path_factory.mktemp("net") / "net.pt2")


def rewrite(source: Path, target: Path, edit) -> Path:
    """A copy of ``source`` whose entries ``edit(entries)`` changed ({name under the root: bytes})."""
    with zipfile.ZipFile(source) as archive:
        root = archive.namelist()[0].split("/")[0]
        entries = {name[len(root) + 1:]: archive.read(name) for name in archive.namelist()}
    edit(entries)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in entries.items():
            archive.writestr(f"{root}/{name}", data)
    return target


def edit_json(name: str, change):
    def edit(entries):
        entries[name] = json.dumps(change(json.loads(entries[name]))).encode()
    return edit


def edit_text(name: str, old: str, new: str):
    def edit(entries):
        text = entries[name].decode()
        assert old in text
        entries[name] = text.replace(old, new).encode()
    return edit


def pickled_weight(marker: Path):
    """weight_0 replaced by a pickle and marked ``use_pickle`` (torch unpickles it with weights_only=False)."""
    def edit(entries):
        config = json.loads(entries["data/weights/model_weights_config.json"])
        first = next(iter(config["config"].values()))
        first["use_pickle"] = True
        entries["data/weights/model_weights_config.json"] = json.dumps(config).encode()
        entries["data/weights/" + first["path_name"]] = pickled_payload(marker)
    return edit


def opaque_constant(marker: Path):
    def edit(entries):
        config = {"config": {"c": {"path_name": "opaque_obj_0", "is_param": False, "use_pickle": True,
                                   "tensor_meta": None}}}
        entries["data/constants/model_constants_config.json"] = json.dumps(config).encode()
        entries["data/constants/opaque_obj_0"] = pickle.dumps(Payload(marker))
    return edit


SYMBOL = "Symbol('s39', positive=True, integer=True)"


def crafted_files(good: Path, folder: Path) -> dict[str, tuple[Path, Path, str]]:
    """name -> (crafted file, the marker its payload would create, what the refusal names)."""
    touch = f"__import__('pathlib').Path('{folder}/{{}}').touch()"
    edits = {
        "legacy weights pickle": (lambda m: lambda e: e.update({"data/weights/model.pt": pickled_payload(m)}),
                                  "data/weights/model.pt"),
        "legacy constants pickle": (lambda m: lambda e: e.update({"data/constants/model.pt": pickled_payload(m)}),
                                    "data/constants/model.pt"),
        "pickled example inputs": (lambda m: lambda e: e.update({"data/sample_inputs/model.pt": pickled_payload(m)}),
                                   "example inputs"),
        "pickled weight": (pickled_weight, "raw tensor bytes"),
        "opaque constant": (opaque_constant, "opaque_obj_0"),
        "sympy expression": (lambda m: edit_text("models/model.json", SYMBOL, touch.format(m.name) + " or " + SYMBOL),
                             "expr_str"),
        "shared library": (lambda m: lambda e: e.update({"data/aotinductor/model/model.so": b"\x7fELF"}),
                           "aotinductor"),
        "extra file": (lambda m: lambda e: e.update({"extra/readme.txt": b"hello"}), "extra/readme.txt"),
        "non-ATen target": (lambda m: edit_text("models/model.json", '"torch.ops.aten.tanh.default"',
                                                '"torch.os.system"'), "target"),
        "code in a weight's path": (lambda m: edit_text(
            "models/model.json", '"net.stem.0.weight"', json.dumps(f'net.stem.0.weight"); {touch.format(m.name)}; ("')),
            "parameter_name"),
        "module named by the input structure": (lambda m: edit_text(
            "models/model.json", r'\"context\": \"[]\"',
            r'\"context\": \"{\\\"__enum__\\\": true, \\\"fqn\\\": \\\"os:environ\\\", \\\"name\\\": \\\"x\\\"}\"'),
            "structure"),
    }
    crafted = {}
    for i, (name, (make, reason)) in enumerate(edits.items()):
        marker = folder / f"ran_{i}"
        crafted[name] = (rewrite(good, folder / f"crafted_{i}.pt2", make(marker)), marker, reason)
    return crafted


def test_a_good_network_loads_and_evaluates(good_file):
    policy, value = load_evaluator(str(good_file))(torch.zeros(3, PLANES, 9, 9, dtype=torch.uint8).numpy(),
                                                   torch.ones(3, 82, dtype=torch.uint8).numpy())
    assert policy.shape == (3, 82) and abs(policy.sum(axis=1) - 1).max() < 1e-5 and abs(value).max() <= 1


def test_the_crafted_files_run_their_code_under_torch_export_load(good_file, tmp_path):
    # The attacks are real: torch.export.load runs the legacy pickle and the sympy expression.
    crafted = crafted_files(good_file, tmp_path)
    names = ["legacy weights pickle", "pickled example inputs", "sympy expression"]
    paths = [str(crafted[name][0]) for name in names]
    subprocess.run([sys.executable, "-c", "import sys, torch\nfor path in sys.argv[1:]:\n"
                    "    try: torch.export.load(path)\n    except Exception: pass", *paths], capture_output=True)
    assert [crafted[name][1].exists() for name in names] == [True] * len(names)


def test_every_loader_refuses_every_crafted_file_and_no_payload_runs(good_file, tmp_path):
    crafted = crafted_files(good_file, tmp_path)
    for name, (path, marker, reason) in crafted.items():
        for load in (load_network, load_evaluator):
            with pytest.raises(NetworkFileError) as refused:
                load(str(path))
            assert str(path) in str(refused.value) and reason in str(refused.value), name
        assert not marker.exists(), name
    path, marker, _ = crafted["legacy weights pickle"]
    gtp = subprocess.run([sys.executable, "-m", "elfpy.gtp", "--load", str(path)], input="genmove b\n",
                         capture_output=True, text=True)
    bench = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_go.py"), "versus", "--load", str(path),
                            "--games", "1", "--playouts", "2"], capture_output=True, text=True)
    for run in (gtp, bench):
        assert run.returncode != 0 and str(path) in run.stderr and "data/weights/model.pt" in run.stderr
    assert gtp.stdout == "" and not marker.exists()


def test_duplicate_entries_and_other_roots_are_refused(good_file, tmp_path):
    with zipfile.ZipFile(good_file) as archive:
        entries = [(name, archive.read(name)) for name in archive.namelist()]
    twice, elsewhere = tmp_path / "twice.pt2", tmp_path / "elsewhere.pt2"
    with zipfile.ZipFile(twice, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        for name, data in [*entries, entries[-1]]:
            archive.writestr(name, data)
    with zipfile.ZipFile(elsewhere, "w") as archive:
        for name, data in [*entries, ("other/readme.txt", b"")]:
            archive.writestr(name, data)
    with pytest.raises(NetworkFileError, match="twice"):
        load_network(twice)
    with pytest.raises(NetworkFileError, match="entries under"):
        load_network(elsewhere)


def test_a_truncated_or_foreign_file_gets_one_error_naming_it(good_file, tmp_path):
    half = tmp_path / "half.pt2"
    half.write_bytes(good_file.read_bytes()[: good_file.stat().st_size // 2])
    foreign = tmp_path / "foreign.pt2"
    foreign.write_bytes(pickled_payload(tmp_path / "ran"))
    for path in (half, foreign):
        with pytest.raises(NetworkFileError, match=str(path)):
            load_network(path)
    assert not (tmp_path / "ran").exists()


@settings(max_examples=60, deadline=None)
@given(position=st.floats(0, 1, exclude_max=True), flip=st.integers(1, 255))
def test_a_changed_byte_loads_or_is_refused_by_name(good_file, tmp_path_factory, position, flip):
    data = bytearray(good_file.read_bytes())
    data[int(position * len(data))] ^= flip
    path = tmp_path_factory.mktemp("flip") / "net.pt2"
    path.write_bytes(bytes(data))
    try:
        load_network(path)
    except NetworkFileError as error:
        assert str(path) in str(error)


def test_export_writes_the_file_whole_or_leaves_the_old_one(good_file, tmp_path, monkeypatch):
    path = tmp_path / "net.pt2"
    path.write_bytes(good_file.read_bytes())

    def save_half_then_die(program, file):
        file.write(good_file.read_bytes()[:1000])
        raise KeyboardInterrupt  # the export killed midway

    monkeypatch.setattr(policy_value.torch.export, "save", save_half_then_die)
    with pytest.raises(KeyboardInterrupt):
        export(path)
    assert path.read_bytes() == good_file.read_bytes() and os.listdir(tmp_path) == ["net.pt2"]


def test_the_pretrained_networks_are_accepted():
    networks = sorted((ROOT / "pretrained").glob("*.pt2"))
    assert [n.name for n in networks] == ["go9_selfplay_64min.pt2", "go9_selfplay_65M.pt2"]
    for network in networks:
        load_network(network)
