"""What the off-policy benchmarks share: an rlpytorch training that hands back
its trainer (for the training episodes' returns), and a Stable-Baselines3
callback writing ``rlpytorch.plot``'s columns."""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import numpy as np

import rlpytorch


def train_keeping_trainer(config: Any) -> tuple[rlpytorch.Run, Any]:
    """``rlpytorch.train(config)``'s run, and the trainer it built (its training
    episodes' returns are not in the ``Run``): the same steps as ``train``,
    through ``rlpytorch.Training`` so that the session stays in reach."""
    with rlpytorch.Training(config) as training:
        summary = training.learn(config.num_frames - training.frames)
        result = None if summary.interrupted else training.evaluate()
    session = training.session
    return rlpytorch.Run(training.folder, summary, result, config, session.logger.records), session.trainer


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
