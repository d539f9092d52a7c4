"""Model checkpoints, model interface and loader."""

from dataclasses import dataclass

import pytest
import torch

from rlpytorch.core.args_provider import ArgsError, Configurable, setting
from rlpytorch.models import MLPActorCritic, ModelSettings, layers
from rlpytorch.models.base import CheckpointError, CheckpointMismatchError, read_checkpoint
from rlpytorch.models.interface import ModelInterface, clip_grad_norm
from rlpytorch.models.layers import DirectSequential, Tanh
from rlpytorch.models.loader import MODELS, ModelLoader, load_model, register_model


def make(hidden=8, layers=1, seed=0):
    torch.manual_seed(seed)
    return MLPActorCritic((4,), 2, ModelSettings(hidden=hidden, layers=layers))


def test_forward_accepts_any_leading_shape():
    model = make()
    out = model(torch.zeros(3, 5, 4))
    assert out["pi"].shape == (3, 5, 2) and out["V"].shape == (3, 5)
    torch.testing.assert_close(out["pi"].sum(-1), torch.ones(3, 5))


def test_save_and_load_restore_weights_step_and_args(tmp_path):
    model = make()
    model.increment_step(7)
    model.save(tmp_path / "m.pt", args={"hidden": 8, "lr": 0.1})
    other = make(seed=1)
    args = other.load(tmp_path / "m.pt")
    assert args == {"hidden": 8, "lr": 0.1}
    assert other.step == 7
    for a, b in zip(model.state_dict().values(), other.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b)


def test_crash_during_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "m.pt"
    make().save(path, args={"version": 1})

    def crash(obj, f):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(OSError, match="disk full"):
        make(seed=1).save(path, args={"version": 2})
    assert read_checkpoint(path)["args"] == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["m.pt"]


def test_loading_into_a_different_architecture_names_the_mismatched_keys(tmp_path):
    make(hidden=8, layers=1).save(tmp_path / "m.pt")
    with pytest.raises(CheckpointMismatchError) as error:
        make(hidden=16, layers=2).load(tmp_path / "m.pt")
    message = str(error.value)
    assert "missing keys ['encoders.policy.mlp.2.bias'" in message
    assert "encoders.policy.mlp.0.weight: checkpoint (8, 4) vs model (16, 4)" in message


def test_clone_is_independent():
    model = make()
    copy = model.clone()
    with torch.no_grad():
        next(copy.parameters()).add_(1.0)
    assert not torch.equal(next(model.parameters()), next(copy.parameters()))


def test_model_interface_refreshes_the_lagging_actor_copy():
    mi = ModelInterface(optimizer="sgd", lr=0.5).add_actor_critic(make())
    with torch.no_grad():
        for p in mi["model"].parameters():
            p.add_(1.0)
    mi["model"].increment_step(3)
    assert not torch.equal(mi["model"].heads["value"].net[-1].bias, mi["actor"].heads["value"].net[-1].bias)
    mi.update_model("actor", "model")
    torch.testing.assert_close(mi["model"].heads["value"].net[-1].bias, mi["actor"].heads["value"].net[-1].bias)
    assert mi["actor"].step == 3
    assert "actor" not in mi.optimizers and not any(p.requires_grad for p in mi["actor"].parameters())


def test_scale_lr_sets_a_fraction_of_the_base_rate():
    mi = ModelInterface(lr=0.01).add_actor_critic(make())
    mi.scale_lr(0.25)
    assert mi.optimizers["model"].param_groups[0]["lr"] == pytest.approx(0.0025)


@pytest.mark.parametrize("centered, moved", [(True, 0.451920), (False, 0.440645)])
def test_rmsprop_takes_the_hand_worked_first_step(centered, moved):
    # One weight w = 0, loss 3w: g = 3. After one step with alpha 0.95: v = 0.05 g^2 = 0.45,
    # and, centered, the mean gradient 0.05 g = 0.15 is taken out: v - 0.15^2 = 0.4275.
    # The step is lr g / (sqrt(v) + eps): 0.3 / (0.653835 + 0.01) centered, 0.3 / (0.670820 + 0.01) not.
    layer = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.zeros_(layer.weight)
    mi = ModelInterface(optimizer="rmsprop", lr=0.1, optim_eps=0.01, rmsprop_alpha=0.95, rmsprop_centered=centered)
    mi.add_model("model", layer, optimize=True)
    mi.step("model", layer(torch.full((1, 1), 3.0)).sum())
    assert layer.weight.item() == pytest.approx(-moved, abs=2e-6)


def test_direct_sequential_computes_and_saves_as_nn_sequential():
    torch.manual_seed(0)
    layers = [torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)]
    direct, plain = DirectSequential(*layers), torch.nn.Sequential(*layers)
    x = torch.randn(5, 4)
    torch.testing.assert_close(direct(x), plain(x), rtol=0, atol=0)
    assert list(direct.state_dict()) == list(plain.state_dict())


@pytest.mark.parametrize("sigmoid_form", [True, False])
def test_tanh_matches_torch_tanh_and_its_gradient(monkeypatch, sigmoid_form):
    monkeypatch.setattr(layers, "_SIGMOID_TANH", sigmoid_form)  # both forms, whichever this CPU takes
    x = torch.cat([torch.linspace(-20, 20, 4001), torch.tensor([0.0, 1e-30, -1e-8])]).requires_grad_()
    y = Tanh()(x)
    exact = torch.tanh(x.detach().double())
    assert (y.detach().double() - exact).abs().max() < 3e-7
    assert y.abs().max() <= 1.0
    (y * torch.arange(x.numel())).sum().backward()  # a gradient that differs per element
    expected = torch.arange(x.numel()) * (1 - exact.square())
    torch.testing.assert_close(x.grad.double(), expected, rtol=1e-6, atol=1e-3)
    with torch.no_grad():
        torch.testing.assert_close(Tanh()(x), y.detach(), rtol=0, atol=0)


@pytest.mark.parametrize(("vendor", "slow"), [("GenuineIntel", False), ("AuthenticAMD", True), (None, False)])
def test_the_sigmoid_form_is_taken_where_mkl_tanh_is_slow(tmp_path, monkeypatch, vendor, slow):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\n" + (f"vendor_id\t: {vendor}\n" if vendor else "") + "flags\t\t: fpu\n")
    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: True)
    assert layers._mkl_tanh_is_slow(str(cpuinfo)) is slow
    assert layers._mkl_tanh_is_slow(str(tmp_path / "absent")) is False
    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: False)
    assert layers._mkl_tanh_is_slow(str(cpuinfo)) is False


def test_tanh_of_other_dtypes_is_torch_tanh():
    x = torch.linspace(-3, 3, 101)
    for dtype in (torch.float64, torch.bfloat16):
        torch.testing.assert_close(Tanh()(x.to(dtype)), torch.tanh(x.to(dtype)), rtol=0, atol=0)


@pytest.mark.parametrize("max_norm", [0.05, 1e6])
def test_clip_grad_norm_matches_torch(max_norm):
    ours, theirs = make(seed=3), make(seed=3)
    x = torch.randn(16, 4, generator=torch.Generator().manual_seed(0))
    for model in (ours, theirs):
        out = model(x)
        (out["V"].square().mean() + out["pi"][:, 0].mean()).backward()
    norm = clip_grad_norm(ours.parameters(), max_norm)
    expected = torch.nn.utils.clip_grad_norm_(theirs.parameters(), max_norm)
    assert norm == pytest.approx(float(expected), rel=1e-6)
    assert norm > 0.05  # so the small max_norm really clips
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(a.grad, b.grad)


def test_step_backpropagates_clips_and_updates():
    model = make()
    mi = ModelInterface(optimizer="sgd", lr=1.0)
    mi.add_model("model", model, optimize=True)
    before = [p.detach().clone() for p in model.parameters()]
    loss = model(torch.ones(2, 4))["V"].sum() * 100
    norm = mi.step("model", loss, grad_clip=0.5)
    moved = torch.sqrt(sum(((p.detach() - b) ** 2).sum() for p, b in zip(model.parameters(), before, strict=True)))
    assert norm > 0.5 and float(moved) == pytest.approx(0.5, rel=1e-4)  # an SGD step of lr 1 moves by the clipped norm


def test_model_loader_builds_by_name_with_args_and_loads_checkpoint(tmp_path):
    make(hidden=8, layers=1).save(tmp_path / "m.pt")
    config = {"model": "mlp", "load": str(tmp_path / "m.pt"), "hidden": 8, "layers": 1}
    model = ModelLoader.from_config(config).build((4,), 2)
    torch.testing.assert_close(model.heads["value"].net[-1].bias, make().heads["value"].net[-1].bias)


def test_unknown_model_name_is_an_error():
    with pytest.raises(ArgsError, match="unknown model 'resnet'"):
        ModelLoader(model="resnet")


def test_a_checkpoint_of_an_unknown_model_is_refused_by_name(tmp_path):
    path = tmp_path / "other.pt"
    torch.save({"model": "resnet", "state_dict": {}, "step": 0, "args": {}}, path)
    with pytest.raises(CheckpointError, match=f"{path} holds a model named 'resnet'"):
        load_model(path, (4,), 2)


def test_load_model_rebuilds_the_architecture_from_the_saved_args(tmp_path):
    original = make(hidden=16, layers=3)
    original.save(tmp_path / "m.pt", args={"hidden": 16, "layers": 3, "activation": "tanh"})
    model = load_model(tmp_path / "m.pt", (4,), 2)
    x = torch.randn(5, 4)
    torch.testing.assert_close(model(x)["V"], original(x)["V"])


def test_a_registered_model_brings_its_settings_to_the_parser_and_is_built_with_them():
    @dataclass
    class TinySettings(Configurable):
        width: int = setting(3, "width of the tiny model")

    class Tiny(MLPActorCritic):
        name = "tiny"
        Settings = TinySettings

        def __init__(self, obs_spec, num_actions, settings=None):
            super().__init__(obs_spec, num_actions, ModelSettings(hidden=(settings or TinySettings()).width))

    register_model(Tiny)
    try:
        assert "width" in [arg.name for arg in ModelLoader.arg_groups()["models"]]
        model = ModelLoader.from_config({"model": "tiny", "width": 5}).build((4,), 2)
        assert model.encoders["policy"].out_dim == 5
    finally:
        MODELS.pop("tiny")


def test_a_model_without_settings_cannot_be_registered():
    class Bare(MLPActorCritic):
        name = "bare"
        Settings = None

    with pytest.raises(TypeError, match="Bare.Settings must be a Configurable dataclass"):
        register_model(Bare)
