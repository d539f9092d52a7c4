"""End to end on the real engine: CartPole learns within a fixed frame budget,
and ``python -m rlpytorch.evaluate --load`` reproduces the score ``python -m rlpytorch.train`` reported.

Seeded, with the deterministic engine, so the run is the same every time.
"""

import pytest

import elfpy  # noqa: F401  (the real engine: this test must not pass without it)
from rlpytorch import evaluate, train

FRAMES = 100_000
RANDOM_POLICY_RETURN = 22.0  # mean CartPole return of uniformly random actions


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    save_dir = tmp_path_factory.mktemp("checkpoints")
    argv = ["--game", "cartpole", "--method", "actor_critic", "--seed", "0", "--deterministic"]
    argv += ["--num_threads", "2", "--num_frames", str(FRAMES), "--eval_episodes", "20"]
    argv += ["--save_dir", str(save_dir), "--no-progress", "--log_every", str(FRAMES)]
    return train.main(argv), save_dir


def test_cartpole_return_rises_well_above_random_within_the_frame_budget(trained):
    out, _ = trained
    assert out["summary"].frames == pytest.approx(FRAMES, abs=64)
    assert out["config"]["lr"] == 2e-3  # ActorCritic's suggested rate, not ModelInterface's default
    assert out["summary"].mean_return > 4 * RANDOM_POLICY_RETURN
    assert out["eval"].mean > 4 * RANDOM_POLICY_RETURN


def test_evaluate_reproduces_the_score_from_the_saved_checkpoint(trained):
    out, save_dir = trained
    result = evaluate.main(["--load", str(save_dir / "last.pt"), "--no-progress"])
    assert result.returns.tolist() == out["eval"].returns.tolist()


def test_ppo_learns_cartpole_within_a_smaller_frame_budget():
    argv = ["--game", "cartpole", "--method", "ppo", "--seed", "0", "--deterministic", "--num_threads", "2"]
    argv += ["--num_frames", "60000", "--eval_episodes", "20", "--save_dir", ""]
    argv += ["--no-progress", "--log_every", "60000"]
    out = train.main(argv)
    assert out["config"]["T"] == 17  # PPO's suggested window, not GameLoader's default
    assert out["summary"].mean_return > 8 * RANDOM_POLICY_RETURN
    assert out["eval"].mean > 8 * RANDOM_POLICY_RETURN
