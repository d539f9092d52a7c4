#!/usr/bin/env python
"""PPO end to end on CartPole or MinAtar Breakout (--game), one shape for all:
rlpytorch on the engine beside PufferLib's ``pufferl`` and CleanRL's ``ppo.py``
loop; and where our time goes, part by part.

The shape (issue 63): 64 games x 16 steps a rollout (1,024 frames), 4 epochs x
2 minibatches of 512, one torch thread, Adam decaying linearly to 0 at the
frame budget, gamma 0.99, GAE lambda 0.95, clip 0.2, entropy 0.01, value 0.5,
gradient norm 0.5. Every contender trains from scratch for the same frame
budget (--frames); each run is a fresh process, whose wall and CPU seconds
(every thread, plus its child processes, reaped or not) count the training
only (from the first frame, set-up and imports left out), and which reports
the mean return of its last 100 episodes at the end.

CartPole (the default): separate policy and value MLPs (64, 64, tanh), lr
3e-3, value clipping 0.2 for all (as on Breakout), 300K frames; each contender
notes the frame at which its last-100 mean first reaches the target (475 on
CartPole-v1) without stopping there, so that frames per second and CPU per
frame are measured over the same frames for all.

Breakout (``--game breakout``): ``gym:MinAtar/Breakout-v1`` (3 actions, sticky
actions 0.1 as MinAtar's default), observations float32 channels first as our
``minatar`` preset gives them (``elfpy.gym_presets.minatar_observation``, used by
all three); rlpytorch's ``shared`` conv model (``conv_agent`` below: two 3x3
convs of 32 with 2x2 max-pooling, Linear 256, policy and value Linears), lr
1e-3, 153,600 frames (150 rollouts); value clipping 0.2 for all (rlpytorch's
--value_clip, CleanRL's clip_vloss, pufferl's vf_clip); no target, the check
is the final last-100 mean (random play scores about 0.5).

  rlpytorch   rlpytorch.train's PPO on the engine's CartPole (its defaults are
              the shape: --num_games 64 --T 17 --ppo_epochs 4 --minibatches 2,
              the mlp model, --lr 3e-3, --torch_threads 1); engine threads: one
              per core. As ``python -m rlpytorch.train --game cartpole --method
              ppo --value_clip 0.2 --stop_at_return 475 --num_frames BUDGET``,
              but the run goes on past the target (``keep_going_past_target``). On Breakout: as
              ``--game gym:MinAtar/Breakout-v1 --preset minatar --lr 1e-3
              --value_clip 0.2``, the game hosted by the engine (its workers:
              one process per core, their CPU counted).
  pufferl     PufferLib 3.0's ``PuffeRL`` trainer (evaluate/train loop as its
              ``pufferl.train`` runs it, rich dashboard included, printed into
              a buffer) on its native ``Cartpole(num_envs=64)``, bptt_horizon 16,
              batch 1,024, minibatch 512 (= max_minibatch_size), update_epochs
              4 (8 minibatches), Adam (not its default Muon), device cpu, no
              compile, no LSTM, prio_alpha 0 (uniform minibatches; its
              V-trace advantage with clip 1 is left as it is), vf_clip 0.2
              (CleanRL's clip_vloss), and the policy below. Its Ocean cartpole
              ends episodes at 200 steps (float32 physics, reward 0 on the last
              step), so its target is the same share of the maximum: mean
              episode length 190 of 200 (475 of 500). On Breakout: 64
              ``puffer_minatar`` (PufferLib's ``EpisodeStats`` in
              ``pufferlib.emulation.GymnasiumPufferEnv``) through
              ``pufferlib.vector.make``, backend Serial (--puffer_backend):
              PufferLib calls Multiprocessing the one "for most applications",
              one worker per physical core, but on 2 cores its two workers
              (which spin-wait up to 0.5 s for their next step) compete with
              the learner: a spot check at 51K frames gave 1,251 frames/s and
              763 us CPU a frame beside Serial's 2,511 and 283. Serial resets a
              finished env on its next step, which counts as a frame.
  cleanrl     CleanRL 1.2.0's ``ppo.py`` loop (``cleanrl_run`` below says what
              was taken and what changed) on ``envpool.make_gymnasium(
              "CartPole-v1", num_envs=64)``, one envpool thread per core; on
              Breakout (envpool has no MinAtar) on CleanRL's own default,
              Gymnasium's ``SyncVectorEnv`` of 64, autoreset in the same step
              as the Gymnasium 0.29 of CleanRL 1.2.0.

On CartPole the policy of pufferl and cleanrl is CleanRL's ``Agent``
(orthogonal initialisation); rlpytorch's is its ``mlp`` model, of the same
layers. On Breakout theirs is ``conv_agent``, rlpytorch's ``shared`` model's
layers and initialisation as a plain torch module.

``--parts`` (on by default) runs our contender once more per repeat with
timers around each part (``Parts``): the engine (stepping the games, batching,
storing each step into the train window: all C++), acting (the actor callback
less the network: observations to tensors, the sampler, replies to numpy),
storing on the Python side (window to tensors, normalisation hooks), returns
(GAE), minibatching (the permutation, cutting and indexing of minibatches),
losses, stats (.item() reads, episode records, the loop's progress and
logging), and the network (forward passes while acting, for V_old, and while
learning; backward; gradient clipping; the optimizer step), each its own
exclusive time. It trains the same way; the timers cost about a microsecond
each, so that run's fps is a little lower and not in the figures. On Breakout
the engine's part is mostly the main thread waiting for the engine's worker
processes, which step MinAtar in Python (their CPU is in the process's total).

With --baseline DIR (a checkout of an older commit whose elfpy/ holds its
built module), our contender is measured from there too, in the same run
("... (baseline)"), interleaved with the rest.

PufferLib: a venv built as ``benchmarks/bench_per_batch.py``'s docstring says,
passed as --puffer_python.
CleanRL: its loop is inline here (CleanRL itself is not installed).

    python benchmarks/bench_ppo.py --puffer_python VENV/bin/python --repeats 3
    python benchmarks/bench_ppo.py --game breakout --puffer_python VENV/bin/python --repeats 3
    python benchmarks/bench_ppo.py ... --baseline /tmp/base    # our contender before and after
    python benchmarks/bench_ppo.py --quick                     # smoke run: 20k frames (Breakout 10k), one repeat
    python benchmarks/bench_ppo.py ... --record                # append to benchmarks/results.jsonl
"""

from __future__ import annotations

import os

# BLAS/OpenMP pools must not spin beside the measured threads; set before numpy and torch load.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import deque  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, NamedTuple  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CONTENDERS = ("rlpytorch", "pufferl", "cleanrl")
PEER, PEERS = "pufferl", ("pufferl", "cleanrl")
GAMES, STEPS, EPOCHS, MINIBATCHES = 64, 16, 4, 2
GAMMA, LAMBDA, CLIP, ENT, VF, GRAD = 0.99, 0.95, 0.2, 0.01, 0.5, 0.5
MINATAR_ID = "MinAtar/Breakout-v1"
PUFFER_BACKENDS = ("Serial", "Multiprocessing")


class Game(NamedTuple):
    """What differs between the two games; the rest of the shape is the constants above."""

    name: str  # in the table's head and the recorded rows
    lr: float
    frames: int  # the default budget; --quick: ``quick``
    quick: int
    target: float | None  # the last-100 mean counted as solved (None: the final mean is the check)
    puffer_target: float | None  # pufferl's, on its own game
    titles: dict[str, str]
    rlpytorch: dict[str, Any]  # rlpytorch.config's game settings


SETUPS = {
    "cartpole": Game("CartPole", 3e-3, 300_000, 20_000, 475.0,  # of 500 (CartPole-v1)
                     190.0,  # of 200: PufferLib's Ocean cartpole ends episodes at 200 steps
                     {"rlpytorch": "rlpytorch PPO, engine", "pufferl": "PufferLib pufferl, Ocean native",
                      "cleanrl": "CleanRL ppo.py, envpool"},
                     {"game": "cartpole", "value_clip": CLIP}),
    "breakout": Game("MinAtar Breakout", 1e-3, 150 * GAMES * STEPS, 10 * GAMES * STEPS, None, None,
                     {"rlpytorch": "rlpytorch PPO, engine (hosted MinAtar)",
                      "pufferl": "PufferLib pufferl, GymnasiumPufferEnv",
                      "cleanrl": "CleanRL ppo.py, gymnasium SyncVectorEnv"},
                     {"game": f"gym:{MINATAR_ID}", "preset": "minatar", "value_clip": CLIP}),
}
GAME = SETUPS[os.environ.get("BENCH_GAME", "cartpole")]  # main() sets it from --game, its children from this
TITLES = {**GAME.titles, "baseline": GAME.titles["rlpytorch"] + " (baseline)"}


def use_game(name: str) -> None:
    global GAME, TITLES
    GAME = SETUPS[name]
    TITLES = {**GAME.titles, "baseline": GAME.titles["rlpytorch"] + " (baseline)"}


def cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and its reaped children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def live_children_cpu() -> float:
    """CPU seconds of this process's descendants not yet reaped (and of the children they
    reaped), from /proc: the engine's workers hosting Python games, PufferLib's
    Multiprocessing workers."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, ticks = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()  # from the state, field 3
            except OSError:
                continue
            parent[int(entry)] = int(fields[1])
            ticks[int(entry)] = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    mine, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier} - mine
        mine |= frontier
    return sum(ticks[pid] for pid in mine) / tick


class Clock:
    """Wall and CPU time from ``start()`` (the first frame) to ``stop()``,
    and where the target was first reached."""

    def start(self) -> None:
        self.wall, self.cpu = time.perf_counter(), cpu_seconds() + live_children_cpu()
        self.solved_frames: int | None = None
        self.solved_seconds: float | None = None

    def reached(self, frames: int) -> None:
        if self.solved_frames is None:
            self.solved_frames, self.solved_seconds = frames, time.perf_counter() - self.wall

    def result(self, frames: int, **extra: Any) -> dict:
        wall, cpu = time.perf_counter() - self.wall, cpu_seconds() + live_children_cpu() - self.cpu
        return {"frames": frames, "wall_s": wall, "cpu_s": cpu, "fps": frames / wall, "cpu_us_per_frame":
                cpu / frames * 1e6, "solved_frames": self.solved_frames, "solved_s": self.solved_seconds, **extra}


class LastEpisodes:
    """The mean of the last 100 episodes, from chunks (mean, count) of ended episodes."""

    def __init__(self, size: int = 100) -> None:
        self.size = size
        self.chunks: deque[tuple[float, int]] = deque()
        self.count = 0

    def add(self, mean: float, n: int) -> None:
        self.chunks.append((mean, n))
        self.count += n
        while self.chunks and self.count - self.chunks[0][1] >= self.size:
            self.count -= self.chunks.popleft()[1]

    def mean(self) -> float:
        if self.count < self.size:
            return -math.inf
        return self.final()

    def final(self) -> float:
        """The mean of the episodes held (the last 100, or all if fewer; NaN if none)."""
        return sum(m * n for m, n in self.chunks) / self.count if self.count else math.nan


# --- rlpytorch ----------------------------------------------------------------


def rlpytorch_config(seed: int, budget: int) -> Any:
    import rlpytorch

    target = math.inf if GAME.target is None else GAME.target
    return rlpytorch.config(method="ppo", **GAME.rlpytorch, lr=GAME.lr, seed=seed, num_frames=budget,
                            stop_at_return=target, save_dir="", progress=False, eval_at_end=False,
                            log_every=10**12)


def keep_going_past_target(clock: Clock) -> None:
    """The training loop notes the target's first frame on ``clock`` and goes on to its budget
    (``--stop_at_return`` alone would stop it there)."""
    from rlpytorch.run.single_process import SingleProcessRun

    after_step = SingleProcessRun._after_step

    def noted(self: Any, summary: Any) -> None:
        after_step(self, summary)
        if summary.target_reached_frames is not None:
            clock.reached(summary.target_reached_frames)
            summary.target_reached_at = summary.target_reached_frames = None

    SingleProcessRun._after_step = noted


def rlpytorch_run(seed: int, budget: int) -> dict:
    """Our contender: ``rlpytorch.Training`` of the shape's settings (its PPO defaults)."""
    import rlpytorch

    clock = Clock()
    keep_going_past_target(clock)
    with rlpytorch.Training(rlpytorch_config(seed, budget)) as training, \
            contextlib.redirect_stdout(io.StringIO()):
        clock.start()
        summary = training.learn(budget)
        result = clock.result(summary.frames, final_return=summary.mean_return)
    return result


class Parts:
    """Exclusive wall and CPU time of named parts: ``wrap`` times a callable,
    a part's time not counting the parts called inside it."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.stack: list[list[float]] = []  # [wall, cpu] spent in the parts inside the one running

    def wrap(self, name: str | Callable[..., str], fn: Callable) -> Callable:
        def timed(*args: Any, **kwargs: Any) -> Any:
            part = name if isinstance(name, str) else name()
            self.stack.append([0.0, 0.0])
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
                inner = self.stack.pop()
                self.wall[part] = self.wall.get(part, 0.0) + wall - inner[0]
                self.cpu[part] = self.cpu.get(part, 0.0) + cpu - inner[1]
                self.calls[part] = self.calls.get(part, 0) + 1
                if self.stack:
                    self.stack[-1][0] += wall
                    self.stack[-1][1] += cpu

        return timed


def forward_part() -> str:
    """Which forward pass of the model this is: acting, V_old, or learning."""
    import torch

    if torch.is_inference_mode_enabled():
        return "network: forward, acting"
    return "network: forward+loss graph, learning" if torch.is_grad_enabled() else "network: forward, V_old"


def rlpytorch_parts(seed: int, budget: int) -> dict:
    """Our contender with every part timed (``Parts``), on the main thread
    (the engine's own threads count in the engine's CPU only through the
    process's total, reported beside)."""
    import torch

    import rlpytorch
    from rlpytorch.acting import act as act_module
    from rlpytorch.learners import trainer as trainer_module
    from rlpytorch.methods import ppo as ppo_module
    from rlpytorch.models import interface as interface_module
    from rlpytorch.models.base import Model
    from rlpytorch.run.single_process import SingleProcessRun

    parts = Parts()
    patches = [
        # the loop's one batch: the engine, less the callbacks it calls
        (SingleProcessRun, "loop", lambda f: lambda self, start, step, stop: f(
            self, start, parts.wrap("engine: step games, batch, store window (C++)", step), stop)),
        (SingleProcessRun, "_after_step", lambda f: parts.wrap("stats: loop's progress, logging", f)),
        (trainer_module.Trainer, "actor", lambda f: parts.wrap("acting: glue (obs in, replies out)", f)),
        (trainer_module.ActingRecord, "record_acting", lambda f: parts.wrap("stats: episodes", f)),
        (trainer_module.ActingRecord, "record_update", lambda f: parts.wrap("stats: update stats", f)),
        (act_module.Sampler, "__call__", lambda f: parts.wrap("acting: sampler", f)),
        (SingleProcessRun, "_train", lambda f: parts.wrap("storing: window to tensors, hand-off", f)),
        (ppo_module.PPO, "update", lambda f: parts.wrap("minibatching: order, indexing", f)),
        (ppo_module, "_sequences", lambda f: parts.wrap("minibatching: order, indexing", f)),
        (ppo_module, "returns_of", lambda f: parts.wrap("returns: GAE", f)),
        (ppo_module.PPO, "_step", lambda f: parts.wrap("losses", f)),
        (Model, "__call__", lambda f: parts.wrap(forward_part, f)),
        (interface_module.ModelInterface, "step", lambda f: parts.wrap("optimizer: zero_grad, checks", f)),
        (torch.Tensor, "backward", lambda f: parts.wrap("network: backward", f)),
        (interface_module, "clip_grad_norm", lambda f: parts.wrap("optimizer: clip grad norm", f)),
        (torch.optim.Adam, "step", lambda f: parts.wrap("optimizer: Adam step", f)),
        (torch.Tensor, "item", lambda f: parts.wrap("stats: .item() reads", f)),
    ]
    for owner, name, wrapper in patches:
        setattr(owner, name, wrapper(getattr(owner, name)))
    clock = Clock()
    keep_going_past_target(clock)
    with rlpytorch.Training(rlpytorch_config(seed, budget)) as training, \
            contextlib.redirect_stdout(io.StringIO()):
        clock.start()
        wall, cpu = time.perf_counter(), time.thread_time()
        summary = training.learn(budget)
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        result = clock.result(summary.frames, final_return=summary.mean_return)
    parts.wall["other (loop, learn's set-up)"] = wall - sum(parts.wall.values())
    parts.cpu["other (loop, learn's set-up)"] = cpu - sum(parts.cpu.values())
    result["parts_wall"], result["parts_cpu"], result["parts_calls"] = parts.wall, parts.cpu, parts.calls
    result["main_thread_cpu_s"] = cpu
    return result


# --- the peers' policy and game -----------------------------------------------


def policy_methods(cls: type) -> type:
    """CleanRL's ``get_value`` and ``get_action_and_value``, and PufferLib's ``forward``,
    on a class with ``forward_eval(x, state)`` -> (logits, value) and ``value(x)``."""
    from torch.distributions.categorical import Categorical

    def get_action_and_value(self: Any, x: Any, action: Any = None) -> tuple:
        logits, value = self.forward_eval(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), value

    cls.get_action_and_value = get_action_and_value
    cls.get_value = lambda self, x: self.value(x)
    cls.forward = lambda self, x, state=None: self.forward_eval(x, state)
    return cls


def agent(observations: int, actions: int) -> Any:
    """CleanRL ppo.py's ``Agent``: separate critic and actor MLPs (64, 64, tanh),
    orthogonal initialisation (sqrt 2; 0.01 for the policy's last layer, 1 for the value's)."""
    import numpy as np
    import torch
    from torch import nn

    def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
        torch.nn.init.orthogonal_(layer.weight, std)
        torch.nn.init.constant_(layer.bias, bias_const)
        return layer

    class Agent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.critic = nn.Sequential(layer_init(nn.Linear(observations, 64)), nn.Tanh(),
                                        layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                        layer_init(nn.Linear(64, 1), std=1.0))
            self.actor = nn.Sequential(layer_init(nn.Linear(observations, 64)), nn.Tanh(),
                                       layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                       layer_init(nn.Linear(64, actions), std=0.01))

        # PufferLib's policy interface: (logits, value) of a batch
        def forward_eval(self, x: Any, state: Any = None) -> tuple[Any, Any]:
            return self.actor(x), self.critic(x)

        def value(self, x: Any) -> Any:
            return self.critic(x)

    return policy_methods(Agent)()


def conv_agent(shape: tuple[int, int, int], actions: int) -> Any:
    """rlpytorch's ``shared`` model on MinAtar (``--model auto``: ``ConvEncoder`` of
    ``--channels 32,32 --hidden 64`` and ``PolicyHead``/``ValueHead``) as a plain torch
    module: (3x3 conv padding 1, ReLU, 2x2 max-pool) x 2 of 32 channels, Linear to 256,
    ReLU, shared by a policy Linear (orthogonal, gain 0.01, zero bias: rlpytorch's) and a
    value Linear; torch's default initialisation elsewhere, as rlpytorch's. The policy
    gives logits (rlpytorch's head gives their softmax)."""
    import torch
    from torch import nn

    c, h, w = shape

    class ConvAgent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = nn.Sequential(nn.Conv2d(c, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                         nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                         nn.Flatten(), nn.Linear(32 * (h // 2 // 2) * (w // 2 // 2), 256), nn.ReLU())
            self.actor = nn.Linear(256, actions)
            torch.nn.init.orthogonal_(self.actor.weight, 0.01)
            torch.nn.init.zeros_(self.actor.bias)
            self.critic = nn.Linear(256, 1)

        def forward_eval(self, x: Any, state: Any = None) -> tuple[Any, Any]:
            hidden = self.network(x)
            return self.actor(hidden), self.critic(hidden)

        def value(self, x: Any) -> Any:
            return self.critic(self.network(x))

    return policy_methods(ConvAgent)()


def minatar_env() -> Any:
    """MinAtar Breakout as a Gymnasium env, its observations converted as our ``minatar``
    preset converts them (``elfpy.gym_presets.minatar_observation``: float32 channels first)."""
    import gymnasium as gym
    import numpy as np

    from elfpy.gym_presets import make_gym_env, minatar_observation

    env = make_gym_env(MINATAR_ID)
    h, w, c = env.observation_space.shape
    space = gym.spaces.Box(0.0, 1.0, (c, h, w), np.float32)
    return gym.wrappers.TransformObservation(env, minatar_observation, space)


# --- pufferl -----------------------------------------------------------------


def puffer_minatar(buf: Any = None, seed: int = 0) -> Any:
    """One MinAtar Breakout as PufferLib hosts a Gymnasium env: its ``EpisodeStats``
    (episode return and length in the info of an episode's last step) in ``GymnasiumPufferEnv``."""
    import pufferlib
    import pufferlib.emulation

    return pufferlib.emulation.GymnasiumPufferEnv(env=pufferlib.EpisodeStats(minatar_env()), buf=buf, seed=seed)


def pufferl_envs(seed: int, last: LastEpisodes) -> Any:
    """The vector env of pufferl, its ``recv`` noting each ended episode in ``last``:
    on CartPole its native Ocean env, on Breakout ``pufferlib.vector.make`` of 64
    ``puffer_minatar`` on the backend of $BENCH_PUFFER_BACKEND (Multiprocessing: one
    worker per core, all 64 envs a batch)."""
    import pufferlib.vector

    if GAME is SETUPS["cartpole"]:
        from pufferlib.ocean.cartpole.cartpole import Cartpole

        env = Cartpole(num_envs=GAMES, seed=seed)

        def note(infos: Any) -> None:  # the cartpole's log: a mean over n episodes
            for info in infos:
                if info.get("n"):
                    last.add(float(info["episode_length"]), int(info["n"]))
    else:
        backend = os.environ.get("BENCH_PUFFER_BACKEND", "Serial")
        workers = {"num_workers": int(os.environ.get("BENCH_THREADS", "2")), "batch_size": GAMES} \
            if backend == "Multiprocessing" else {}
        env = pufferlib.vector.make(puffer_minatar, backend=getattr(pufferlib.vector, backend), num_envs=GAMES,
                                    seed=seed, **workers)

        def note(infos: Any) -> None:  # EpisodeStats: one info per ended episode
            for info in infos:
                if "episode_return" in info:
                    last.add(float(info["episode_return"]), 1)

    receive = env.recv

    def recv() -> Any:
        out = receive()
        note(out[4])
        return out

    env.recv = recv
    return env


def pufferl_run(seed: int, budget: int) -> dict:
    """PufferLib's trainer in the shape (see the docstring)."""
    import ast
    import configparser

    import numpy as np
    import pufferlib
    import torch
    from pufferlib import pufferl

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    np.random.seed(seed)
    folder = Path(pufferlib.__file__).parent / "config"
    ini = configparser.ConfigParser()
    ini.read([folder / "default.ini", folder / "ocean" / "cartpole.ini"])
    config = {key: ast.literal_eval(value) if value[:1].isdigit() or value in ("True", "False") else value
              for key, value in ini["train"].items()}
    config.update(env="puffer_cartpole", seed=seed, device="cpu", use_rnn=False, compile=False, optimizer="adam",
                  adam_beta1=0.9, adam_beta2=0.999, adam_eps=1e-5, learning_rate=GAME.lr, anneal_lr=True,
                  total_timesteps=budget, batch_size=GAMES * STEPS, bptt_horizon=STEPS,
                  minibatch_size=GAMES * STEPS // MINIBATCHES, max_minibatch_size=GAMES * STEPS // MINIBATCHES,
                  update_epochs=EPOCHS, gamma=GAMMA, gae_lambda=LAMBDA, clip_coef=CLIP, vf_clip_coef=CLIP,
                  vf_coef=VF, ent_coef=ENT, max_grad_norm=GRAD, prio_alpha=0.0, prio_beta0=1.0,
                  checkpoint_interval=10**9, cpu_offload=False, precision="float32")
    last = LastEpisodes()
    env = pufferl_envs(seed, last)
    space = env.single_observation_space
    policy = agent(space.shape[0], env.single_action_space.n) if GAME is SETUPS["cartpole"] \
        else conv_agent(space.shape, env.single_action_space.n)
    clock = Clock()
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # autocast(cuda) on a CPU build
        trainer = pufferl.PuffeRL(config, env, policy)
        clock.start()
        while trainer.global_step < budget:
            trainer.evaluate()
            trainer.train()
            if GAME.puffer_target is not None and last.mean() >= GAME.puffer_target:
                clock.reached(trainer.global_step)
        # its own timers (one epoch in five): eval = env + forward + copy + misc, train = forward + learn + ...
        profile = {name: times["elapsed"] for name, times in trainer.profile}
        result = clock.result(trainer.global_step, profile=profile,
                              final_return=last.final())
        trainer.utilization.stop()
        env.close()
    return result


# --- cleanrl -----------------------------------------------------------------


def cleanrl_envs(seed: int) -> Any:
    """CleanRL's vector env: envpool's CartPole-v1 (one thread per core), or Gymnasium's
    ``SyncVectorEnv`` (CleanRL's own) of 64 ``minatar_env``, autoreset in the same step
    (``AutoresetMode.SAME_STEP``, as the Gymnasium 0.29 that CleanRL 1.2.0 pins did)."""
    if GAME is SETUPS["cartpole"]:
        import envpool

        return envpool.make_gymnasium("CartPole-v1", num_envs=GAMES, seed=seed,
                                      num_threads=int(os.environ.get("BENCH_THREADS", "2")))
    import gymnasium as gym

    return gym.vector.SyncVectorEnv([minatar_env] * GAMES, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


def cleanrl_run(seed: int, budget: int) -> dict:
    """CleanRL 1.2.0's ppo.py loop on envpool's CartPole-v1 (on Breakout: Gymnasium's
    SyncVectorEnv, ``cleanrl_envs``; the policy ``conv_agent``, with ppo_atari.py's
    shared trunk).

    Taken from ppo.py as it is: the Agent, Adam(eps=1e-5), the linear
    learning-rate annealing, the rollout storage and its per-step writes,
    the GAE loop, the flattened batch, the epochs of shuffled minibatches
    (np.random.shuffle of indices), the losses (clip_vloss on, norm_adv on),
    clip_grad_norm_, and the per-update stats it computes (clipfracs'
    .item() per minibatch, explained variance, the losses' .item()).
    Changed: the envs (envpool.make_gymnasium("CartPole-v1", num_envs=64,
    seed=seed) in place of gym's SyncVectorEnv; done = terminated | truncated;
    envpool resets a done env on the next step, which is counted as a frame),
    episode returns summed here (in place of RecordEpisodeStatistics; the
    target is the mean of the last 100), the SummaryWriter and prints dropped
    (their values are still computed), and the settings of the shape
    (num_envs 64, num_steps 16, num_minibatches 2, update_epochs 4, lr 3e-3,
    total_timesteps = the budget), one torch thread."""
    import random

    import numpy as np
    import torch
    from torch import nn, optim

    torch.set_num_threads(1)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    device = torch.device("cpu")
    num_envs, num_steps = GAMES, STEPS
    batch_size = num_envs * num_steps
    minibatch_size = batch_size // MINIBATCHES
    envs = cleanrl_envs(seed)
    observation_space, action_space = envs.single_observation_space, envs.single_action_space
    model = agent(observation_space.shape[0], action_space.n) if GAME is SETUPS["cartpole"] \
        else conv_agent(observation_space.shape, action_space.n)
    get_action_and_value = model.get_action_and_value

    optimizer = optim.Adam(model.parameters(), lr=GAME.lr, eps=1e-5)
    obs = torch.zeros((num_steps, num_envs) + observation_space.shape).to(device)
    actions = torch.zeros((num_steps, num_envs) + action_space.shape).to(device)
    logprobs = torch.zeros((num_steps, num_envs)).to(device)
    rewards = torch.zeros((num_steps, num_envs)).to(device)
    dones = torch.zeros((num_steps, num_envs)).to(device)
    values = torch.zeros((num_steps, num_envs)).to(device)
    episode_return = np.zeros(num_envs)
    last = LastEpisodes()

    clock = Clock()
    clock.start()
    global_step = 0
    seeded = {} if GAME is SETUPS["cartpole"] else {"seed": seed}  # envpool's envs are seeded at make
    next_obs = torch.Tensor(envs.reset(**seeded)[0]).to(device)
    next_done = torch.zeros(num_envs).to(device)
    num_updates = budget // batch_size
    for update in range(1, num_updates + 1):
        frac = 1.0 - (update - 1.0) / num_updates
        optimizer.param_groups[0]["lr"] = frac * GAME.lr
        for step in range(0, num_steps):
            global_step += 1 * num_envs
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            next_obs, reward, terminated, truncated, _ = envs.step(action.cpu().numpy())
            done = np.logical_or(terminated, truncated)
            rewards[step] = torch.tensor(reward).to(device).view(-1)
            next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(done).to(device)
            episode_return += reward
            if done.any():
                for ended in episode_return[done].tolist():
                    last.add(ended, 1)
                episode_return[done] = 0.0

        with torch.no_grad():
            next_value = model.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards).to(device)
            lastgaelam = 0
            for t in reversed(range(num_steps)):
                if t == num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + GAMMA * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + GAMMA * LAMBDA * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1,) + observation_space.shape)
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape((-1,) + action_space.shape)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)
        b_inds = np.arange(batch_size)
        clipfracs = []
        for _ in range(EPOCHS):
            np.random.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb_inds = b_inds[start:start + minibatch_size]
                _, newlogprob, entropy, newvalue = get_action_and_value(b_obs[mb_inds], b_actions.long()[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > CLIP).float().mean().item()]
                mb_advantages = b_advantages[mb_inds]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - CLIP, 1 + CLIP)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()
                newvalue = newvalue.view(-1)
                v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -CLIP, CLIP)
                v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - ENT * entropy_loss + v_loss * VF
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), GRAD)
                optimizer.step()

        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        _ = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        _ = (v_loss.item(), pg_loss.item(), entropy_loss.item(), old_approx_kl.item(), approx_kl.item(),
             np.mean(clipfracs))
        if GAME.target is not None and last.mean() >= GAME.target:
            clock.reached(global_step)
    result = clock.result(global_step, final_return=last.final())
    envs.close()
    return result


RUNS = {"rlpytorch": rlpytorch_run, "pufferl": pufferl_run, "cleanrl": cleanrl_run, "parts": rlpytorch_parts,
        "baseline": rlpytorch_run}


# --- the run -----------------------------------------------------------------


def measure(kind: str, seed: int, budget: int, threads: int, python: str, path: Path, game: str,
            puffer_backend: str) -> dict:
    """One training of ``kind`` on ``game`` in a fresh process, its code from the checkout ``path``
    (in a scratch folder: PufferLib writes where it runs)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(path), os.environ.get("PYTHONPATH")) if p),
           "BENCH_THREADS": str(threads), "BENCH_GAME": game, "BENCH_PUFFER_BACKEND": puffer_backend}
    with tempfile.TemporaryDirectory(prefix="bench_ppo_") as scratch:
        out = subprocess.run([python, "-W", "ignore", __file__, "--child", kind, str(seed), str(budget)],
                             capture_output=True, text=True, env=env, cwd=scratch)
    if out.returncode != 0:
        raise RuntimeError(f"{kind} seed {seed} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def med(runs: list[dict], field: str) -> float:
    return statistics.median(r[field] for r in runs)


def parts_table(runs: list[dict]) -> str:
    """The parts of our contender: median wall and CPU per 1,024-frame rollout and
    their shares of the main thread's time."""
    names = list(runs[0]["parts_wall"])
    per = lambda r, table, name: r[table][name] / r["frames"] * GAMES * STEPS * 1e3  # noqa: E731 (ms a rollout)
    total_wall = statistics.median(sum(r["parts_wall"].values()) / r["frames"] * GAMES * STEPS * 1e3 for r in runs)
    lines = ["| part (rlpytorch, main thread) | wall ms / rollout | CPU ms / rollout | share of wall |",
             "|---|---:|---:|---:|"]
    rows = []
    for name in names:
        wall = statistics.median(per(r, "parts_wall", name) for r in runs)
        cpu = statistics.median(per(r, "parts_cpu", name) for r in runs)
        rows.append((wall, cpu, name))
    for wall, cpu, name in sorted(rows, reverse=True):
        lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / total_wall:.0%} |")
    network = sum(w for w, _, n in rows if n.startswith("network"))
    lines.append(f"| **all but the network** | {total_wall - network:.2f} | "
                 f"{sum(c for _, c, n in rows if not n.startswith('network')):.2f} "
                 f"| {(total_wall - network) / total_wall:.0%} |")
    lines.append(f"| **whole rollout and update** | {total_wall:.2f} | {sum(c for _, c, _ in rows):.2f} | 100% |")
    process = statistics.median(r["cpu_s"] / r["frames"] * GAMES * STEPS * 1e3 for r in runs)
    lines.append(f"\nProcess CPU (every thread, the engine's included): {process:.2f} ms a rollout; "
                 f"timed run's fps {med(runs, 'fps'):,.0f}.")
    return "\n".join(lines)


def puffer_shares(runs: list[dict]) -> str:
    """pufferl's own breakdown (its Profile, which times one epoch in five), as shares of its timed total."""
    parts = [name for name in runs[0]["profile"] if name not in ("eval", "train")]
    total = lambda r: sum(r["profile"][n] for n in parts)  # noqa: E731
    shares = {n: statistics.median(r["profile"][n] / total(r) for r in runs) for n in parts}
    return "pufferl's own timers, share of its time: " + ", ".join(
        f"{n} {v:.0%}" for n, v in sorted(shares.items(), key=lambda kv: -kv[1]))


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        warnings.filterwarnings("ignore")
        print(json.dumps(RUNS[sys.argv[2]](int(sys.argv[3]), int(sys.argv[4]))))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import report
    from bench_engine import usable_cores

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=tuple(SETUPS), default="cartpole")
    parser.add_argument("--repeats", type=int, default=3, help="trainings per contender (seeds seed, seed+1, ...)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frames", type=int, help="frame budget of every training (default: CartPole 300,000, "
                                                   "Breakout 153,600)")
    parser.add_argument("--puffer_backend", choices=PUFFER_BACKENDS, default="Serial",
                        help="pufferlib.vector's backend on Breakout (see the docstring)")
    parser.add_argument("--contenders", nargs="+", default=list(CONTENDERS), choices=CONTENDERS)
    parser.add_argument("--parts", action=argparse.BooleanOptionalAction, default=True,
                        help="also time our contender part by part (one more run per repeat)")
    parser.add_argument("--puffer_python", help="the Python of a venv with PufferLib 3.0 (see above)")
    parser.add_argument("--baseline", type=Path, help="a checkout whose rlpytorch and elfpy (built) are measured too")
    parser.add_argument("--quick", action="store_true", help="20k frames (Breakout: 10,240), one repeat")
    report.add_options(parser)
    args = parser.parse_args()
    use_game(args.game)
    args.frames = args.frames or GAME.frames
    if args.quick:
        args.frames, args.repeats = GAME.quick, 1
    if args.puffer_python is None and "pufferl" in args.contenders:
        args.contenders.remove("pufferl")
        print("pufferl left out: no --puffer_python", file=sys.stderr)
    threads = usable_cores()
    contenders = list(args.contenders) + (["baseline"] if args.baseline else [])
    plan = contenders + (["parts"] if args.parts else [])
    results: dict[str, list[dict]] = {kind: [] for kind in plan}
    load_start = os.getloadavg()[0]
    for repeat in range(args.repeats):
        seed = args.seed + repeat
        shift = repeat % len(plan)
        for kind in plan[shift:] + plan[:shift]:
            python = args.puffer_python if kind == "pufferl" else sys.executable
            r = measure(kind, seed, args.frames, threads, python, args.baseline if kind == "baseline" else REPO,
                        args.game, args.puffer_backend)
            results[kind].append(r)
            solved = f"{r['solved_frames']:,}" if r["solved_frames"] else "not reached"
            print(f"[{repeat + 1}/{args.repeats}] seed {seed} {kind:10s} {r['fps']:9,.0f} frames/s "
                  f"{r['cpu_us_per_frame']:6.1f} us CPU/frame  {r['frames']:,} frames, to target {solved}, "
                  f"final return {r['final_return']:.2f}, load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)

    backend = f"; pufferl's backend {args.puffer_backend}" if args.game != "cartpole" else ""
    print(f"PPO on {GAME.name}, {GAMES} games x {STEPS} steps, {EPOCHS} epochs x {MINIBATCHES} minibatches, "
          f"lr {GAME.lr:g}, {args.frames:,} frames; median of {args.repeats} (seeds {args.seed}-"
          f"{args.seed + args.repeats - 1}); {threads} engine/envpool threads, 1 torch thread{backend}; load average "
          f"{load_start:.1f} at start, {os.getloadavg()[0]:.1f} at end; commit {report.current_commit()}")
    learned = "frames to target (each)" if GAME.target is not None else "final return, last 100 (each)"
    lines = [f"| trainer | frames/s | CPU us/frame | wall s | CPU s | {learned} | vs pufferl fps, CPU "
             "| vs cleanrl fps, CPU |", "|---|---:|---:|---:|---:|---|---:|---:|"]
    for kind in contenders:
        runs = results[kind]
        if GAME.target is not None:
            each = ", ".join(f"{r['solved_frames']:,}" if r["solved_frames"] else f"{r['frames']:,}*" for r in runs)
        else:
            each = ", ".join(f"{r['final_return']:.2f}" for r in runs)
        vs = []
        for other in PEERS:  # frames/s over the peer's, and the peer's CPU per frame over ours
            peer = results.get(other)
            vs.append(f"{med(runs, 'fps') / med(peer, 'fps'):.2f}x, "
                      f"{med(peer, 'cpu_us_per_frame') / med(runs, 'cpu_us_per_frame'):.2f}x"
                      if peer and kind != other else "")
        lines.append(f"| {TITLES[kind]} | {med(runs, 'fps'):,.0f} | {med(runs, 'cpu_us_per_frame'):.1f} "
                     f"| {med(runs, 'wall_s'):.1f} | {med(runs, 'cpu_s'):.1f} | {each} | {vs[0]} | {vs[1]} |")
    print("\n".join(lines))
    if GAME.target is not None:
        print("(* target not reached within the budget; pufferl's target: length 190 of 200)")
    print()
    peer = results.get(PEER)
    if args.parts:
        print(parts_table(results["parts"]) + "\n")
    if peer:
        print(puffer_shares(peer) + "\n")

    figures = []
    for kind in contenders:
        runs = results[kind]
        row = f"PPO 64x16 on {GAME.name}: {TITLES[kind]}"
        compared = None if kind == PEER or PEER not in args.contenders else f"PPO 64x16 on {GAME.name}: {TITLES[PEER]}"
        for metric, field, unit, better in (("frames/s", "fps", "", "higher"),
                                            ("CPU per frame", "cpu_us_per_frame", "us", "lower")):
            figures.append(dict(benchmark="training", row=row, metric=metric, unit=unit, better=better,
                                values=[round(r[field], 1 if unit else -1) for r in runs], peer=compared))
        if GAME.target is not None:
            figures.append(dict(benchmark="training", row=row, metric="frames to target", unit="", better="lower",
                                values=[r["solved_frames"] or r["frames"] for r in runs],
                                failures=sum(not r["solved_frames"] for r in runs), peer=None))
        else:
            figures.append(dict(benchmark="training", row=row, metric="final return (last 100 episodes)", unit="",
                                better="higher", values=[round(r["final_return"], 2) for r in runs], peer=None))
    report.publish(figures, args)


if __name__ == "__main__":
    main()
