"""Torch devices as settings name them (``cpu``, ``cuda``, ``cuda:1``, ``mps``),
and whether this process can use them.

A device setting is declared with ``check=device_name``: its value is checked as
a device name when it is read (a typo is refused at once, on any machine), and
whether this torch on this machine can use it only when a run starts
(``check_devices``), so a configuration can be written on one machine for
another. An empty value stands for another setting's device (``--device``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from .args_provider import Arg, ArgsError, short_text

__all__ = ["check_devices", "device_name", "device_problem"]

DEVICE_KINDS = ("cpu", "cuda", "mps")  # the device types the library runs on


def device_name(name: str) -> None:
    """Refuse (ValueError) a ``name`` that is not a device of ``DEVICE_KINDS``, with an optional index."""
    if name == "":
        return
    try:
        kind = torch.device(name).type
    except (RuntimeError, TypeError):  # torch's own words list all of its two dozen device types
        kind = None
    if kind not in DEVICE_KINDS:
        raise ValueError(f"not a device of {', '.join(DEVICE_KINDS)} (e.g. cpu, cuda, cuda:1)")


def device_problem(name: str) -> str | None:
    """Why this process cannot put tensors on device ``name`` (one of
    ``device_name``'s), or None when it can."""
    device = torch.device(name)
    if device.type == "cuda":
        if torch.version.cuda is None:
            return f"this torch ({torch.__version__}) is built without CUDA"
        count = torch.cuda.device_count()
        if count == 0:
            return "CUDA sees no GPU on this machine"
        if device.index is not None and device.index >= count:
            return f"CUDA sees {count} GPU{'s' if count > 1 else ''} here (cuda:0 to cuda:{count - 1})"
    if device.type == "mps" and not torch.backends.mps.is_available():
        return "this torch cannot use MPS on this machine"
    return None


def check_devices(config: Any, args: Iterable[Arg]) -> None:
    """``ArgsError`` naming every device setting among ``args`` whose value in
    ``config`` (a settings dataclass) this process cannot use, before anything
    is built or written."""
    problems = []
    for arg in args:
        name = getattr(config, arg.name, None) or ""
        if arg.check is device_name and name:
            problem = device_problem(name)
            if problem is not None:
                problems.append(f"--{arg.name} {short_text(name)}: {problem}")
    if problems:
        raise ArgsError("; ".join(problems))
