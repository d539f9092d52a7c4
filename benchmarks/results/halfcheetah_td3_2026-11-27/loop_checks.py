"""The checks of our TD3 loop behind the HalfCheetah note's section 9 (short runs of the
shipped config ``mujoco_halfcheetah_td3``, seed 0; each prints its figures):

    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py transitions
    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py acting
    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py streams
    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py sampling
    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py identity
    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py hosting

``transitions``: every stored transition of a 5,100-step run (its five episode ends
included), MuJoCo set to the stored ``s`` and stepped with the stored ``a``, against the
stored ``s'`` and reward. ``acting``: at each step, whether the stored action is the one
the actor replied to that row's observation, whether the acting copy equals the learner, and
how many updates were made when it acted (``frames - updates`` after the warm-up).
``streams``: whether the warm-up's uniform actions (``Exploration``, seeded as the run seeds it)
are values the model's initialisation reads (torch's global generator after ``manual_seed`` of
the same seed). ``sampling``: over the 2,000 updates of a 12,000-step run, how many rows
each update sees stored and whether it samples them uniformly (the sampled rows' age).
``identity``: our loop beside SB3's loop with every piece ours (``bench_mujoco_sac.py``'s swap
with our exploration and replay, HalfCheetah stepped through our engine), both seeded 0, for
12,100 steps (2,100 updates, two time limits among them): the first step where their
actions part, and how far the two learners' weights lie apart at the end. ``identity gym``: the
same, but the swap steps Gymnasium's own HalfCheetah in its process, its first reset seeded as the
engine seeds game 0 (``--engine_reset_seed``).

``hosting``: HalfCheetah stepped through the engine (``--engine_env``'s ``make_sb3_vec_env``, seeded
2) beside Gymnasium's own, its first reset seeded as the engine seeds game 0, for 30,000 uniform random
steps (30 time limits at 1,000 steps): every state, final state, reward and end compared, bit for bit.

``whole``: the same two, each a whole run of ``bench_mujoco_sac.py`` (200K steps, seed 0, results
under ``runs/td3_whole``, recorded in ``whole/`` beside this file), one per process so that they
run side by side, each saving its actions; then the first step where they part:

    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py whole ours &
    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py whole swap
    python benchmarks/results/halfcheetah_td3_2026-11-27/loop_checks.py whole compare
"""

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/, for offpolicy_runs
import bench_mujoco_sac as bench  # noqa: E402
from offpolicy_runs import train_keeping_trainer  # noqa: E402

import rlpytorch  # noqa: E402
from rlpytorch.acting.exploration import Exploration  # noqa: E402
from rlpytorch.core.distributions import Deterministic  # noqa: E402
from rlpytorch.learners.offpolicy_trainer import OffPolicyTrainer  # noqa: E402
from rlpytorch.replay.uniform import UniformSampler  # noqa: E402


def short_run(frames: int, folder: str) -> object:
    config = rlpytorch.config("mujoco_halfcheetah_td3", num_frames=frames, learning_starts=min(10_000, frames - 100),
                              seed=0, save_dir=folder, progress=False, log_every=2000, eval_episodes=1)
    torch.set_num_threads(1)
    return train_keeping_trainer(config)[1]


def transitions(folder: str) -> None:
    trainer = short_run(5100, folder)
    replay, key = trainer.replay, trainer.mi["model"].obs_keys[0]
    _, lo, hi = replay.store.segments(replay.sampler.horizon, replay.sampler.span)
    rows = np.arange(lo[0], hi[0])
    out = replay._transitions(rows, np.zeros_like(rows))
    s, s2 = out[key].double().numpy(), out["next_" + key].double().numpy()
    a, r = out["a"].numpy(), out["reward"].numpy()
    env = gym.make("HalfCheetah-v5").unwrapped
    env.reset(seed=0)
    obs_gap, reward_gap = [], []
    for i in range(len(s)):
        env.set_state(np.concatenate([[0.0], s[i, :8]]), s[i, 8:])  # the dynamics ignore the x position
        o, reward, *_ = env.step(a[i])
        obs_gap.append(np.abs(o - s2[i]).max())
        reward_gap.append(abs(reward - r[i]))
    print(f"{len(s)} transitions: s' within {max(obs_gap):.2g}, reward within {max(reward_gap):.2g}; discounts "
          f"{np.unique(out['discount'].numpy())}; kept {out['_keep'].float().mean().item():.0%}")


def acting(folder: str) -> None:
    seen, synced, behind = [], [], []
    reply = OffPolicyTrainer.actor

    def actor(self: OffPolicyTrainer, batch: object) -> dict:
        model, copy = self.mi["model"], self.mi["actor"]
        synced.append(all(torch.equal(p, q) for p, q in zip(model.parameters(), copy.parameters(), strict=True))
                      and model.step == copy.step == self.updates)
        obs = np.array(batch[model.obs_keys[0]], copy=True)[0]
        if self.frames > self.learning_starts:
            behind.append(self.frames - self.updates)
        out = reply(self, batch)
        seen.append((obs, out["a"][0].copy()))
        return out

    OffPolicyTrainer.actor = actor
    trainer = short_run(10_600, folder)
    store, key = trainer.replay.store, trainer.mi["model"].obs_keys[0]
    rows = np.arange(int(store.count[0]))
    stored_s, stored_a = store.get(key, rows, np.zeros_like(rows)), store.get("a", rows, np.zeros_like(rows))
    for shift in (-1, 0, 1):
        pairs = range(1, len(rows) - 1)
        print(f"row shift {shift:+d}: observation differs by up to "
              f"{max(np.abs(seen[i][0] - stored_s[i + shift]).max() for i in pairs):.3g}, action by up to "
              f"{max(np.abs(seen[i][1] - stored_a[i + shift]).max() for i in pairs):.3g}")
    print(f"the acting copy equalled the learner at {sum(synced)} of {len(synced)} steps; after the warm-up "
          f"it acted at frames - updates in {sorted(set(behind))} ({len(behind):,} steps)")


def streams(folder: str, steps: int = 2000, init_draws: int = 400_000) -> None:
    torch.manual_seed(0)
    init = set(torch.empty(init_draws).uniform_(0, 1).tolist())  # the uniforms kaiming_uniform_ scales
    explore = Exploration(low=[-1.0] * 6, high=[1.0] * 6, action_noise=0.1, random_frames=10_000,
                          seed=short_run(200, folder).sampler.generator.initial_seed())  # as the run seeds it
    warm_up = torch.cat([explore(Deterministic(torch.zeros(1, 6)), t)[0] for t in range(steps)])
    found = sum(u in init for u in ((warm_up + 1) / 2).tolist())
    print(f"{found} of {len(warm_up)} uniform draws of the first {steps} warm-up steps are among the first "
          f"{init_draws:,} uniforms of the initialisation's generator (by chance: about "
          f"{len(warm_up) * init_draws / 2**24:.0f})")


def sampling(folder: str) -> None:
    draws = []  # (rows stored, sampled absolute rows) at each update
    sample = UniformSampler.sample

    def recorded(self: UniformSampler, store: object, n: int) -> tuple:
        out = sample(self, store, n)
        draws.append((int(store.count[0]), out[0].copy()))
        return out

    UniformSampler.sample = recorded
    short_run(12_000, folder)
    age = [((count - 1 - rows) / (count - 1)) for count, rows in draws]
    print(f"{len(draws)} updates; the first sees {draws[0][0]:,} rows stored, the last {draws[-1][0]:,}; mean "
          f"relative age of the sampled rows {np.mean(np.concatenate(age)):.4f} (uniform: 0.5), from the newest "
          f"tenth {np.mean(np.concatenate(age) < 0.1):.2%} (uniform: 10%)")


def identity(folder: str, hosting: str = "engine", steps: int = 12_100) -> None:
    trainer = short_run(steps, folder)
    store = trainer.replay.store
    rows = np.arange(steps)
    ours = store.get("a", rows, np.zeros_like(rows))
    sb3 = bench.sb3_model("td3", bench.sb3_env(0, engine=hosting == "engine"), 0, None)
    if hosting == "gym":
        bench.seed_first_reset_as_engine(sb3, 0)
    model = bench.swap_in_ours(sb3, 0, our_exploration=True, our_replay=True)
    sb3.learn(steps)
    sb3.get_env().close()  # the engine's worker process, if hosted there
    theirs = sb3.replay_buffer.actions[:steps, 0]
    gap = np.abs(ours - theirs).max(1)
    parted = np.flatnonzero(gap > 0)
    apart = max((p - q).abs().max().item()
                for p, q in zip(trainer.mi["model"].parameters(), model.parameters(), strict=True))
    print(f"{steps:,} steps, {sb3._n_updates} updates in SB3's loop, {trainer.updates} in ours; actions equal at "
          f"{np.sum(gap == 0):,} steps, the first to part: {parted[0] if parted.size else 'none'} (by up to "
          f"{gap.max():.3g}); learners' weights apart by up to {apart:.3g}")


def hosting(folder: str, seed: int = 2, steps: int = 30_000) -> None:
    from elfpy.gym_host import game_seed
    from elfpy.sb3 import make_sb3_vec_env

    engine, theirs = make_sb3_vec_env(f"gym:{bench.ENV_ID}", 1, seed=seed), gym.make(bench.ENV_ID)
    actions = np.random.default_rng(seed).uniform(-1, 1, (steps, 1, 6)).astype(np.float32)
    ours, (expected, _) = engine.reset(), theirs.reset(seed=game_seed(seed, 0))
    parted, resets = [], 0
    try:
        for t in range(steps):
            if not np.array_equal(ours[0], expected):
                parted.append(t)
            engine.step_async(actions[t])
            ours, reward, done, info = engine.step_wait()
            expected, their_reward, terminated, truncated, _ = theirs.step(actions[t, 0])
            final = info[0]["terminal_observation"] if done[0] else ours[0]
            if not (np.array_equal(final, expected) and reward[0] == np.float32(their_reward)
                    and bool(done[0]) == (terminated or truncated)):
                parted.append(t)
            if done[0]:
                resets += 1
                expected, _ = theirs.reset()
    finally:
        engine.close()
    print(f"{steps:,} steps, {resets} time limits: states, rewards and ends equal at all but {len(set(parted))}, "
          f"the first to part: {parted[0] if parted else 'none'}")


WHOLE_RUNS = {"ours": ["--contender", "rlpytorch"],
              "swap": ["--contender", "swap", "--our_exploration", "--our_replay", "--engine_env"]}


def whole(folder: str, side: str) -> None:
    actions = Path(folder)
    if side == "compare":
        ours, theirs = (np.load(actions / f"{name}.npy") for name in WHOLE_RUNS)
        steps = min(len(ours), len(theirs))  # our replay has not yet written the last step's row
        gap = np.abs(ours[:steps] - theirs[:steps]).max(1)
        parted = np.flatnonzero(gap > 0)
        print(f"{steps:,} steps; actions equal at {np.sum(gap == 0):,}, the first to part: "
              f"{parted[0] if parted.size else 'none'} (by up to {gap.max():.3g})")
        return
    kept = {}
    keep_trainer, make_sb3 = bench.train_keeping_trainer, bench.sb3_model

    def keeping_trainer(config: object) -> tuple:
        kept["ours"] = keep_trainer(config)
        return kept["ours"]

    def keeping_sb3(*args: object) -> object:
        kept["swap"] = make_sb3(*args)
        return kept["swap"]

    bench.train_keeping_trainer, bench.sb3_model = keeping_trainer, keeping_sb3
    sys.argv = ["bench_mujoco_sac.py", "--algo", "td3", "--seed", "0", "--out", "runs/td3_whole", *WHOLE_RUNS[side]]
    bench.main()
    if side == "ours":
        store = kept["ours"][1].replay.store
        rows = np.arange(int(store.count[0]))
        stepped = store.get("a", rows, np.zeros_like(rows))
    else:
        stepped = kept["swap"].replay_buffer.actions[:kept["swap"].num_timesteps, 0]
    actions.mkdir(parents=True, exist_ok=True)
    np.save(actions / f"{side}.npy", stepped)


if __name__ == "__main__":
    checks = {"transitions": transitions, "acting": acting, "streams": streams, "sampling": sampling,
              "identity": identity, "hosting": hosting, "whole": whole}
    check = sys.argv[1] if len(sys.argv) > 1 else ""
    arguments = {"whole": (*WHOLE_RUNS, "compare"), "identity": ("engine", "gym")}
    if check not in checks or not (len(sys.argv) == 2 and check != "whole"
                                   or len(sys.argv) == 3 and sys.argv[2] in arguments.get(check, ())):
        sys.exit(f"usage: loop_checks.py {'|'.join(c for c in checks if c not in arguments)}|identity [engine|gym]"
                 f"|whole ours|swap|compare")
    checks[check](f"/tmp/loop_checks_{check}", *sys.argv[2:])
