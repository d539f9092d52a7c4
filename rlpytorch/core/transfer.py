"""Batches to a GPU and replies back through pinned host buffers.

The engine's batch arrays are numpy views of its own buffers (pageable
memory). ``tensor.to("cuda", non_blocking=True)`` from pageable memory is a
synchronous copy through a driver bounce buffer; from page-locked ("pinned")
memory it is a DMA transfer that the host does not wait for, so Python goes on
queueing the forward pass while the bytes move. ``HostStaging`` keeps one
pinned tensor per key, allocated at the first batch (and again only when a
larger batch comes), copies each batch into it once and sends it with a
non-blocking copy; replies come back into pinned tensors the same way, with
one wait for all of them.

Only a CUDA device gets a staging (``staging_for``): on the CPU the engine's
arrays are used in place, without any copy, and nothing is pinned.

Who may call what: one thread (the engine's Python loop, or the learner
process) per staging. A pinned buffer is refilled only after the copy that
read it has finished (an event per buffer), and the numpy arrays ``to_host``
returns are valid until its next call: the engine copies replies out before
it asks for the next batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["HostStaging", "needs_pinning", "staging_for"]


def needs_pinning(device: torch.device | str) -> bool:
    """Whether batches for ``device`` go through pinned buffers: for CUDA devices only."""
    return torch.device(device).type == "cuda"


def staging_for(device: torch.device | str) -> HostStaging | None:
    """A ``HostStaging`` for a CUDA ``device``; None (arrays used in place) otherwise."""
    return HostStaging(torch.device(device)) if needs_pinning(device) else None


class _Slot:
    """One key's host buffer and the event of the last copy that used it."""

    def __init__(self, buffer: Tensor) -> None:
        self.buffer = buffer
        self.copied: Any = None  # a torch.cuda.Event once a copy was queued


class HostStaging:
    """Preallocated host buffers between numpy arrays and ``device``.

    ``pin`` (default: whether ``device`` is CUDA) page-locks the buffers; the
    events that guard their reuse exist on CUDA only (elsewhere a copy is
    finished when it returns).
    """

    def __init__(self, device: torch.device | str, pin: bool | None = None) -> None:
        self.device = torch.device(device)
        self.pin = needs_pinning(self.device) if pin is None else pin
        self._cuda = self.device.type == "cuda"
        self._inputs: dict[str, _Slot] = {}
        self._replies: dict[str, _Slot] = {}

    def to_device(self, arrays: Mapping[str, Any], keys: Iterable[str] | None = None) -> dict[str, Tensor]:
        """The ``keys`` of ``arrays`` (all with None) on the device: each copied
        once into its pinned buffer, then sent without waiting."""
        keys = list(arrays.keys()) if keys is None else list(keys)
        out = {}
        for key in keys:
            source = torch.as_tensor(np.asarray(arrays[key]))
            slot = self._slot(self._inputs, key, source)
            host = slot.buffer[: source.shape[0]] if source.dim() else slot.buffer
            _wait(slot)
            host.copy_(source)
            out[key] = host.to(self.device, non_blocking=True)
            slot.copied = self._record()
        return out

    def to_host(self, tensors: Mapping[str, Tensor]) -> dict[str, np.ndarray]:
        """``tensors`` (on the device) as numpy arrays of host buffers: every copy
        queued without waiting, then one wait for them all."""
        hosts = {}
        for key, tensor in tensors.items():
            slot = self._slot(self._replies, key, tensor)
            host = slot.buffer[: tensor.shape[0]] if tensor.dim() else slot.buffer
            host.copy_(tensor.detach(), non_blocking=True)
            hosts[key] = host
        done = self._record()
        if done is not None:
            done.synchronize()
        return {key: host.numpy() for key, host in hosts.items()}

    def _slot(self, slots: dict[str, _Slot], key: str, like: Tensor) -> _Slot:
        """The buffer of ``key``, (re)allocated when ``like`` does not fit: its
        leading (batch) axis is the most rows seen, the rest must match."""
        slot = slots.get(key)
        fits = (
            slot is not None
            and slot.buffer.dtype == like.dtype
            and slot.buffer.shape[1:] == like.shape[1:]
            and (like.dim() == 0 or slot.buffer.shape[0] >= like.shape[0])
        )
        if not fits:
            if slot is not None:
                _wait(slot)  # the old buffer may still be read by a queued copy
            buffer = torch.empty(like.shape, dtype=like.dtype)
            slot = slots[key] = _Slot(buffer.pin_memory() if self.pin else buffer)
        return slot

    def _record(self) -> Any:
        """An event after the copies queued so far (CUDA), else None."""
        if not self._cuda:
            return None
        event = torch.cuda.Event()
        event.record(torch.cuda.current_stream(self.device))
        return event


def _wait(slot: _Slot) -> None:
    if slot.copied is not None:
        slot.copied.synchronize()
        slot.copied = None
