"""Searches settings with Optuna: ``python -m rlpytorch.tune --config X --space lr=loguniform:1e-4:1e-2 --trials 20``.

Each trial is one ``python -m rlpytorch.train`` run in ``<out>/trial<N>/``,
started as ``rlpytorch.launch`` starts a run, with the settings Optuna's TPE
sampler chose and the arguments after ``--``. The run evaluates every
``--eval_every`` frames (train's periodic evaluation); each evaluation's
``--metric`` (a column of its ``progress.csv``) is reported to Optuna as it
lands, and a trial whose curve falls below the median of the earlier trials'
at the same frames is pruned (``MedianPruner``, after ``--startup_trials``
trials and from ``--prune_after`` frames on): its run is stopped (SIGTERM: it saves, then ends). A trial's value is
its last evaluation, or with ``--value mean`` the mean of its evaluations (the
area under its curve: learning fast counts too).

The study lives in ``<out>/study.db`` (SQLite), so the same command goes on
with an interrupted search: ``--trials`` counts the study's trials (complete,
pruned, or failed by their run), and a trial cut off by the interruption is
tried again with the same settings in its own folder, from its last
checkpoint (``launch.retry_args``). A larger ``--trials`` extends a study; a
different space, metric or training command is refused, naming the study.
One search at a time works in a folder. At the end it prints the best trial
and draws ``<out>/study.png``: the trials' curves and their values in order.

A setting of the space is NAME=KIND:ARGS, KIND one of ``uniform:LOW:HIGH``,
``loguniform:LOW:HIGH``, ``int:LOW:HIGH`` or ``choice:A,B,...``; given by
``--space`` (several times), or by ``--space_file`` (YAML: ``lr:
loguniform:1e-4:1e-2``, a setting a line).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import fcntl
import io
import json
import math
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from elfpy.files import atomic_path, stop_signals_handled

from . import launch
from .core.args_provider import ArgsError
from .core.plain_yaml import load_yaml

__all__ = ["Dimension", "Search", "main", "parse_dimension", "read_points"]

STUDY_FILE = "study.db"
POLL_SECONDS = 0.5  # how often a trial's progress.csv is read for new evaluations
KINDS = ("uniform", "loguniform", "int", "choice")


class SearchError(Exception):
    """A search that cannot go on as asked: one line on the command line."""


class RunFailed(Exception):
    """A trial's run ended in error (its exit code, or no evaluation): the search goes on."""


@dataclass(frozen=True)
class Dimension:
    """One setting of the space and the values it may take."""

    name: str
    kind: str
    low: float = 0.0
    high: float = 0.0
    choices: tuple[str, ...] = ()

    def suggest(self, trial: Any) -> str:
        """The trial's value, as the command line gives it."""
        if self.kind == "choice":
            return str(trial.suggest_categorical(self.name, self.choices))
        if self.kind == "int":
            return str(trial.suggest_int(self.name, int(self.low), int(self.high)))
        return repr(trial.suggest_float(self.name, self.low, self.high, log=self.kind == "loguniform"))


def parse_dimension(text: str) -> Dimension:
    """'lr=loguniform:1e-4:1e-2' -> Dimension('lr', 'loguniform', 1e-4, 1e-2); bad text: ArgumentTypeError."""
    name, _, spec = text.partition("=")
    kind, _, rest = spec.partition(":")
    usage = (f"{text!r} is not NAME=KIND:ARGS with KIND uniform:LOW:HIGH, loguniform:LOW:HIGH, int:LOW:HIGH "
             "or choice:A,B,...")
    name, kind = name.strip().lstrip("-"), kind.strip()
    if not name or kind not in KINDS:
        raise argparse.ArgumentTypeError(usage)
    if kind == "choice":
        choices = tuple(dict.fromkeys(v.strip() for v in rest.split(",") if v.strip()))
        if not choices:
            raise argparse.ArgumentTypeError(usage)
        return Dimension(name, kind, choices=choices)
    try:
        low, high = (int(v) if kind == "int" else float(v) for v in rest.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(usage) from None
    if not low < high or (kind == "loguniform" and low <= 0) or not math.isfinite(high - low):
        raise argparse.ArgumentTypeError(f"{text!r}: needs LOW < HIGH, finite (and LOW > 0 for loguniform)")
    return Dimension(name, kind, float(low), float(high))


def read_space_file(path: Path) -> list[Dimension]:
    """The settings of a YAML file of NAME: KIND:ARGS lines."""
    try:
        values = load_yaml(path.read_text())
    except OSError as error:
        raise SearchError(f"--space_file {path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise SearchError(f"--space_file {path}: not valid YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(values, dict) or not values:
        raise SearchError(f"--space_file {path}: expected a mapping of settings to KIND:ARGS")
    try:
        return [parse_dimension(f"{name}={spec}") for name, spec in values.items()]
    except argparse.ArgumentTypeError as error:
        raise SearchError(f"--space_file {path}: {error}") from None


def read_points(csv_path: Path, metric: str, every: int) -> list[tuple[int, float]]:
    """The evaluations in a run's ``progress.csv`` so far: (step, value) for each
    row with ``metric``, the step being the multiple of ``every`` whose crossing
    made the evaluation (so that trials of any batch size meet at the same steps).
    A last line still without its newline is not read."""
    try:
        text = csv_path.read_text()
    except FileNotFoundError:
        return []
    rows = csv.DictReader(io.StringIO(text[: text.rfind("\n") + 1]))
    return [(int(float(row["frames"])) // every * every, float(row[metric]))
            for row in rows if row.get(metric) not in ("", None)]


@dataclass
class Search:
    """The search a command line asks for: what each trial runs and how it is judged."""

    out: Path
    space: list[Dimension]
    entry: list[str]  # after the interpreter: -m MODULE and the arguments common to every trial
    metric: str = "eval_return_mean"
    direction: str = "maximize"
    value: str = "last"
    eval_every: int = 10_000
    seed: int = 0
    bases: Mapping[str, str] = field(default_factory=dict)  # of options settings (launch.option_bases)

    def setup(self) -> dict[str, Any]:
        """What a study remembers of its search, and a later command must repeat."""
        return {"space": [asdict(d) for d in self.space], "entry": self.entry, "metric": self.metric,
                "direction": self.direction, "value": self.value, "seed": self.seed}

    def objective(self, trial: Any) -> float:
        """One trial: its run, its evaluations reported as they land; its last value."""
        folder = Path(trial.user_attrs.get("folder") or self.out / f"trial{trial.number}")
        trial.set_user_attr("folder", str(folder))
        run = launch.Run(folder, self.seed, tuple((d.name, d.suggest(trial)) for d in self.space))
        print(f"started {describe(trial)} in {folder}", flush=True)
        with launch.open_console(run) as console:
            process = launch.start_run(run, self.entry, "cpu", self.bases, console)
            try:
                points = self._follow(trial, process, folder / "progress.csv")
            except BaseException:  # pruned, or the search stopped: the run stops too (and saves)
                launch.stop_run(process)
                raise
        if process.returncode != 0:
            return self._failed(trial, f"exit code {process.returncode} (see {folder / 'console.txt'})")
        if not points:
            return self._failed(trial, f"no {self.metric} in {folder / 'progress.csv'} (is --eval_every below "
                                       "the run's frames?)")
        return points[-1][1] if self.value == "last" else sum(value for _, value in points) / len(points)

    def _follow(self, trial: Any, process: Any, csv_path: Path) -> list[tuple[int, float]]:
        """Report the run's evaluations until it ends; prune it when Optuna says so."""
        import optuna

        reported = 0
        while True:
            ended = process.poll() is not None  # before reading: the rows of an ended run are all there
            points = read_points(csv_path, self.metric, self.eval_every)
            for step, value in points[reported:]:
                trial.report(value, step)
                if trial.should_prune():
                    raise optuna.TrialPruned(f"at {step:,} frames: {self.metric} {value:.4g}")
            reported = len(points)
            if ended:
                return points
            time.sleep(POLL_SECONDS)

    @staticmethod
    def _failed(trial: Any, why: str) -> float:
        trial.set_user_attr("error", why)  # a run that failed: counted, never tried again
        raise RunFailed(f"trial {trial.number}: {why}")


def counted(trial: Any) -> bool:
    """Whether a trial counts toward ``--trials``: it ended, by itself or pruned, and
    not because the search was cut off."""
    from optuna.trial import TrialState

    return trial.state in (TrialState.COMPLETE, TrialState.PRUNED) or (
        trial.state == TrialState.FAIL and "error" in trial.user_attrs)


def retry_interrupted(study: Any) -> int:
    """Queue once more each trial the last search's interruption cut off (failed
    without an error of its run, or still running when its search was killed): the
    same settings, in the same folder. The number queued."""
    from optuna.trial import TrialState

    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        study.tell(trial.number, state=TrialState.FAIL)  # only this search works here (the lock): it is stale
    trials = study.get_trials(deepcopy=False)
    retried = {trial.user_attrs.get("retry_of") for trial in trials}
    cut_off = [t for t in trials if t.state == TrialState.FAIL and not counted(t) and t.number not in retried]
    for trial in cut_off:
        study.enqueue_trial(trial.params, user_attrs={**trial.user_attrs, "retry_of": trial.number})
    return len(cut_off)


@contextlib.contextmanager
def folder_locked(out: Path) -> Iterator[None]:
    """Hold ``<out>/tune.lock``: a second search in the same folder is refused, not mixed in."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "tune.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SearchError(f"another rlpytorch.tune is searching in {out}") from None
        yield


def open_study(search: Search, startup_trials: int, prune_after: int | None) -> Any:
    """The study of ``<out>/study.db``, new or continued; a stored study of another search is refused."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # the search prints its own line per trial
    pruner = (optuna.pruners.NopPruner() if prune_after is None
              else optuna.pruners.MedianPruner(n_startup_trials=startup_trials, n_warmup_steps=prune_after))
    study = optuna.create_study(storage=f"sqlite:///{search.out.absolute() / STUDY_FILE}", study_name="tune",
                                direction=search.direction, pruner=pruner, load_if_exists=True)
    setup = json.loads(json.dumps(search.setup()))
    stored = study.user_attrs.get("setup")
    if stored is None:
        study.set_user_attr("setup", setup)
    elif stored != setup:
        changed = ", ".join(key for key in setup if setup[key] != stored.get(key))
        raise SearchError(f"{search.out / STUDY_FILE} holds a search of another {changed}: repeat its command "
                          f"({stored}) to go on, or choose another --out")
    # Seeded anew by the trials so far, so that a continued search does not draw its first trials again.
    study.sampler = optuna.samplers.TPESampler(n_startup_trials=startup_trials,
                                               seed=search.seed + len(study.trials))
    return study


def best_trial(study: Any) -> Any:
    """The best complete trial, None before the first."""
    try:
        return study.best_trial
    except ValueError:
        return None


def describe(trial: Any) -> str:
    settings = " ".join(f"{name}={value:.4g}" if isinstance(value, float) else f"{name}={value}"
                        for name, value in trial.params.items())
    return f"trial {trial.number} ({settings})"


def trial_line(study: Any, trial: Any, total: int) -> str:
    """What the search prints as a trial ends: its state, value and time, the count, the best so far."""
    from optuna.trial import TrialState

    seconds = trial.duration.total_seconds() if trial.duration else 0.0
    done = sum(counted(t) for t in study.get_trials(deepcopy=False))
    if trial.state == TrialState.COMPLETE:
        what = f"{trial.value:.4g}"
    elif "error" in trial.user_attrs:
        what = f"failed: {trial.user_attrs['error']}"
    elif trial.intermediate_values:
        step = max(trial.intermediate_values)
        what = f"{trial.state.name.lower()} at {step:,} frames ({trial.intermediate_values[step]:.4g})"
    else:
        what = trial.state.name.lower()
    line = f"[{done}/{total}] {describe(trial)}: {what} after {seconds:.0f}s"
    best = best_trial(study)
    return line + (f"; best: trial {best.number} ({best.value:.4g})" if best else "")


def draw_study(study: Any, path: Path, metric: str, value: str) -> None:
    """Every trial's curve of evaluations (pruned ones grey, the best bold) and each trial's value in order."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    from optuna.trial import TrialState

    trials = [t for t in study.get_trials(deepcopy=False) if t.intermediate_values]
    best = getattr(best_trial(study), "number", None)
    fig, (curves, values) = plt.subplots(1, 2, figsize=(11, 4.5))
    for trial in trials:
        steps = sorted(trial.intermediate_values)
        ys = [trial.intermediate_values[s] for s in steps]
        if trial.number == best:
            curves.plot(steps, ys, color="C3", linewidth=2.5, label=describe(trial), zorder=3)
        elif trial.state == TrialState.COMPLETE:
            curves.plot(steps, ys, color="C0", alpha=0.6)
        else:
            curves.plot(steps, ys, color="grey", alpha=0.5, linestyle="--", marker="x")  # one point: a mark
    curves.set_xlabel("frames")
    curves.set_ylabel(metric)
    curves.set_title("evaluations (grey dashed: pruned or stopped)")
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    values.scatter([t.number for t in complete], [t.value for t in complete], color="C0", label="complete")
    stopped = [(t.number, t.intermediate_values[max(t.intermediate_values)]) for t in trials if t not in complete]
    values.scatter([n for n, _ in stopped], [v for _, v in stopped], color="grey", marker="x",
                   label="pruned or stopped (last evaluation)")
    running = [(t.number, t.value) for t in sorted(complete, key=lambda t: t.number)]
    if running:
        pick = max if study.direction.name == "MAXIMIZE" else min
        best_so_far = [pick(v for _, v in running[: i + 1]) for i in range(len(running))]
        values.step([n for n, _ in running], best_so_far, where="post", color="C3", label="best so far")
    values.set_xlabel("trial")
    values.set_ylabel(f"value ({value} {metric})")
    for ax in (curves, values):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp)
    plt.close(fig)


def run_search(search: Search, trials: int, startup_trials: int = 5, prune_after: int | None = 0) -> Any:
    """Run the study of ``search`` until it counts ``trials`` trials, pruning from
    ``prune_after`` frames on (None: never); the study."""
    with folder_locked(search.out):
        study = open_study(search, startup_trials, prune_after)
        retried = retry_interrupted(study)
        left = max(0, trials - sum(counted(t) for t in study.get_trials(deepcopy=False)))
        print(f"study {search.out / STUDY_FILE}: {len(study.trials) - retried} trials so far, {left} to run"
              + (f" ({retried} cut off, tried again first)" if retried else ""), flush=True)

        # SIGTERM as Ctrl-C: the trial's run stops and saves, the trial is tried again next time
        with stop_signals_handled(launch.stop_once()):
            study.optimize(search.objective, n_trials=left, catch=(RunFailed,),
                           callbacks=[lambda study, trial: print(trial_line(study, trial, trials), flush=True)])
        if any(t.intermediate_values for t in study.get_trials(deepcopy=False)):
            draw_study(study, search.out / "study.png", search.metric, search.value)
    return study


def report_best(study: Any, search: Search) -> None:
    best = best_trial(study)
    if best is None:
        print("no trial completed", flush=True)
        return
    print(f"best: {describe(best)}: {search.value} {search.metric} {best.value:.4g}, in "
          f"{best.user_attrs['folder']}", flush=True)
    print(f"figure: {search.out / 'study.png'}", flush=True)


def tune_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rlpytorch.tune", description=__doc__.splitlines()[0],
                                     epilog="Arguments after -- go to every trial's run unchanged.",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--config", default="", help="config file every trial starts from (YAML or JSON)")
    parser.add_argument("--space", action="append", default=[], type=parse_dimension, metavar="NAME=KIND:ARGS",
                        help="a setting to search: uniform:LOW:HIGH, loguniform:LOW:HIGH, int:LOW:HIGH, choice:A,B")
    parser.add_argument("--space_file", type=Path, help="YAML file of settings to search (NAME: KIND:ARGS)")
    parser.add_argument("--trials", type=int, default=20, help="trials of the study, those of earlier searches "
                                                               "included")
    parser.add_argument("--eval_every", type=int, default=10_000,
                        help="frames between two evaluations of a trial, each reported to the pruner")
    parser.add_argument("--metric", default="eval_return_mean", help="the progress.csv column a trial is judged by")
    parser.add_argument("--direction", default="maximize", choices=("maximize", "minimize"),
                        help="whether a larger value of --metric is better or a smaller")
    parser.add_argument("--value", default="last", choices=("last", "mean"),
                        help="a trial's value: its last evaluation, or the mean of its evaluations")
    parser.add_argument("--startup_trials", type=int, default=5,
                        help="trials drawn at random and never pruned before TPE and the pruner decide")
    parser.add_argument("--prune", action=argparse.BooleanOptionalAction, default=True,
                        help="stop a trial whose evaluations fall below the median of earlier trials'")
    parser.add_argument("--prune_after", type=int, default=0,
                        help="frames before which no trial is pruned (early evaluations may say little)")
    parser.add_argument("--seed", type=int, default=0, help="every trial's training seed, and the sampler's")
    parser.add_argument("--out", type=Path, default=Path("runs/tune"), help="folder of the study and its trials")
    parser.add_argument("--entry", default="rlpytorch.train", help="module each trial executes")
    return parser


def main(argv: Sequence[str] | None = None) -> Any:
    """Search as ``argv`` says; the Optuna study."""
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = tune_parser()
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    try:
        import matplotlib  # noqa: F401  (study.png)
        import optuna  # noqa: F401
    except ImportError as error:
        parser.error(f"the search needs {error.name}: pip install 'elf-platform[tune]'")
    if args.eval_every < 1 or min(args.trials, args.startup_trials, args.prune_after) < 0:
        parser.error("--eval_every must be >= 1, --trials, --startup_trials and --prune_after >= 0")
    try:
        space = args.space + (read_space_file(args.space_file) if args.space_file else [])
        if not space or len({d.name for d in space}) != len(space):
            parser.error("give the settings to search, each once: --space NAME=KIND:ARGS or --space_file")
        dotted = {d.name.partition(".")[0] for d in space if "." in d.name}
        search = Search(
            out=args.out, space=space, metric=args.metric, direction=args.direction, value=args.value,
            eval_every=args.eval_every,
            seed=args.seed, bases=launch.option_bases(dotted, args.config, passthrough),
            entry=["-m", args.entry, *(["--config", args.config] if args.config else []), *passthrough,
                   "--eval_every", str(args.eval_every)],  # last: the pruner's steps need this one
        )
        study = run_search(search, args.trials, args.startup_trials, args.prune_after if args.prune else None)
    except (SearchError, ArgsError) as error:
        parser.exit(1, f"{parser.prog}: error: {error}\n")
    except KeyboardInterrupt:
        parser.exit(130, f"interrupted: the same command goes on with the search in {args.out}\n")
    report_best(study, search)
    return study


if __name__ == "__main__":
    main()
