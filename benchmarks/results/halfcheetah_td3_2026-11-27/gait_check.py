"""How the final TD3 policies run (the HalfCheetah note's section 27): each policy's greedy action on
50 episodes of a fresh ``gym.make("HalfCheetah-v5")`` reset with seeds 10,000-10,049, and per episode
the return, the mean forward speed, the share of steps spent upside down (the torso's pitch, the
observation's second entry, with a negative cosine), the net turns of the torso (pitch change / 2 pi),
the mean pitch, and the actions' mean size and share of entries at their bounds (|a| > 0.99).

A policy is ours (a run folder with ``last.pt``, from ``bench_mujoco_sac.py --contender rlpytorch``)
or SB3's (an ``actor.pt``, its actor's weights, from ``--contender sb3 --algo td3``). Both are read
as tensors only. Prints a line per policy and writes every episode to ``--out`` (JSON):

    python benchmarks/results/halfcheetah_td3_2026-11-27/gait_check.py --out gaits.json \\
        runs/td3_s26/rlpytorch_td3/seed24 runs/td3_s27/sb3_td3/seed13/actor.pt
"""

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from elfpy.files import write_text_atomically
from rlpytorch.evaluate import load_trained

EPISODES, FIRST_SEED = 50, 10_000
Policy = Callable[[torch.Tensor], torch.Tensor]


def ours(folder: Path) -> Policy:
    model, _ = load_trained(folder)
    return lambda obs: model.policy(model.encode(obs)).mode()


def sb3(actor_file: Path) -> Policy:
    """SB3's TD3 actor (``mu``: 17-400-300-6, ReLU, tanh), rebuilt from its weights."""
    weights = torch.load(actor_file, weights_only=True)
    if not any(k.startswith("mu.") for k in weights):
        raise SystemExit(f"{actor_file}: not an SB3 TD3 actor's weights (no 'mu.' entries); "
                         "give ours as its run folder")
    net = torch.nn.Sequential(torch.nn.Linear(17, 400), torch.nn.ReLU(), torch.nn.Linear(400, 300),
                              torch.nn.ReLU(), torch.nn.Linear(300, 6), torch.nn.Tanh())
    net.load_state_dict({k.removeprefix("mu."): v for k, v in weights.items() if k.startswith("mu.")})
    return net


def episode(policy: Policy, env: gym.Env, seed: int) -> dict:
    obs, _ = env.reset(seed=seed)
    first_pitch, total, speeds, pitches, actions, done = obs[1], 0.0, [], [], [], False
    while not done:
        with torch.no_grad():
            action = policy(torch.as_tensor(obs, dtype=torch.float32)[None])[0]
        obs, reward, terminated, truncated, info = env.step(action.numpy())
        total, done = total + reward, terminated or truncated
        speeds.append(info["x_velocity"])
        pitches.append(obs[1])
        actions.append(action.numpy())
    pitch, a = np.array(pitches), np.abs(np.array(actions))
    return {"return": round(total, 1), "speed": round(float(np.mean(speeds)), 3),
            "upside_down": round(float(np.mean(np.cos(pitch) < 0)), 3),
            "turns": round(float((pitch[-1] - first_pitch) / (2 * math.pi)), 2),
            "pitch": round(float(pitch.mean()), 3), "action_size": round(float(a.mean()), 3),
            "at_bounds": round(float(np.mean(a > 0.99)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policies", nargs="+", type=Path, help="ours: a run folder; SB3: an actor.pt")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    env, found = gym.make("HalfCheetah-v5"), {}
    for path in args.policies:
        policy = sb3(path) if path.suffix == ".pt" else ours(path)
        episodes = [episode(policy, env, FIRST_SEED + i) for i in range(EPISODES)]
        returns = np.array([e["return"] for e in episodes])
        upside = np.array([e["upside_down"] for e in episodes])
        print(f"{path}: return {returns.mean():,.0f} +- {returns.std():,.0f} (lowest {returns.min():,.0f}); "
              f"upside down {upside.mean():.0%} of steps, in {np.sum(upside > 0.5)} of {EPISODES} episodes "
              f"more than half; turns {np.mean([e['turns'] for e in episodes]):+.2f}; "
              f"speed {np.mean([e['speed'] for e in episodes]):.2f}, "
              f"pitch {np.mean([e['pitch'] for e in episodes]):+.3f}, "
              f"|a| {np.mean([e['action_size'] for e in episodes]):.3f}, "
              f"at bounds {np.mean([e['at_bounds'] for e in episodes]):.1%}", flush=True)
        found[str(path)] = episodes
    write_text_atomically(args.out, json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
