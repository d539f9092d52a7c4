#!/usr/bin/env python
"""CartPole's cost per step at small and large batches: elfpy's GameContext and
make_vector beside PufferLib's native Ocean cartpole, envpool and a bare C++ loop.

Every contender runs the same loop: a batch of N observations in, random
actions drawn in Python (`np.random.randint(0, 2, N)`, one call per batch),
handed back; a step is one row of a batch. Each measurement runs in a fresh
process (so its CPU time is its own) and reports steps per second, CPU ns per
step (the process's CPU time from `time.process_time`, every thread counted)
and wall seconds; for GameContext also the share of batches the engine gave
its worker pool rather than stepping them on the caller (printed per run: a
run that went the other way shows there). Contenders are interleaved within
each repeat (the order rotating), and each figure is the median of --repeats.

  GameContext     elfpy.GameContext("cartpole"), one tag of batch N, --threads
                  engine threads; "GameContext 1 thread" the same on one.
  make_vector     elfpy.make_vector("cartpole", N) (Gymnasium's NEXT_STEP
                  autoreset), fresh arrays returned every step as
                  SyncVectorEnv returns them.
  PufferLib       pufferlib.ocean.cartpole.Cartpole(num_envs=N): PufferLib 3.0's
                  C loop over numpy buffers it owns, stepped in the calling
                  process on one core (float32 physics); with --puffer_python.
  envpool         envpool.make_gymnasium("CartPole-v1", N envs, batch N, --threads).
  bare C++        cpp/bench/bare_cartpole: the registered game stepped by
                  --threads threads (the caller one of them) with no engine
                  and no Python; "bare C++ 1 thread" the caller alone, with no
                  hand-off at all: the limit of the game's double-precision,
                  Gymnasium-exact arithmetic.
With --baseline DIR (a checkout of an older commit whose elfpy/ holds its
built module), GameContext and make_vector are measured from there too, in
the same run ("... (baseline)").

PufferLib 3.0.0 from source (its setup.py downloads raylib and box2d while pip
reads its metadata, so `pip install pufferlib==3.0.0` fails off-line; the
sdist ships the Linux raylib the Ocean games need):
  1. python -m venv --system-site-packages VENV  (it then sees this project's
     numpy 2, gymnasium 1, torch, envpool);
  2. download pufferlib-3.0.0.tar.gz from PyPI (pufferlib, version 3.0.0, its
     source distribution) and unpack it;
  3. inside it, create the empty folders raylib-5.5_webassembly, box2d-web,
     box2d-linux-amd64/include and box2d-linux-amd64/src; in setup.py keep only
     the cartpole binding in `c_extension_paths` (the line after its glob:
     `c_extension_paths = [p for p in c_extension_paths if '/cartpole/' in p]`),
     and where it tests `shutil.which("nvcc")` build the CPU extension instead
     when no CUDA is there;
  4. VENV/bin/pip install Cython psutil rich rich_argparse gym==0.23.1 pyro-ppl
     (with torch held at the venv's version), then
     VENV/bin/pip install --no-deps --no-build-isolation ./pufferlib-3.0.0
     (no deps: PufferLib pins numpy<2 and gymnasium<=0.29.1).
Then pass --puffer_python VENV/bin/python.

    python benchmarks/bench_per_batch.py --puffer_python VENV/bin/python
    python benchmarks/bench_per_batch.py --quick             # smoke run
    python benchmarks/bench_per_batch.py ... --record        # append to benchmarks/results.jsonl
"""

from __future__ import annotations

import os

# BLAS/OpenMP pools must not spin beside the measured threads; set before numpy loads.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402
from bench_engine import bare_binary, usable_cores  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CONTENDERS = ("gc", "gc1", "vector", "puffer", "envpool", "bare", "bare1")
TITLES = {"gc": "GameContext", "gc1": "GameContext 1 thread", "vector": "make_vector", "puffer": "PufferLib native",
          "envpool": "envpool", "bare": "bare C++", "bare1": "bare C++ 1 thread"}


# --- one measurement, in a child process ---------------------------------------


def actions(n: int) -> np.ndarray:
    return np.random.randint(0, 2, n)


def make(contender: str, n: int, threads: int) -> tuple[Callable[[], None], Callable[[], dict] | None]:
    """One batch of `contender`'s loop at N = n, construction and reset done,
    and for GameContext its hand-off counters (`handoffs()`)."""
    if contender in ("gc", "gc1"):
        import elfpy

        gc = elfpy.GameContext("cartpole", num_games=n, num_threads=1 if contender == "gc1" else threads, seed=0)
        gc.add_tag("actor", batch_size=n, inputs=["s", "r", "terminal"], replies=["a"])
        gc.reg_callback("actor", lambda batch: {"a": actions(len(batch))})
        gc.start()
        return gc.run, gc.handoffs
    if contender == "vector":
        import elfpy

        env = elfpy.make_vector("cartpole", n, num_threads=threads, seed=0)
        env.reset()
        return lambda: env.step(actions(n)), None
    if contender == "puffer":
        from pufferlib.ocean.cartpole import cartpole

        env = cartpole.Cartpole(num_envs=n)
        env.reset(seed=0)
        return lambda: env.step(actions(n)), None
    if contender == "envpool":
        import envpool

        env = envpool.make_gymnasium("CartPole-v1", num_envs=n, batch_size=n, num_threads=threads, seed=0)
        env.reset()
        return lambda: env.step(actions(n)), None
    raise ValueError(f"unknown contender {contender!r}")


def child(contender: str, n: int, threads: int, seconds: float) -> None:
    """Prints {"steps_per_s", "cpu_ns_per_step", "wall_s"} of one timed run, and
    for GameContext "pool_share": the share of the timed batches
    the engine gave its worker pool (the rest it stepped on the caller)."""
    warnings.filterwarnings("ignore")
    step, handoffs = make(contender, n, threads)
    start = time.perf_counter()
    warm = 0
    while warm < 20 or time.perf_counter() - start < 0.15 * seconds:
        step()
        warm += 1
    batches = max(20, int(seconds * warm / (time.perf_counter() - start)))
    before = handoffs() if handoffs else None
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(batches):
        step()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steps = batches * n
    result = {"steps_per_s": steps / wall, "cpu_ns_per_step": cpu / steps * 1e9, "wall_s": wall}
    if handoffs:
        result["pool_share"] = (handoffs()["batches_given_to_pool"] - before["batches_given_to_pool"]) / batches
    print(json.dumps(result))


def measure(contender: str, n: int, threads: int, seconds: float, python: str, path: str | None) -> dict:
    if contender in ("bare", "bare1"):
        threads = 1 if contender == "bare1" else threads
        out = subprocess.run([str(bare_binary()), "--games", str(n), "--threads", str(threads),
                              "--milliseconds", str(int(seconds * 1000))], check=True, capture_output=True,
                             text=True).stdout.split()
        rate, cores = float(out[1]), float(out[3])
        return {"steps_per_s": rate, "cpu_ns_per_step": cores / rate * 1e9, "wall_s": seconds}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (path, os.environ.get("PYTHONPATH")) if p)}
    # In a scratch folder: PufferLib's import writes a resources/ folder where it runs.
    with tempfile.TemporaryDirectory(prefix="bench_per_batch_") as scratch:
        out = subprocess.run([python, "-W", "ignore", __file__, "--child", contender, str(n), str(threads),
                              str(seconds)], check=True, capture_output=True, text=True, env=env, cwd=scratch)
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- the run -----------------------------------------------------------------------


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 4096])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one measurement")
    parser.add_argument("--threads", type=int, default=usable_cores(), help="engine and envpool threads")
    parser.add_argument("--contenders", nargs="+", default=list(CONTENDERS), choices=CONTENDERS)
    parser.add_argument("--puffer_python", help="the Python of a venv with PufferLib 3.0 (see above)")
    parser.add_argument("--baseline", type=Path, help="a checkout whose elfpy (built) is measured as the baseline")
    parser.add_argument("--quick", action="store_true", help="sizes 64 256, 1 repeat, 0.3 s")
    report.add_options(parser)
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeats, args.seconds = [64, 256], 1, 0.3
    if args.puffer_python is None and "puffer" in args.contenders:
        args.contenders.remove("puffer")
        print("PufferLib left out: no --puffer_python", file=sys.stderr)
    here = str(REPO)
    # (contender, label, python, PYTHONPATH)
    plan = [(c, TITLES[c], args.puffer_python if c == "puffer" else sys.executable, here) for c in args.contenders]
    if args.baseline:
        plan += [(c, TITLES[c] + " (baseline)", sys.executable, str(args.baseline.resolve()))
                 for c in ("gc", "gc1", "vector") if c in args.contenders]
    results: dict[tuple[str, int], list[dict]] = {}
    load_start = os.getloadavg()[0]
    for repeat in range(args.repeats):
        for n in args.sizes:
            shift = repeat % len(plan)
            for contender, label, python, path in plan[shift:] + plan[:shift]:
                m = measure(contender, n, args.threads, args.seconds, python, path)
                results.setdefault((label, n), []).append(m)
                pool = f"  {m['pool_share']:.0%} of batches to the pool" if "pool_share" in m else ""
                print(f"[{repeat + 1}/{args.repeats}] {n:5d} {label:32s} {m['steps_per_s'] / 1e6:7.2f}M steps/s "
                      f"{m['cpu_ns_per_step']:6.0f} ns CPU/step{pool}", file=sys.stderr, flush=True)

    def med(label: str, n: int, field: str) -> float | None:
        runs = results.get((label, n))
        return statistics.median(r[field] for r in runs) if runs else None

    labels = [label for _, label, _, _ in plan]
    puffer = TITLES["puffer"]
    print(f"CartPole, random actions; median of {args.repeats}, {args.threads} threads; load average "
          f"{load_start:.1f} at start, {os.getloadavg()[0]:.1f} at end; commit {report.current_commit()}")
    print(f"{'':32s}" + "".join(f"{n:>34d}" for n in args.sizes))
    print(f"{'':32s}" + "".join(f"{'steps/s  CPU ns/step  vs Puffer':>34s}" for _ in args.sizes))
    for label in labels:
        cells = []
        for n in args.sizes:
            rate, cpu = med(label, n, "steps_per_s"), med(label, n, "cpu_ns_per_step")
            p_rate, p_cpu = med(puffer, n, "steps_per_s"), med(puffer, n, "cpu_ns_per_step")
            vs = f"{rate / p_rate:.2f}x {cpu / p_cpu:.2f}x" if p_rate and label != puffer else ""
            cells.append(f"{rate / 1e6:7.2f}M {cpu:8.0f} {vs:>13s}")
        print(f"{label:32s}" + "".join(f"{c:>34s}" for c in cells))
    gc = TITLES["gc"]
    for n in args.sizes:
        vector, base = med(TITLES["vector"], n, "steps_per_s"), med(gc, n, "steps_per_s")
        if vector and base:
            print(f"make_vector / GameContext at {n}: {vector / base:.2f}x (goal 0.9x)")

    figures = []
    for label in labels:
        for n in args.sizes:
            runs = results[(label, n)]
            peer = None if label == puffer or puffer not in labels else f"{puffer}, {n} envs"
            for metric, field, unit, better in (("steps/s", "steps_per_s", "", "higher"),
                                                ("CPU per step", "cpu_ns_per_step", "ns", "lower")):
                figures.append(dict(benchmark="engine", row=f"{label}, {n} envs", metric=metric, unit=unit,
                                    values=[round(r[field], 1 if unit else -3) for r in runs], better=better,
                                    peer=peer))
    report.publish(figures, args)


if __name__ == "__main__":
    main()
