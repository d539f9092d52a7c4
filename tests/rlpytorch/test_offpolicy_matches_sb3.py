"""Our SAC and TD3 updates against Stable-Baselines3's, number for number.

Both sides start from the same weights (SB3's, copied into ours), read the same
replayed batches and the same Gaussian noise, and run a few updates in float64
on Pendulum-v1's spaces (3 observations, one action in [-2, 2]: the half-range
2 scales exactly, so our env-unit actions and SB3's [-1, 1] ones meet the
critics as the same numbers). Afterwards every weight (actor, critics, target
networks, SAC's log_alpha) must agree to 1e-10 (when written: 2.5e-16 for
SAC, 3.3e-16 for TD3), while the 4 updates move weights by up to 4e-3. The
negative controls show the same comparison failing (gaps of 9.5e-7 to 2e-3)
when one side keeps a documented difference or changes a setting.
Written from the checks of docs/results/2026-12-01-continuous-control.md.

SB3's internals used here (``replay_buffer.sample``, ``ReplayBufferSamples``,
``policies.preprocess_obs``, ``actor.action_dist.epsilon``, the layer
attributes, the draw calls of ``SAC.train`` and ``TD3.train``) are those of
stable-baselines3 2.9.2, the version these tests were written against.

Our side runs unpatched except for one line: ``MLPEncoder.forward`` casts
observations to float32 (as SB3's ``preprocess_obs`` does), which float64
weights cannot read; in both the cast is replaced by the identity. Every
input (observations, actions, rewards, the discount) is a float32 value, so
the casts our update keeps (``batch["a"].float()`` and the like) lose nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import stable_baselines3.common.policies as sb3_policies
import torch
from stable_baselines3 import SAC as SB3SAC
from stable_baselines3 import TD3 as SB3TD3
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.type_aliases import ReplayBufferSamples
from torch import Tensor, nn

from rlpytorch.learners.offpolicy_trainer import offpolicy_interface
from rlpytorch.methods import SAC, TD3
from rlpytorch.methods.target_network import TargetNetwork
from rlpytorch.models.actor_q import ActorQ, ActorQSettings, EnsembleLinear
from rlpytorch.models.encoders import MLPEncoder
from rlpytorch.models.interface import ModelInterface

B, UPDATES, SEED, LR, TAU = 64, 4, 5, 1e-3, 0.005
# Our update casts the discount to float32 (methods/sac.py, methods/ddpg.py): both sides take
# the float32 0.99, so the cast changes nothing.
GAMMA = float(np.float32(0.99))
TOLERANCE = 1e-10
# Both sides' TD3 run Adam with SB3's eps. Adam's step m / (sqrt(v) + eps) does not change when a loss is
# scaled, except through eps: L / 2 with eps steps as L with 2 eps. So a critic loss of half SB3's (ours
# until 2026-11-28) shows as our eps doubled (test_td3_gap_shows_a_changed_adam_eps_or_gamma).
ADAM_EPS = 1e-8


@contextmanager
def float64_default() -> Iterator[None]:
    """SB3 makes its networks and its ``log_ent_coef`` in the default dtype."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def run_in_float64(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both sides' float32 casts of observations become the identity (the inputs are float32 values)."""
    monkeypatch.setattr(sb3_policies, "preprocess_obs", lambda obs, space, normalize_images=True: obs)
    monkeypatch.setattr(MLPEncoder, "forward", lambda self, obs: obs[self.keys[0]])  # one vector key here


def build_sb3(cls: type, env: gym.Env, **kwargs: Any) -> Any:
    """SB3's model in float64, its weights drawn from a forked torch RNG (the global one is left alone)."""
    with torch.random.fork_rng(devices=[]), float64_default():
        torch.manual_seed(0)
        sb3 = cls("MlpPolicy", env, learning_starts=0, batch_size=B, learning_rate=LR, device="cpu", **kwargs)
    sb3.set_logger(Logger(None, []))  # train() records its losses; no output anywhere
    return sb3


def build_ours(env: gym.Env, actor_head: str, optim_eps: float) -> tuple[ModelInterface, ActorQ]:
    model = ActorQ(env.observation_space.shape, env.action_space,
                   ActorQSettings(net_arch="32,32", critics=2, actor_head=actor_head)).double()
    return offpolicy_interface(model, ModelInterface(lr=LR, optim_eps=optim_eps)), model


def critic_pairs(critics: Any, sb3_critic: Any) -> list[tuple[Tensor, Tensor]]:
    """(ours, SB3's) tensors of every critic layer; ours is one ``EnsembleLinear`` per layer, ``W`` transposed."""
    layers = [m for m in critics.modules() if isinstance(m, EnsembleLinear)]
    pairs = []
    for j, q in enumerate(sb3_critic.q_networks):
        linears = [m for m in q if isinstance(m, nn.Linear)]
        for layer, linear in zip(layers, linears, strict=True):
            pairs += [(layer.weight[j].T, linear.weight), (layer.bias[j, 0], linear.bias)]
    return pairs


def linear_pairs(ours: list[nn.Module], theirs: list[nn.Module]) -> list[tuple[Tensor, Tensor]]:
    linears = [(a, b) for a, b in zip(ours, theirs, strict=True) if isinstance(a, nn.Linear)]
    return [pair for a, b in linears for pair in ((a.weight, b.weight), (a.bias, b.bias))]


def sac_pairs(model: ActorQ, sb3_actor: Any, sb3_critic: Any) -> list[tuple[Tensor, Tensor]]:
    actor = model.actor
    trunk = linear_pairs(list(actor.trunk), list(sb3_actor.latent_pi))
    heads = linear_pairs([actor.mean, actor.log_std], [sb3_actor.mu, sb3_actor.log_std])
    return trunk + heads + critic_pairs(model.critics, sb3_critic)


def td3_pairs(model: ActorQ, sb3_actor: Any, sb3_critic: Any) -> list[tuple[Tensor, Tensor]]:
    actor = linear_pairs(list(model.actor.net), [m for m in sb3_actor.mu if not isinstance(m, nn.Tanh)])
    return actor + critic_pairs(model.critics, sb3_critic)


def copy_sb3_weights(mi: ModelInterface, pairs: list[tuple[Tensor, Tensor]]) -> None:
    """SB3's weights into our learner, then the learner into our target (SB3's targets start equal)."""
    with torch.no_grad():
        for ours, theirs in pairs:
            ours.copy_(theirs)
    mi.update_model("target", "model")


def gap(pairs: list[tuple[Tensor, Tensor]]) -> Tensor:
    """The largest |ours - SB3| over the pairs (NaN if any is NaN)."""
    return torch.stack([(a - b).abs().max() for a, b in pairs]).max()


def replayed_batches(env: gym.Env) -> list[dict[str, Tensor]]:
    """``UPDATES`` batches of float32 values; ``a`` in SB3's [-1, 1] units, 20% of the rows ends."""
    g = torch.Generator().manual_seed(1)
    (obs_dim,), (action_dim,) = env.observation_space.shape, env.action_space.shape
    return [{"obs": torch.randn(B, obs_dim, generator=g), "next_obs": torch.randn(B, obs_dim, generator=g),
             "a": torch.rand(B, action_dim, generator=g) * 2 - 1, "r": torch.randn(B, generator=g),
             "done": (torch.rand(B, generator=g) < 0.2).float()} for _ in range(UPDATES)]


def our_batch(model: ActorQ, b: dict[str, Tensor]) -> dict[str, Tensor]:
    """Our replay's batch: actions in the env's units, the discount ``gamma (1 - done)``."""
    f64 = {k: v.double() for k, v in b.items()}
    return {"s": f64["obs"], "next_s": f64["next_obs"], "a": model.action_center + model.action_half * f64["a"],
            "r": f64["r"], "discount": GAMMA * (1 - f64["done"]), "weight": torch.ones(B).double()}


def feed_sb3(monkeypatch: pytest.MonkeyPatch, sb3: Any, batches: list[dict[str, Tensor]]) -> None:
    samples = iter([ReplayBufferSamples(b["obs"].double(), b["a"].double(), b["next_obs"].double(),
                                        b["done"].double()[:, None], b["r"].double()[:, None])
                    for b in batches])
    monkeypatch.setattr(sb3.replay_buffer, "sample", lambda batch_size, env=None: next(samples))


def our_noise(model: ActorQ, draws: int) -> tuple[list[Tensor], torch.Generator]:
    """The standard normal draws ``[B, dim(A)]`` our method makes from its generator (seeded ``SEED``),
    in order (float32, as ``sample_gaussian`` and ``smoothed_target_action`` draw them), and a
    generator that has drawn them."""
    g = torch.Generator().manual_seed(SEED)
    return [torch.randn((B, model.action_dim), generator=g) for _ in range(draws)], g


def sac_gap(monkeypatch: pytest.MonkeyPatch, sb3_epsilon: float = 0.0, sb3_tau: float = TAU) -> float:
    """The largest difference of any weight after ``UPDATES`` SAC updates on each side."""
    run_in_float64(monkeypatch)
    env = gym.make("Pendulum-v1")
    sb3 = build_sb3(SB3SAC, env, gamma=GAMMA, tau=sb3_tau, policy_kwargs={"net_arch": [32, 32]})
    # SB3's squash correction is log(1 - tanh(u)^2 + 1e-6); ours is the exact log(1 - tanh(u)^2).
    # Its epsilon is an attribute of the distribution: 0 makes SB3's maths ours, no code patched.
    sb3.actor.action_dist.epsilon = sb3_epsilon
    mi, model = build_ours(env, "tanh_gaussian", optim_eps=1e-8)  # SB3's Adam eps, actor, critic and alpha
    copy_sb3_weights(mi, sac_pairs(model, sb3.actor, sb3.critic))
    batches, method = replayed_batches(env), SAC(target=TargetNetwork(polyak_tau=TAU), seed=SEED)
    noise, generator = our_noise(model, 2 * UPDATES)  # each update: a ~ pi(.|s), then a' ~ pi(.|s')
    for b in batches:
        method.step(mi, our_batch(model, b))
    assert torch.equal(method.generator.get_state(), generator.get_state())  # ours drew exactly these
    queue = [n.double() for n in noise]  # SB3 draws in the same order, through Normal.rsample
    monkeypatch.setattr(torch.distributions.Normal, "rsample",
                        lambda self, sample_shape=(): self.loc + self.scale * queue.pop(0))
    feed_sb3(monkeypatch, sb3, batches)
    sb3.train(UPDATES, B)
    assert not queue
    with torch.no_grad():  # SB3's SAC has no actor target (ours lerps one that SAC never reads)
        pairs = (sac_pairs(model, sb3.actor, sb3.critic)
                 + critic_pairs(mi["target"].critics, sb3.critic_target)
                 + [(model.temperature.log_alpha.reshape(1), sb3.log_ent_coef)])
        return float(gap(pairs))


def td3_gap(monkeypatch: pytest.MonkeyPatch, our_eps: float = ADAM_EPS, sb3_gamma: float = GAMMA) -> float:
    """The largest difference of any weight after ``UPDATES`` TD3 updates on each side (2 of them move
    the actor and the targets)."""
    run_in_float64(monkeypatch)
    env = gym.make("Pendulum-v1")
    method = TD3(target=TargetNetwork(polyak_tau=TAU), seed=SEED)
    sb3 = build_sb3(SB3TD3, env, gamma=sb3_gamma, tau=TAU, policy_delay=method.policy_delay,
                    target_policy_noise=method.target_noise, target_noise_clip=method.target_noise_clip,
                    policy_kwargs={"net_arch": [32, 32], "optimizer_kwargs": {"eps": ADAM_EPS}})
    mi, model = build_ours(env, "deterministic", optim_eps=our_eps)
    copy_sb3_weights(mi, td3_pairs(model, sb3.actor, sb3.critic))
    batches = replayed_batches(env)
    noise, generator = our_noise(model, UPDATES)  # one smoothing draw per update
    for b in batches:
        method.step(mi, our_batch(model, b))
    assert torch.equal(method.generator.get_state(), generator.get_state())
    # Ours scales its draw by the std in float32 (smoothed_target_action); SB3 gets that product.
    queue = [(n * method.target_noise).double() for n in noise]
    feed_sb3(monkeypatch, sb3, batches)
    with monkeypatch.context() as m:  # SB3's smoothing noise is actions.clone().normal_(0, std)
        m.setattr(torch.Tensor, "normal_", lambda self, mean=0.0, std=1.0, *, generator=None:
                  self.copy_(queue.pop(0)))
        sb3.train(UPDATES, B)
    assert not queue
    with torch.no_grad():
        pairs = (td3_pairs(model, sb3.actor, sb3.critic)
                 + td3_pairs(mi["target"], sb3.actor_target, sb3.critic_target))
        return float(gap(pairs))


def test_sac_updates_equal_sb3s_once_its_log_prob_epsilon_is_zero(monkeypatch):
    assert sac_gap(monkeypatch) < TOLERANCE


def test_sac_gap_shows_sb3s_log_prob_epsilon_and_a_changed_tau(monkeypatch):
    assert sac_gap(monkeypatch, sb3_epsilon=1e-6) > 1e-7
    assert sac_gap(monkeypatch, sb3_tau=2 * TAU) > 1e-7


def test_td3_updates_equal_sb3s(monkeypatch):
    assert td3_gap(monkeypatch) < TOLERANCE


def test_td3_gap_shows_a_changed_adam_eps_or_gamma(monkeypatch):
    assert td3_gap(monkeypatch, our_eps=2 * ADAM_EPS) > 1e-7  # as our critic loss halved
    assert td3_gap(monkeypatch, sb3_gamma=0.98) > 1e-7
