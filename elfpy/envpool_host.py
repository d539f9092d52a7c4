"""Games from envpool: C++ environments (its ALE with the standard Atari
preprocessing, Procgen, ViZDoom, DeepMind Control, MuJoCo, ...) stepped by
envpool's own threads, served to the engine as games that step elsewhere.

`GameContext("envpool:Pong-v5", num_games=64)` makes ONE envpool pool of 64
environments, game g being its environment g: ::

    envpool.make("Pong-v5", env_type="gymnasium", num_envs=64, batch_size=64,
                 num_threads=num_workers, seed=seed, **game_options)

(`num_workers`: envpool's stepping threads, default one per CPU; the game
options are envpool's, e.g. `episodic_life=True`, `reward_clip=True`,
`stack_num=1`; the engine's `num_threads` only wait and copy rows, by
default one per 16 games: `engine_threads`). Environment g is seeded `seed + g` by envpool and keeps its
own random stream, so the games' trajectories depend only on the seed and
the actions, whatever steps with whatever: `deterministic=True` holds.

How it steps. The engine sees the games through a `RemoteBoard` (as
`elfpy.gym_host`'s worker processes), held in this process's memory and
served by one Python thread that loops: take every game with a pending
request (`await_work`), hand their actions to envpool in one `send`, wait
in `recv` (envpool's threads step them, without the GIL), copy the
observations into the games' slots with one numpy assignment per key, and
finish them all with one `finish_many`. The pool runs in envpool's sync mode
(batch_size = num_envs), where a send may name any subset of the
environments and the next recv returns exactly those.

Semantics are the native games' (see `elfpy.context`): a game's first
request resets its environment; an environment whose step ended its episode
(terminated, or truncated by envpool's `max_episode_steps`) keeps the last
observation in `final_<key>` and is reset within the same request, by a
second send of the ended environments (envpool resets an ended environment
on its next step, ignoring the action); the others are finished before it.
Rewards and flags are envpool's as they are.

Keys. An observation space that is a Box becomes key `s`; a Dict one key
per entry; each with the space's shape and dtype (widened as
`elfpy.gym_host` does). The action is key `a` with the space's Discrete,
MultiDiscrete or Box bounds, so the engine refuses a reply outside it before
any game steps. Python hooks (`preprocess`, `reshape_reward`) and presets
do not apply: the point is that no Python runs per game.

Faults. An exception from envpool fails every game of the request round
with a message naming the task and the exception, and every later request
too (the pool is no longer trusted), so the engine raises GameError naming
the game. close() closes the board (waking any engine thread waiting on a
game), joins the serving thread, then closes the pool (joining envpool's
threads).
"""

from __future__ import annotations

import mmap
import os
import threading
from typing import Any

import numpy as np
from gymnasium import spaces

from elfpy import _elf
from elfpy.gym_host import _views, action_key, observation_arrays, observation_keys

PREFIX = "envpool:"
_POLL_MS = 200  # how often an idle serving thread checks that the board is still open
_TERMINATED, _TRUNCATED = 1, 2  # RemoteBoard status bits


def is_envpool(game: Any) -> bool:
    """Whether `game` names an envpool task ("envpool:<task id>")."""
    return isinstance(game, str) and game.startswith(PREFIX)


def engine_threads(num_games: int) -> int:
    """The engine's threads for `num_games` envpool games by default: one per
    16 games, up to 16. They only wait and copy rows, but the engine hands a
    replied batch to its threads in runs of at least 16 games and a thread
    waits on its run before it takes the next; with a thread per run, every
    run's requests reach envpool together rather than one run per round
    (64 games, batch 32 on 2 cores: rounds of 32 games, not 16, and a third
    less CPU in the serving thread)."""
    return max(1, min(16, num_games // 16))


def make_pool(task: str, num_envs: int, num_threads: int, seed: int, options: dict[str, Any]) -> Any:
    """envpool's pool of `num_envs` environments of `task`, in sync mode
    (batch_size = num_envs, so a send may name any subset)."""
    try:
        import envpool
    except ImportError:
        raise ValueError(f"game '{PREFIX}{task}' needs envpool: pip install 'elf-platform[envpool]'") from None
    if task not in envpool.list_all_envs():
        raise ValueError(f"game '{PREFIX}{task}': envpool has no task '{task}' (envpool.list_all_envs() lists them)")
    try:
        return envpool.make(task, env_type="gymnasium", num_envs=num_envs, batch_size=num_envs,
                            num_threads=num_threads, seed=seed, **options)
    except TypeError as error:  # an option envpool's config does not have
        raise ValueError(f"game '{PREFIX}{task}': {error}; the options are envpool's config keys") from None


def _space_keys(name: str, observation_space: Any, action_space: Any) -> list[dict[str, Any]]:
    """The engine's keys for an envpool task's spaces."""
    if not isinstance(observation_space, (spaces.Box, spaces.Dict)):
        raise ValueError(f"game '{name}': observation space {observation_space} is not a Box or a Dict of Boxes")
    if isinstance(action_space, spaces.Dict):
        raise ValueError(f"game '{name}': Dict action space {action_space} is not supported; use a task with a "
                         "Discrete, MultiDiscrete or Box action")
    return [*observation_keys(observation_space.sample()), action_key(action_space)]


class EnvpoolHost:
    """One envpool pool of `num_games` environments, and the thread serving
    its games to the engine (the interface of `elfpy.gym_host.GymHost`, so
    `elfpy.sources.HostedSource` runs it).

    With `step_timeout_s`, a request whose result is not back that many
    seconds after the engine sent it fails the engine with a GameError."""

    layout = None  # one seat per game
    pids: list[int] = []  # no worker process: envpool's threads are this process's

    def __init__(self, game: str, num_games: int, *, num_workers: int | None = None, seed: int = 0,
                 step_timeout_s: float | None = None, options: dict[str, Any] | None = None) -> None:
        if step_timeout_s is not None and not step_timeout_s > 0:
            raise ValueError(f"step_timeout_s must be a positive number of seconds, got {step_timeout_s}")
        self.name = game
        self._closed = False
        self._pool = make_pool(game.removeprefix(PREFIX), num_games, num_workers or os.cpu_count() or 1, seed,
                               options or {})
        try:
            if self._pool.config["max_num_players"] != 1:
                raise ValueError(f"game '{game}': multi-player envpool tasks are not supported")
            self._action_space = self._pool.spec.action_space
            self.keys = _space_keys(game, self._pool.spec.observation_space, self._action_space)
            self.board = _elf.RemoteBoard(self.keys, num_games, 1, step_timeout_s or 0.0, 1)
            self._memory = mmap.mmap(-1, self.board.bytes())  # anonymous: zeroed, private to this process
            self.board.attach(self._memory)
            self._views = _views(self.board, self._memory, self.keys)
            self._broken: str | None = None  # why the pool is no longer trusted
            self._flying = np.zeros(num_games, bool)  # sent to envpool, not received yet
            # The next send resets the game's environment (never reset, or its episode ended);
            # the ended step's reward and status are kept until then.
            self._resetting = np.ones(num_games, bool)
            self._ending_reward = np.zeros(num_games, np.float32)
            self._ending_status = np.zeros(num_games, np.uint8)
            self._thread = threading.Thread(target=self._serve, name=f"elfpy {game} server", daemon=True)
            self._thread.start()
        except BaseException:
            self._pool.close()
            raise

    # --- the serving thread ------------------------------------------------

    def _serve(self) -> None:
        """Rounds of one send and one recv, pipelined: as soon as a round's
        results are back, the next round (the requests that came meanwhile,
        and the resets of the environments whose episode just ended) is sent,
        and only then are the results stored and their games finished."""
        self.board.ready(0)
        flight = np.empty(0, np.int32)  # the games in envpool now
        while not self.board.closing():
            try:
                if self._broken is not None:
                    self._fail(self.board.await_work(0, _POLL_MS))
                elif len(flight) == 0:
                    flight = self._send(np.asarray(self.board.await_work(0, _POLL_MS), np.int32))
                else:
                    flight = self._next_round(flight)
            except Exception as error:  # reaches the user through the engine, with the game named
                self._broken = f"envpool task '{self.name}' raised {type(error).__name__}: {error}"
                self._fail(range(self.board.num_games))
                flight = np.empty(0, np.int32)
        if len(flight) and self._broken is None:
            self._pool.recv()  # nothing may be in flight when the pool is freed

    def _next_round(self, flight: np.ndarray) -> np.ndarray:
        """Receives the round in flight, sends the next one, then finishes the
        games of the received round; returns the games now in flight."""
        observation, reward, terminated, truncated, info = self._pool.recv()
        env_ids = info["env_id"]
        resets = self._resetting[env_ids]
        status = terminated.astype(np.uint8) * _TERMINATED | truncated.astype(np.uint8) * _TRUNCATED
        ended = (status != 0) & ~resets
        # An ended environment resets on its next step, whatever the action: its
        # request stays open until that step's observation is stored.
        self._resetting[env_ids[ended]] = True
        self._ending_reward[env_ids[ended]] = reward[ended]
        self._ending_status[env_ids[ended]] = status[ended]
        waiting = np.asarray(self.board.await_work(0, 0), np.int32)
        arrived = waiting[~self._flying[waiting]]  # the games of the received round are pending until finished
        self._flying[flight] = False
        following = self._send(np.concatenate([arrived, env_ids[ended]]))
        self._store("final/", env_ids[ended], observation, ended)
        going = ~ended
        done = env_ids[going]
        self._store("obs/", done, observation, going if ended.any() else None)
        rewards, statuses = reward[going], status[going]
        reset_rows = resets[going]
        rewards[reset_rows] = self._ending_reward[done[reset_rows]]
        statuses[reset_rows] = self._ending_status[done[reset_rows]]
        self._resetting[done[reset_rows]] = False
        self.board.finish_many(done, rewards, statuses)
        return following

    def _send(self, games: np.ndarray) -> np.ndarray:
        """Sends `games` (an environment never reset, or whose episode ended,
        resets instead of stepping); returns them."""
        if len(games):
            self._flying[games] = True
            actions = self._views["action/a"][games]
            if isinstance(self._action_space, (spaces.Discrete, spaces.MultiDiscrete)):
                actions = actions + self._action_space.start
            self._pool.send(actions, games)
        return games

    def _fail(self, games: Any) -> None:
        for game in games:
            if self.board.pending(game):
                self.board.fail(game, self._broken)

    def _store(self, prefix: str, env_ids: np.ndarray, observation: Any, rows: np.ndarray | None = None) -> None:
        """Writes the observations (those of `rows` only, if given) into the slots of `env_ids`."""
        for name, array in observation_arrays(observation).items():
            self._views[prefix + name][env_ids] = array if rows is None else array[rows]

    # --- the host's interface (see GymHost) ---------------------------------

    def dead_worker(self) -> str | None:
        """A message if the serving thread ended while the board is open."""
        if self._thread.is_alive() or self.board.closing():
            return None
        return f"game '{self.name}': the thread serving envpool's environments ended unexpectedly"

    def close_board(self) -> None:
        """Wakes every engine thread waiting on a game (it raises) and tells
        the serving thread to exit. Safe to call twice, and after close()."""
        if not self._closed:
            self.board.close()

    def close(self) -> None:
        """Stops the serving thread and envpool's threads; call after the
        engine stopped (its threads read the board). Safe to call twice."""
        if self._closed:
            return
        self.close_board()
        self._closed = True
        self._thread.join()
        self._pool.close()
        self._pool = None  # envpool's threads are joined when the pool is freed
        # The board's memory stays until the board is freed: the engine's context holds the board.
