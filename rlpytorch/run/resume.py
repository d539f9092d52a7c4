"""Exact resume: what a checkpoint carries beyond the weights, and the engine's seed stream.

Every checkpoint of ``rlpytorch.train`` (``last.pt``, ``model_<frames>.pt``)
holds, under ``"resume"``, the training state (``SingleProcessRun.training_state``):
every model's weights and optimizer, the frame and update counters (the
learning-rate, epsilon and priority schedules are functions of the frame
count, so they continue from it), the finished episodes and the update stats
since the last stats line, the sampler's and the method's random generators,
the runner's marks (next stats line, checkpoint, evaluation), and the random
states of Python, numpy and torch (``random_states``).

The engine cannot save its games mid-episode (C++ and hosted games hold state
it cannot serialise), so it is restored at a *game start* instead: the run's
k-th start of the games is seeded ``engine_seed(seed, k)``. A resumed run
starts its games afresh with the next seed of the stream, and clears what
belongs to the old games (recurrent states, the reward normalizer's running
returns). With ``--restart_games_at_save`` an unbroken run does the same at
every checkpoint, so that in deterministic mode a run resumed from any of its
checkpoints prints exactly the stats lines the unbroken run prints. Without it,
a resumed run differs from the unbroken one only in its games: they start new
episodes at the resume point instead of continuing theirs.

The replay methods' checkpoints hold their replay too (``Replay.state_dict``:
the rows, the lanes' positions, the priorities, the sampler's generator), so
their resume is exact as well. Under ``--runner multi`` the learner process
sends its part (models, optimizers, method, replay) at each save, and the
checkpoint is the one ``--runner single`` writes: either runner resumes it.
Under torchrun rank 0 saves its own state and every rank resumes from it: the
models and optimizers are the same on every rank, and each other rank keeps its
own random streams (seeded from its rank), so such a resume continues the run
exactly in what it learned, not draw for draw on the other ranks.

Each checkpoint also holds ``history``: its frame count and how far ``log.txt``
had come. A run resumed in its checkpoint's folder first cuts ``progress.csv``
and ``log.txt`` back to that frame (``rlpytorch.core.stats.cut_history``), and
its TensorBoard writer purges the steps past it, so that after a kill at any
moment each frame count is logged once and in order, under either runner.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..models.base import CheckpointError, read_checkpoint
from .run_dir import checkpoint_path

__all__ = ["engine_seed", "random_states", "read_resume_checkpoint", "resume_argument", "resumed_config",
           "set_random_states"]


def engine_seed(seed: int, start: int) -> int:
    """The seed of the games' ``start``-th start in a run seeded ``seed``: ``seed``
    itself for the first (start 0), then numpy's ``SeedSequence([seed, start])``
    (32 bits: every game, native or hosted, accepts it)."""
    if start == 0:
        return seed
    return int(np.random.SeedSequence([abs(seed), start]).generate_state(1, np.uint32)[0])


def random_states() -> dict[str, Any]:
    """The global random states of Python, numpy and torch (CPU), in types
    that ``torch.load(weights_only=True)`` reads back."""
    numpy_state = np.random.get_state(legacy=False)
    numpy_state["state"]["key"] = numpy_state["state"]["key"].tolist()
    return {"python": random.getstate(), "numpy": numpy_state, "torch": torch.get_rng_state()}


def set_random_states(states: Mapping[str, Any]) -> None:
    """Restore what ``random_states`` returned."""
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))
    numpy_state = {**states["numpy"], "state": dict(states["numpy"]["state"])}
    numpy_state["state"]["key"] = np.asarray(numpy_state["state"]["key"], dtype=np.uint32)
    np.random.set_state(numpy_state)
    torch.set_rng_state(states["torch"])


def read_resume_checkpoint(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """The checkpoint file of ``path`` (a run folder: its ``last.pt``) and its
    contents; ``CheckpointError`` when it is damaged or carries no training state
    (a checkpoint written before exact resume, or ``best.pt``, which holds the model only)."""
    file = checkpoint_path(path)
    checkpoint = read_checkpoint(file)
    if not checkpoint.get("resume"):
        raise CheckpointError(f"--resume {path}: {file} holds weights only, no training state to resume from "
                         "(--load starts a new run from its weights)")
    return file, checkpoint


def resume_argument(argv: Sequence[str]) -> str:
    """``--resume``'s value in ``argv`` (empty without it, or without a value:
    the script's full parser then says so, under the script's name)."""
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    pre.add_argument("--resume", default="")
    try:
        return pre.parse_known_args(argv)[0].resume
    except argparse.ArgumentError:
        return ""


def resumed_config(file: Path | None, checkpoint: Mapping[str, Any] | None) -> dict[str, Any]:
    """The configuration a resumed run starts from: the checkpoint's, writing
    into the checkpoint's folder, its weights coming from the training state
    (not from the ``--load`` it may have started from)."""
    if checkpoint is None:
        return {}
    return {**checkpoint["args"], "save_dir": str(file.parent), "load": ""}
