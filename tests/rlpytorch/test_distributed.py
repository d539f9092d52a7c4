"""Data-parallel training with torchrun: 2 ranks over gloo on this machine (gradients and
normalization statistics merged over the ranks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch
from ddp_ranks import UPDATES, fixed_batch, train

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
