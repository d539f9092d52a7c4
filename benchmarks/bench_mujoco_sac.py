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
timed; each episode's return too), wall seconds of training, and CPU seconds
of this process (the engine's threads included, the hosted environment's
worker process not; rlpytorch's also cover its set-up and the final
evaluation, seconds against the hour of training). Each run writes
``progress.csv`` (``frames``, ``time``, ``return_mean``; SB3's TD3 also its
updates' ``q``, losses and gradient norms, as ours logs its own) under ``--out`` as it
goes, for ``python -m rlpytorch.plot``, and its final weights: rlpytorch's
checkpoint ``last.pt``, SB3's TD3 its actor's ``actor.pt``.

``--contender swap`` (TD3 only) is the experiment that splits a gap between the
two: Stable-Baselines3's loop (its environment, replay buffer, warm-up,
exploration noise and schedule) acting with rlpytorch's model and training it
with rlpytorch's TD3 update on SB3's replayed batches. ``--our_exploration`` splits
it once more: the swap, with rlpytorch's ``Exploration`` (the warm-up's uniform
actions, then the Gaussian noise) in place of SB3's warm-up and ``NormalActionNoise``.
Two more flags each take one piece of rlpytorch's loop whole into SB3's:
``--our_replay`` trains the swap on batches from rlpytorch's ``Replay``, fed every
step SB3 stores, in place of SB3's replay buffer; ``--engine_env`` (SB3 or the swap)
steps HalfCheetah through rlpytorch's engine, hosted in a worker process as
rlpytorch's runs host it (``elfpy.sb3``), in place of SB3's own ``gym.make``.

A contender per process, so the two can run side by side on two cores:

    python benchmarks/bench_mujoco_sac.py --contender rlpytorch --out runs/cheetah &
    python benchmarks/bench_mujoco_sac.py --contender sb3 --out runs/cheetah
    python benchmarks/bench_mujoco_sac.py --report --out runs/cheetah
"""

from __future__ import annotations

import argparse
import json
import math
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch
from offpolicy_runs import sb3_progress, train_keeping_trainer

import rlpytorch
from elfpy.files import atomic_path, write_text_atomically

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
            "eval_mean": result.eval.mean, "eval_std": result.eval.std,
            "eval_returns": [round(float(r), 1) for r in result.eval.returns], **saturation}


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


class SB3UpdateStats:
    """Stable-Baselines3's TD3 updates logged as rlpytorch's TD3 logs its own, for ``progress.csv``
    (``columns``; ``pop()``: their means over the updates since the last call): ``q``, the first
    critic's mean on the update's batch before its step; ``critic_loss``; the global gradient
    norms before each optimizer step; ``actor_loss`` on the actor's updates. Read through hooks
    that draw no random number, so that the run stays SB3's own, draw for draw."""

    columns = ("q", "critic_loss", "critic_grad_norm", "actor_loss", "actor_grad_norm")

    def __init__(self, model: object) -> None:
        from rlpytorch.core.stats import RunningMean

        self.means = RunningMean()
        self.model = model
        model.critic.register_forward_hook(self.record_q)  # the update's Q; the targets are another module
        for name, net in (("critic", model.critic), ("actor", model.actor)):
            net.optimizer.register_step_pre_hook(partial(self.record_grad_norm, f"{name}_grad_norm"))
        self.sb3_train = model.train
        model.train = self.train

    def record_q(self, module: object, inputs: object, output: tuple[torch.Tensor, ...]) -> None:
        if torch.is_grad_enabled():
            self.means.add({"q": output[0].detach().mean().item()})

    def record_grad_norm(self, key: str, optimizer: torch.optim.Optimizer, args: object, kwargs: object) -> None:
        from rlpytorch.models.interface import clip_grad_norm

        params = [p for group in optimizer.param_groups for p in group["params"]]
        self.means.add({key: clip_grad_norm(params, math.inf)})

    def train(self, gradient_steps: int, batch_size: int) -> None:
        """SB3's ``train``, then its losses as it logged them: their means over the call's updates."""
        before = self.model._n_updates
        self.sb3_train(gradient_steps, batch_size)
        logged, delay = self.model.logger.name_to_value, self.model.policy_delay
        self.means.add({"critic_loss": logged["train/critic_loss"]})
        if self.model._n_updates // delay > before // delay:  # the actor moved in this call
            self.means.add({"actor_loss": logged["train/actor_loss"]})

    def pop(self) -> dict[str, float]:
        return self.means.pop()


class EngineRows:
    """SB3's steps of one environment written to rlpytorch's ``Replay`` (one lane) as the engine's
    rows: row ``t`` holds ``s_t`` and ``a_t`` with what led into ``s_t`` (``r_t``, ``terminal_t``,
    ``truncated_t`` and, after a time limit, ``final_s_t``, the state the episode ended in). A row
    is written once the next step's action is known, as a window of it and the row before."""

    def __init__(self, replay: object, observation_space: object) -> None:
        self.replay = replay
        self.no_final = np.zeros(observation_space.shape, observation_space.dtype)  # the engine keeps dtypes
        self.led_in = {"r": np.float32(0), "terminal": False, "truncated": False, "final_s": self.no_final}
        self.previous: dict[str, np.ndarray] | None = None

    def step(self, obs: np.ndarray, action: np.ndarray, reward: float, done: bool, info: dict) -> None:
        """The step SB3 stores: ``action`` taken at ``obs`` earned ``reward``; ``done``: the episode ended."""
        row = {"s": np.asarray(obs), "a": np.asarray(action), **self.led_in}
        if self.previous is not None:
            self.replay.add({k: np.stack([self.previous[k], row[k]])[:, None] for k in row}, np.zeros(1, np.int64))
        self.previous = row
        truncated = bool(done and info.get("TimeLimit.truncated", False))
        final = np.asarray(info["terminal_observation"]) if truncated else self.no_final
        self.led_in = {"r": np.float32(reward), "terminal": bool(done), "truncated": truncated, "final_s": final}


def swap_in_ours(sb3: object, seed: int, our_exploration: bool = False, our_replay: bool = False) -> object:
    """``sb3`` (a TD3) acts with rlpytorch's ``ActorQ`` (the config's networks, our initialisation)
    and trains it with rlpytorch's ``TD3.step`` on batches from its own replay buffer; returns that
    model. HalfCheetah's actions lie in [-1, 1], SB3's scaled units, so actions pass between the two
    unchanged. ``our_exploration``: SB3's loop explores with rlpytorch's ``Exploration`` too.
    ``our_replay``: every step SB3 stores goes into rlpytorch's ``Replay`` too (``EngineRows``), and
    the updates sample it in place of SB3's buffer. Each piece is seeded as a run of the config
    seeded ``seed`` seeds it: the weights from torch's global generator, the TD3 update's, the
    replay's and the exploration's draws from the run's streams (``recipes.off_policy``)."""
    from rlpytorch.acting.exploration import Exploration
    from rlpytorch.core.distributions import Deterministic
    from rlpytorch.core.seeding import stream_seeds
    from rlpytorch.learners.offpolicy_trainer import offpolicy_interface
    from rlpytorch.methods import TD3
    from rlpytorch.methods.target_network import TargetNetwork
    from rlpytorch.models.actor_q import ActorQ, ActorQSettings
    from rlpytorch.models.interface import ModelInterface
    from rlpytorch.replay import Replay

    config = rlpytorch.config("mujoco_halfcheetah_td3")
    space = sb3.action_space
    if not (np.all(space.low == -1) and np.all(space.high == 1)):
        raise ValueError(f"--contender swap passes actions unscaled; {ENV_ID}'s Box must be [-1, 1], got {space}")
    method_seed, replay_seed, exploration_seed = stream_seeds(seed, 3)
    torch.manual_seed(seed)
    model = ActorQ({"s": sb3.observation_space.shape}, space,
                   ActorQSettings(net_arch=config.net_arch, critics=2, actor_head="deterministic"))
    mi = offpolicy_interface(model, ModelInterface(lr=config.lr, optim_eps=config.optim_eps))
    method = TD3(target=TargetNetwork(polyak_tau=config.polyak_tau), policy_delay=config.policy_delay,
                 target_noise=config.target_noise, target_noise_clip=config.target_noise_clip, seed=method_seed)

    def predict(obs: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        return model.policy(model.encode(obs)).mode()  # SB3's predict adds its noise when exploring

    def sb3_batch(batch_size: int) -> dict[str, torch.Tensor]:
        b = sb3.replay_buffer.sample(batch_size)  # dones already exclude time-limit truncations
        return {"s": b.observations, "next_s": b.next_observations, "a": b.actions, "reward": b.rewards[:, 0],
                "discount": sb3.gamma * (1 - b.dones[:, 0]), "weight": torch.ones(batch_size)}

    batch = sb3_batch
    if our_replay:  # rlpytorch's replay, written as the engine writes it, sampled in place of SB3's
        replay = Replay(num_lanes=1, obs_keys=("s",), replay_capacity=config.replay_capacity, gamma=config.gamma,
                        seed=replay_seed)
        rows = EngineRows(replay, sb3.observation_space)
        store = sb3._store_transition

        def store_both(buffer: object, action: np.ndarray, new_obs: np.ndarray, reward: np.ndarray,
                       dones: np.ndarray, infos: list[dict]) -> None:
            rows.step(sb3._last_obs[0], action[0], float(reward[0]), bool(dones[0]), infos[0])
            store(buffer, action, new_obs, reward, dones, infos)

        def replay_batch(batch_size: int) -> dict[str, torch.Tensor]:
            b = replay.sample(batch_size)
            b.pop("index")
            return b

        sb3._store_transition = store_both
        batch = replay_batch

    def train(gradient_steps: int, batch_size: int) -> None:
        for _ in range(gradient_steps):
            method.step(mi, batch(batch_size))
            sb3._n_updates += 1

    sb3.policy._predict = predict
    sb3.train = train
    if our_exploration:
        explore = Exploration(low=space.low.tolist(), high=space.high.tolist(), action_noise=config.action_noise,
                              random_frames=sb3.learning_starts, seed=exploration_seed)

        def explored_action(learning_starts: int, action_noise: object = None, n_envs: int = 1) -> tuple:
            with torch.no_grad():
                a = explore(Deterministic(predict(torch.as_tensor(sb3._last_obs))), sb3.num_timesteps).numpy()
            return a, a  # the action stepped and the action stored: one, in [-1, 1]

        sb3._sample_action = explored_action
    return model


def sb3_env(seed: int, engine: bool) -> object:
    """HalfCheetah as SB3 steps it: its own ``gym.make``, or (``engine``) hosted in a worker process and
    stepped through rlpytorch's engine as rlpytorch's runs step it; episodes recorded either way."""
    import gymnasium as gym
    from stable_baselines3.common.monitor import Monitor

    if not engine:
        return Monitor(gym.make(ENV_ID))
    from stable_baselines3.common.vec_env import VecMonitor

    from elfpy.sb3 import make_sb3_vec_env
    return VecMonitor(make_sb3_vec_env(f"gym:{ENV_ID}", num_envs=1, seed=seed))


def seed_first_reset_as_engine(model: object, seed: int) -> None:
    """Seed the first reset of SB3's Gymnasium HalfCheetah as rlpytorch's engine seeds game 0 of a run
    seeded ``seed`` (``game_seed(seed, 0)``; SB3 seeds it with ``seed`` itself), so that the run differs from
    the same run stepped through the engine only in where the environment is hosted."""
    from elfpy.gym_host import game_seed
    model.get_env().seed(game_seed(seed, 0))  # passed to the environment at its next reset, learn()'s first


def run_sb3(algo: str, steps: int, seed: int, folder: Path, train_every: int | None, swap: bool = False,
            our_exploration: bool = False, our_replay: bool = False, engine_env: bool = False,
            engine_reset_seed: bool = False) -> dict:
    import gymnasium as gym
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    model = sb3_model(algo, sb3_env(seed, engine_env), seed, train_every)
    if engine_reset_seed:
        seed_first_reset_as_engine(model, seed)
    if swap:
        swap_in_ours(model, seed, our_exploration, our_replay)
    updates = SB3UpdateStats(model) if algo == "td3" and not swap else None
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, callback=sb3_progress(folder, updates=updates))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    last10 = [e["r"] for e in model.ep_info_buffer][-10:]
    model.get_env().close()  # the engine's worker process, with --engine_env
    if algo == "td3" and not swap:  # its actor, for a later look at the gait (gait_check.py beside the results)
        with atomic_path(folder / "actor.pt") as tmp:
            torch.save(model.actor.state_dict(), tmp)
    returns, _ = evaluate_policy(model, Monitor(gym.make(ENV_ID)), n_eval_episodes=EVAL_EPISODES,
                                 deterministic=True, return_episode_rewards=True)
    saturation = {"saturated": sb3_saturation(model)} if algo == "sac" else {}
    name = label("swap" if swap else "sb3", algo, train_every) + "".join(
        f", {piece}" for piece, on in (("rlpytorch exploration", our_exploration), ("rlpytorch replay", our_replay),
                                       ("stepped through rlpytorch's engine", engine_env),
                                       ("first reset seeded as the engine seeds it", engine_reset_seed)) if on)
    return {"contender": name, "seed": seed,
            "steps": model.num_timesteps,
            "wall_s": wall, "cpu_s": cpu, "last10_train_mean": float(np.mean(last10)),
            "eval_mean": float(np.mean(returns)), "eval_std": float(np.std(returns)),
            "eval_returns": [round(float(r), 1) for r in returns], **saturation}


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
    parser.add_argument("--our_replay", action=argparse.BooleanOptionalAction, default=False,
                        help="swap: train on batches from rlpytorch's Replay in place of SB3's replay buffer")
    parser.add_argument("--engine_env", action=argparse.BooleanOptionalAction, default=False,
                        help="sb3 or swap: step HalfCheetah through rlpytorch's engine (a worker process)")
    parser.add_argument("--engine_reset_seed", action=argparse.BooleanOptionalAction, default=False,
                        help="sb3 or swap on Gymnasium's HalfCheetah: seed its first reset as the engine seeds "
                             "game 0 (so the swap with all of rlpytorch's pieces is rlpytorch's run, hosted apart)")
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
    for flag in ("our_exploration", "our_replay"):
        if getattr(args, flag) and args.contender != "swap":
            parser.error(f"--{flag} is a setting of the swap (--contender swap --algo td3)")
    if args.engine_env and args.contender == "rlpytorch":
        parser.error("--engine_env steps SB3's loop through the engine (--contender sb3 or swap); "
                     "rlpytorch's runs always do")
    if args.engine_reset_seed and (args.contender == "rlpytorch" or args.engine_env):
        parser.error("--engine_reset_seed seeds SB3's own Gymnasium HalfCheetah (--contender sb3 or swap, "
                     "without --engine_env)")
    torch.set_num_threads(1)
    run = {"rlpytorch": partial(run_ours, warmup_noise=args.warmup_noise), "sb3": run_sb3,
           "swap": partial(run_sb3, swap=True, our_exploration=args.our_exploration,
                           our_replay=args.our_replay)}[args.contender]
    if args.engine_env or args.engine_reset_seed:
        run = partial(run, engine_env=args.engine_env, engine_reset_seed=args.engine_reset_seed)
    flags = ("warmup_noise", "our_exploration", "our_replay", "engine_env", "engine_reset_seed")
    name = (f"{args.contender}_{args.algo}" + ("" if args.train_every is None else f"_every{args.train_every}")
            + "".join("_" + flag.replace("_", "") for flag in flags if getattr(args, flag)))
    result = run(args.algo, args.steps, args.seed, args.out / name / f"seed{args.seed}", args.train_every)
    print(json.dumps(result), flush=True)
    write_text_atomically(args.out / f"result_{name}_seed{args.seed}.json", json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
