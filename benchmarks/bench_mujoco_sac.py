"""SAC (or TD3) on HalfCheetah-v5 for 200K steps: rlpytorch beside Stable-Baselines3, the same settings.

rlpytorch trains with the shipped config ``mujoco_halfcheetah_sac`` (``--algo td3``:
``mujoco_halfcheetah_td3``) (``rlpytorch.config``, run by ``rlpytorch.Training``;
Gymnasium's HalfCheetah-v5 hosted in a worker process); Stable-Baselines3 runs
its SAC or TD3 with rl-zoo's HalfCheetah settings on one ``HalfCheetah-v5``:
SAC, its defaults plus ``learning_starts=10000`` (networks 256x256, lr 3e-4,
batch 256, one update per step, automatic temperature); TD3, its defaults plus
``learning_starts=10000``, N(0, 0.1) action noise, lr 1e-3, batch 256, networks
400x300, one update per step (rl-baselines3-zoo ``hyperparams/sac.yml`` and
``td3.yml``, HalfCheetah-v4). Both take the same number of environment steps
and updates, one after each step (``--train_every N``: N updates after each N
steps, both sides). Reported per run: the mean return of the last 10 training
episodes, a deterministic evaluation over 10 episodes after training (not
timed), wall seconds of training, and CPU seconds of this process (the
engine's threads included, the hosted environment's worker process not;
rlpytorch's also cover its set-up and the final evaluation, seconds against
the hour of training). Each run writes ``progress.csv`` (``frames``, ``time``,
``return_mean``) under ``--out`` as it goes, for ``python -m rlpytorch.plot``.

``--contender swap`` (TD3 only) is the experiment that splits a gap between the
two: Stable-Baselines3's loop (its environment, replay buffer, warm-up,
exploration noise and schedule) acting with rlpytorch's model and training it
with rlpytorch's TD3 update on SB3's replayed batches. ``--our_exploration`` splits
it once more: the swap, with rlpytorch's ``Exploration`` (the warm-up's uniform
actions, then the Gaussian noise) in place of SB3's warm-up and ``NormalActionNoise``.

A contender per process, so the two can run side by side on two cores:

    python benchmarks/bench_mujoco_sac.py --contender rlpytorch --out runs/cheetah &
    python benchmarks/bench_mujoco_sac.py --contender sb3 --out runs/cheetah
    python benchmarks/bench_mujoco_sac.py --report --out runs/cheetah
"""

from __future__ import annotations

import argparse
import json
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch
from offpolicy_runs import sb3_progress, train_keeping_trainer

import rlpytorch
from elfpy.files import write_text_atomically

ENV_ID = "HalfCheetah-v5"
EVAL_EPISODES = 10
LEARNING_STARTS = 10_000
# rl-zoo's settings beyond each algorithm's Stable-Baselines3 defaults (hyperparams/td3.yml:143-153).
SB3_SETTINGS = {
    "sac": {},
    "td3": {"learning_rate": 1e-3, "batch_size": 256, "policy_kwargs": {"net_arch": [400, 300]}},
}
TD3_ACTION_NOISE = 0.1
# SAC's squashed Gaussian: the share of sampled pre-tanh actions u with |u| above this, at the last
# SATURATION_STATES states of the run, by the final policy. Beyond it SB3's log-prob correction
# log(1 - tanh(u)^2 + 1e-6) departs from the exact one (rlpytorch's): 12.35 against 12.61 at 7,
# 13.82 against 22.61 at 12, and its gradient in u falls from 2 to 0.
SATURATION_U = 6.0
SATURATION_STATES = 10_000


def share_saturated(mean: torch.Tensor, std: torch.Tensor) -> float:
    """The share of ``u ~ N(mean, std)`` (one draw per entry) with ``|u| > SATURATION_U``."""
    u = mean + std * torch.randn(mean.shape, generator=torch.Generator().manual_seed(0))
    return float((u.abs() > SATURATION_U).float().mean())


def ours_saturation(trainer: object) -> float:
    """``share_saturated`` of the trained policy at the last states in the replay (its one lane)."""
    model, store = trainer.mi["model"], trainer.replay.store
    rows = np.arange(max(0, int(store.count[0]) - SATURATION_STATES), int(store.count[0]))
    obs = {key: torch.as_tensor(store.get(key, rows, np.zeros_like(rows))) for key in model.obs_keys}
    with torch.no_grad():
        out = model.actor(model.encode(obs))
    return share_saturated(out["mean"], out["std"])


def sb3_saturation(model: object) -> float:
    """``share_saturated`` of SB3's trained SAC actor at the last states in its replay buffer."""
    buffer = model.replay_buffer
    obs = torch.as_tensor(buffer.observations[max(0, buffer.pos - SATURATION_STATES):buffer.pos, 0]).float()
    with torch.no_grad():
        mean, log_std, _ = model.actor.get_action_dist_params(obs)
    return share_saturated(mean, log_std.exp())


def label(contender: str, algo: str, train_every: int | None) -> str:
    name = {"rlpytorch": f"rlpytorch {algo.upper()}", "sb3": f"SB3 {algo.upper()} (rl-zoo)",
            "swap": f"SB3 {algo.upper()} loop (rl-zoo), rlpytorch model and update"}[contender]
    if train_every is None:
        return name
    schedule = "1 update per step" if train_every == 1 else f"{train_every} updates every {train_every} steps"
    return f"{name}, {schedule}"


def run_ours(algo: str, steps: int, seed: int, folder: Path, train_every: int | None,
             warmup_noise: bool = False) -> dict:
    schedule = {} if train_every is None else {"T": train_every + 1}  # a window of T - 1 steps, as many updates
    config = rlpytorch.config(f"mujoco_halfcheetah_{algo}", num_frames=steps, seed=seed, save_dir=str(folder),
                              progress=False, log_every=2000, eval_episodes=EVAL_EPISODES,
                              warmup_noise=warmup_noise, **schedule)
    cpu = time.process_time()
    result, trainer = train_keeping_trainer(config)
    wall, cpu = result.summary.seconds, time.process_time() - cpu  # CPU: training and the final evaluation
    saturation = {"saturated": ours_saturation(trainer)} if algo == "sac" else {}
    name = label("rlpytorch", algo, train_every) + (", noisy warm-up" if warmup_noise else "")
    return {"contender": name, "seed": seed, "steps": result.summary.frames,
            "wall_s": wall, "cpu_s": cpu, "last10_train_mean": float(np.mean(result.summary.returns[-10:])),
            "eval_mean": result.eval.mean, "eval_std": result.eval.std, **saturation}


def sb3_model(algo: str, env: object, seed: int, train_every: int | None) -> object:
    """Stable-Baselines3's SAC or TD3 with rl-zoo's HalfCheetah settings (and ``train_every``)."""
    from stable_baselines3 import SAC, TD3
    from stable_baselines3.common.noise import NormalActionNoise

    kwargs = {"learning_starts": LEARNING_STARTS, "seed": seed, "device": "cpu", "verbose": 0, **SB3_SETTINGS[algo]}
    if train_every is not None:
        kwargs.update(train_freq=train_every, gradient_steps=train_every)
    if algo == "td3":
        dims = env.action_space.shape[0]
        kwargs["action_noise"] = NormalActionNoise(np.zeros(dims), TD3_ACTION_NOISE * np.ones(dims))
    return (SAC if algo == "sac" else TD3)("MlpPolicy", env, **kwargs)


def swap_in_ours(sb3: object, seed: int, our_exploration: bool = False) -> object:
    """``sb3`` (a TD3) acts with rlpytorch's ``ActorQ`` (the config's networks, our initialisation, seeded
    ``seed``) and trains it with rlpytorch's ``TD3.step`` on batches from its own replay buffer; returns
    that model. HalfCheetah's actions lie in [-1, 1], SB3's scaled units, so actions pass between the
    two unchanged. ``our_exploration``: SB3's loop explores with rlpytorch's ``Exploration`` too, seeded
    from a stream of its own, as a run seeds it."""
    from rlpytorch.acting.exploration import Exploration
    from rlpytorch.core.distributions import Deterministic
    from rlpytorch.core.seeding import stream_seeds
    from rlpytorch.learners.offpolicy_trainer import offpolicy_interface
    from rlpytorch.methods import TD3
    from rlpytorch.methods.target_network import TargetNetwork
    from rlpytorch.models.actor_q import ActorQ, ActorQSettings
    from rlpytorch.models.interface import ModelInterface

    config = rlpytorch.config("mujoco_halfcheetah_td3")
    space = sb3.action_space
    if not (np.all(space.low == -1) and np.all(space.high == 1)):
        raise ValueError(f"--contender swap passes actions unscaled; {ENV_ID}'s Box must be [-1, 1], got {space}")
    torch.manual_seed(seed)
    model = ActorQ({"s": sb3.observation_space.shape}, space,
                   ActorQSettings(net_arch=config.net_arch, critics=2, actor_head="deterministic"))
    mi = offpolicy_interface(model, ModelInterface(lr=config.lr, optim_eps=config.optim_eps))
    method = TD3(target=TargetNetwork(polyak_tau=config.polyak_tau), policy_delay=config.policy_delay,
                 target_noise=config.target_noise, target_noise_clip=config.target_noise_clip, seed=seed)

    def predict(obs: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        return model.policy(model.encode(obs)).mode()  # SB3's predict adds its noise when exploring

    def train(gradient_steps: int, batch_size: int) -> None:
        for _ in range(gradient_steps):
            b = sb3.replay_buffer.sample(batch_size)  # dones already exclude time-limit truncations
            method.step(mi, {"s": b.observations, "next_s": b.next_observations, "a": b.actions,
                             "reward": b.rewards[:, 0], "discount": sb3.gamma * (1 - b.dones[:, 0]),
                             "weight": torch.ones(batch_size)})
            sb3._n_updates += 1

    sb3.policy._predict = predict
    sb3.train = train
    if our_exploration:
        explore = Exploration(low=space.low.tolist(), high=space.high.tolist(), action_noise=config.action_noise,
                              random_frames=sb3.learning_starts, seed=stream_seeds(seed, 1)[0])

        def explored_action(learning_starts: int, action_noise: object = None, n_envs: int = 1) -> tuple:
            with torch.no_grad():
                a = explore(Deterministic(predict(torch.as_tensor(sb3._last_obs))), sb3.num_timesteps).numpy()
            return a, a  # the action stepped and the action stored: one, in [-1, 1]

        sb3._sample_action = explored_action
    return model


def run_sb3(algo: str, steps: int, seed: int, folder: Path, train_every: int | None, swap: bool = False,
            our_exploration: bool = False) -> dict:
    import gymnasium as gym
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    model = sb3_model(algo, Monitor(gym.make(ENV_ID)), seed, train_every)
    if swap:
        swap_in_ours(model, seed, our_exploration)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, callback=sb3_progress(folder))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    last10 = [e["r"] for e in model.ep_info_buffer][-10:]
    mean, std = evaluate_policy(model, Monitor(gym.make(ENV_ID)), n_eval_episodes=EVAL_EPISODES, deterministic=True)
    saturation = {"saturated": sb3_saturation(model)} if algo == "sac" else {}
    name = label("swap" if swap else "sb3", algo, train_every) + (", rlpytorch exploration" if our_exploration else "")
    return {"contender": name, "seed": seed,
            "steps": model.num_timesteps,
            "wall_s": wall, "cpu_s": cpu, "last10_train_mean": float(np.mean(last10)), "eval_mean": float(mean),
            "eval_std": float(std), **saturation}


def report(out: Path) -> str:
    rows = [json.loads(p.read_text()) for p in sorted(out.glob("result_*.json"))]
    lines = ["| trainer | seed | steps | last 10 training episodes | deterministic, 10 episodes | wall s | CPU s "
             f"| SAC: sampled \\|u\\| > {SATURATION_U:g} |", "|---|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        saturated = f"{r['saturated']:.2%}" if "saturated" in r else "-"
        lines.append(f"| {r['contender']} | {r['seed']} | {r['steps']:,} | {r['last10_train_mean']:.0f} | "
                     f"{r['eval_mean']:.0f} ± {r['eval_std']:.0f} | {r['wall_s']:.0f} | {r['cpu_s']:.0f} "
                     f"| {saturated} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contender", choices=("rlpytorch", "sb3", "swap"),
                        help="swap (TD3): SB3's loop with rlpytorch's model and update")
    parser.add_argument("--algo", choices=tuple(SB3_SETTINGS), default="sac")
    parser.add_argument("--train_every", type=int, default=None,
                        help="N updates after every N steps, both sides (default: 1, rl-zoo's and the "
                             "configs')")
    parser.add_argument("--warmup_noise", action=argparse.BooleanOptionalAction, default=False,
                        help="rlpytorch: the action noise on the warm-up's random actions too, as SB3's TD3 has it")
    parser.add_argument("--our_exploration", action=argparse.BooleanOptionalAction, default=False,
                        help="swap: SB3's loop explores with rlpytorch's Exploration (warm-up and noise) too")
    parser.add_argument("--report", action=argparse.BooleanOptionalAction, default=False,
                        help="print the table of the results under --out")
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("cheetah_runs"))
    args = parser.parse_args()
    if args.report or args.contender is None:
        print(report(args.out))
        return
    if args.train_every is not None and args.train_every < 1:
        parser.error(f"--train_every must be >= 1, got {args.train_every}")
    if args.contender == "swap" and args.algo != "td3":
        parser.error("--contender swap runs TD3 only (--algo td3)")
    if args.warmup_noise and (args.contender != "rlpytorch" or args.algo != "td3"):
        parser.error("--warmup_noise is a setting of rlpytorch's TD3 (--contender rlpytorch --algo td3)")
    if args.our_exploration and args.contender != "swap":
        parser.error("--our_exploration is a setting of the swap (--contender swap --algo td3)")
    torch.set_num_threads(1)
    run = {"rlpytorch": partial(run_ours, warmup_noise=args.warmup_noise), "sb3": run_sb3,
           "swap": partial(run_sb3, swap=True, our_exploration=args.our_exploration)}[args.contender]
    name = (f"{args.contender}_{args.algo}" + ("" if args.train_every is None else f"_every{args.train_every}")
            + ("_warmupnoise" if args.warmup_noise else "") + ("_ourexploration" if args.our_exploration else ""))
    result = run(args.algo, args.steps, args.seed, args.out / name / f"seed{args.seed}", args.train_every)
    print(json.dumps(result), flush=True)
    write_text_atomically(args.out / f"result_{name}_seed{args.seed}.json", json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
