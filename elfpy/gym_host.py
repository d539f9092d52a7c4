"""Python-hosted games: Gymnasium environments in worker processes.

`GameContext("gym:ALE/Pong-v5", num_games=16, num_workers=2)` creates a
`GymHost`: `num_workers` processes, each owning a contiguous run of the
games, and one block of shared memory (an anonymous memfd, so nothing is
left in /dev/shm even if every process is killed). The engine treats each
environment as a game (`elf::RemoteGame`): it posts the action into the
block, the worker steps the environment and writes the observation, reward
and outcome back, and the engine batches the rows like a native game's. A
worker resets an environment in the same request that ended its episode and
keeps the last observation in `final_<key>`, so auto-reset semantics are
the native games' (see `elfpy.context`).

Keys. An observation that is an array becomes key `s`; a Dict observation
becomes one key per entry. Each key's dtype and shape are those of the first
observation (numbers widen, never narrow): a later observation of another
shape, or of a dtype the key cannot hold without loss (float values for an
integer key, float64 for float32), fails the game with a GameError naming
the game, its worker and the key. Without `preprocess`, each key's
spec states the environment's observation space for it (a Box's bounds, a
Discrete's count) where the key holds its values unchanged. The action is
key `a`, whose spec states
the environment's space as it is: Discrete (int64 in [0, n)),
MultiDiscrete (int64 [k], each component its own count) or Box (float32,
each element its own bounds), so the engine rejects a reply outside it
before any game of the batch steps. A Dict action space of such entries
becomes one action key per entry, named as the entry (a name an observation
key also has is a ValueError), and the worker passes env.step the dict of
the entries' replies; a nested Dict or Tuple is refused. Hooks run in the
workers: `preprocess(obs)` turns an observation into arrays (or a dict of
arrays) before it is stored, e.g. text into token ids;
`reshape_reward(obs, action, reward, done)` returns the reward to store.
The factory and hooks reach the workers through cloudpickle, so lambdas and
functions of the user's script work too.

A PettingZoo ParallelEnv or AECEnv (`"pz:<module>"` or a factory returning
one) is hosted the same way with one seat per agent: see `elfpy.pz_host`.

Lifetime. The workers ignore Ctrl-C and SIGTERM: the context stops them, once
its run has saved. Should the process that made the context die without
stopping them (SIGKILL), each worker closes its environments and exits when it
next waits for work, and is killed 2 s after its parent's death if it has not
(inside a step that never returns): see `elfpy.parent_watch`.

Rendering. Games that draw with pygame (classic control, MPE) start SDL when
they first render, which looks for a display and a sound device and, without
a desktop session, prints "error: XDG_RUNTIME_DIR is invalid or not set in
the environment". A hosted game renders only into arrays (pixel observations,
videos), so the workers, the probe environment made here and `elfpy.video`
(`headless_rendering`) run SDL on its dummy drivers (`HEADLESS_SDL`), which
draw the same pixels silently; SDL_VIDEODRIVER or SDL_AUDIODRIVER set by the
user win, and a game made with render_mode="human" keeps SDL's own. With
`render_frames` (a single-agent game made with render_mode="rgb_array"),
each worker stores the environment's `render()` after every reset and step
in the observation key `rgb_frame` (and the frame of the state an episode
ended in in `final_rgb_frame`), for `elfpy.make_vector`'s `render()`.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import cloudpickle  # a gymnasium dependency; pickles lambdas and functions of __main__ by value
import gymnasium
import numpy as np
from gymnasium import spaces

from elfpy import _elf
from elfpy.child_call import call_in_child, interpreter_environment
from elfpy.gym_presets import resolve
from elfpy.parent_watch import signal_when_parent_exits
from elfpy.pz_host import ParallelServer, SeatLayout, is_parallel_env

_ENGINE_DTYPES = ("float32", "float64", "int32", "int64", "uint8", "bool")
_POLL_MS = 200  # how often an idle worker checks that its parent is alive
_EXIT_GRACE_S = 0.3  # how long close() lets the workers exit on their own before it kills them
_ORPHAN_GRACE_S = 2.0  # how long a worker whose parent died may take to close its environments
HEADLESS_SDL = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}  # see "Rendering" above
FRAME_KEY = "rgb_frame"  # with render_frames: the environment's render() after every reset and step


def is_hosted(game: Any) -> bool:
    """Whether `game` names a Python-hosted game rather than a native one."""
    return callable(game) or (isinstance(game, str) and game.startswith(("gym:", "pz:")))


def observation_arrays(observation: Any) -> dict[str, np.ndarray]:
    """An observation as the engine's keys: a dict's entries, or one array as `s`."""
    if isinstance(observation, dict):
        return {str(name): np.asarray(value) for name, value in observation.items()}
    return {"s": np.asarray(observation)}


def _engine_dtype(name: str, array: np.ndarray) -> str:
    """The engine dtype an observation is stored as (numbers widen, never narrow)."""
    kind = array.dtype.kind
    if array.dtype.name in _ENGINE_DTYPES:
        return array.dtype.name
    if kind == "f":
        return "float32" if array.dtype.itemsize < 4 else "float64"
    if kind in "iu":
        return "int64"
    raise ValueError(f"observation '{name}' holds {array.dtype} values (e.g. text), which a batch cannot carry; "
                     "pass preprocess= to turn it into numbers (e.g. token ids)")


def observation_keys(sample: Any, bounds: dict[str, tuple[float, float]] | None = None) -> list[dict[str, Any]]:
    """Keys for observations shaped like `sample` (already preprocessed),
    with the value bounds a preset states for some of them."""
    keys = []
    for name, array in observation_arrays(sample).items():
        keys.append({"name": name, "dtype": _engine_dtype(name, array), "shape": list(array.shape),
                     "meaning": f"observation '{name}'", "role": "observation",
                     "bounds": (bounds or {}).get(name)})
    return keys


def _stated_space(space: Any, key: dict[str, Any]) -> tuple | None:
    """The engine's (kind, nvec, low, high) of the observation space an
    environment states for `key`, where the key holds its values unchanged
    (the same dtype and shape); None where it does not, or the space is not a
    Box, Discrete or MultiDiscrete from 0. A Box of booleans (MinAtar's) is left
    to the key's dtype, MultiBinary: the engine keeps Box spaces for numbers."""
    if tuple(space.shape or ()) != tuple(key["shape"]) or np.dtype(space.dtype).name != key["dtype"]:
        return None
    if isinstance(space, spaces.Box) and key["dtype"] != "bool":
        low, high = (np.asarray(bound, np.float64).reshape(-1) for bound in (space.low, space.high))
        if low.size and (low == low[0]).all() and (high == high[0]).all():
            low, high = low[:1], high[:1]  # one bound for every element: a picture's need not be stored per pixel
        return ("box", [], low.tolist(), high.tolist())
    if isinstance(space, spaces.Discrete):
        return ("discrete", [int(space.n)], [], [])
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1 and not space.start.any():
        return ("multi_discrete", space.nvec.astype(np.int64).tolist(), [], [])
    return None


def with_observation_space(keys: list[dict[str, Any]], space: Any) -> list[dict[str, Any]]:
    """Observation keys with the space their environment states for each
    (the whole space for `s`, a Dict's entries for its keys), where the key
    holds its values unchanged (see `_stated_space`)."""
    entries = space.spaces if isinstance(space, spaces.Dict) else {"s": space}
    stated_keys = []
    for key in keys:
        entry = entries.get(key["name"])
        stated = None if entry is None else _stated_space(entry, key)
        if stated is not None:
            key = {**key, "space": stated}
            if stated[0] == "discrete":
                key["bounds"] = (int(entry.start), int(entry.start) + int(entry.n) - 1)
        stated_keys.append(key)
    return stated_keys


def action_key(space: Any) -> dict[str, Any]:
    """The key `a` for a Gymnasium action space, with the engine's space
    (kind, nvec, low, high): each MultiDiscrete component's count and each
    Box element's bounds (the engine derives `bounds` from it)."""
    key = {"name": "a", "role": "action", "meaning": f"action ({space})", "bounds": None}
    if isinstance(space, spaces.Discrete):
        return {**key, "dtype": "int64", "shape": [], "space": ("discrete", [int(space.n)], [], [])}
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1:
        return {**key, "dtype": "int64", "shape": [len(space.nvec)],
                "space": ("multi_discrete", space.nvec.astype(np.int64).tolist(), [], [])}
    if isinstance(space, spaces.Box):
        low, high = (np.asarray(bound, np.float64).reshape(-1).tolist() for bound in (space.low, space.high))
        return {**key, "dtype": "float32", "shape": list(space.shape), "space": ("box", [], low, high)}
    raise ValueError(f"unsupported action space {space}; use Discrete, MultiDiscrete or Box")


def action_keys(space: Any, observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The action keys of a Gymnasium action space: `a`, or for a Dict one key
    per entry, named as the entry (so a batch and env.step use one name)."""
    if not isinstance(space, spaces.Dict):
        return [action_key(space)]
    taken = {key["name"] for key in observations}
    keys = []
    for name, entry in space.spaces.items():
        if isinstance(entry, (spaces.Dict, spaces.Tuple)):
            raise ValueError(f"action entry '{name}' of {space} is nested ({type(entry).__name__}); "
                             "use a flat Dict of Discrete, MultiDiscrete or Box entries")
        if name in taken:
            raise ValueError(f"action entry '{name}' has the name of an observation key; rename one of them")
        keys.append({**action_key(entry), "name": str(name), "meaning": f"action entry '{name}' ({entry})"})
    return keys


def stored_action(space: Any, views: dict[str, np.ndarray], channel: int) -> Any:
    """The stored reply of one channel: the row of `a`, or for a Dict the rows of its entries."""
    if isinstance(space, spaces.Dict):
        return {name: views["action/" + name][channel] for name in space.spaces}
    return views["action/a"][channel]


def env_action(space: Any, stored: Any) -> Any:
    """The action to pass to env.step, from its stored row (a dict of rows for a
    Dict space; the engine checked it against the space)."""
    if isinstance(space, spaces.Dict):
        return {name: env_action(entry, stored[name]) for name, entry in space.spaces.items()}
    if isinstance(space, spaces.Discrete):
        return int(stored) + int(space.start)
    if isinstance(space, spaces.MultiDiscrete):
        return stored.copy() + space.start
    return stored.copy()


def headless_environment(env_kwargs: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The SDL drivers to add to this process's environment for a game made with
    `env_kwargs`: `HEADLESS_SDL` less those the user set, none for render_mode="human"."""
    if (env_kwargs or {}).get("render_mode") == "human":
        return {}
    return {name: value for name, value in HEADLESS_SDL.items() if name not in os.environ}


@contextlib.contextmanager
def headless_rendering(env_kwargs: Mapping[str, Any] | None = None) -> Iterator[None]:
    """SDL's dummy drivers (`headless_environment`) in this process while the block
    runs: SDL reads them when a game first renders (pygame keeps them afterwards)."""
    added = headless_environment(env_kwargs)
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def game_seed(seed: int, game: int) -> int:
    """The seed of game `game`'s first reset in a context seeded `seed` (later
    resets continue the environment's own random stream, as Gymnasium's do)."""
    return int(np.random.SeedSequence([seed, game]).generate_state(1)[0])


def _views(board: Any, memory: mmap.mmap, keys: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Numpy views of the per-channel (game * seats + seat) key slots of the shared block."""
    regions = board.regions()
    views = {}
    for key in keys:
        prefixes = ("action/",) if key["role"] == "action" else ("obs/", "final/")
        for prefix in prefixes:
            offset, _ = regions[prefix + key["name"]]
            shape = (board.num_games * board.num_seats, *key["shape"])
            views[prefix + key["name"]] = np.ndarray(shape, np.dtype(key["dtype"]), buffer=memory, offset=offset)
    return views


class _Worker:
    """The loop of one worker process: serve the requests of its games."""

    def __init__(self, board: Any, worker: int, views: dict[str, np.ndarray], make_env: Callable[[], Any],
                 preprocess: Callable | None, reshape_reward: Callable | None, seed: int,
                 layout: SeatLayout | None, render_frames: bool = False) -> None:
        self.board = board
        self.name = (f"worker process {worker} (pid {os.getpid()}, games {board.first_game(worker)}-"
                     f"{board.first_game(worker + 1) - 1})")
        self.views = views
        self.make_env = make_env
        self.preprocess = preprocess
        self.reshape_reward = reshape_reward
        self.seed = seed
        self.render_frames = render_frames
        self.envs: dict[int, Any] = {}
        self.seats = None if layout is None else ParallelServer(
            layout, board, lambda space, channel: env_action(space, stored_action(space, self.views, channel)),
            self.store)

    def serve(self, game: int) -> None:
        try:
            if game not in self.envs:
                self.envs[game] = self.make_env()
                if self.seats is not None:
                    self.seats.first(self.envs[game], game, game_seed(self.seed, game))
                    return
                observation, _ = self.envs[game].reset(seed=game_seed(self.seed, game))
                self.store("obs/", game, observation)
                self.store_frame("obs/", game)
                self.board.finish(game, 0.0, False, False)
            elif self.seats is not None:
                self.seats.step(self.envs[game], game)
            else:
                self.step(game)
        except Exception as error:  # reaches the user through the engine, with the game named
            where = traceback.extract_tb(error.__traceback__)[-1]
            self.board.fail(game, f"{type(error).__name__}: {error} (at {where.filename}:{where.lineno}, "
                                  f"{self.name})")

    def step(self, game: int) -> None:
        env = self.envs[game]
        action = env_action(env.action_space, stored_action(env.action_space, self.views, game))
        observation, reward, terminated, truncated, _ = env.step(action)
        done = bool(terminated or truncated)
        if self.reshape_reward is not None:
            reward = self.reshape_reward(observation, action, reward, done)
        if done:
            self.store("final/", game, observation)
            self.store_frame("final/", game)
            observation, _ = env.reset()
        self.store("obs/", game, observation)
        self.store_frame("obs/", game)
        self.board.finish(game, float(reward), bool(terminated), bool(truncated))

    def store_frame(self, prefix: str, game: int) -> None:
        if self.render_frames:
            self.views[prefix + FRAME_KEY][game] = self.envs[game].render()

    def store(self, prefix: str, channel: int, observation: Any, suffix: str = "") -> None:
        """Writes one seat's observation (key names + `suffix`) into its slots."""
        if self.preprocess is not None:
            observation = self.preprocess(observation)
        for name, array in observation_arrays(observation).items():
            view = self.views.get(prefix + name + suffix)
            if view is None or view.shape[1:] != array.shape:
                raise ValueError(f"observation '{name + suffix}' has shape {array.shape}, but the game's spec says "
                                 f"{None if view is None else view.shape[1:]} (from its first observation)")
            if not np.can_cast(array.dtype, view.dtype, casting="safe"):  # storing would change the values
                raise ValueError(f"observation '{name + suffix}' has dtype {array.dtype}, but the game's spec says "
                                 f"{view.dtype} (from its first observation), which cannot hold it unchanged")
            view[channel] = array

    def close(self) -> None:
        for env in self.envs.values():
            env.close()


def worker_main() -> None:
    """A worker process's entry point; its arguments come pickled on stdin."""
    # Ctrl-C, and a job manager's SIGTERM to every process, are the parent's to
    # handle: it stops us once its run has saved. An orphan (the parent killed)
    # closes its environments and exits when it next idles; one that does not
    # within _ORPHAN_GRACE_S (inside a step that never returns) is killed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent_pid, fd, keys, num_games, num_workers, worker, payload, seed, layout, render_frames = pickle.load(
        sys.stdin.buffer)
    signal_when_parent_exits(parent_pid, signal.SIGKILL, delay_s=_ORPHAN_GRACE_S)
    make_env, preprocess, reshape_reward = pickle.loads(payload)
    memory = mmap.mmap(fd, 0)
    board = _elf.RemoteBoard(keys, num_games, num_workers, num_seats=1 if layout is None else layout.num_seats)
    board.attach(memory)
    server = _Worker(board, worker, _views(board, memory, keys), make_env, preprocess, reshape_reward, seed, layout,
                     render_frames)
    board.ready(worker)  # from here the step timeout covers this worker's requests, first resets included
    try:
        while not board.closing():
            games = board.await_work(worker, _POLL_MS)
            if not games and os.getppid() != parent_pid:
                break  # orphaned: the parent died without closing the board
            for game in games:
                server.serve(game)
    finally:
        server.close()
    # Skip the interpreter's teardown: it takes a good part of a second, and
    # stop() waits for this exit (nothing is left to free; the output is flushed).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@contextlib.contextmanager
def _gymnasium_refusals(game: Any) -> Iterator[None]:
    """Gymnasium's refusal of an id, a version or a keyword argument (its own
    errors, and the TypeError of an environment given an unknown keyword) is
    a ValueError naming the game: a user's mistake, not a traceback."""
    try:
        yield
    except (gymnasium.error.Error, TypeError) as error:
        raise ValueError(f"game '{game}': {error}") from None


def probe_keys(game: str, name: str, make_env: Callable[[], Any], preprocess: Callable | None,
               reshape_reward: Callable | None, bounds: dict[str, tuple[float, float]] | None, seed: int,
               env_kwargs: dict[str, Any] | None,
               render_frames: bool) -> tuple[SeatLayout | None, list[dict[str, Any]]]:
    """A hosted game's seat layout (None for one seat) and keys, read from an
    environment made, reset (seeded as game 0) and closed here."""
    with headless_rendering(env_kwargs):  # a pixel observation renders at reset
        with _gymnasium_refusals(game):
            probe = make_env()
        try:
            observation, _ = probe.reset(seed=game_seed(seed, 0))
            if render_frames and (is_parallel_env(probe) or probe.render_mode != "rgb_array"):
                raise ValueError(f"game '{name}': render_frames needs a single-agent environment made with "
                                 f"render_mode='rgb_array', got render_mode={probe.render_mode!r}")
            if not is_parallel_env(probe):
                observed = observation_keys(preprocess(observation) if preprocess else observation, bounds)
                stated = getattr(probe, "observation_space", None)  # a factory's env may state none
                if preprocess is None and stated is not None:  # the values are the environment's: so is the space
                    observed = with_observation_space(observed, stated)
                if render_frames:
                    frame = np.asarray(probe.render())
                    observed.append({"name": FRAME_KEY, "dtype": "uint8", "shape": list(frame.shape),
                                     "meaning": "the environment's render() (render_frames)",
                                     "role": "observation", "bounds": (0.0, 255.0)})
                return None, [*observed, *action_keys(probe.action_space, observed)]
            if reshape_reward is not None:
                raise ValueError(f"game '{name}': reshape_reward is for single-agent games; a ParallelEnv's "
                                 "rewards reach each seat as they are")

            def prepared(sample: Any) -> Any:
                return preprocess(sample) if preprocess else sample

            layout = SeatLayout.of(name, probe, observation, lambda sample: observation_arrays(prepared(sample)))
            observed = layout.observation_keys(observation, lambda sample: observation_keys(prepared(sample), bounds))
            return layout, [*observed, *action_keys(probe.action_space(layout.agents[0]), observed)]
        finally:
            probe.close()


class GymHost:
    """Worker processes and the shared block for `num_games` Python-hosted games.

    With `step_timeout_s`, a request whose result is not back that many
    seconds after the engine sent it (a step, or a game's first reset, which
    creates its environment, counted from when its worker process is up)
    fails the engine with a GameError naming the game, the environment and
    its worker; the context then stops its workers (a late worker is not
    replaced). The environment made first to read the game's spaces
    (`probe_keys`) is then made in a child process (`elfpy.child_call`, about
    a second more to start), and one whose construction and first reset take
    longer is a GameError naming the game, raised by this constructor."""

    def __init__(self, game: Any, num_games: int, *, num_workers: int | None = None, seed: int = 0,
                 preset: str | None = None, preprocess: Callable | None = None,
                 reshape_reward: Callable | None = None, step_timeout_s: float | None = None,
                 render_frames: bool = False, env_kwargs: dict[str, Any] | None = None) -> None:
        if step_timeout_s is not None and not step_timeout_s > 0:
            raise ValueError(f"step_timeout_s must be a positive number of seconds, got {step_timeout_s}")
        with _gymnasium_refusals(game):
            self.name, chosen = resolve(game, preset, env_kwargs or {})
        make_env = chosen.make
        preprocess = preprocess or chosen.preprocess
        reshape_reward = reshape_reward or chosen.reshape_reward
        workers = min(num_workers or os.cpu_count() or 1, num_games)  # a worker without games would idle
        payload = self._payload(make_env, preprocess, reshape_reward)
        self._headless = headless_environment(env_kwargs)  # for the workers
        arguments = (str(game), self.name, make_env, preprocess, reshape_reward, chosen.bounds, seed, env_kwargs,
                     render_frames)
        self.layout: SeatLayout | None
        if step_timeout_s is None:
            self.layout, self.keys = probe_keys(*arguments)
        else:
            try:
                self.layout, self.keys = call_in_child(probe_keys, arguments, step_timeout_s)
            except TimeoutError:
                raise _elf.GameError(f"game '{self.name}': the environment made to read its spaces did not finish "
                                     f"its construction and first reset within step_timeout_s = {step_timeout_s} "
                                     "s") from None
        seats = 1 if self.layout is None else self.layout.num_seats
        self.board = _elf.RemoteBoard(self.keys, num_games, workers, step_timeout_s or 0.0, seats)
        self._fd = os.memfd_create("elf-gym-board")
        self._processes: list[subprocess.Popen] = []
        self._closed = False
        try:
            os.ftruncate(self._fd, self.board.bytes())
            self._memory = mmap.mmap(self._fd, self.board.bytes())
            self.board.attach(self._memory)
            for worker in range(workers):
                self._processes.append(self._launch((os.getpid(), self._fd, self.keys, num_games, workers, worker,
                                                     payload, seed, self.layout, render_frames)))
        except BaseException:
            self.close()
            raise

    def _payload(self, make_env: Callable, preprocess: Callable | None, reshape_reward: Callable | None) -> bytes:
        try:
            return cloudpickle.dumps((make_env, preprocess, reshape_reward))
        except Exception as error:
            raise ValueError(f"game '{self.name}': the environment factory and hooks run in worker processes and "
                             f"must be picklable: {error}") from None

    def _launch(self, arguments: tuple) -> subprocess.Popen:
        """A fresh interpreter (not fork: this process has threads) that
        inherits the shared block's descriptor and this process's sys.path,
        rendering headless (see "Rendering" above)."""
        environment = interpreter_environment(self._headless)
        process = subprocess.Popen([sys.executable, "-c", "from elfpy.gym_host import worker_main; worker_main()"],
                                   stdin=subprocess.PIPE, pass_fds=(self._fd,), env=environment)
        with process.stdin:
            pickle.dump(arguments, process.stdin)
        return process

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self._processes]

    def dead_worker(self) -> str | None:
        """A message naming the game and the worker if a worker process died."""
        for worker, process in enumerate(self._processes):
            if process.poll() is not None:
                first, last = self.board.first_game(worker), self.board.first_game(worker + 1) - 1
                return (f"game '{self.name}': worker process {worker} (pid {process.pid}, games {first}-{last}) "
                        f"died with exit code {process.returncode}")
        return None

    def close_board(self) -> None:
        """Tells every worker to exit and wakes every engine thread waiting
        on one (it raises). Safe to call twice, and after close()."""
        if not self._closed and hasattr(self, "_memory"):
            self.board.close()

    def close(self) -> None:
        """Stops the workers and releases the shared block; call after the
        engine stopped (its threads read the block). A worker gets
        `_EXIT_GRACE_S` to exit (closing its environments), then is killed.
        Safe to call twice."""
        if self._closed:
            return
        self.close_board()
        self._closed = True
        deadline = time.monotonic() + _EXIT_GRACE_S
        for process in self._processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:  # e.g. looping inside step: it never sees the board close
                process.kill()
                process.wait()
        if hasattr(self, "_memory"):
            self._memory.close()
        os.close(self._fd)
