"""``python -m rlpytorch.train --method dqn | r2d2 | drqn``: the value-based trainer, a Q model, replay
settings, a run folder that evaluates and resumes (without the replay contents)."""

import pytest
import torch

import rlpytorch
from rlpytorch import evaluate, training
from rlpytorch.core.args_provider import ArgsProvider
from rlpytorch.learners.value_trainer import ValueTrainer
from rlpytorch.methods import DQN, DRQN
from rlpytorch.models.base import read_checkpoint

SMALL = dict(num_games=8, actor_batch=8, train_batch=8, num_threads=1, progress=False, hidden=16, replay_batch=16,
             learning_starts=400, eval_episodes=4)


def test_dqn_run_offers_replay_and_variant_settings_not_actor_critic_ones():
    provider = ArgsProvider(training.components("dqn"))
    config = provider.parse(["--prioritized", "--dueling", "--num_atoms", "11", "--polyak_tau", "0.01"],
                            defaults=DQN.run_defaults)
    assert (config["model"], config["sampler"], config["n_step"], config["replay_ratio"]) == ("q", "epsilon_greedy",
                                                                                             3, 0.5)
    assert config["prioritized"] and config["dueling"] and config["num_atoms"] == 11
    with pytest.raises(SystemExit):  # ActorCritic's setting is unknown to a DQN run
        provider.parse(["--returns", "gae"])


def test_drqn_run_takes_its_own_defaults_of_r2d2_settings():
    config = ArgsProvider(training.components("drqn")).parse([], defaults=DRQN.run_defaults)
    assert (config["burn_in"], config["value_rescaling"], config["stored_state"], config["n_step"]) == (0, False,
                                                                                                     False, 1)


def test_value_method_refuses_a_model_without_q(tmp_path):
    with pytest.raises(ValueError, match="needs a Q model"):
        rlpytorch.train(rlpytorch.config(method="dqn", model="mlp", save_dir="", **SMALL))


def test_value_method_refuses_a_game_without_one_discrete_action():
    with pytest.raises(ValueError, match="Q models need one Discrete action"):
        rlpytorch.train(rlpytorch.config(method="dqn", game="pendulum", save_dir="", **SMALL))


def test_dqn_trains_through_rlpytorch_train_into_a_run_folder_that_evaluates_and_resumes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_dir = tmp_path / "run"
    out = rlpytorch.train(rlpytorch.config(method="dqn", num_frames=2000, replay_ratio=0.1, double=True, n_step=2,
                                           save_dir=str(run_dir), **SMALL))
    summary, config = out.summary, out.config
    assert summary.frames >= 2000 and len(out.eval.returns) == 4
    assert summary.updates == pytest.approx(0.1 * (summary.frames - 400), abs=0.1 * 8 * 8 + 1)
    checkpoint = read_checkpoint(run_dir / "last.pt")
    assert checkpoint["model"] == "q" and checkpoint["step"] == summary.updates
    assert checkpoint["args"]["method"] == "dqn" and config.n_step == 2
    assert not any("replay" in key for key in checkpoint["state_dict"])  # weights only, no replay contents

    result = evaluate.main(["--load", str(run_dir), "--no-progress", "--episodes", "4"])
    assert len(result.returns) == 4

    with rlpytorch.Training(rlpytorch.config(method="dqn", num_frames=200, load=str(run_dir / "last.pt"), save_dir="",
                                             eval_at_end=False, **SMALL)) as training:
        trainer = training.session.trainer
        loaded = {k: v.clone() for k, v in trainer.mi["target"].state_dict().items()}  # as built, before learning
        training.learn(200)
    assert isinstance(trainer, ValueTrainer) and trainer.updates == 0  # 200 frames < learning_starts
    for key, value in checkpoint["state_dict"].items():  # the learner and its target start from the checkpoint
        torch.testing.assert_close(loaded[key], value)
        torch.testing.assert_close(trainer.mi["model"].state_dict()[key], value)
