"""Model building blocks: encoders chosen from the spec, heads, branch composition, recurrent core."""

import numpy as np
import pytest
import torch
from torch import nn

from rlpytorch.models import (
    BranchModel,
    ConvEncoder,
    GaussianHead,
    GRUActorCritic,
    LSTMActorCritic,
    MLPEncoder,
    ModelSettings,
    ObsKey,
    PixelEncoder,
    PolicyHead,
    QHead,
    SharedActorCritic,
    TokenEncoder,
    ValueHead,
    obs_spec,
)
from rlpytorch.models.loader import ModelLoader

MINIRTS = {"s": ObsKey((15, 20, 20)), "v": ObsKey((14,))}
MISSION = {"image": ObsKey((3, 7, 7)), "mission": ObsKey((9,), np.dtype(np.int64), (0.0, 99.0))}


def test_default_encoder_is_chosen_per_key_from_the_spec():
    encoder = ModelSettings().encoder({**MISSION, "v": ObsKey((5,)), "w": ObsKey((2, 3))})
    kinds = {name: type(part) for name, part in encoder.parts.items()}
    assert kinds == {"image": ConvEncoder, "mission": TokenEncoder, "v+w": MLPEncoder}
    obs = {
        "image": torch.zeros(4, 3, 7, 7),
        "mission": torch.randint(0, 100, (4, 9)),
        "v": torch.zeros(4, 5),
        "w": torch.zeros(4, 2, 3),
    }
    assert encoder(obs).shape == (4, encoder.out_dim)
    assert encoder.out_dim == sum(p.out_dim for p in encoder.parts.values())


def test_conv_encoder_pools_each_layer_unless_told_not_to():
    image = {"image": ObsKey((4, 10, 10))}
    pooled = ModelSettings(channels="16").encoder(image).parts["image"]
    unpooled = ModelSettings(channels="16", pool=False).encoder(image).parts["image"]
    assert pooled.linear[0].in_features == 16 * 5 * 5  # 10x10 halved by the 2x2 max-pool
    assert unpooled.linear[0].in_features == 16 * 10 * 10  # every position kept
    assert not any(isinstance(m, nn.MaxPool2d) for m in unpooled.modules())
    assert unpooled({"image": torch.zeros(3, 4, 10, 10)}).shape == (3, unpooled.out_dim)


def test_obs_spec_reads_shapes_engine_key_specs_and_plain_tuples():
    class EngineKey:  # what elfpy.KeySpec offers
        shape, dtype, bounds = (9,), np.dtype(np.int32), (0.0, 26.0)

    spec = obs_spec({"s": (4,), "mission": EngineKey()})
    assert spec["s"] == ObsKey((4,)) and spec["mission"].is_tokens
    assert obs_spec((4,)) == {"s": ObsKey((4,))}


def test_heads_name_their_outputs_and_shapes():
    x = torch.randn(3, 5, 16)
    assert PolicyHead(16, 4)(x)["pi"].sum(-1).allclose(torch.ones(3, 5))
    assert ValueHead(16)(x)["V"].shape == (3, 5)
    assert QHead(16, 4)(x)["Q"].shape == (3, 5, 4)
    gaussian = GaussianHead(16, 2, init_std=0.5)(x)
    assert gaussian["mean"].shape == gaussian["std"].shape == (3, 5, 2)
    torch.testing.assert_close(gaussian["std"], torch.full((3, 5, 2), 0.5))


class CountingEncoder(nn.Module):
    """A custom encoder: any module with out_dim that maps the obs dict to features."""

    def __init__(self, out_dim=8):
        super().__init__()
        self.linear = nn.Linear(4, out_dim)
        self.out_dim = out_dim
        self.calls = 0

    def forward(self, obs):
        self.calls += 1
        return self.linear(obs["s"])


def test_a_shared_encoder_is_stored_once_and_runs_once_for_all_heads():
    encoder = CountingEncoder()
    model = BranchModel(
        {"policy": (encoder, PolicyHead(8, 2)), "value": (encoder, ValueHead(8)), "q": (encoder, QHead(8, 2))}
    )
    out = model(torch.zeros(5, 4))
    assert set(out) == {"pi", "V", "Q"}
    assert encoder.calls == 1
    assert list(model.encoders) == ["policy"]
    assert sum(p.numel() for p in model.parameters()) == 40 + 18 + 9 + 18


def test_separate_encoders_each_run_for_their_own_head():
    a, b = CountingEncoder(), CountingEncoder()
    model = BranchModel({"policy": (a, PolicyHead(8, 2)), "value": (b, ValueHead(8))})
    model({"s": torch.zeros(5, 4)})
    assert (a.calls, b.calls) == (1, 1) and list(model.encoders) == ["policy", "value"]


def test_minirts_default_model_reads_planes_and_scalars_for_acting_and_training():
    model = ModelLoader("auto").build(MINIRTS, 9)
    assert isinstance(model, SharedActorCritic) and model.obs_keys == ("s", "v")
    assert sorted(type(p).__name__ for p in model.encoders["policy"].parts.values()) == ["ConvEncoder", "MLPEncoder"]
    torch.manual_seed(0)
    window = {"s": torch.rand(3, 6, 15, 20, 20), "v": torch.rand(3, 6, 14)}
    act = model({key: x[0] for key, x in window.items()})
    train = model(window)
    assert act["pi"].shape == (6, 9) and act["V"].shape == (6,)
    assert train["pi"].shape == (3, 6, 9) and train["V"].shape == (3, 6)
    # [T, B] is read row by row: its first row is what acting on that row gives, and each policy sums to 1.
    torch.testing.assert_close(train["pi"][0], act["pi"])
    torch.testing.assert_close(train["V"][0], act["V"])
    torch.testing.assert_close(train["pi"].sum(-1), torch.ones(3, 6))
    assert not torch.allclose(train["V"][0], train["V"][1])  # and the rows' inputs reach the output


def test_atari_default_model_reads_uint8_frames_with_the_dqn_torso():
    frames = {"s": ObsKey((4, 84, 84), np.dtype(np.uint8))}
    model = ModelLoader("auto").build(frames, 6)
    assert isinstance(model, SharedActorCritic)
    encoder = model.encoders["policy"].parts["s"]
    assert isinstance(encoder, PixelEncoder) and encoder.out_dim == 512
    black = model({"s": torch.zeros(2, 4, 84, 84, dtype=torch.uint8)})
    white = model({"s": torch.full((2, 4, 84, 84), 255, dtype=torch.uint8)})
    assert black["pi"].shape == (2, 6) and not torch.allclose(black["V"], white["V"])
    with pytest.raises(ValueError, match="at least 36x36"):
        PixelEncoder("s", (3, 7, 7))


def test_auto_model_is_the_mlp_for_vector_observations():
    assert ModelLoader("auto").model_class({"s": ObsKey((4,))}).name == "mlp"
    assert ModelLoader("auto").model_class(MISSION).name == "shared"


@pytest.mark.parametrize("cls", [LSTMActorCritic, GRUActorCritic])
def test_recurrent_model_over_a_window_equals_step_by_step_with_resets(cls):
    torch.manual_seed(0)
    model = cls((3,), 2, ModelSettings(hidden=8, core_hidden=6))
    T, B = 5, 2
    s = torch.randn(T, B, 3)
    reset = torch.zeros(T, B, dtype=torch.bool)
    reset[2, 1] = True
    state0 = torch.randn(B, model.state_size)
    whole = model({"s": s}, state0, reset)
    state, values = state0, []
    for t in range(T):
        step = model({"s": s[t : t + 1]}, state, reset[t : t + 1])
        torch.testing.assert_close(whole["states_in"][t], state)
        state = step["state"]
        values.append(step["V"][0])
    torch.testing.assert_close(torch.stack(values), whole["V"])
    torch.testing.assert_close(state, whole["state"])
    # at the reset row game 1 starts over from zero, whatever it carried
    fresh = model({"s": s[2:3, 1:]}, torch.zeros(1, model.state_size))
    torch.testing.assert_close(whole["V"][2, 1:], fresh["V"][0])


def test_a_recurrent_core_needs_one_shared_encoder():
    from rlpytorch.models import RecurrentCore

    with pytest.raises(ValueError, match="share one encoder"):
        BranchModel(
            {"policy": (CountingEncoder(), PolicyHead(4, 2)), "value": (CountingEncoder(), ValueHead(4))},
            core=RecurrentCore("gru", 8, 4),
        )
