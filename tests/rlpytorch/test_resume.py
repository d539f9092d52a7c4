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

import rlpytorch
from rlpytorch import training
from rlpytorch.models.base import read_checkpoint
from rlpytorch.run.resume import engine_seed, random_states, set_random_states

# 32 CartPole games, a checkpoint every 3000 frames after which the games start afresh.
SMALL = dict(deterministic=True, num_games=32, actor_batch=16, train_batch=16, log_every=1000, save_every=3000,
             restart_games_at_save=True, progress=False, eval_at_end=False, tensorboard=False)


def flags(settings: dict) -> list[str]:
    """``settings`` as the command line gives them (a boolean: ``--name`` or ``--no-name``)."""
    argv = []
    for name, value in settings.items():
        argv += [f"--{name}" if value else f"--no-{name}"] if isinstance(value, bool) else [f"--{name}", str(value)]
    return argv


def stats_lines(run_dir: Path, after_resume: bool = False) -> list[str]:
    """The stats lines of ``log.txt`` without their timing (FPS and t); with
    ``after_resume``, only those printed after the last resume."""
    lines = (run_dir / "log.txt").read_text().splitlines()
    if after_resume:
        lines = lines[max(i for i, line in enumerate(lines) if line.startswith("resumed from")):]
    return [re.sub(r"  FPS \S+  t \S+", "", line) for line in lines if line.startswith("F ")]


@pytest.mark.parametrize("method", ["actor_critic", "ppo"])
def test_a_run_resumed_from_its_checkpoint_prints_the_stats_lines_of_the_unbroken_run(tmp_path, method):
    unbroken = tmp_path / "unbroken"
    rlpytorch.train(rlpytorch.config(**SMALL, method=method, num_frames=9000, save_dir=str(unbroken)))
    first, second = sorted(unbroken.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    # From the first checkpoint: the rest of the run (linear learning-rate schedule, PPO's
    # minibatch order, the sampler, the engine's next seed) goes exactly as it went.
    out = rlpytorch.train(rlpytorch.config(resume=str(first), save_dir=str(tmp_path / "resumed")))
    resumed = stats_lines(tmp_path / "resumed")
    assert len(resumed) >= 6
    assert resumed == stats_lines(unbroken)[-len(resumed):]
    assert out.summary.frames == read_checkpoint(unbroken / "last.pt")["resume"]["trainer"]["frames"]
    state = read_checkpoint(second)["resume"]["trainer"]
    assert state["updates"] > 0 and state["mi"]["optimizers"]["model"]["state"]  # Adam's moments are saved


def test_a_run_stopped_then_resumed_in_its_folder_prints_what_the_unbroken_run_prints(tmp_path):
    # The command line's --resume, and the commands run.yaml records.
    constant = [*flags(SMALL), "--lr_schedule", "constant"]  # the stopped run's budget differs: no schedule over it
    training.main([*constant, "--num_frames", "9000", "--save_dir", str(tmp_path / "unbroken")])
    run = tmp_path / "run"
    training.main([*constant, "--num_frames", "3000", "--save_dir", str(run)])
    lines_before = stats_lines(run)
    training.main(["--resume", str(run), "--num_frames", "9000"])

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
    rlpytorch.train(rlpytorch.config(**SMALL, num_frames=500, save_dir=str(run)))
    before = {path.name: path.read_bytes() for path in run.iterdir()}
    with pytest.raises(ValueError, match=r"already holds a run: --resume .*run continues it"):
        rlpytorch.train(rlpytorch.config(**SMALL, num_frames=500, save_dir=str(run)))
    assert {path.name: path.read_bytes() for path in run.iterdir()} == before

    other = tmp_path / "other"
    rlpytorch.train(rlpytorch.config(**SMALL, num_frames=500, save_dir=str(other)))
    with pytest.raises(ValueError, match="continues in .*run or in a folder without a run"):
        rlpytorch.train(rlpytorch.config(resume=str(run), save_dir=str(other)))


def test_resume_refuses_a_checkpoint_of_weights_only(tmp_path):
    run = tmp_path / "run"
    rlpytorch.train(rlpytorch.config(**SMALL, num_frames=500, save_dir=str(run)))
    checkpoint = read_checkpoint(run / "last.pt")
    del checkpoint["resume"]
    torch.save(checkpoint, tmp_path / "weights.pt")
    with pytest.raises(ValueError, match="holds weights only"):
        rlpytorch.train(rlpytorch.config(resume=str(tmp_path / "weights.pt"), save_dir=str(tmp_path / "new")))


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


# Small replay runs: DQN with prioritized 3-step replay, SAC on Pendulum; a checkpoint every 1000
# frames after which the games start afresh.
# (a shipped config's name, the settings over it)
REPLAY_RUNS = {
    "dqn": (None, dict(method="dqn", prioritized=True, n_step=3, num_games=8, actor_batch=8, train_batch=8, hidden=16,
                       replay_batch=16, replay_capacity=2000, learning_starts=200, replay_ratio=0.25)),
    "sac": ("pendulum_sac", dict(num_games=4, actor_batch=4, train_batch=4, net_arch="16,16", replay_batch=16,
                                 replay_capacity=2000, learning_starts=200, replay_ratio=0.25)),
    "r2d2": (None, dict(method="r2d2", prioritized=True, num_games=8, actor_batch=8, train_batch=8, hidden=16,
                        replay_batch=8, replay_capacity=2000, learning_starts=200, replay_ratio=0.02)),
    "maddpg": (None, dict(method="maddpg", game="pz:mpe2.simple_spread_v3",
                          game_options="max_cycles=25,continuous_actions=True", num_games=4, num_workers=1,
                          actor_batch=12, train_batch=12, T=5, net_arch="16", replay_batch=16,
                          replay_capacity=2000, learning_starts=300, replay_ratio=0.1)),
}
REPLAY_SMALL = dict(deterministic=True, log_every=200, save_every=1000, restart_games_at_save=True, progress=False,
                    eval_at_end=False, tensorboard=False)


@pytest.mark.parametrize("method", sorted(REPLAY_RUNS))
def test_a_replay_run_resumed_from_its_checkpoint_prints_the_stats_lines_of_the_unbroken_run(tmp_path, method):
    unbroken = tmp_path / "unbroken"
    file, settings = REPLAY_RUNS[method]
    rlpytorch.train(rlpytorch.config(file, **REPLAY_SMALL, **settings, num_frames=2500, save_dir=str(unbroken)))
    first = min(unbroken.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    # The replay comes back whole (rows, priorities, the sampler's generator), with the
    # networks, optimizers, counters, exploration and the method's generator (SAC's).
    state = read_checkpoint(first)["resume"]["trainer"]
    assert state["updates"] > 0 and (state["replay"]["store"]["count"] > 50).all()  # every lane holds rows
    out = rlpytorch.train(rlpytorch.config(resume=str(first), save_dir=str(tmp_path / "resumed")))
    resumed = stats_lines(tmp_path / "resumed")
    assert len(resumed) >= 6
    assert resumed == stats_lines(unbroken)[-len(resumed):]
    assert out.summary.updates == read_checkpoint(unbroken / "last.pt")["resume"]["trainer"]["updates"]


def test_a_multi_process_run_checkpoints_its_learner_and_resumes_with_either_runner(tmp_path):
    """--runner multi: the learner's models, optimizers and replay are in the checkpoints
    (not deterministic: the actor follows the learner as fast as it publishes)."""
    _, dqn = REPLAY_RUNS["dqn"]
    rlpytorch.train(rlpytorch.config(**dqn, runner="multi", log_every=200, save_every=800, progress=False,
                                     eval_at_end=False, tensorboard=False, num_frames=1000,
                                     save_dir=str(tmp_path / "run")))
    first = min((tmp_path / "run").glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    checkpoint = read_checkpoint(first)
    state = checkpoint["resume"]
    trainer = state["trainer"]
    # Asked for at the save: the updates owed at the windows handed over (wait: at most 4 behind) made
    # and counted here.
    assert trainer["updates"] == state["runner"]["learner"]["updates"] > 0
    assert 0.25 * (trainer["frames"] - 200 - 4 * 40) <= trainer["updates"] <= 0.25 * (trainer["frames"] - 200)
    assert trainer["mi"]["optimizers"]["model"]["state"] and trainer["replay"]["store"]["count"].sum() >= 760
    for key, value in checkpoint["state_dict"].items():  # the learner's weights, not the parent's first ones
        assert torch.equal(value, trainer["mi"]["models"]["model"][key])
    assert trainer["mi"]["steps"]["model"] == trainer["updates"]
    for runner in ("multi", "single"):
        out = rlpytorch.train(rlpytorch.config(resume=str(first), runner=runner, num_frames=1600,
                                               save_dir=str(tmp_path / runner)))
        assert out.summary.updates == pytest.approx(0.25 * (1600 - 200), abs=13)
        rows = (tmp_path / runner / "progress.csv").read_text().splitlines()
        second = dict(zip(rows[0].split(","), rows[2].split(","), strict=True))  # of updates after the resume
        assert float(second["replay_rows"]) > 800  # the replay came back, beside 400 frames since
