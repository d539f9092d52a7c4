"""Running normalization against numpy on known streams, and its checkpoint round trip."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlpytorch.models.normalization import ObservationNormalizer, RewardNormalizer, RunningMeanStd


def test_chunked_updates_equal_numpy_over_the_whole_stream() -> None:
    data = np.random.default_rng(0).normal(3.0, 2.0, size=(1000, 3))
    stats = RunningMeanStd((3,))
    for chunk in np.array_split(data, [1, 7, 300, 301, 999]):  # uneven chunks, one of a single row
        stats.update(torch.from_numpy(chunk))
    assert stats.count.item() == 1000
    np.testing.assert_allclose(stats.mean.numpy(), data.mean(0), rtol=1e-12)
    np.testing.assert_allclose(stats.var.numpy(), data.var(0), rtol=1e-10)


def test_leading_dims_are_samples() -> None:
    stats = RunningMeanStd(())
    stats.update(torch.tensor([[1.0, 2.0], [3.0, 6.0]]))  # [T, B] of scalars: 4 samples
    assert stats.mean.item() == 3.0 and stats.var.item() == pytest.approx(np.var([1, 2, 3, 6]))


def test_observations_are_normalized_and_clipped_and_integer_keys_pass() -> None:
    norm = ObservationNormalizer({"s": (2,)}, clip=1.5)
    norm.update({"s": torch.tensor([[0.0, 10.0], [2.0, 10.0], [4.0, 10.0]])})
    out = norm({"s": torch.tensor([[4.0, 10.0], [20.0, 10.0]]), "board": torch.ones(2, 3, dtype=torch.uint8)})
    # key 0: mean 2, var 8/3 -> (4 - 2) / sqrt(8/3) = 1.2247; 20 clips at 1.5. Key 1: var 0 -> 0.
    assert out["s"][0, 0].item() == pytest.approx(2 / np.sqrt(8 / 3), rel=1e-6)
    assert out["s"][1, 0].item() == 1.5 and out["s"][:, 1].abs().max().item() == 0.0
    assert out["board"].dtype == torch.uint8


def test_statistics_travel_in_the_state_dict_and_frozen_ones_do_not_move() -> None:
    norm = ObservationNormalizer({"s": (2,)})
    norm.update({"s": torch.randn(50, 2) * 3 + 1})
    copy = ObservationNormalizer({"s": (2,)})
    copy.load_state_dict(norm.state_dict())
    x = {"s": torch.randn(4, 2)}
    torch.testing.assert_close(copy(x)["s"], norm(x)["s"])
    copy.freeze()
    copy.update({"s": torch.full((10, 2), 100.0)})
    torch.testing.assert_close(copy(x)["s"], norm(x)["s"])


def test_reward_scale_uses_discounted_returns_across_overlapping_windows_and_episode_ends() -> None:
    norm = RewardNormalizer(gamma=0.5)
    # Game 7, window 1: rows 1..2 give G = 1, then 0.5 * 1 + 2 = 2.5 (terminal: G restarts).
    norm.update(torch.tensor([[9.0], [1.0], [2.0]]), torch.tensor([[False], [False], [True]]), ids=[7])
    # Window 2 repeats the last row (r = 2, terminal) as its row 0, which is skipped; then G = 4, 0.5 * 4 + 4 = 6.
    norm.update(torch.tensor([[2.0], [4.0], [4.0]]), torch.tensor([[True], [False], [False]]), ids=[7])
    assert norm.stats.var.item() == pytest.approx(np.var([1, 2.5, 4, 6]))
    assert norm(torch.tensor([3.0])).item() == pytest.approx(3 / np.sqrt(np.var([1, 2.5, 4, 6])), rel=1e-6)
    assert norm.returns == {7: 6.0}


def test_training_with_normalization_saves_statistics_of_every_learned_frame_and_evaluation_leaves_them(tmp_path):
    import csv

    import rlpytorch
    from rlpytorch.core.game_loader import GameLoader
    from rlpytorch.models.loader import load_model
    from rlpytorch.run.eval_iters import evaluate

    run = tmp_path / "run"
    rlpytorch.train(rlpytorch.config(game="cartpole", num_frames=6000, log_every=1000000, norm_obs=True,
                                     norm_reward=True, save_dir=str(run), progress=False, eval_at_end=False))
    with open(run / "progress.csv", newline="") as f:
        learned = float(list(csv.DictReader(f))[-1]["frames_learned"])
    loader = GameLoader(game="cartpole", num_games=8, actor_batch=8, train_batch=8)
    probe = loader.context(num_games=1, seed=0)
    model = load_model(run / "last.pt", loader.observation_spec(probe), loader.num_actions(probe))
    probe.stop()
    assert model.obs_norm.stats["s"].count.item() == learned  # rows 1..T-1 of every window, once
    assert model.reward_norm.stats.count.item() == learned
    assert model.obs_norm.stats["s"].var.min().item() > 0
    before = {k: v.clone() for k, v in model.state_dict().items() if "norm" in k}
    evaluate(model, loader, 4, "greedy", progress=False, seed=0)
    for key, value in model.state_dict().items():
        if "norm" in key:
            assert torch.equal(value, before[key]), key  # evaluation reads the statistics, never moves them
