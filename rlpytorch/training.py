"""Train an agent, e.g. ``python -m rlpytorch.train --game cartpole``, or from Python::

    import rlpytorch

    config = rlpytorch.config("cartpole_fast", seed=3)     # a shipped config, a setting changed
    run = rlpytorch.train(config)                          # the run: folder, summary, evaluation, models
    print(run.eval.mean, run.last_model)

    with rlpytorch.Training(rlpytorch.config(method="ppo", game="cartpole", save_dir="")) as training:
        training.learn(20_000)                              # step by step
        training.learn(20_000)
        print(training.evaluate())

Every setting comes from the component that uses it (``--help`` lists them by
component); ``--config file.yaml`` sets many at once and the command line
overrides it. ``rlpytorch.config`` fills the same settings into a dataclass
(``dataclasses.replace`` changes one), which is what the command line builds
too. The run prints a line naming its folder (``--verbose``: its effective
configuration too), trains with a progress bar and a stats line per interval
(``rlpytorch.run.screen``), and finally evaluates the greedy policy.
Everything goes into the run's folder (``--save_dir``, see
``rlpytorch.run.run_dir``): configuration, command line, versions, logs and
checkpoints (which carry the configuration).

``--method`` picks the recipe (``rlpytorch.recipes``): the family of methods
with its components, tags, model checks and trainer: ActorCritic and PPO on
windows; DQN, R2D2 and DRQN on a value replay; DDPG, TD3 and SAC on Box
actions and MADDPG on every seat of a game, off-policy; AlphaZero's self-play
(``--method alphazero --config go9``).

Under ``torchrun`` (see ``rlpytorch.core.distributed``) each rank runs its own
games and actor, gradients are averaged over the ranks, and only rank 0
logs, evaluates and saves.

``--resume FOLDER`` continues the run in FOLDER from its ``last.pt`` (or
``--resume FILE`` from that checkpoint): its configuration, with the command
line's settings over it (e.g. a larger ``--num_frames``), and its training
state (``rlpytorch.run.resume`` says what that holds and when it is exact);
from Python, ``rlpytorch.config(resume=FOLDER, num_frames=...)``. A new run
refuses a ``--save_dir`` that already holds a run, and any run a folder that
another process holds (``rlpytorch.run.run_dir``). A resumed run continues one
history: its logs are cut back to the checkpoint's frame first.

From the first line to ``close()``, SIGTERM stops a run as Ctrl-C does: before
the run is built it takes back what it wrote; after, the loop stops at once
(or after the batch at hand) and saves. An error leaves ``last.pt`` where the
state is sound, or else takes the try back; the message says which command
goes on.

The command's exit status: 0 when the run trained its budget; ``INTERRUPTED``
(130, the shell's status for a command Ctrl-C stopped) when a stop signal ended
it early, saved and resumable, so that a script or a launcher can tell the two
apart; 1 for a refused setting, a game or the learner process failing (a
line that names it, e.g. a NaN reward, a hosted game's worker process killed;
an exception in the learner brings the learner's traceback) or a loss or
gradient that turned non-finite (``NonFiniteError``, ``rlpytorch.core.finite``),
each on stderr; 2 for a command line the parser refuses (an unknown option, a
value of the wrong type or out of its setting's range), as argparse's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from elfpy import GameError
from elfpy.files import FolderError, deferred_signals, lock_folder, stop_signals_handled, stops_passed_on

from .core import distributed
from .core.args_provider import (
    ArgsError,
    ArgsProvider,
    Configurable,
    OneLineParser,
    convert_from,
    read_config_file,
    setting,
    settings_record,
)
from .core.devices import check_devices
from .core.finite import NonFiniteError
from .core.game_loader import GameLoader
from .core.stats import cut_history
from .learners.evaluator import EvalResult
from .models.base import CheckpointError
from .recipes import RECIPES
from .run.multi_process import LearnerError
from .run.resume import read_resume_checkpoint, resume_argument, resumed_config
from .run.run_dir import LAST_CHECKPOINT, check_run_dir, holds_run, remover, resolve_run_dir, write_run_files
from .run.screen import Screen, end_lines, start_lines
from .run.single_process import RunSummary

__all__ = ["INTERRUPTED", "PROG", "MethodChoice", "Run", "Training", "chosen_method", "command_line", "components",
           "config", "main", "train"]

PROG = "python -m rlpytorch.train"
INTERRUPTED = 130  # exit status of a run a stop signal ended early (saved): 128 + SIGINT, the shell's convention


@dataclass
class MethodChoice(Configurable):
    """The learning method: it picks the recipe, and so every other setting on offer."""

    method: str = setting("actor_critic", "learning method", choices=tuple(RECIPES))


def components(method: str) -> list[type[Configurable]]:
    """The components of a run with ``method`` (only their settings are offered)."""
    return [MethodChoice, Screen, *RECIPES[method].components()]


def arguments(method: str) -> ArgsProvider:
    """The command line of a run with ``method``."""
    provider = ArgsProvider(components(method), description=__doc__, prog=PROG,
                            epilog=f"The settings above are those of --method {method}; each method has its own:\n"
                                   f"    {PROG} --method ppo --help\n"
                                   f"lists PPO's. Methods: {', '.join(RECIPES)}.")
    provider.parser.add_argument("--resume", default="", metavar="FOLDER_OR_FILE",
                                 help="continue the run in this folder (its last.pt), or from this checkpoint")
    return provider


@functools.cache
def config_class(method: str) -> type:
    """The dataclass of a run's settings with ``method``: one typed field per
    setting (its default the method's suggestion where it makes one), and
    ``resume`` (a run folder or checkpoint to continue; empty: a new run)."""
    name = "".join(part.capitalize() for part in method.split("_")) + "Config"
    cls = arguments(method).settings_class(name, RECIPES[method].run_defaults, extra=[("resume", str, "")])
    cls.__module__ = __name__
    return cls


def config(file: str | Path | None = None, /, **settings: Any) -> Any:
    """The settings of a run, as a dataclass: those of ``file`` (a YAML or JSON
    config, or the name of a shipped one) with ``settings`` over them, the
    defaults elsewhere. ``resume=FOLDER`` starts from that run's configuration
    instead. A name no component declares, or a value of the wrong type, is an
    ``ArgsError`` naming it."""
    argv = ["--config", str(file)] if file is not None else []
    resume = settings.get("resume") or ""
    base = resumed_config(*read_resume_checkpoint(resume)) if resume else {}
    method = settings.get("method") or chosen_method(argv, base)
    if method not in RECIPES:
        raise ArgsError(f"method: {method!r} is not one of {list(RECIPES)}")
    provider = arguments(method)
    values = provider.parse(argv, defaults={**RECIPES[method].run_defaults, **base})
    known = provider.args
    unknown = sorted(set(settings) - set(known) - {"resume"})
    if unknown:
        raise ArgsError(f"unknown settings {unknown} for --method {method}; see `{PROG} --method {method} --help`")
    values.update({name: known[name].convert(value) if name in known else value for name, value in settings.items()})
    return config_class(method)(**values)


def chosen_method(argv: Sequence[str] | None, resumed: Mapping[str, Any] | None = None) -> str:
    """``--method`` from the command line, else from ``--config``, else that of
    the ``resumed`` run's configuration, else the default."""
    method = next(arg for arg in MethodChoice.settings() if arg.name == "method")
    pre = OneLineParser(prog=PROG, add_help=False, allow_abbrev=False)
    pre.add_argument("--method", type=method.read)
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(argv)
    if known.method is not None:
        return known.method
    in_file = read_config_file(known.config).get("method") if known.config is not None else None
    if in_file is not None:
        return convert_from(known.config, method, in_file)
    if (resumed or {}).get("method") is not None:
        return convert_from("the resumed run's configuration", method, resumed["method"])
    return method.default


@dataclass
class Run:
    """A finished (or interrupted) run: what ``rlpytorch.train`` returns."""

    folder: Path | None  # the run's folder (None: nothing was written)
    summary: RunSummary  # frames, updates, seconds, the mean return, whether it was interrupted
    eval: EvalResult | None  # the final evaluation (None: not asked for, interrupted, or not rank 0)
    config: Any  # the effective settings (the config dataclass)
    history: list[dict[str, float]]  # the stats lines' records

    @property
    def last_model(self) -> Path | None:
        """The last checkpoint (weights and training state), if the run has a folder."""
        return self._file("last.pt")

    @property
    def best_model(self) -> Path | None:
        """The best checkpoint by the periodic evaluations (``--eval_every``), if there were any."""
        return self._file("best.pt")

    def _file(self, name: str) -> Path | None:
        return self.folder / name if self.folder is not None and (self.folder / name).is_file() else None


class Training:
    """A run, built and ready to learn: ``learn(frames)`` trains that many more
    frames (as often as wanted; each later call starts the games afresh, as a
    resumed run does), ``evaluate()`` plays the final evaluation, ``close()``
    (or leaving a ``with`` block) releases the games, the logs and the run's
    folder (``elfpy.files.lock_folder``: no other process writes into it until then).

    ``command`` is the command line written into the run's ``run.yaml`` (the
    Python call when not given)."""

    def __init__(self, settings: Any, command: Sequence[str] | None = None) -> None:
        self.config = settings
        resumed = read_resume_checkpoint(settings.resume) if settings.resume else None
        recipe = RECIPES[settings.method]
        with settings_checked():
            provider = arguments(settings.method)
            provider.check(settings)  # before anything is written
            recipe.check_settings(settings)
            check_devices(settings, provider.args.values())
        distributed.init_from_env(recipe.learner_device(settings))
        self.main_rank = distributed.is_main()  # only rank 0 logs, evaluates and saves
        folder = resolve_run_dir(settings.save_dir) if self.main_rank else None
        self.folder = folder.absolute() if folder is not None else None  # what Run reports
        # What the components are built from: the run's own folder, no bar but rank 0's, nothing left to resume.
        # Each rank its own seed (rank 0: the run's), so that ranks play different games.
        config = dataclasses.replace(settings, save_dir=str(folder or ""), resume="",
                                     progress=settings.progress and self.main_rank,
                                     seed=distributed.rank_seed(settings.seed))
        self._settings = config
        record = settings_record(config)  # as the run's files and checkpoints hold it
        # How the end of a stopped run says to go on: the command line it came from, torchrun's included.
        self._resume_program = distributed.relaunch_command(PROG) if command is not None else None
        command = list(command) if command is not None else ["rlpytorch.train(config)"]
        history = resumed[1]["resume"].get("history") if resumed else None

        def announce() -> None:
            if self.folder is not None:
                write_run_files(self.folder, record, command, resumed[0] if resumed else None)
                if history is not None and self.folder.resolve() == resumed[0].parent.resolve():
                    cut_history(self.folder, history["frames"], history["log_bytes"])
            if self.main_rank:
                print("\n".join(start_lines(self.folder, record, config.verbose)), flush=True)

        # Until close(), SIGTERM stops the run as Ctrl-C does (the loop's own handlers stop it
        # after the batch at hand): a run stopped before it trains takes back what it wrote.
        self._held = contextlib.ExitStack()
        self._held.enter_context(stop_signals_handled(_interrupt))
        self._undo = remover(self.folder)  # a try that writes no checkpoint leaves nothing behind
        self._lock = None
        try:
            if self.folder is not None:
                self._lock = lock_folder(self.folder, "--save_dir")
                check_run_dir(self.folder, resumed[0] if resumed else None)
            self._checkpoint_at_start = _checkpoint_mark(self.folder)
            try:
                torch.manual_seed(settings.seed)  # the same initial weights on every rank
                torch.set_num_threads(config.torch_threads)
                with settings_checked():
                    loader = GameLoader.from_config(config)
                    self.session = recipe.start(config, loader, self.folder, resumed, self.main_rank, announce)
            except BaseException as error:
                self._take_back(error)  # so that the same --save_dir works on the next try
                raise
        except BaseException:
            self._release()
            raise

    @property
    def frames(self) -> int:
        """Frames trained so far (a resumed run's included)."""
        return self.session.frames

    @property
    def model(self) -> Any:
        """The model being trained."""
        return self.session.model

    def learn(self, frames: int) -> RunSummary:
        """Train ``frames`` more frames (or until ``--stop_at_return``); Ctrl-C
        stops after the batch at hand, saves, and returns a summary marked interrupted."""
        try:
            with stops_passed_on():  # a stop before the loop stops it at its start: it saves
                summary = self.session.learn(frames)
        except BaseException as error:
            self._take_back(error)
            raise
        for line in end_lines(summary, self.folder, self._resume_program):
            self.session.logger.note(line)
        return summary

    def _take_back(self, error: BaseException) -> None:
        """After ``error``: take back what this try wrote unless it wrote a
        checkpoint, and say in a note on ``error`` which command goes on."""
        if self.folder is None:
            return
        if _checkpoint_mark(self.folder) != self._checkpoint_at_start:
            error.add_note(f"--resume {self.folder} continues the run from its last checkpoint")
            return
        written = holds_run(self.folder)  # else it failed before writing (a refused setting): nothing to say
        with deferred_signals():  # a second Ctrl-C waits until it is done
            self._undo()
        if not written:
            return
        if self._checkpoint_at_start is not None:
            error.add_note(f"--resume {self.folder} continues the run from its last checkpoint (this try's "
                           "configuration and record taken back)")
        elif not self.folder.exists():
            error.add_note(f"nothing of the run was kept: the same command starts it again in {self.folder}")
        else:
            error.add_note(f"{self.folder} could not be taken back: remove it to start the run again")

    def evaluate(self) -> EvalResult | None:
        """The final evaluation (``--eval_at_end``, ``--eval_episodes``, ``--eval_sampler``), on rank 0."""
        if not self.main_rank:
            return None
        result = self.session.evaluate_at_end()
        if result is not None:
            self.session.logger.note(f"{getattr(self._settings, 'eval_sampler', 'greedy')} evaluation: {result}")
        return result

    def close(self) -> None:
        try:
            self.session.close()
        finally:
            self._release()

    def _release(self) -> None:
        """Give up the run's folder and the stop handler."""
        if self._lock is not None:
            self._lock.release()
        self._held.close()

    def __enter__(self) -> Training:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def train(settings: Any, command: Sequence[str] | None = None) -> Run:
    """Train as ``settings`` (``rlpytorch.config(...)``) say, to ``num_frames``; evaluate; return the run."""
    with Training(settings, command) as training:
        summary = training.learn(settings.num_frames - training.frames)
        result = None if summary.interrupted else training.evaluate()
    return Run(training.folder, summary, result, settings, training.session.logger.records)


def main(argv: Sequence[str] | None = None) -> Run:
    """Train as the command line ``argv`` says (``sys.argv[1:]`` when None); returns the run."""
    argv = list(sys.argv[1:] if argv is None else argv)
    base = resumed_config(*read_resume_checkpoint(resume_argument(argv))) if resume_argument(argv) else {}
    method = chosen_method(argv, base)
    values = arguments(method).parse(argv, defaults={**RECIPES[method].run_defaults, **base})
    result = train(config_class(method)(**values), [*PROG.split(), *argv])
    # Under torchrun the DistributedDataParallel model holds the process group.
    # Free it (reference cycles included) before the group is destroyed, so the
    # group's threads are joined now and not during the interpreter's exit,
    # where a gloo group can abort the process (SIGABRT, "terminate called
    # without an active exception"; seen once in CI on a finished run).
    gc.collect()
    distributed.finish()
    return result


@contextlib.contextmanager
def settings_checked() -> Iterator[None]:
    """While the run is built from its settings, a ValueError is a setting
    that the games, the model or the optimizer refused (``--num_games -4``,
    ``--seed -1``, ``--lr nan``, an unknown game): an ``ArgsError``, which the
    command line prints as one line, not a traceback."""
    try:
        yield
    except (ArgsError, CheckpointError):  # already named
        raise
    except ValueError as error:
        raise ArgsError(f"a setting was refused: {error}") from error


def command_line(main: Callable[[Sequence[str] | None], Any], prog: str, argv: Sequence[str] | None = None) -> Any:
    """Run ``main`` for a command line (``argv``, by default ``sys.argv[1:]``)
    and return what it returns: an error in what it was given (an option, a
    config file, a checkpoint), a game or learner process that failed, or a
    training that turned non-finite is one line on stderr and exit status 1."""
    try:
        return main(argv)
    except (ArgsError, CheckpointError, FolderError, GameError, LearnerError, NonFiniteError) as error:
        sys.exit(f"{prog}: error: {'; '.join([str(error), *getattr(error, '__notes__', [])])}")
    except KeyboardInterrupt as error:  # a stop signal outside a run's loop (which saves and returns)
        print(f"{prog}: interrupted" + "".join(f"; {note}" for note in getattr(error, "__notes__", [])),
              file=sys.stderr)
        sys.exit(INTERRUPTED)


def _interrupt(number: int) -> None:
    raise KeyboardInterrupt


def _checkpoint_mark(folder: Path | None) -> tuple[int, int] | None:
    """Which ``last.pt`` is in ``folder`` (None: none): a new one (written whole, then
    moved into place) has another inode and time."""
    try:
        found = (folder / LAST_CHECKPOINT).stat() if folder is not None else None
    except FileNotFoundError:
        return None
    return (found.st_ino, found.st_mtime_ns) if found is not None else None
