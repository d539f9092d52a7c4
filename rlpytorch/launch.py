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

Ctrl-C or SIGTERM stops the sweep: each run in flight gets one SIGTERM (each
runs in a session of its own, so a terminal's Ctrl-C reaches it only so, once:
a second signal would stop it unsaved), saves and ends with
``train.INTERRUPTED``; no queued run starts, and the same command resumes
every run that did not finish. A run that ended that way is reported as
stopped, not done and not failed. One sweep at a time runs in an ``--out``
folder (``elfpy.files.lock_folder``): the same command started twice is
refused, naming the process that runs the sweep. A launcher killed outright
(SIGKILL) cannot stop its runs; each notices at once and stops itself the same way
(``rlpytorch.run.launcher_watch``; an ``--entry`` module of one's own calls
its ``watch_launcher()`` to do so).

A setting named ``NAME.KEY`` varies one key of an options setting written
'k=v,k=v' (``--set game_options.army_shaping=0,0.05``): each run gets
``--NAME`` with the base's keys (the ``--NAME`` after ``--``, else the config
file's) and its own value of KEY, which wins over the base's.

While the sweep goes it prints a line per run started and finished (its
folder, exit code and wall time) with the count done so far and failed, and
on a terminal a bar over the runs.

``--backend ray`` runs the same grid as Ray tasks, each with
``--cpus_per_run`` CPUs and ``--gpus_per_run`` GPUs (Ray picks the node and
sets its visible GPUs), on the cluster at ``--ray_address`` (else
``RAY_ADDRESS``, else a Ray started on this machine). The runs' folders must be
on a file system every node sees; resuming, retrying and the done markers are
as above. Stopped or killed, a Ray sweep's runs save and end as the pool's do
(a stopped launcher cancels its tasks and waits for their runs to save), and
a Ray the launcher started on this machine ends with it, however it ends
(``rlpytorch.run.ray_session``). Ray is optional (``pip install
'elf-platform[ray]'``); only this backend imports it.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tqdm import tqdm

from elfpy.files import lock_folder, stop_signals_handled, write_text_atomically

from .core.args_provider import read_config_file
from .run.launcher_watch import LAUNCHER_PID
from .run.ray_session import RUNS_OUTLIVE_THEIR_WORKER, ray_session
from .run.run_dir import LAST_CHECKPOINT, RUN_FILES, holds_run
from .training import INTERRUPTED, command_line

__all__ = ["Run", "main", "parse_seeds", "parse_sets", "plan_runs"]

DONE_MARKER = "done"
RAY_WAIT_SLICE_S = 0.5  # the longest a wait blocks stop signals and Ray's cancels


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


class Progress:
    """What a sweep prints while it goes: a line per run started and finished,
    with the count of runs done (failures counted) and in flight, and the time
    left at the sweep's pace so far; on a terminal also a bar over the runs.
    Runs finish in any thread; the lines never mix."""

    def __init__(self, out: Path, total: int) -> None:
        self.out, self.total = out, total
        self.finished = self.failed = self.running = 0
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._bar = tqdm(total=total, unit="run", disable=not sys.stdout.isatty())

    def started(self, run: Run, where: str) -> None:
        with self._lock:
            self.running += 1
        self._say(f"started {self._name(run)} on {where}")

    def ended(self, run: Run, code: int, seconds: float, where: str = "") -> None:
        with self._lock:
            self.finished += 1
            self.failed += code not in (0, INTERRUPTED)
            self.running -= 1
            self._bar.update(1)
            elapsed = time.monotonic() - self._start
            left = elapsed / self.finished * (self.total - self.finished)  # at the pace so far, jobs in parallel
            count = (f"[{self.finished}/{self.total} done, {self.failed} failed, {self.running} in flight, "
                     f"about {tqdm.format_interval(left)} left]")
        on = f" on {where}" if where else ""
        how = "stopped by a signal, saved" if code == INTERRUPTED else f"exit code {code}"
        self._say(f"{count} {self._name(run)}: {how} after {tqdm.format_interval(seconds)}{on}")

    def close(self) -> None:
        self._bar.close()

    def _name(self, run: Run) -> str:
        return run.folder.relative_to(self.out).as_posix()

    def _say(self, line: str) -> None:
        with self._lock:
            tqdm.write(line)  # above the bar, when there is one
            sys.stdout.flush()


class LiveRuns:
    """The local pool's training processes in flight, so that a stopped sweep
    stops each of them once and starts no more."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: set[subprocess.Popen] = set()
        self.stopping = False

    def start(self, begin: Callable[[], subprocess.Popen]) -> subprocess.Popen | None:
        """``begin()``'s process, tracked; None (nothing started) once the sweep stops."""
        with self._lock:
            if self.stopping:
                return None
            process = begin()
            self._processes.add(process)
            return process

    def ended(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.discard(process)

    def stop_all(self) -> None:
        """SIGTERM to each run in flight (it saves and ends); no run starts after this."""
        with self._lock:
            self.stopping = True
            for process in self._processes:
                process.terminate()


def execute(run: Run, entry: Sequence[str], devices: queue.Queue, bases: Mapping[str, str],
            progress: Progress, live: LiveRuns) -> int:
    """Runs one training process on a free device slot of the local pool
    (``INTERRUPTED`` without starting it once the sweep stops)."""
    device = devices.get()
    try:
        if live.stopping:
            return INTERRUPTED
        progress.started(run, device)
        code, seconds = train_run(run, entry, device, bases, live)
        progress.ended(run, code, seconds)
        return code
    finally:
        devices.put(device)


def train_run(run: Run, entry: Sequence[str], device: str, bases: Mapping[str, str],
              live: LiveRuns | None = None) -> tuple[int, float]:
    """Runs the run's training process to its end and marks it done on success;
    its exit code and wall seconds (``INTERRUPTED``, unstarted, once ``live``'s
    sweep stops). Interrupted, it stops the process (which saves) first."""
    live = live or LiveRuns()
    start = time.perf_counter()
    with open_console(run) as console:
        process = live.start(lambda: start_run(run, entry, device, bases, console))
        if process is None:
            return INTERRUPTED, 0.0
        try:
            code = wait_interruptibly(process)
        except BaseException:
            stop_run(process)
            raise
        finally:
            live.ended(process)
    finish_run(run, code)
    return code, time.perf_counter() - start


def wait_interruptibly(process: subprocess.Popen) -> int:
    """``process.wait()`` in slices: a Ray task's cancel (an exception Python raises
    between two of its steps, never inside a blocking call) reaches the task."""
    while True:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return process.wait(timeout=RAY_WAIT_SLICE_S)


def finish_run(run: Run, code: int) -> None:
    """Mark a run that trained its budget (exit code 0) done: the same sweep skips it."""
    if code == 0:
        write_text_atomically(run.folder / DONE_MARKER, "")


def open_console(run: Run) -> IO[Any]:
    """The run's ``console.txt``, afresh (its folder made if new)."""
    run.folder.mkdir(parents=True, exist_ok=True)
    return open(run.folder / "console.txt", "w")


def start_run(run: Run, entry: Sequence[str], device: str, bases: Mapping[str, str],
              console: IO[Any]) -> subprocess.Popen:
    """Starts ``python <entry> <the run's arguments>`` (this interpreter; as a run
    tried again: ``retry_args``), its output into ``console``, and records the
    command in ``launch.json``. A ``cuda:N`` device makes GPU N the visible one;
    a bare ``cuda`` keeps the visible GPUs (those Ray chose)."""
    cmd = [sys.executable, *entry, *run.train_args(bases), *retry_args(run.folder)]
    env = {**os.environ, LAUNCHER_PID: str(os.getpid())}  # the run ends, saved, if this process dies
    if device.startswith("cuda"):
        index = device.partition(":")[2]
        if index:
            env["CUDA_VISIBLE_DEVICES"] = index
        cmd += ["--device", "cuda"]
    write_text_atomically(run.folder / "launch.json", json.dumps({"command": cmd, "device": device}, indent=1))
    # A session of its own: a terminal's Ctrl-C reaches the run only through stop_run, once.
    return subprocess.Popen(cmd, stdout=console, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def stop_run(process: subprocess.Popen) -> None:
    """Stop a training process as Ctrl-C would (SIGTERM: it saves, then ends) and wait for it."""
    process.terminate()
    process.wait()


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


def run_on_pool(todo: Sequence[Run], entry: Sequence[str], bases: Mapping[str, str], args: argparse.Namespace,
                progress: Progress) -> list[int]:
    """The runs on ``--jobs`` local slots, each owning a device of ``--devices``; their exit codes."""
    devices: queue.Queue = queue.Queue()
    names = [d.strip() for d in args.devices.split(",") if d.strip()]
    for slot in range(args.jobs):
        devices.put(names[slot % len(names)])
    live = LiveRuns()
    pool = ThreadPoolExecutor(max_workers=args.jobs)  # threads only wait on the runs' processes
    try:
        return list(pool.map(lambda run: execute(run, entry, devices, bases, progress, live), todo))
    except BaseException:
        live.stop_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # the stopped runs save and end first


def ray_task(run: Run, entry: Sequence[str], device: str, bases: Mapping[str, str]) -> tuple[int, float, str]:
    """One run as a Ray task, on the node Ray chose: exit code, wall seconds, node."""
    return (*train_run(run, entry, device, bases), platform.node())


def run_on_ray(ray: Any, todo: Sequence[Run], entry: Sequence[str], bases: Mapping[str, str],
               args: argparse.Namespace, progress: Progress) -> list[int]:
    """The runs as Ray tasks of ``--cpus_per_run`` CPUs and ``--gpus_per_run`` GPUs (Ray
    connected: ``ray_session``); their exit codes (-1: the task itself failed).
    Interrupted, it cancels the tasks and waits until they end: a cancelled
    task's run gets SIGTERM (``train_run``), saves and ends."""
    task = ray.remote(num_cpus=args.cpus_per_run, num_gpus=args.gpus_per_run,
                      runtime_env=RUNS_OUTLIVE_THEIR_WORKER)(ray_task)
    device = "cuda" if args.gpus_per_run > 0 else "cpu"
    pending = {task.remote(run, entry, device, bases): run for run in todo}
    for run in todo:
        progress.started(run, "a Ray task (it runs once Ray places it)")
    codes = {}
    try:
        while pending:
            # A wait that returns now and then: Python runs a stop signal's handler between calls only.
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=RAY_WAIT_SLICE_S)
            for ref in ready:
                run = pending.pop(ref)
                try:
                    codes[run], seconds, node = ray.get(ref)
                except ray.exceptions.RayError as error:  # the task, not the training, failed: named in one line
                    codes[run], seconds, node = -1, 0.0, f"(task failed: {str(error).splitlines()[0]})"
                progress.ended(run, codes[run], seconds, node)
    finally:
        for ref in pending:
            ray.cancel(ref)
        if pending:  # a stop signal that comes meanwhile is only noted (stop_once)
            ray.wait(list(pending), num_returns=len(pending))
    return [codes[run] for run in todo]


def import_ray(parser: argparse.ArgumentParser) -> Any:
    try:
        import ray
    except ImportError:
        parser.error("--backend ray needs the ray package: pip install 'elf-platform[ray]'")
    return ray


def launch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rlpytorch.launch", description=__doc__.splitlines()[0],
                                     epilog="Arguments after -- go to every run unchanged.",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--config", default="", help="config file every run starts from (YAML or JSON)")
    parser.add_argument("--seeds", default="0", help="seeds, e.g. 0-9 or 0,3,7")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2",
                        help="a setting and the values to try; several --set give their product")
    parser.add_argument("--out", type=Path, default=Path("runs/sweep"), help="folder of the sweep")
    parser.add_argument("--entry", default="rlpytorch.train", help="module each run executes")
    parser.add_argument("--backend", default="local", choices=("local", "ray"),
                        help="where runs go: a pool of processes on this machine, or Ray tasks on a cluster")
    local = parser.add_argument_group("local backend")
    local.add_argument("--jobs", type=int, default=1, help="runs at once")
    local.add_argument("--devices", default="cpu",
                       help="comma-separated devices the job slots cycle over, e.g. cuda:0,cuda:1")
    ray = parser.add_argument_group("ray backend")
    ray.add_argument("--cpus_per_run", type=float, default=1, help="CPUs Ray reserves for each run")
    ray.add_argument("--gpus_per_run", type=float, default=0, help="GPUs Ray reserves for each run (>0: --device cuda)")
    ray.add_argument("--ray_address", default="",
                     help="the Ray cluster to join (empty: RAY_ADDRESS, else a Ray started on this machine)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = launch_parser()
    args = parser.parse_args(own)
    if args.jobs < 1:
        parser.error("--jobs must be >= 1")
    ray = import_ray(parser) if args.backend == "ray" else None

    sets = parse_sets(args.set)
    out = args.out.absolute() if ray else args.out  # Ray's workers may start in another folder
    runs = plan_runs(out, parse_seeds(args.seeds), sets)
    bases = option_bases({name.partition(".")[0] for name, _ in sets if "." in name}, args.config, passthrough)
    sweep_lock = lock_folder(out, "--out")  # one sweep at a time in a folder (its runs lock their own)
    todo = [run for run in runs if not run.done]
    entry = ["-m", args.entry, *(["--config", args.config] if args.config else []), *passthrough]
    where = (f"Ray tasks of {args.cpus_per_run:g} CPU(s), {args.gpus_per_run:g} GPU(s)" if ray
             else f"{args.jobs} slot(s)")
    print(f"{len(runs)} runs in {args.out}: {len(runs) - len(todo)} done already, {len(todo)} to run on {where}",
          flush=True)
    progress = Progress(out, len(todo))
    try:
        # Ray's session outside the handlers: ray.init puts a handler of Ray's own on SIGTERM.
        with ray_session(ray, args.ray_address) if ray else contextlib.nullcontext():
            with stop_signals_handled(stop_once()):
                codes = (run_on_ray(ray, todo, entry, bases, args, progress) if ray
                         else run_on_pool(todo, entry, bases, args, progress))
    except KeyboardInterrupt:
        parser.exit(INTERRUPTED, f"interrupted: the runs in flight saved; the same command resumes the sweep "
                                 f"in {args.out}\n")
    finally:
        progress.close()
        sweep_lock.release()
    failed = [run for run, code in zip(todo, codes, strict=True) if code not in (0, INTERRUPTED)]
    stopped = [run for run, code in zip(todo, codes, strict=True) if code == INTERRUPTED]
    for run in failed:
        print(f"failed: {run.folder} (see {run.folder / 'console.txt'})", flush=True)
    print(f"{len(todo) - len(failed) - len(stopped)} of {len(todo)} runs finished, {len(failed)} failed"
          + (f", {len(stopped)} stopped by a signal (the same command resumes them)" if stopped else ""), flush=True)
    return 1 if failed else INTERRUPTED if stopped else 0


def stop_once() -> Callable[[int], None]:
    """A stop signal's handler: the first SIGINT or SIGTERM interrupts the sweep
    (its runs stop and save); those that come while it stops are noted only."""
    stopping: list[int] = []

    def interrupt(number: int) -> None:
        if not stopping:
            stopping.append(number)
            raise KeyboardInterrupt
    return interrupt


if __name__ == "__main__":
    sys.exit(command_line(main, "python -m rlpytorch.launch"))
