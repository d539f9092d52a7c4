"""Greedy per-role returns on simple_adversary: the adversary's actor from one run, the good agents' from another
(self-play when both are the same run), each run's last checkpoint. Usage: roles.py ADV_RUN AGENTS_RUN [episodes]."""
import sys

import numpy as np
import torch
from mpe2 import simple_adversary_v3

from rlpytorch.evaluate import load_trained
from rlpytorch.models.seat_actor_q import SeatActorQ

KEYS = {"adversary": "s_adversary", "agent": "s_agent"}
DIMS = {"s_adversary": 8, "s_agent": 10}


def act(model, seat, agent, obs):
    row = {k: torch.zeros(1, d) for k, d in DIMS.items()}
    row[KEYS[agent.rsplit("_", 1)[0]]] = torch.as_tensor(obs, dtype=torch.float32)[None]
    with torch.no_grad():
        x = model.encode(row)
        if isinstance(model, SeatActorQ):
            return model.act_rows(x, torch.tensor([seat]))[0].numpy()
        return model.policy(x).mode()[0].numpy()


def play(adv_model, agents_model, episodes=200):
    env = simple_adversary_v3.parallel_env(max_cycles=25, continuous_actions=True)
    totals = {a: [] for a in env.possible_agents}
    for ep in range(episodes):
        obs, _ = env.reset(seed=10_000 + ep)
        ret = dict.fromkeys(env.possible_agents, 0.0)
        while env.agents:
            actions = {a: act(adv_model if a.startswith("adversary") else agents_model,
                              env.possible_agents.index(a), a, obs[a]) for a in env.agents}
            obs, rew, *_ = env.step(actions)
            for a, r in rew.items():
                ret[a] += r
        for a in ret:
            totals[a].append(ret[a])
    return {a: float(np.mean(v)) for a, v in totals.items()}


if __name__ == "__main__":
    adversary, agents = (load_trained(run)[0] for run in sys.argv[1:3])
    episodes = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    print(sys.argv[1], "adversary vs agents of", sys.argv[2], play(adversary, agents, episodes))
