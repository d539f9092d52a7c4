"""What a training says on stdout besides its stats lines: where it writes, and how it ended.

A run starts with one line naming its folder and the file that holds its
whole configuration (``--verbose`` prints the configuration too); the stats
lines follow (``rlpytorch.core.stats.format_record``, cut to the screen's
width); it ends with a line on what it trained or, stopped by Ctrl-C or
SIGTERM, with what a user needs next: the frame it stopped at, the checkpoint
it saved and the command that goes on from there.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.args_provider import Configurable, format_config, setting
from .run_dir import LAST_CHECKPOINT

__all__ = ["Screen", "end_lines", "start_lines"]

CONFIG_FILE = "config.yaml"  # written into the run's folder by run_dir.write_run_files


@dataclass
class Screen(Configurable):
    """How much a training prints before its stats lines."""

    verbose: bool = setting(False, "print the effective configuration at the start (the run's folder holds it "
                                   f"in {CONFIG_FILE} either way)")


def start_lines(folder: Path | None, config: Mapping[str, Any], verbose: bool) -> list[str]:
    """The lines a run prints as it starts: with ``verbose`` its configuration, then where it writes."""
    lines = ["effective configuration:\n" + format_config(config)] if verbose else []
    if folder is None:
        lines.append("no run folder (--save_dir is empty): nothing is written"
                     + ("" if verbose else "; --verbose prints the configuration"))
    else:
        lines.append(f"run folder: {folder} (configuration in {CONFIG_FILE}"
                     + (")" if verbose else "; --verbose prints it)"))
    return lines


def end_lines(summary: Any, folder: Path | None, resume: str | None) -> list[str]:
    """The lines a run's ``summary`` (``RunSummary``) ends with. Stopped: at
    which frame, what its ``folder`` holds to go on from, and the command that
    does (``resume``: the command line's program, e.g. ``python -m
    rlpytorch.train``; None: the run came from Python)."""
    speed = f"{summary.frames:,} frames in {summary.seconds:.1f}s ({summary.fps:,.0f} FPS)"
    if not summary.interrupted:
        return [f"trained {speed}"]
    lines = [f"stopped by a signal at frame {summary.frames:,}: trained {speed}"]
    checkpoint = folder / LAST_CHECKPOINT if folder is not None else None
    if checkpoint is None or not checkpoint.is_file():
        return [*lines, "nothing was saved (no run folder)" if folder is None else f"nothing was saved in {folder}"]
    go_on = (f"{resume} --resume {shlex.quote(str(folder))}" if resume is not None
             else f"rlpytorch.train(rlpytorch.config(resume={str(folder)!r}))")
    return [*lines, f"saved {checkpoint} (weights and training state at frame {summary.frames:,})",
            f"to go on: {go_on}"]
