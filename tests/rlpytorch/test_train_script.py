"""rlpytorch.train's choice of method: only its arguments are offered, with its suggested defaults."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rlpytorch
from rlpytorch import training
from rlpytorch.core.args_provider import ArgsError, ArgsProvider, read_config_file, shipped_configs
from rlpytorch.methods import PPO
from rlpytorch.recipes import RECIPES


def test_method_comes_from_the_command_line_then_the_config_file(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("method: ppo\nclip_eps: 0.1\n")
    assert training.chosen_method([]) == "actor_critic"
    assert training.chosen_method(["--config", str(config)]) == "ppo"
    assert training.chosen_method(["--config", str(config), "--method", "actor_critic"]) == "actor_critic"


def test_ppo_run_offers_ppo_arguments_and_its_suggested_window(tmp_path):
    provider = ArgsProvider(training.components("ppo"))
    config = provider.parse(["--clip_eps", "0.1"], defaults=PPO.run_defaults)
    assert config["clip_eps"] == 0.1 and config["T"] == 17 and config["returns"] == "gae"
    assert provider.parse(["--T", "9"], defaults=PPO.run_defaults)["T"] == 9
    with pytest.raises(SystemExit):  # an ActorCritic-only argument is unknown to a PPO run
        provider.parse(["--ratio_clamp", "2"])


def test_train_and_evaluate_run_as_modules_through_a_run_folder(tmp_path):
    """``python -m rlpytorch.train`` then ``python -m rlpytorch.evaluate --load <run folder>``, as a user types them."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    run_dir = tmp_path / "run"
    small = ["--num_games", "8", "--actor_batch", "8", "--train_batch", "8", "--num_threads", "1", "--no-progress",
             "--eval_episodes", "4"]
    trained = subprocess.run([sys.executable, "-m", "rlpytorch.train", "--num_frames", "2000", "--save_dir",
                              str(run_dir), *small], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert f"run folder: {run_dir}" in trained.stdout
    score = trained.stdout.splitlines()[-1]
    assert score.startswith("greedy evaluation: 4 episodes")
    evaluated = subprocess.run([sys.executable, "-m", "rlpytorch.evaluate", "--load", str(run_dir), "--no-progress"],
                               capture_output=True, text=True, env=env, cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    assert evaluated.stdout.splitlines()[-1].endswith(score.split(": ", 1)[1])


def test_periodic_evaluation_logs_a_curve_and_keeps_the_best_model(tmp_path):
    import csv

    from rlpytorch import evaluate

    run = tmp_path / "run"
    rlpytorch.train(rlpytorch.config(game="cartpole", num_frames=20000, log_every=10000, eval_every=5000,
                                     eval_episodes=4, save_dir=str(run), progress=False, eval_at_end=False))
    with open(run / "progress.csv", newline="") as f:
        evals = [float(row["eval_return_mean"]) for row in csv.DictReader(f) if row["eval_return_mean"]]
    assert len(evals) == 4  # at 5k, 10k, 15k and 20k frames
    # Greedy episodes on the evaluation's own seeded games depend only on the weights: best.pt scores the best.
    best = evaluate.main(["--load", str(run / "best.pt"), "--eval_episodes", "4", "--no-progress"])
    assert best.mean == max(evals)


def test_zero_evaluation_episodes_are_refused_before_training_not_after(tmp_path):
    run = tmp_path / "run"
    with pytest.raises(ValueError, match="eval_episodes must be >= 1, got 0"):
        rlpytorch.train(rlpytorch.config(game="cartpole", eval_episodes=0, save_dir=str(run), progress=False))
    assert not run.exists()  # refused before the run folder was written
    result = rlpytorch.train(rlpytorch.config(game="cartpole", num_frames=1000, eval_episodes=0, eval_at_end=False,
                                              save_dir=str(run), progress=False))
    assert result.eval is None and result.summary.frames >= 1000


def test_an_unknown_method_in_a_config_file_is_named_with_the_choices(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("method: nope\n")
    with pytest.raises(ArgsError, match=r"run.yaml: method: 'nope' is not one of \['actor_critic', 'ppo'"):
        training.chosen_method(["--config", str(config)])


def test_a_run_that_fails_to_start_leaves_no_folder_so_the_same_save_dir_works_next(tmp_path):
    run = tmp_path / "run"
    small = dict(game="cartpole", num_games=8, actor_batch=8, train_batch=8, num_threads=1, progress=False,
                 eval_at_end=False, save_dir=str(run))
    with pytest.raises(ValueError, match="unknown game option 'foo'"):  # fails in building the games
        rlpytorch.train(rlpytorch.config(**small, game_options="foo=1"))
    with pytest.raises(ValueError, match="not keys of 'cartpole'"):  # fails once the games exist: building the model
        rlpytorch.train(rlpytorch.config(**small, obs_keys="nope"))
    assert not run.exists()
    assert rlpytorch.train(rlpytorch.config(**small, num_frames=500)).summary.frames >= 500


@pytest.mark.parametrize("setting, named", [
    (["--obs_keys", "nope"], "['nope'] are not keys of 'cartpole'"),
    (["--game", "cartpol"], "unknown game 'cartpol'"),
    (["--game_options", "foo=1"], "unknown game option 'foo'"),
    (["--game", "gym:CartPole-v9"], "game 'gym:CartPole-v9': Environment version `v9`"),
    (["--game", "gym:CartPole-v1", "--game_options", "foo=1"], "unexpected keyword argument 'foo'"),
    (["--eval_episodes", "0"], "eval_episodes must be >= 1, got 0"),  # the method's own checks, before the games
])
def test_a_refused_setting_is_one_line_and_leaves_no_run_folder(tmp_path, capsys, setting, named):
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_:
        training.command_line(training.main, "prog", [*setting, "--num_frames", "100", "--save_dir", str(run)])
    message = str(exit_.value.code)
    assert message.startswith("prog: error: a setting was refused: ") and named in message
    assert "\n" not in message and not run.exists()
    assert "run folder" not in capsys.readouterr().out  # nothing printed before the error


def test_a_method_suggests_only_settings_that_differ_from_their_default():
    for method, recipe in RECIPES.items():
        declared = training.arguments(method).args
        for name, value in recipe.run_defaults.items():
            if value == declared[name].default:  # only to undo a suggestion the method inherits
                inherited = [base.__dict__.get("run_defaults", {}) for base in recipe.method.__mro__[1:]]
                assert any(suggested.get(name, value) != value for suggested in inherited), (method, name)


@pytest.mark.parametrize("name", shipped_configs())
def test_a_shipped_config_states_only_what_differs_from_its_methods_defaults(name):
    values = read_config_file(name)
    method = values.get("method", training.chosen_method([]))
    assert values.get("method") != training.chosen_method([]), "the default method, stated"
    declared, defaults = training.arguments(method).args, training.config_class(method)()
    restated = [key for key, value in values.items() if key != "method"
                and declared[key].convert(value) == getattr(defaults, key)]
    assert restated == [], f"{name} restates defaults {restated}"
