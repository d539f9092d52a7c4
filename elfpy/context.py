"""GameContext: many games stepped in C++, their states batched by tag.

A tag is a stream of batches with its own batch size, input keys, reply keys
and history length T. Tags with replies ("actor") hold each game until Python
replies; tags without ("train") never hold a game back, except that a game
waits for a free buffer when Python falls behind.

Step semantics (every game, every seat). Row t of a game holds: ::

  s_t               the observation at step t (the game's own keys);
  r_t               the reward for the previous action a_{t-1} (0 at the start);
  terminal_t        a_{t-1} ended the episode. Episodes reset automatically,
                    so s_t is then already the first state of the NEXT episode
                    and the actor's reply a_t acts in that new episode
                    (`defer_resets()` resets on that reply instead);
  truncated_t       the episode that ended was cut by a time limit;
  episode_return_t, episode_length_t
                    the current episode's return and length so far; on a
                    terminal row, the final ones of the episode that ended;
  a_t               the action the actor replied at step t, and any extra
                    reply key the actor declared with `add_key` (such as
                    a policy `pi` or a value `V`), kept in the history;
  statistic keys    an episode's outcome (e.g. MiniRTS's `won`), meaningful
                    on terminal rows.

So an episode's return is the sum of r over the rows after its first row up
to and including its terminal row, and the return of a_t in a [T, B] window
is R_t = r_{t+1} + gamma * (1 - terminal_{t+1}) * R_{t+1}. Consecutive windows
of a game overlap by one step, so the last row of a window can be bootstrapped
and reappears as the first row of the next.

Seats that leave. In a game whose agents may leave an episode early (a
PettingZoo ParallelEnv removes an agent from `agents` while others play on),
the seat's row of the step it left holds terminal_t = 1 (truncated_t as the
agent's), its last reward, its episode's final return and length, and its last
observation in `final_<key>`; its observation keys are zero. Until the game's
episode ends, every row of that seat is empty: zero observation keys (and
`final_` keys), r = 0,
terminal = 1, truncated = 0, episode_return = episode_length = 0 (a terminal
row of length 0 ends no episode). Its replies are still checked, then ignored.
The other seats' rows go on unchanged, and when the game's episode ends every
seat starts the next one.

Finite values. A game's reward, and the float observation and statistic
keys (and `final_` copies) a tag reads, must be finite: a NaN or infinite
one, from any game, raises GameError naming the game, seat and key, and no
batch holds it.

Actions. `spec()[key].space` is the action key's `gymnasium.spaces` space:
Discrete, MultiDiscrete or Box (float32). A reply outside an integer space,
or a NaN or infinite Box value, raises ValueError naming the tag, key, row
and game, and no game steps with it. A finite Box value outside [low, high]
passes unchanged: each game clips it to its bounds itself, as Gymnasium
environments do.

Keys. The engine declares the game's keys and its own (`r`, `terminal`,
`truncated`, `episode_return`, `episode_length`, `final_<key>`) and nothing
else: whatever an actor replies beyond the game's actions is declared with
`add_key(name, dtype, shape, meaning)` before the tags. `start()` raises
ValueError naming the tag and key when a tag reads a reply key that no tag
with replies replies.

Batch arrays are numpy views of the engine's buffers (no copy; torch.from_numpy
on them copies nothing). They are valid only until the callback returns (or,
when iterating, until the next batch): copy what you keep.
"""

from __future__ import annotations

import math
import numbers
import reprlib
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from elfpy import _elf
from elfpy.limits import MAX_COUNT
from elfpy.sources import open_source

_WAIT_SLICE_MS = 100  # how often a waiting run() returns to Python to see Ctrl-C and check the game source


def games() -> list[str]:
    """Names of the registered native games."""
    return list(_elf.games())


class KeySpec(NamedTuple):
    """What one key of a batch holds. `shape` is per row (no T or batch axis).

    `role`: "observation" and "statistic" (an episode's outcome, read on
    terminal rows) are written by the game, "action" and "extra" replied by
    Python, "engine" written by the engine. `space` is an action key's
    `gymnasium.spaces` space (Discrete, MultiDiscrete or Box), and an
    observation key's where the game states one (a native game's Box with
    its Gymnasium counterpart's bounds, a hosted environment's own), None for
    every other key; `bounds` the lowest and highest value of every element.
    `seats`: the seats that write the key where only some do (a PettingZoo
    game whose agents' observations differ), None where every seat does."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    meaning: str
    role: str
    bounds: tuple[float, float] | None
    space: gym.Space | None = None
    seats: tuple[int, ...] | None = None


def _key_space(dtype: np.dtype, shape: tuple[int, ...], bounds: tuple[float, float] | None,
               space: tuple | None) -> gym.Space | None:
    """The gymnasium space of the engine's (kind, nvec, low, high)."""
    if space is None:
        return None
    kind, nvec, low, high = space
    if kind == "discrete":
        return gym.spaces.Discrete(int(nvec[0]), start=int(bounds[0]))
    if kind == "multi_discrete":
        return gym.spaces.MultiDiscrete(np.asarray(nvec, np.int64))
    def per_element(bound: Any) -> np.ndarray:  # one bound for every element, or one per element
        values = np.asarray(bound, dtype).reshape(-1)
        return np.full(shape, values[0], dtype) if values.size == 1 else values.reshape(shape)

    return gym.spaces.Box(per_element(low), per_element(high), shape, dtype)


def _key_spec(d: Mapping[str, Any], seats: tuple[int, ...] | None = None) -> KeySpec:
    """A KeySpec from the engine's description of a key."""
    dtype, shape = np.dtype(d["dtype"]), tuple(d["shape"])
    return KeySpec(d["name"], dtype, shape, d["meaning"], d["role"], d["bounds"],
                   _key_space(dtype, shape, d["bounds"], d["space"]), seats)


class TagInfo(NamedTuple):
    """A tag as added: its batch size, history length and keys."""

    name: str
    batch_size: int
    T: int
    inputs: tuple[str, ...]
    replies: tuple[str, ...]


class Batch(Mapping):
    """One batch of one tag: `batch[key]` is a numpy view, `[B, ...]` for T = 1
    and time-major `[T, B, ...]` for T > 1. `arrays` is the same, as a
    read-only mapping of key to view (quicker to read many keys from)."""

    __slots__ = ("tag", "game_ids", "seats", "arrays", "_owner", "_state", "_ref", "_done")

    def __init__(self, owner: weakref.ref[GameContext], state: _TagState, ref: tuple,
                 arrays: Mapping[str, np.ndarray], game_ids: np.ndarray, seats: np.ndarray) -> None:
        self.tag = state.name
        self.game_ids = game_ids
        self.seats = seats
        self.arrays = arrays
        # A weak reference: the context keeps its last handed-out batch, and a
        # cycle would leave a dropped context (and its threads and workers)
        # alive until Python's cycle collector runs; this way `del` stops it.
        self._owner = owner
        self._state = state
        self._ref = ref
        self._done = False

    def __getitem__(self, key: str) -> np.ndarray:
        try:
            return self.arrays[key]
        except KeyError:
            raise KeyError(f"tag '{self.tag}' has no input '{key}'; its inputs: {sorted(self.arrays)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrays)

    def __len__(self) -> int:
        return int(self.game_ids.shape[0])

    def reply(self, replies: Mapping[str, Any] | None, *, refusal_keeps_batch: bool = False) -> None:
        """Sends this batch's replies (iteration mode; callbacks return them instead).

        A reply refused (a key missing, a wrong shape or dtype, a value
        outside its space) raises ValueError and fails the context; with
        `refusal_keeps_batch` the context goes on instead and the batch waits
        for another reply (no game stepped)."""
        owner = self._owner()
        if owner is None:
            raise RuntimeError(f"batch of tag '{self.tag}' outlived its GameContext, which was dropped and stopped")
        owner._finish(self, replies, refusal_keeps_batch)

    def reply_and_next(self, replies: Mapping[str, Any] | None, *, refusal_keeps_batch: bool = False) -> Batch:
        """`reply(replies)`, then the context's next batch, as iteration would
        hand it out (reply to it in turn): a loop that replies and at once
        waits, such as `make_vector`'s step, in one call to the engine."""
        owner = self._owner()
        if owner is None:
            raise RuntimeError(f"batch of tag '{self.tag}' outlived its GameContext, which was dropped and stopped")
        return owner._reply_and_next(self, replies, refusal_keeps_batch)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}: {tuple(v.shape)}" for k, v in self.arrays.items())
        return f"Batch(tag='{self.tag}', size={len(self)}, {shapes})"


class _TagState:
    """What Python keeps per tag: its config, a view of every buffer (made
    once: a full batch hands out these very views), and its reply keys'
    dtypes and row shapes (read for every batch)."""

    def __init__(self, ctx: Any, index: int, keys: Mapping[str, KeySpec]) -> None:
        info = ctx.tag_info(index)
        self.index = index
        self.name: str = info["name"]
        self.T: int = info["T"]
        self.capacity: int = info["capacity"]
        self.inputs: list[str] = info["inputs"]
        self.replies: list[str] = info["replies"]
        self.reply_keys = {k: None for k in self.replies}.keys()  # compared with a reply dict's keys
        self.reply_specs = [(k, keys[k].dtype, keys[k].shape) for k in self.replies]
        # Per buffer: (input views, game_ids, seats) of all its rows, and its reply views.
        self.full: list[tuple[Mapping[str, np.ndarray], np.ndarray, np.ndarray]] = []
        self.reply_views: list[dict[str, np.ndarray]] = []
        for buffer in range(info["num_buffers"]):
            views = MappingProxyType({k: ctx.input_array(index, buffer, i) for i, k in enumerate(self.inputs)})
            self.full.append((views, *ctx.row_arrays(index, buffer)))
            self.reply_views.append({k: ctx.reply_array(index, buffer, i) for i, k in enumerate(self.replies)})

    def arrays(self, buffer: int, size: int) -> tuple[Mapping[str, np.ndarray], np.ndarray, np.ndarray]:
        """The views of the first `size` rows of `buffer`."""
        views, game_ids, seats = self.full[buffer]
        if size == self.capacity:
            return views, game_ids, seats
        if self.T == 1:
            return MappingProxyType({k: v[:size] for k, v in views.items()}), game_ids[:size], seats[:size]
        return MappingProxyType({k: v[:, :size] for k, v in views.items()}), game_ids[:size], seats[:size]


def _is_int(value: Any) -> bool:
    """An integer (Python's or numpy's), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_count(name: str, value: Any, low: int, where: str = "") -> None:
    """Refuse ``value`` unless it is an integer from ``low`` to ``MAX_COUNT``
    (a ValueError naming ``name``, after ``where``: the tag, if any)."""
    if not _is_int(value) or not low <= value <= MAX_COUNT:
        raise ValueError(f"{where}{name} must be an integer from {low} to 2**31 - 1, got {reprlib.repr(value)}")


def _as_numpy(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):  # a torch tensor, on any device
        return value.detach().cpu().numpy()
    return np.asarray(value)


class GameContext:
    """Runs `num_games` copies of a game on `num_threads` C++ threads.

    >>> gc = GameContext("cartpole", num_games=256, num_threads=2, seed=0)
    >>> gc.add_tag("actor", batch_size=64, inputs=["s", "r", "terminal"], replies=["a"])
    >>> gc.reg_callback("actor", lambda b: {"a": np.random.randint(0, 2, len(b))})
    >>> gc.start(); gc.run(); gc.stop()

    With `deterministic=True` batch contents and their order depend only on
    the seed (and the replies), not on thread timing; timeouts are then
    ignored. Extra keyword arguments are the game's options (`game_options`).

    Python-hosted games: `game` is `"gym:<Gymnasium id>"`, `"pz:<module>"`
    (a PettingZoo ParallelEnv from `<module>.parallel_env`, or its AEC `env`
    turn by turn, one seat per agent: `elfpy.pz_host`) or a callable that
    returns an environment; they run in `num_workers` processes (default: one
    per CPU), the extra keyword arguments go to the environment, `preset`
    names a standard set-up (`elfpy.gym_presets`, e.g. "atari"), the
    hooks `preprocess` and `reshape_reward` apply (see `elfpy.gym_host`),
    and with `step_timeout_s` a step, or a first reset, that takes longer
    fails the context (GameError naming the environment and its worker),
    and so does the environment made first to read the game's spaces, from
    this constructor; `render_frames` adds each env's `render()` as key
    `rgb_frame`.

    envpool's C++ environments: `game` is `"envpool:<task>"` (e.g.
    "envpool:Pong-v5", its Atari with the standard preprocessing); game g is
    environment g of one envpool pool seeded `seed`, stepped by
    `num_workers` envpool threads, the extra keyword arguments are envpool's
    options, and no Python runs per game (see `elfpy.envpool_host`).

    Whatever the state (a worker killed or stuck in `step`, batches held or
    replied), stop() returns promptly; after a GameError the engine's threads,
    the worker processes and their shared memory are already gone.
    """

    def __init__(self, game: str | Callable[..., Any], num_games: int, num_threads: int | None = None,
                 seed: int = 0, deterministic: bool = False, *, num_workers: int | None = None,
                 preset: str | None = None, preprocess: Callable[[Any], Any] | None = None,
                 reshape_reward: Callable[[Any, Any, float, bool], float] | None = None,
                 step_timeout_s: float | None = None, render_frames: bool = False, **game_options: Any) -> None:
        if not _is_int(seed) or not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an integer from 0 to 2**64 - 1, got {reprlib.repr(seed)}")
        _check_count("num_games", num_games, 1)
        for name, count in (("num_threads", num_threads), ("num_workers", num_workers)):
            if count is not None:
                _check_count(name, count, 1)
        hosting = {"num_workers": num_workers, "preset": preset, "preprocess": preprocess,
                   "reshape_reward": reshape_reward, "step_timeout_s": step_timeout_s}
        if render_frames:  # a hosted game's frames (elfpy.gym_host's "Rendering"); named only when asked for
            hosting["render_frames"] = True
        self._source = open_source(game, num_games, num_threads, seed, deterministic, hosting, game_options)
        self._ctx = self._source.context
        seats_per_game = self._ctx.num_seats()
        if num_games * seats_per_game > MAX_COUNT:  # the engine numbers every seat of every game in a C++ int
            self._source.close()
            raise ValueError(f"num_games must be at most {MAX_COUNT // seats_per_game} for '{self._source.name}' "
                             f"(2**31 - 1 seats in all, {seats_per_game} a game), got {num_games}")
        self.game = self._source.name
        seats = self._source.key_seats
        self._keys = {k["name"]: _key_spec(k, seats.get(k["name"].removeprefix("final_"))) for k in self._ctx.keys()}
        self._tags: dict[str, int] = {}
        self._tag_states: list[_TagState] = []
        self._callbacks: dict[str, Callable[[Batch], Any]] = {}
        self._started = False
        self._stopped = False
        self._pending: Batch | None = None  # iteration mode: the batch handed out last
        self._weak_self = weakref.ref(self)  # each batch's owner (see Batch)

    # --- configuration ---------------------------------------------------

    @staticmethod
    def games() -> list[str]:
        return games()

    @staticmethod
    def game_options(game: str) -> list[tuple[str, str, str]]:
        """(name, default, help) of every option of a native game."""
        return list(_elf.game_options(game))

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the workers hosting a Python-hosted game (none for native games)."""
        return self._source.worker_pids

    @property
    def num_seats(self) -> int:
        return self._ctx.num_seats()

    @property
    def seat_names(self) -> tuple[str, ...]:
        """The agent at each seat of a PettingZoo game (`possible_agents`), else ()."""
        return self._source.seat_names

    def add_key(self, name: str, dtype: str, shape: Sequence[int] = (), meaning: str = "") -> None:
        """Declares an extra reply key that an actor replies and the history
        keeps for training tags: a policy `pi`, a value `V`, a recurrent state
        `h`, ... (the engine declares none itself). Before `add_tag`."""
        where = f"key {reprlib.repr(name)}: "
        for size in shape:
            _check_count("a shape's size", size, 0, where)
        if math.prod(shape) > MAX_COUNT:
            raise ValueError(f"{where}shape {reprlib.repr(tuple(shape))} holds more than 2**31 - 1 elements a row")
        self._ctx.add_key(name, np.dtype(dtype).name, list(shape), meaning)
        self._keys[name] = KeySpec(name, np.dtype(dtype), tuple(shape), meaning, "extra", None)

    def add_tag(self, name: str, batch_size: int, inputs: Sequence[str], replies: Sequence[str] = (),
                T: int = 1, timeout_ms: int | None = None, min_batch: int = 1,
                seats: Sequence[int] | None = None) -> None:
        """Adds a tag. `seats` routes only those seats of each game here (all by
        default). With `timeout_ms`, a batch holding at least `min_batch` rows
        is delivered partial once its first row has waited that long. A batch
        that can never fill (every game waits for replies to rows already in
        it or in other filling batches) is delivered as it is."""
        if isinstance(inputs, str) or isinstance(replies, str):
            raise TypeError("inputs and replies are lists of key names, e.g. inputs=['s']")
        where = f"tag {reprlib.repr(name)}: "
        if timeout_ms is not None and (not _is_int(timeout_ms) or not 0 <= timeout_ms <= MAX_COUNT):
            raise ValueError(f"{where}timeout_ms must be an integer from 0 to 2**31 - 1 (None: wait for a full "
                             f"batch), got {reprlib.repr(timeout_ms)}")
        for setting, count in (("batch_size", batch_size), ("T", T), ("min_batch", min_batch)):
            _check_count(setting, count, 1, where)
        for seat in seats or ():
            _check_count("a seat", seat, 0, where)
        self._ctx.add_tag(name, batch_size, list(inputs), list(replies), T,
                          -1 if timeout_ms is None else int(timeout_ms), min_batch, list(seats or []))
        self._tags[name] = len(self._tags)

    def spec(self, tag: str | None = None) -> dict[str, KeySpec]:
        """Every key (or the inputs and replies of `tag`): dtype, per-row shape, meaning."""
        if tag is None:
            return dict(self._keys)
        index = self._tag_index(tag)
        info = self._ctx.tag_info(index)
        return {k: self._keys[k] for k in [*info["inputs"], *info["replies"]]}

    def defer_resets(self) -> None:
        """Resets an ended episode on the next reply instead of at once
        (Gymnasium's `AutoresetMode.NEXT_STEP`), before `start()`: a terminal
        row then shows the state the episode ended in (as `final_<key>` does),
        the reply to it only resets the game, which does not step with it,
        and the next row is the next episode's first (r = 0, not terminal)."""
        self._ctx.defer_resets()

    def tag_info(self, tag: str) -> TagInfo:
        """How `tag` was added (batch size, T, inputs, replies)."""
        info = self._ctx.tag_info(self._tag_index(tag))
        return TagInfo(info["name"], info["batch_size"], info["T"], tuple(info["inputs"]), tuple(info["replies"]))

    def reg_callback(self, tag: str, fn: Callable[[Batch], Any]) -> None:
        """`fn(batch)` handles every batch of `tag`; for a tag with replies it
        returns a dict of arrays (numpy or torch) with one row per batch row."""
        self._tag_index(tag)
        self._callbacks[tag] = fn

    def handoffs(self) -> dict[str, int | float]:
        """The engine's hand-offs between threads so far, each a wake-up (a
        futex call and a context switch): `worker_wakeups`, engine threads
        woken for work; `caller_sleeps`, waits of run() (or iteration) that
        found no batch ready and slept. `batches_stepped_by_caller` counts
        the replied batches whose games the calling thread stepped itself
        (small batches, where a hand-off costs more than the work),
        `batches_given_to_pool` the others. Those two are decided per batch;
        the wake-ups and sleeps also depend on the scheduler (a worker still
        finishing one batch takes the next without being woken).
        `wake_latency_ns` is the least of the last few measured delays from
        waking a worker to its running (not a count): a batch whose work is
        under about two of them steps on the caller. `batches_closed_stalled`
        counts the batches delivered short because every game waited for rows
        of batches still filling (docs/engine.md, "A batch that can never
        fill"), timeout or not."""
        return dict(self._ctx.handoffs())

    def _tag_index(self, tag: str) -> int:
        if tag not in self._tags:
            raise ValueError(f"unknown tag '{tag}'; valid tags: {sorted(self._tags) or '(none)'}")
        return self._tags[tag]

    # --- running -----------------------------------------------------------

    def start(self) -> None:
        if self._stopped:
            raise RuntimeError("start() after stop(): create a new GameContext")
        if self._started:
            raise RuntimeError("start() called twice")
        self._ctx.start()
        self._started = True
        self._tag_states = [_TagState(self._ctx, i, self._keys) for i in range(len(self._tags))]

    def run(self) -> str:
        """Waits for the next batch of any tag, calls its callback, sends the
        replies and lets its games go on. Returns the batch's tag. Ctrl-C at
        any point stops the context before KeyboardInterrupt propagates."""
        try:
            return self._run_once()
        except KeyboardInterrupt:
            self.stop()
            raise

    def _run_once(self) -> str:
        batch = self._next_batch()
        fn = self._callbacks.get(batch.tag)
        if fn is None:
            message = f"no callback registered for tag '{batch.tag}'"
            self._ctx.fail(message)
            raise ValueError(message)
        try:
            replies = fn(batch)
        except BaseException as error:
            self._ctx.fail(f"callback for tag '{batch.tag}' raised {type(error).__name__}: {error}")
            raise
        self._finish(batch, replies)
        return batch.tag

    def __iter__(self) -> Iterator[Batch]:
        """Yields batches without callbacks; reply with `batch.reply({...})`
        before asking for the next one. A batch without replies is released
        when the next one is asked for."""
        while True:
            if self._pending is not None and not self._pending._done:
                pending = self._pending
                if self._tag_states[self._tags[pending.tag]].replies:
                    message = f"batch of tag '{pending.tag}' was not replied; call batch.reply({{...}}) first"
                    self._ctx.fail(message)
                    raise RuntimeError(message)
                self._finish(pending, None)
            self._pending = self._next_batch()
            yield self._pending

    def stop(self) -> None:
        """Stops the engine's threads and any worker processes, and returns
        in any state; safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        self._source.close()

    def __enter__(self) -> GameContext:
        if not self._started:
            self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def __del__(self) -> None:
        if getattr(self, "_source", None) is not None and not getattr(self, "_stopped", True):
            self.stop()

    # --- internals ---------------------------------------------------------

    def _next_batch(self) -> Batch:
        if self._stopped:
            raise RuntimeError("GameContext is stopped")
        if not self._started:
            raise RuntimeError("run() before start()")
        ctx = self._ctx
        try:
            ref = None
            while ref is None:
                self._check_source()
                ref = ctx.wait(_WAIT_SLICE_MS)
        except _elf.GameError:
            # Nothing more can run: release the workers and shared memory now,
            # not at stop(). The engine keeps raising this error on later calls.
            self._source.close()
            raise
        except KeyboardInterrupt:  # also reached from iteration, which has no run()
            self.stop()
            raise
        return self._batch_of(ref)

    def _batch_of(self, ref: tuple) -> Batch:
        """The batch of a (tag, batch, buffer, size) that the engine handed out."""
        state = self._tag_states[ref[0]]
        buffer, size = ref[2], ref[3]
        arrays, game_ids, seats = state.full[buffer] if size == state.capacity else state.arrays(buffer, size)
        return Batch(self._weak_self, state, ref, arrays, game_ids, seats)

    def _check_source(self) -> None:
        """Fails the context if something outside the engine broke (a worker
        process of a Python-hosted game died), so the next wait raises."""
        message = self._source.failure()
        if message is not None:
            self._ctx.fail(message)

    def _reply_and_next(self, batch: Batch, replies: Mapping[str, Any] | None, refusal_keeps_batch: bool) -> Batch:
        ref = False  # False: not submitted yet
        if not (self._stopped or batch._done) and batch._state.replies:
            self._check_source()
            try:
                # The usual reply: submitted and the next batch waited for in one
                # call (None: none came yet); False, nothing done, for any other.
                ref = self._ctx.submit_plain_replies_and_wait(batch._ref, replies, _WAIT_SLICE_MS)
            except _elf.GameError:  # the engine failed (after the replies went in, if they did)
                batch._done = True
                self._source.close()
                raise
            except KeyboardInterrupt:
                self.stop()
                raise
            except Exception as error:  # as _finish: the replies were refused, nothing went in
                self._submit_failed(batch, error, refusal_keeps_batch)
                raise
        if ref is False:
            self._finish(batch, replies, refusal_keeps_batch)
        else:
            batch._done = True
        self._pending = batch = self._next_batch() if not ref else self._batch_of(ref)
        return batch

    def _finish(self, batch: Batch, replies: Mapping[str, Any] | None, refusal_keeps_batch: bool = False) -> None:
        if batch._done:
            raise RuntimeError(f"batch of tag '{batch.tag}' was already finished")
        state = batch._state
        if not state.replies:
            batch._done = True
            self._ctx.release(*batch._ref)
            return
        try:
            # The engine checks the values before it takes the batch back, so a
            # refused batch is still held and may be replied again. The usual
            # reply (a dict of numpy arrays of the keys' dtypes and shapes) is
            # copied and submitted in one call; any other is checked and
            # converted here, with errors naming the tag and key.
            if not self._ctx.submit_plain_replies(batch._ref, replies):
                self._write_replies(state, batch, replies)
                self._ctx.submit_replies(*batch._ref)
        except Exception as error:
            self._submit_failed(batch, error, refusal_keeps_batch)
            raise
        batch._done = True

    def _submit_failed(self, batch: Batch, error: Exception, refusal_keeps_batch: bool) -> None:
        """After submitting `batch`'s replies raised `error`: a refused reply
        (ValueError) keeps the batch held if `refusal_keeps_batch`; anything
        else finishes the batch and fails the context."""
        if not (refusal_keeps_batch and isinstance(error, ValueError)):
            batch._done = True
            self._ctx.fail(str(error))

    def _write_replies(self, state: _TagState, batch: Batch, replies: Mapping[str, Any] | None) -> None:
        # A plain dict with exactly the reply keys (the usual reply) skips the
        # generic Mapping checks, which cost more than the copy at small batches.
        if type(replies) is not dict or replies.keys() != state.reply_keys:
            where = f"tag '{state.name}'"
            if not isinstance(replies, Mapping):
                raise ValueError(f"{where}: the callback must return a dict with keys {state.replies}, "
                                 f"got {type(replies).__name__}")
            missing = [k for k in state.replies if k not in replies]
            extra = [k for k in replies if k not in state.replies]
            if missing or extra:
                raise ValueError(f"{where}: reply keys must be {state.replies}; missing {missing}, "
                                 f"unexpected {extra}")
        size = len(batch.game_ids)
        views = state.reply_views[batch._ref[2]]
        full = size == state.capacity
        for key, dtype, shape in state.reply_specs:
            value = _as_numpy(replies[key])
            if value.shape != (size, *shape):
                raise ValueError(f"tag '{state.name}', key '{key}': reply has shape {value.shape}, "
                                 f"expected {(size, *shape)}")
            view = views[key] if full else views[key][:size]
            if value.dtype == dtype:
                view[...] = value  # a plain assignment: a third of copyto's cost
                continue
            if not np.can_cast(value.dtype, dtype, casting="same_kind"):
                raise ValueError(f"tag '{state.name}', key '{key}': reply has dtype {value.dtype}, expected {dtype}")
            np.copyto(view, value, casting="same_kind")
