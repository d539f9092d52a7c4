"""One simple_spread run of an arm (experiment script of benchmarks/notes/2026-11-27-maddpg-simple-spread.md).

Arms: ddpg (ddpg_simple_spread), maddpg (maddpg_simple_spread), maddpg_shared (--share_actors),
local / local_shared: MADDPG's code with critic i reading only seat i's own observation and action,
Q_i(o_i, a_i) (openai/maddpg's local_q_func, the paper's DDPG baseline), per-seat or shared actor.
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
p.add_argument("--game", default="")
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

base = "ddpg_simple_spread" if a.arm == "ddpg" else "maddpg_simple_spread"
settings = dict(num_frames=a.frames, log_every=6000, seed=a.seed, save_dir=a.out, progress=False, torch_threads=1)
if a.arm in ("maddpg_shared", "local_shared"):
    settings["share_actors"] = True
if a.game:
    settings["game"] = a.game
settings.update(json.loads(a.set))
cfg = rlpytorch.config(base, **settings)
t0 = time.time()
with rlpytorch.Training(cfg) as training:  # rlpytorch.train's steps, keeping the trained model
    summary = training.learn(cfg.num_frames - training.frames)
    ev = training.evaluate()
    torch.save(training.model, f"{a.out}/model.pt")
print(json.dumps({"arm": a.arm, "seed": a.seed, "frames": summary.frames, "updates": summary.updates,
                  "seconds": time.time() - t0, "eval": repr(ev)}))
