"""Two of TD3's random draws, ours beside SB3's, by distribution (the HalfCheetah note's section 27):

- the initial weights: each layer's standard deviation and largest magnitude, rlpytorch's ``ActorQ``
  as the config builds it after ``torch.manual_seed(0)`` beside SB3's TD3 policy seeded 0;
- the exploration: rlpytorch's ``Exploration`` (rl-zoo's settings) during the warm-up (SB3: the action
  space's uniform ``sample()``) and after it at an actor's action of 0.95 (SB3: ``clip(a + N(0, 0.1^2),
  -1, 1)``, drawn here with numpy), 30,000 entries each.

    python benchmarks/results/halfcheetah_td3_2026-11-27/draws_check.py
"""

import gymnasium as gym
import numpy as np
import torch

import rlpytorch
from rlpytorch.acting.exploration import Exploration
from rlpytorch.core.distributions import Deterministic
from rlpytorch.models.actor_q import ActorQ, ActorQSettings

MU, NOISE, STEPS = 0.95, 0.1, 5_000


def layers(named: list[tuple[str, torch.Tensor]]) -> None:
    for name, p in named:
        spread, largest = p.std(correction=0).item(), p.abs().max().item()
        print(f"  {name:24s} {tuple(p.shape)!s:16s} std {spread:.5f} max {largest:.5f}")


def weights(env: gym.Env) -> None:
    from stable_baselines3 import TD3

    config = rlpytorch.config("mujoco_halfcheetah_td3")
    torch.manual_seed(0)
    ours = ActorQ({"s": env.observation_space.shape}, env.action_space,
                  ActorQSettings(net_arch=config.net_arch, critics=2, actor_head="deterministic"))
    sb3 = TD3("MlpPolicy", env, learning_rate=config.lr, policy_kwargs={"net_arch": [400, 300]}, seed=0,
              device="cpu")
    print("ours' initial weights:")
    layers(list(ours.named_parameters()))
    print("SB3's initial weights:")
    layers([(n, p) for n, p in sb3.policy.named_parameters() if "target" not in n])


def exploration(env: gym.Env) -> None:
    config = rlpytorch.config("mujoco_halfcheetah_td3")
    space = env.action_space
    explore = Exploration(low=space.low.tolist(), high=space.high.tolist(), action_noise=config.action_noise,
                          random_frames=config.learning_starts, seed=5)
    mu = torch.full((1, space.shape[0]), MU)
    warm = np.concatenate([explore(Deterministic(mu), f).numpy() for f in range(STEPS)])
    late = np.concatenate([explore(Deterministic(mu), config.learning_starts + f).numpy() for f in range(STEPS)])
    space.seed(5)
    sb3_warm = np.stack([space.sample() for _ in range(STEPS)])
    sb3_late = np.clip(MU + np.random.default_rng(5).normal(0, NOISE, late.shape), -1, 1)
    for name, a, b in (("warm-up", warm, sb3_warm), (f"noise at {MU}", late, sb3_late)):
        print(f"{name}: ours mean {a.mean():+.4f} std {a.std():.4f}, at a bound {np.mean(np.abs(a) >= 1):.3f}; "
              f"SB3's mean {b.mean():+.4f} std {b.std():.4f}, at a bound {np.mean(np.abs(b) >= 1):.3f}")


if __name__ == "__main__":
    halfcheetah = gym.make("HalfCheetah-v5")
    weights(halfcheetah)
    exploration(halfcheetah)
