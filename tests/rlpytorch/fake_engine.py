"""A pure-Python stand-in for ``elfpy.GameContext`` running CartPole (tests only).

It follows the engine's conventions so rlpytorch can be tested without the
C++ build: row t holds s_t; r_t and terminal_t describe the previous action;
after a terminal the row already holds the next episode's first state;
``truncated`` marks time-limit ends; ``episode_return``/``episode_length`` are
set on terminal rows, and ``final_s`` holds the state the episode ended in;
``add_key`` declares extra reply keys (``pi``, ``V``, a recurrent state ``h``) that the
history keeps; T > 1 tags get time-major ``[T, B]`` windows that overlap by
one row. Games move in lockstep; batch sizes must divide ``num_games``.
"""

from __future__ import annotations

from collections import namedtuple

import gymnasium as gym
import numpy as np

KeySpec = namedtuple("KeySpec", "name dtype shape meaning role bounds space", defaults=(None,))

SPECS = {
    "s": KeySpec("s", np.dtype(np.float32), (4,), "observation", "observation", None),
    "a": KeySpec("a", np.dtype(np.int64), (), "action", "action", (0, 1), gym.spaces.Discrete(2)),
    "r": KeySpec("r", np.dtype(np.float32), (), "reward of the previous action", "engine", None),
    "terminal": KeySpec("terminal", np.dtype(np.bool_), (), "episode ended", "engine", None),
    "truncated": KeySpec("truncated", np.dtype(np.bool_), (), "time limit", "engine", None),
    "episode_return": KeySpec("episode_return", np.dtype(np.float32), (), "", "engine", None),
    "episode_length": KeySpec("episode_length", np.dtype(np.int32), (), "", "engine", None),
    "final_s": KeySpec("final_s", np.dtype(np.float32), (4,), "state the episode ended in", "engine", None),
}
STATE_KEYS = ("s", "r", "terminal", "truncated", "episode_return", "episode_length", "final_s")


class FakeBatch:
    """Mapping-like batch: ``batch[key]``, ``keys()``, ``len()`` = rows, ``tag``, ``game_ids``."""

    def __init__(self, tag: str, data: dict, game_ids: np.ndarray) -> None:
        self.tag = tag
        self._data = data
        self.game_ids = game_ids.astype(np.int32)
        self.seats = np.zeros_like(self.game_ids)

    def __getitem__(self, key):
        return self._data[key]

    def keys(self):
        return self._data.keys()

    def __len__(self) -> int:
        return len(self.game_ids)


def train_window(T: int = 4, B: int = 3, seed: int = 0) -> FakeBatch:
    """A CartPole-shaped ``[T, B]`` train window: random states and actions,
    uniform behaviour policy, zero values, reward 1, no episode end."""
    rng = np.random.default_rng(seed)
    data = {
        "s": rng.normal(size=(T, B, 4)).astype(np.float32),
        "a": rng.integers(0, 2, (T, B)),
        "pi": np.full((T, B, 2), 0.5, np.float32),
        "V": np.zeros((T, B), np.float32),
        "r": np.ones((T, B), np.float32),
        "terminal": np.zeros((T, B), bool),
    }
    return FakeBatch("train", data, np.arange(B))


class CartPoles:
    """``n`` CartPole-v1 games in numpy (same physics and limits as Gymnasium)."""

    def __init__(self, n: int, seed: int, max_steps: int = 500) -> None:
        self.rng = np.random.default_rng(seed)
        self.max_steps = max_steps
        self.x = self.rng.uniform(-0.05, 0.05, (n, 4))
        self.steps = np.zeros(n, np.int64)
        self.ret = np.zeros(n, np.float64)

    def step(self, a: np.ndarray):
        x, x_dot, th, th_dot = self.x.T
        force = np.where(a == 1, 10.0, -10.0)
        cos, sin = np.cos(th), np.sin(th)
        temp = (force + 0.05 * th_dot**2 * sin) / 1.1
        th_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos**2 / 1.1))
        x_acc = temp - 0.05 * th_acc * cos / 1.1
        self.x = np.stack([x + 0.02 * x_dot, x_dot + 0.02 * x_acc, th + 0.02 * th_dot, th_dot + 0.02 * th_acc], 1)
        self.steps += 1
        self.ret += 1.0
        failed = (np.abs(self.x[:, 0]) > 2.4) | (np.abs(self.x[:, 2]) > 0.2095)
        truncated = ~failed & (self.steps >= self.max_steps)
        done = failed | truncated
        ep_ret, ep_len, final = self.ret.copy(), self.steps.copy(), self.x.copy()
        k = int(done.sum())
        self.x[done] = self.rng.uniform(-0.05, 0.05, (k, 4))
        self.steps[done] = 0
        self.ret[done] = 0.0
        return done, truncated, ep_ret, ep_len, final


class FakeGameContext:
    """Lockstep CartPole games behind the ``GameContext`` API."""

    def __init__(self, game: str = "cartpole", num_games: int = 8, seed: int = 0, max_steps: int = 500, **_) -> None:
        assert game == "cartpole"
        self.num_games = num_games
        self.games = CartPoles(num_games, seed, int(max_steps))
        self.specs = dict(SPECS)
        self.tags: dict[str, dict] = {}
        self.callbacks: dict = {}
        self.started = self.stopped = False
        n = num_games
        self.row = {
            "s": self.games.x.astype(np.float32),
            "r": np.zeros(n, np.float32),
            "terminal": np.zeros(n, bool),
            "truncated": np.zeros(n, bool),
            "episode_return": np.zeros(n, np.float32),
            "episode_length": np.zeros(n, np.int32),
            "final_s": np.zeros((n, 4), np.float32),
        }

    @property
    def num_seats(self) -> int:
        return 1

    def add_key(self, name, dtype, shape=(), meaning=""):
        assert not self.tags, "add_key must come before add_tag"
        self.specs[name] = KeySpec(name, np.dtype(dtype), tuple(shape), meaning, "extra", None)

    def add_tag(self, tag, batch_size, inputs, replies=(), T=1):
        assert self.num_games % batch_size == 0
        unknown = [k for k in list(inputs) + list(replies) if k not in self.specs]
        assert not unknown, f"unknown keys {unknown}"
        self.tags[tag] = {"batch_size": batch_size, "inputs": list(inputs), "replies": list(replies), "T": T}

    def spec(self, tag=None):
        if tag is None:
            return dict(self.specs)
        t = self.tags[tag]
        return {k: self.specs[k] for k in t["inputs"] + t["replies"]}

    def reg_callback(self, tag, fn):
        self.callbacks[tag] = fn

    def start(self):
        self.started = True
        self._events = self._loop()

    def run(self):
        assert self.started and not self.stopped, "run() outside start()/stop()"
        tag, batch, apply = next(self._events)
        reply = self.callbacks[tag](batch)
        if apply is not None:
            apply(reply)

    def stop(self):
        self.stopped = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def _chunks(self, tag):
        size = self.tags[tag]["batch_size"]
        return [np.arange(i, i + size) for i in range(0, self.num_games, size)]

    def _loop(self):
        actor = self.tags["actor"]
        train = self.tags.get("train")
        history: list[dict] = []
        rows = 0
        reply_keys = actor["replies"]
        replies = {k: [None] * self.num_games for k in reply_keys}
        while True:
            for ids in self._chunks("actor"):
                data = {k: self.row[k][ids] for k in actor["inputs"]}

                def apply(reply, ids=ids):
                    for k in reply_keys:
                        for i, g in enumerate(ids):
                            replies[k][g] = np.asarray(reply[k])[i]

                yield "actor", FakeBatch("actor", data, ids), apply
            full = {**self.row, **{k: np.stack(v) for k, v in replies.items()}}
            history.append({k: v.copy() for k, v in full.items()})
            rows += 1
            self._step(full["a"])
            if train is None:
                continue
            T = train["T"]
            history = history[-T:]
            if rows >= T and (rows - T) % (T - 1) == 0:
                for ids in self._chunks("train"):
                    data = {k: np.stack([h[k][ids] for h in history]) for k in train["inputs"]}
                    yield "train", FakeBatch("train", data, ids), None

    def _step(self, a):
        done, truncated, ep_ret, ep_len, final = self.games.step(a)
        self.row = {
            "final_s": np.where(done[:, None], final, 0).astype(np.float32),
            "s": self.games.x.astype(np.float32),
            "r": np.ones(self.num_games, np.float32),
            "terminal": done,
            "truncated": truncated,
            "episode_return": np.where(done, ep_ret, 0).astype(np.float32),
            "episode_length": np.where(done, ep_len, 0).astype(np.int32),
        }
