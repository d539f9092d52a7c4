"""Runs MinAtar's own reference DQN (``examples/dqn.py`` of github.com/kenjyoung/MinAtar)
headless, with a frame budget and a seed, and logs the statistic rlpytorch's runs log:
the mean return of the last 100 training episodes, as a ``progress.csv`` that
``python -m rlpytorch.plot`` reads (columns ``frames``, ``time``, ``episodes``,
``return_mean``, ...).

MinAtar is GPL-3.0, so its code is not copied here: this script imports the
file from wherever you keep a copy and runs its ``dqn()`` unchanged. Get it with

    git clone https://github.com/kenjyoung/MinAtar /tmp/MinAtar   # measured at commit 4241f24
    python benchmarks/minatar_reference_dqn.py --reference /tmp/MinAtar/examples/dqn.py \
        --game breakout --seed 0 --frames 250000 --out runs/reference_dqn_breakout/seed0

What this runner sets around the unchanged ``dqn()``: ``NUM_FRAMES`` (the module's
constant, 5M in the file) to ``--frames``; the seeds of ``random``, ``numpy``,
``torch`` and the game's own generator (the file seeds none); one torch thread
(this machine's 2 cores are shared); the output file of its ``torch.save`` under
``--out`` (``<game>_data_and_weights``, 0.6 MB: weights and returns, not for
committing). The episode returns and frames are counted by a thin wrapper around
the game (the same ``G`` and ``t`` the file keeps, which it only writes at the end).

One-piece swaps towards rlpytorch's set-up (each off by default, so the default is
the reference as published): ``--minimal_actions`` (the 3 actions of
``MinAtar/Breakout-v1``, as our config plays, instead of all 6), ``--sticky`` and
``--no_ramping`` (the game's options; the file uses MinAtar's defaults, 0.1 and on).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from elfpy.files import write_text_atomically

COLUMNS = ("frames", "time", "episodes", "return_mean", "return_std", "length_mean")
LOG_EVERY = 10_000  # frames between progress rows
WINDOW = 100  # episodes in the mean, as rlpytorch's stats line


def load_reference(path: Path) -> Any:
    """MinAtar's examples/dqn.py as a module (its main() does not run)."""
    spec = importlib.util.spec_from_file_location("minatar_reference_dqn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CountingGame:
    """MinAtar's ``Environment`` as the reference calls it (``act``, ``state``, ``reset``,
    ``state_shape``, ``num_actions``), counting frames and episode returns on the way,
    and writing a progress row every ``LOG_EVERY`` frames."""

    def __init__(self, game: Any, actions: list[int], out: Path) -> None:
        self.game, self.actions, self.out = game, actions, out
        self.frames, self.episode_return, self.episode_length = 0, 0.0, 0
        self.returns: list[float] = []
        self.lengths: list[int] = []
        self.rows: list[str] = [",".join(COLUMNS)]
        self.start = time.monotonic()

    def act(self, action: Any) -> tuple[float, bool]:
        reward, terminal = self.game.act(self.actions[int(action)])
        self.frames += 1
        self.episode_return += float(reward)
        self.episode_length += 1
        if terminal:
            self.returns.append(self.episode_return)
            self.lengths.append(self.episode_length)
            self.episode_return, self.episode_length = 0.0, 0
        if self.frames % LOG_EVERY == 0:
            self.log()
        return reward, terminal

    def log(self) -> None:
        last, lengths = np.array(self.returns[-WINDOW:]), np.array(self.lengths[-WINDOW:])
        mean = last.mean() if last.size else float("nan")
        row = (self.frames, time.monotonic() - self.start, len(self.returns), mean,
               last.std() if last.size else float("nan"), lengths.mean() if lengths.size else float("nan"))
        self.rows.append(",".join(str(v) for v in row))
        write_text_atomically(self.out / "progress.csv", "\n".join(self.rows) + "\n")
        print(f"F {self.frames:,} | t {row[1]:.0f} | episodes {len(self.returns)} | "
              f"R {mean:.2f} (last {last.size}) | len {row[5]:.1f} | FPS {self.frames / row[1]:.0f}", flush=True)

    def state(self) -> Any:
        return self.game.state()

    def reset(self) -> None:
        self.episode_return, self.episode_length = 0.0, 0  # (the reference resets only after an end)
        self.game.reset()

    def state_shape(self) -> Any:
        return self.game.state_shape()

    def num_actions(self) -> int:
        return len(self.actions)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True, help="MinAtar's examples/dqn.py")
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frames", type=int, default=250_000)
    parser.add_argument("--out", type=Path, required=True, help="run folder (progress.csv, the reference's data)")
    parser.add_argument("--minimal_actions", action="store_true", help="the game's minimal action set (v1)")
    parser.add_argument("--sticky", type=float, default=0.1, help="sticky-action probability (MinAtar's default)")
    parser.add_argument("--no_ramping", action="store_true", help="no difficulty ramping")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    reference = load_reference(args.reference)
    reference.NUM_FRAMES = args.frames
    from minatar import Environment

    game = Environment(args.game, sticky_action_prob=args.sticky, difficulty_ramping=not args.no_ramping)
    game.seed(args.seed)
    actions = game.minimal_action_set() if args.minimal_actions else list(range(game.num_actions()))
    args.out.mkdir(parents=True, exist_ok=True)
    print(" ".join(sys.argv), flush=True)
    counting = CountingGame(game, actions, args.out)
    reference.dqn(counting, replay_off=False, target_off=False, output_file_name=str(args.out / args.game))


if __name__ == "__main__":
    main()
