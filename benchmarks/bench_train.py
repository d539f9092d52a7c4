"""Training speed on CartPole: rlpytorch beside Stable-Baselines3, each with its tuned and its default settings.

Every contender trains from scratch until the mean return of its last 100
training episodes reaches 475 or its frame budget runs out:

- rlpytorch: ``rlpytorch.train``'s defaults for ActorCritic and for PPO on
  the engine's CartPole, and the tuned CartPole configuration
  ``cartpole_fast`` (rlpytorch/configs/cartpole_fast.yaml), each built by
  ``rlpytorch.config``;
- Stable-Baselines3 A2C and PPO on Gymnasium's ``CartPole-v1``
  (``make_vec_env``, 8 environments), each with the hyperparameters rl-zoo
  tuned for CartPole-v1 (and rl-zoo's frame budget) and with the library's
  defaults. rl-zoo's A2C settings for CartPole-v1 are A2C's defaults (8
  environments, ``ent_coef`` 0, the default), so A2C runs once, as
  ``sb3_a2c_zoo``; ``sb3_a2c`` (the same with ``--sb3_frames``) and DQN with
  rl-zoo's settings or its defaults run on request (``--contenders``).

Reported for every contender, medians over the seeds: time and frames to the
target, counting every run (one that never reaches it counts at the wall time
and frames of its whole budget; the table says how many reached it), frames
per second, gradient steps (optimizer steps, counted by a hook on every torch
optimizer) per second, frames per gradient step, and the wall and CPU seconds
of the whole call (set-up included; CPU: ``time.process_time`` of this process,
every thread, plus reaped children). Time to target is counted from the start
of training (after set-up), alike for both libraries. Contenders run
interleaved, seed by seed, in an order that rotates with the seed; every
contender uses the same number of torch threads.

    python benchmarks/bench_train.py --repeats 10 --out results.md
    python benchmarks/bench_train.py --repeats 10 --record   # append the figures to benchmarks/results.jsonl
"""

from __future__ import annotations

import argparse
import datetime
import functools
import io
import os
import platform
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import report
import torch
from cpu_info import cpu_name
from torch.optim.optimizer import register_optimizer_step_post_hook

TARGET = 475.0
ROOT = Path(__file__).resolve().parent.parent


class StepCounter:
    """Counts the optimizer steps of every torch optimizer in this process."""

    steps = 0

    @classmethod
    def hook(cls, *_: object) -> None:
        cls.steps += 1


register_optimizer_step_post_hook(StepCounter.hook)


@dataclass
class Result:
    """One training run. A run that missed the target counts its whole run
    (``seconds``, ``frames``) as its time and frames to the target."""

    name: str
    frames: int
    seconds: float  # training, from its start to its stop
    grad_steps: int
    wall: float  # the whole call, set-up included
    cpu: float  # CPU seconds of the whole call: every thread of this process, plus reaped children
    solved_seconds: float | None
    solved_frames: int | None

    @property
    def reached(self) -> bool:
        return self.solved_seconds is not None

    @property
    def time_to_target(self) -> float:
        return self.solved_seconds if self.reached else self.seconds

    @property
    def frames_to_target(self) -> int:
        return self.solved_frames if self.reached else self.frames


def cpu_seconds() -> float:
    """CPU seconds of this process (all threads) and of its reaped children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def measured(run: Callable[[], tuple[str, int, float, float | None, int | None]]) -> Result:
    """``run()`` with its wall time, CPU time and optimizer steps."""
    steps, cpu, wall = StepCounter.steps, cpu_seconds(), time.perf_counter()
    name, frames, seconds, solved_seconds, solved_frames = run()
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    return Result(name, frames, seconds, StepCounter.steps - steps, wall, cpu, solved_seconds, solved_frames)


# --- contenders ---------------------------------------------------------------


def rlpytorch_run(name: str, file: str | None, settings: dict[str, Any],
                  seed: int) -> tuple[str, int, float, float | None, int | None]:
    """``rlpytorch.train`` of the shipped config ``file`` (None: the defaults) with
    ``settings`` over it, stopping at the target return."""
    import rlpytorch

    config = rlpytorch.config(file, game="cartpole", **settings, seed=seed, stop_at_return=TARGET, save_dir="",
                              progress=False, eval_at_end=False, log_every=10**12)
    with redirect_stdout(io.StringIO()):
        s = rlpytorch.train(config).summary
    return name, s.frames, s.seconds, s.target_reached_at, s.target_reached_frames


def linear(start: float) -> Callable[[float], float]:
    """rl-zoo's ``lin_<start>``: ``start`` times the remaining progress (1 -> 0)."""
    return lambda remaining: remaining * start


# rl-zoo (hyperparams/*.yml, CartPole-v1): algorithm, budget, constructor arguments.
SB3_ZOO = {
    "a2c": (500_000, {"ent_coef": 0.0}),
    "ppo": (100_000, {"n_steps": 32, "batch_size": 256, "gae_lambda": 0.8, "gamma": 0.98, "n_epochs": 20,
                      "ent_coef": 0.0, "learning_rate": linear(1e-3), "clip_range": linear(0.2)}),
    "dqn": (50_000, {"learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100_000, "learning_starts": 1000,
                     "gamma": 0.99, "target_update_interval": 10, "train_freq": 256, "gradient_steps": 128,
                     "exploration_fraction": 0.16, "exploration_final_eps": 0.04,
                     "policy_kwargs": {"net_arch": [256, 256]}}),
}
SB3_ENVS = {"a2c": 8, "ppo": 8, "dqn": 1}


def sb3_run(algo: str, zoo: bool, budget: int, seed: int) -> tuple[str, int, float, float | None, int | None]:
    """Stable-Baselines3 ``algo`` with rl-zoo's CartPole-v1 settings (``zoo``) or its defaults."""
    from stable_baselines3 import A2C, DQN, PPO
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

    env = make_vec_env("CartPole-v1", n_envs=SB3_ENVS[algo], seed=seed)
    kwargs = SB3_ZOO[algo][1] if zoo else {}
    model = {"a2c": A2C, "ppo": PPO, "dqn": DQN}[algo]("MlpPolicy", env, seed=seed, device="cpu", **kwargs)
    callback = StopAtTarget()
    model.learn(total_timesteps=budget, callback=callback)
    seconds = time.perf_counter() - callback.start
    solved = callback.solved
    name = f"Stable-Baselines3 {algo.upper()} {'rl-zoo' if zoo else 'defaults'}"
    return name, model.num_timesteps, seconds, solved[0] if solved else None, solved[1] if solved else None


def contenders(args: argparse.Namespace) -> dict[str, Callable[[int], tuple]]:
    """Every contender by key: a function of the seed returning ``rlpytorch_run``'s tuple."""
    budget = {"num_frames": args.frames}
    table: dict[str, Callable[[int], tuple]] = {
        "fast": lambda s: rlpytorch_run("rlpytorch cartpole_fast.yaml", "cartpole_fast", {}, s),
        "actor_critic": lambda s: rlpytorch_run("rlpytorch ActorCritic defaults", None, budget, s),
        "ppo": lambda s: rlpytorch_run("rlpytorch PPO defaults", None, {"method": "ppo", **budget}, s),
    }
    for algo, (zoo_budget, _) in SB3_ZOO.items():
        table[f"sb3_{algo}_zoo"] = lambda s, a=algo, b=zoo_budget: sb3_run(a, True, b, s)
        table[f"sb3_{algo}"] = lambda s, a=algo: sb3_run(a, False, args.sb3_frames, s)
    return table


DEFAULT_CONTENDERS = ["fast", "actor_critic", "ppo", "sb3_a2c_zoo", "sb3_ppo_zoo", "sb3_ppo"]


# --- reporting ----------------------------------------------------------------


def _median(values: list[float]) -> float:
    return float(np.median(values))


PEER = "Stable-Baselines3 PPO rl-zoo"  # every rlpytorch contender's peer on the page


def figures(runs: list[list[Result]]) -> list[dict]:
    """The page's figures (``runs[i]``: a contender's repeats): time and frames
    to 475 and the CPU of the whole call, each repeat counted (a run that
    missed the target at its whole budget, as a failure)."""
    out = []
    for rs in runs:
        ours = rs[0].name.startswith("rlpytorch")
        for metric, unit, values in (("time to 475", "s", [r.time_to_target for r in rs]),
                                     ("frames to 475", "", [r.frames_to_target for r in rs]),
                                     ("CPU, whole call", "s", [r.cpu for r in rs])):
            goal = metric == "time to 475" and rs[0].name == "rlpytorch cartpole_fast.yaml"
            out.append(dict(benchmark="training", row=rs[0].name, metric=metric, unit=unit, values=values,
                            better="lower", failures=sum(not r.reached for r in rs),
                            peer=PEER if ours else None,
                            reference={"label": "issue 16's goal", "ratio": 10} if goal else None))
    return out


def table(runs: list[list[Result]]) -> str:
    """Where the time goes, one row per contender (``runs[i]``: its repeats), medians over every repeat."""
    lines = [
        "| trainer | reached | frames/s | grad steps/s | frames per grad step | wall s | CPU / wall |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for rs in runs:
        fps = _median([r.frames / r.seconds for r in rs])
        steps_per_s = _median([r.grad_steps / r.seconds for r in rs])
        frames_per_step = _median([r.frames / max(r.grad_steps, 1) for r in rs])
        lines.append(
            f"| {rs[0].name} | {sum(r.reached for r in rs)} of {len(rs)} | {fps:,.0f} | {steps_per_s:,.0f} "
            f"| {frames_per_step:,.1f} | {_median([r.wall for r in rs]):.1f} "
            f"| {_median([r.cpu / r.wall for r in rs]):.2f} |"
        )
    return "\n".join(lines)


def each_repeat(runs: list[list[Result]]) -> str:
    """Time to the target of every repeat (``*``: budget ran out first)."""
    lines = ["| trainer | time to 475 of each seed (s; * = not reached, whole run) |", "|---|---|"]
    for rs in runs:
        each = ", ".join(f"{r.time_to_target:.1f}{'' if r.reached else '*'}" for r in rs)
        lines.append(f"| {rs[0].name} | {each} |")
    return "\n".join(lines)


def ratios(results: dict[str, list[Result]]) -> str:
    """Time to target of the best Stable-Baselines3 contender (lowest median)
    over each rlpytorch contender's: ratio of the medians, and the median of
    the per-seed ratios."""
    sb3 = {k: v for k, v in results.items() if k.startswith("sb3_")}
    if not sb3:
        return ""
    best = min(sb3.values(), key=lambda rs: _median([r.time_to_target for r in rs]))
    best_median = _median([r.time_to_target for r in best])
    lines = [
        f"| rlpytorch vs the best Stable-Baselines3 contender ({best[0].name}) | ratio of median times to 475 "
        "| median of per-seed ratios | frames/s ratio |",
        "|---|---:|---:|---:|",
    ]
    for key, ours in results.items():
        if key.startswith("sb3_"):
            continue
        per_seed = [t.time_to_target / o.time_to_target for o, t in zip(ours, best, strict=True)]
        fps = _median([r.frames / r.seconds for r in ours]) / _median([r.frames / r.seconds for r in best])
        lines.append(
            f"| {ours[0].name} | {best_median / _median([r.time_to_target for r in ours]):.1f}x "
            f"| {_median(per_seed):.1f}x | {fps:.1f}x |"
        )
    return "\n".join(lines)


def machine() -> str:
    import gymnasium
    import stable_baselines3

    cpu = cpu_name()
    return (
        f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, torch {torch.__version__}, "
        f"numpy {np.__version__}, gymnasium {gymnasium.__version__}, "
        f"stable-baselines3 {stable_baselines3.__version__}; torch threads {torch.get_num_threads()}"
    )


def warm_up() -> None:
    """Import what the contenders import (torch's fused Adam pulls in torch._dynamo,
    about 3 s), so the first contender does not pay for everyone."""
    import stable_baselines3  # noqa: F401
    import torch._dynamo  # noqa: F401

    from rlpytorch import training  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="trainings per contender (seeds seed, seed+1, ...)")
    parser.add_argument("--frames", type=int, default=1_000_000, help="frame budget of rlpytorch's default runs")
    parser.add_argument("--sb3_frames", type=int, default=300_000,
                        help="frame budget of Stable-Baselines3's default runs (rl-zoo runs: rl-zoo's budget)")
    parser.add_argument("--contenders", nargs="+", default=DEFAULT_CONTENDERS,
                        choices=[*DEFAULT_CONTENDERS, "sb3_a2c", "sb3_dqn_zoo", "sb3_dqn"])
    parser.add_argument("--torch_threads", type=int, default=1)
    parser.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    report.add_options(parser)
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    warm_up()

    runners = contenders(args)
    keys = list(args.contenders)
    results: dict[str, list[Result]] = {key: [] for key in keys}
    loads = [os.getloadavg()[0]]
    for i, seed in enumerate(range(args.seed, args.seed + args.repeats)):
        for key in keys[i % len(keys):] + keys[: i % len(keys)]:
            r = measured(functools.partial(runners[key], seed))
            results[key].append(r)
            print(f"seed {seed}: {r.name}: {r.time_to_target:.2f} s{'' if r.reached else ' (not reached)'}, "
                  f"{r.frames_to_target:,} frames, {r.frames / r.seconds:,.0f} FPS, "
                  f"CPU {r.cpu:.1f} s / wall {r.wall:.1f} s, load {os.getloadavg()[0]:.1f}", flush=True)
        loads.append(os.getloadavg()[0])
    seeds = f"seed {args.seed}" if args.repeats == 1 else f"seeds {args.seed}-{args.seed + args.repeats - 1}"
    runs = list(results.values())
    text = (
        f"CartPole training, {seeds}, target: mean return of the last 100 training episodes >= {TARGET:.0f}; "
        f"medians over every seed, a run that missed the target at its whole budget.\n\n"
        f"Machine: {machine()}; load average (1 min) at the start and after each seed "
        f"{', '.join(f'{x:.1f}' for x in loads)}.\n"
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC "
        f"at commit {report.current_commit()}.\n"
    )
    print(text)
    text += "\n" + report.publish(figures(runs), args)  # the page's figures, printed (and recorded with --record)
    details = f"{table(runs)}\n\n{ratios(results)}\n\n{each_repeat(runs)}\n"
    print(f"\n{details}")
    if args.out:
        args.out.write_text(f"# Training benchmark: `benchmarks/bench_train.py`\n\n{text}\n\n{details}")


if __name__ == "__main__":
    main()
