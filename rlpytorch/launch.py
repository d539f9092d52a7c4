"""Runs a grid of settings and seeds: ``python -m rlpytorch.launch --config X --seeds 0-9 --set lr=1e-3,2e-3``.

Each run is ``python -m rlpytorch.train`` in a folder of its own,
``<out>/<setting>/seed<N>/`` (the layout ``rlpytorch.plot`` groups by), with
the run's own resolved configuration, logs and checkpoints, and its console
output in ``console.txt``. Runs are queued on a standard process pool
(``concurrent.futures``) of ``--jobs`` slots; with ``--devices cuda:0,cuda:1``
each slot owns one device, so runs share GPUs round-robin. A run that
finished leaves ``done`` in its folder and is skipped when the same launch is
started again, so an interrupted sweep resumes where it stopped; a failed run
is tried again: from its last checkpoint (``--resume``) when it wrote one, else
afresh, its earlier files moved into ``attempt<N>/`` (a run never overwrites
another's files). Arguments after ``--`` go to every run unchanged.

A setting named ``NAME.KEY`` varies one key of an options setting written
'k=v,k=v' (``--set game_options.army_shaping=0,0.05``): each run gets
``--NAME`` with the base's keys (the ``--NAME`` after ``--``, else the config
file's) and its own value of KEY, which wins over the base's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import queue
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from elfpy.files import write_text_atomically

from .args_provider import read_config_file
from .run_dir import LAST_CHECKPOINT, RUN_FILES, holds_run

__all__ = ["Run", "main", "parse_seeds", "parse_sets", "plan_runs"]

DONE_MARKER = "done"


@dataclass(frozen=True)
class Run:
    """One run of the grid: its folder and the train arguments it adds."""

    folder: Path
    seed: int
    settings: tuple[tuple[str, str], ...] = field(default=())

    def train_args(self, option_bases: Mapping[str, str] | None = None) -> list[str]:
        """The run's arguments; ``NAME.KEY`` settings join ``option_bases[NAME]`` as key=value."""
        args = ["--seed", str(self.seed), "--save_dir", str(self.folder)]
        options: dict[str, list[str]] = {}
        for name, value in self.settings:
            setting, dot, key = name.partition(".")
            if dot:
                options.setdefault(setting, [(option_bases or {}).get(setting, "")]).append(f"{key}={value}")
            else:
                args += [f"--{name}", value]
        for setting, items in options.items():
            args += [f"--{setting}", ",".join(filter(None, items))]
        return args

    @property
    def done(self) -> bool:
        return (self.folder / DONE_MARKER).exists()


def parse_seeds(text: str) -> list[int]:
    """'0-9' -> 0..9; '1,3,5' -> those; '2' -> [2]."""
    seeds: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        first, sep, last = part.partition("-")
        seeds += list(range(int(first), int(last) + 1)) if sep else [int(first)]
    if not seeds:
        raise ValueError(f"--seeds {text!r} names no seed")
    return seeds


def parse_sets(items: Sequence[str]) -> list[tuple[str, list[str]]]:
    """['lr=1e-3,2e-3', 'T=6'] -> [('lr', ['1e-3', '2e-3']), ('T', ['6'])]."""
    parsed = []
    for item in items:
        name, sep, values = item.partition("=")
        choices = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not name.strip() or not choices:
            raise ValueError(f"--set {item!r} is not name=value[,value...]")
        parsed.append((name.strip().lstrip("-"), choices))
    return parsed


def setting_folder(settings: Sequence[tuple[str, str]]) -> str:
    """A readable folder name for one combination, e.g. 'lr=1e-3_T=6' ('default' for none)."""
    named = (f"{name.partition('.')[2] or name}={value}" for name, value in settings)
    return "_".join(named).replace("/", "-") or "default"


def plan_runs(out: Path, seeds: Sequence[int], sets: Sequence[tuple[str, list[str]]]) -> list[Run]:
    """Every combination of the ``--set`` values, each for every seed."""
    names = [name for name, _ in sets]
    runs = []
    for values in itertools.product(*(choices for _, choices in sets)):
        settings = tuple(zip(names, values, strict=True))
        for seed in seeds:
            runs.append(Run(out / setting_folder(settings) / f"seed{seed}", seed, settings))
    return runs


def option_bases(names: Iterable[str], config: str, passthrough: Sequence[str]) -> dict[str, str]:
    """For each options setting in ``names``: its last value after ``--``, else the config file's, else ''."""
    from_config = read_config_file(config) if config else {}
    bases = {}
    for name in names:
        flag, value = f"--{name}", str(from_config.get(name, ""))
        for i, arg in enumerate(passthrough):
            if arg == flag and i + 1 < len(passthrough):
                value = passthrough[i + 1]
            elif arg.startswith(flag + "="):
                value = arg[len(flag) + 1:]
        bases[name] = value
    return bases


def execute(run: Run, base_cmd: Sequence[str], devices: queue.Queue, bases: Mapping[str, str]) -> int:
    """Runs one training process on a free device slot; marks it done on success."""
    device = devices.get()
    try:
        run.folder.mkdir(parents=True, exist_ok=True)
        cmd = [*base_cmd, *run.train_args(bases), *retry_args(run.folder)]
        env = dict(os.environ)
        if device.startswith("cuda"):
            index = device.partition(":")[2] or "0"
            env["CUDA_VISIBLE_DEVICES"] = index
            cmd += ["--device", "cuda"]
        write_text_atomically(run.folder / "launch.json", json.dumps({"command": cmd, "device": device}, indent=1))
        with open(run.folder / "console.txt", "w") as console:
            code = subprocess.run(cmd, stdout=console, stderr=subprocess.STDOUT, env=env).returncode
        if code == 0:
            write_text_atomically(run.folder / DONE_MARKER, "")
        return code
    finally:
        devices.put(device)


def retry_args(folder: Path) -> list[str]:
    """What a run tried again adds: ``--resume`` from its checkpoint; without one,
    nothing, once the files of the earlier attempt are moved into ``attempt<N>/``."""
    if (folder / LAST_CHECKPOINT).exists():
        return ["--resume", str(folder)]
    if holds_run(folder):
        attempt = next(folder / f"attempt{n}" for n in itertools.count(1) if not (folder / f"attempt{n}").exists())
        attempt.mkdir()
        for name in RUN_FILES:
            if (folder / name).exists():
                (folder / name).rename(attempt / name)
    return []


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="", help="config file every run starts from (YAML or JSON)")
    parser.add_argument("--seeds", default="0", help="seeds, e.g. 0-9 or 0,3,7")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2",
                        help="a setting and the values to try; several --set give their product")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once")
    parser.add_argument("--devices", default="cpu",
                        help="comma-separated devices the job slots cycle over, e.g. cuda:0,cuda:1")
    parser.add_argument("--out", type=Path, default=Path("runs/sweep"), help="folder of the sweep")
    parser.add_argument("--entry", default="rlpytorch.train", help="module each run executes")
    args = parser.parse_args(own)
    if args.jobs < 1:
        parser.error("--jobs must be >= 1")

    sets = parse_sets(args.set)
    runs = plan_runs(args.out, parse_seeds(args.seeds), sets)
    bases = option_bases({name.partition(".")[0] for name, _ in sets if "." in name}, args.config, passthrough)
    todo = [run for run in runs if not run.done]
    base_cmd = [sys.executable, "-m", args.entry, *(["--config", args.config] if args.config else []), *passthrough]
    devices: queue.Queue = queue.Queue()
    names = [d.strip() for d in args.devices.split(",") if d.strip()]
    for slot in range(args.jobs):
        devices.put(names[slot % len(names)])
    print(f"{len(runs)} runs in {args.out}: {len(runs) - len(todo)} done already, {len(todo)} to run "
          f"on {args.jobs} slot(s)", flush=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # threads only wait on the runs' processes
        codes = list(pool.map(lambda run: execute(run, base_cmd, devices, bases), todo))
    failed = [run for run, code in zip(todo, codes, strict=True) if code != 0]
    for run in failed:
        print(f"failed: {run.folder} (see {run.folder / 'console.txt'})", flush=True)
    print(f"{len(todo) - len(failed)} of {len(todo)} runs finished, {len(failed)} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
