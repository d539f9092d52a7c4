"""The GPU path: training frames per second with real games over frames per
second on synthetic batches of the same shapes.

For each game and acting mode, one run measures:

- **synthetic**: the same model, trainer and update as training builds
  (``rlpytorch.train``'s own assembly), fed batches of the engine's exact keys,
  dtypes and shapes made up in numpy, one ``[T, B]`` update per
  ``(T - 1) * train_batch`` acting frames as in training, with no engine and no
  game: the most the model and update allow. Timed for ``--seconds`` after a
  warm-up.
- **real**: ``python -m rlpytorch.train`` on the game (single-process runner)
  for as many frames as the synthetic loop did in ``--seconds`` (Pong: at
  most 150,000, as its emulator may be much slower than the model).

The ratio real / synthetic says how much of the model's speed training keeps
with real games (goal on a GPU: at least 0.8). Modes: **one batch** (the actor
batch holds every game, so all games wait while it is on the device) and
**alternating** (``--alternate``: two halves, one steps while the other's batch
is on the device). CPU seconds (this process, its threads and its child
processes, e.g. hosted games' workers) stand beside wall seconds.

Games: CartPole (native C++) with a 3 x 512 MLP, MiniRTS (native C++) with the
conv model over its planes and scalars, and Atari Pong (Gymnasium hosted in
worker processes, the standard Atari preprocessing) if ``ale_py`` is installed.

    python benchmarks/bench_gpu.py --device cuda        # meant to finish within 5 minutes on 16 cores + a GPU
    python benchmarks/bench_gpu.py --device cpu --seconds 2 --games cartpole   # the script itself, on a CPU
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import platform
import time
from collections.abc import Iterator, Mapping
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from cpu_info import cpu_name

from rlpytorch.args_provider import ArgsProvider
from rlpytorch.game_loader import GameLoader
from rlpytorch.methods import METHODS
from rlpytorch.model_loader import ModelLoader
from rlpytorch.train import build_trainer, components
from rlpytorch.train import main as train_main

METHOD = "actor_critic"


@dataclass
class Game:
    num_games: int
    T: int
    argv: list[str]  # besides --num_games and --T
    max_frames: int = 10**12  # of the real run: an emulator far slower than the model would take minutes

    def settings(self, mode: str) -> list[str]:
        """The game's training settings in acting ``mode``: one batch of all
        games, or alternating halves."""
        acting = ["--alternate"] if mode == "alternating" else ["--actor_batch", str(self.num_games)]
        return [*self.argv, "--num_games", str(self.num_games), "--T", str(self.T), *acting]


GAMES = {
    "cartpole": Game(1024, 6, ["--game", "cartpole", "--train_batch", "256", "--hidden", "512", "--layers", "3"]),
    "minirts": Game(512, 6, ["--game", "minirts", "--game_options", "frame_skip=10", "--train_batch", "128"]),
    "pong": Game(64, 6, ["--game", "gym:ALE/Pong-v5", "--preset", "atari", "--train_batch", "32"], 150_000),
}
MODES = ("one batch", "alternating")
QUIET = ["--save_dir", "", "--no-progress", "--no-eval_at_end", "--log_every", str(10**12)]


@dataclass
class Measure:
    frames: int
    wall: float  # seconds
    cpu: float  # seconds, this process and its children
    fps: float


class Clock:
    """Wall and CPU seconds (user + system, this process's threads and its reaped children)."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), _cpu_seconds()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, _cpu_seconds() - self.cpu


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class SyntheticBatch(Mapping):
    """An engine-shaped batch made up in numpy: ``batch[key]``, ``len`` = rows, ``game_ids``, ``seats``."""

    def __init__(self, arrays: dict[str, np.ndarray], rows: int) -> None:
        self._arrays = arrays
        self.game_ids = np.arange(rows, dtype=np.int32)
        self.seats = np.zeros(rows, np.int32)

    def __getitem__(self, key: str) -> np.ndarray:
        return self._arrays[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self.game_ids)


def synthetic_batch(spec: Mapping[str, Any], rows: int, T: int, rng: np.random.Generator) -> SyntheticBatch:
    """Values of every key of a tag's ``spec``: observations random, actions in
    their space, ``pi`` uniform, an episode ending on about 1 row in 200."""
    lead = (rows,) if T == 1 else (T, rows)
    arrays = {}
    for key, ks in spec.items():
        shape = lead + tuple(ks.shape)
        if key == "terminal":
            value = rng.random(shape) < 1 / 200
        elif key == "pi":
            value = np.full(shape, 1.0 / ks.shape[-1])
        elif ks.space is not None and hasattr(ks.space, "n"):  # a Discrete action
            value = rng.integers(ks.space.start, ks.space.start + ks.space.n, shape)
        elif ks.space is not None and hasattr(ks.space, "nvec"):  # MultiDiscrete
            value = rng.integers(0, ks.space.nvec, shape)
        elif np.issubdtype(ks.dtype, np.floating) and key not in ("r", "episode_return", "logp"):
            value = rng.standard_normal(shape)
        else:
            value = np.zeros(shape)
        arrays[key] = np.ascontiguousarray(value, dtype=ks.dtype)
    return SyntheticBatch(arrays, rows)


def synthetic(argv: list[str], seconds: float) -> tuple[Measure, int]:
    """Acting and updates of training's own trainer on made-up batches; returns
    the measure and the actor batch size."""
    config = ArgsProvider(components(METHOD)).parse(argv, defaults=METHODS[METHOD].run_defaults)
    torch.manual_seed(config["seed"])
    torch.set_num_threads(config["torch_threads"])
    loader = GameLoader.from_config(config)
    gc = loader.context()
    try:
        model = ModelLoader.from_config(config).build(loader.observation_spec(gc), loader.num_actions(gc))
        trainer = build_trainer(METHOD, config, loader, gc, model)
        actor, train = gc.tag_info("actor"), gc.tag_info("train")
        rng = np.random.default_rng(0)
        acting = [synthetic_batch(gc.spec("actor"), actor.batch_size, 1, rng) for _ in range(4)]
        windows = [synthetic_batch(gc.spec("train"), train.batch_size, train.T, rng) for _ in range(2)]
    finally:
        gc.stop()
    per_window = (train.T - 1) * train.batch_size
    frames, updates, next_window = 0, 0, per_window

    def step() -> None:
        nonlocal frames, updates, next_window
        trainer.actor(acting[frames // actor.batch_size % len(acting)])
        frames += actor.batch_size
        if frames >= next_window:
            trainer.train(windows[updates % len(windows)])
            updates += 1
            next_window += per_window

    while updates < 3:  # warm-up: kernels, cuBLAS, the optimizer's state
        step()
    _synchronize()
    frames, updates, next_window = 0, 0, per_window
    with Clock() as clock:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            step()
        _synchronize()
    return Measure(frames, clock.wall, clock.cpu, frames / clock.wall), actor.batch_size


def real(argv: list[str], frames: int) -> Measure:
    """``rlpytorch.train`` for ``frames`` frames; FPS over its training loop."""
    with Clock() as clock, redirect_stdout(io.StringIO()):
        summary = train_main([*argv, "--num_frames", str(frames), *QUIET])["summary"]
    return Measure(summary.frames, clock.wall, clock.cpu, summary.fps)


def _synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def machine(device: str) -> str:
    cpu = cpu_name()
    gpu = f"; {torch.cuda.get_device_name(torch.device(device))}" if torch.device(device).type == "cuda" else ""
    return (f"{cpu}, {os.cpu_count()} cores{gpu}; Python {platform.python_version()}, torch {torch.__version__}; "
            f"device {device}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="the actor's and the learner's device (cuda, cpu, cuda:1, ...)")
    parser.add_argument("--games", default="cartpole,minirts,pong",
                        help="comma-separated, from " + ", ".join(GAMES) + " (pong only with ale_py installed)")
    parser.add_argument("--seconds", type=float, default=6.0, help="timed seconds of each synthetic measure")
    parser.add_argument("--out", type=Path, help="also write the table (Markdown) to this file")
    args = parser.parse_args()
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {list(GAMES)}")
    if "pong" in games and importlib.util.find_spec("ale_py") is None:
        print("pong left out: ale_py is not installed")
        games.remove("pong")
    header = ("| game | acting | actor batch | synthetic FPS | real FPS | real / synthetic | real wall s | "
              "real CPU s | synthetic wall s | synthetic CPU s |")
    lines = [f"GPU path, {machine(args.device)}", "", header, "|" + "---|" * 10]
    print("\n".join(lines), flush=True)
    for game in games:
        for mode in MODES:
            spec = GAMES[game]
            argv = [*spec.settings(mode), "--device", args.device, "--method", METHOD]
            made_up, batch = synthetic(argv, args.seconds)
            # At least 10 windows per game, so that filling the first windows
            # (no update yet) weighs little in the real run's FPS.
            frames = min(int(made_up.fps * args.seconds), spec.max_frames)
            played = real(argv, max(frames, 10 * spec.num_games * (spec.T - 1)))
            line = (f"| {game} | {mode} | {batch} | {made_up.fps:,.0f} | {played.fps:,.0f} | "
                    f"{played.fps / made_up.fps:.2f} | {played.wall:.1f} | {played.cpu:.1f} | "
                    f"{made_up.wall:.1f} | {made_up.cpu:.1f} |")
            lines.append(line)
            print(line, flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
