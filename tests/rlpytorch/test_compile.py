"""How the models run: ``ModelInterface``'s ``compile``, ``amp`` and ``channels_last``.

On the CPU the compiled runs use the ``aot_eager`` mode: the capture that
every mode shares (Dynamo's graphs and guards, autograd's joint graph) without
generating code, which takes a second where Inductor's C++ took 30-40 s with an
empty cache on a 2-core machine. The tests marked ``cuda`` run whenever a GPU
is there, with Inductor: CUDA graphs (``reduce-overhead``), bf16 and
channels-last convolutions on the device they are for. With torch 2.11 the
CPU tests caught a compiled graph's wrong gradients (``models.layers.Tanh``).
"""

import numpy as np
import pytest
import torch
import torch._dynamo
from fake_engine import FakeBatch

from rlpytorch.acting.sampler import Sampler
from rlpytorch.core.args_provider import ArgsError, ArgsProvider
from rlpytorch.learners.trainer import Trainer
from rlpytorch.methods import PPO, ActorCritic
from rlpytorch.models import MLPActorCritic, ModelSettings, SharedActorCritic
from rlpytorch.models.encoders import ObsKey
from rlpytorch.models.interface import ModelInterface
from rlpytorch.training import components

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
METHODS = {"actor_critic": ActorCritic, "ppo": PPO}
GAMES = 6


def make_trainer(method="actor_critic", device="cpu", model=None, **run):
    """A small CartPole trainer whose models run as ``run`` says (compile, amp, channels_last)."""
    torch.manual_seed(0)
    model = model or MLPActorCritic((4,), 2, ModelSettings(hidden=16))
    mi = ModelInterface(lr=1e-2, **run).add_actor_critic(model)
    return Trainer(mi, METHODS[method].from_config({}, **({"seed": 0} if method == "ppo" else {})),
                   Sampler(seed=0), device=device)


def actor_batch(seed):
    rng = np.random.default_rng(seed)
    data = {"s": rng.normal(size=(GAMES, 4)).astype(np.float32), "terminal": np.zeros(GAMES, bool),
            "episode_return": np.zeros(GAMES, np.float32), "episode_length": np.zeros(GAMES, np.int32)}
    return FakeBatch("actor", data, np.arange(GAMES))


def window(seed, T=5, truncations=True):
    """A ``[T, B]`` window whose episodes end; with ``truncations`` some at a time limit (with the
    state they ended in), so that the update also evaluates ``V(final_s)`` on a varying number of rows."""
    rng = np.random.default_rng(seed)
    terminal = rng.random((T, GAMES)) < 0.3
    data = {
        "s": rng.normal(size=(T, GAMES, 4)).astype(np.float32),
        "a": rng.integers(0, 2, (T, GAMES)),
        "pi": np.full((T, GAMES, 2), 0.5, np.float32),
        "V": np.zeros((T, GAMES), np.float32),
        "r": rng.normal(size=(T, GAMES)).astype(np.float32),
        "terminal": terminal,
    }
    if truncations:
        data.update(truncated=terminal & (rng.random((T, GAMES)) < 0.5),
                    final_s=rng.normal(size=(T, GAMES, 4)).astype(np.float32))
    return FakeBatch("train", data, np.arange(GAMES))


def play(trainer, steps, first=0, truncations=True):
    """Steps ``first..first+steps-1``, each an actor batch then a window: the replies, and the learner's weights."""
    replies = []
    for step in range(first, first + steps):
        replies.append(trainer.actor(actor_batch(step)))
        trainer.train(window(step, truncations=truncations))
    return replies, [p.detach().cpu().clone() for p in trainer.mi["model"].parameters()]


def assert_same_run(expected, got, tol=1e-5):
    for step, (want, have) in enumerate(zip(expected[0], got[0], strict=True)):
        np.testing.assert_array_equal(have["a"], want["a"], err_msg=f"actions of step {step}")
        np.testing.assert_allclose(have["V"], want["V"], rtol=tol, atol=tol, err_msg=f"values of step {step}")
    for want, have in zip(expected[1], got[1], strict=True):
        torch.testing.assert_close(have, want, rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles from scratch and counts its own graphs."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


# --- the settings ---------------------------------------------------------------------------


def test_the_settings_are_declared_once_and_reach_the_interface():
    provider = ArgsProvider(components("actor_critic"))
    config = provider.parse([])
    assert (config["compile"], config["amp"], config["channels_last"]) == ("none", "none", True)
    config = provider.parse(["--compile", "reduce-overhead", "--amp", "bf16", "--no-channels_last"])
    mi = ModelInterface.from_config(config)
    assert (mi.compile, mi.amp, mi.channels_last) == ("reduce-overhead", "bf16", False)
    for bad in (["--compile", "fast"], ["--amp", "fp8"]):
        with pytest.raises(SystemExit):
            provider.parse(bad)
    with pytest.raises(ArgsError, match="amp"):
        provider.args["amp"].convert("fp16")


def test_by_default_models_run_as_they_are():
    trainer = make_trainer()
    assert trainer.mi["model"]._compiled_call_impl is None and trainer.mi["actor"]._compiled_call_impl is None


def test_every_registered_model_runs_compiled_and_a_copy_runs_plain():
    trainer = make_trainer(compile="aot_eager")
    model, actor = trainer.mi["model"], trainer.mi["actor"]
    assert model._compiled_call_impl is not None and actor._compiled_call_impl is not None
    assert model.clone()._compiled_call_impl is None  # e.g. the model a learner process gets
    assert list(model.state_dict()) == list(MLPActorCritic((4,), 2, ModelSettings(hidden=16)).state_dict())


# --- compiled --------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["actor_critic", "ppo"])
def test_compiled_acting_and_training_equal_the_eager_run_and_compile_in_the_first_steps_only(method):
    eager = play(make_trainer(method), 4)
    trainer = make_trainer(method, compile="aot_eager")
    # Acting, training and V(final_s) on 1 then 2 rows (seeds 0, 1): compiled, then for any number of rows.
    first = play(trainer, 2)
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    assert graphs > 0
    rest = play(trainer, 2, first=2)  # V(final_s) on 5 and 4 rows
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == graphs  # no step compiled again
    assert not torch._dynamo.utils.counters["graph_break"]  # each call is one whole graph
    assert_same_run(eager, (first[0] + rest[0], rest[1]))


# --- bf16 autocast -------------------------------------------------------------------------


def test_bf16_autocast_runs_the_forward_in_bf16_and_returns_float32():
    trainer = make_trainer(amp="bf16")
    model, plain = trainer.mi["model"], make_trainer().mi["model"]
    x = torch.randn(7, 4)
    out, exact = model(x), plain(x)
    assert {v.dtype for v in out.values()} == {torch.float32}
    torch.testing.assert_close(out["pi"], exact["pi"], rtol=0, atol=0.02)  # bf16 keeps 8 bits of mantissa
    assert not torch.equal(out["V"], exact["V"])  # the linear layers did run in bf16


@pytest.mark.parametrize("method", ["actor_critic", "ppo"])
def test_bf16_training_keeps_float32_weights_and_stats_and_stays_near_float32(method):
    exact = play(make_trainer(method), 3)
    replies, weights = play(make_trainer(method, amp="bf16"), 3)
    assert all(w.dtype == torch.float32 for w in weights)
    assert all(r["pi"].dtype == np.float32 and r["V"].dtype == np.float32 for r in replies)
    for want, have in zip(exact[1], weights, strict=True):
        torch.testing.assert_close(have, want, rtol=0, atol=0.02)


def test_bf16_and_compiled_together():
    exact = play(make_trainer(amp="bf16"), 2)
    assert_same_run(exact, play(make_trainer(amp="bf16", compile="aot_eager"), 2), tol=1e-3)


# --- channels-last ---------------------------------------------------------------------------


def conv_model():
    return SharedActorCritic({"s": ObsKey((3, 8, 8))}, 4, ModelSettings(hidden=8, channels="4,4"))


def image_batch(rows):
    return torch.randn(rows, 3, 8, 8, generator=torch.Generator().manual_seed(rows))


def test_channels_last_stores_conv_weights_nhwc_with_the_same_outputs_and_checkpoint():
    torch.manual_seed(0)
    plain = conv_model()
    mi = ModelInterface(channels_last=True).add_actor_critic(plain.clone())
    model = mi["model"]
    convs = [p for p in model.parameters() if p.dim() == 4]
    assert convs and all(p.is_contiguous(memory_format=torch.channels_last) and not p.is_contiguous()
                         for p in convs)
    x = image_batch(5)
    torch.testing.assert_close(model(x)["pi"], plain(x)["pi"])
    mi.update_model("actor", "model")  # the actor keeps its own layout
    assert all(p.is_contiguous(memory_format=torch.channels_last) for p in mi["actor"].parameters() if p.dim() == 4)
    fresh = conv_model()
    fresh.load_weights(model.state_dict())  # checkpoints hold the same tensors, whatever their layout
    torch.testing.assert_close(fresh(x)["V"], plain(x)["V"])
    nchw = ModelInterface(channels_last=False).add_actor_critic(plain.clone())["model"]
    assert all(p.is_contiguous() for p in nchw.parameters())


# --- on a GPU ----------------------------------------------------------------------------------


@cuda
@pytest.mark.parametrize("method", ["actor_critic", "ppo"])
def test_cuda_graphs_acting_and_training_agree_with_the_eager_run(method):
    eager = play(make_trainer(method, device="cuda"), 6)
    graphed = play(make_trainer(method, device="cuda", compile="reduce-overhead"), 6)
    assert_same_run(eager, graphed, tol=1e-4)


@cuda
def test_cuda_bf16_training_stays_near_float32():
    exact = play(make_trainer(device="cuda"), 3)
    replies, weights = play(make_trainer(device="cuda", amp="bf16", compile="default"), 3)
    for want, have in zip(exact[1], weights, strict=True):
        torch.testing.assert_close(have, want, rtol=0, atol=0.02)


@cuda
def test_cuda_channels_last_convolutions_agree_with_nchw():
    torch.manual_seed(0)
    plain = conv_model().cuda()
    mi = ModelInterface(channels_last=True).add_actor_critic(plain.clone())
    x = image_batch(64).cuda()
    torch.testing.assert_close(mi["model"](x)["V"], plain(x)["V"], rtol=1e-4, atol=1e-4)
