"""Policies for every action space on numbers worked by hand: log-probabilities,
entropies, sampling, the tanh change of variables against a numerical density,
and the heads an action space calls for."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gymnasium import spaces

import elfpy
from rlpytorch.core.distributions import (
    Categorical,
    CategoricalFamily,
    DiagGaussian,
    DictDistribution,
    GaussianFamily,
    MultiCategorical,
    TanhGaussian,
    behaviour_key,
    log_one_minus_tanh_squared,
    policy_family,
)
from rlpytorch.core.spaces import action_space, key_space
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.heads import DictPolicyHead, GaussianHead, MultiCategoricalHead, PolicyHead, policy_head


def test_categorical_log_prob_and_entropy_by_hand():
    d = Categorical(torch.tensor([[0.25, 0.75], [0.5, 0.5]]))
    assert d.log_prob(torch.tensor([1, 0])).tolist() == pytest.approx([math.log(0.75), math.log(0.5)])
    h0 = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert d.entropy().tolist() == pytest.approx([h0, math.log(2)])
    assert d.mode().tolist() == [1, 0]


def test_categorical_samples_follow_the_probabilities():
    g = torch.Generator().manual_seed(0)
    a = Categorical(torch.tensor([0.2, 0.5, 0.3]).expand(20000, 3)).sample(g)
    freq = torch.bincount(a, minlength=3).float() / 20000
    assert freq.tolist() == pytest.approx([0.2, 0.5, 0.3], abs=0.015)


def test_multi_categorical_sums_the_components_log_probs_and_entropies():
    # components of 2 and 3 values, side by side
    probs = torch.tensor([[0.25, 0.75, 0.2, 0.3, 0.5]])
    d = MultiCategorical(probs, [2, 3])
    a = torch.tensor([[0, 2]])
    assert d.log_prob(a).item() == pytest.approx(math.log(0.25) + math.log(0.5))
    h = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75)) - (
        0.2 * math.log(0.2) + 0.3 * math.log(0.3) + 0.5 * math.log(0.5)
    )
    assert d.entropy().item() == pytest.approx(h)
    assert d.mode().tolist() == [[1, 2]]
    g = torch.Generator().manual_seed(1)
    s = MultiCategorical(probs.expand(10000, 5), [2, 3]).sample(g)
    assert s.shape == (10000, 2) and (s[:, 1] == 2).float().mean().item() == pytest.approx(0.5, abs=0.02)


def test_diagonal_gaussian_log_prob_and_entropy_by_hand():
    mean, std = torch.tensor([[0.0, 1.0]]), torch.tensor([[1.0, 2.0]])
    d = DiagGaussian(mean, std)
    a = torch.tensor([[1.0, 0.0]])
    # dim 0: z = 1, -1/2 - log 1 - log sqrt(2 pi); dim 1: z = -1/2, -1/8 - log 2 - log sqrt(2 pi)
    expected = (-0.5 - 0.5 * math.log(2 * math.pi)) + (-0.125 - math.log(2) - 0.5 * math.log(2 * math.pi))
    assert d.log_prob(a).item() == pytest.approx(expected)
    # H = sum_d 1/2 + log(2 pi)/2 + log std_d
    assert d.entropy().item() == pytest.approx(1.0 + math.log(2 * math.pi) + math.log(2))
    assert torch.equal(d.mode(), mean)
    torch_d = torch.distributions.Normal(mean, std)
    assert d.entropy().item() == pytest.approx(torch_d.entropy().sum().item())


def test_log_one_minus_tanh_squared_is_exact_and_finite_where_the_direct_form_is_not():
    u = torch.tensor([-3.0, -0.5, 0.0, 0.7, 2.0])
    direct = torch.log(1 - torch.tanh(u.double()) ** 2).float()
    assert torch.allclose(log_one_minus_tanh_squared(u), direct, atol=1e-6)
    big = torch.tensor([12.0, -30.0])
    assert torch.isinf(torch.log(1 - torch.tanh(big) ** 2)).all()  # float32 tanh rounds to +-1
    # log(1 - tanh^2 u) = log(4) - 2|u| - 2 log(1 + exp(-2|u|)) -> log 4 - 2|u|
    assert log_one_minus_tanh_squared(big).tolist() == pytest.approx([math.log(4) - 24, math.log(4) - 60], rel=1e-6)


def test_tanh_gaussian_log_prob_matches_the_numerical_density():
    """p(a) = d/da P(A <= a), P(A <= a) = Phi((atanh((a - c) / h) - mean) / std), by central differences."""
    mean, std, low, high = 0.3, 0.8, -2.0, 2.0
    d = TanhGaussian(
        torch.tensor([[mean]], dtype=torch.float64), torch.tensor([[std]], dtype=torch.float64), [low], [high]
    )

    def cdf(a: float) -> float:
        u = math.atanh((a - 0.0) / 2.0)
        return 0.5 * (1 + math.erf((u - mean) / (std * math.sqrt(2))))

    for a in (-1.9, -0.7, 0.0, 0.5, 1.6):
        step = 1e-5
        density = (cdf(a + step) - cdf(a - step)) / (2 * step)
        assert d.log_prob(torch.tensor([[a]], dtype=torch.float64)).item() == pytest.approx(math.log(density), rel=1e-6)


def test_tanh_gaussian_log_prob_by_hand_and_against_torch():
    # a = 0 on [-2, 2]: u = 0, log p = log N(0; 0.5, 1) - log(2 (1 - tanh(0)^2)) = -1/8 - log sqrt(2 pi) - log 2
    d = TanhGaussian(torch.tensor([[0.5]]), torch.tensor([[1.0]]), [-2.0], [2.0])
    assert d.log_prob(torch.tensor([[0.0]])).item() == pytest.approx(-0.125 - 0.5 * math.log(2 * math.pi) - math.log(2))
    mean, std = torch.tensor([[0.2, -1.0]]), torch.tensor([[0.5, 1.5]])
    low, high = [-1.0, 0.0], [3.0, 1.0]
    ours = TanhGaussian(mean, std, low, high)
    center, half = torch.tensor([1.0, 0.5]), torch.tensor([2.0, 0.5])
    reference = torch.distributions.TransformedDistribution(
        torch.distributions.Independent(torch.distributions.Normal(mean, std), 1),
        [torch.distributions.TanhTransform(), torch.distributions.AffineTransform(center, half)],
    )
    a = torch.tensor([[2.5, 0.1]])
    assert ours.log_prob(a).item() == pytest.approx(reference.log_prob(a).item(), rel=1e-5)


def test_tanh_gaussian_samples_stay_inside_the_bounds_and_the_mode_squashes_the_mean():
    g = torch.Generator().manual_seed(0)
    d = TanhGaussian(torch.full((5000, 1), 3.0), torch.full((5000, 1), 2.0), [-2.0], [1.0])
    a = d.sample(g)
    assert a.min().item() >= -2.0 and a.max().item() <= 1.0
    assert torch.isfinite(d.log_prob(a)).all()
    assert d.mode()[0].item() == pytest.approx(-0.5 + 1.5 * math.tanh(3.0))


def test_tanh_gaussian_entropy_estimate_averages_to_the_true_entropy():
    """H(a) = H(u) + E[log |da/du|]; against a Monte Carlo average of -log p(a)."""
    torch.manual_seed(0)
    mean, std = torch.full((20000, 1), 0.4), torch.full((20000, 1), 0.9)
    d = TanhGaussian(mean, std, [-1.0], [1.0])
    g = torch.Generator().manual_seed(1)
    monte_carlo = -d.log_prob(d.sample(g)).mean().item()
    assert d.entropy().mean().item() == pytest.approx(monte_carlo, abs=0.02)


def test_dict_distribution_sums_independent_parts():
    parts = {
        "move": Categorical(torch.tensor([[0.25, 0.75]])),
        "force": DiagGaussian(torch.tensor([[0.0]]), torch.tensor([[1.0]])),
    }
    d = DictDistribution(parts)
    a = {"move": torch.tensor([1]), "force": torch.tensor([[0.0]])}
    assert d.log_prob(a).item() == pytest.approx(math.log(0.75) - 0.5 * math.log(2 * math.pi))
    h = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75)) + 0.5 + 0.5 * math.log(2 * math.pi)
    assert d.entropy().item() == pytest.approx(h)
    sample = d.sample(torch.Generator().manual_seed(0))
    assert set(sample) == {"move", "force"} and sample["force"].shape == (1, 1)


def test_policy_head_follows_the_action_space():
    assert isinstance(policy_head(8, 3), PolicyHead) and isinstance(policy_head(8, spaces.Discrete(3)), PolicyHead)
    multi = policy_head(8, spaces.MultiDiscrete([2, 3]))
    assert isinstance(multi, MultiCategoricalHead)
    pi = multi(torch.zeros(4, 8))["pi"]
    assert pi.shape == (4, 5) and pi[:, :2].sum(-1).tolist() == pytest.approx([1.0] * 4)
    box = spaces.Box(-2.0, 2.0, (2,), np.float32)
    gauss = policy_head(8, box)
    assert isinstance(gauss, GaussianHead) and not gauss.family.squashed
    out = gauss(torch.zeros(4, 8))
    assert out["mean"].shape == (4, 2) and out["std"].tolist() == [[1.0, 1.0]] * 4
    assert policy_head(8, box, "tanh_gaussian").family.high == [2.0, 2.0]
    state = policy_head(8, box, "state_gaussian")
    x = torch.randn(4, 8)
    assert torch.allclose(state(x)["std"], torch.ones(4, 2))  # starts at init_std for every state
    state.log_std_net[-1].weight.data.fill_(0.1)
    assert state(x)["std"][0, 0].item() != pytest.approx(state(x)["std"][1, 0].item())  # then depends on the state
    both = policy_head(8, spaces.Dict({"move": spaces.Discrete(2), "force": box}))
    assert isinstance(both, DictPolicyHead)
    assert set(both(torch.zeros(1, 8))) == {"move.pi", "force.mean", "force.std"}
    dist = both.family(both(torch.zeros(1, 8)))
    assert isinstance(dist, DictDistribution)
    with pytest.raises(ValueError, match="box_policy"):
        policy_head(8, box, "beta")
    with pytest.raises(ValueError, match="finite bounds"):
        policy_head(8, spaces.Box(-np.inf, np.inf, (1,), np.float32), "tanh_gaussian")


def test_models_take_a_space_and_name_their_behaviour_key():
    box = spaces.Box(-2.0, 2.0, (1,), np.float32)
    model = MLPActorCritic((3,), box, ModelSettings(hidden=8))
    out = model(torch.zeros(5, 3))
    assert set(out) == {"mean", "std", "V"} and out["mean"].shape == (5, 1)
    torch.testing.assert_close(out["std"], torch.ones(5, 1))  # exp(log_std), log_std starting at log(init_std = 1)
    torch.testing.assert_close(out["mean"], out["mean"][:1].expand(5, 1))  # the same observation, the same mean
    assert isinstance(policy_family(model), GaussianFamily) and behaviour_key(policy_family(model)) == "logp"
    discrete = MLPActorCritic((4,), 2, ModelSettings(hidden=8))
    assert isinstance(policy_family(discrete), CategoricalFamily) and behaviour_key(policy_family(discrete)) == "pi"


class _Key:
    """The fields of a ``KeySpec`` that ``action_space`` reads."""

    def __init__(self, name, role, space=None):
        self.name, self.role, self.space = name, role, space


def test_action_space_is_the_space_each_game_states():
    assert action_space(elfpy.GameContext("cartpole", num_games=1).spec()) == spaces.Discrete(2)
    assert action_space(elfpy.GameContext("picks", num_games=1).spec()) == spaces.MultiDiscrete([3, 5])
    assert action_space(elfpy.GameContext("pendulum", num_games=1).spec()) == spaces.Box(-2.0, 2.0, (1,), np.float32)


def test_several_action_keys_act_in_a_dict_and_no_action_key_is_an_error():
    box, discrete = spaces.Box(-1.0, 1.0, (1,), np.float32), spaces.Discrete(2)
    spec = {"s": _Key("s", "observation"), "a": _Key("a", "action", box), "b": _Key("b", "action", discrete)}
    assert action_space(spec) == spaces.Dict({"a": box, "b": discrete})
    with pytest.raises(ValueError, match="no action key"):
        action_space({"s": spec["s"]})
    with pytest.raises(ValueError, match="key 's' has no action space"):
        key_space(spec["s"])
