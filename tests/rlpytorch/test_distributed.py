"""Data-parallel training with torchrun: 2 ranks over gloo on this machine (gradients and
normalization statistics merged over the ranks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch
from ddp_ranks import UPDATES, fixed_batch, train

import rlpytorch
from rlpytorch.core import distributed

HERE = Path(__file__).resolve().parent


def test_two_ranks_stay_equal_and_match_one_process_on_the_concatenated_batch(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           str(HERE / "ddp_ranks.py"), str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    single = [p.detach() for p in train(fixed_batch(), model_seed=0, distribute=False)["model"].parameters()]
    assert ranks[0]["step"] == ranks[1]["step"] == UPDATES
    for p0, p1, p in zip(ranks[0]["params"], ranks[1]["params"], single, strict=True):
        assert torch.equal(p0, p1)  # the same averaged gradient on both ranks
        torch.testing.assert_close(p0, p, rtol=1e-5, atol=1e-6)
    observations = fixed_batch()["s"].reshape(-1, 4).double()
    for r in ranks:  # each rank saw half the rows, and holds the statistics of all of them
        assert r["obs_count"].item() == observations.shape[0]
        torch.testing.assert_close(r["obs_mean"], observations.mean(0))
        torch.testing.assert_close(r["obs_var"], observations.var(0, unbiased=False))


def test_torchrun_training_stops_every_rank_together_and_only_rank_0_writes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "rlpytorch.train", "--game", "cartpole", "--num_frames", "6000", "--log_every", "3000",
           "--save_dir", str(run_dir), "--no-progress", "--no-eval_at_end"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # rank 1 wrote no folder of its own
    rows = (run_dir / "progress.csv").read_text().splitlines()
    header, last = rows[0].split(","), dict(zip(rows[0].split(","), rows[-1].split(","), strict=True))
    assert "frames_all_ranks" in header
    # Both ranks played: all ranks' frames are about twice rank 0's (each rank's count at the same update).
    assert 1.5 * float(last["frames"]) < float(last["frames_all_ranks"]) < 2.5 * float(last["frames"])
    assert done.stdout.count("trained ") == 1
    resume = torch.load(run_dir / "last.pt", weights_only=True)["resume"]  # rank 0's state: every rank resumes
    assert resume["runner"]["frames_all_ranks"] == float(last["frames_all_ranks"])



def test_a_run_resumes_under_torchrun_every_rank_from_rank_0s_state(tmp_path: Path) -> None:
    # A torchrun checkpoint is rank 0's state (written by the run above: frames_all_ranks beside
    # its own); here one written by a single process, resumed by 2 ranks.
    rlpytorch.train(rlpytorch.config(game="cartpole", progress=False, eval_at_end=False, tensorboard=False,
                                     log_every=1000, num_frames=1500, save_dir=str(tmp_path / "run")))
    state = torch.load(tmp_path / "run" / "last.pt", weights_only=True)["resume"]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m",
           "rlpytorch.train", "--resume", str(tmp_path / "run"), "--num_frames", "3000"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resumed from" in (tmp_path / "run" / "log.txt").read_text()
    # Every rank went on from rank 0's counters: the ranks agree to stop after each update,
    # and all ranks' frames are about twice rank 0's.
    last = torch.load(tmp_path / "run" / "last.pt", weights_only=True)["resume"]
    frames, updates = last["trainer"]["frames"], last["trainer"]["updates"]
    assert frames >= 3000 and updates > state["trainer"]["updates"]
    assert 1.8 * frames < last["runner"]["frames_all_ranks"] < 2.2 * frames  # rank 1 from 0 frames: 1.5x


def test_a_stopped_runs_resume_command_is_the_torchrun_it_came_from(monkeypatch) -> None:
    program = "python -m rlpytorch.train"
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert distributed.relaunch_command(program) == program
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert distributed.relaunch_command(program) == "torchrun --standalone --nproc_per_node 2 -m rlpytorch.train"
    monkeypatch.setenv("WORLD_SIZE", "8")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert distributed.relaunch_command(program) == ("torchrun --nnodes 2 --rdzv_backend c10d --rdzv_endpoint "
                                                     "HOST:PORT --nproc_per_node 4 -m rlpytorch.train")
