"""The committed MiniRTS models still beat the built-in AIs they were trained against
(capture the flag included).

Each model file carries its training configuration (game options included), so
this rebuilds game and model from it, as ``python -m rlpytorch.evaluate`` does, and plays a
fixed set of seeded games greedily. The thresholds sit well below the figures
of docs/results/2026-11-25-minirts.md ("Learning against the built-in AIs", 1000 games), so
they catch a broken model, loader or game rule, not noise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlpytorch.evaluate import load_trained
from rlpytorch.run.eval_iters import evaluate

PRETRAINED = Path(__file__).resolve().parents[2] / "pretrained"


def greedy_win_rate(path: Path, episodes: int) -> float:
    model, loader = load_trained(path, {"num_threads": 1})
    return evaluate(model, loader, episodes, "greedy", progress=False, seed=0).statistic_mean("won")


@pytest.mark.parametrize(
    ("name", "min_win_rate"),
    [("minirts_simple_ac.pt", 0.85), ("minirts_hit_and_run_ac.pt", 0.8), ("minirts_ctf_ac.pt", 0.75)],
)
def test_committed_model_beats_its_built_in_opponent(name, min_win_rate, one_torch_thread):
    assert greedy_win_rate(PRETRAINED / name, episodes=128) >= min_win_rate
