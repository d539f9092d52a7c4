"""The loops: budgets, checkpoints, Ctrl-C and failures (on the fake engine)."""


import pytest
from fakes import fake_context

from rlpytorch.model_base import read_checkpoint
from rlpytorch.models import MLPActorCritic
from rlpytorch.runner import EvalIters, SingleProcessRun
from rlpytorch.trainer import Evaluator


def runner(trainer, tmp_path, **kwargs):
    options = {"num_frames": 2000, "log_every": 500, "progress": False, "save_dir": str(tmp_path)}
    return SingleProcessRun(trainer, run_config={"lr": 1e-3}, **{**options, **kwargs})


def test_run_stops_at_the_frame_budget_and_saves_config_with_checkpoint(trainer, tmp_path):
    gc = fake_context()
    summary = runner(trainer, tmp_path, save_every=1000).run(gc)
    assert 2000 <= summary.frames < 2000 + 8
    assert summary.updates == trainer.updates > 0
    assert gc.stopped and not summary.interrupted
    checkpoint = read_checkpoint(tmp_path / "last.pt")
    assert checkpoint["args"] == {"lr": 1e-3}
    assert checkpoint["step"] == trainer.updates
    assert (tmp_path / "model_1000.pt").exists()


def test_run_stops_when_the_target_return_is_reached(trainer, tmp_path):
    summary = runner(trainer, tmp_path, num_frames=10**6, stop_at_return=5.0).run(fake_context())
    assert summary.target_reached_frames == summary.frames < 10**6
    assert summary.mean_return >= 5.0


def test_ctrl_c_stops_the_engine_saves_and_reports_interrupted(trainer, tmp_path):
    gc = fake_context()
    calls = 0
    actor = trainer.actor

    def interrupted_actor(batch):
        nonlocal calls
        calls += 1
        if calls == 20:
            raise KeyboardInterrupt
        return actor(batch)

    trainer.actor = interrupted_actor
    summary = runner(trainer, tmp_path, num_frames=10**6).run(gc)
    assert summary.interrupted and gc.stopped
    assert summary.frames == 19 * 8
    assert (tmp_path / "last.pt").exists()


def test_an_exception_in_a_callback_stops_the_engine_and_propagates(trainer, tmp_path):
    gc = fake_context()

    def broken_train(batch):
        raise ValueError("bad window")

    trainer.train = broken_train
    with pytest.raises(ValueError, match="bad window"):
        runner(trainer, tmp_path).run(gc)
    assert gc.stopped


def test_eval_iters_plays_until_the_evaluator_has_its_episodes():
    gc = fake_context(num_games=4, train=False)
    evaluator = Evaluator(MLPActorCritic((4,), 2), num_games=4, eval_episodes=6)
    result = EvalIters(evaluator, progress=False).run(gc)
    assert len(result.returns) == 6 and gc.stopped
    assert result.statistics == {}  # CartPole declares no episode statistic
    assert 8 <= result.mean <= 60  # an untrained policy balances for a few dozen steps at most
