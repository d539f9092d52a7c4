"""The processor's name for the benchmarks' machine lines (imported by the
scripts beside it: ``python benchmarks/bench_x.py`` puts this folder first on
the path)."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_name() -> str:
    """``model name`` from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"
