#!/usr/bin/env python
"""Atari Pong steps per second with random actions: Python-hosted games in
elfpy's GameContext, envpool's environments stepped through elfpy's engine
("envpool:Pong-v5"), Gymnasium's AsyncVectorEnv and envpool alone.

Every library runs the same loop over N environments: take the batch of
observations, draw random actions in Python (one call per batch), hand them
back. A step is one environment step (one row), counted the same way for
every library; the time covers the whole loop and excludes construction,
reset and a warm-up in which every environment steps at least twice.

Configurations:
  raw      ALE/Pong-v5 as Gymnasium makes it: 210x160x3 RGB frames, frame
           skip 4, sticky actions 0.25. envpool is configured to match
           (full-size colour frames, no stacking, no episodic life, no clip).
  atari    the standard DQN preprocessing: 84x84 grayscale, frame skip 4,
           4 stacked frames, noop starts (elfpy.gym_presets.atari_env, i.e.
           Gymnasium's AtariPreprocessing + FrameStackObservation, in elfpy and
           AsyncVectorEnv; envpool's own).
elfpy hosts the environments in --workers processes (default: one per core);
elfpy_envpool runs one envpool pool of N environments on --workers envpool
threads, configured as envpool alone, its games reaching Python through the
engine's batches; AsyncVectorEnv runs one process per environment, as it
always does.

Beside steps per second, the table gives the CPU seconds each library spent
per 1,000 steps (this process's threads and its worker processes, read from
/proc during the timed loop): on a shared machine the rate depends on what
else runs, the CPU cost much less.

The machine may be shared and noisy: each figure is the median of --repeats
measurements, libraries interleaved and their order rotated per repeat.

    python benchmarks/bench_pygames.py                # the table (a few minutes)
    python benchmarks/bench_pygames.py --quick        # smoke run
    python benchmarks/bench_pygames.py --record       # append the figures to benchmarks/results.jsonl
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402

from elfpy.gym_presets import atari_env, make_gym_env  # noqa: E402

NUM_ACTIONS = 6  # Pong's minimal action set
LIBRARIES = ("elfpy", "elfpy_half", "elfpy_envpool", "elfpy_envpool_half", "gym_async", "envpool")
ROWS = {"elfpy": "elfpy hosted, {n} games, batch N", "elfpy_half": "elfpy hosted, {n} games, batch N/2",
        "elfpy_envpool": "envpool through the engine, {n} games, batch N",
        "elfpy_envpool_half": "envpool through the engine, {n} games, batch N/2",
        "gym_async": "gym AsyncVectorEnv, {n} games", "envpool": "envpool alone, {n} games"}
# each elfpy mode's peer: AsyncVectorEnv for hosted games, envpool alone for envpool's
GOAL = {"label": "issue's goal", "ratio": 1.5}  # hosted games' steps/s beside AsyncVectorEnv's
PEERS = {"elfpy": "gym_async", "elfpy_half": "gym_async", "elfpy_envpool": "envpool", "elfpy_envpool_half": "envpool"}


FACTORIES = {
    "raw": functools.partial(make_gym_env, "ALE/Pong-v5"),
    "atari": functools.partial(atari_env, "ALE/Pong-v5", terminal_on_life_loss=False),
}



def envpool_options(config: str) -> dict[str, Any]:
    """envpool's Pong set up as the config's Gymnasium environment."""
    match_raw = {"img_height": 210, "img_width": 160, "gray_scale": False, "stack_num": 1, "episodic_life": False,
                 "reward_clip": False, "noop_max": 1, "repeat_action_probability": 0.25}
    return match_raw if config == "raw" else {"episodic_life": False, "reward_clip": False}


# make_* returns (step, close, pids): step() runs one batch and returns its
# rows; pids() the processes other than this one that do the library's work.
Made = tuple[Callable[[], int], Callable[[], None], Callable[[], list[int]]]


def make_elfpy(config: str, num_envs: int, workers: int, batch: int = 0, envpool: bool = False) -> Made:
    import elfpy

    batch = batch or num_envs
    if envpool:
        gc = elfpy.GameContext("envpool:Pong-v5", num_games=num_envs, num_workers=workers, seed=0,
                               **envpool_options(config))
    else:
        gc = elfpy.GameContext(FACTORIES[config], num_games=num_envs, num_workers=workers, seed=0)
    gc.add_tag("actor", batch_size=batch, inputs=["s", "r", "terminal"], replies=["a"])
    gc.reg_callback("actor", lambda batch: {"a": np.random.randint(0, NUM_ACTIONS, len(batch))})
    gc.start()

    def step() -> int:
        gc.run()
        return batch

    return step, gc.stop, lambda: gc.worker_pids


def make_elfpy_half(config: str, num_envs: int, workers: int) -> Made:
    """Batches of N/2: the other half of the games step while Python holds one."""
    return make_elfpy(config, num_envs, workers, batch=num_envs // 2)


def make_elfpy_envpool(config: str, num_envs: int, workers: int) -> Made:
    return make_elfpy(config, num_envs, workers, envpool=True)


def make_elfpy_envpool_half(config: str, num_envs: int, workers: int) -> Made:
    return make_elfpy(config, num_envs, workers, batch=num_envs // 2, envpool=True)


def make_gym_async(config: str, num_envs: int, workers: int) -> Made:
    import gymnasium

    envs = gymnasium.vector.AsyncVectorEnv([FACTORIES[config]] * num_envs)
    envs.reset(seed=0)

    def step() -> int:
        envs.step(np.random.randint(0, NUM_ACTIONS, num_envs))
        return num_envs

    return step, envs.close, lambda: [process.pid for process in envs.processes]


def make_envpool(config: str, num_envs: int, workers: int) -> Made:
    import envpool

    envs = envpool.make("Pong-v5", env_type="gymnasium", num_envs=num_envs, batch_size=num_envs,
                        num_threads=workers, seed=0, **envpool_options(config))
    envs.async_reset()

    def step() -> int:
        _, _, _, _, info = envs.recv()
        envs.send(np.random.randint(0, NUM_ACTIONS, len(info["env_id"])), info["env_id"])
        return num_envs

    return step, envs.close, list


MAKERS = {"elfpy": make_elfpy, "elfpy_half": make_elfpy_half, "elfpy_envpool": make_elfpy_envpool,
          "elfpy_envpool_half": make_elfpy_envpool_half, "gym_async": make_gym_async, "envpool": make_envpool}


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) so far of this process's threads and of `pids`."""
    ticks = 0
    for pid in ["self", *pids]:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def measure(library: str, config: str, num_envs: int, workers: int, seconds: float) -> tuple[float, float]:
    """Steps per second and CPU seconds per 1,000 steps."""
    step, close, pids = MAKERS[library](config, num_envs, workers)
    try:
        # Warm up until every environment has stepped twice, not only for a
        # while: elfpy's workers create their environments (about 50 ms each
        # for Atari) while the first batches run, so with batches of N/2 the
        # first half batch comes early and the second only once the rest
        # exist; a warm-up by time alone measured that creation as stepping.
        warmup_end, warmup_rows = time.perf_counter() + min(1.0, seconds / 2), 0
        while time.perf_counter() < warmup_end or warmup_rows < 2 * num_envs:
            warmup_rows += step()
        rows, start, cpu = 0, time.perf_counter(), cpu_seconds(pids())
        while time.perf_counter() - start < seconds:
            rows += step()
        rate = rows / (time.perf_counter() - start)
        return rate, 1000 * (cpu_seconds(pids()) - cpu) / rows
    finally:
        close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["raw", "atari"], choices=sorted(FACTORIES))
    parser.add_argument("--num_envs", type=int, default=16)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="elfpy worker processes and envpool threads")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    parser.add_argument("--quick", action=argparse.BooleanOptionalAction, default=False, help="1 repeat of 2 s")
    report.add_options(parser)
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.repeats = 2.0, 1

    results: dict[tuple[str, str], list[float]] = {}
    costs: dict[tuple[str, str], list[float]] = {}
    for repeat in range(args.repeats):
        order = args.libraries[repeat % len(args.libraries):] + args.libraries[:repeat % len(args.libraries)]
        for config in args.configs:
            for library in order:
                rate, cost = measure(library, config, args.num_envs, args.workers, args.seconds)
                results.setdefault((config, library), []).append(rate)
                costs.setdefault((config, library), []).append(cost)
                print(f"repeat {repeat} {config:5s} {library:18s} {rate:9.0f} steps/s {cost:6.3f} CPU s / 1k steps",
                      flush=True)

    commit = report.current_commit()
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    print(f"\nPong, {args.num_envs} envs, random actions; {args.workers} elfpy workers / envpool threads; "
          f"median of {args.repeats} x {args.seconds:g} s; commit {commit}; {machine}\n")
    report.publish(figures(results, costs, args.num_envs), args)


def figures(rates: dict[tuple[str, str], list[float]], costs: dict[tuple[str, str], list[float]],
            num_envs: int) -> list[dict]:
    """The page's figures, every repeat: steps/s (hosted games: the issue's
    goal, 1.5x AsyncVectorEnv) and CPU seconds per 1,000 steps, each elfpy mode
    beside its peer. The page's rows are the atari preset; raw frames say so."""
    def row(config: str, library: str) -> str:
        return ROWS[library].format(n=num_envs) + (", raw frames" if config == "raw" else "")

    out = []
    for metric, unit, better, values in (("steps/s", "", "higher", rates), ("CPU per 1k steps", "s", "lower", costs)):
        for (config, library), each in values.items():
            peer = row(config, PEERS[library]) if library in PEERS else None
            goal = metric == "steps/s" and PEERS.get(library) == "gym_async"
            out.append(dict(benchmark="atari", row=row(config, library), metric=metric, unit=unit, values=each,
                            better=better, peer=peer, reference=GOAL if goal else None))
    return out


if __name__ == "__main__":
    main()
