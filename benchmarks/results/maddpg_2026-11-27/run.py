"""One simple_spread run of an arm (experiment script of benchmarks/notes/2026-11-27-maddpg-simple-spread.md).

Arms: ddpg (ddpg_simple_spread), adv_ddpg / adv_maddpg (ddpg_ / maddpg_simple_adversary),
maddpg (maddpg_simple_spread), maddpg_shared (--share_actors),
local / local_shared: MADDPG's code with critic i reading only seat i's own observation and action,
Q_i(o_i, a_i) (openai/maddpg's local_q_func, the paper's DDPG baseline), per-seat or shared actor;
central_shared: MADDPG with one shared actor and ONE centralised critic for every seat, seat i's
input [o_i, o_i+1, .., o_i-1; a_i, a_i+1, .., a_i-1] (its own seat first).
"""
import argparse
import json
import time

import torch

import rlpytorch
from rlpytorch.models import seat_actor_q
from rlpytorch.models.actor_q import QCritics, widths

p = argparse.ArgumentParser()
p.add_argument("--arm", required=True)
p.add_argument("--seed", type=int, required=True)
p.add_argument("--out", required=True)
p.add_argument("--frames", type=int, default=300000)
p.add_argument("--set", default="{}", help="JSON of extra settings")
a = p.parse_args()

if a.arm.startswith("local"):
    original_init = seat_actor_q.SeatActorQ.__init__

    def local_init(self, obs_spec, num_actions, settings=None):
        original_init(self, obs_spec, num_actions, settings)
        hidden = widths(settings.net_arch)
        self.critics = QCritics(self.seats, self.flatten.out_dim + self.action_dim, hidden)

    def local_inputs(self, x, a):
        """[S, ..., obs_dim + D]: critic i's input [o_i; a_i_norm] (a: [..., S, D] or [S, ..., S, D])."""
        a_norm = (a - self.action_center) / self.action_half
        if a.dim() == x.dim():  # one joint action for every critic
            return torch.cat([x, a_norm], -1).movedim(-2, 0)
        own = torch.stack([a_norm[i, ..., i, :] for i in range(self.seats)])
        return torch.cat([x.movedim(-2, 0), own], -1)

    seat_actor_q.SeatActorQ.__init__ = local_init
    seat_actor_q.SeatActorQ.q_values = lambda self, x, a: self.critics.each(local_inputs(self, x, a))
    seat_actor_q.SeatActorQ.q_each = lambda self, x, a: self.critics.each(local_inputs(self, x, a))

game = "simple_adversary" if a.arm.startswith("adv_") else "simple_spread"  # adv_ddpg, adv_maddpg
if a.arm == "central_shared":
    def shared_init(self, obs_spec, num_actions, settings=None):
        original_init(self, obs_spec, num_actions, settings)
        self.critics = QCritics(1, self.seats * (self.flatten.out_dim + self.action_dim), widths(settings.net_arch))

    def rotated(self, x, a):
        """[S, ..., S (obs_dim + D)]: critic input of seat i, every seat's obs and action, seat i's first
        (seats in the order i, i+1, .., i-1); a: [..., S, D] (one joint action) or [S, ..., S, D]."""
        a_norm = (a - self.action_center) / self.action_half
        rows = []
        for i in range(self.seats):
            ai = a_norm if a.dim() == x.dim() else a_norm[i]
            rows.append(torch.cat([x.roll(-i, -2).flatten(-2), ai.roll(-i, -2).flatten(-2)], -1))
        return torch.stack(rows)

    def shared_q(self, x, a):
        inputs = rotated(self, x, a)
        return self.critics(inputs)[0]

    original_init = seat_actor_q.SeatActorQ.__init__
    seat_actor_q.SeatActorQ.__init__ = shared_init
    seat_actor_q.SeatActorQ.q_values = shared_q
    seat_actor_q.SeatActorQ.q_each = shared_q

base = ("ddpg_" if a.arm.removeprefix("adv_") == "ddpg" else "maddpg_") + game
settings = dict(num_frames=a.frames, log_every=6000, seed=a.seed, save_dir=a.out, progress=False, torch_threads=1)
if a.arm in ("maddpg_shared", "local_shared", "central_shared"):
    settings["share_actors"] = True
settings.update(json.loads(a.set))
cfg = rlpytorch.config(base, **settings)
t0 = time.time()
with rlpytorch.Training(cfg) as training:  # rlpytorch.train's steps, keeping the trained model
    summary = training.learn(cfg.num_frames - training.frames)
    ev = training.evaluate()  # the trained model stays in the run's last.pt (roles.py reads it)
print(json.dumps({"arm": a.arm, "seed": a.seed, "frames": summary.frames, "updates": summary.updates,
                  "seconds": time.time() - t0, "eval": repr(ev)}))
