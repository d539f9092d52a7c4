"""The GPU path: training frames per second with real games over frames per
second on synthetic batches of the same shapes.

For each game and acting mode, one run measures:

- **synthetic**: the same model, trainer and update as training builds
  (``rlpytorch.Training``, built and never run), fed batches of the engine's
  exact keys, dtypes and shapes made up in numpy, one ``[T, B]`` update per
  ``(T - 1) * train_batch`` acting frames as in training, with no engine and no
  game: the most the model and update allow. Timed for ``--seconds`` after a
  warm-up.
- **real**: ``rlpytorch.train`` on the game (single-process runner)
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

How the models run is ``ModelInterface``'s settings, given here as in training:
``--compile MODE`` (``torch.compile``; ``reduce-overhead`` adds CUDA graphs),
``--amp bf16`` (autocast), ``--no-channels_last`` (NCHW convolutions, not
the default NHWC); ``--batch_scale K`` multiplies
the games, the actor batch and the train batch by ``K`` (shapes that fill a
GPU). A run with settings times their compilation inside the real run's
frames per second (the synthetic measure starts after its warm-up).

``--compare eager,default,reduce-overhead+bf16,...`` measures instead the
synthetic loop only, once per variant side by side in one run (acting as one
batch): each variant names the settings it adds to the eager run (``default``,
``reduce-overhead``, ``max-autotune``, ``aot_eager``: a compile mode; ``bf16``;
``nchw``: convolutions NCHW; ``eager``: none), joined by ``+``. Beside each FPS: its ratio
to the first variant, wall and CPU seconds, and the warm-up's seconds
(compilation and CUDA graph recording included); ``--profile FILE`` adds
where the CPU time went, per variant (cProfile, after the measure).

    python benchmarks/bench_gpu.py --device cuda        # meant to finish within 5 minutes on 16 cores + a GPU
    python benchmarks/bench_gpu.py --device cpu --seconds 2 --games cartpole   # the script itself, on a CPU
    python benchmarks/bench_gpu.py --device cuda --seconds 4 --compare eager,default,reduce-overhead,\\
        reduce-overhead+bf16,nchw
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import os
import platform
import pstats
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch._dynamo
from cpu_info import cpu_name

import rlpytorch
from rlpytorch.models.interface import AMP_DTYPES, COMPILE_MODES

METHOD = "actor_critic"


@dataclass
class Game:
    num_games: int
    T: int
    train_batch: int
    options: dict[str, Any]  # training settings besides num_games, T and train_batch
    max_frames: int = 10**12  # of the real run: an emulator far slower than the model would take minutes

    def settings(self, mode: str, scale: int = 1) -> dict[str, Any]:
        """The game's training settings in acting ``mode`` (one batch of all
        games, or alternating halves), with ``scale`` times the games and rows."""
        games = self.num_games * scale
        acting = {"alternate": True} if mode == "alternating" else {"actor_batch": games}
        return {**self.options, "num_games": games, "T": self.T, "train_batch": self.train_batch * scale, **acting}


GAMES = {
    "cartpole": Game(1024, 6, 256, {"game": "cartpole", "hidden": 512, "layers": 3}),
    "minirts": Game(512, 6, 128, {"game": "minirts", "game_options": "frame_skip=10"}),
    "pong": Game(64, 6, 32, {"game": "gym:ALE/Pong-v5", "preset": "atari"}, 150_000),
}
MODES = ("one batch", "alternating")
# The variants of --compare: each word, the training settings it adds.
VARIANT_WORDS: dict[str, dict[str, Any]] = {
    "eager": {},
    **{mode: {"compile": mode} for mode in COMPILE_MODES if mode != "none"},
    "bf16": {"amp": "bf16"},
    "nchw": {"channels_last": False},
}
PROFILE_ROWS = 30
WARMUP_UPDATES = 5  # compiled variants: the graphs of acting and of an update compiled, CUDA graphs recorded
QUIET = {"save_dir": "", "progress": False, "eval_at_end": False, "log_every": 10**12}


@dataclass
class Measure:
    frames: int
    wall: float  # seconds
    cpu: float  # seconds, this process and its children
    fps: float
    warmup: float = 0.0  # wall seconds before the timing (synthetic: compilation included)


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


def synthetic(settings: dict[str, Any], seconds: float, profile: list[str] | None = None) -> tuple[Measure, int]:
    """Acting and updates of training's own trainer on made-up batches; returns
    the measure and the actor batch size. With a ``profile`` list, ``seconds``
    more under cProfile after the measure add its report to the list."""
    torch._dynamo.reset()  # each measure compiles its own models: the warm-up counts it
    config = rlpytorch.config(**{**settings, **QUIET})
    # The run built as training builds it, never run: its trainer is kept, its
    # games stopped once their tags' shapes are read. Its configuration's print goes.
    with redirect_stdout(io.StringIO()), rlpytorch.Training(config) as training:
        trainer, gc = training.session.trainer, training.session.context
        actor, train = gc.tag_info("actor"), gc.tag_info("train")
        rng = np.random.default_rng(0)
        acting = [synthetic_batch(gc.spec("actor"), actor.batch_size, 1, rng) for _ in range(4)]
        windows = [synthetic_batch(gc.spec("train"), train.batch_size, train.T, rng) for _ in range(2)]
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

    with Clock() as warmup:  # kernels, cuBLAS, the optimizer's state, compilation
        while updates < WARMUP_UPDATES:
            step()
        _synchronize()
    frames, updates, next_window = 0, 0, per_window
    with Clock() as clock:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            step()
        _synchronize()
    measure = Measure(frames, clock.wall, clock.cpu, frames / clock.wall, warmup.wall)
    if profile is not None:
        profile.append(profiled(step, seconds))
    return measure, actor.batch_size


def profiled(step: Callable[[], None], seconds: float) -> str:
    """``step`` repeated for ``seconds`` under cProfile: the functions of most own time
    (a wait for the GPU shows as the call that waited, e.g. ``item`` or ``synchronize``)."""
    profiler = cProfile.Profile()
    deadline = time.perf_counter() + seconds
    profiler.enable()
    while time.perf_counter() < deadline:
        step()
    _synchronize()
    profiler.disable()
    report = io.StringIO()
    pstats.Stats(profiler, stream=report).sort_stats("tottime").print_stats(PROFILE_ROWS)
    return report.getvalue()


def real(settings: dict[str, Any], frames: int) -> Measure:
    """``rlpytorch.train`` for ``frames`` frames; FPS over its training loop."""
    with Clock() as clock, redirect_stdout(io.StringIO()):
        summary = rlpytorch.train(rlpytorch.config(**{**settings, "num_frames": frames, **QUIET})).summary
    return Measure(summary.frames, clock.wall, clock.cpu, summary.fps)


def _synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def machine(device: str) -> str:
    cpu = cpu_name()
    gpu = f"; {torch.cuda.get_device_name(torch.device(device))}" if torch.device(device).type == "cuda" else ""
    return (f"{cpu}, {os.cpu_count()} cores{gpu}; Python {platform.python_version()}, torch {torch.__version__}; "
            f"device {device}")


def variant_settings(variant: str) -> dict[str, Any]:
    """The training settings of a ``--compare`` variant (words joined by ``+``)."""
    words = [w.strip() for w in variant.split("+")]
    unknown = [w for w in words if w not in VARIANT_WORDS]
    if unknown:
        raise ValueError(f"variant {variant!r}: unknown {unknown}; words: {list(VARIANT_WORDS)}")
    return {name: value for w in words for name, value in VARIANT_WORDS[w].items()}


def compare(games: list[str], settings: dict[str, dict[str, Any]], args: argparse.Namespace,
            profiles: list[str] | None = None) -> list[str]:
    """The synthetic measure of each game under each variant (name: its settings), acting
    as one batch; with ``profiles``, each measure's cProfile report is added to it."""
    header = ("| game | variant | actor batch | synthetic FPS | x first | wall s | CPU s | CPU / wall | "
              "warm-up s |")
    lines = [header, "|" + "---|" * 9]
    print("\n".join(lines), flush=True)
    for game in games:
        first = None
        for variant, run in settings.items():
            made_up, batch = synthetic({**GAMES[game].settings("one batch", args.batch_scale),
                                        "device": args.device, "method": METHOD, **run}, args.seconds, profiles)
            if profiles is not None:
                profiles[-1] = f"== {game}, {variant}\n{profiles[-1]}"
            first = first or made_up.fps
            line = (f"| {game} | {variant} | {batch} | {made_up.fps:,.0f} | {made_up.fps / first:.2f} | "
                    f"{made_up.wall:.1f} | {made_up.cpu:.1f} | {made_up.cpu / made_up.wall:.2f} | "
                    f"{made_up.warmup:.1f} |")
            lines.append(line)
            print(line, flush=True)
    return lines


def real_and_synthetic(games: list[str], args: argparse.Namespace, run: dict[str, Any]) -> list[str]:
    """For each game and acting mode, training with real games over the synthetic loop, settings ``run``."""
    header = ("| game | acting | actor batch | synthetic FPS | real FPS | real / synthetic | real wall s | "
              "real CPU s | synthetic wall s | synthetic CPU s |")
    lines = [header, "|" + "---|" * 10]
    print("\n".join(lines), flush=True)
    for game in games:
        for mode in MODES:
            spec = GAMES[game]
            settings = {**spec.settings(mode, args.batch_scale), "device": args.device, "method": METHOD, **run}
            made_up, batch = synthetic(settings, args.seconds)
            # At least 10 windows per game, so that filling the first windows
            # (no update yet) weighs little in the real run's FPS.
            frames = min(int(made_up.fps * args.seconds), spec.max_frames)
            played = real(settings, max(frames, 10 * spec.num_games * args.batch_scale * (spec.T - 1)))
            line = (f"| {game} | {mode} | {batch} | {made_up.fps:,.0f} | {played.fps:,.0f} | "
                    f"{played.fps / made_up.fps:.2f} | {played.wall:.1f} | {played.cpu:.1f} | "
                    f"{made_up.wall:.1f} | {made_up.cpu:.1f} |")
            lines.append(line)
            print(line, flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="the actor's and the learner's device (cuda, cpu, cuda:1, ...)")
    parser.add_argument("--games", default="cartpole,minirts,pong",
                        help="comma-separated, from " + ", ".join(GAMES) + " (pong only with ale_py installed)")
    parser.add_argument("--seconds", type=float, default=6.0, help="timed seconds of each synthetic measure")
    parser.add_argument("--compile", nargs="?", const="default", default="none", choices=COMPILE_MODES,
                        help="torch.compile mode of the models (alone: default; reduce-overhead: CUDA graphs)")
    parser.add_argument("--amp", default="none", choices=tuple(AMP_DTYPES),
                        help="autocast dtype of the models' forward passes")
    parser.add_argument("--channels_last", action=argparse.BooleanOptionalAction, default=True,
                        help="conv weights channels-last (NHWC), as training's default")
    parser.add_argument("--batch_scale", type=int, default=1, help="games, actor and train batch times this")
    parser.add_argument("--compare", help="comma-separated variants, synthetic only, side by side (see above)")
    parser.add_argument("--profile", type=Path, help="with --compare: after each measure, --seconds more under "
                        "cProfile; the functions of most own time, per measure, written to this file")
    parser.add_argument("--out", type=Path, help="also write the table (Markdown) to this file")
    args = parser.parse_args()
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {list(GAMES)}")
    if args.batch_scale < 1:
        parser.error(f"--batch_scale must be >= 1, got {args.batch_scale}")
    try:
        variants = {v.strip(): variant_settings(v) for v in (args.compare or "").split(",") if v.strip()}
    except ValueError as error:
        parser.error(str(error))
    if "pong" in games and importlib.util.find_spec("ale_py") is None:
        print("pong left out: ale_py is not installed")
        games.remove("pong")
    run = {"compile": args.compile, "amp": args.amp, "channels_last": args.channels_last}
    settings = "compared" if args.compare else ", ".join(f"{name} {value}" for name, value in run.items())
    lines = [f"GPU path, {machine(args.device)}; {settings}; batch scale {args.batch_scale}", ""]
    print("\n".join(lines), flush=True)
    if args.profile and not variants:
        parser.error("--profile goes with --compare")
    if variants:
        profiles: list[str] | None = [] if args.profile else None
        lines += compare(games, variants, args, profiles)
        if profiles is not None:
            args.profile.write_text("\n".join(profiles))
    else:
        lines += real_and_synthetic(games, args, run)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
