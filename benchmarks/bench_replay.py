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
    python benchmarks/bench_replay.py --repeats 3 --samples 200 --record   # append the figures to results.jsonl
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import report
import torch

from rlpytorch.replay import Replay

KINDS = {  # name: (obs shape, dtype, capacity, games)
    "vector": ((4,), np.float32, 100_000, 16),
    "frames": ((4, 84, 84), np.uint8, 5_000, 16),
}
NAMES = ("rlpytorch uniform", "rlpytorch prioritized", "SB3 ReplayBuffer")  # the last: every row's peer
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


def measure(kind, repeats, samples):
    """{buffer: {"insert": [transitions/s], "sample": [transitions/s], "memory": [MB]}}, one value per repeat."""
    shape, dtype, capacity, games = KINDS[kind]
    data = windows(shape, dtype, games, capacity // (games * (T - 1)) + 2)
    steps = len(data) * (T - 1) * games
    rows = {name: {"insert": [], "sample": [], "memory": []} for name in NAMES}
    for _ in range(repeats):
        for name, row in rows.items():
            is_sb3 = name.startswith("SB3")
            store = sb3(kind) if is_sb3 else ours(kind, "prior" in name)
            row["insert"].append(steps / timed(insert_sb3 if is_sb3 else insert_ours, store, data)[0])
            row["sample"].append(samples * BATCH / timed(sample_sb3 if is_sb3 else sample_ours, store, samples)[0])
            row["memory"].append((sb3_bytes(store) if is_sb3 else store.store.nbytes) / 2**20)
            del store
    return rows


def figures(kind, rows):
    """The page's figures of one observation kind: each buffer beside SB3's."""
    shape, dtype, capacity, _ = KINDS[kind]
    what = f"{'x'.join(map(str, shape))} {np.dtype(dtype).name}, {capacity // 1000}k"
    peer = f"{NAMES[-1]}, {what}"
    return [dict(benchmark="replay", row=f"{name}, {what}", metric=metric, unit=unit, values=row[metric],
                 better="lower" if metric == "memory" else "higher", peer=None if name == NAMES[-1] else peer)
            for metric, unit in (("insert", "transitions/s"), ("sample", "transitions/s"), ("memory", "MB"))
            for name, row in rows.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--samples", type=int, default=300, help="sampled batches per measurement")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    report.add_options(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}; "
          f"shared, loaded machine: medians of {args.repeats} interleaved repeats; windows T = {T}, "
          f"sampled batches of {BATCH}")
    report.publish([f for kind in args.kinds for f in figures(kind, measure(kind, args.repeats, args.samples))],
                   args)


if __name__ == "__main__":
    main()
