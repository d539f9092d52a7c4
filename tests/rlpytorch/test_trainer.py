"""The actor/train callbacks and the evaluator, on hand-made batches."""

import numpy as np
import pytest
import torch
from fake_engine import FakeBatch, train_window
from fakes import fake_context

from rlpytorch.acting.act import RecurrentStates, to_tensors
from rlpytorch.acting.sampler import Sampler
from rlpytorch.learners.evaluator import Evaluator
from rlpytorch.learners.trainer import Trainer
from rlpytorch.methods import ActorCritic, forward_window
from rlpytorch.models import GRUActorCritic, LSTMActorCritic, MLPActorCritic, ModelSettings
from rlpytorch.models.interface import ModelInterface


def actor_batch(terminal=(False, True, False), returns=(0.0, 12.0, 0.0), game_ids=(0, 1, 2), s=None):
    n = len(terminal)
    data = {
        "s": np.zeros((n, 4), np.float32) if s is None else s,
        "terminal": np.array(terminal),
        "episode_return": np.array(returns, np.float32),
        "episode_length": np.array(returns, np.int32),
    }
    return FakeBatch("actor", data, np.array(game_ids))


def test_actor_replies_actions_behaviour_and_values_per_row(trainer):
    batch = actor_batch(s=np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32))  # rows that differ
    reply = trainer.actor(batch)
    assert reply["a"].shape == (3,) and reply["a"].dtype == np.int64
    with torch.no_grad():  # each row's values: the actor model's on that row's observation
        out = trainer.mi["actor"](torch.from_numpy(batch["s"]))
    np.testing.assert_allclose(reply["pi"], out["pi"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(reply["V"], out["V"].numpy(), rtol=1e-6)
    assert len({tuple(row) for row in reply["pi"].round(6)}) == 3
    a, _ = Sampler(seed=0)(out["pi"])  # the actions: the seeded sampler's draws from those policies
    np.testing.assert_array_equal(reply["a"], a.numpy())


def test_actor_counts_frames_and_records_finished_episodes(trainer):
    trainer.actor(actor_batch())
    trainer.actor(actor_batch(terminal=(True, False, True), returns=(20.0, 3.0, 40.0)))
    assert trainer.frames == 6
    assert list(trainer.episodes.returns) == [12.0, 20.0, 40.0]


def test_actor_runs_without_autograd(trainer, monkeypatch):
    seen = []
    forward = trainer.mi["actor"].forward

    def spy(s):
        seen.append(torch.is_inference_mode_enabled())
        return forward(s)

    monkeypatch.setattr(trainer.mi["actor"], "forward", spy)
    trainer.actor(actor_batch())
    assert seen == [True]


def test_train_updates_the_learner_and_refreshes_the_actor_every_n_updates(trainer):
    actor_bias = trainer.mi["actor"].heads["value"].net[-1].bias.clone()
    trainer.train(train_window())
    assert trainer.updates == 1 and trainer.mi["model"].step == 1
    assert not torch.equal(trainer.mi["model"].heads["value"].net[-1].bias, actor_bias)
    assert torch.equal(trainer.mi["actor"].heads["value"].net[-1].bias, actor_bias)  # N = 2: not yet
    trainer.train(train_window())
    assert torch.equal(trainer.mi["actor"].heads["value"].net[-1].bias, trainer.mi["model"].heads["value"].net[-1].bias)
    assert set(trainer.update_stats.pop()) >= {"loss", "entropy", "grad_norm", "value_loss"}


def test_linear_lr_schedule_decays_with_frames(trainer):
    trainer.total_frames = 100
    trainer.frames = 75
    trainer.train(train_window())
    assert trainer.mi.optimizers["model"].param_groups[0]["lr"] == pytest.approx(0.25e-3)


def test_to_tensors_shares_memory_on_cpu_and_skips_absent_keys():
    batch = train_window()
    tensors = to_tensors(batch, ["s", "truncated"], torch.device("cpu"))
    assert list(tensors) == ["s"]
    assert tensors["s"].data_ptr() == batch["s"].__array_interface__["data"][0]


def test_evaluator_counts_only_the_first_episode_of_each_chosen_game():
    evaluator = Evaluator(MLPActorCritic((4,), 2), num_games=4, eval_episodes=2)
    assert (evaluator.lanes, evaluator.per_lane) == (2, 1)
    # game 3 finishes first (short episode) but is not among the counted games 0 and 1
    evaluator.actor(actor_batch((True, False, False), (5.0, 0.0, 0.0), game_ids=(3, 0, 1)))
    evaluator.actor(actor_batch((True, False, False), (30.0, 0.0, 0.0), game_ids=(0, 1, 2)))
    assert not evaluator.done
    evaluator.actor(actor_batch((True, True, False), (7.0, 50.0, 0.0), game_ids=(0, 1, 2)))
    assert evaluator.done
    result = evaluator.result()
    assert result.returns.tolist() == [30.0, 50.0]
    assert (result.mean, result.std) == (40.0, 10.0)


def test_evaluator_takes_several_episodes_per_game_when_games_are_few():
    evaluator = Evaluator(MLPActorCritic((4,), 2), num_games=2, eval_episodes=3)
    assert (evaluator.lanes, evaluator.per_lane) == (2, 2)
    for r in (1.0, 2.0, 3.0):
        evaluator.actor(actor_batch((True, True, False), (r, 10 * r, 0.0), game_ids=(0, 1, 2)))
    assert evaluator.result().returns.tolist() == [1.0, 2.0, 10.0]


def test_evaluator_averages_the_episode_statistics_on_terminal_rows():
    evaluator = Evaluator(MLPActorCritic((4,), 2), num_games=2, eval_episodes=2, statistics=["won"])
    batch = actor_batch((True, True, False), (1.0, -1.0, 0.0))
    batch._data["won"] = np.array([True, False, False])
    evaluator.actor(batch)
    assert evaluator.result().statistic_mean("won") == 0.5
    assert str(evaluator.result()).endswith(", won 0.500")


def test_trainer_records_episode_statistics_by_key(trainer):
    trainer.statistics = ("won",)
    batch = actor_batch((True, True, False), (1.0, -1.0, 0.0))
    batch._data["won"] = np.array([True, False, True])
    trainer.actor(batch)
    assert trainer.episodes.summary()["won_mean"] == 0.5


def test_recurrent_states_are_kept_per_game_and_seat_and_grow_with_new_ids():
    states = RecurrentStates(2)
    batch = FakeBatch("actor", {}, np.array([3, 0]))
    assert states.get(batch).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    states.set(batch, torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    other = FakeBatch("actor", {}, np.array([0, 5]))
    other.seats = np.array([0, 1])
    assert states.get(other).tolist() == [[3.0, 4.0], [0.0, 0.0]]
    assert states.get(FakeBatch("actor", {}, np.array([3]))).tolist() == [[1.0, 2.0]]


def test_recurrent_actor_replies_the_state_it_started_from_and_windows_replay_it_exactly():
    torch.manual_seed(0)
    model = LSTMActorCritic((4,), 2, ModelSettings(hidden=8, core_hidden=4))
    trainer = Trainer(ModelInterface().add_actor_critic(model), ActorCritic.from_config({}), Sampler(seed=0))
    gc = fake_context(num_games=4, T=6, state_size=model.state_size)
    windows = []
    gc.reg_callback("actor", trainer.actor)
    gc.reg_callback("train", lambda b: windows.append({k: torch.as_tensor(np.array(b[k])) for k in b.keys()}))
    gc.start()
    while len(windows) < 8:
        gc.run()
    gc.stop()
    assert windows[0]["h"][0].abs().sum() == 0  # every game starts from zero
    assert any(w["terminal"][1:].any() for w in windows)  # resets inside windows are replayed too
    for w in windows:
        for recurrence in (0, 2):
            out = forward_window(model, w, recurrence)
            torch.testing.assert_close(out["V"], w["V"])
            torch.testing.assert_close(out["states_in"][1:], w["h"][1:])


def test_trainer_trains_a_recurrent_model_on_windows_with_stored_states():
    torch.manual_seed(0)
    model = GRUActorCritic((4,), 2, ModelSettings(hidden=8, core_hidden=4))
    method = ActorCritic.from_config({"recurrence": 2})
    trainer = Trainer(ModelInterface().add_actor_critic(model), method, Sampler(seed=0))
    gc = fake_context(num_games=4, T=6, state_size=model.state_size)
    gc.reg_callback("actor", trainer.actor)
    gc.reg_callback("train", trainer.train)
    gc.start()
    while trainer.updates < 3:
        gc.run()
    gc.stop()
    assert model.step == 3


def test_evaluator_with_no_episodes_raises_value_error_naming_the_option():
    with pytest.raises(ValueError, match="eval_episodes"):
        Evaluator(MLPActorCritic((4,), 2), num_games=4, eval_episodes=0)
