"""Training speed on CartPole: rlpytorch's ActorCritic and PPO vs Stable-Baselines3 A2C and PPO.

One run trains each contender from scratch and reports, side by side:
training frames per second (environment steps per wall-clock second,
updates included), and the wall time and frames until the mean return of the
last 100 training episodes first reaches the target (475). Stable-Baselines3
runs with its default hyperparameters on 8 Gymnasium ``CartPole-v1``
environments (``make_vec_env``); rlpytorch runs ``rlpytorch.train``'s
defaults for each method on the engine's CartPole. Every contender uses the
same number of torch threads. Each rlpytorch method is compared with its
Stable-Baselines3 counterpart (ActorCritic with A2C, PPO with PPO). With
``--repeats N`` every contender trains N times (seeds ``seed .. seed+N-1``),
interleaved (all four contenders, then the next seed), and the tables show
medians; the ratios are medians of the per-repeat ratios. The tables go to
stdout and, with ``--out``, to a Markdown file.

    python benchmarks/bench_train.py --repeats 3 --out results.md
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import platform
import time
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

TARGET = 475.0


@dataclass
class Result:
    name: str
    frames: int
    seconds: float
    solved_seconds: float | None
    solved_frames: int | None

    @property
    def fps(self) -> float:
        return self.frames / self.seconds


METHOD_NAMES = {"actor_critic": "ActorCritic", "ppo": "PPO"}


def run_rlpytorch(method: str, seed: int, max_frames: int) -> Result:
    """``python -m rlpytorch.train`` with its defaults for ``method``, stopping at the target return."""
    from rlpytorch import train

    argv = ["--game", "cartpole", "--method", method, "--seed", str(seed)]
    argv += ["--num_frames", str(max_frames), "--stop_at_return", str(TARGET), "--save_dir", ""]
    argv += ["--no-progress", "--no-eval_at_end", "--log_every", str(10**12)]
    with redirect_stdout(io.StringIO()):
        summary = train.main(argv)["summary"]
    return Result(
        f"rlpytorch {METHOD_NAMES[method]}",
        summary.frames,
        summary.seconds,
        summary.target_reached_at,
        summary.target_reached_frames,
    )


def run_sb3(algo: str, seed: int, max_frames: int) -> Result:
    """Stable-Baselines3 ``algo`` with default hyperparameters on 8 environments."""
    from stable_baselines3 import A2C, PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    class StopAtTarget(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.start = time.perf_counter()
            self.solved: tuple[float, int] | None = None

        def _on_step(self) -> bool:
            episodes = self.model.ep_info_buffer
            if len(episodes) == episodes.maxlen and np.mean([e["r"] for e in episodes]) >= TARGET:
                self.solved = (time.perf_counter() - self.start, self.num_timesteps)
                return False
            return True

    env = make_vec_env("CartPole-v1", n_envs=8, seed=seed)
    model = {"a2c": A2C, "ppo": PPO}[algo]("MlpPolicy", env, seed=seed, device="cpu")
    callback = StopAtTarget()
    model.learn(total_timesteps=max_frames, callback=callback)
    seconds = time.perf_counter() - callback.start
    solved = callback.solved
    return Result(
        f"Stable-Baselines3 {algo.upper()}",
        model.num_timesteps,
        seconds,
        solved[0] if solved else None,
        solved[1] if solved else None,
    )


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def table(runs: list[list[Result]]) -> str:
    """One row per contender (``runs[i]``: its repeats): frames/s, wall time and
    frames to the target, medians over the repeats that reached it."""
    lines = [
        "| trainer | frames/s | time to 475 | frames to 475 | reached 475 | frames/s of each repeat |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for rs in runs:
        solved = [r for r in rs if r.solved_seconds is not None]
        seconds = _median([r.solved_seconds for r in solved])
        frames = _median([r.solved_frames for r in solved])
        each = ", ".join(f"{r.fps:,.0f}" for r in rs)
        lines.append(
            f"| {rs[0].name} | {_median([r.fps for r in rs]):,.0f} | "
            f"{f'{seconds:.1f} s' if seconds is not None else '-'} | "
            f"{f'{frames:,.0f}' if frames is not None else '-'} | {len(solved)} of {len(rs)} | {each} |"
        )
    return "\n".join(lines)


def ratios(pairs: list[tuple[list[Result], list[Result]]]) -> str:
    """rlpytorch over Stable-Baselines3, per pair: medians of the per-repeat
    frames/s ratios and time-to-target ratios (repeats where both reached it)."""
    lines = [
        "| rlpytorch vs Stable-Baselines3 | frames/s ratio | time-to-475 ratio | frames/s ratio of each repeat |",
        "|---|---:|---:|---|",
    ]
    for ours, theirs in pairs:
        fps = [o.fps / t.fps for o, t in zip(ours, theirs, strict=True)]
        times = [
            t.solved_seconds / o.solved_seconds
            for o, t in zip(ours, theirs, strict=True)
            if o.solved_seconds and t.solved_seconds is not None
        ]
        time_ratio = f"{_median(times):.1f}x" if times else "-"
        each = ", ".join(f"{x:.1f}x" for x in fps)
        lines.append(f"| {ours[0].name} vs {theirs[0].name} | {_median(fps):.1f}x | {time_ratio} | {each} |")
    return "\n".join(lines)


def machine() -> str:
    import gymnasium
    import stable_baselines3

    cpu = platform.processor() or platform.machine()
    if Path("/proc/cpuinfo").exists():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, torch {torch.__version__}, "
        f"numpy {np.__version__}, gymnasium {gymnasium.__version__}, "
        f"stable-baselines3 {stable_baselines3.__version__}; torch threads {torch.get_num_threads()}; "
        f"load average at the end {os.getloadavg()[0]:.1f}"
    )


def commit() -> str:
    """The checked-out commit (short hash, ``+`` when the tree has changes), or ``unknown``."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
        paths = ["rlpytorch", "benchmarks/bench_train.py"]
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", *paths], cwd=root)
    except OSError:
        return "unknown"
    return head.stdout.strip() + ("+" if dirty.returncode else "") if head.returncode == 0 else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frames", type=int, default=1_000_000, help="rlpytorch frame budget")
    parser.add_argument("--sb3_frames", type=int, default=300_000, help="Stable-Baselines3 frame budget")
    parser.add_argument("--repeats", type=int, default=1, help="trainings per contender (seeds seed, seed+1, ...)")
    parser.add_argument("--torch_threads", type=int, default=1)
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)

    contenders = {
        "actor_critic": lambda seed: run_rlpytorch("actor_critic", seed, args.frames),
        "ppo": lambda seed: run_rlpytorch("ppo", seed, args.frames),
        "sb3_a2c": lambda seed: run_sb3("a2c", seed, args.sb3_frames),
        "sb3_ppo": lambda seed: run_sb3("ppo", seed, args.sb3_frames),
    }
    results: dict[str, list[Result]] = {key: [] for key in contenders}
    loads = []
    for seed in range(args.seed, args.seed + args.repeats):
        for key, run in contenders.items():
            results[key].append(run(seed))
            print(f"seed {seed}: {results[key][-1].name}: {results[key][-1].fps:,.0f} FPS", flush=True)
        loads.append(os.getloadavg()[0])
    pairs = [(results["actor_critic"], results["sb3_a2c"]), (results["ppo"], results["sb3_ppo"])]
    seeds = f"seed {args.seed}" if args.repeats == 1 else f"seeds {args.seed}-{args.seed + args.repeats - 1}"
    text = (
        f"CartPole training, {seeds}, target: mean return of the last 100 training "
        f"episodes >= {TARGET:.0f}.\n\nMachine: {machine()}; load average after each repeat "
        f"{', '.join(f'{x:.1f}' for x in loads)}.\n"
        f"Measured {datetime.date.today().isoformat()} at commit {commit()}.\n\n"
        f"{table(list(results.values()))}\n\n{ratios(pairs)}\n"
    )
    print(text)
    if args.out:
        args.out.write_text(f"# Training benchmark: `benchmarks/bench_train.py`\n\n{text}")


if __name__ == "__main__":
    main()
