"""examples/ppo_vector.py: the single-file PPO on elfpy.make_vector runs, counts its frames and learns."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ppo_vector.py"
ROLLOUT = 4 * 128  # frames per update at the defaults: --num-envs 4, --num-steps 128


@pytest.fixture(scope="module")
def ppo_vector() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ppo_vector", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ppo_vector_improves_on_cartpole_within_16_updates(ppo_vector, one_torch_thread, capsys) -> None:
    result = ppo_vector.train(ppo_vector.parse_args(["--total-timesteps", str(16 * ROLLOUT), "--solved-return", "0"]))
    assert result["frames"] == 16 * ROLLOUT and not result["solved"]
    returns = result["episode_returns"]
    assert len(returns) > 100
    # A random policy lasts about 22 steps; seed 1 goes from 26 (first 30 episodes) to 44 (last 30).
    first, last = np.mean(returns[:30]), np.mean(returns[-30:])
    assert last > 1.5 * first, (first, last)
    assert "steps/s" in capsys.readouterr().out


def test_ppo_vector_stops_once_the_last_100_episodes_reach_the_solved_return(ppo_vector, one_torch_thread) -> None:
    budget = 32 * ROLLOUT
    result = ppo_vector.train(ppo_vector.parse_args(["--total-timesteps", str(budget), "--solved-return", "35"]))
    assert result["solved"] and result["frames"] < budget and result["frames"] % ROLLOUT == 0
    assert np.mean(result["episode_returns"][-100:]) >= 35
