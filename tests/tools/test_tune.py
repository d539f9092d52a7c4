"""rlpytorch.tune: the space, the study in its folder, pruning on the evaluations, going on after a stop."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from rlpytorch import tune

# A stand-in for rlpytorch.train: an evaluation every --eval_every frames (a few frames past
# each multiple, as batches land), worth lr per evaluation so far. A run of lr 1 waits after
# its first evaluation for the SIGTERM of the pruner (up to 20 s, then it goes on: pruning failed).
FAKE_TRAIN = """
import json, sys, time
from pathlib import Path
args = sys.argv[1:]
value = lambda name: args[len(args) - 1 - args[::-1].index(name) + 1]  # the last one wins, as in argparse
folder, every, lr = Path(value("--save_dir")), int(value("--eval_every")), float(value("--lr"))
(folder / "args.json").write_text(json.dumps(args))
if "--fail" in args:
    sys.exit(1)
csv = folder / "progress.csv"
if not csv.exists():
    csv.write_text("frames,return_mean,eval_return_mean\\n")
for k in range(1, 4):
    with open(csv, "a") as f:
        f.write(f"{k * every - 5},0.5,\\n{k * every + 3},,{lr * k}\\n")
    if lr == 1 and k == 1:
        for _ in range(400):
            time.sleep(0.05)
"""


@pytest.fixture
def fake_train(tmp_path: Path, monkeypatch) -> list[str]:
    (tmp_path / "fake_train.py").write_text(FAKE_TRAIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(tune, "POLL_SECONDS", 0.05)
    return ["--entry", "fake_train", "--eval_every", "10", "--out", str(tmp_path / "study")]


def stored(out: Path) -> optuna.Study:
    return optuna.load_study(study_name="tune", storage=f"sqlite:///{out / 'study.db'}")


def test_space_settings_are_parsed_and_bad_ones_named(tmp_path: Path) -> None:
    assert tune.parse_dimension("lr=loguniform:1e-4:1e-2") == tune.Dimension("lr", "loguniform", 1e-4, 1e-2)
    assert tune.parse_dimension("--num_games=choice:32, 64,32") == tune.Dimension("num_games", "choice",
                                                                                  choices=("32", "64"))
    assert tune.parse_dimension("T=int:2:8") == tune.Dimension("T", "int", 2.0, 8.0)
    for bad in ("lr", "lr=normal:0:1", "lr=uniform:1", "lr=loguniform:0:1", "lr=uniform:2:1", "n=int:1.5:3",
                "g=choice:,"):
        with pytest.raises(argparse.ArgumentTypeError, match=repr(bad)):
            tune.parse_dimension(bad)
    space = tmp_path / "space.yaml"
    space.write_text("lr: loguniform:1e-4:1e-2\nnum_games: choice:32,64\n")
    assert [d.name for d in tune.read_space_file(space)] == ["lr", "num_games"]
    space.write_text("lr: gauss:1:2\n")
    with pytest.raises(tune.SearchError, match="space.yaml: 'lr=gauss:1:2'"):
        tune.read_space_file(space)


def test_evaluations_are_read_at_the_multiples_they_crossed_and_a_partial_line_waits(tmp_path: Path) -> None:
    csv = tmp_path / "progress.csv"
    assert tune.read_points(csv, "eval_return_mean", 100) == []
    csv.write_text("frames,return_mean,eval_return_mean\n96,1.5,\n104,,7.5\n196,2,\n230,,8.5")
    assert tune.read_points(csv, "eval_return_mean", 100) == [(100, 7.5)]
    csv.write_text(csv.read_text() + "\n")
    assert tune.read_points(csv, "eval_return_mean", 100) == [(100, 7.5), (200, 8.5)]


def test_a_trial_below_the_median_is_pruned_and_the_same_study_goes_on(tmp_path: Path, fake_train,
                                                                         capsys) -> None:
    out = tmp_path / "study"
    out.mkdir()
    study = optuna.create_study(study_name="tune", storage=f"sqlite:///{out / 'study.db'}", direction="maximize")
    study.enqueue_trial({"lr": "2"})  # complete: 2, 4, 6
    study.enqueue_trial({"lr": "1"})  # 1 at 10 frames, below trial 0's 2 there: pruned, its run stopped
    search = [*fake_train, "--space", "lr=choice:1,2", "--startup_trials", "1"]
    tune.main([*search, "--trials", "2", "--", "--num_frames", "30"])
    first, second = stored(out).trials
    assert (first.state, first.value, first.intermediate_values) == (TrialState.COMPLETE, 6.0, {10: 2, 20: 4, 30: 6})
    assert (second.state, second.intermediate_values) == (TrialState.PRUNED, {10: 1.0})
    assert (out / "trial1" / "progress.csv").read_text().count("\n") == 3  # the run stopped after one evaluation
    args = json.loads((out / "trial0" / "args.json").read_text())
    assert args[:4] == ["--num_frames", "30", "--eval_every", "10"] and args[-2:] == ["--lr", "2"]
    text = capsys.readouterr().out
    assert "[2/2] trial 1 (lr=1): pruned at 10 frames (1)" in text
    assert "best: trial 0 (lr=2): last eval_return_mean 6" in text
    assert (out / "study.png").stat().st_size > 0

    tune.main([*search, "--trials", "2", "--", "--num_frames", "30"])  # as many trials as asked: none runs
    assert len(stored(out).trials) == 2
    tune.main([*search, "--trials", "3", "--", "--num_frames", "30"])  # one more trial, in the same study
    assert [t.number for t in stored(out).trials] == [0, 1, 2] and (out / "trial2" / "args.json").exists()
    assert "2 trials so far, 1 to run" in capsys.readouterr().out


def test_no_trial_is_pruned_before_prune_after_frames(tmp_path: Path, fake_train) -> None:
    out = tmp_path / "study"
    out.mkdir()
    study = optuna.create_study(study_name="tune", storage=f"sqlite:///{out / 'study.db'}", direction="maximize")
    study.enqueue_trial({"lr": "2"})
    study.enqueue_trial({"lr": "0.5"})  # below trial 0 from the first evaluation on
    tune.main([*fake_train, "--space", "lr=choice:0.5,2", "--startup_trials", "1", "--prune_after", "20",
               "--trials", "2", "--", "--num_frames", "30"])
    pruned = stored(out).trials[1]
    assert (pruned.state, pruned.intermediate_values) == (TrialState.PRUNED, {10: 0.5, 20: 1.0})


def test_a_trial_is_worth_its_last_evaluation_or_their_mean(tmp_path: Path, fake_train) -> None:
    search = [*fake_train, "--space", "lr=choice:2", "--trials", "1", "--", "--num_frames", "30"]
    assert tune.main(["--value", "mean", *search]).trials[0].value == 4.0  # (2 + 4 + 6) / 3


def test_a_trial_cut_off_is_tried_again_in_its_folder_from_its_checkpoint(tmp_path: Path, fake_train) -> None:
    out = tmp_path / "study"
    search = [*fake_train, "--space", "lr=choice:2,3"]
    tune.main([*search, "--trials", "1", "--", "--num_frames", "10"])
    cut_off = stored(out).ask({"lr": optuna.distributions.CategoricalDistribution(["2", "3"])})  # left running
    folder = out / f"trial{cut_off.number}"
    cut_off.set_user_attr("folder", str(folder))
    folder.mkdir()
    (folder / "last.pt").write_bytes(b"checkpoint")
    tune.main([*search, "--trials", "2", "--", "--num_frames", "10"])
    trials = stored(out).trials
    assert [t.state for t in trials] == [TrialState.COMPLETE, TrialState.FAIL, TrialState.COMPLETE]
    assert trials[2].params == cut_off.params and trials[2].user_attrs["retry_of"] == 1
    assert json.loads((folder / "args.json").read_text())[-2:] == ["--resume", str(folder)]


def test_a_failed_run_counts_and_the_search_goes_on(tmp_path: Path, fake_train, capsys) -> None:
    tune.main([*fake_train, "--space", "lr=choice:2", "--trials", "2", "--", "--num_frames", "10", "--fail"])
    trials = stored(tmp_path / "study").trials
    assert [t.state for t in trials] == [TrialState.FAIL, TrialState.FAIL]  # each counted once, not tried again
    assert "exit code 1" in trials[0].user_attrs["error"]
    assert "[2/2] trial 1 (lr=2): failed: exit code 1" in capsys.readouterr().out


def test_another_search_in_the_folder_is_refused_naming_the_study(tmp_path: Path, fake_train, capsys) -> None:
    argv = [*fake_train, "--trials", "0", "--space", "lr=choice:1,2"]
    tune.main(argv)
    with pytest.raises(SystemExit) as stop:
        tune.main([*argv, "--space", "T=int:2:8"])
    assert stop.value.code == 1
    error = capsys.readouterr().err
    assert f"{tmp_path / 'study' / 'study.db'} holds a search of another space" in error
    with tune.folder_locked(tmp_path / "study"), pytest.raises(SystemExit):
        tune.main(argv)
    assert "another rlpytorch.tune is searching in" in capsys.readouterr().err


def test_a_search_of_cartpole_trains_and_records_its_evaluations(tmp_path: Path) -> None:
    out = tmp_path / "study"
    study = tune.main(["--space", "lr=loguniform:1e-3:1e-2", "--trials", "1", "--eval_every", "1000",
                       "--out", str(out), "--", "--game", "cartpole", "--num_games", "16", "--actor_batch", "16",
                       "--train_batch", "16", "--num_frames", "2000", "--eval_episodes", "4", "--no-progress",
                       "--no-eval_at_end"])
    (trial,) = study.trials
    assert trial.state == TrialState.COMPLETE and sorted(trial.intermediate_values) == [1000, 2000]
    assert trial.value == trial.intermediate_values[2000]
    assert f"lr: {trial.params['lr']!r}" in (out / "trial0" / "config.yaml").read_text()
