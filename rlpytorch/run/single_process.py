"""``SingleProcessRun``: the training loop, engine and learner in one process."""

from __future__ import annotations

import contextlib
import functools
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from elfpy.files import FolderError, deferred_signals, stop_signals_handled, writing_into

from ..core import distributed
from ..core.args_provider import ArgsError, Configurable, at_least, setting
from ..core.settings import progress_setting
from ..core.stats import StatsLogger, history_mark
from ..learners.trainer import Trainer
from .resume import random_states, set_random_states

__all__ = ["RunSummary", "SingleProcessRun", "progress_bar", "window_frames"]


def window_frames(window: Any) -> int:
    """New frames in a ``[T, B]`` train window: ``(T - 1) * B``, since a window's
    first row repeats the previous window's last."""
    T, B = np.asarray(window["terminal"]).shape[:2]
    return (T - 1) * B


def _ask_to_stop(summary: RunSummary, number: int) -> None:
    """A stop signal while training: the run stops after the batch at hand (a
    ``KeyboardInterrupt`` raised anywhere could leave a lock of a library
    held); a second one interrupts it at once."""
    if summary.interrupted:
        raise KeyboardInterrupt
    summary.interrupted = True


def progress_bar(shown: bool, **options: Any) -> tqdm:
    """A tqdm bar (on stderr), drawn only when ``shown`` and both stdout and stderr
    are terminals: in a log file its redraws (carriage returns, no newline) would
    run into the lines printed on stdout, which are the progress there."""
    on_terminal = all(getattr(stream, "isatty", lambda: False)() for stream in (sys.stdout, sys.stderr))
    return tqdm(disable=not (shown and on_terminal), **options)


@dataclass
class RunSummary:
    """What a finished (or interrupted) run did."""

    frames: int
    updates: int
    seconds: float
    mean_return: float
    interrupted: bool = False
    target_reached_at: float | None = None  # seconds, when --stop_at_return was met
    target_reached_frames: int | None = None
    returns: tuple[float, ...] = ()  # the returns of the last episodes, up to 100, oldest first (mean_return's)

    @property
    def fps(self) -> float:
        return self.frames / self.seconds if self.seconds > 0 else math.nan


@dataclass(eq=False)
class SingleProcessRun(Configurable):
    """Drives ``context.run()`` until the frame budget (or target return) is reached.

    Shows frames, FPS and mean return on a tqdm bar (``progress_bar``; at each
    stats line and at the end the bar shows that line's frames and mean return,
    and it closes at the frames run, 100% when the budget ended the run), logs
    one stats line every ``log_every`` frames, and saves checkpoints into ``save_dir`` (weights, step,
    ``run_config``, the effective configuration, and the training state that
    ``--resume`` continues from: ``rlpytorch.run.resume``) every ``save_every``
    frames and at the end. With ``restart_games_at_save`` the games start
    afresh after each periodic checkpoint, from ``fresh_context(k)`` (the
    context of the run's k-th start of the games, its tags added), as a run
    resumed from that checkpoint does. Ctrl-C (SIGINT) or SIGTERM stops the
    run after the batch at hand (a second one at once), stops the engine,
    saves, and returns a summary marked ``interrupted``; one that arrives
    during a checkpoint takes effect once it is written, and those arriving
    while the run stops and saves are noted only. Any other exception stops
    the engine, writes ``last.pt`` at the frame reached where the training
    state is sound (the error came from the games, not from inside an update,
    and the checkpoint can be written), so that ``--resume`` continues from
    there, and propagates. Each checkpoint keeps where the logs stood
    (``history``: ``rlpytorch.core.stats.cut_history``).
    """

    trainer: Trainer
    logger: StatsLogger | None = None
    run_config: Mapping[str, Any] | None = None
    save_dir: str | Path | None = None  # the run's folder (None: no checkpoints)
    num_frames: int = setting(1_000_000, "stop after this many environment frames", bounds=at_least(1))
    stop_at_return: float = setting(math.inf, "stop once the mean return of the last 100 episodes reaches this")
    log_every: int = setting(50_000, "frames between two stats lines", bounds=at_least(1))
    save_every: int = setting(250_000, "frames between two checkpoints (0: only the last)", bounds=at_least(0))
    progress: bool = progress_setting()
    eval_every: int = setting(0, "frames between two evaluations during training, on games of their own "
                                 "(0: none; see --eval_episodes); the best model is kept as best.pt",
                                     bounds=at_least(0))
    periodic_eval: Callable[[Any], Any] | None = None  # plays evaluation episodes with a model: an EvalResult
    restart_games_at_save: bool = setting(
        False, "start the games afresh (new episodes, the next seed of the run's stream) after every periodic "
               "checkpoint, as --resume from it does: with --deterministic a run resumed from any checkpoint "
               "then prints exactly the stats lines of the unbroken run")
    fresh_context: Callable[[int], Any] | None = None  # k -> the context of the games' k-th start, with its tags
    engine_starts: int = 0  # which start of the games the context given to run() is (0: the run's first)

    def __post_init__(self) -> None:
        self.logger = self.logger or StatsLogger(echo=False)
        self.run_config = dict(self.run_config or {})
        self.save_dir = Path(self.save_dir) if self.save_dir else None
        self.frames_learned = 0  # frames of the windows the learner trained on
        self._agreed_at = 0  # the update after which the ranks last agreed whether to stop
        self._frames_all_ranks = 0
        self._resumed: dict[str, Any] | None = None  # the runner's part of a loaded training state
        self._updating = False  # inside the trainer's update: an error there leaves its state unsound
        self.until = self.num_frames  # where the run at hand stops (run's ``until``)
        if self.restart_games_at_save and self.fresh_context is None:
            raise ValueError("restart_games_at_save needs fresh_context, which makes the games' next context")

    def run(self, context: Any, until: int | None = None) -> RunSummary:
        """Register the trainer's callbacks on ``context``, start it, train until
        ``until`` frames (default ``num_frames``), stop it. ``num_frames`` stays
        the horizon of the learning-rate schedule (or ``until``, when beyond it)."""
        self.until = self.num_frames if until is None else until
        self._gc = context
        self._register(context)
        return self.loop(lambda: self._gc.start(), lambda: self._gc.run(), lambda: self._gc.stop())

    def _register(self, context: Any) -> None:
        context.reg_callback("actor", self.trainer.actor)
        context.reg_callback("train", self._train)

    def next_context(self) -> Any:
        """The context of the games' next start in the run's seed stream, for a
        later ``run`` (or a restart): new episodes, which the trainer knows of."""
        if self.fresh_context is None:
            raise ValueError("a second start of the games needs fresh_context, which makes the games' next context")
        self.engine_starts += 1
        self.trainer.games_restarted()
        return self.fresh_context(self.engine_starts)

    def _restart_games(self) -> None:
        """Stop the games and start the next context of the run's seed stream."""
        self._gc.stop()
        self._gc = self.next_context()
        self._register(self._gc)
        self._gc.start()

    def _train(self, window: Any) -> None:
        """The trainer's train callback; every window is learned from here."""
        self.frames_learned += window_frames(window)
        self._updating = True
        self.trainer.train(window)
        self._updating = False  # (not on an error: the update may be half made)

    def loop(self, start: Any, step: Any, stop: Any) -> RunSummary:
        """The loop itself, over ``start()``, ``step()`` (one batch) and ``stop()``."""
        trainer = self.trainer
        trainer.total_frames = max(self.num_frames, self.until)
        resumed = self._resumed or {"marks": {"log": 0, "save": 0, "eval": 0}, "best_eval": -math.inf, "elapsed": 0.0}
        self._start_time = time.perf_counter() - resumed["elapsed"]
        now = time.perf_counter()
        self._marks = {**resumed["marks"], "bar": now, "fps": (trainer.frames, now)}
        self._best_eval = resumed["best_eval"]
        summary = RunSummary(0, 0, 0.0, math.nan)
        self._bar = progress_bar(self.progress, total=self.until, initial=trainer.frames, unit="frame",
                                 unit_scale=True)
        try:
            start()
        except ValueError as error:  # the engine refuses tags its games cannot fill (a batch above their seats)
            self._bar.close()
            raise ArgsError(f"the games refused the run's settings: {error}") from error
        with stop_signals_handled(lambda number: setattr(summary, "interrupted", True)):  # while it stops
            failure = None
            try:
                with stop_signals_handled(functools.partial(_ask_to_stop, summary)):  # while it trains
                    while not summary.interrupted and not self._finished(summary):
                        step()
                        self._poll()
                        self._after_step(summary)
            except KeyboardInterrupt:
                summary.interrupted = True
            except Exception as error:
                failure = error
            finally:
                stop()
                self._show_progress()  # the frames and mean return of the final stats line
                self._bar.close()
            if failure is not None:
                self._save_on_the_way_out()
                raise failure
            self._finish_run()
        summary.frames, summary.updates = trainer.frames, trainer.updates
        summary.seconds = time.perf_counter() - self._start_time
        # a later run() on the next context goes on from here (Training.learn, called again)
        self._resumed = {"marks": {key: self._marks[key] for key in ("log", "save", "eval")},
                         "best_eval": self._best_eval, "elapsed": summary.seconds}
        summary.mean_return = trainer.episodes.mean_return
        summary.returns = tuple(trainer.episodes.returns)
        return summary

    def _finish_run(self) -> None:
        """The last checkpoint and stats line, unless written at this frame already."""
        frames = self.trainer.frames
        if self._marks["save"] != frames or frames == 0:
            self._save()  # (a checkpoint at this frame was written already, with the state to resume from)
        if frames != self._marks["log"]:
            self._marks["log"] = frames
            self._log()

    def _save_on_the_way_out(self) -> None:
        """After an error: ``last.pt`` at the frame reached, unless the state is
        unsound (an update broke off, or the learner's state is lost) or written
        already; a save that fails too (a full disk) leaves the last checkpoint."""
        if self.save_dir is None or self._updating or self._marks["save"] == self.trainer.frames:
            return
        with contextlib.suppress(FolderError):
            state = self.training_state()
            if state is not None:
                self._save(state=state)

    def _finished(self, summary: RunSummary) -> bool:
        """Whether the budget or target is reached; with several ranks
        (torchrun), whether any rank's is, agreed after each update."""
        done = self.trainer.frames >= self.until or summary.target_reached_at is not None
        if not distributed.is_distributed():
            return done
        if self.trainer.updates == self._agreed_at:  # no update since the last agreement
            return False
        self._agreed_at = self.trainer.updates
        done, self._frames_all_ranks = distributed.agree_to_stop(done, self.trainer.frames, self.trainer.learner_on)
        return done

    def _after_step(self, summary: RunSummary) -> None:
        frames = self.trainer.frames
        now = time.perf_counter()
        mean_return = self.trainer.episodes.mean_return
        if math.isfinite(mean_return) and mean_return >= self.stop_at_return:  # an overflowed return reaches nothing
            summary.target_reached_at = now - self._start_time
            summary.target_reached_frames = frames
        if now - self._marks["bar"] > 0.5:
            self._marks["bar"] = now
            self._show_progress()
        if frames - self._marks["log"] >= self.log_every:
            self._marks["log"] = frames
            self._log()
        # At each multiple of eval_every (not eval_every after the last one, which drifts)
        every = self.eval_every
        if every and self.periodic_eval and frames // every > self._marks["eval"] // every:
            self._marks["eval"] = frames
            self._evaluate()
        if self.save_every and frames - self._marks["save"] >= self.save_every:
            with deferred_signals():  # a stop waits until the checkpoint is written and the games run again
                self._periodic_save(f"model_{frames}.pt")
                if self.restart_games_at_save:
                    self._restart_games()

    def _show_progress(self) -> None:
        """The bar at the frames run so far, with the mean return of the last 100
        episodes (the stats line's ``R``)."""
        self._bar.set_postfix(R=f"{self.trainer.episodes.mean_return:.1f}", refresh=False)
        self._bar.update(self.trainer.frames - self._bar.n)
        self._bar.refresh()  # (update draws at most every tqdm's mininterval)

    def _log(self) -> None:
        trainer, now = self.trainer, time.perf_counter()
        last_frames, last_time = self._marks["fps"]
        self._marks["fps"] = (trainer.frames, now)
        fps = (trainer.frames - last_frames) / max(now - last_time, 1e-9)
        record = {
            "frames": float(trainer.frames),
            "updates": float(trainer.updates),
            "fps": fps,
            "time": now - self._start_time,
            **trainer.episodes.summary(),
            **trainer.update_stats.pop(),
            **self._extra_stats(),
        }
        self._show_progress()
        self._write(record)

    def _write(self, record: Mapping[str, float]) -> None:
        """Log ``record``: its line goes above the bar, which is drawn again below it."""
        with tqdm.external_write_mode():
            self.logger.log(record)

    def _evaluate(self) -> None:
        """One evaluation: a record (stdout, CSV, TensorBoard) and, when it is
        the best so far, ``best.pt``. Its time counts in the run's wall time."""
        model = self._current_model()
        result = self.periodic_eval(model)
        record = {"frames": float(self.trainer.frames), "eval_return_mean": result.mean,
                  "eval_return_std": result.std}
        record.update({f"eval_{name}_mean": result.statistic_mean(name) for name in result.statistics})
        self._write(record)
        if result.mean > self._best_eval:
            self._best_eval = result.mean
            if self.save_dir is not None:
                with writing_into(self.save_dir):
                    model.save(self.save_dir / "best.pt", args=self.run_config)

    def _current_model(self) -> Any:
        """The model with the newest weights in this process: the learner."""
        return distributed.unwrap(self.trainer.mi["model"])

    def _poll(self) -> None:
        """Called after every batch; subclasses collect news from other processes."""

    def _extra_stats(self) -> dict[str, float]:
        """Extra values for each stats record: the frames learned from (beside
        ``frames``, those stepped), the trainer's ``run_stats`` (the replay ratio
        achieved) and, with several ranks, all ranks' frames."""
        extra = {"frames_learned": float(self.frames_learned), **self.trainer.run_stats()}
        if distributed.is_distributed():
            extra["frames_all_ranks"] = float(self._frames_all_ranks)
        return extra

    def training_state(self) -> dict[str, Any] | None:
        """What ``--resume`` continues from (``rlpytorch.run.resume``): the trainer's
        state, this loop's marks and the random states of Python, numpy and
        torch. With several ranks (torchrun) rank 0's, which saves: every rank
        resumes from it (``load_training_state``)."""
        marks = {key: self._marks[key] for key in ("log", "save", "eval")}
        runner = {"marks": marks, "best_eval": float(self._best_eval), "frames_learned": self.frames_learned,
                  "elapsed": time.perf_counter() - self._start_time, "engine_starts": self.engine_starts,
                  "frames_all_ranks": self._frames_all_ranks}
        log_dir = self.logger.log_dir
        history = {"frames": self.trainer.frames, "log_bytes": history_mark(log_dir) if log_dir is not None else 0}
        return {"trainer": self.trainer.training_state(), "runner": runner, "random": random_states(),
                "history": history}

    def load_training_state(self, state: Mapping[str, Any]) -> None:
        """Continue from ``state`` (what ``training_state`` returned), with the
        games freshly started: call it last before ``run``, since it restores
        the global random states too. ``engine_starts`` is the caller's (the
        context it gives ``run`` is already the next start's). With several
        ranks every rank loads rank 0's state: the models and optimizers (equal
        on every rank under DDP), counters, episodes and marks; each other rank
        keeps its own random streams (its sampler's, its method's and the global
        ones, seeded from its rank as at the run's start), as its games are its own."""
        trainer_state = state["trainer"]
        if not distributed.is_main():
            own = self.trainer.training_state()
            trainer_state = {**trainer_state, "sampler": own["sampler"], "method": own["method"]}
        self.trainer.load_training_state(trainer_state)
        runner = state["runner"]
        self._resumed = {"marks": dict(runner["marks"]), "best_eval": runner["best_eval"],
                         "elapsed": runner["elapsed"]}
        self.frames_learned = runner["frames_learned"]
        self._frames_all_ranks = int(runner.get("frames_all_ranks", 0))
        if distributed.is_main():
            set_random_states(state["random"])

    def _periodic_save(self, name: str) -> None:
        """The checkpoint ``name`` (and ``last.pt``), its state recording it as
        written; should the write fail, the run still owes it (the final save)."""
        previous, self._marks["save"] = self._marks["save"], self.trainer.frames
        try:
            self._save(name)
        except BaseException:
            self._marks["save"] = previous
            raise

    def _save(self, name: str | None = None, state: Mapping[str, Any] | None = None) -> None:
        """``name`` (if given) and ``last.pt``, with ``state`` (by default the training state now)."""
        if self.save_dir is None:
            return
        model = self.trainer.mi["model"]
        state = state or self.training_state()
        with writing_into(self.save_dir):
            for file in ([name] if name is not None else []) + ["last.pt"]:
                model.save(self.save_dir / file, args=self.run_config, resume=state)
