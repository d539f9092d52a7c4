"""``Model``: an ``nn.Module`` that counts its updates and saves itself safely.

A checkpoint is one ``torch.save`` file holding the weights, the update step,
the model's registered name and the run's effective arguments, so a model can
be rebuilt and evaluated from the file alone (see ``model_loader``).

The write is atomic (``elfpy.files.write_atomically``): a crash or a
signal never leaves a half-written checkpoint behind. The read
(``read_checkpoint``) refuses a damaged file with one ``CheckpointError``
naming it: the CRC-32 of every record of the zip archive ``torch.save``
writes is checked first (torch's reader does not check them, and a flipped
byte would load as a wrong or NaN weight), and only plain data and tensors
are unpickled (``weights_only``), so no file can run code. Non-finite
weights are never written: ``save`` raises ``NonFiniteError``
(``rlpytorch.core.finite``) and leaves the file as it was.
"""

from __future__ import annotations

import copy
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from typing_extensions import Self

from elfpy.files import write_atomically

from ..acting.predict import predict
from ..core.args_provider import short_repr
from ..core.finite import check_finite_weights

__all__ = ["CheckpointError", "CheckpointMismatchError", "CheckpointNotFoundError", "Model",
           "read_checkpoint"]


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: damaged, not a checkpoint, or not fitting; the message names the file."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """No checkpoint file where one was named."""


class CheckpointMismatchError(CheckpointError, RuntimeError):
    """A checkpoint's weights do not fit the model's architecture."""


class Model(nn.Module):
    """Base class of the library's models: step counter, save/load, clone.

    Subclasses implement ``forward(obs)`` on the observation dict (the keys
    ``obs_keys``; one tensor is read as the first of them) with any leading
    shape (``[B, ...]`` when acting, ``[T, B, ...]`` when training) and return a
    dict (for actor-critic models ``{"pi": [..., A] probabilities, "V": [...]}``).

    A recurrent model has ``state_size > 0`` and implements
    ``forward(obs, state, reset)`` on ``[T, B, ...]`` inputs, with the state
    ``[B, state_size]`` before the first row and ``reset`` ``[T, B]`` marking rows
    where the state restarts from zero; it adds ``state`` (after the last row)
    and ``states_in`` (``[T, B, state_size]``, carried into each row before its
    reset) to its outputs. The trainer keeps one state per game.
    """

    name: str = "model"
    obs_keys: tuple[str, ...] = ("s",)
    state_size: int = 0
    reads_seats: bool = False  # acting, it also reads acting.SEAT_KEY [B], each row's seat

    def __init__(self) -> None:
        super().__init__()
        self.step = 0
        self.obs_shapes: dict[str, tuple[int, ...]] = {}  # per key, where known: tells one observation from a batch
        # Running normalizers (rlpytorch.models.normalization), submodules so checkpoints carry their statistics:
        # observations are normalized on the way in; rewards are scaled by the learner before an update.
        self.obs_norm: nn.Module | None = None
        self.reward_norm: nn.Module | None = None
        # The previous action and reward as inputs (rlpytorch.acting.prev_inputs.PrevInputs), when the model reads them.
        self.prev_inputs: nn.Module | None = None

    def predict(
        self, obs: Mapping[str, Any] | Any, state: Any | None = None, deterministic: bool = True,
        prev_action: Any | None = None, prev_reward: Any | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Act on one observation or a small batch outside the engine; see ``rlpytorch.acting.predict``."""
        return predict(self, obs, state, deterministic, prev_action, prev_reward)

    def as_obs(self, obs: Mapping[str, torch.Tensor] | torch.Tensor) -> Mapping[str, torch.Tensor]:
        """The observation dict: ``obs`` itself, or ``{obs_keys[0]: obs}`` for one tensor,
        normalized when the model has an observation normalizer."""
        obs = {self.obs_keys[0]: obs} if isinstance(obs, torch.Tensor) else obs
        return self.obs_norm(obs) if self.obs_norm is not None else obs

    def increment_step(self, n: int = 1) -> None:
        """Count ``n`` more updates of this model."""
        self.step += n

    def save(self, path: str | Path, args: Mapping[str, Any] | None = None,
             resume: Mapping[str, Any] | None = None) -> None:
        """Write weights, step, name and ``args`` to ``path`` atomically, and
        ``resume``, the training state of the run (``rlpytorch.run.resume``), if given.
        Raises ``NonFiniteError``, writing nothing, if a weight is NaN or infinite."""
        weights = {k: v.detach().cpu() for k, v in self.state_dict().items()}
        check_finite_weights(self.name, weights)
        state = {
            "model": self.name,
            "state_dict": weights,
            "step": self.step,
            "args": dict(args or {}),
        }
        if resume is not None:
            state["resume"] = dict(resume)
        write_atomically(path, lambda f: torch.save(state, f))

    def load(self, path: str | Path) -> dict[str, Any]:
        """Load weights and step from ``path``; returns the checkpoint's ``args``.

        Raises ``CheckpointMismatchError`` naming every missing, unexpected or
        wrongly shaped key when the checkpoint was written by another architecture.
        """
        checkpoint = read_checkpoint(path)
        self.load_weights(checkpoint["state_dict"], source=str(path))
        self.step = int(checkpoint["step"])
        return checkpoint["args"]

    def load_weights(self, state_dict: Mapping[str, torch.Tensor], source: str = "weights") -> None:
        """Copy ``state_dict`` in, failing with the names of mismatched keys."""
        own = self.state_dict()
        problems = _mismatches(own, state_dict)
        if problems:
            raise CheckpointMismatchError(f"{source} does not fit {type(self).__name__}: " + "; ".join(problems))
        self.load_state_dict(state_dict)

    def clone(self) -> Self:
        """An independent deep copy (same weights and step, separate storage)."""
        return copy.deepcopy(self)


CHECKPOINT_KEYS = ("model", "state_dict", "step", "args")
_DOS_FOLDER = 0x10  # the folder bit of a zip record's DOS attributes


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The raw checkpoint dict: ``model``, ``state_dict``, ``step``, ``args``
    (and ``resume`` in a checkpoint written during training). A file that is
    damaged (truncated, a byte changed) or not a checkpoint raises
    ``CheckpointError`` naming it."""
    _check_archive(path)
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # what torch's reader and the weights-only unpickler raise varies
        raise CheckpointError(f"{path} is damaged or not a checkpoint: {_first_line(error)}") from error
    missing = [key for key in CHECKPOINT_KEYS if not isinstance(checkpoint, dict) or key not in checkpoint]
    if missing:
        raise CheckpointError(f"{path} is not a checkpoint of rlpytorch: it has no {missing}")
    _check_settings(path, checkpoint["args"])
    return checkpoint


def _check_settings(path: str | Path, args: Any) -> None:
    """Refuse stored settings that are not names with plain values. A pickle
    may repeat one object by reference, so a few hundred bytes of lists of
    the same list would print, copy or compare as billions of elements; a
    setting is never a container, so none is let through."""
    if not isinstance(args, dict):
        raise CheckpointError(f"{path}: its stored settings are a {type(args).__name__}, not a mapping of names")
    for name, value in args.items():
        if not isinstance(name, str):
            raise CheckpointError(f"{path}: a stored setting is named by a {type(name).__name__}, not a string")
        if not (value is None or isinstance(value, (bool, int, float, str))):
            raise CheckpointError(f"{path}: its stored setting {short_repr(name)} holds a {type(value).__name__}, "
                                  "not a plain value")


def _check_archive(path: str | Path) -> None:
    """Refuse a file that is not a whole zip archive with intact records.

    Python's ``zipfile`` checks each record's CRC-32, its header and sizes.
    It ignores a record's DOS attributes, which torch's reader does not: one
    marked a folder there reads as no bytes, and its tensor as whatever the
    memory held, so that mark is refused too.
    """
    if not Path(path).is_file():
        raise CheckpointNotFoundError(f"no checkpoint file at {path}")
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()  # reads every record, checking its CRC-32
            folders = [info.filename for info in archive.infolist() if info.external_attr & _DOS_FOLDER]
    # RuntimeError: a record whose encryption bit is set asks for a password
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as error:
        raise CheckpointError(f"{path} is damaged or not a checkpoint (not a whole zip archive, as torch.save "
                              f"writes): {_first_line(error)}") from error
    if damaged is not None or folders:
        record = damaged if damaged is not None else folders[0]
        raise CheckpointError(f"{path} is damaged: its record {record!r} fails its CRC-32 or header check")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _mismatches(own: Mapping[str, torch.Tensor], other: Mapping[str, torch.Tensor]) -> list[str]:
    problems = []
    missing = sorted(set(own) - set(other))
    unexpected = sorted(set(other) - set(own))
    if missing:
        problems.append(f"missing keys {missing}")
    if unexpected:
        problems.append(f"unexpected keys {unexpected}")
    for key in sorted(set(own) & set(other)):
        if own[key].shape != other[key].shape:
            problems.append(f"{key}: checkpoint {tuple(other[key].shape)} vs model {tuple(own[key].shape)}")
    return problems
