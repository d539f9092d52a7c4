"""PettingZoo games hosted under GameContext: one seat per agent.

`GameContext("pz:mpe2.simple_spread_v3", num_games=8, continuous_actions=True)`
imports `mpe2.simple_spread_v3`, calls its `parallel_env(**kwargs)` in each
worker process (`elfpy.gym_host` runs them), and seats agent
`possible_agents[i]` at seat i (`gc.seat_names`). A factory returning a
ParallelEnv works the same way. Tags route seats with `add_tag(seats=[...])`.

Turn-based (AEC) games. A module with `env()` and no `parallel_env()`
(`"pz:pettingzoo.classic.tictactoe_v3"`), or a factory returning an AECEnv,
is stepped turn by turn through PettingZoo's own `turn_based_aec_to_parallel`:
each engine step is one AEC step, every seat gets a row and replies, and only
the action of the agent to move (`agent_selection`) is applied; the others'
are ignored (classic games show it: their `action_mask` is zero). Not
`aec_to_parallel`: it steps every agent once per parallel step, which holds
only for environments that update once per cycle, so it refuses any that
does not declare `is_parallelizable` (tictactoe among them).

Keys. Each agent's observation is written on its own seat's row under the
Gymnasium host's names (an array is `s`, a Dict one key per entry). When the
agents' observations differ in shape or dtype, each group of agents (the name
without its `_<n>` suffix: `adversary_0` -> `adversary`) gets its own keys,
`s_adversary` and `s_agent` for simple_adversary; a seat's other groups' keys
are zero, and `KeySpec.seats` says which seats write a key. Agents of one
group with different observations are refused (ValueError naming them). All
agents share one action space and its keys, named as the Gymnasium host
names them (`a` for Discrete, MultiDiscrete or Box; a Dict's entries under
their own names): different action spaces are refused.

Step. Each seat's reward is its agent's. An agent that PettingZoo removes
from `agents` while others play on leaves its seat as the engine describes
(`elfpy.context`, "Seats that leave"): its row of that step is terminal (or
truncated) with its last observation in `final_<key>`, then its rows are
empty (zero observation, r = 0, terminal = 1, episode_length = 0) until the
game's episode ends (no agent left); the worker then resets the environment
and every seat plays again. Actions replied for a departed seat are ignored.
Agents must all be present at reset, and none may join mid-episode.
"""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

TERMINATED, TRUNCATED = 1, 2  # a seat's status bits on the board (elf::RemoteBoard)


def is_parallel_env(env: Any) -> bool:
    """Whether `env` is a PettingZoo ParallelEnv (it names its agents)."""
    return hasattr(env, "possible_agents") and callable(getattr(env, "observation_space", None))


def as_parallel(env: Any) -> Any:
    """An AECEnv as PettingZoo's `turn_based_aec_to_parallel` steps it (see
    module docstring); any other environment as it is."""
    # An AECEnv exists only once pettingzoo is imported: Gymnasium games never import it here.
    pettingzoo = sys.modules.get("pettingzoo")
    if pettingzoo is None or not isinstance(env, pettingzoo.AECEnv):
        return env
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    return turn_based_aec_to_parallel(env)


def make_from_factory(factory: Any, /, **kwargs: Any) -> Any:
    """`factory(**kwargs)`, an AECEnv it returns stepped turn by turn (`as_parallel`)."""
    return as_parallel(factory(**kwargs))


def make_parallel_env(module: str, **kwargs: Any) -> Any:
    """`<module>.parallel_env(**kwargs)`, e.g. module "mpe2.simple_spread_v3",
    else its AEC `env(**kwargs)` stepped turn by turn (`as_parallel`)."""
    try:
        found = importlib.import_module(module)
    except ImportError as error:
        missing_ours = (error.name or "").partition(".")[0] in ("pettingzoo", "mpe2")  # what our extra installs
        hint = ": pip install 'elf-platform[pettingzoo]'" if missing_ours else ""
        raise ValueError(f"game 'pz:{module}': cannot import {module!r} ({error}){hint}") from None
    if hasattr(found, "parallel_env"):
        return found.parallel_env(**kwargs)
    if hasattr(found, "env"):
        return as_parallel(found.env(**kwargs))
    raise ValueError(f"game 'pz:{module}': module {module!r} has neither parallel_env() nor env()")


def agent_group(agent: str) -> str:
    """An agent's group: its name without the `_<n>` index (`adversary_0` -> `adversary`)."""
    return re.sub(r"_\d+$", "", agent)


def _signature(arrays: dict[str, np.ndarray]) -> tuple:
    return tuple((name, array.dtype.str, array.shape) for name, array in arrays.items())


@dataclass(frozen=True)
class SeatLayout:
    """Which seat each agent takes and under which key names its observation goes.

    `suffix[i]` is appended to seat i's observation names ("" when every
    agent's observation has the same shapes, else "_<group>")."""

    agents: tuple[str, ...]
    suffix: tuple[str, ...]

    @property
    def num_seats(self) -> int:
        return len(self.agents)

    @classmethod
    def of(cls, name: str, env: Any, observations: dict[str, Any], arrays: Any) -> SeatLayout:
        """The layout of `env` from its first observations (`arrays(obs)`: the
        observation as the engine's arrays); ValueError for what it cannot host."""
        agents = tuple(env.possible_agents)
        if not agents:
            raise ValueError(f"game '{name}': the environment has no possible_agents")
        if set(env.agents) != set(agents) or set(observations) != set(agents):
            raise ValueError(f"game '{name}': every agent must be present at reset; possible_agents {list(agents)}, "
                             f"agents {list(env.agents)}")
        spaces = {agent: env.action_space(agent) for agent in agents}
        if any(spaces[agent] != spaces[agents[0]] for agent in agents):
            raise ValueError(f"game '{name}': the agents' action spaces differ ({spaces}); the action keys "
                             "need one space for every seat")
        signatures = {agent: _signature(arrays(observations[agent])) for agent in agents}
        if len(set(signatures.values())) == 1:
            return cls(agents, ("",) * len(agents))
        groups: dict[str, str] = {}  # group -> its first agent
        for agent in agents:
            first = groups.setdefault(agent_group(agent), agent)
            if signatures[agent] != signatures[first]:
                raise ValueError(f"game '{name}': agents {first!r} and {agent!r} of group {agent_group(agent)!r} "
                                 f"have different observations ({signatures[first]} vs {signatures[agent]}); "
                                 "agents whose observations differ need names of different groups")
        return cls(agents, tuple(f"_{agent_group(agent)}" for agent in agents))

    def observation_keys(self, observations: dict[str, Any], keys_of: Any) -> list[dict[str, Any]]:
        """The observation keys of every group (`keys_of(sample)`: the Gymnasium
        host's keys of one observation), each saying which seats write it."""
        keys: dict[str, dict[str, Any]] = {}
        for seat, agent in enumerate(self.agents):
            for key in keys_of(observations[agent]):
                name = key["name"] + self.suffix[seat]
                seats = keys.get(name, {}).get("seats", [])
                keys[name] = {**key, "name": name, "seats": [*seats, seat],
                              "meaning": f"{key['meaning']} of agents {self.agents_of(name, key['name'])}"}
        return list(keys.values())

    def agents_of(self, name: str, base: str) -> list[str]:
        return [agent for seat, agent in enumerate(self.agents) if base + self.suffix[seat] == name]

    def seat_status(self, agent: str, terminations: dict[str, Any], truncations: dict[str, Any]) -> int:
        """The board's status bits of an agent after a step."""
        if terminations.get(agent, False):
            return TERMINATED
        return TRUNCATED if truncations.get(agent, False) else 0


class ParallelServer:
    """Steps the ParallelEnv of each game of a worker: reads every live seat's
    action from the board, writes every seat's observation, rewards and status.
    `store(prefix, channel, observation, suffix)` writes one seat's
    observation into the board's slots."""

    def __init__(self, layout: SeatLayout, board: Any, action_of: Any, store: Any) -> None:
        self.layout = layout
        self.board = board
        self.action_of = action_of  # (space, channel) -> the action env.step takes, from the board
        self.store = store

    def channel(self, game: int, seat: int) -> int:
        return game * self.layout.num_seats + seat

    def first(self, env: Any, game: int, seed: int) -> None:
        observations, _ = env.reset(seed=seed)
        self.store_all("obs/", env, game, observations)
        self.board.finish(game, 0.0, False, False)

    def step(self, env: Any, game: int) -> None:
        live = list(env.agents)
        joined = sorted(set(live) - set(self.layout.agents))
        if joined:
            raise ValueError(f"agents {joined} are not among possible_agents {list(self.layout.agents)}")
        actions = {agent: self.action_of(env.action_space(agent), self.channel(game, seat))
                   for seat, agent in enumerate(self.layout.agents) if agent in live}
        observations, rewards, terminations, truncations, _ = env.step(actions)
        rewards_by_seat = [float(rewards.get(agent, 0.0)) for agent in self.layout.agents]
        status = [self.layout.seat_status(agent, terminations, truncations) if agent in live else 0
                  for agent in self.layout.agents]
        if env.agents:
            newcomers = sorted(set(env.agents) - set(live))
            if newcomers:
                raise ValueError(f"agents {newcomers} joined mid-episode, which a seat cannot follow")
            self.store_all("obs/", env, game, observations)
            self.board.finish_seats(game, rewards_by_seat, status, False, False)
            return
        # Every agent is gone: the game's episode is over. It is terminated if
        # each agent that played to the end terminated, else truncated.
        terminated = all(status[seat] == TERMINATED for seat, agent in enumerate(self.layout.agents) if agent in live)
        self.store_all("final/", env, game, observations)
        observations, _ = env.reset()
        self.store_all("obs/", env, game, observations)
        self.board.finish_seats(game, rewards_by_seat, status, terminated, not terminated)

    def store_all(self, prefix: str, env: Any, game: int, observations: dict[str, Any]) -> None:
        for seat, agent in enumerate(self.layout.agents):
            if agent in observations:
                self.store(prefix, self.channel(game, seat), observations[agent], self.layout.suffix[seat])
