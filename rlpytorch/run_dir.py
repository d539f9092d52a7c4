"""A run's folder: what the run was, what it printed, what it learned.

Every training run writes into one folder (``--save_dir``, by default
``runs/<start time>``):

    config.yaml          the effective configuration (``--config config.yaml`` runs it again)
    run.yaml             the command line, working folder, start time and versions
                         (project commit, Python, torch, numpy)
    log.txt              the stats lines printed on stdout, and the final results
    progress.csv         one row per stats line
    events.out.tfevents.*  the same as TensorBoard scalars
    last.pt, model_<frames>.pt  checkpoints (weights, step and the configuration)

``python -m rlpytorch.evaluate --load <folder>`` evaluates its ``last.pt``.
"""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from .args_provider import setting

__all__ = ["LAST_CHECKPOINT", "checkpoint_path", "resolve_run_dir", "save_dir_setting", "versions", "write_run_files"]

LAST_CHECKPOINT = "last.pt"


def save_dir_setting() -> Any:
    """``--save_dir``, a setting of every script that writes a run folder."""
    return setting(
        "runs/{time}",
        "the run's folder: configuration, command line, versions, logs, checkpoints "
        "({time}: the start time; empty: write nothing)",
    )


def resolve_run_dir(template: str, now: datetime.datetime | None = None) -> Path | None:
    """The run's folder: ``template`` with ``{time}`` replaced by the start time
    (``YYYYmmdd-HHMMSS``); None for an empty template (write nothing)."""
    if not template:
        return None
    now = now or datetime.datetime.now()
    return Path(template.format(time=now.strftime("%Y%m%d-%H%M%S")))


def write_run_files(run_dir: Path, config: Mapping[str, Any], command: Sequence[str]) -> None:
    """Create ``run_dir`` and write ``config.yaml`` and ``run.yaml`` into it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(dict(config), sort_keys=True))
    about = {
        "command": shlex.join(command),
        "cwd": os.getcwd(),
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "versions": versions(),
    }
    (run_dir / "run.yaml").write_text(yaml.safe_dump(about, sort_keys=False))


def versions() -> dict[str, Any]:
    """The project's commit (``+`` when its files differ from it; None outside a
    git checkout), Python, torch and numpy."""
    return {
        "commit": _project_commit(),
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "numpy": str(np.__version__),
    }


def _project_commit() -> str | None:
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
        if head.returncode != 0:
            return None
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                capture_output=True, text=True)
    except OSError:  # no git
        return None
    return head.stdout.strip() + ("+" if status.stdout.strip() else "")


def checkpoint_path(path: str | Path) -> Path:
    """``path`` itself for a checkpoint file, ``path/last.pt`` for a run folder."""
    path = Path(path)
    if path.is_dir():
        path = path / LAST_CHECKPOINT
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path} (give a checkpoint file, or a run folder holding one)")
    return path
