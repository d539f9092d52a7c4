"""The engine's multi-seat games as PettingZoo environments, for other libraries.

`parallel_env("duel")` (or `parallel_env("minirts", seats=2)`) is a
`pettingzoo.ParallelEnv` over one game of a deterministic GameContext, one
agent per seat (`player_<seat>`); every agent acts every step, as the
engine's seats do. An agent observes the game's observation keys (one key:
its Box; several: a Dict of them, spaces as `elfpy.vector` gives them) and
acts in the action key's space (a Dict of several). The engine ends a game,
not a seat, so an episode ends for every agent at once: that step returns
the state it ended in (the engine's `final_<key>`), each agent's statistic
keys (MiniRTS's `won`) in its info, and leaves `agents` empty.

Go is turn-based, one engine seat playing both colours, so it is an
`AECEnv` in the form of PettingZoo's classic games: `env("go")` has agents
`black_0` and `white_0`, observations `{"observation": planes, "action_mask":
legal moves}` (the mask is zero for the agent not to move and once the game
is over), +1 / -1 for the winner and the loser at the end, and PettingZoo's
classic wrappers: an illegal move ends the game with the mover losing
(`TerminateIllegalWrapper`, as `pettingzoo.classic.go_v5`). Both agents
observe the planes the engine writes, which are from the side to move's view
(its plane 16 says which colour that is). `parallel_env("go")` is
PettingZoo's own `turn_based_aec_to_parallel` of it: each step applies the
mover's action and ignores the other's.

Seeds, as Gymnasium's: `reset(seed=s)` starts a new game context seeded s;
`reset()` draws the next seed from a generator seeded by the last seed given
(from fresh entropy if none was).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

try:
    from pettingzoo import AECEnv, ParallelEnv
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel
except ImportError as error:
    raise ImportError(f"elfpy.pettingzoo needs PettingZoo ({error}): pip install 'elf-platform[pettingzoo]'") from None

from elfpy.context import Batch, GameContext, games
from elfpy.vector import observation_space_of

_TAG = "seats"
_GO_AGENTS = ("black_0", "white_0")  # the engine's to_move: 1 black, 2 white


class _SeedSequence:
    """The seed of each reset: the one given, else the next from a generator
    seeded by the last one given (Gymnasium's convention)."""

    def __init__(self) -> None:
        self._generator: np.random.Generator | None = None

    def next(self, seed: int | None) -> int:
        if seed is not None:
            self._generator = np.random.default_rng(seed)
            return seed
        if self._generator is None:
            self._generator = np.random.default_rng()
        return int(self._generator.integers(2**63))


def _one_game(game: str, seed: int, inputs: list[str], replies: list[str], options: dict[str, Any]) -> tuple:
    """A started deterministic context of one game whose tag takes every seat,
    its batches and the first batch."""
    context = GameContext(game, num_games=1, num_threads=1, seed=seed, deterministic=True, **options)
    try:
        context.add_tag(_TAG, batch_size=context.num_seats, inputs=inputs, replies=replies)
        context.start()
        batches = iter(context)
        return context, batches, next(batches)
    except BaseException:
        context.stop()
        raise


class NativeParallelEnv(ParallelEnv):
    """A native game with several seats as a PettingZoo ParallelEnv (see module docstring)."""

    def __init__(self, game: str, **game_options: Any) -> None:
        if not isinstance(game, str) or game not in games():
            # A hosted game's agents may leave one by one, which this class does not follow; a
            # PettingZoo game is one already.
            raise ValueError(f"parallel_env takes a native game ({', '.join(games())}), got {game!r}")
        probe = GameContext(game, num_games=1, num_threads=1, **game_options)
        try:
            name, seats, keys = probe.game, probe.num_seats, probe.spec()
        finally:
            probe.stop()
        if seats < 2:
            raise ValueError(f"game '{name}' has one seat; parallel_env needs a game with several "
                             "(elfpy.make_vector offers single-seat games to other libraries)")
        self.game = game
        self.metadata = {"name": f"elf_{name}", "render_modes": []}
        self.render_mode = None
        self.possible_agents = [f"player_{seat}" for seat in range(seats)]
        self.agents: list[str] = []
        self._options = game_options
        self._observation_keys = [k for k, s in keys.items() if s.role == "observation"]
        self._statistic_keys = [k for k, s in keys.items() if s.role == "statistic"]
        self._action_keys = [k for k, s in keys.items() if s.role == "action"]
        # One space object per agent, as PettingZoo asks (each agent's space is seeded on its own).
        self._observation_spaces = {
            agent: self._joint({k: observation_space_of(keys[k]) for k in self._observation_keys})
            for agent in self.possible_agents}
        self._action_spaces = {agent: self._joint({k: copy.deepcopy(keys[k].space) for k in self._action_keys})
                               for agent in self.possible_agents}
        self._seeds = _SeedSequence()
        self._context: GameContext | None = None
        self._batches: Any = None
        self._batch: Batch | None = None

    @staticmethod
    def _joint(spaces: dict[str, gym.Space]) -> gym.Space:
        return next(iter(spaces.values())) if len(spaces) == 1 else gym.spaces.Dict(spaces)

    def observation_space(self, agent: str) -> gym.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gym.Space:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        self.close()
        inputs = [*self._observation_keys, *(f"final_{k}" for k in self._observation_keys), *self._statistic_keys,
                  "r", "terminal", "truncated"]
        self._context, self._batches, self._batch = _one_game(self.game, self._seeds.next(seed), inputs,
                                                              self._action_keys, self._options)
        self.agents = list(self.possible_agents)
        return self._observations(""), {agent: {} for agent in self.agents}

    def step(self, actions: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("step() with no agent playing: call reset() first (the episode is over or never began)")
        if set(actions) != set(self.agents):
            missing, unexpected = sorted(set(self.agents) - set(actions)), sorted(set(actions) - set(self.agents))
            raise ValueError(f"step needs one action per agent {self.agents}; missing {missing}, "
                             f"unexpected {unexpected}")
        self._batch.reply(self._replies(actions))
        self._batch = next(self._batches)
        ended = bool(self._batch["terminal"].any())
        observations = self._observations("final_" if ended else "")
        rows = self._rows()
        rewards = {agent: float(self._batch["r"][row]) for agent, row in rows.items()}
        truncations = {agent: ended and bool(self._batch["truncated"][row]) for agent, row in rows.items()}
        terminations = {agent: ended and not truncations[agent] for agent in rows}
        infos = {agent: {k: np.array(self._batch[k][row]) for k in self._statistic_keys} if ended else {}
                 for agent, row in rows.items()}
        if ended:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _rows(self) -> dict[str, int]:
        """Each agent's row of the current batch."""
        return {self.possible_agents[int(seat)]: row for row, seat in enumerate(self._batch.seats)}

    def _observations(self, prefix: str) -> dict[str, Any]:
        def observation(row: int) -> Any:
            # np.array: a copy (the batch is reused), an array even for a scalar key
            arrays = {k: np.array(self._batch[prefix + k][row]) for k in self._observation_keys}
            return next(iter(arrays.values())) if len(arrays) == 1 else arrays

        return {agent: observation(row) for agent, row in self._rows().items()}

    def _replies(self, actions: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Each action key's rows, from every agent's action (a dict of keys for a Dict action)."""
        ordered = [actions[agent] for agent in self._rows()]
        if len(self._action_keys) == 1:
            return {self._action_keys[0]: np.asarray(ordered)}
        return {k: np.asarray([action[k] for action in ordered]) for k in self._action_keys}

    def close(self) -> None:
        if self._context is not None:
            self._context.stop()
            self._context = None


class GoEnv(AECEnv):
    """The engine's Go as a PettingZoo AECEnv, without PettingZoo's classic
    wrappers (`env("go")` adds them); see module docstring."""

    metadata = {"name": "elf_go", "render_modes": [], "is_parallelizable": False}

    def __init__(self, **game_options: Any) -> None:
        super().__init__()
        probe = GameContext("go", num_games=1, num_threads=1, **game_options)
        try:
            keys = probe.spec()
        finally:
            probe.stop()
        self.render_mode = None
        self.possible_agents = list(_GO_AGENTS)
        self.agents: list[str] = []
        self._options = game_options
        planes, moves = keys["s"].shape, keys["a"].space.n
        self._observation_spaces = {agent: gym.spaces.Dict({
            "observation": gym.spaces.Box(0, 1, planes, np.uint8),  # every plane is 0 or 1
            "action_mask": gym.spaces.Box(0, 1, (moves,), np.int8)}) for agent in self.possible_agents}
        self._action_spaces = {agent: gym.spaces.Discrete(moves) for agent in self.possible_agents}
        self._seeds = _SeedSequence()
        self._context: GameContext | None = None
        self._batches: Any = None
        self._batch: Batch | None = None
        self._planes = np.zeros(planes, np.uint8)
        self._mask = np.zeros(moves, np.int8)

    def observation_space(self, agent: str) -> gym.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gym.Space:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.close()
        inputs = ["s", "legal", "to_move", "final_s", "r", "terminal", "truncated"]
        self._context, self._batches, self._batch = _one_game("go", self._seeds.next(seed), inputs, ["a"],
                                                              self._options)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._take_position()

    def _take_position(self) -> None:
        self._planes = self._batch["s"][0].copy()
        self._mask = self._batch["legal"][0].astype(np.int8)
        self.agent_selection = _GO_AGENTS[int(self._batch["to_move"][0]) - 1]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        mask = self._mask if agent == self.agent_selection else np.zeros_like(self._mask)
        return {"observation": self._planes.copy(), "action_mask": mask.copy()}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        move = int(action)
        if not 0 <= move < self._mask.size or not self._mask[move]:
            raise ValueError(f"go: move {move} of {agent} is illegal here (its action_mask is 0 there); "
                             "env('go') ends the game instead, as PettingZoo's classic games do")
        self._cumulative_rewards[agent] = 0.0
        self._batch.reply({"a": np.array([move], np.int64)})
        self._batch = next(self._batches)
        if not self._batch["terminal"][0]:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._take_position()
        else:
            black = float(self._batch["r"][0])  # +1 black won, -1 white won, 0 a draw
            self.rewards = {"black_0": black, "white_0": -black}
            truncated = bool(self._batch["truncated"][0])
            self.truncations = dict.fromkeys(self.agents, truncated)
            self.terminations = dict.fromkeys(self.agents, not truncated)
            self._planes = self._batch["final_s"][0].copy()
            self._mask = np.zeros_like(self._mask)  # no move is legal in a finished game
            self.agent_selection = _GO_AGENTS[1 - _GO_AGENTS.index(agent)]
        self._accumulate_rewards()

    def close(self) -> None:
        if self._context is not None:
            self._context.stop()
            self._context = None


_TURN_BASED = {"go": GoEnv}  # the native games whose one seat plays every side in turn


def env(game: str, **game_options: Any) -> AECEnv:
    """A turn-based native game (Go) as an AECEnv, wrapped as PettingZoo's classic games are."""
    if game not in _TURN_BASED:
        raise ValueError(f"game '{game}' is not turn-based; turn-based games: {sorted(_TURN_BASED)}. "
                         f"Games whose seats act at once are parallel_env('{game}') "
                         "(pettingzoo.utils.parallel_to_aec makes an AECEnv of one)")
    wrapped = wrappers.TerminateIllegalWrapper(_TURN_BASED[game](**game_options), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(wrapped))


def parallel_env(game: str, **game_options: Any) -> ParallelEnv:
    """A native game with several seats (duel, minirts with seats=2, ...), or a
    turn-based one through PettingZoo's `turn_based_aec_to_parallel`, as a ParallelEnv."""
    if game in _TURN_BASED:
        return turn_based_aec_to_parallel(env(game, **game_options))
    return NativeParallelEnv(game, **game_options)
