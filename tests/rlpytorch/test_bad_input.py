"""Bad input to a run is one line before anything is written: a number out of
its range, a device this torch cannot use, a YAML file of aliases, a
checkpoint whose stored settings are not plain values."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
import torch
from bombs import aliased_yaml, nested_shared_lists

import rlpytorch
from rlpytorch import evaluate, training, tune
from rlpytorch.core import devices
from rlpytorch.core.args_provider import ArgsError
from rlpytorch.core.plain_yaml import AliasNotAllowed, dump_yaml, load_yaml
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.base import CheckpointError, read_checkpoint

PROG = "python -m rlpytorch.train"


@pytest.mark.parametrize("argv, refused", [
    (["--num_frames", "0"], "argument --num_frames: must be >= 1, got 0"),
    (["--num_frames", "-5"], "argument --num_frames: must be >= 1, got -5"),
    (["--num_games", "3000000000"], "argument --num_games: must be from 1 to 2147483647, got 3000000000"),
    (["--actor_batch", "0"], "argument --actor_batch: must be from 1 to 2147483647, got 0"),
    (["--T", "1"], "argument --T: must be from 2 to 2147483647, got 1"),
    (["--eval_episodes", "-1"], "argument --eval_episodes/--episodes: must be >= 0, got -1"),
    (["--save_every", "-1"], "argument --save_every: must be >= 0, got -1"),
    (["--eval_every", "-1"], "argument --eval_every: must be >= 0, got -1"),
    (["--log_every", "0"], "argument --log_every: must be >= 1, got 0"),
    (["--gamma", "1.5"], "argument --gamma: must be from 0 to 1, got 1.5"),
    (["--lr", "0"], "argument --lr: must be > 0, got 0.0"),
    (["--seed", "-1"], "argument --seed: must be from 0 to 18446744073709551615, got -1"),
    (["--method", "dqn", "--replay_capacity", "0"], "argument --replay_capacity: must be >= 1, got 0"),
    (["--method", "alphazero", "--num_frames", "0"], "argument --num_frames: must be >= 1, got 0"),
    (["--device", "cdua"], "argument --device: 'cdua': not a device of cpu, cuda, mps (e.g. cpu, cuda, cuda:1)"),
    (["--method", "m" * 5000], f"argument --method: '{'m' * 60}'... is not one of ['actor_critic', 'ppo', 'dqn', "
                               "'r2d2', 'drqn', 'ddpg', 'td3', 'sac', 'maddpg', 'alphazero']"),
])
def test_a_number_out_of_range_is_one_line_before_anything_is_written(tmp_path, capsys, argv, refused):
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_:
        training.main([*argv, "--save_dir", str(run)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"{PROG}: error: {refused}\n"
    assert not run.exists()


def test_a_long_value_the_games_refuse_is_quoted_by_its_prefix(tmp_path):
    with pytest.raises(SystemExit) as exit_:
        training.command_line(training.main, "prog",
                              ["--game_options", "o" * 5000, "--save_dir", str(tmp_path / "run")])
    assert str(exit_.value.code) == f"prog: error: a setting was refused: game option '{'o' * 60}'... is not name=value"


@pytest.mark.parametrize("runner", ["single", "multi"])
def test_a_batch_larger_than_the_games_can_fill_is_one_line_and_leaves_no_folder(tmp_path, runner):
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_:
        training.command_line(training.main, "prog", ["--num_games", "8", "--actor_batch", "16", "--runner", runner,
                                                "--no-progress", "--save_dir", str(run)])
    message = str(exit_.value.code)
    assert message.startswith("prog: error: the games refused the run's settings: ") and "\n" not in message
    assert "16" in message and not run.exists()


def test_a_configuration_changed_in_python_is_held_to_the_same_ranges(tmp_path):
    run = tmp_path / "run"
    changed = dataclasses.replace(rlpytorch.config(save_dir=str(run), eval_at_end=False, progress=False), num_frames=0)
    with pytest.raises(ArgsError, match="^num_frames: must be >= 1, got 0$"):
        rlpytorch.train(changed)
    assert not run.exists()


def unusable_cuda() -> str:
    """A CUDA device this machine lacks: any on a build without CUDA, else the one past the last GPU."""
    return "cuda" if torch.version.cuda is None else f"cuda:{torch.cuda.device_count()}"


@pytest.mark.parametrize("setting", ["device", "learner_device", "actor_device"])
def test_a_device_this_torch_cannot_use_is_one_line_before_anything_is_written(tmp_path, capsys, setting):
    run = tmp_path / "run"
    device = unusable_cuda()
    with pytest.raises(SystemExit) as exit_:
        training.command_line(training.main, "prog", [f"--{setting}", device, "--save_dir", str(run)])
    message = str(exit_.value.code)
    assert message.startswith(f"prog: error: --{setting} {device}: ") and "\n" not in message
    assert not run.exists() and "run folder" not in capsys.readouterr().out
    with pytest.raises(ArgsError, match=f"^--{setting} {device}: "):
        rlpytorch.train(rlpytorch.config(**{setting: device}, save_dir=str(run)))
    assert not run.exists()


def test_a_configuration_names_a_device_for_another_machine_without_complaint():
    # (checked when a run starts)
    assert rlpytorch.config(method="dqn", device="cuda:3", replay_device="cuda:1").device == "cuda:3"


@pytest.mark.parametrize("built_with, gpus, device, problem", [
    (None, 0, "cuda", "this torch (2.0) is built without CUDA"),
    ("12.4", 0, "cuda", "CUDA sees no GPU on this machine"),
    ("12.4", 2, "cuda:2", "CUDA sees 2 GPUs here (cuda:0 to cuda:1)"),
    ("12.4", 1, "cuda:1", "CUDA sees 1 GPU here (cuda:0 to cuda:0)"),
    ("12.4", 2, "cuda:1", None),
    ("12.4", 2, "cuda", None),
    (None, 0, "cpu", None),
])
def test_the_device_problem_says_what_this_machine_has(monkeypatch, built_with, gpus, device, problem):
    monkeypatch.setattr(torch.version, "cuda", built_with)
    monkeypatch.setattr(torch, "__version__", "2.0")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    assert devices.device_problem(device) == problem


def test_evaluate_refuses_a_device_this_torch_cannot_use_in_one_line(tmp_path):
    path = tmp_path / "m.pt"
    MLPActorCritic((4,), 2, ModelSettings(hidden=8)).save(path, args={"game": "cartpole", "hidden": 8})
    with pytest.raises(ArgsError, match=f"^--device {unusable_cuda()}: "):
        evaluate.main(["--load", str(path), "--device", unusable_cuda(), "--eval_episodes", "1"])


def test_a_config_file_of_aliases_is_one_line_from_the_command_line(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(aliased_yaml(depth=6))
    with pytest.raises(SystemExit) as exit_:
        training.command_line(training.main, "prog", ["--config", str(path), "--save_dir", str(tmp_path / "run")])
    assert str(exit_.value.code) == f"prog: error: {path}, line 3, column 8: aliases are not allowed in configs " \
                                    "(found *a0)"
    assert not (tmp_path / "run").exists()


def test_a_tune_space_of_aliases_is_refused(tmp_path):
    space = tmp_path / "space.yaml"
    space.write_text("lr: &a loguniform:1e-4:1e-2\nentropy_coef: *a\n")
    with pytest.raises(tune.SearchError, match=r"space.yaml: not valid YAML: aliases are not allowed in configs"):
        tune.read_space_file(space)


def test_yaml_the_platform_writes_it_reads_back_whatever_is_shared():
    shared = {"torch": "2.0", "numpy": "2.1"}
    text = dump_yaml({"versions": shared, "resumed": [{"versions": shared}]}, sort_keys=False)
    assert "&" not in text and "*" not in text
    assert load_yaml(text) == {"versions": shared, "resumed": [{"versions": shared}]}
    with pytest.raises(AliasNotAllowed):
        load_yaml("a: &x 1\nb: *x\n")


YAML_CALLS = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all", "dump", "safe_dump",
              "dump_all", "safe_dump_all"}


def test_every_yaml_file_the_platform_reads_or_writes_goes_through_plain_yaml():
    root = Path(__file__).resolve().parents[2]
    calls = []
    folders = ("rlpytorch", "elfpy", "benchmarks", "examples")
    sources = [path for folder in folders for path in root.glob(f"{folder}/**/*.py")]
    for path in sorted(sources):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in YAML_CALLS and \
                    isinstance(node.value, ast.Name) and node.value.id == "yaml":
                calls.append(f"{path.relative_to(root)}:{node.lineno}")
    assert calls and all(call.startswith("rlpytorch/core/plain_yaml.py:") for call in calls), calls


def save_checkpoint(path, args):
    """A checkpoint with training state (so ``--resume`` takes it) and ``args`` as its stored settings."""
    state = {"model": "mlp", "state_dict": {}, "step": 0, "args": args, "resume": {"frames": 0}}
    torch.save(state, path)
    return path


def test_a_checkpoint_whose_settings_share_references_is_refused_by_name(tmp_path):
    path = save_checkpoint(tmp_path / "last.pt", {"num_frames": nested_shared_lists(depth=6)})
    assert path.stat().st_size < 10_000  # the pickle keeps one list of each level
    with pytest.raises(CheckpointError, match=f"^{path}: its stored setting 'num_frames' holds a list, not a plain "
                                              "value$"):
        read_checkpoint(path)
    with pytest.raises(CheckpointError, match="holds a list"):
        rlpytorch.config(resume=str(path))


def test_a_checkpoint_whose_settings_are_out_of_range_is_refused_by_name(tmp_path):
    path = save_checkpoint(tmp_path / "last.pt", {"method": "actor_critic", "num_frames": -5})
    with pytest.raises(ArgsError, match=r"^the checkpoint's settings: num_frames: must be >= 1, got -5$"):
        rlpytorch.config(resume=str(path))
    with pytest.raises(SystemExit) as exit_:
        training.command_line(training.main, "prog", ["--resume", str(path)])
    assert str(exit_.value.code) == "prog: error: the checkpoint's settings: num_frames: must be >= 1, got -5"
