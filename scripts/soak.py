#!/usr/bin/env python
"""Soak: long runs whose resident memory must stay flat (not in the test suite).

  minirts   `--minirts_games` MiniRTS episodes (default 10,000) through the
            engine: Python plays seat 0 with random commands against the
            `simple` AI, an actor tag (batches of 64) and a train tag
            (T = 8) read every step.
  hosted    `--hosted_steps` steps (default 1,000,000) of Gymnasium CartPole
            hosted in 2 worker processes, random actions.
  contexts  `--contexts` hosted contexts (default 20), each started, stepped
            for a few batches and stopped: no process, thread or file
            descriptor may outlive them.
  stops     how long stop() takes in the states tests/interop/test_hosted_faults.py
            tests (a worker killed, a worker looping inside `step`, a batch
            held), `--stops` times each (default 3), median.

Resident memory (VmRSS of this process, plus the worker processes for
`hosted`) is sampled when each run has done 0%, 5%, 25%, 50%, 75% and 100%
of its work; "growth" compares the end with the 5% sample, after the
buffers and allocator pools have filled.

    python scripts/soak.py                      # several minutes on 2 cores
    python scripts/soak.py --minirts_games 500 --hosted_steps 50000 --contexts 3   # a quick look
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import elfpy

_MARKS = (0.0, 0.05, 0.25, 0.5, 0.75, 1.0)


def rss_mib(pids: list[int]) -> float:
    """Resident memory of the processes `pids`, in MiB."""
    total_kib = 0
    for pid in pids:
        with open(f"/proc/{pid}/status") as status:
            total_kib += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return total_kib / 1024


class MemoryLog:
    """Samples resident memory as a run passes each mark of its work."""

    def __init__(self, name: str, total: int, pids: Callable[[], list[int]]) -> None:
        self.name, self.total, self.pids = name, total, pids
        self.samples: list[tuple[float, float]] = []
        self.start = time.perf_counter()

    def progress(self, done: int) -> None:
        while len(self.samples) < len(_MARKS) and done >= _MARKS[len(self.samples)] * self.total:
            self.samples.append((_MARKS[len(self.samples)], rss_mib(self.pids())))

    def report(self, unit: str) -> None:
        seconds = time.perf_counter() - self.start
        line = ", ".join(f"{mark:.0%}: {mib:.1f}" for mark, mib in self.samples)
        growth = self.samples[-1][1] - self.samples[1][1]
        print(f"{self.name}: {self.total:,} {unit} in {seconds:.0f} s; RSS MiB at {line}; "
              f"growth after warm-up {growth:+.1f} MiB")


def soak_minirts(games: int) -> None:
    gc = elfpy.GameContext("minirts", num_games=128, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=64, inputs=["s", "v", "terminal"], replies=["a"])
    gc.add_tag("train", batch_size=32, T=8, inputs=["s", "a", "r", "terminal"])
    rng = np.random.default_rng(0)
    log = MemoryLog("minirts", games, lambda: [os.getpid()])
    ended = 0
    log.progress(0)
    with gc:
        for batch in gc:
            if batch.tag == "actor":
                ended += int(batch["terminal"].sum())
                log.progress(ended)
                batch.reply({"a": rng.integers(0, 9, len(batch))})
            if ended >= games:
                break
    log.report("episodes")


def soak_hosted(steps: int) -> None:
    gc = elfpy.GameContext("gym:CartPole-v1", num_games=16, num_workers=2, num_threads=2, seed=0)
    gc.add_tag("actor", batch_size=8, inputs=["s", "r", "terminal"], replies=["a"])
    rng = np.random.default_rng(0)
    log = MemoryLog("hosted", steps, lambda: [os.getpid(), *gc.worker_pids])
    done = 0
    log.progress(0)
    with gc:
        for batch in gc:
            done += len(batch)
            log.progress(done)
            batch.reply({"a": rng.integers(0, 2, len(batch))})
            if done >= steps:
                break
    log.report("environment steps (parent + 2 workers)")


def soak_contexts(count: int) -> None:
    def census() -> tuple[int, int, int]:
        children = sum(1 for pid in os.listdir("/proc") if pid.isdigit() and _parent(pid) == os.getpid())
        return len(os.listdir("/proc/self/fd")), len(os.listdir("/proc/self/task")), children

    before = census()
    log = MemoryLog("contexts", count, lambda: [os.getpid()])
    log.progress(0)
    for i in range(count):
        gc = elfpy.GameContext("gym:CartPole-v1", num_games=4, num_workers=2, num_threads=2, seed=i)
        gc.add_tag("actor", batch_size=4, inputs=["s"], replies=["a"])
        with gc:
            for step, batch in enumerate(gc):
                batch.reply({"a": np.zeros(len(batch), np.int64)})
                if step == 10:
                    break
        log.progress(i + 1)
    log.report("hosted contexts started and stopped")
    print(f"contexts: (open fds, threads, child processes) before {before}, after {census()}")


class LoopingEnv(gym.Env):
    """Action 1 creates `marker`, then loops forever inside `step`."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, marker: str = ""):
        self.marker = marker

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        if action == 1:
            open(self.marker, "w").close()
            while True:
                pass
        return np.zeros(1, np.float32), 0.0, False, False, {}


def _stop_time(state: str, marker: str) -> float:
    """Seconds stop() takes with the hosted context in `state`."""
    gc = elfpy.GameContext(LoopingEnv, num_games=2, num_workers=2, num_threads=2, marker=marker)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    gc.start()
    batch = next(iter(gc))
    if state == "worker killed, batch replied":
        os.kill(gc.worker_pids[1], signal.SIGKILL)
        os.waitid(os.P_PID, gc.worker_pids[1], os.WEXITED | os.WNOWAIT)
        batch.reply({"a": np.zeros(2, np.int64)})
        while not gc._source._host.board.pending(1):  # an engine thread waits for the dead worker
            time.sleep(0.01)
    elif state == "workers looping in step":
        batch.reply({"a": np.ones(2, np.int64)})
        while not os.path.exists(marker):
            time.sleep(0.01)
    start = time.perf_counter()
    gc.stop()
    return time.perf_counter() - start


def soak_stops(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for state in ("batch held", "worker killed, batch replied", "workers looping in step"):
            times = [_stop_time(state, os.path.join(folder, f"{state}{i}")) for i in range(repeats)]
            print(f"stops: {state}: stop() took {statistics.median(times):.3f} s "
                  f"(median of {repeats}; max {max(times):.3f} s)")


def _parent(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minirts_games", type=int, default=10_000)
    parser.add_argument("--hosted_steps", type=int, default=1_000_000)
    parser.add_argument("--contexts", type=int, default=20)
    parser.add_argument("--stops", type=int, default=3)
    args = parser.parse_args()
    if args.minirts_games > 0:
        soak_minirts(args.minirts_games)
    if args.hosted_steps > 0:
        soak_hosted(args.hosted_steps)
    if args.contexts > 0:
        soak_contexts(args.contexts)
    if args.stops > 0:
        soak_stops(args.stops)


if __name__ == "__main__":
    main()
