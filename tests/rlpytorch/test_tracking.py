"""--track wandb: the records of StatsLogger go to a Weights & Biases run kept in the run's folder."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from rlpytorch.core.args_provider import ArgsError
from rlpytorch.core.stats import StatsLogger


class FakeRun:
    def __init__(self, **settings) -> None:
        self.settings, self.records, self.metrics, self.finished = settings, [], [], False

    def define_metric(self, name: str, step_metric: str | None = None) -> None:
        self.metrics.append((name, step_metric))

    def log(self, record: dict) -> None:
        self.records.append(record)

    def finish(self) -> None:
        self.finished = True


@pytest.fixture
def fake_wandb(monkeypatch) -> list[FakeRun]:
    """A stand-in for the wandb package that keeps the runs it made."""
    runs: list[FakeRun] = []
    module = types.ModuleType("wandb")
    module.Error = type("Error", (Exception,), {})
    module.init = lambda **settings: runs.append(FakeRun(**settings)) or runs[-1]
    module.teardown = lambda: None
    monkeypatch.setitem(sys.modules, "wandb", module)
    return runs


def test_the_records_go_to_a_wandb_run_in_the_run_folder_and_a_resumed_run_goes_on_with_it(tmp_path: Path,
                                                                                            fake_wandb) -> None:
    records = [{"frames": 100.0, "return_mean": 1.5}, {"frames": 100.0, "eval_return_mean": 9.0}]
    logger = StatsLogger(log_dir=tmp_path, tensorboard=False, echo=False, track="wandb", run_config={"lr": 0.1})
    for record in records:
        logger.log(record)
    logger.close()
    (run,) = fake_wandb
    assert run.records == records and run.finished
    assert run.settings["dir"] == str(tmp_path) and run.settings["config"] == {"lr": 0.1}
    assert ("*", "frames") in run.metrics  # frames is the x axis of every record
    run_id = (tmp_path / "wandb_id.txt").read_text().strip()
    assert run.settings["id"] == run_id and run.settings["resume"] == "allow"
    StatsLogger(log_dir=tmp_path, tensorboard=False, echo=False, track="wandb").close()  # resumed in the folder
    assert fake_wandb[1].settings["id"] == run_id
    assert (tmp_path / "progress.csv").exists()  # beside the CSV, not instead


def test_without_track_or_without_a_run_folder_nothing_is_tracked(tmp_path: Path, fake_wandb) -> None:
    StatsLogger(log_dir=tmp_path, tensorboard=False, echo=False).log({"frames": 1.0})
    StatsLogger(track="wandb", echo=False).log({"frames": 1.0})  # e.g. the other ranks under torchrun
    assert fake_wandb == [] and not (tmp_path / "wandb_id.txt").exists()


def test_a_damaged_run_id_is_named(tmp_path: Path, fake_wandb) -> None:
    (tmp_path / "wandb_id.txt").write_text("../x y\n")
    with pytest.raises(ArgsError, match=r"wandb_id.txt: '../x y' is not a W&B run id"):
        StatsLogger(log_dir=tmp_path, tensorboard=False, echo=False, track="wandb")
    assert fake_wandb == []


def test_a_missing_wandb_is_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "wandb", None)  # import wandb fails as when it is not installed
    message = r"^--track wandb needs the wandb package: pip install 'elf-platform\[wandb\]'$"
    with pytest.raises(ArgsError, match=message):
        StatsLogger(log_dir=tmp_path, tensorboard=False, echo=False, track="wandb")


def test_a_cartpole_run_tracked_offline_keeps_its_wandb_run_in_its_folder(tmp_path: Path, monkeypatch) -> None:
    import rlpytorch

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run = tmp_path / "run"
    rlpytorch.train(rlpytorch.config(game="cartpole", num_games=16, actor_batch=16, train_batch=16, num_frames=2000,
                                     log_every=1000, progress=False, eval_at_end=False, track="wandb",
                                     save_dir=str(run)))
    run_id = (run / "wandb_id.txt").read_text().strip()
    (wandb_file,) = (run / "wandb").glob(f"offline-run-*-{run_id}/run-{run_id}.wandb")
    data = wandb_file.read_bytes()
    assert b"return_mean" in data and b"policy_loss" in data and b"cartpole" in data  # records and config
