"""Where a GameContext's games come from: a game source.

A source builds the engine context (`_elf.Context`) for its games and owns
whatever runs beside it. GameContext talks to every source through these,
so it has no native/hosted branches: ::

  name         the game's name as errors print it
  context      the `_elf.Context` to add tags to, start, wait on
  worker_pids  process ids of the processes hosting the games (none if native)
  seat_names   the agent of each seat (a PettingZoo game's), else empty
  key_seats    key -> the seats that write it, for keys only some seats write
  failure()    a message if something outside the engine broke (a worker
               process died), else None; cheap enough to call per batch
  close()      stops everything: afterwards no engine thread, no worker process
               and no shared memory is left. Safe to call twice, in any state.

`NativeSource`: a game of the C++ registry, stepped by the engine's threads.
`HostedSource`: games stepped outside the engine's threads, through a
`RemoteBoard`: Gymnasium environments in worker processes (`elfpy.gym_host`),
or an envpool pool's environments in envpool's threads (`elfpy.envpool_host`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from elfpy import _elf
from elfpy.envpool_host import EnvpoolHost, engine_threads, is_envpool
from elfpy.gym_host import GymHost, is_hosted

_WORKER_CHECK_S = 0.5  # how often failure() looks at the worker processes


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


class NativeSource:
    """A game of the C++ registry; its options are the game's options."""

    worker_pids: list[int] = []
    seat_names: tuple[str, ...] = ()
    key_seats: dict[str, tuple[int, ...]] = {}

    def __init__(self, game: str, num_games: int, num_threads: int, seed: int, deterministic: bool,
                 game_options: dict[str, Any]) -> None:
        options = {name: _option_text(value) for name, value in game_options.items()}
        self.name = game
        self.context = _elf.Context(game, num_games, num_threads, seed, deterministic, options)

    def failure(self) -> str | None:
        return None  # the engine reports its own games' failures

    def close(self) -> None:
        self.context.stop()


class HostedSource:
    """Games hosted outside the engine: its threads wait on worker processes
    (GymHost) or on envpool's threads (EnvpoolHost).

    close() closes the shared board before it stops the engine: an engine
    thread waiting on a dead or stuck worker wakes at once, so the engine's
    threads can be joined; then the workers get a short grace to exit and are
    killed if they do not (e.g. one looping inside `step`)."""

    def __init__(self, host: GymHost | EnvpoolHost, num_threads: int | None, seed: int, deterministic: bool) -> None:
        self._host = host
        self.name = host.name
        layout = host.layout
        self.seat_names = () if layout is None else layout.agents
        self.key_seats = {key["name"]: tuple(key["seats"]) for key in host.keys
                          if "seats" in key and len(key["seats"]) < len(self.seat_names)}
        # An engine thread waits while a worker steps: one per worker keeps all busy.
        threads = num_threads if num_threads is not None else host.board.num_workers
        self._next_check = 0.0
        try:
            self.context = _elf.Context(self.name, host.board, threads, seed, deterministic)
        except BaseException:
            host.close()
            raise

    @property
    def worker_pids(self) -> list[int]:
        return self._host.pids

    def failure(self) -> str | None:
        if time.monotonic() < self._next_check:
            return None
        self._next_check = time.monotonic() + _WORKER_CHECK_S
        return self._host.dead_worker()

    def close(self) -> None:
        self._host.close_board()
        self.context.stop()
        self._host.close()


GameSource = NativeSource | HostedSource


def open_source(game: str | Callable[..., Any], num_games: int, num_threads: int | None, seed: int,
                deterministic: bool, hosting: dict[str, Any], game_options: dict[str, Any]) -> GameSource:
    """The source for `game`: hosted for "gym:<id>", "pz:<module>" or a factory,
    envpool's for "envpool:<task>", native otherwise. `hosting` holds the
    hosted-only settings (num_workers, preset, preprocess, reshape_reward,
    step_timeout_s, render_frames); an envpool task takes num_workers (envpool's threads) and
    step_timeout_s, a native game none."""
    if is_envpool(game):
        hooks = sorted(name for name in ("preset", "preprocess", "reshape_reward", "render_frames")
                       if hosting.get(name) is not None)
        if hooks:
            raise ValueError(f"{', '.join(hooks)}: only for Python-hosted games; '{game}' steps in envpool's C++ "
                             "threads (pass envpool's own options, e.g. reward_clip=True)")
        host = EnvpoolHost(game, num_games, num_workers=hosting.get("num_workers"), seed=seed,
                           step_timeout_s=hosting.get("step_timeout_s"), options=game_options)
        return HostedSource(host, num_threads if num_threads is not None else engine_threads(num_games), seed,
                            deterministic)
    if is_hosted(game):
        return HostedSource(GymHost(game, num_games, seed=seed, env_kwargs=game_options, **hosting), num_threads,
                            seed, deterministic)
    given = sorted(name for name, value in hosting.items() if value is not None)
    if given:
        raise ValueError(f"{', '.join(given)}: only for Python-hosted games ('gym:<id>' or a factory); "
                         f"'{game}' is a native game")
    threads = num_threads if num_threads is not None else (os.cpu_count() or 1)
    return NativeSource(game, num_games, threads, seed, deterministic, game_options)
