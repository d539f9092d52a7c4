"""What the off-policy benchmarks share: an rlpytorch training that hands back
its trainer (for the training episodes' returns), and a Stable-Baselines3
callback writing ``rlpytorch.plot``'s columns."""

from __future__ import annotations

import csv
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlpytorch import train


def train_keeping_trainer(argv: Sequence[str]) -> tuple[dict[str, Any], Any]:
    """``rlpytorch.train.main(argv)``'s result, and the trainer the run built."""
    trainers = []
    real_build = train.build_trainer

    def keep(*args: Any, **kwargs: Any) -> Any:
        trainers.append(real_build(*args, **kwargs))
        return trainers[-1]

    train.build_trainer = keep
    try:
        result = train.main(list(argv))
    finally:
        train.build_trainer = real_build
    return result, trainers[0]


def sb3_progress(folder: Path, stop_at: float | None = None, every: int = 2000) -> Any:
    """A Stable-Baselines3 callback writing ``folder/progress.csv`` (``frames``, ``time``,
    ``return_mean``: the mean of the last 100 training episodes) every ``every`` steps,
    and stopping the run once that mean over 100 episodes reaches ``stop_at``."""
    from stable_baselines3.common.callbacks import BaseCallback

    folder.mkdir(parents=True, exist_ok=True)

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            self.file = open(folder / "progress.csv", "w", newline="")  # noqa: SIM115 (closed at the end)
            self.csv = csv.writer(self.file)
            self.csv.writerow(["frames", "time", "return_mean"])
            self.start = time.perf_counter()

        def _on_step(self) -> bool:
            returns = [e["r"] for e in self.model.ep_info_buffer]
            if self.num_timesteps % every == 0:
                self.csv.writerow([self.num_timesteps, time.perf_counter() - self.start,
                                   np.mean(returns) if returns else "nan"])
                self.file.flush()
            return stop_at is None or not (len(returns) >= 100 and np.mean(returns) >= stop_at)

        def _on_training_end(self) -> None:
            self.file.close()

    return Progress()
