"""``python -m rlpytorch.evaluate``: what it takes from the checkpoint, and what it refuses before playing."""

import pytest

import rlpytorch
from rlpytorch import evaluate, training
from rlpytorch.core.args_provider import ArgsError
from rlpytorch.models.base import read_checkpoint


@pytest.fixture(scope="module")
def run_without_progress(tmp_path_factory):
    """A short native CartPole run trained with --no-progress (which its checkpoint's args record)."""
    run = tmp_path_factory.mktemp("evaluate") / "run"
    rlpytorch.train(rlpytorch.config(game="cartpole", num_games=8, actor_batch=8, train_batch=8, num_frames=500,
                                     eval_at_end=False, progress=False, tensorboard=False, save_dir=str(run)))
    assert read_checkpoint(run / "last.pt")["args"]["progress"] is False
    return run


def recorded(monkeypatch, setting: str) -> list:
    """The values of ``setting`` that evaluate.main hands the evaluation, one per call."""
    values = []
    play = evaluate.evaluate

    def recording_evaluate(*args, **kwargs):
        values.append(kwargs[setting])
        return play(*args, **kwargs)

    monkeypatch.setattr(evaluate, "evaluate", recording_evaluate)
    return values


def test_progress_is_this_runs_setting_not_the_checkpoints(run_without_progress, monkeypatch):
    shown = recorded(monkeypatch, "progress")
    evaluate.main(["--load", str(run_without_progress), "--eval_episodes", "2"])
    evaluate.main(["--load", str(run_without_progress), "--eval_episodes", "2", "--no-progress"])
    assert shown == [True, False]


def test_the_configuration_is_printed_with_verbose_only_whatever_the_training_said(run_without_progress, tmp_path,
                                                                                    capsys):
    import torch

    checkpoint = read_checkpoint(run_without_progress / "last.pt")
    checkpoint["args"]["verbose"] = True  # a run trained with --verbose
    torch.save(checkpoint, tmp_path / "verbose.pt")
    evaluate.main(["--load", str(tmp_path / "verbose.pt"), "--eval_episodes", "2", "--no-progress"])
    quiet = capsys.readouterr().out
    assert "effective configuration" not in quiet and quiet.count("\n") == 1  # the result's line
    evaluate.main(["--load", str(tmp_path / "verbose.pt"), "--eval_episodes", "2", "--no-progress", "--verbose"])
    assert capsys.readouterr().out.startswith("effective configuration:\n")


def test_video_of_a_game_that_cannot_draw_itself_is_one_line_before_any_episode(run_without_progress, tmp_path,
                                                                                  monkeypatch):
    def no_episode(*args, **kwargs):
        raise AssertionError("an episode was played before --video was refused")

    monkeypatch.setattr(evaluate, "evaluate", no_episode)
    argv = ["--load", str(run_without_progress), "--video", str(tmp_path / "videos")]
    with pytest.raises(ArgsError, match="--video: game 'cartpole' cannot draw itself"):
        evaluate.main(argv)
    with pytest.raises(SystemExit) as exit_:
        training.command_line(evaluate.main, "python -m rlpytorch.evaluate", argv)
    assert str(exit_.value.code).startswith("python -m rlpytorch.evaluate: error: --video: game 'cartpole'")
    assert "\n" not in str(exit_.value.code) and not (tmp_path / "videos").exists()


def test_a_model_trained_on_a_gpu_evaluates_where_this_run_says(run_without_progress, tmp_path, monkeypatch):
    """A checkpoint's ``device: cuda`` is where it trained, not where it must be evaluated."""
    import torch

    checkpoint = read_checkpoint(run_without_progress / "last.pt")
    checkpoint["args"]["device"] = "cuda"
    torch.save(checkpoint, tmp_path / "gpu.pt")
    devices = recorded(monkeypatch, "device")
    evaluate.main(["--load", str(tmp_path / "gpu.pt"), "--eval_episodes", "2", "--no-progress"])
    assert devices == ["cpu"]


def test_load_trained_rebuilds_the_saved_model_and_its_game(run_without_progress):
    import torch

    checkpoint = read_checkpoint(run_without_progress / "last.pt")
    model, loader = evaluate.load_trained(run_without_progress, {"num_games": 3})
    assert (loader.game, loader.num_games) == ("cartpole", 3)
    assert model.step == checkpoint["step"]
    saved = checkpoint["state_dict"]
    assert saved and all(torch.equal(value, saved[key]) for key, value in model.state_dict().items())
