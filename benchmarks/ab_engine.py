"""Interleaved before/after runs of bench_engine.py for two builds of the engine.

Each build is a compiled module (elfpy/_elf*.so, any file name); both run with this
checkout's Python side (a copy of elfpy/ per build, in a temporary folder).
The runs alternate A, B, A, B, ... (each a separate bench_engine.py process
with the bare C++ loop beside elfpy), so both builds see the same load, and
the medians over all runs are printed per build, with the bare loop's and the
ratio elfpy / bare.

    python benchmarks/ab_engine.py OLD.so NEW.so --pairs 8
    python benchmarks/ab_engine.py OLD.so NEW.so --pairs 8 -- --sizes 1024 4096 --seconds 0.5

Arguments after `--` go to bench_engine.py (default: --sizes 4096 --libs
elfpy bare --repeats 2 --seconds 0.5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent / "bench_engine.py"
ELFPY = BENCH.parent.parent / "elfpy"
DEFAULT_ARGS = ["--sizes", "4096", "--libs", "elfpy", "bare", "--repeats", "2", "--seconds", "0.5"]


def package_with(module: Path, root: Path) -> Path:
    """A copy of this checkout's elfpy/ under `root`, with `module` as its _elf."""
    target = root / "elfpy"
    shutil.copytree(ELFPY, target, ignore=shutil.ignore_patterns("_elf*.so", "__pycache__"))
    shutil.copy2(module, target / ("_elf" + sysconfig.get_config_var("EXT_SUFFIX")))
    return root


def run_once(path: Path, bench_args: list[str], out: Path) -> list[dict]:
    """One bench_engine.py process with elfpy imported from `path`: its measurements."""
    env = dict(os.environ, PYTHONPATH=str(path))
    done = subprocess.run([sys.executable, str(BENCH), *bench_args, "--json", str(out)], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_engine.py failed with {path}:\n{done.stderr}")
    return json.loads(out.read_text())["results"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", type=Path, help="the module before (an _elf*.so)")
    parser.add_argument("new", type=Path, help="the module after")
    parser.add_argument("--pairs", type=int, default=8, help="A/B pairs of bench_engine.py runs")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    bench_args = argv[split + 1:] or DEFAULT_ARGS
    runs: dict[tuple[str, str, int, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        builds = {name: package_with(module.resolve(), Path(tmp) / name)
                  for name, module in (("old", args.old), ("new", args.new))}
        for pair in range(args.pairs):
            for name, path in builds.items():
                for result in run_once(path, bench_args, Path(tmp) / "run.json"):
                    key = (name, result["lib"], result["envs"], result["mode"])
                    runs.setdefault(key, []).extend(result["steps_per_s"])
            print(f"pair {pair + 1}/{args.pairs} done", file=sys.stderr)
    print("build  lib    envs  mode   median steps/s  (measurements)")
    for (name, lib, envs, mode), rates in sorted(runs.items(), key=lambda kv: (kv[0][1:], kv[0][0] != "old")):
        print(f"{name:<6} {lib:<6} {envs:>5} {mode:<6} {statistics.median(rates) / 1e6:10.2f}M  ({len(rates)})")
    for name in ("old", "new"):
        for (build, lib, envs, mode), rates in sorted(runs.items()):
            bare = runs.get((name, "bare", envs, mode))
            if build == name and lib == "elfpy" and bare:
                ratio = statistics.median(rates) / statistics.median(bare)
                print(f"{name}: elfpy / bare at {envs} {mode}: {ratio:.3f}")


if __name__ == "__main__":
    main()
