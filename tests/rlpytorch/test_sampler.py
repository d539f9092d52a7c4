"""Samplers draw from the right distribution and report it as the behaviour policy."""

import math

import pytest
import torch

from rlpytorch.acting.sampler import Sampler
from rlpytorch.core.distributions import gaussian_log_prob, sample_gaussian

PI = torch.tensor([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])


def frequencies(a, num_actions=3):
    return torch.bincount(a, minlength=num_actions).float() / len(a)


def test_multinomial_frequencies_match_pi_and_mu_is_pi():
    sampler = Sampler("multinomial", seed=0)
    a, mu = sampler(PI[:1].expand(20000, 3))
    torch.testing.assert_close(frequencies(a), PI[0], atol=0.015, rtol=0)
    assert torch.equal(mu, PI[:1].expand(20000, 3))


def test_multinomial_is_reproducible_with_a_seed():
    a1, _ = Sampler(seed=3)(PI.repeat(50, 1))
    a2, _ = Sampler(seed=3)(PI.repeat(50, 1))
    assert torch.equal(a1, a2)


def test_greedy_picks_argmax_with_one_hot_behaviour():
    a, mu = Sampler("greedy")(PI)
    assert a.tolist() == [1, 0]
    assert mu.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]


def test_epsilon_greedy_behaviour_mixes_uniform_and_argmax():
    a, mu = Sampler("epsilon_greedy", epsilon=0.3, seed=0)(PI[:1].expand(20000, 3))
    expected = torch.tensor([0.1, 0.8, 0.1])  # 0.3/3 + 0.7 * onehot(1)
    torch.testing.assert_close(mu[0], expected)
    torch.testing.assert_close(frequencies(a), expected, atol=0.015, rtol=0)


def test_gaussian_samples_have_the_given_mean_and_std():
    g = torch.Generator().manual_seed(0)
    a = sample_gaussian(torch.full((50000, 2), 1.5), torch.tensor([0.5, 2.0]), g)
    torch.testing.assert_close(a.mean(0), torch.tensor([1.5, 1.5]), atol=0.03, rtol=0)
    torch.testing.assert_close(a.std(0), torch.tensor([0.5, 2.0]), atol=0.03, rtol=0)


def test_gaussian_log_prob_sums_over_action_dimensions():
    a, mean, std = torch.tensor([[0.0, 1.0]]), torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 2.0]])
    expected = -0.5 * math.log(2 * math.pi) + (-0.125 - math.log(2.0) - 0.5 * math.log(2 * math.pi))
    assert gaussian_log_prob(a, mean, std).item() == pytest.approx(expected)


def test_unknown_sampler_is_an_error():
    with pytest.raises(ValueError, match="unknown sampler"):
        Sampler("boltzmann")


def test_each_device_gets_its_own_generator_seeded_alike(monkeypatch):
    real = torch.Generator
    made = []

    def recording_generator(device="cpu"):  # a CUDA generator needs a GPU: record its device, use a CPU one
        made.append(torch.device(device))
        return real("cpu")

    monkeypatch.setattr(torch, "Generator", recording_generator)
    sampler = Sampler(seed=5)
    cuda = sampler.generator_for(torch.device("cuda:0"))
    assert made == [torch.device("cpu"), torch.device("cuda:0")]
    assert cuda is not sampler.generator and sampler.generator_for(torch.device("cuda:0")) is cuda
    assert cuda.initial_seed() == sampler.generator.initial_seed() == 5
