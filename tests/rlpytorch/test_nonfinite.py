"""Nothing non-finite trains silently: a loss or gradient that turns NaN or
infinite stops training before any weight takes it (``NonFiniteError``
naming the model), no checkpoint of non-finite weights is written, the
command line prints such an error, or a game's NaN reward, as one line and
exits 1, and ``stop_at_return`` is reached only by a finite mean."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import pytest
import torch
from torch import nn

import rlpytorch
from rlpytorch import training
from rlpytorch.core.finite import NonFiniteError
from rlpytorch.models.base import Model, read_checkpoint
from rlpytorch.models.interface import ModelInterface
from rlpytorch.run.single_process import SingleProcessRun

SMALL = ["--num_games", "8", "--actor_batch", "8", "--train_batch", "8", "--num_threads", "1", "--no-progress",
         "--eval_episodes", "2"]


class Line(Model):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def weights(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize(("spoil", "message"), [
    (lambda out, p: out.sum() * math.nan, r"the loss of model 'critic' turned non-finite \(loss nan"),
    # sqrt at 0: a finite loss (0) with an infinite gradient
    (lambda out, p: torch.sqrt(p - p.detach()).sum(), r"the gradient of model 'critic' turned non-finite \(loss 0.0"),
], ids=["loss", "gradient"])
def test_a_non_finite_loss_or_gradient_raises_naming_the_model_and_no_weight_changes(spoil, message):
    mi = ModelInterface()
    model = mi.add_model("critic", Line(), optimize=True)
    before = weights(model)
    loss = spoil(model(torch.ones(4, 2)), model.fc.weight)
    with pytest.raises(NonFiniteError, match=message):
        mi.step("critic", loss)
    for old, new in zip(before, model.parameters(), strict=True):
        torch.testing.assert_close(new, old, rtol=0, atol=0)
    assert mi.step("critic", model(torch.ones(4, 2)).sum()) > 0  # a finite loss steps as before


def test_non_finite_weights_are_never_written_into_a_checkpoint(tmp_path):
    model = Line()
    path = tmp_path / "last.pt"
    model.save(path)
    written = path.read_bytes()
    with torch.no_grad():
        model.fc.bias.fill_(math.inf)
    with pytest.raises(NonFiniteError, match=r"model 'model' has non-finite weights \('fc.bias'\)"):
        model.save(path)
    assert path.read_bytes() == written
    mi = ModelInterface()
    mi.add_model("critic", model)
    with pytest.raises(NonFiniteError, match=r"model 'critic' has non-finite weights \('fc.bias'\)"):
        mi.state_dict()  # the training state a checkpoint carries


def test_a_model_whose_loss_goes_nan_stops_training_and_keeps_the_last_finite_checkpoint(tmp_path):
    run = tmp_path / "run"
    settings = rlpytorch.config(game="cartpole", num_games=8, actor_batch=8, train_batch=8, num_threads=1,
                                progress=False, eval_at_end=False, save_dir=str(run))
    with rlpytorch.Training(settings) as training:
        training.learn(400)
        saved = read_checkpoint(run / "last.pt")
        with torch.no_grad():
            next(training.model.parameters()).view(-1)[0] = math.nan  # the learner's next loss is NaN
        with pytest.raises(NonFiniteError, match=r"the loss of model 'model' turned non-finite"):
            training.learn(400)
    kept = read_checkpoint(run / "last.pt")
    assert kept["step"] == saved["step"]
    for name, tensor in kept["state_dict"].items():
        torch.testing.assert_close(tensor, saved["state_dict"][name], rtol=0, atol=0)
        assert torch.isfinite(tensor).all(), name


@pytest.mark.parametrize(("setting", "line"), [
    (["--lr", "1e30"], "prog: error: training stopped: the loss of model 'model' turned non-finite"),
    (["--lr", "1e30", "--runner", "multi"],  # raised in the learner process, reported the same
     "prog: error: training stopped: the loss of model 'model' turned non-finite"),
    (["--game", "counter", "--game_options", "nonfinite_at_step=40"],
     "prog: error: game 0 ('counter'): seat 0's reward (key 'r') is nan at step 40"),
], ids=["loss", "loss_in_the_learner_process", "r"])
def test_the_command_line_stops_a_non_finite_run_with_one_line_and_status_1(tmp_path, setting, line):
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_:
        training.command_line(training.main, "prog", [*setting, *SMALL, "--num_frames", "20000", "--save_every", "80",
                                                "--save_dir", str(run)])
    message = str(exit_.value.code)  # sys.exit with a message: status 1
    assert message.startswith(line) and "\n" not in message
    for checkpoint in run.glob("*.pt"):
        assert all(torch.isfinite(t).all() for t in read_checkpoint(checkpoint)["state_dict"].values()), checkpoint


@pytest.mark.parametrize(("mean_return", "reached"), [(math.inf, False), (math.nan, False), (500.0, True)])
def test_stop_at_return_is_reached_only_by_a_finite_mean(mean_return, reached):
    trainer = SimpleNamespace(frames=0, episodes=SimpleNamespace(mean_return=mean_return))
    loop = SingleProcessRun(trainer=trainer, stop_at_return=100.0, progress=False)
    loop._start_time = time.perf_counter()
    loop._marks = {"bar": math.inf, "log": 0, "save": 0, "eval": 0}  # no bar, stats line or checkpoint is due
    summary = SimpleNamespace(target_reached_at=None, target_reached_frames=None)
    loop._after_step(summary)
    assert (summary.target_reached_at is not None) == reached
