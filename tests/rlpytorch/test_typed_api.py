"""The typed training API: ``rlpytorch.config`` (a dataclass of a method's settings),
``rlpytorch.train(config)`` (a ``Run``) and ``rlpytorch.Training`` (``learn`` step by step),
beside the command line they stand for."""

import csv
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import rlpytorch
from rlpytorch.core.args_provider import ArgsError, read_config_file
from rlpytorch.core.game_loader import GameLoader
from rlpytorch.training import arguments, config_class, main

# A short CartPole run on one thread.
SMALL = dict(game="cartpole", num_games=8, actor_batch=8, train_batch=8, num_threads=1, progress=False,
             tensorboard=False)


def frames_of(folder: Path) -> list[float]:
    """The frames column of the run's progress.csv."""
    with open(folder / "progress.csv", newline="") as f:
        return [float(row["frames"]) for row in csv.DictReader(f)]


# --- rlpytorch.config ---------------------------------------------------------


def test_a_shipped_config_by_name_with_a_setting_over_it():
    config = rlpytorch.config("cartpole_fast", seed=3)
    shipped = rlpytorch.config("cartpole_fast")
    assert config.seed == 3 and dataclasses.replace(config, seed=shipped.seed) == shipped
    in_file = read_config_file("cartpole_fast")
    assert in_file and all(getattr(shipped, name) == value for name, value in in_file.items())
    assert rlpytorch.config(seed=3).optimizer != shipped.optimizer  # the file's, not the default


def test_an_unknown_setting_is_an_args_error_naming_it():
    with pytest.raises(ArgsError, match=r"unknown settings \['lrr'\] for --method ppo"):
        rlpytorch.config(method="ppo", lrr=0.1)
    with pytest.raises(ArgsError, match="ratio_clamp"):  # ActorCritic's, not PPO's
        rlpytorch.config(method="ppo", ratio_clamp=2.0)


@pytest.mark.parametrize("setting, named", [
    (dict(num_games="many"), "num_games"),
    (dict(T=2.5), "T: expected an integer"),
    (dict(progress="no"), "progress: expected true/false"),
    (dict(returns="mine"), "returns: 'mine' is not one of"),
])
def test_a_value_of_the_wrong_type_or_choice_is_an_args_error_naming_the_setting(setting, named):
    with pytest.raises(ArgsError, match=named):
        rlpytorch.config(**setting)


def test_an_unknown_method_is_an_args_error_listing_the_methods():
    with pytest.raises(ArgsError, match=r"method.*'nope'.*actor_critic"):
        rlpytorch.config(method="nope")


def test_the_method_picks_the_dataclass_with_a_typed_field_per_flag_and_its_suggested_defaults():
    ppo = rlpytorch.config(method="ppo")
    assert type(ppo) is config_class("ppo") and type(ppo).__name__ == "PpoConfig"
    assert type(rlpytorch.config(method="dqn")).__name__ == "DqnConfig"
    fields = {field.name: field for field in dataclasses.fields(ppo)}
    flags = arguments("ppo").args
    assert set(fields) == {*flags, "resume"}  # every flag of the command line, and resume
    typed = [name for name, arg in flags.items() if arg.default is not None]
    assert typed and all(fields[name].type is flags[name].value_type for name in typed)
    assert (fields["T"].type, fields["clip_eps"].type, fields["progress"].type) == (int, float, bool)
    assert ppo.T == 17 and config_class("ppo")().T == 17  # PPO's suggested window, not GameLoader's default
    assert ppo.returns == "gae" and rlpytorch.config().T != 17
    assert "clip_eps" not in {field.name for field in dataclasses.fields(rlpytorch.config())}


# --- the command line and the typed path ----------------------------------------


def test_the_command_line_and_the_typed_path_give_the_same_configuration_and_the_same_run():
    assert "deterministic" in arguments("ppo").args and GameLoader.deterministic is False  # CartPole takes it
    argv = ["--method", "ppo", "--game", "cartpole", "--num_games", "8", "--actor_batch", "8", "--train_batch", "8",
            "--num_threads", "1", "--no-progress", "--no-tensorboard", "--deterministic", "--seed", "5",
            "--num_frames", "3000", "--clip_eps", "0.1", "--eval_episodes", "3", "--save_dir", ""]
    typed = rlpytorch.config(**SMALL, method="ppo", deterministic=True, seed=5, num_frames=3000, clip_eps=0.1,
                             eval_episodes=3, save_dir="")
    by_command_line = main(argv)
    assert by_command_line.config == typed
    run = rlpytorch.train(typed)
    assert (run.summary.frames, run.summary.updates) == (by_command_line.summary.frames,
                                                        by_command_line.summary.updates)
    assert run.summary.frames >= 3000 and run.summary.updates > 0
    assert run.summary.mean_return == by_command_line.summary.mean_return
    assert run.eval.returns.tolist() == by_command_line.eval.returns.tolist()


def test_rlpytorch_train_is_a_plain_function_and_the_command_line_a_script_over_it():
    # in a fresh interpreter, so that no other test's imports change what the package holds
    probe = ("import inspect, rlpytorch, rlpytorch.training; "
             "assert inspect.isfunction(rlpytorch.train) and rlpytorch.train is rlpytorch.training.train")
    subprocess.run([sys.executable, "-c", probe], check=True)
    root = Path(__file__).resolve().parents[2]
    helped = subprocess.run([sys.executable, "-m", "rlpytorch.train", "--method", "ppo", "--help"],
                            capture_output=True, text=True, cwd=root)
    assert helped.returncode == 0, helped.stderr
    assert "--clip_eps" in helped.stdout and "--num_frames" in helped.stdout


# --- Training ---------------------------------------------------------------------


def test_learn_called_twice_trains_the_sum_and_its_stats_go_on(tmp_path):
    run = tmp_path / "run"
    config = rlpytorch.config(**SMALL, num_frames=4000, log_every=500, eval_at_end=False, save_dir=str(run))
    with rlpytorch.Training(config) as training:
        first = training.learn(2000)
        assert 2000 <= training.frames == first.frames < 2200
        second = training.learn(2000)
        assert 4000 <= training.frames == second.frames < 4200 and second.updates > first.updates
        history = training.session.logger.records
    frames = [record["frames"] for record in history]
    assert len(frames) >= 6 and frames == sorted(set(frames))  # one record per interval, on from the first call
    assert frames[-1] >= 4000 and any(f < 2200 for f in frames) and any(f > 2200 for f in frames)
    written = frames_of(run)
    assert written == sorted(set(written)) and written[-1] == frames[-1]


def test_learn_zero_frames_trains_none():
    config = rlpytorch.config(**SMALL, num_frames=3000, eval_at_end=False, save_dir="")
    with rlpytorch.Training(config) as training:
        assert training.learn(0).frames == 0 and training.frames == 0
        assert 500 <= training.learn(500).frames < 700  # and the games start afresh for the next call


def test_the_learning_rate_schedule_runs_over_num_frames_not_over_one_learn_call():
    config = rlpytorch.config(**SMALL, num_frames=8000, lr_schedule="linear", eval_at_end=False, save_dir="")
    with rlpytorch.Training(config) as training:
        training.learn(4000)
        mi = training.session.trainer.mi
        lr = mi.optimizers["model"].param_groups[0]["lr"]
    assert lr == pytest.approx(0.5 * mi.lr, abs=0.05 * mi.lr)  # half way through 8000 frames, not at the end of 4000


# --- Run ----------------------------------------------------------------------------


def test_a_run_with_a_folder_has_its_last_model_and_with_eval_every_its_best(tmp_path):
    run = rlpytorch.train(rlpytorch.config(**SMALL, num_frames=2000, eval_every=1000, eval_episodes=2,
                                           save_dir=str(tmp_path / "run")))
    assert run.folder == (tmp_path / "run").absolute() and run.config.num_frames == 2000
    assert run.last_model == run.folder / "last.pt" and run.last_model.is_file()
    assert run.best_model == run.folder / "best.pt" and run.best_model.is_file()
    assert run.eval is not None and len(run.eval.returns) == 2
    assert [record["frames"] for record in run.history if "return_mean" in record]  # the stats lines' records
    plain = rlpytorch.train(rlpytorch.config(**SMALL, num_frames=500, eval_at_end=False,
                                             save_dir=str(tmp_path / "plain")))
    assert plain.last_model.is_file() and plain.best_model is None  # no periodic evaluation, no best
    nowhere = rlpytorch.train(rlpytorch.config(**SMALL, num_frames=500, eval_at_end=False, save_dir=""))
    assert nowhere.folder is None and nowhere.last_model is None and nowhere.best_model is None


def test_a_config_that_resumes_a_folder_goes_on_from_its_checkpoint(tmp_path):
    folder = tmp_path / "run"
    first = rlpytorch.train(rlpytorch.config(**SMALL, seed=7, num_frames=1000, log_every=500, eval_at_end=False,
                                             save_dir=str(folder)))
    config = rlpytorch.config(resume=str(folder), num_frames=2000)
    assert (config.seed, config.num_frames, config.resume) == (7, 2000, str(folder))  # the run's settings, and ours
    resumed = rlpytorch.train(config)
    assert resumed.folder == first.folder and resumed.summary.frames >= 2000
    frames = [record["frames"] for record in resumed.history if "return_mean" in record]
    assert frames and min(frames) > first.summary.frames  # on from the checkpoint, not from 0
    assert f"resumed from {folder / 'last.pt'} at {first.summary.frames:,} frames" in (folder / "log.txt").read_text()
    assert yaml.safe_load((folder / "config.yaml").read_text())["num_frames"] == 2000
    assert frames_of(folder) == sorted(set(frames_of(folder)))
