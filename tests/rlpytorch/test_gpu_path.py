"""The GPU path on the CPU: actor and learner devices, pinned staging (only for
CUDA), and the alternating sampler. No test needs a GPU: the only CUDA call
replaced is the page-locking of a buffer (``Tensor.pin_memory``)."""

import itertools

import numpy as np
import pytest
import torch
from fake_engine import FakeBatch, train_window
from fakes import fake_loader

import elfpy
import rlpytorch
from rlpytorch.acting.sampler import Sampler
from rlpytorch.core.args_provider import ArgsProvider
from rlpytorch.core.transfer import HostStaging, needs_pinning, staging_for
from rlpytorch.learners.trainer import Trainer
from rlpytorch.methods import ActorCritic
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.base import read_checkpoint
from rlpytorch.models.interface import ModelInterface
from rlpytorch.run.multi_process import MultiProcessRun
from rlpytorch.training import components


def make_trainer(**settings):
    torch.manual_seed(0)
    mi = ModelInterface(lr=1e-2).add_actor_critic(MLPActorCritic((4,), 2, ModelSettings(hidden=16)))
    return Trainer(mi, ActorCritic.from_config({}), Sampler(seed=0), **settings)


def actor_batch(n=6, seed=0):
    rng = np.random.default_rng(seed)
    data = {
        "s": rng.normal(size=(n, 4)).astype(np.float32),
        "terminal": np.zeros(n, bool),
        "episode_return": np.zeros(n, np.float32),
        "episode_length": np.zeros(n, np.int32),
    }
    return FakeBatch("actor", data, np.arange(n))


def parameters(model):
    return [p.detach().clone() for p in model.parameters()]


# --- devices --------------------------------------------------------------------


def test_actor_and_learner_devices_are_settings_that_default_to_device():
    provider = ArgsProvider(components("actor_critic"))
    config = provider.parse([])
    assert (config["device"], config["actor_device"], config["learner_device"]) == ("cpu", "", "")
    config = provider.parse(["--actor_device", "cuda:1", "--learner_device", "cuda:0"])
    assert (config["actor_device"], config["learner_device"]) == ("cuda:1", "cuda:0")
    trainer = make_trainer()
    assert trainer.actor_on == trainer.learner_on == torch.device("cpu")


def test_actor_and_learner_are_placed_on_their_own_devices():
    # "meta" is a device every torch build has: the actor goes there, the learner stays.
    trainer = make_trainer(actor_device="meta")
    assert {p.device.type for p in trainer.mi["actor"].parameters()} == {"meta"}
    assert {p.device.type for p in trainer.mi["model"].parameters()} == {"cpu"}
    trainer = make_trainer(device="meta", learner_device="cpu")
    assert {p.device.type for p in trainer.mi["actor"].parameters()} == {"meta"}
    assert {p.device.type for p in trainer.mi["model"].parameters()} == {"cpu"}


def test_the_multi_process_learner_is_placed_on_the_learner_device():
    trainer = make_trainer(device="meta", learner_device="cpu")  # the acting model on "meta", as --device says
    setup = MultiProcessRun(trainer, progress=False)._learner_setup()
    assert setup["device"] == "cpu"
    learning = setup["learning"](torch.device(setup["device"]))  # as the learner process builds it
    assert {p.device.type for p in learning.model.parameters()} == {"cpu"}


@pytest.mark.parametrize("every", [1, 3])
def test_actor_receives_the_learners_weights_after_every_k_updates(every):
    trainer = make_trainer(actor_device="cpu", learner_device="cpu", actor_sync_every=every)
    initial = parameters(trainer.mi["actor"])
    for update in range(1, 7):
        trainer.train(train_window(B=6, seed=update))
        actor, learner = parameters(trainer.mi["actor"]), parameters(trainer.mi["model"])
        if update % every == 0:
            assert all(torch.equal(a, b) for a, b in zip(actor, learner, strict=True)), update
            initial = actor
        else:
            assert all(torch.equal(a, b) for a, b in zip(actor, initial, strict=True)), update
            assert not all(torch.equal(a, b) for a, b in zip(actor, learner, strict=True)), update


# --- pinned staging -------------------------------------------------------------


def test_pinned_staging_is_chosen_for_cuda_devices_only():
    assert not needs_pinning("cpu") and staging_for("cpu") is None
    assert needs_pinning("cuda:0") and needs_pinning(torch.device("cuda"))
    staging = staging_for("cuda:1")  # allocates nothing until the first batch: no GPU needed
    assert isinstance(staging, HostStaging) and staging.pin and staging.device == torch.device("cuda:1")
    trainer = make_trainer()
    assert trainer.actor_staging is None and trainer.window_staging is None


def test_on_cpu_the_engines_arrays_are_used_in_place():
    trainer = make_trainer()
    batch = train_window(B=6)
    seen = {}
    trainer.method.update = lambda mi, tensors: seen.update(tensors) or {}
    trainer.train(batch)
    assert np.shares_memory(seen["s"].numpy(), batch["s"])


def test_staging_copies_every_batch_into_the_same_preallocated_buffers():
    staging = HostStaging("cpu", pin=False)
    first = actor_batch(6, seed=1)
    out = staging.to_device(first, ["s", "terminal"])
    torch.testing.assert_close(out["s"], torch.from_numpy(first["s"]))
    assert not np.shares_memory(out["s"].numpy(), first["s"])  # a copy, not the engine's memory
    pointer = out["s"].data_ptr()
    partial = actor_batch(4, seed=2)  # a partial batch uses the front rows of the same buffer
    out = staging.to_device(partial, ["s"])
    assert out["s"].shape == (4, 4) and out["s"].data_ptr() == pointer
    torch.testing.assert_close(out["s"], torch.from_numpy(partial["s"]))
    larger = actor_batch(9, seed=3)  # a larger one gets a larger buffer
    out = staging.to_device(larger, ["s"])
    assert out["s"].shape == (9, 4)
    torch.testing.assert_close(out["s"], torch.from_numpy(larger["s"]))


def test_staging_brings_replies_back_as_numpy_views_of_reused_buffers():
    staging = HostStaging("cpu", pin=False)
    replies = staging.to_host({"a": torch.tensor([1, 0, 1]), "V": torch.tensor([0.5, 1.5, 2.5])})
    np.testing.assert_array_equal(replies["a"], [1, 0, 1])
    np.testing.assert_array_equal(replies["V"], np.array([0.5, 1.5, 2.5], np.float32))
    again = staging.to_host({"a": torch.tensor([0, 0]), "V": torch.tensor([7.0, 8.0])})
    np.testing.assert_array_equal(again["a"], [0, 0])
    assert np.shares_memory(again["a"], replies["a"])


def test_staging_pins_each_buffer_once(monkeypatch):
    pinned = []

    def fake_pin(tensor):  # the one CUDA call: page-locking needs a GPU driver
        pinned.append(tuple(tensor.shape))
        return tensor

    monkeypatch.setattr(torch.Tensor, "pin_memory", fake_pin)
    staging = HostStaging("cpu", pin=True)
    for seed in range(3):
        staging.to_device(actor_batch(6, seed), ["s", "terminal"])
        staging.to_host({"a": torch.zeros(6, dtype=torch.int64)})
    assert sorted(pinned) == [(6,), (6,), (6, 4)]


def test_a_buffer_is_refilled_only_after_its_last_copy_finished(monkeypatch):
    log, numbers = [], itertools.count()

    class FakeEvent:  # stands for torch.cuda.Event: the CUDA calls, and only they, are replaced
        def record(self, stream):
            self.name = f"event{next(numbers)}"
            log.append(("record", self.name))

        def synchronize(self):
            log.append(("wait", self.name))

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device: None)
    staging = HostStaging("cpu", pin=False)
    staging._cuda = True  # a CUDA staging's bookkeeping, on CPU tensors
    staging.to_device(actor_batch(seed=0), ["s"])
    assert log == [("record", "event0")]
    staging.to_device(actor_batch(seed=1), ["s"])  # s's buffer: wait for the copy that read it
    assert log[1:] == [("wait", "event0"), ("record", "event1")]
    log.clear()
    replies = staging.to_host({"a": torch.tensor([1, 2]), "V": torch.tensor([0.5, 0.25])})
    assert log == [("record", "event2"), ("wait", "event2")]  # every reply copy queued, then one wait
    np.testing.assert_array_equal(replies["a"], [1, 2])


def test_actor_through_a_staging_replies_as_without_one():
    plain, staged = make_trainer(), make_trainer()
    staged.actor_staging = HostStaging("cpu", pin=False)
    staged.window_staging = HostStaging("cpu", pin=False)
    for seed in range(3):
        expected, got = plain.actor(actor_batch(seed=seed)), staged.actor(actor_batch(seed=seed))
        assert sorted(got) == sorted(expected)
        for key in expected:
            np.testing.assert_array_equal(got[key], expected[key], err_msg=key)
        plain.train(train_window(B=6, seed=seed))
        staged.train(train_window(B=6, seed=seed))
    for a, b in zip(parameters(plain.mi["model"]), parameters(staged.mi["model"]), strict=True):
        assert torch.equal(a, b)


# --- the alternating sampler -------------------------------------------------------


def alternating_context(num_games, deterministic):
    loader = fake_loader(num_games)
    loader.alternate = True
    gc = elfpy.GameContext("cartpole", num_games=num_games, num_threads=2, seed=0, deterministic=deterministic)
    gc.add_tag("actor", loader.acting_batch(gc), ["s"], ["a"])
    return gc


def test_alternate_makes_the_actor_batch_half_the_game_seats():
    loader = fake_loader(8)
    gc = loader.context(seed=0)
    assert loader.acting_batch(gc) == 8
    loader.alternate = True
    assert loader.acting_batch(gc) == 4
    loader = fake_loader(1)
    loader.alternate = True
    with pytest.raises(ValueError, match="--alternate needs at least 2 game seats"):
        loader.acting_batch(loader.context(seed=0))


@pytest.mark.timeout(60)
def test_deterministic_alternation_serves_the_two_halves_of_the_games_in_turn():
    gc = alternating_context(8, deterministic=True)
    halves = []
    with gc:
        for step, batch in enumerate(gc):
            halves.append(sorted(batch.game_ids.tolist()))
            batch.reply({"a": np.zeros(len(batch), np.int64)})
            if step == 9:
                break
    assert halves == [[0, 1, 2, 3], [4, 5, 6, 7]] * 5


@pytest.mark.timeout(60)
def test_alternation_serves_every_game_in_batches_of_half_the_games():
    # Until every game is served (liveness: a game never served hangs the test
    # and its timeout names it), not for a fixed count: first come, first
    # served, a pool worker that holds a game's first step and waits for a CPU
    # (a loaded machine) misses many batches while the other games fill them.
    gc = alternating_context(16, deterministic=False)
    served = np.zeros(16, int)
    with gc:
        for step, batch in enumerate(gc):
            games = batch.game_ids.tolist()
            assert len(games) == 8 and len(set(games)) == 8
            served[games] += 1
            batch.reply({"a": np.zeros(len(batch), np.int64)})
            if step >= 39 and served.min() >= 1:
                break
    assert served.sum() == 8 * (step + 1)


def test_alternating_training_equals_the_plain_run_in_deterministic_mode(tmp_path):
    base = dict(game="cartpole", num_games=16, actor_batch=16, train_batch=16, deterministic=True, num_frames=4000,
                num_threads=2, progress=False, eval_at_end=False, log_every=100000, seed=3)
    rlpytorch.train(rlpytorch.config(**base, save_dir=str(tmp_path / "plain")))
    rlpytorch.train(rlpytorch.config(**base, alternate=True, save_dir=str(tmp_path / "alternating")))
    plain = read_checkpoint(tmp_path / "plain" / "last.pt")
    alternating = read_checkpoint(tmp_path / "alternating" / "last.pt")
    assert plain["step"] == alternating["step"] > 10
    for key, value in plain["state_dict"].items():
        torch.testing.assert_close(alternating["state_dict"][key], value, rtol=1e-5, atol=1e-6, msg=key)
