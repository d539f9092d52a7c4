"""The AlphaZero loop: self-play games searched in C++, one network that
evaluates their leaves in batches and learns from their records.

    python -m rlpytorch.train --method alphazero --config go9

The game (e.g. ``go_mcts``) runs a tree search per game on the engine's
threads and sends the leaves it needs evaluated to the tag ``eval``; each
batch is one network call (``p = softmax over legal moves``, ``v``), replied
as the game's policy and value keys. The same batches carry the records of
the moves the searches played; when a game ends they get its outcome and go
to the replay window (``PositionReplay``). Between batches the network takes
``updates_per_batch`` SGD steps on minibatches drawn from the window (each
position under a random board symmetry), with ``PolicyValueLoss``.

New networks are used at once (AlphaZero), not gated by an evaluation match
(AlphaGo Zero): the next batch of leaves is evaluated by the weights just
updated. Resignation is the game's (its ``resign_threshold`` option); the
fraction of played-out games in which the would-be resigner won is reported
as ``false_resign``, the check that the threshold is safe (AlphaGo Zero kept
it under 5%).

``--device cuda`` keeps the network on a GPU: each batch of leaves is copied
there for the call and the replies back, and the SGD steps run there too.
The stats lines report ``sims_per_s`` (leaf evaluations per wall second) and
``batch_fill`` (leaves per network call over ``--actor_batch``), the two
figures that say whether the searches keep the network busy.

Until the first stats line (the replay window fills first: a minute or so for
Go on 9x9) the run says what it does: a line as self-play starts, one as
training starts, one before each save (exporting takes a while), and on a
terminal a bar over the leaf evaluations with the games finished, the
replay window's size and the network's step (``--no-progress``: no bar).

The library names no game key: every key comes from the arguments (the
config file sets them for Go).

Everything goes into the run's folder (``--save_dir``, see
``rlpytorch.run.run_dir``): ``config.yaml``, ``run.yaml``, ``log.txt``,
``progress.csv`` (``python -m rlpytorch.plot <folder> --y loss`` draws it),
TensorBoard events, ``last.pt`` (the network and the training state),
``replay.npz`` (the replay window), ``net.pt2`` (its exported evaluator, for
GTP) and ``games/`` (the game writer's files). ``--save_every N`` writes the
checkpoint every N leaf evaluations, and ``--resume FOLDER`` continues a run
from it (a long self-play run can so span several sessions): network,
optimizer, replay window, counters, training time and random states come
back; the games in progress are lost and new ones start. Each checkpoint
keeps where the logs stood, so that a run resumed after a kill at any moment
has each count of leaf evaluations (the x axis of ``progress.csv``,
``log.txt`` and TensorBoard) once and in order (``rlpytorch.run.resume``);
an error in the loop, unless it broke off an SGD step, writes the checkpoint
at the evaluations reached on the way out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from elfpy.files import FolderError, stop_signals_handled, writing_into

from ..core.args_provider import Configurable, above, at_least, part, setting
from ..core.game_loader import GameLoader
from ..core.settings import device_setting, progress_setting
from ..core.stats import FIELD_SEPARATOR, StatsLogger, history_mark
from ..methods.policy_value import PolicyValueLoss
from ..models.policy_value import PolicyValueNet, PolicyValueSettings, export_evaluator, masked_policy
from ..replay.position_replay import GameStats, PositionReplay, RecordKeys, SelfPlayRecords
from .resume import engine_seed, random_states, read_resume_checkpoint, set_random_states
from .run_dir import LAST_CHECKPOINT
from .single_process import progress_bar

__all__ = ["AlphaZero", "SelfPlayKeys", "format_selfplay"]

EXPORTED = "net.pt2"  # the exported evaluator in the run's folder (what a GTP player loads)
REPLAY_FILE = "replay.npz"  # the replay window of the checkpoint beside it (training state)
# The next checkpoint's window, written before its last.pt and renamed to REPLAY_FILE after it: a kill
# between the two leaves each checkpoint with its own window (load_training_state takes the one that matches).
NEXT_REPLAY_FILE = "replay.next.npz"


@dataclass
class SelfPlayKeys(Configurable):
    """The game's key names: what the network reads and replies, and the records."""

    state_key: str = setting("", "leaf features the network reads")
    legal_key: str = setting("", "leaf legal-move mask")
    policy_reply: str = setting("", "reply key for the leaf's move probabilities")
    value_reply: str = setting("", "reply key for the leaf's value")
    record_state_key: str = setting("", "features of a searched position (records)")
    visits_key: str = setting("", "visit distribution of a searched position")
    move_key: str = setting("", "move played (-1: no record on this row)")
    player_key: str = setting("", "sign of the mover (+1 / -1)")
    resign_check_key: str = setting("", "resignation check on a game's last row (optional)")

    def __post_init__(self) -> None:
        missing = [name for name, key in self.required().items() if not key]
        if missing:
            raise ValueError(f"AlphaZero needs the game's key names: set {', '.join('--' + m for m in missing)}")

    def required(self) -> dict[str, str]:
        """Every key but the optional ``resign_check_key``, by setting name."""
        return {name: key for name, key in self.setting_values().items() if name != "resign_check_key"}

    def records(self) -> RecordKeys:
        return RecordKeys(self.record_state_key, self.visits_key, self.move_key, self.player_key,
                          self.resign_check_key)

    def inputs(self) -> list[str]:
        """The keys the ``eval`` tag reads: leaf inputs and the records."""
        records = self.records()
        return [self.state_key, self.legal_key, records.state, records.visits, records.move, records.player,
                records.reward, records.terminal] + ([records.resign_check] if records.resign_check else [])


@dataclass(eq=False)
class AlphaZero(Configurable):
    """Self-play, replay window and training, in one process.

    Explicit values: ``loader`` (the game), ``seed``, the ``run_dir`` (None:
    write nothing), the ``logger`` of the stats lines and the ``run_config``
    saved with the network."""

    loader: GameLoader
    num_frames: int = setting(200000, "leaf evaluations to run", bounds=at_least(1))
    replay_size: int = setting(50000, "records in the replay window", bounds=at_least(1))
    min_replay: int = setting(1000, "records before training starts", bounds=at_least(0))
    sgd_batch: int = setting(256, "positions per SGD step", bounds=at_least(1))
    updates_per_batch: float = setting(0.25, "SGD steps per evaluated batch (may be fractional)", bounds=above(0))
    lr: float = setting(0.02, "SGD learning rate (momentum 0.9)", bounds=above(0))
    weight_decay: float = setting(1e-4, "L2 regularisation", bounds=at_least(0))
    symmetries: bool = setting(True, "augment each sampled position with a random board symmetry")
    log_every: int = setting(50, "SGD steps between progress lines (one line a batch of leaves at "
                                 "most: the steps a batch owes go into one line)", bounds=at_least(1))
    save_every: int = setting(0, f"leaf evaluations between checkpoints ({LAST_CHECKPOINT} with the training "
                              f"state, {REPLAY_FILE}, {EXPORTED}; 0: at the end only)", bounds=at_least(0))
    export: bool = setting(True, f"also save the network with torch.export ({EXPORTED}, for GTP; takes ~10 s)")
    game_writer: str = setting("", "module:Class called with each finished game, e.g. elfpy.go.sgf:SgfWriter")
    games_dir: str = setting("", "folder for the game writer (empty: games/ in the run's folder)")
    device: str = device_setting()
    progress: bool = progress_setting()
    keys: SelfPlayKeys = part(SelfPlayKeys)
    loss: PolicyValueLoss = part(PolicyValueLoss)
    net_settings: PolicyValueSettings = part(PolicyValueSettings)
    seed: int = 0
    run_dir: Path | None = None
    logger: StatsLogger | None = None
    run_config: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        self.logger = self.logger or StatsLogger(tensorboard=False, formatter=format_selfplay)

    def build(self, engine_starts: int = 0) -> Any:
        """The context with its ``eval`` tag (its games seeded for their
        ``engine_starts``-th start in the run), the network, the window and the collector."""
        context = self.context(engine_starts)
        spec = context.spec()
        planes_shape = tuple(spec[self.keys.record_state_key].shape)
        self.num_actions = int(spec[self.keys.policy_reply].shape[0])
        self.net = PolicyValueNet(planes_shape[0], planes_shape[-1], self.num_actions, self.net_settings)
        self.net.to(self.device)
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=self.lr, momentum=0.9,
                                         weight_decay=self.weight_decay)
        self.replay = PositionReplay(self.replay_size, planes_shape, self.num_actions)
        self.records = SelfPlayRecords(self.keys.records(), self.replay, self._game_writer())
        self.frames = 0
        self._saved_at = 0  # the leaf evaluations of the last checkpoint (none at 0: nothing to keep)
        self._updating = False  # inside an SGD step: an error there leaves the training state unsound
        self.interrupted = False  # a stop signal ended the last play_and_train before its budget
        self.calls = 0
        self.owed = 0.0  # SGD steps due (updates_per_batch may be fractional)
        self.earlier_seconds = 0.0  # training time before a resume
        return context

    def context(self, engine_starts: int) -> Any:
        """The games' context for their ``engine_starts``-th start in the run, its
        ``eval`` tag served by this network (a later start: new games, same network)."""
        context = self.loader.context(seed=engine_seed(self.seed, engine_starts))
        self.engine_starts = engine_starts
        spec = context.spec()
        for key in (*self.keys.required().values(), self.keys.resign_check_key):
            if key and key not in spec:
                context.stop()
                raise ValueError(f"game {self.loader.game!r} has no key {key!r}; its keys: {sorted(spec)}")
        context.add_tag("eval", self.loader.actor_batch, self.keys.inputs(),
                   [self.keys.policy_reply, self.keys.value_reply])
        context.reg_callback("eval", self.evaluate)
        return context

    def _game_writer(self) -> Any:
        if not self.game_writer:
            return None
        folder = self.games_dir or (str(self.run_dir / "games") if self.run_dir else "")
        if not folder:
            raise ValueError("--game_writer needs a folder: set --games_dir or --save_dir")
        module, _, name = self.game_writer.partition(":")
        writer = getattr(importlib.import_module(module), name)
        return writer(folder, **self.loader.options)

    def evaluate(self, batch: Any) -> dict[str, torch.Tensor]:
        """One network call for a batch of leaves; collects the batch's records."""
        self.records.add_batch(batch, batch.game_ids)
        self.net.eval()
        with torch.inference_mode():
            logits, value = self.net(self._on_device(batch[self.keys.state_key]))
            policy = masked_policy(logits, self._on_device(batch[self.keys.legal_key]))
        self.frames += len(batch)
        self.calls += 1
        return {self.keys.policy_reply: policy.cpu(), self.keys.value_reply: value.cpu()}

    def _on_device(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(array).to(self.device, non_blocking=True)

    def update(self) -> dict[str, float]:
        """One SGD step on a minibatch from the window."""
        planes, pi, z = (t.to(self.device) for t in self.replay.sample(self.sgd_batch, self.rng, self.symmetries))
        self.net.train()
        logits, value = self.net(planes)
        loss, stats = self.loss(logits, value, torch.ones_like(pi), pi, z)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.net.increment_step()
        return {"loss": loss.item(), **stats}

    def prepare(self, resume_file: Path | None = None) -> Any:
        """The games' context, built (not started), and with ``resume_file``
        the training state it holds loaded: what ``play_and_train`` runs."""
        if resume_file is None:
            return self.build()
        state = read_resume_checkpoint(resume_file)[1]["resume"]
        context = self.build(state["engine_starts"] + 1)
        try:
            self.load_training_state(resume_file, state)
        except BaseException:
            context.stop()  # its games were built: release them
            raise
        return context

    def play_and_train(self, context: Any) -> list[dict[str, float]]:
        """``run``'s loop over the context ``prepare`` built. An error inside
        it stops the games and, where the state is sound (the error did not
        come from inside an SGD step), writes the checkpoint at the leaf
        evaluations reached on the way out, so that ``--resume`` continues from there."""
        history: list[dict[str, float]] = []
        window: list[dict[str, float]] = []
        self.start = time.perf_counter()
        next_save = self._next_save()
        self._note(f"self-play: {self.num_frames:,} leaf evaluations; the network trains once the replay window "
                   f"holds {self.min_replay:,} positions")
        self._bar = progress_bar(self.progress, total=self.num_frames, initial=self.frames, unit="eval",
                                 unit_scale=True)
        shown_at, training = 0.0, False
        self.interrupted = False
        try:
            with stop_signals_handled(self._ask_to_stop), context, self._bar:
                while self.frames < self.num_frames and not self.interrupted:
                    context.run()
                    if time.perf_counter() - shown_at > 0.5:
                        shown_at = time.perf_counter()
                        self._show_progress()
                    if self.replay.size >= self.min_replay:
                        if not training:
                            training = True
                            self._note(f"training starts: {self.replay.size:,} positions in the replay window "
                                       f"after {self.frames:,} leaf evaluations ({self.seconds():.0f} s)")
                        self.owed += self.updates_per_batch
                        while self.owed >= 1:
                            self.owed -= 1
                            self._updating = True
                            window.append(self.update())
                            self._updating = False  # (not on an error: the step may be half made)
                        # At most one line a batch: its leaf evaluations are the x axis of the history.
                        if len(window) >= self.log_every:
                            history.append(self._log(window))
                            window = []
                    # After the batch's line: the checkpoint's history mark (cut_history) includes it.
                    if self.frames >= next_save:
                        self.save()
                        next_save = self._next_save()
                self._show_progress()  # the bar ends at the evaluations run: 100% unless interrupted
        except Exception:
            self._save_on_the_way_out()
            raise
        with stop_signals_handled(lambda number: setattr(self, "interrupted", True)):  # while it saves: noted only
            if window:
                history.append(self._log(window))
            self.save()
        self.earlier_seconds, self.start = self.seconds(), time.perf_counter()  # a later call goes on from here
        return history

    def _save_on_the_way_out(self) -> None:
        """After an error in the loop, with the games stopped: the checkpoint at
        the leaf evaluations reached, unless an SGD step broke off or it is
        written already; a save that fails too (a full disk) leaves the last one."""
        if self._updating or self._saved_at == self.frames:
            return
        with (stop_signals_handled(lambda number: setattr(self, "interrupted", True)),  # noted only
              contextlib.suppress(FolderError)):
            self.save()

    def _ask_to_stop(self, number: int) -> None:
        """SIGINT or SIGTERM while playing: stop after the batch at hand, log and
        save (``interrupted``); a second one interrupts at once, unsaved."""
        if self.interrupted:
            raise KeyboardInterrupt
        self.interrupted = True

    def _show_progress(self) -> None:
        """The bar at the leaf evaluations run so far, with the games finished,
        the replay window's size and the network's step."""
        self._bar.set_postfix(games=self.records.stats.games, replay=self.replay.size, step=self.net.step,
                              refresh=False)
        self._bar.update(self.frames - self._bar.n)
        self._bar.refresh()

    def _note(self, line: str) -> None:
        """A line of progress on stdout, above the bar (when there is one)."""
        with tqdm.external_write_mode():
            print(line, flush=True)

    def _next_save(self) -> float:
        return (self.frames // self.save_every + 1) * self.save_every if self.save_every else float("inf")

    def seconds(self) -> float:
        """Training time of the run, earlier sessions included."""
        return self.earlier_seconds + time.perf_counter() - self.start

    def training_state(self) -> dict[str, Any]:
        """What a resumed run continues from besides the weights and the replay
        window (``REPLAY_FILE``): the optimizer, the counters, the games' stats,
        the random states, and where the logs stood (``history``, which
        ``rlpytorch.core.stats.cut_history`` cuts them back to). The games
        themselves restart (``rlpytorch.run.resume``): the positions of games in progress are lost."""
        log_dir = self.logger.log_dir
        history = {"frames": self.frames, "log_bytes": history_mark(log_dir) if log_dir is not None else 0}
        return {"optimizer": self.optimizer.state_dict(), "frames": self.frames, "calls": self.calls,
                "owed": self.owed, "seconds": self.seconds(), "engine_starts": self.engine_starts,
                "replay_added": self.replay.added, "rng": self.rng.bit_generator.state,
                "random_states": random_states(), "stats": dataclasses.asdict(self.records.stats),
                "history": history}

    def load_training_state(self, file: Path, state: Mapping[str, Any]) -> None:
        """Restore the network from checkpoint ``file``, the replay window from the
        ``REPLAY_FILE`` beside it, and the rest from ``state`` (``training_state``)."""
        self.net.load(file)
        self.optimizer.load_state_dict(state["optimizer"])
        for name in (REPLAY_FILE, NEXT_REPLAY_FILE):
            if (file.parent / name).exists():
                self.replay.load(file.parent / name)
                if self.replay.added == state["replay_added"]:
                    break
        else:
            raise ValueError(f"{file.parent / REPLAY_FILE} is missing or is not the replay window of {file} (which "
                             f"has {state['replay_added']:,} records ever added): they were not saved together")
        self.frames, self.calls, self.owed = int(state["frames"]), int(state["calls"]), float(state["owed"])
        self._saved_at = self.frames
        self.earlier_seconds = float(state["seconds"])
        self.rng.bit_generator.state = state["rng"]
        set_random_states(state["random_states"])
        self.records.stats = GameStats(**state["stats"])

    def _log(self, window: list[dict[str, float]]) -> dict[str, float]:
        s = self.records.stats
        entry = {k: float(np.mean([w[k] for w in window])) for k in window[0]}
        elapsed = self.seconds()
        # batch_fill: leaves per network call over the tag's batch size, the
        # measure of how well the searches keep the network busy
        entry.update(step=self.net.step, frames=self.frames, time=elapsed, sims_per_s=self.frames / elapsed,
                     batch_fill=self.frames / max(1, self.calls) / self.loader.actor_batch, games=s.games,
                     moves_per_game=s.moves / max(1, s.games), first_player_win=s.first_player_wins / max(1, s.games),
                     resigned=s.resigned, false_resign=s.false_resign_rate, replay=self.replay.size)
        with tqdm.external_write_mode():  # above the bar
            self.logger.log(entry)
        return entry

    def save(self) -> None:
        """Into the run's folder: the replay window (``NEXT_REPLAY_FILE``, then
        renamed ``REPLAY_FILE`` once ``last.pt`` is in place), ``last.pt`` (weights, step,
        configuration, training state) and ``net.pt2`` (the exported evaluator a
        GTP player loads)."""
        if self.run_dir is None:
            return
        exported = f" and {EXPORTED} (torch.export: ~10 s)" if self.export else ""
        self._note(f"saving {LAST_CHECKPOINT}, {REPLAY_FILE}{exported} into {self.run_dir} at {self.frames:,} "
                   "leaf evaluations")
        with writing_into(self.run_dir):
            self.replay.save(self.run_dir / NEXT_REPLAY_FILE)
            self.net.save(self.run_dir / LAST_CHECKPOINT, self.run_config, resume=self.training_state())
            os.replace(self.run_dir / NEXT_REPLAY_FILE, self.run_dir / REPLAY_FILE)
            self._saved_at = self.frames
            if not self.export:
                return
            planes = torch.zeros((2, *self.replay.planes.shape[1:]), dtype=torch.uint8)
            legal = torch.ones((2, self.num_actions), dtype=torch.uint8)
            export_evaluator(self.net, planes, legal, str(self.run_dir / EXPORTED))


def format_selfplay(record: Mapping[str, float]) -> str:
    """One stats line: every value of the record, by its name."""
    return FIELD_SEPARATOR.join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in record.items())
