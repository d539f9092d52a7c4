"""A run's folder: what the run was, what it printed, what it learned.

Every training run writes into one folder (``--save_dir``, by default
``runs/<start time>``): ::

    config.yaml          the effective configuration (``--config config.yaml`` runs it again)
    run.yaml             the command line, working folder, start time and versions
                         (project commit, Python, torch, numpy)
    log.txt              the stats lines printed on stdout, and the final results
    progress.csv         one row per stats line
    events.out.tfevents.*  the same as TensorBoard scalars
    last.pt, model_<frames>.pt  checkpoints (weights, step, the configuration and
                         the training state: ``rlpytorch.run.resume``)

``python -m rlpytorch.evaluate --load <folder>`` evaluates its ``last.pt``;
``python -m rlpytorch.train --resume <folder>`` continues the run in it. A new
run refuses a folder that already holds a run (``check_run_dir``): nothing is
overwritten. While a run writes into its folder it holds it
(``elfpy.files.lock_folder``): a second run started on it is refused, naming
the process that holds it. A try that ends without writing a checkpoint of
its own (a bad option, a missing ``--load``, a signal before the first
checkpoint, a full disk) takes back what it wrote (``remover``): a new run's
folder is removed, so the same ``--save_dir`` works on the next try; a
resumed run's ``config.yaml`` and ``run.yaml`` are put back as they were, so
``--resume`` goes on from the last checkpoint. Every file lands whole
(``elfpy.files``).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from elfpy.files import TEMPORARY_FILES, write_text_atomically, writing_into

from ..core.args_provider import ArgsError
from ..core.plain_yaml import dump_yaml, load_yaml
from ..models.base import CheckpointNotFoundError

__all__ = [
    "LAST_CHECKPOINT",
    "check_run_dir",
    "checkpoint_path",
    "holds_run",
    "remover",
    "resolve_run_dir",
    "run_record",
    "versions",
    "write_run_files",
]

RUN_FILES = ("config.yaml", "run.yaml", "log.txt", "progress.csv", "last.pt")  # any of them: a run was here

LAST_CHECKPOINT = "last.pt"


def resolve_run_dir(template: str, now: datetime.datetime | None = None) -> Path | None:
    """The run's folder: ``template`` with ``{time}`` replaced by the start time
    (``YYYYmmdd-HHMMSS``); None for an empty template (write nothing)."""
    if not template:
        return None
    now = now or datetime.datetime.now()
    return Path(template.format(time=now.strftime("%Y%m%d-%H%M%S")))


def holds_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a run's files (configuration, logs or a checkpoint)."""
    return any((run_dir / name).exists() for name in RUN_FILES)


def check_run_dir(run_dir: Path, resumed_from: Path | None = None) -> None:
    """Refuse to write a run into a folder that holds another run: a new run
    (``resumed_from`` None) needs a folder without one, and a resumed run its
    checkpoint's own folder (it continues there, and its ``run.yaml`` must be
    readable) or one without a run."""
    if not holds_run(run_dir):
        return
    if resumed_from is None:
        raise ArgsError(f"--save_dir {run_dir} already holds a run: --resume {run_dir} continues it, "
                         "or choose another --save_dir")
    if run_dir.resolve() != resumed_from.parent.resolve():
        raise ArgsError(f"--save_dir {run_dir} already holds a run; a run resumed from {resumed_from} "
                         f"continues in {resumed_from.parent} or in a folder without a run")
    run_record(run_dir)


def run_record(run_dir: Path) -> dict[str, Any]:
    """What ``run.yaml`` in ``run_dir`` records (empty without one); ``ArgsError``
    in one line when it is damaged."""
    run_file = run_dir / "run.yaml"
    if not run_file.exists():
        return {}
    try:
        record = load_yaml(run_file.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        first = str(error).strip().splitlines()[0][:80]
        raise ArgsError(f"{run_file} is damaged ({first}): repair it, or move it away to resume "
                         "without the record of the earlier tries") from None
    if not isinstance(record, dict) or not isinstance(record.get("resumed", []), list):
        raise ArgsError(f"{run_file} is damaged (not a record of a run): repair it, or move it away to resume "
                         "without the record of the earlier tries")
    return record


def remover(run_dir: Path | None) -> Callable[[], None]:
    """What takes back everything written into ``run_dir`` from now on: the
    folder itself when it does not exist yet, else the files added, and the
    run's files rewritten since (``config.yaml``, ``run.yaml``) put back as they
    were. What it cannot remove (a folder made read-only) it leaves."""
    existed = set(run_dir.iterdir()) if run_dir is not None and run_dir.is_dir() else None
    kept = {name: (run_dir / name).read_bytes() for name in ("config.yaml", "run.yaml")
            if existed is not None and (run_dir / name).is_file()}

    def undo() -> None:
        if run_dir is None:
            return
        if existed is None:
            shutil.rmtree(run_dir, ignore_errors=True)
            return
        with contextlib.suppress(OSError):
            for path in set(run_dir.iterdir()) - existed if run_dir.is_dir() else ():
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            for name, content in kept.items():
                if (run_dir / name).read_bytes() != content:
                    write_text_atomically(run_dir / name, content.decode())

    return undo


def write_run_files(run_dir: Path, config: Mapping[str, Any], command: Sequence[str],
                    resumed_from: Path | None = None) -> None:
    """Write ``config.yaml`` and ``run.yaml`` into ``run_dir`` (made if missing). A
    resumed run (``resumed_from``, its checkpoint) rewrites ``config.yaml`` with
    its own effective configuration and appends itself to ``run.yaml``'s ``resumed``,
    and removes the temporary files a run killed while saving (SIGKILL) left behind."""
    first = run_record(run_dir) if resumed_from is not None else {}  # a damaged record: before any write
    run_dir.mkdir(parents=True, exist_ok=True)
    about = {
        "command": shlex.join(command),
        "cwd": os.getcwd(),
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "versions": versions(),
    }
    if resumed_from is not None:
        about = {**first, "resumed": [*first.get("resumed", []), {**about, "from": str(resumed_from)}]}
    with writing_into(run_dir):
        for stale in run_dir.glob(TEMPORARY_FILES):
            stale.unlink()
        write_text_atomically(run_dir / "config.yaml", dump_yaml(dict(config)))
        write_text_atomically(run_dir / "run.yaml", dump_yaml(about, sort_keys=False))


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
    root = Path(__file__).resolve().parents[2]  # the folder holding the rlpytorch package
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
        raise CheckpointNotFoundError(f"no checkpoint at {path} (give a checkpoint file, or a run folder holding one)")
    return path
