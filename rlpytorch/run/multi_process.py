"""``MultiProcessRun``: the engine and its actor here, the learner in its own process.

Train windows travel to the learner through ``batch_slots`` shared-memory
slots: the ``train`` callback copies a window into a free slot and posts its
index with the frames stepped so far. The learner process runs the trainer's
learning half (``trainer.process_learning()``): on-policy, one update per
window (``WindowLearning``); on replay (DQN, R2D2, DRQN, DDPG, TD3, SAC), the
replay, the target network and the priority updates live there
(``ReplayLearning``): each window goes into the replay and the learner owes
``replay_ratio`` updates per frame stepped, counted here where the games step.

When the learner falls behind, ``--when_behind`` decides:

- ``wait`` (back-pressure): a slot is freed once its window is learned from
  (on replay: once every update owed at its frame count is made), and the
  games wait for a free slot. Every frame is learned from and the replay
  ratio holds exactly, the learner at most ``batch_slots`` windows behind.
- ``drop`` (acting never waits on a gradient step): on-policy, a window that
  finds every slot busy is dropped (counted in ``dropped``). On replay no
  window is dropped, since the replay stores each game's steps in order and a
  missing window would join steps that do not follow each other: the learner
  takes each window into the replay as soon as it arrives, freeing its slot,
  and makes the updates owed in between; updates owed beyond the lag ``wait``
  allows (those of ``batch_slots`` windows) are dropped instead (counted in
  ``updates_dropped``; ``replay_ratio_achieved`` then falls below
  ``replay_ratio``). The games wait only if a single update outlasts
  ``batch_slots`` windows of play.

Replay methods default to ``wait`` (``auto``): their replay ratio is what
they are tuned at, and with ``drop`` a learner on a busy CPU made 2% of the
updates owed. On-policy methods default to ``drop``. Each stats record says
which policy is in force: ``waited`` (seconds the games waited for a free slot)
under ``wait``, ``dropped`` (windows) and ``U dropped`` (updates) under ``drop``.

Each stats record gives ``frames`` (stepped) beside ``frames_learned``
(in the windows the learner trained on or stored). Every ``actor_sync_every``
updates the learner copies its weights into a shared-memory model under a
lock and bumps a version number; the actor callback reloads its copy when the
version changed. The learner runs on the trainer's ``learner_device``
(windows to a GPU through pinned buffers), the actor here on its ``actor_device``.

Checkpoints resume (``--resume``, with either runner): at each save the
learner is asked for its state (a request after the windows handed over,
answered after their updates under ``wait``): its learning half's models,
optimizers, method generator and replay, its update counts and random states;
the checkpoint is then the single-process one (the trainer's state with the
learner's parts in it) plus those counts. At the end the learner sends its
state as it exits. A resumed run starts its learner from that state.

Shutdown is the same whatever ends the run (budget, target, Ctrl-C, an
exception here, an exception or death of the learner): the engine stops, the
learner is asked to stop, publishes its final weights and exits, and is
killed if it does not within ``join_timeout`` seconds. The learner ignores
SIGINT and SIGTERM (the terminal's Ctrl-C, or a job manager's SIGTERM, reaches
both processes; this one decides). Should this process die without stopping it
(SIGKILL), the learner is killed at once (``elfpy.parent_watch``): whatever it
was doing, nothing of it could reach a checkpoint any more. If the learner dies,
the run ends with a ``LearnerError`` naming how (its exit code or signal).
"""

from __future__ import annotations

import io
import os
import queue
import signal
import time
import traceback
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.multiprocessing as mp

from elfpy.parent_watch import signal_when_parent_exits

from ..core.args_provider import at_least, setting
from ..core.finite import NonFiniteError
from ..learners.trainer import lanes_of
from ..models.base import Model
from .resume import random_states, set_random_states
from .single_process import RunSummary, SingleProcessRun, window_frames

__all__ = ["LearnerError", "MultiProcessRun"]


class LearnerError(RuntimeError):
    """The learner process failed; the message carries its traceback or exit code."""


@dataclass(eq=False)
class MultiProcessRun(SingleProcessRun):
    """``SingleProcessRun``'s loop with the learner moved to a separate process."""

    batch_slots: int = setting(4, "shared-memory slots for train windows in flight", bounds=at_least(1))
    learner_threads: int = setting(1, "torch threads of the learner process", bounds=at_least(1))
    join_timeout: float = setting(30.0, "seconds the learner gets to exit before it is terminated", bounds=at_least(0))
    when_behind: str = setting("auto", "when the learner is behind: drop windows that find every slot busy "
                               "(on replay: updates owed beyond batch_slots windows; acting never waits), "
                               "wait for a free slot (the games wait for the learner: the replay ratio holds), "
                               "or auto: wait for the replay methods, drop for the others",
                               choices=("auto", "drop", "wait"))

    def __post_init__(self) -> None:
        super().__post_init__()
        self.dropped = 0  # windows
        self.updates_dropped = 0  # updates owed on replay beyond the allowed lag (drop)
        self.waited = 0.0  # seconds the games waited for a free slot (wait)
        self._learner_resume: dict[str, Any] | None = None  # the learner's part of a loaded training state
        self._learner_state: dict[str, Any] | None = None  # the learner's state, as it last sent it

    @property
    def policy(self) -> str:
        """The ``when_behind`` policy in force: ``auto`` is ``wait`` on replay, ``drop`` otherwise."""
        if self.when_behind != "auto":
            return self.when_behind
        return "wait" if self.trainer.needs_every_window else "drop"

    def run(self, context: Any, until: int | None = None) -> RunSummary:
        """Spawn the learner, run the engine here, stop both however the run ends."""
        self.until = self.num_frames if until is None else until
        if self.restart_games_at_save:
            raise ValueError("--restart_games_at_save (exact resume) runs with --runner single")
        trainer = self.trainer
        spawn = mp.get_context("spawn")
        self._shared = trainer.mi["model"].clone().cpu().share_memory()
        self._version = spawn.Value("q", 0)
        self._lock = spawn.Lock()
        self._stop = spawn.Event()
        self._queues = {name: spawn.Queue() for name in ("slots", "full", "free", "news")}
        for i in range(self.batch_slots):
            self._queues["free"].put(i)
        self._slots: dict[str, torch.Tensor] | None = None
        self._seen_version = 0
        self._learner = spawn.Process(
            target=_learner_main,
            args=(self._learner_setup(), self._shared, self._version, self._lock, self._stop, self._queues),
            name="rlpytorch-learner",
            daemon=True,
        )
        self._learner.start()
        try:
            self._wait_until_ready()
            context.reg_callback("actor", self._actor)
            context.reg_callback("train", self._enqueue)
            return self.loop(context.start, context.run, lambda: self._shutdown(context))
        finally:
            # Failed before the loop's stop (the learner not ready, the engine not started,
            # Ctrl-C meanwhile): left running, the learner would hold this process's exit
            # for good (multiprocessing joins it, after a SIGTERM it ignores).
            if self._learner.is_alive():
                self._stop_learner()

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
                raise LearnerError(f"learner process failed to start: {payload}")
        raise LearnerError(f"learner process did not start ({_exit_status(self._learner.exitcode)})")

    def _learner_setup(self) -> dict[str, Any]:
        trainer = self.trainer
        return {
            "learning": trainer.process_learning(),
            "device": str(trainer.learner_on),
            "actor_sync_every": trainer.actor_sync_every,
            "when_behind": self.policy,
            "batch_slots": self.batch_slots,
            "threads": self.learner_threads,
            "parent": os.getpid(),
            "resume": self._learner_resume,
            "state_at_exit": self.save_dir is not None,  # for the last checkpoint, written after the learner ends
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
        trainer = self.trainer
        self._queues["full"].put((index, size, trainer.frames, trainer.progress, window_frames(batch),
                                 lanes_of(batch, trainer.seats_per_game)))

    def _free_slot(self) -> int | None:
        """A free slot's index; None (drop) when all are busy, unless ``when_behind``
        is ``wait`` or the trainer needs every window (replay): then wait for one,
        checking that the learner is alive."""
        free = self._queues["free"]
        drop = self.policy == "drop" and not self.trainer.needs_every_window
        try:
            return free.get_nowait()
        except queue.Empty:
            if drop:
                return None
        began = time.perf_counter()
        try:
            while True:
                try:
                    return free.get(timeout=0.05)
                except queue.Empty:
                    self._poll()  # raises if the learner failed or died
        finally:
            self.waited += time.perf_counter() - began

    def _poll(self, wait: float = 0.0) -> None:
        """Take the learner's stats (waiting up to ``wait`` seconds for them); raise if it failed or died."""
        error = self._take_news(wait)
        if error is None and not self._learner.is_alive():
            error = self._take_news(wait=1.0)  # its last report may still be in the pipe
            error = error or f"exited unexpectedly ({_exit_status(self._learner.exitcode)})"
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
            if kind == "nonfinite":
                raise NonFiniteError(payload)
            if kind == "state":
                self._learner_state = torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
                continue
            if kind != "stats":
                continue
            updates, frames, self.updates_dropped = payload
            for stats in updates:
                self.trainer.record_update(stats)
            self.frames_learned += frames

    def _current_model(self) -> Any:
        """The actor: the learner's newest weights published to this process."""
        return self.trainer.mi["actor"]

    def training_state(self) -> dict[str, Any] | None:
        """What ``--resume`` continues from: ``SingleProcessRun``'s, with the learner's
        models, optimizers, method and replay (asked for now, or sent as it exited) in
        the trainer's state and the learner's counts in the runner's. The learner's
        weights are loaded here too, so the checkpoint's weights are the newest. None
        (weights only) when the learner ended without sending its state (terminated)."""
        learner = self._learner_state_now()
        if learner is None:
            return None
        learning = learner.pop("learning")
        mi = self.trainer.mi
        mi.load_state_dict(_with_learner_parts(mi.state_dict(), learning.pop("mi")))
        state = super().training_state()
        state["trainer"].update(learning)
        state["runner"].update(dropped=self.dropped, updates_dropped=self.updates_dropped, waited=self.waited,
                               learner=learner)
        return state

    def _learner_state_now(self) -> dict[str, Any] | None:
        """The learner's state: asked for while it runs (after the windows handed over
        so far), else the one it sent as it exited."""
        if self._learner.is_alive() and not self._stop.is_set():
            self._learner_state = None
            self._queues["full"].put(STATE_REQUEST)
            while self._learner_state is None:
                self._poll(wait=0.05)  # raises if the learner failed or died
        state, self._learner_state = self._learner_state, None
        return state

    def next_context(self) -> Any:
        """Not offered: the learner process lives for one ``run`` (its optimizer and replay end with it)."""
        raise ValueError("--runner multi trains in one call: learn() again (or --restart_games_at_save) needs "
                         "--runner single")

    def load_training_state(self, state: Mapping[str, Any]) -> None:
        """Continue from ``state`` (either runner's): the actor's parts here, the
        learner's (models, optimizers, method, replay, counts) for the learner
        process, which starts from them; the replay is not loaded here."""
        trainer_state = {key: value for key, value in state["trainer"].items() if key != "replay"}
        super().load_training_state({**state, "trainer": trainer_state})
        runner = state["runner"]
        self.dropped, self.updates_dropped = int(runner.get("dropped", 0)), int(runner.get("updates_dropped", 0))
        self.waited = float(runner.get("waited", 0.0))
        learner = runner.get("learner", {})
        self._learner_resume = {"learning": state["trainer"], "updates": self.trainer.updates,
                                "dropped": self.updates_dropped, "targets": learner.get("targets", []),
                                "random": learner.get("random")}

    def _extra_stats(self) -> dict[str, float]:
        """The policy's own counts: seconds the games waited (``wait``), windows and updates dropped (``drop``)."""
        if self.policy == "wait":
            return {**super()._extra_stats(), "waited": self.waited}
        return {**super()._extra_stats(), "dropped": float(self.dropped),
                "updates_dropped": float(self.updates_dropped)}

    def _shutdown(self, context: Any) -> None:
        """Stop the engine, then the learner; adopt its final weights."""
        try:
            context.stop()
        finally:
            self._stop_learner()
            # A learner killed (by a signal, or by _stop_learner) may have died inside _publish:
            # its weights half copied and the lock held for good. Only a clean exit hands them over.
            if self._learner.exitcode == 0:
                self._adopt_final_weights()

    def _stop_learner(self) -> None:
        """Ask the learner to stop, keep reading its news (its state at exit among them),
        terminate it if it lingers."""
        self._learner_state = None  # only the state sent at exit will do now
        self._queues["full"].put(None)  # the end mark, after every window handed over
        self._stop.set()
        deadline = time.monotonic() + self.join_timeout
        while self._learner.is_alive() and time.monotonic() < deadline:
            self._take_news()
            self._learner.join(0.05)
        if self._learner.is_alive():
            self._learner.kill()  # (it ignores SIGTERM)
            self._learner.join()
        self._take_news()

    def _adopt_final_weights(self) -> None:
        mi = self.trainer.mi
        with self._lock:
            mi["model"].load_state_dict(self._shared.state_dict())
            mi["actor"].load_state_dict(self._shared.state_dict())
        mi["model"].step = mi["actor"].step = self.trainer.updates


def _with_learner_parts(here: Mapping[str, Any], learner: Mapping[str, Any]) -> dict[str, Any]:
    """This process's ``ModelInterface`` state with the learner's models, steps and
    optimizers in it; the acting copy (``actor``) stays this process's, which acts with it."""
    def merged(part: str) -> dict[str, Any]:
        return {**here[part], **{name: value for name, value in learner[part].items() if name != "actor"}}
    return {part: merged(part) for part in ("models", "steps", "optimizers")}


def _exit_status(code: int | None) -> str:
    """How a process ended, as its ``exitcode`` says: 'exit code 3', 'killed by SIGKILL'."""
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


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
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)
    # Without this a learner whose parent was killed blocks for good, putting its
    # state into a queue nobody reads (or taking a lock the parent held).
    signal_when_parent_exits(setup["parent"], signal.SIGKILL)
    try:
        _learn(setup, shared, version, lock, stop, queues)
    except NonFiniteError as error:  # the run's own verdict on its training: one line, as in one process
        queues["news"].put(("nonfinite", str(error)))
        stop.set()
    except Exception:
        queues["news"].put(("error", traceback.format_exc()))
        stop.set()


def _learn(setup: dict[str, Any], shared: Model, version: Any, lock: Any, stop: Any, queues: dict) -> None:
    torch.set_num_threads(setup["threads"])
    learning = setup["learning"](torch.device(setup["device"]))
    resume = setup.get("resume")
    if resume is not None:
        learning.load_state_dict(resume["learning"])
        if resume["random"] is not None:
            set_random_states(resume["random"])
    queues["news"].put(("ready", None))
    slots = _wait(queues["slots"], stop)
    loop = _LearnerLoop(setup, learning, slots, queues, lambda: _publish(learning.model, shared, version, lock))
    if slots is not None:
        loop.run()
    _publish(learning.model, shared, version, lock)
    if setup.get("state_at_exit"):
        queues["news"].put(("state", loop.state()))


_NOTHING = object()  # no window waiting
STATE_REQUEST = "state"  # in the window queue: send the learner's state


class _LearnerLoop:
    """The learner process's loop: the windows handed over, until the parent's end
    mark, and the updates the learning half owes (see the module docstring)."""

    def __init__(self, setup: dict[str, Any], learning: Any, slots: dict[str, torch.Tensor] | None, queues: dict,
                 publish: Any) -> None:
        self.learning, self.slots, self.queues, self.publish = learning, slots, queues, publish
        self.sync_every = setup["actor_sync_every"]
        self.drop, self.batch_slots = setup["when_behind"] == "drop", setup["batch_slots"]
        resumed = setup.get("resume") or {}  # a resumed run's counts go on from the checkpoint's
        self.updates = resumed.get("updates", 0)
        self.dropped = resumed.get("dropped", 0)  # updates owed beyond the allowed lag, given up (drop)
        self.reports: list[dict[str, float]] = []  # stats of the updates since the last news
        self.frames = 0  # frames of the windows taken since the last news
        # Updates due after each of the last windows (drop).
        self.targets: deque[int] = deque(resumed.get("targets", ()), maxlen=self.batch_slots)

    def owed(self) -> int:
        return self.learning.owed(self.updates + self.dropped)

    def run(self) -> None:
        # Windows come until the parent's end mark (None): the ones handed over
        # before the stop are still learned from (at most batch_slots windows).
        while True:
            owing = self.owed() > 0
            if not owing:
                self.report()
            item = self.queues["full"].get() if not owing else self.waiting()
            if item is None:
                break
            if item is _NOTHING:
                self.update()
            elif item == STATE_REQUEST:
                self.report()  # the updates first: the parent counts them before it takes the state
                self.queues["news"].put(("state", self.state()))
            else:
                self.take(item)
        for _ in range(self.owed()):  # the last windows' updates (drop: at most the allowed lag)
            self.update()
        self.report()

    def waiting(self) -> Any:
        """The next window if one is waiting (None: the end mark), else ``_NOTHING``."""
        try:
            return self.queues["full"].get_nowait()
        except queue.Empty:
            return _NOTHING

    def take(self, item: tuple) -> None:
        """Give the learning half a window; with ``wait`` make the updates owed
        before freeing its slot, with ``drop`` give up those beyond the allowed lag."""
        index, size, frames, progress, new_frames, lanes = item
        window = {k: v[index, :, :size] for k, v in self.slots.items()}
        for stats in self.learning.take(window, lanes, frames, progress):
            self.count(stats)
        if self.drop:  # the updates owed at the window batch_slots back must be made or dropped by now
            if len(self.targets) == self.batch_slots:
                self.dropped += max(0, self.targets[0] - self.updates - self.dropped)
            self.targets.append(self.owed() + self.updates + self.dropped)
        else:
            for _ in range(self.owed()):
                self.update()
        self.queues["free"].put(index)
        self.frames += new_frames
        self.report()

    def update(self) -> None:
        self.count(self.learning.update())

    def state(self) -> bytes:
        """The learning half's state, the counts and this process's random states, as
        ``torch.save`` writes them: a snapshot that the updates after it leave alone,
        sent by value (shared-memory tensors would need this process alive to be read)."""
        state = {"learning": self.learning.state_dict(), "updates": self.updates, "dropped": self.dropped,
                 "targets": list(self.targets), "random": random_states()}
        buffer = io.BytesIO()
        torch.save(state, buffer)
        return buffer.getvalue()

    def count(self, stats: dict[str, float]) -> None:
        self.reports.append(stats)
        self.updates += 1
        if self.updates % self.sync_every == 0:
            self.publish()

    def report(self) -> None:
        """Send the updates' stats, the frames taken and the updates dropped so far."""
        if self.reports or self.frames:
            self.queues["news"].put(("stats", (self.reports, self.frames, self.dropped)))
            self.reports, self.frames = [], 0


def _wait(source: Any, stop: Any) -> Any:
    """Next item of ``source``, or None once ``stop`` is set."""
    while not stop.is_set():
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
