#!/usr/bin/env python
"""MiniRTS frames (game ticks) per second per core.

Two measurements, each on one engine worker thread (num_threads=1):
  ai_vs_ai       the game alone: built-in AI against built-in AI
                 (`seats=0`, the spectator mode), with a long frame_skip so the
                 engine hands a batch to Python only every `--ai_frame_skip`
                 ticks and Python's share is negligible;
  engine_random  a Python agent on seat 0 against the `simple` AI through the
                 engine: every `frame_skip` (25) ticks each game writes its
                 features and Python replies random commands.
Each in the standard game and the variants (ctf: capture the flag;
tower_defense: the built-in AI or Python defends against waves), and once
with the `board` observation on (board=true), to show what writing it costs.
Frames are counted exactly from the game's `frames` key (ticks each step ran).
Two rates are reported: per wall-clock second (one worker thread; Python's
thread runs beside it) and per CPU second of the whole process (all threads:
the honest "per core" figure on a machine with spare cores).

The same AI-vs-AI loop without the engine at all (cpp/games/rts/ai.h
PlayMatch) prints its rate in the C++ test: `test_minirts soak_ai_against_ai_and_speed`.

    python benchmarks/bench_minirts.py            # ~1 minute
    python benchmarks/bench_minirts.py --quick    # seconds
    python benchmarks/bench_minirts.py --seconds 4 --repeats 3 --record   # append the figures to results.jsonl
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402

import elfpy  # noqa: E402


def measure(seconds: float, num_games: int, warmup_batches: int = 5, **options) -> tuple[float, float, int]:
    """(frames per wall second, frames per CPU second, frames) of one run."""
    gc = elfpy.GameContext("minirts", num_games=num_games, num_threads=1, seed=0, **options)
    gc.add_tag("actor", batch_size=num_games, inputs=["frames"], replies=["a"])
    rng = np.random.default_rng(0)
    zeros = np.zeros(num_games, dtype=np.int64)
    random_actions = options.get("seats", 1) != 0
    num_actions = int(gc.spec()["a"].bounds[1]) + 1
    frames = 0
    with gc:
        batches = 0
        for batch in gc:
            batches += 1
            if batches == warmup_batches:
                frames, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
            elif batches > warmup_batches:
                frames += int(batch["frames"].sum())
                if time.perf_counter() - wall0 >= seconds:
                    batch.reply({"a": zeros})
                    break
            batch.reply({"a": rng.integers(0, num_actions, len(batch)) if random_actions else zeros})
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return frames / wall, frames / cpu, frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=8.0, help="measured time per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per mode; the median is reported")
    parser.add_argument("--games", type=int, default=64, help="games (= batch size)")
    parser.add_argument("--ai_frame_skip", type=int, default=2000, help="ticks per step in ai_vs_ai")
    parser.add_argument("--quick", action=argparse.BooleanOptionalAction, default=False, help="one short run per mode")
    parser.add_argument("--modes", default="", help="only the modes whose name contains one of these, comma-separated")
    report.add_options(parser)
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.repeats = 1.0, 1
    modes = {  # named as the page's rows
        "ai_vs_ai, simple vs simple": dict(seats=0, frame_skip=args.ai_frame_skip),
        "ai_vs_ai, hit_and_run vs simple": dict(seats=0, frame_skip=args.ai_frame_skip, ai0="hit_and_run"),
        "ai_vs_ai, ctf": dict(seats=0, frame_skip=args.ai_frame_skip, variant="ctf"),
        "ai_vs_waves, tower_defense": dict(seats=0, frame_skip=args.ai_frame_skip, variant="tower_defense"),
        "engine_random (frame_skip 25)": dict(seats=1, frame_skip=25),
        "engine_random + board": dict(seats=1, frame_skip=25, board=True),
        "engine_random, ctf": dict(seats=1, frame_skip=25, variant="ctf"),
        "engine_random, tower_defense": dict(seats=1, frame_skip=25, variant="tower_defense"),
    }
    if args.modes:
        wanted = [m.strip() for m in args.modes.split(",")]
        modes = {name: options for name, options in modes.items() if any(w in name for w in wanted)}
    figures = []
    for name, options in modes.items():
        runs = [measure(args.seconds, args.games, **options) for _ in range(args.repeats)]
        print(f"{name}: {args.games} games, {sum(r[2] for r in runs):,} frames measured, "
              f"{statistics.median(r[0] for r in runs):,.0f} frames/s wall", flush=True)
        for metric, column in (("frames/s, wall", 0), ("frames per CPU second", 1)):
            figures.append(dict(benchmark="minirts", row=name, metric=metric, unit="",
                                values=[r[column] for r in runs], better="higher"))
    report.publish(figures, args)


if __name__ == "__main__":
    main()
