#!/usr/bin/env python
"""CartPole env steps per second: elfpy's engine beside envpool and Gymnasium.

Every library runs the same loop: take a batch of observations, draw random
actions in Python (`np.random.randint(0, 2, n)`, one call per batch), hand them
back. A step is one row of a batch (batches x batch size), counted the same way
for every library; the time covers the whole loop, Python action sampling
included, and excludes construction, reset and warm-up.

Modes, for each size N (the number of environments / games):
  sync   batch = N     elfpy (batch_size=N), envpool (batch_size=N),
                       Gymnasium SyncVectorEnv, AsyncVectorEnv and the numpy
                       CartPoleVectorEnv (these only have full batches);
  async  batch = N/2   elfpy (batch_size=N/2: games keep stepping while Python
                       holds a batch) and envpool (batch_size=N/2, recv/send).
Worker threads = cores for elfpy and envpool.

The physical limit, column "bare C++" (sync only): the same CartPole games
(the registered game, through the same game API) stepped by the same number
of threads with no engine and no Python (cpp/bench/bare_cartpole.cc, built
by CMake on first use into build/bench), actions drawn in C++. "elfpy / bare"
is the share of that limit the engine reaches. AsyncVectorEnv runs one process
per environment, so it is measured only up to --async_vector_max environments
(default 256) and shown as n/a beyond.

The machine may be shared and noisy: each figure is the median of --repeats
measurements, with libraries interleaved (all libraries at one size and mode,
then the next size, ..., then the next repeat; the library order rotates).

    python benchmarks/bench_engine.py                 # full table (several minutes)
    python benchmarks/bench_engine.py --quick         # smoke run (seconds)
    python benchmarks/bench_engine.py --markdown      # the tables in Markdown
    python benchmarks/bench_engine.py --record        # append the figures to benchmarks/results.jsonl
"""

from __future__ import annotations

import os

# BLAS/OpenMP pools must not spin beside the measured threads; set before numpy loads.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402
from cpu_info import cpu_name  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# name, column title, modes it has
LIBRARIES = {
    "elfpy": ("elfpy", ("sync", "async")),
    "envpool": ("envpool", ("sync", "async")),
    "gym_numpy": ("gym CartPoleVectorEnv", ("sync",)),
    "gym_sync": ("gym SyncVectorEnv", ("sync",)),
    "gym_async": ("gym AsyncVectorEnv", ("sync",)),
    "bare": ("bare C++", ("sync",)),
}
BARE_BUILD = REPO / "build" / "bench"


def random_actions(n: int) -> np.ndarray:
    return np.random.randint(0, 2, n)


# --- one environment set per library --------------------------------------
# make_* returns (step, close): step() runs one batch of the loop and returns
# its number of rows; close() frees everything. Construction and reset happen
# in make_*, outside the timing.


def make_elfpy(num_envs: int, batch: int, threads: int) -> tuple[Callable[[], int], Callable[[], None]]:
    import elfpy

    gc = elfpy.GameContext("cartpole", num_games=num_envs, num_threads=threads, seed=0)
    gc.add_tag("actor", batch_size=batch, inputs=["s", "r", "terminal"], replies=["a"])
    rows = [0]

    def actor(b):
        rows[0] = len(b)
        return {"a": random_actions(len(b))}

    gc.reg_callback("actor", actor)
    gc.start()

    def step() -> int:
        gc.run()
        return rows[0]

    return step, gc.stop


def make_envpool(num_envs: int, batch: int, threads: int) -> tuple[Callable[[], int], Callable[[], None]]:
    import envpool

    env = envpool.make_gymnasium("CartPole-v1", num_envs=num_envs, batch_size=batch, num_threads=threads, seed=0)
    if batch == num_envs:
        env.reset()

        def step() -> int:
            env.step(random_actions(num_envs))
            return num_envs
    else:
        env.async_reset()

        def step() -> int:
            _, _, _, _, info = env.recv()
            env_id = info["env_id"]
            env.send(random_actions(len(env_id)), env_id)
            return len(env_id)

    return step, env.close


def _gym_vector(env, num_envs: int) -> tuple[Callable[[], int], Callable[[], None]]:
    env.reset(seed=0)

    def step() -> int:
        env.step(random_actions(num_envs))
        return num_envs

    return step, env.close


def make_gym_numpy(num_envs: int, batch: int, threads: int) -> tuple[Callable[[], int], Callable[[], None]]:
    from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv

    return _gym_vector(CartPoleVectorEnv(num_envs=num_envs), num_envs)


def make_gym_sync(num_envs: int, batch: int, threads: int) -> tuple[Callable[[], int], Callable[[], None]]:
    import gymnasium as gym

    return _gym_vector(gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * num_envs), num_envs)


def make_gym_async(num_envs: int, batch: int, threads: int) -> tuple[Callable[[], int], Callable[[], None]]:
    import gymnasium as gym

    env = gym.vector.AsyncVectorEnv([lambda: gym.make("CartPole-v1")] * num_envs, shared_memory=True)
    return _gym_vector(env, num_envs)


def bare_binary() -> Path:
    """cpp/bench/bare_cartpole, built into build/bench if it is not there yet."""
    binary = BARE_BUILD / "bare_cartpole"
    if not binary.exists():
        subprocess.run(["cmake", "-S", str(REPO), "-B", str(BARE_BUILD), "-DCMAKE_BUILD_TYPE=Release",
                        "-DELF_BUILD_PYTHON=OFF", "-DELF_BUILD_TESTS=OFF"], check=True, capture_output=True)
        subprocess.run(["cmake", "--build", str(BARE_BUILD), "--target", "bare_cartpole", "-j", "2"],
                       check=True, capture_output=True)
    return binary


def measure_bare(num_envs: int, threads: int, seconds: float) -> tuple[float, float]:
    """(steps per second, cores busy) of the bare loop: it times itself."""
    out = subprocess.run([str(bare_binary()), "--games", str(num_envs), "--threads", str(threads),
                          "--milliseconds", str(int(seconds * 1000))], check=True, capture_output=True, text=True)
    fields = out.stdout.split()
    return float(fields[1]), float(fields[3])


MAKERS = {
    "elfpy": make_elfpy,
    "envpool": make_envpool,
    "gym_numpy": make_gym_numpy,
    "gym_sync": make_gym_sync,
    "gym_async": make_gym_async,
}


# --- measuring ----------------------------------------------------------------


def measure(lib: str, num_envs: int, batch: int, threads: int, seconds: float,
            batches: int | None) -> tuple[float, int, float]:
    """Steps per second of one run of `batches` timed batches (chosen from the
    warm-up to last about `seconds` when None). Returns (rate, batches, cpu):
    cpu is this process's CPU time over the wall time (cores kept busy; worker
    processes of AsyncVectorEnv are not included)."""
    if lib == "bare":
        rate, cpu = measure_bare(num_envs, threads, seconds)
        return rate, 0, cpu
    step, close = MAKERS[lib](num_envs, batch, threads)
    try:
        # Warm-up: at least two batches per environment slot and 10% of the
        # measuring time, so every environment has stepped and caches are hot.
        warm_batches = max(4, 2 * num_envs // batch)
        start = time.perf_counter()
        done = 0
        while done < warm_batches or time.perf_counter() - start < 0.1 * seconds:
            step()
            done += 1
        per_batch = (time.perf_counter() - start) / done
        if batches is None:
            batches = max(5, int(seconds / per_batch))
        rows = 0
        cpu_start = time.process_time()
        start = time.perf_counter()
        for _ in range(batches):
            rows += step()
        elapsed = time.perf_counter() - start
        cpu = (time.process_time() - cpu_start) / elapsed
    finally:
        close()
    return rows / elapsed, batches, cpu


# --- reporting ----------------------------------------------------------------


def usable_cores() -> int:
    """The cores this process may run on (os.cpu_count() unless restricted by
    affinity, e.g. taskset)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine_info(threads: int) -> dict[str, object]:
    cpu = cpu_name()
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    for module in ("envpool", "gymnasium"):
        try:
            versions[module] = __import__(module).__version__
        except Exception as error:  # a library missing is reported, not fatal
            versions[module] = f"unavailable ({type(error).__name__})"
    # The commit of the checkout elfpy is imported from (it may be another
    # worktree than this script's, e.g. via PYTHONPATH).
    try:
        import elfpy

        elf_root = Path(elfpy.__file__).resolve().parent.parent
    except Exception as error:
        elf_root = REPO
        versions["elfpy"] = f"unavailable ({type(error).__name__})"
    commit = report.current_commit(elf_root)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable_cores(),
        "threads": threads,
        "platform": platform.platform(),
        "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "versions": versions,
        "commit": commit,
        "elfpy_path": str(elf_root),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python " + shlex.join([os.path.relpath(sys.argv[0], REPO) if sys.argv[0].endswith(".py")
                                            else sys.argv[0], *sys.argv[1:]]),
    }


def fmt_rate(rate: float | None) -> str:
    if rate is None:
        return "n/a"
    if rate >= 1e6:
        return f"{rate / 1e6:.2f}M"
    return f"{rate / 1e3:.0f}k"


def fmt_ratio(rate: float | None, base: float | None) -> str:
    if rate is None or base is None:
        return "n/a"
    return f"{rate / base:.2f}x"


def build_table(results: dict, sizes: list[int], libs: list[str]) -> tuple[list[str], list[list[str]]]:
    header = ["envs", "mode", "batch"]
    for lib in libs:
        header.append(LIBRARIES[lib][0])
        if lib != "envpool":
            header.append("/ envpool")
    if "bare" in libs and "elfpy" in libs:
        header.append("elfpy / bare")
    rows = []
    for size in sizes:
        for mode in ("sync", "async"):
            batch = size if mode == "sync" else size // 2
            if not any(mode in LIBRARIES[lib][1] for lib in libs):
                continue
            base = median(results, "envpool", size, mode)
            row = [str(size), mode, str(batch)]
            for lib in libs:
                rate = median(results, lib, size, mode)
                row.append(fmt_rate(rate))
                if lib != "envpool":
                    row.append(fmt_ratio(rate, base))
            if "bare" in libs and "elfpy" in libs:
                row.append(fmt_ratio(median(results, "elfpy", size, mode), median(results, "bare", size, mode)))
            rows.append(row)
    return header, rows


def cpu_table(results: dict, cpu_use: dict, sizes: list[int], libs: list[str]) -> tuple[list[str], list[list[str]]]:
    """CPU per step beside the steps per second: median process CPU ns per step
    (every thread of the process) and, in brackets, the median cores kept busy
    (CPU seconds per wall second). AsyncVectorEnv's worker processes are not
    counted, so its figures are only the parent's."""
    header = ["envs", "mode", "batch", *(LIBRARIES[lib][0] for lib in libs)]
    rows = []
    for size in sizes:
        for mode in ("sync", "async"):
            if not any(mode in LIBRARIES[lib][1] for lib in libs):
                continue
            row = [str(size), mode, str(size if mode == "sync" else size // 2)]
            for lib in libs:
                rates, cores = results.get((lib, size, mode)), cpu_use.get((lib, size, mode))
                if not rates:
                    row.append("n/a")
                    continue
                per_step = statistics.median(c / r for c, r in zip(cores, rates, strict=True)) * 1e9
                row.append(f"{per_step:.0f} ns ({statistics.median(cores):.2f})")
            rows.append(row)
    return header, rows


def median(results: dict, lib: str, size: int, mode: str) -> float | None:
    rates = results.get((lib, size, mode))
    return statistics.median(rates) if rates else None


def spread(results: dict) -> tuple[float, float, str]:
    """Median and largest (max - min) / median over all figures, and the figure
    with the largest."""
    spreads = {key: (max(rates) - min(rates)) / statistics.median(rates)
               for key, rates in results.items() if len(rates) > 1}
    if not spreads:
        return 0.0, 0.0, "-"
    lib, size, mode = max(spreads, key=spreads.get)
    return statistics.median(spreads.values()), max(spreads.values()), f"{LIBRARIES[lib][0]}, {size} envs {mode}"


def print_table(header: list[str], rows: list[list[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---:" if i > 1 or i == 0 else ":---" for i in range(len(header))) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


def figures(results: dict, sizes: list[int]) -> list[dict]:
    """The page's figures, steps/s of every repeat: elfpy beside envpool at
    each size and mode (issue 12's goal: 2x), Gymnasium's vector envs beside
    elfpy, and elfpy beside the bare C++ loop (the goal: 0.6 of it)."""
    out = []

    def add(row: str, key: tuple[str, int, str], peer: str | None = None, goal: float | None = None) -> None:
        if key in results:
            out.append(dict(benchmark="engine", row=row, metric="steps/s", unit="", values=results[key],
                            better="higher", peer=peer,
                            reference=None if goal is None else {"label": "issue 12's goal", "ratio": goal}))

    for size in sizes:
        for mode in ("sync", "async"):
            add(f"elfpy, {size} envs {mode}", ("elfpy", size, mode), f"envpool, {size} envs {mode}", 2)
            add(f"envpool, {size} envs {mode}", ("envpool", size, mode))
        for lib in ("gym_numpy", "gym_sync", "gym_async"):
            add(f"{LIBRARIES[lib][0]}, {size} envs", (lib, size, "sync"), f"elfpy, {size} envs sync")
        if ("bare", size, "sync") in results:
            add(f"elfpy, {size} games sync", ("elfpy", size, "sync"), f"bare C++ loop, {size} games", 0.6)
            add(f"bare C++ loop, {size} games", ("bare", size, "sync"))
    return out


def goals(results: dict, sizes: list[int]) -> list[str]:
    lines = []
    for size in sizes:
        for mode in ("sync", "async"):
            ours, base = median(results, "elfpy", size, mode), median(results, "envpool", size, mode)
            if ours is None or base is None:
                continue
            met = "met" if ours >= 2 * base else "NOT met"
            lines.append(f">= 2x envpool, {size} envs {mode}: {ours / base:.2f}x -> {met}")
    if 4096 in sizes:
        numpy_rate = median(results, "gym_numpy", 4096, "sync")
        for mode in ("sync", "async"):
            ours = median(results, "elfpy", 4096, mode)
            if ours is None or numpy_rate is None:
                continue
            met = "met" if ours >= numpy_rate else "NOT met"
            lines.append(f">= gym CartPoleVectorEnv, 4096 envs {mode}: {ours / numpy_rate:.2f}x -> {met}")
        ours, bare = median(results, "elfpy", 4096, "sync"), median(results, "bare", 4096, "sync")
        if ours is not None and bare is not None:
            met = "met" if ours >= 0.6 * bare else "NOT met"
            lines.append(f">= 0.6 of the bare C++ loop, 4096 envs sync: {ours / bare:.2f} -> {met}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+",
                        help="numbers of environments (default: 64 256 1024 4096)")
    parser.add_argument("--repeats", type=int, help="measurements per figure; the median is shown (default 5)")
    parser.add_argument("--seconds", type=float, help="target length of one measurement (default 1.0)")
    parser.add_argument("--threads", type=int, default=usable_cores(),
                        help="worker threads for elfpy and envpool (default: the cores this process may use)")
    parser.add_argument("--libs", nargs="+", default=list(LIBRARIES), choices=list(LIBRARIES),
                        help="libraries to measure (default: all)")
    parser.add_argument("--async_vector_max", type=int, default=256,
                        help="largest size run with gym AsyncVectorEnv (one process per env); n/a beyond")
    parser.add_argument("--quick", action=argparse.BooleanOptionalAction, default=False,
                        help="smoke run: defaults become sizes 64 256, 2 repeats, 0.2 s per measurement")
    parser.add_argument("--markdown", action=argparse.BooleanOptionalAction, default=False,
                        help="print a markdown table")
    parser.add_argument("--json", type=Path, help="also write every measurement to this JSON file")
    report.add_options(parser)
    args = parser.parse_args()
    quick = args.quick
    args.sizes = args.sizes or ([64, 256] if quick else [64, 256, 1024, 4096])
    args.repeats = args.repeats or (2 if quick else 5)
    args.seconds = args.seconds or (0.2 if quick else 1.0)
    if any(size < 2 or size % 2 for size in args.sizes):
        parser.error("sizes must be even numbers >= 2 (async mode uses batch = envs / 2)")
    libs = [lib for lib in LIBRARIES if lib in args.libs]  # fixed column order
    warnings.filterwarnings("ignore")  # gymnasium's float32 casting warnings

    info = machine_info(args.threads)
    plan = []  # (size, mode, batch, lib)
    for size in args.sizes:
        for mode in ("sync", "async"):
            for lib in libs:
                if mode not in LIBRARIES[lib][1]:
                    continue
                if lib == "gym_async" and size > args.async_vector_max:
                    continue
                plan.append((size, mode, size if mode == "sync" else size // 2, lib))

    results: dict[tuple[str, int, str], list[float]] = {}
    batches: dict[tuple[str, int, str], int] = {}
    cpu_use: dict[tuple[str, int, str], list[float]] = {}
    total_start = time.perf_counter()
    for repeat in range(args.repeats):
        for size in args.sizes:
            for mode in ("sync", "async"):
                group = [p for p in plan if p[0] == size and p[1] == mode]
                shift = repeat % len(group) if group else 0
                for _, _, batch, lib in group[shift:] + group[:shift]:
                    key = (lib, size, mode)
                    rate, batches[key], cpu = measure(lib, size, batch, args.threads, args.seconds,
                                                      batches.get(key))
                    results.setdefault(key, []).append(rate)
                    cpu_use.setdefault(key, []).append(cpu)
                    progress = f"[{repeat + 1}/{args.repeats}] {size:5d} envs {mode:5s} {lib:10s}"
                    print(f"{progress} {fmt_rate(rate):>7s} steps/s, cpu {cpu:.2f}", file=sys.stderr, flush=True)

    print(f"CartPole env steps per second (median of {args.repeats}), ratio to envpool at the same size and mode")
    usable = "" if info["usable_cores"] == info["cores"] else f" ({info['usable_cores']} usable)"
    print(f"machine: {info['cpu']}, {info['cores']} cores{usable}; threads: {info['threads']}")
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    print(f"versions: {versions}, elfpy commit {info['commit']} ({info['elfpy_path']})")
    print(f"date: {info['date']}; total time {time.perf_counter() - total_start:.0f} s")
    print(f"command: {info['command']}")
    print()
    print_table(*build_table(results, args.sizes, libs), args.markdown)
    print()
    print("CPU ns per step, process CPU of every thread (median cores kept busy)")
    print_table(*cpu_table(results, cpu_use, args.sizes, libs), args.markdown)
    print()
    if "gym_async" in libs and any(s > args.async_vector_max for s in args.sizes):
        print(f"gym AsyncVectorEnv (one process per env) is n/a above {args.async_vector_max} envs.")
    typical, worst, where = spread(results)
    print(f"spread over the repeats, (max - min) / median: typical {typical:.0%}, largest {worst:.0%} ({where})")
    print(f"load average at start {info['loadavg'][0]:.2f}, at end {os.getloadavg()[0]:.2f} (cores: {info['cores']})")
    for line in goals(results, args.sizes):
        print(line)
    print()
    report.publish(figures(results, args.sizes), args)
    if args.json:
        args.json.write_text(json.dumps({
            "info": info, "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "results": [{"lib": lib, "envs": size, "mode": mode, "batches": batches[(lib, size, mode)],
                         "steps_per_s": rates, "process_cpu_per_wall_s": cpu_use[(lib, size, mode)]}
                        for (lib, size, mode), rates in results.items()],
        }, indent=1))


if __name__ == "__main__":
    main()
