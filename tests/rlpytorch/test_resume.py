"""Exact resume (``python -m rlpytorch.train --resume``): in deterministic mode a
run stopped and resumed prints the stats lines of the run that never stopped;
a run never overwrites another run's folder."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from rlpytorch import train
from rlpytorch.model_base import read_checkpoint
from rlpytorch.resume import engine_seed, random_states, set_random_states

CONFIGS = Path(__file__).parents[2] / "examples" / "configs"

# 32 CartPole games, a checkpoint every 3000 frames after which the games start afresh.
SMALL = ["--deterministic", "--num_games", "32", "--actor_batch", "16", "--train_batch", "16", "--log_every",
         "1000", "--save_every", "3000", "--restart_games_at_save", "--no-progress", "--no-eval_at_end",
         "--no-tensorboard"]


def stats_lines(run_dir: Path, after_resume: bool = False) -> list[str]:
    """The stats lines of ``log.txt`` without their timing (FPS and t); with
    ``after_resume``, only those printed after the last resume."""
    lines = (run_dir / "log.txt").read_text().splitlines()
    if after_resume:
        lines = lines[max(i for i, line in enumerate(lines) if line.startswith("resumed from")):]
    return [re.sub(r" \| FPS [^|]*\| t [^|]*", "", line) for line in lines if line.startswith("F ")]


@pytest.mark.parametrize("method", ["actor_critic", "ppo"])
def test_a_run_resumed_from_its_checkpoint_prints_the_stats_lines_of_the_unbroken_run(tmp_path, method):
    unbroken = tmp_path / "unbroken"
    train.main([*SMALL, "--method", method, "--num_frames", "9000", "--save_dir", str(unbroken)])
    first, second = sorted(unbroken.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    # From the first checkpoint: the rest of the run (linear learning-rate schedule, PPO's
    # minibatch order, the sampler, the engine's next seed) goes exactly as it went.
    out = train.main(["--resume", str(first), "--save_dir", str(tmp_path / "resumed")])
    resumed = stats_lines(tmp_path / "resumed")
    assert len(resumed) >= 6
    assert resumed == stats_lines(unbroken)[-len(resumed):]
    assert out["summary"].frames == read_checkpoint(unbroken / "last.pt")["resume"]["trainer"]["frames"]
    state = read_checkpoint(second)["resume"]["trainer"]
    assert state["updates"] > 0 and state["mi"]["optimizers"]["model"]["state"]  # Adam's moments are saved


def test_a_run_stopped_then_resumed_in_its_folder_prints_what_the_unbroken_run_prints(tmp_path):
    constant = [*SMALL, "--lr_schedule", "constant"]  # the stopped run's budget differs: no schedule over it
    train.main([*constant, "--num_frames", "9000", "--save_dir", str(tmp_path / "unbroken")])
    run = tmp_path / "run"
    train.main([*constant, "--num_frames", "3000", "--save_dir", str(run)])
    lines_before = stats_lines(run)
    train.main(["--resume", str(run), "--num_frames", "9000"])

    resumed = stats_lines(run, after_resume=True)
    assert len(resumed) >= 6
    assert resumed == stats_lines(tmp_path / "unbroken")[-len(resumed):]
    assert stats_lines(run)[: len(lines_before)] == lines_before  # the first part's lines are kept
    about = yaml.safe_load((run / "run.yaml").read_text())
    assert "--num_frames 3000" in about["command"] and "--resume" in about["resumed"][0]["command"]
    assert yaml.safe_load((run / "config.yaml").read_text())["num_frames"] == 9000
    frames = [float(row.split(",")[0]) for row in (run / "progress.csv").read_text().splitlines()[1:]]
    assert frames[0] == 1008 and frames[-1] == 9008  # the first part's rows are kept


def test_a_new_run_refuses_a_folder_that_holds_a_run_and_leaves_it_untouched(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "launch.json").write_text("{}")  # other files do not make a run
    train.main([*SMALL, "--num_frames", "500", "--save_dir", str(run)])
    before = {path.name: path.read_bytes() for path in run.iterdir()}
    with pytest.raises(ValueError, match=r"already holds a run: --resume .*run continues it"):
        train.main([*SMALL, "--num_frames", "500", "--save_dir", str(run)])
    assert {path.name: path.read_bytes() for path in run.iterdir()} == before

    other = tmp_path / "other"
    train.main([*SMALL, "--num_frames", "500", "--save_dir", str(other)])
    with pytest.raises(ValueError, match="continues in .*run or in a folder without a run"):
        train.main(["--resume", str(run), "--save_dir", str(other)])


def test_resume_refuses_a_checkpoint_of_weights_only_and_the_multi_process_runner(tmp_path):
    run = tmp_path / "run"
    train.main([*SMALL, "--num_frames", "500", "--save_dir", str(run)])
    checkpoint = read_checkpoint(run / "last.pt")
    del checkpoint["resume"]
    torch.save(checkpoint, tmp_path / "weights.pt")
    with pytest.raises(ValueError, match="holds weights only"):
        train.main(["--resume", str(tmp_path / "weights.pt"), "--save_dir", str(tmp_path / "new")])
    with pytest.raises(ValueError, match="--resume runs with --runner single"):
        train.main(["--resume", str(run), "--runner", "multi"])


def test_random_states_come_back_exactly():
    states = random_states()
    drawn = (random.random(), np.random.rand(3).tolist(), torch.rand(3).tolist())
    set_random_states(states)
    assert (random.random(), np.random.rand(3).tolist(), torch.rand(3).tolist()) == drawn


def test_engine_seed_stream_starts_at_the_run_seed_and_gives_each_start_its_own_seed():
    assert engine_seed(7, 0) == 7
    seeds = [engine_seed(7, k) for k in range(1, 50)]
    assert len(set(seeds)) == 49 and 7 not in seeds
    assert seeds == [engine_seed(7, k) for k in range(1, 50)]  # a function of (seed, k) only


def test_dqn_resumes_its_networks_counters_and_schedule_with_an_empty_replay(tmp_path):
    small = ["--method", "dqn", "--num_games", "8", "--actor_batch", "8", "--train_batch", "8", "--hidden", "16",
             "--replay_batch", "16", "--learning_starts", "200", "--replay_ratio", "0.25", "--no-progress",
             "--no-eval_at_end", "--no-tensorboard", "--log_every", "10000", "--save_every", "500"]
    train.main([*small, "--num_frames", "600", "--save_dir", str(tmp_path / "run")])
    checkpoint = read_checkpoint(tmp_path / "run" / "model_504.pt")["resume"]["trainer"]
    assert set(checkpoint["mi"]["models"]) == {"model", "actor", "target"}
    out = train.main(["--resume", str(tmp_path / "run" / "model_504.pt"), "--num_frames", "1000",
                      "--save_dir", str(tmp_path / "resumed")])
    summary = out["summary"]
    # The counters go on from the checkpoint's (the replay ratio and epsilon schedule with them).
    window = 0.25 * 8 * 6 + 1  # updates are owed at each window of T = 6 rows of 8 games
    assert checkpoint["frames"] == 504 and checkpoint["updates"] == pytest.approx(0.25 * (504 - 200), abs=window)
    assert summary.frames == 1000 and summary.updates == pytest.approx(0.25 * (1000 - 200), abs=window)
    assert read_checkpoint(tmp_path / "resumed" / "last.pt")["step"] == summary.updates  # the learner's own count


def test_sac_resumes_its_parts_optimizers_and_exploration_with_an_empty_replay(tmp_path):
    small = ["--config", str(CONFIGS / "pendulum_sac.yaml"), "--num_games", "4", "--actor_batch", "4",
             "--train_batch", "4", "--net_arch", "16,16", "--replay_batch", "16", "--learning_starts", "100",
             "--no-progress", "--no-eval_at_end", "--no-tensorboard", "--log_every", "10000", "--save_every", "200"]
    train.main([*small, "--num_frames", "300", "--save_dir", str(tmp_path / "run")])
    last = sorted((tmp_path / "run").glob("model_*.pt"))[-1]
    state = read_checkpoint(last)["resume"]["trainer"]
    assert {"critic", "policy"} <= set(state["mi"]["optimizers"]) and "generator" in state["sampler"]
    out = train.main(["--resume", str(last), "--num_frames", "400", "--save_dir", str(tmp_path / "resumed")])
    assert out["summary"].frames == 400 and out["summary"].updates > state["updates"]
