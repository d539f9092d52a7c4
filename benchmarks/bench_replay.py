"""Replay speed and memory: rlpytorch's ``Replay`` beside Stable-Baselines3's ``ReplayBuffer``.

Two observation kinds: CartPole-like vectors (4 float32) and Atari-like
stacked frames (4 x 84 x 84 uint8). For each, in one run, repeats interleaved:

- insertion: transitions per second. rlpytorch takes the train tag's
  ``[T, B]`` windows (``T - 1`` new steps per game per window); SB3 takes one
  ``add`` of ``B`` environments per step (``next_obs`` included);
- sampling: transitions per second at a batch of 64 (uniform for both;
  rlpytorch prioritized with its priority update after each batch: SB3 has no
  prioritized buffer);
- memory: bytes held once full (rlpytorch stores every step once and stacked
  frames as one frame per step; SB3 with ``optimize_memory_usage=True``, which
  stores each observation once but full stacks).

    python benchmarks/bench_replay.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch

from rlpytorch.replay import Replay

KINDS = {  # name: (obs shape, dtype, capacity, games)
    "vector": ((4,), np.float32, 100_000, 16),
    "frames": ((4, 84, 84), np.uint8, 5_000, 16),
}
T = 9
BATCH = 64


def windows(shape, dtype, games, count, seed=0):
    """``count`` consecutive ``[T, B]`` windows of a stacked-frame-like stream (episodes of ~50 steps)."""
    rng = np.random.default_rng(seed)
    steps = count * (T - 1) + 1
    obs = rng.integers(0, 255, (steps, games, *shape)).astype(dtype)
    terminal = rng.random((steps, games)) < 0.02
    out = []
    for k in range(count):
        rows = slice(k * (T - 1), k * (T - 1) + T)
        out.append({
            "s": obs[rows], "final_s": np.zeros_like(obs[rows]),
            "a": rng.integers(0, 2, (T, games)), "r": np.ones((T, games), np.float32),
            "terminal": terminal[rows], "truncated": np.zeros((T, games), bool),
        })
    return out


def ours(kind, prioritized):
    shape, dtype, capacity, games = KINDS[kind]
    return Replay(games, ["s"], replay_capacity=capacity, prioritized=prioritized,
                  frame_stack=4 if kind == "frames" else 0, seed=0)


def sb3(kind):
    import gymnasium as gym
    from stable_baselines3.common.buffers import ReplayBuffer

    shape, dtype, capacity, games = KINDS[kind]
    low, high = (0, 255) if dtype == np.uint8 else (-np.inf, np.inf)
    space = gym.spaces.Box(low, high, shape, dtype)
    return ReplayBuffer(capacity // games * games, space, gym.spaces.Discrete(2), device="cpu", n_envs=games,
                        optimize_memory_usage=True, handle_timeout_termination=False)


def timed(fn, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


def insert_ours(replay, data):
    for w in data:
        replay.add(w, np.arange(w["r"].shape[1]))


def insert_sb3(buffer, data):
    infos = [{} for _ in range(data[0]["r"].shape[1])]
    for w in data:
        for t in range(T - 1):
            buffer.add(w["s"][t], w["s"][t + 1], w["a"][t][:, None], w["r"][t + 1], w["terminal"][t + 1], infos)


def sample_ours(replay, n):
    for _ in range(n):
        batch = replay.sample(BATCH)
        replay.update_priorities(batch["index"], torch.rand(BATCH))


def sample_sb3(buffer, n):
    for _ in range(n):
        buffer.sample(BATCH)


def sb3_bytes(buffer):
    return sum(getattr(buffer, k).nbytes for k in ("observations", "actions", "rewards", "dones", "timeouts")
               if getattr(buffer, k, None) is not None) + getattr(buffer, "next_observations", np.zeros(0)).nbytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--samples", type=int, default=300, help="sampled batches per measurement")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}; "
          f"shared, loaded machine: medians of {args.repeats} interleaved repeats")
    for kind, (shape, dtype, capacity, games) in KINDS.items():
        data = windows(shape, dtype, games, capacity // (games * (T - 1)) + 2)
        steps = len(data) * (T - 1) * games
        names = ("rlpytorch uniform", "rlpytorch prioritized", "sb3 ReplayBuffer")
        rows = {name: {"insert": [], "sample": [], "bytes": 0} for name in names}
        for _ in range(args.repeats):
            for name in rows:
                is_sb3 = name.startswith("sb3")
                store = sb3(kind) if is_sb3 else ours(kind, "prior" in name)
                wall, cpu = timed(insert_sb3 if is_sb3 else insert_ours, store, data)
                rows[name]["insert"].append((steps / wall, cpu / wall))
                wall, cpu = timed(sample_sb3 if is_sb3 else sample_ours, store, args.samples)
                rows[name]["sample"].append((args.samples * BATCH / wall, cpu / wall))
                rows[name]["bytes"] = sb3_bytes(store) if is_sb3 else store.store.nbytes
                del store
        print(f"\n{kind}: obs {shape} {np.dtype(dtype).name}, capacity {capacity}, {games} games, windows T = {T}")
        print("| buffer | insert (transitions/s) | sample batch 64 (transitions/s) | memory (MB) |")
        print("|---|---:|---:|---:|")
        base = rows["sb3 ReplayBuffer"]
        for name, row in rows.items():
            ins = np.median([v for v, _ in row["insert"]])
            smp = np.median([v for v, _ in row["sample"]])
            ratio_i = ins / np.median([v for v, _ in base["insert"]])
            ratio_s = smp / np.median([v for v, _ in base["sample"]])
            print(f"| {name} | {ins:,.0f} ({ratio_i:.2f}x) | {smp:,.0f} ({ratio_s:.2f}x) | "
                  f"{row['bytes'] / 2**20:.1f} ({base['bytes'] / row['bytes']:.2f}x less) |")


if __name__ == "__main__":
    main()
