"""The loops: budgets, checkpoints, Ctrl-C and failures, the progress bar (on the fake engine)."""

import io
import re
import sys

import numpy as np
import pytest
from fakes import fake_context
from tqdm import tqdm

from rlpytorch.core.stats import StatsLogger
from rlpytorch.learners.evaluator import Evaluator
from rlpytorch.models import MLPActorCritic
from rlpytorch.models.base import read_checkpoint
from rlpytorch.run.eval_iters import EvalIters
from rlpytorch.run.single_process import SingleProcessRun


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
    assert 0 < len(summary.returns) <= 100 and summary.mean_return == pytest.approx(np.mean(summary.returns))


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


class Terminal(io.StringIO):
    """What a terminal receives: both streams' characters, in order."""

    def isatty(self):
        return True


def run_printing_to(stream, monkeypatch, trainer, tmp_path):
    """A run with its bar and stats lines on ``stream`` (both stdout and stderr)."""
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.setattr(sys, "stderr", stream)
    return runner(trainer, tmp_path, progress=True, logger=StatsLogger(echo=True)).run(fake_context())


def test_on_a_terminal_the_bar_reaches_100_percent_and_shows_each_stats_lines_return(trainer, tmp_path,
                                                                                       monkeypatch):
    terminal = Terminal()
    summary = run_printing_to(terminal, monkeypatch, trainer, tmp_path)
    # The terminal shows the last drawing of each line: split at carriage returns and newlines.
    shown = [part for part in re.split(r"[\r\n]", terminal.getvalue()) if part.strip()]
    stats_lines = [i for i, part in enumerate(shown) if part.startswith("F ")]
    assert len(stats_lines) == 4  # every 500 frames, the last one at the end
    for i in stats_lines:  # on a line of its own, after a bar with its frames and mean return
        frames, mean_return = re.match(r"F ([\d,]+)  R ([-\d.]+|nan)", shown[i]).groups()
        bar = shown[i - 1]
        assert f"R={mean_return}" in bar and f"{tqdm.format_sizeof(int(frames.replace(',', '')))}/2.00k" in bar, bar
    assert "100%" in shown[stats_lines[-1] - 1] and summary.frames >= 2000


def test_in_a_log_file_no_bar_runs_into_the_stats_lines(trainer, tmp_path, monkeypatch):
    log = io.StringIO()  # stdout and stderr redirected to one file: not a terminal
    run_printing_to(log, monkeypatch, trainer, tmp_path)
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) == 4 and all(line.startswith("F ") for line in lines)


def test_the_evaluation_bar_is_drawn_on_a_terminal_only(monkeypatch):
    for stream, drawn in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stdout", stream)
        monkeypatch.setattr(sys, "stderr", stream)
        evaluator = Evaluator(MLPActorCritic((4,), 2), num_games=4, eval_episodes=4)
        EvalIters(evaluator, progress=True).run(fake_context(num_games=4, train=False))
        assert ("4/4 [" in stream.getvalue()) == drawn and ("\r" in stream.getvalue()) == drawn
