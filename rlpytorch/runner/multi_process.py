"""``MultiProcessRun``: the engine and its actor here, the learner in its own process.

Train windows travel to the learner through ``batch_slots`` shared-memory
slots: the ``train`` callback copies a window into a free slot and posts its
index. When every slot is busy (the learner is behind), ``--when_behind``
decides: ``drop`` the window (acting never waits on a gradient step; the
dropped windows are counted) or ``wait`` for a free slot (back-pressure: the
games wait for the learner, and every frame is learned from). Each stats
record gives ``frames`` (stepped) beside ``frames_learned`` (in windows the
learner trained on). Every ``actor_sync_every`` updates the learner copies its weights
into a shared-memory model under a lock and bumps a version number; the actor
callback reloads its copy when the version changed. The learner runs on the
trainer's ``learner_device`` (windows to a GPU through pinned buffers), the
actor here on its ``actor_device``.

Shutdown is the same whatever ends the run (budget, target, Ctrl-C, an
exception here, an exception or death of the learner): the engine stops, the
learner is asked to stop, publishes its final weights and exits, and is
terminated if it does not within ``join_timeout`` seconds. The learner
ignores SIGINT (the terminal's Ctrl-C reaches both processes; this one
decides) and exits if this process disappears.
"""

from __future__ import annotations

import os
import queue
import signal
import time
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.multiprocessing as mp

from ..args_provider import setting
from ..model_base import Model
from ..model_interface import ModelInterface
from ..normalization import normalize_window
from ..prev_inputs import add_final_inputs
from ..trainer import Method, lanes_of
from ..transfer import staging_for
from .single_process import RunSummary, SingleProcessRun, window_frames

__all__ = ["LearnerError", "MultiProcessRun"]


class LearnerError(RuntimeError):
    """The learner process failed; the message carries its traceback or exit code."""


@dataclass(eq=False)
class MultiProcessRun(SingleProcessRun):
    """``SingleProcessRun``'s loop with the learner moved to a separate process."""

    batch_slots: int = setting(4, "shared-memory slots for train windows in flight")
    learner_threads: int = setting(1, "torch threads of the learner process")
    join_timeout: float = setting(30.0, "seconds the learner gets to exit before it is terminated")
    when_behind: str = setting("drop", "when every slot is busy: drop the window (acting never waits) or wait "
                               "for a free slot (the games wait for the learner)", choices=("drop", "wait"))

    def run(self, gc: Any) -> RunSummary:
        """Spawn the learner, run the engine here, stop both however the run ends."""
        if self.restart_games_at_save:
            raise ValueError("--restart_games_at_save (exact resume) runs with --runner single")
        trainer = self.trainer
        context = mp.get_context("spawn")
        self._shared = trainer.mi["model"].clone().cpu().share_memory()
        self._version = context.Value("q", 0)
        self._lock = context.Lock()
        self._stop = context.Event()
        self._queues = {name: context.Queue() for name in ("slots", "full", "free", "news")}
        for i in range(self.batch_slots):
            self._queues["free"].put(i)
        self._slots: dict[str, torch.Tensor] | None = None
        self._seen_version = 0
        self.dropped = 0
        self._learner = context.Process(
            target=_learner_main,
            args=(self._learner_setup(), self._shared, self._version, self._lock, self._stop, self._queues),
            name="rlpytorch-learner",
            daemon=True,
        )
        self._learner.start()
        self._wait_until_ready()
        gc.reg_callback("actor", self._actor)
        gc.reg_callback("train", self._enqueue)
        return self.loop(gc.start, gc.run, lambda: self._shutdown(gc))

    def _wait_until_ready(self) -> None:
        """Block until the learner has built its model and optimizer (or failed)."""
        deadline = time.monotonic() + self.join_timeout + 60.0
        while time.monotonic() < deadline:
            try:
                kind, payload = self._queues["news"].get(timeout=0.1)
            except queue.Empty:
                if not self._learner.is_alive():
                    break
                continue
            if kind == "ready":
                return
            if kind == "error":
                self._stop_learner()
                raise LearnerError(f"learner process failed to start: {payload}")
        self._stop_learner()
        raise LearnerError(f"learner process did not start (exit code {self._learner.exitcode})")

    def _learner_setup(self) -> dict[str, Any]:
        trainer = self.trainer
        return {
            "model": trainer.mi["model"].clone().cpu(),
            "method": trainer.method,
            "mi_settings": trainer.mi.setting_values(),
            "device": str(trainer.learner_on),
            "actor_sync_every": trainer.actor_sync_every,
            "lr_schedule": trainer.lr_schedule,
            "total_frames": self.num_frames,
            "threads": self.learner_threads,
            "parent": os.getpid(),
        }

    def _actor(self, batch: Any) -> dict[str, np.ndarray]:
        if self._version.value != self._seen_version:
            with self._lock:
                self._seen_version = self._version.value
                self.trainer.mi["actor"].load_state_dict(self._shared.state_dict())
        return self.trainer.actor(batch)

    def _enqueue(self, batch: Any) -> None:
        keys = list(batch.keys())
        if self._slots is None:
            self._slots = {
                k: torch.zeros((self.batch_slots, *np.asarray(batch[k]).shape), dtype=_dtype(batch[k])).share_memory_()
                for k in keys
            }
            self._queues["slots"].put(self._slots)
        index = self._free_slot()
        if index is None:
            self.dropped += 1
            return
        size = len(batch)
        for key in keys:
            self._slots[key][index, :, :size].copy_(torch.from_numpy(np.asarray(batch[key])))
        self._queues["full"].put((index, size, self.trainer.frames, window_frames(batch),
                                 lanes_of(batch, self.trainer.seats_per_game)))

    def _free_slot(self) -> int | None:
        """A free slot's index; None (drop) when all are busy, unless ``when_behind``
        is ``wait``: then wait for one, checking that the learner is alive."""
        free = self._queues["free"]
        while True:
            try:
                return free.get(timeout=0.05) if self.when_behind == "wait" else free.get_nowait()
            except queue.Empty:
                if self.when_behind == "drop":
                    return None
                self._poll()  # raises if the learner failed or died

    def _poll(self) -> None:
        """Take the learner's stats; raise if it failed or died."""
        error = self._take_news()
        if error is None and not self._learner.is_alive():
            error = self._take_news(wait=1.0)  # its last report may still be in the pipe
            error = error or f"exited unexpectedly (exit code {self._learner.exitcode})"
        if error is not None:
            raise LearnerError(f"learner process failed: {error}")

    def _take_news(self, wait: float = 0.0) -> str | None:
        """Count the learner's reported updates; return its error report if any."""
        news = self._queues["news"]
        while True:
            try:
                kind, payload = news.get(timeout=wait) if wait else news.get_nowait()
            except queue.Empty:
                return None
            if kind == "error":
                return payload
            if kind != "stats":
                continue
            stats, frames = payload
            self.trainer.update_stats.add(stats)
            self.trainer.updates += 1
            self.frames_learned += frames

    def _current_model(self) -> Any:
        """The actor: the learner's newest weights published to this process."""
        return self.trainer.mi["actor"]

    def training_state(self) -> None:
        """None: the optimizer lives in the learner process, so these
        checkpoints hold weights only and ``--resume`` refuses them."""
        return None

    def _extra_stats(self) -> dict[str, float]:
        return {**super()._extra_stats(), "dropped": float(self.dropped)}

    def _shutdown(self, gc: Any) -> None:
        """Stop the engine, then the learner; adopt its final weights."""
        try:
            gc.stop()
        finally:
            self._stop_learner()
            self._adopt_final_weights()

    def _stop_learner(self) -> None:
        """Ask the learner to stop, keep reading its news, terminate it if it lingers."""
        self._queues["full"].put(None)  # the end mark, after every window handed over
        self._stop.set()
        deadline = time.monotonic() + self.join_timeout
        while self._learner.is_alive() and time.monotonic() < deadline:
            self._take_news()
            self._learner.join(0.05)
        if self._learner.is_alive():
            self._learner.terminate()
            self._learner.join()
        self._take_news()

    def _adopt_final_weights(self) -> None:
        mi = self.trainer.mi
        with self._lock:
            mi["model"].load_state_dict(self._shared.state_dict())
            mi["actor"].load_state_dict(self._shared.state_dict())
        mi["model"].step = mi["actor"].step = self.trainer.updates


def _dtype(array: Any) -> torch.dtype:
    return torch.from_numpy(np.zeros(0, dtype=np.asarray(array).dtype)).dtype


def _learner_main(
    setup: dict[str, Any],
    shared: Model,
    version: Any,
    lock: Any,
    stop: Any,
    queues: dict[str, Any],
) -> None:
    """The learner process: windows from slots -> updates -> shared weights."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _learn(setup, shared, version, lock, stop, queues)
    except Exception:
        queues["news"].put(("error", traceback.format_exc()))
        stop.set()


def _learn(setup: dict[str, Any], shared: Model, version: Any, lock: Any, stop: Any, queues: dict) -> None:
    torch.set_num_threads(setup["threads"])
    device = torch.device(setup["device"])
    mi = ModelInterface(**setup["mi_settings"])
    mi.add_model("model", setup["model"].to(device), optimize=True)
    method: Method = setup["method"]
    staging = staging_for(device)  # pinned buffers on the way to a GPU
    queues["news"].put(("ready", None))
    slots = _wait(queues["slots"], stop, setup["parent"])
    updates = 0
    while slots is not None:
        # Windows come until the parent's end mark (None): the ones handed over
        # before the stop are still learned from (at most batch_slots updates).
        item = _wait(queues["full"], None, setup["parent"])
        if item is None:
            break
        index, size, frames, new_frames, ids = item
        window = {k: v[index, :, :size] for k, v in slots.items()}
        window = staging.to_device(window) if staging else {k: v.to(device) for k, v in window.items()}
        add_final_inputs(mi["model"], window)  # from the raw rewards, before normalize_window scales them
        normalize_window(mi["model"], window, ids)
        if setup["lr_schedule"] == "linear" and setup["total_frames"]:
            mi.scale_lr(max(0.0, 1.0 - frames / setup["total_frames"]))
        stats = method.update(mi, window)
        queues["free"].put(index)
        queues["news"].put(("stats", (stats, new_frames)))
        updates += 1
        if updates % setup["actor_sync_every"] == 0:
            _publish(mi["model"], shared, version, lock)
    _publish(mi["model"], shared, version, lock)


def _wait(source: Any, stop: Any | None, parent: int) -> Any:
    """Next item of ``source``, or None once ``stop`` (if given) is set or the parent is gone."""
    while (stop is None or not stop.is_set()) and os.getppid() == parent:
        try:
            return source.get(timeout=0.05)
        except queue.Empty:
            continue
    return None


def _publish(model: Model, shared: Model, version: Any, lock: Any) -> None:
    with lock, torch.no_grad():
        for dst, src in zip(shared.state_dict().values(), model.state_dict().values(), strict=True):
            dst.copy_(src)
        version.value += 1
