"""PPO on the engine's games through `elfpy.make_vector`, in one file (in the style of CleanRL's ppo.py).

For users who keep their own algorithms: nothing here imports rlpytorch. The engine is reached only through
`elfpy.make_vector`, a Gymnasium VectorEnv whose envs are games stepped by C++ threads, so code written for
`gymnasium.vector` runs on it. Read top to bottom: settings, network, rollout, returns, update. The settings'
defaults are ppo.py's (4 envs, 128 steps each per rollout, 4 epochs of 4 minibatches, lr 2.5e-4 annealed).

    python examples/ppo_vector.py                          # CartPole until the last 100 episodes average 475
    python examples/ppo_vector.py --solved-return 0        # the whole --total-timesteps budget
    python examples/ppo_vector.py --game gym:CartPole-v1   # Gymnasium's CartPole, hosted by the engine
    python examples/ppo_vector.py --num-envs 64 --num-steps 32 --learning-rate 1e-3   # wider: the engine's speed

Two differences from ppo.py: episodes reset in the step that ends them (`autoreset_mode=SAME_STEP`, the engine's
own way: the observation returned with `terminated`/`truncated` is the next episode's first one, the last one is
`infos["final_obs"]`), and a time-limit truncation bootstraps from the value of that final observation instead
of counting as a failure. It prints steps/s overall and inside `envs.step` (the engine's share).
"""

from __future__ import annotations

import argparse
import time
from collections import deque

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import elfpy


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--game", default="cartpole", help="a single-seat game with a Discrete action")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num-envs", type=int, default=4, help="games stepped side by side")
    parser.add_argument("--num-threads", type=int, default=1, help="engine threads stepping them")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch threads (more only compete with the engine's for small networks)")
    parser.add_argument("--total-timesteps", type=int, default=500_000, help="frame budget (env steps)")
    parser.add_argument("--solved-return", type=float, default=475.0,
                        help="stop once the last 100 episodes average this return (0: never)")
    parser.add_argument("--num-steps", type=int, default=128, help="steps per env in each rollout")
    parser.add_argument("--learning-rate", type=float, default=2.5e-4)
    parser.add_argument("--anneal-lr", action=argparse.BooleanOptionalAction, default=True,
                        help="decay the learning rate linearly to 0 over the budget")
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--num-minibatches", type=int, default=4)
    parser.add_argument("--update-epochs", type=int, default=4, help="passes over each rollout")
    parser.add_argument("--norm-adv", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--clip-coef", type=float, default=0.2)
    parser.add_argument("--clip-vloss", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--log-every", type=int, default=10, help="print a line every this many updates")
    return parser.parse_args(argv)


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """Separate policy and value MLPs (64, 64, tanh), orthogonally initialised as in CleanRL."""

    def __init__(self, obs_dim: int, num_actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)),
                                    nn.Tanh(), layer_init(nn.Linear(64, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)),
                                   nn.Tanh(), layer_init(nn.Linear(64, num_actions), std=0.01))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        dist = Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(x)


def train(args: argparse.Namespace) -> dict:
    """Trains; returns the frames run, every finished episode's return, the wall and env seconds."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    envs = elfpy.make_vector(args.game, num_envs=args.num_envs, num_threads=args.num_threads, seed=args.seed,
                             autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    assert isinstance(envs.single_action_space, gym.spaces.Discrete), "this PPO acts in a Discrete action space"
    obs_dim = int(np.prod(envs.single_observation_space.shape))
    agent = Agent(obs_dim, int(envs.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_updates = args.total_timesteps // batch_size
    # Rollout storage, time-major [num_steps, num_envs].
    obs = torch.zeros((args.num_steps, args.num_envs, obs_dim))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    episode_return = np.zeros(args.num_envs)
    returns_seen: list[float] = []
    last_100: deque[float] = deque(maxlen=100)
    global_step, env_seconds = 0, 0.0
    start = time.perf_counter()
    next_obs = torch.as_tensor(envs.reset(seed=args.seed)[0], dtype=torch.float32).reshape(args.num_envs, -1)
    next_done = torch.zeros(args.num_envs)

    for update in range(1, num_updates + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / num_updates) * args.learning_rate

        # Rollout: num_steps steps of every env with the current policy.
        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            actions[step], logprobs[step], values[step] = action, logprob, value

            env_start = time.perf_counter()
            observation, reward, terminated, truncated, infos = envs.step(action.numpy())
            env_seconds += time.perf_counter() - env_start

            episode_return += reward
            reward = torch.as_tensor(reward, dtype=torch.float32)
            if truncated.any():  # a time limit, not a failure: bootstrap from the state the episode was cut in
                final_obs = torch.as_tensor(np.stack(infos["final_obs"][truncated]), dtype=torch.float32)
                with torch.no_grad():
                    reward[truncated] += args.gamma * agent.get_value(final_obs.reshape(len(final_obs), -1))
            rewards[step] = reward
            next_obs = torch.as_tensor(observation, dtype=torch.float32).reshape(args.num_envs, -1)
            done = terminated | truncated
            next_done = torch.as_tensor(done, dtype=torch.float32)
            for i in np.flatnonzero(done):
                returns_seen.append(float(episode_return[i]))
                last_100.append(float(episode_return[i]))
                episode_return[i] = 0.0

        # Returns and advantages by GAE, bootstrapped from the value of the observation after the rollout.
        with torch.no_grad():
            next_value = agent.get_value(next_obs)
            advantages = torch.zeros_like(rewards)
            lastgaelam = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                advantages[t] = lastgaelam
            returns = advantages + values

        # Update: update_epochs passes over the rollout in shuffled minibatches, PPO's clipped objectives.
        b_obs, b_actions, b_logprobs = obs.reshape(batch_size, obs_dim), actions.reshape(-1), logprobs.reshape(-1)
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        for _ in range(args.update_epochs):
            order = torch.randperm(batch_size)
            for begin in range(0, batch_size, minibatch_size):
                mb = order[begin:begin + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_advantages = b_advantages[mb]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss = torch.max(-mb_advantages * ratio,
                                    -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                if args.clip_vloss:
                    v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
                    v_loss = 0.5 * torch.max((newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        mean_100 = float(np.mean(last_100)) if last_100 else float("nan")
        solved = args.solved_return > 0 and len(last_100) == 100 and mean_100 >= args.solved_return
        if update % args.log_every == 0 or solved or update == num_updates:
            wall = time.perf_counter() - start
            print(f"frames {global_step:8d}  episodes {len(returns_seen):5d}  mean return (last 100) {mean_100:7.1f}  "
                  f"steps/s {global_step / wall:8.0f} overall, {global_step / env_seconds:9.0f} in envs.step",
                  flush=True)
        if solved:
            print(f"solved: the last 100 episodes average {mean_100:.1f} >= {args.solved_return} "
                  f"after {global_step} frames", flush=True)
            break
    envs.close()
    wall = time.perf_counter() - start
    print(f"{global_step} frames in {wall:.1f} s: {global_step / wall:.0f} steps/s", flush=True)
    return {"frames": global_step, "episode_returns": returns_seen, "wall_seconds": wall,
            "env_seconds": env_seconds, "solved": solved}


if __name__ == "__main__":
    train(parse_args())
