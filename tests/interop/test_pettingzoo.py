"""PettingZoo ParallelEnv games under GameContext: one seat per agent.

`Relay` (below) is a small ParallelEnv whose agents leave at known steps:
runner_0 terminates after LEAVE steps, runner_1 is truncated after CUT steps,
runner_2 terminates at LENGTH, which ends the game. Its observation says
(seat, step, episode), so every row can be checked against the rules of
`elfpy.context` ("Seats that leave"). mpe2's simple_spread and
simple_adversary are compared row by row with the environment run directly.
"""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict

import gymnasium
import numpy as np
import pytest
from pettingzoo import ParallelEnv

import elfpy
from elfpy.gym_host import game_seed
from rlpytorch.learners.seat_windows import SeatWindows

LEAVE, CUT, LENGTH = 2, 3, 5
AGENTS = ("runner_0", "runner_1", "runner_2")
INPUTS = ["s", "final_s", "r", "terminal", "truncated", "episode_return", "episode_length"]


class Relay(ParallelEnv):
    metadata = {"name": "relay_v0"}

    def __init__(self) -> None:
        self.possible_agents = list(AGENTS)
        self.agents = []
        self.episode = 0
        self.t = 0

    def observation_space(self, agent):
        return gymnasium.spaces.Box(-1e3, 1e3, (3,), np.float32)

    def action_space(self, agent):
        return gymnasium.spaces.Discrete(3)

    def observe(self, agent):
        return np.array([AGENTS.index(agent), self.t, self.episode], np.float32)

    def reset(self, seed=None, options=None):
        self.agents = list(AGENTS)
        self.episode += 1
        self.t = 0
        return {a: self.observe(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        assert set(actions) == set(self.agents), (actions, self.agents)  # departed agents get no action
        self.t += 1
        rewards = {a: 10.0 * AGENTS.index(a) + int(actions[a]) for a in self.agents}
        terminations = {a: (a == "runner_0" and self.t == LEAVE) or (a == "runner_2" and self.t == LENGTH)
                        for a in self.agents}
        truncations = {a: a == "runner_1" and self.t == CUT for a in self.agents}
        observations = {a: self.observe(a) for a in self.agents}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, {a: {} for a in observations}


def pick(game: int, seat: int, row: int) -> int:
    return (game + 2 * seat + row) % 3


def leaves_at(seat: int) -> int:
    return (LEAVE, CUT, LENGTH)[seat]


def expected_row(seat: int, row: int, episode: int, last_action: int | None) -> dict:
    """What row `row` (step of the game's `episode`, 1-based) holds for `seat`."""
    left = leaves_at(seat)
    if row == 0:
        return {"s": [seat, 0, episode], "r": 0.0, "terminal": False, "length": 0}
    if row < left:
        return {"s": [seat, row, episode], "r": 10.0 * seat + last_action, "terminal": False, "length": row}
    if row == left:
        next_state = [seat, 0, episode + 1] if row == LENGTH else [0, 0, 0]
        return {"s": next_state, "final_s": [seat, row, episode], "r": 10.0 * seat + last_action,
                "terminal": True, "truncated": seat == 1, "length": row}
    # Out of the game: empty rows; the game's last one already shows the next episode.
    return {"s": [seat, 0, episode + 1] if row == LENGTH else [0, 0, 0], "r": 0.0, "terminal": True,
            "truncated": False, "length": 0, "return": 0.0}


@pytest.mark.timeout(60)
def test_agents_that_leave_get_a_terminal_row_then_empty_rows_and_the_others_play_on():
    num_games = 3
    gc = elfpy.GameContext(Relay, num_games=num_games, num_workers=2, seed=0)
    assert gc.num_seats == 3 and gc.seat_names == AGENTS
    gc.add_tag("actor", batch_size=4, inputs=INPUTS, replies=["a"])
    rows = defaultdict(int)
    actions = {}
    returns = defaultdict(float)
    checked = defaultdict(int)
    with gc:
        for _ in range(120):
            batch = next(iter(gc))
            replies = []
            for b, (game, seat) in enumerate(zip(batch.game_ids.tolist(), batch.seats.tolist(), strict=True)):
                count = rows[(game, seat)]
                episode, row = count // LENGTH + 1, count % LENGTH
                if row == 0 and count > 0:
                    episode, row = episode - 1, LENGTH  # the last row of an episode is the next's first
                want = expected_row(seat, row, episode, actions.get((game, seat, count - 1)))
                where = (game, seat, count)
                np.testing.assert_array_equal(batch["s"][b], want["s"], err_msg=str(where))
                assert batch["r"][b] == want["r"], where
                assert bool(batch["terminal"][b]) == want["terminal"], where
                assert batch["episode_length"][b] == want["length"], where
                if "truncated" in want:
                    assert bool(batch["truncated"][b]) == want["truncated"], where
                if "final_s" in want:
                    np.testing.assert_array_equal(batch["final_s"][b], want["final_s"], err_msg=str(where))
                returns[(game, seat)] += want["r"] if want["length"] else 0.0
                if want["terminal"] and want["length"]:
                    assert batch["episode_return"][b] == pytest.approx(returns[(game, seat)]), where
                    returns[(game, seat)] = 0.0
                    checked[seat] += 1
                elif "return" in want:
                    assert batch["episode_return"][b] == 0.0, where
                actions[(game, seat, count)] = pick(game, seat, count)
                rows[(game, seat)] = count + 1
                replies.append(actions[(game, seat, count)])
            batch.reply({"a": np.array(replies, np.int64)})
    assert min(checked.values()) >= num_games  # every seat ended episodes (and left early) in every game


def _run_directly(module, kwargs, seed: int, actions_of, steps: int):
    """The observations and rewards of one game run without the engine."""
    env = module.parallel_env(**kwargs)
    observations, _ = env.reset(seed=seed)
    trace = [(observations, {a: 0.0 for a in env.possible_agents})]
    for row in range(steps):
        observations_new, rewards, terminations, truncations, _ = env.step(
            {a: actions_of(row, i) for i, a in enumerate(env.possible_agents)})
        if not env.agents:
            observations_new, _ = env.reset()
        trace.append((observations_new, rewards))
    return trace


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["simple_spread_v3", "simple_adversary_v3"])
def test_mpe_rows_match_the_environment_run_directly_seat_by_seat(name):
    import importlib

    module = importlib.import_module(f"mpe2.{name}")
    kwargs = {"max_cycles": 4}
    num_games, steps = 2, 10  # over two episode ends
    gc = elfpy.GameContext(f"pz:mpe2.{name}", num_games=num_games, num_workers=1, seed=3, **kwargs)
    agents = gc.seat_names
    spec = gc.spec()
    assert spec["a"].space == gymnasium.spaces.Discrete(5)
    if name == "simple_adversary_v3":
        assert spec["s_adversary"].shape == (8,) and spec["s_adversary"].seats == (0,)
        assert spec["s_agent"].shape == (10,) and spec["s_agent"].seats == (1, 2)
        obs_key = {0: "s_adversary", 1: "s_agent", 2: "s_agent"}
    else:
        assert spec["s"].shape == (18,) and spec["s"].seats is None
        obs_key = dict.fromkeys(range(3), "s")
    keys = sorted(set(obs_key.values()))
    gc.add_tag("actor", batch_size=3, inputs=[*keys, "r", "terminal"], replies=["a"])
    seen = defaultdict(list)

    def action(game, row, seat):  # seat's action on its row-th row
        return (game + row + 2 * seat) % 5

    with gc:
        while min((len(v) for v in seen.values()), default=0) < steps + 1 or len(seen) < num_games * 3:
            batch = next(iter(gc))
            replies = []
            for b, (game, seat) in enumerate(zip(batch.game_ids.tolist(), batch.seats.tolist(), strict=True)):
                row = len(seen[(game, seat)])
                seen[(game, seat)].append(({k: batch[k][b].copy() for k in keys}, float(batch["r"][b])))
                replies.append(action(game, row, seat))
            batch.reply({"a": np.array(replies, np.int64)})
    for game in range(num_games):
        trace = _run_directly(module, kwargs, game_seed(3, game), functools.partial(action, game), steps)
        for seat, agent in enumerate(agents):
            for row in range(steps + 1):
                observations, rewards = trace[row]
                got, reward = seen[(game, seat)][row]
                np.testing.assert_allclose(got[obs_key[seat]], observations[agent], rtol=1e-6,
                                           err_msg=f"{name} game {game} seat {seat} row {row}")
                for other in set(keys) - {obs_key[seat]}:
                    np.testing.assert_array_equal(got[other], 0)  # another group's key: zero on this seat
                assert reward == pytest.approx(rewards[agent], rel=1e-6), (name, game, seat, row)


@pytest.mark.timeout(60)
def test_a_batch_delivered_short_because_every_seat_waits_is_counted():
    # One game of 3 seats in batches of 2: the game steps only when all 3 seats are replied, so
    # after each full batch its third seat's row waits alone in a batch that can never fill,
    # and the engine delivers it short.
    gc = elfpy.GameContext("pz:mpe2.simple_spread_v3", num_games=1, num_workers=1, seed=0)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    sizes = []

    def act(batch):
        sizes.append(len(batch))
        return {"a": np.zeros(len(batch), np.int64)}

    gc.reg_callback("actor", act)
    with gc:
        for _ in range(20):
            gc.run()
        stalled = gc.handoffs()["batches_closed_stalled"]
    assert sizes.count(1) >= 9 and set(sizes) == {1, 2}
    assert stalled == sizes.count(1)


@pytest.mark.timeout(60)
def test_nan_or_wrong_shaped_action_for_one_seat_names_tag_key_and_row():
    for bad in ("nan", "shape"):
        gc = elfpy.GameContext("pz:mpe2.simple_spread_v3", num_games=2, num_workers=1, continuous_actions=True)
        assert gc.spec()["a"].space.shape == (5,)
        gc.add_tag("actor", batch_size=6, inputs=["s"], replies=["a"])
        with gc:
            batch = next(iter(gc))
            actions = np.full((len(batch), 5), 0.5, np.float32)
            if bad == "nan":
                actions[4, 2] = np.nan
                with pytest.raises(ValueError, match=r"tag 'actor'.*key 'a'.*row 4"):
                    batch.reply({"a": actions})
            else:
                with pytest.raises(ValueError, match=r"tag 'actor', key 'a'.*shape"):
                    batch.reply({"a": actions[:, :4]})


class SpoiledRelay(Relay):
    """Relay whose runner_1 gets a NaN reward in the second step."""

    def step(self, actions):
        observations, rewards, terminations, truncations, infos = super().step(actions)
        if self.t == 2:
            rewards["runner_1"] = float("nan")
        return observations, rewards, terminations, truncations, infos


@pytest.mark.timeout(60)
def test_a_non_finite_reward_of_one_seat_is_a_game_error_naming_the_seat():
    gc = elfpy.GameContext(SpoiledRelay, num_games=1, num_workers=1)
    gc.add_tag("actor", batch_size=3, inputs=["s"], replies=["a"])
    gc.reg_callback("actor", lambda batch: {"a": np.zeros(len(batch), np.int64)})
    with gc:
        with pytest.raises(elfpy.GameError, match=r"game 0 \('py:SpoiledRelay'\): seat 1's reward \(key 'r'\) "
                                                  r"is nan at step 2"):
            for _ in range(5):
                gc.run()


def test_agents_of_one_group_with_different_observations_are_refused():
    class Mixed(Relay):
        def observation_space(self, agent):
            return gymnasium.spaces.Box(-1e3, 1e3, (3 + AGENTS.index(agent),), np.float32)

        def observe(self, agent):
            return np.zeros(3 + AGENTS.index(agent), np.float32)

    with pytest.raises(ValueError, match="runner_0.*runner_1.*group 'runner'"):
        elfpy.GameContext(Mixed, num_games=1, num_workers=1)


@pytest.mark.timeout(60)
def test_a_batch_that_can_never_fill_goes_as_it_is():
    # One game of three agents in batches of two: the game waits for its third agent, alone in the
    # batch being filled, so that batch goes with one row; a full batch follows at every step.
    gc = elfpy.GameContext(Relay, num_games=1, num_workers=1, seed=0)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    sizes, seats = [], []
    with gc:
        for batch in itertools.islice(gc, 12):
            sizes.append(len(batch))
            seats.extend(batch.seats.tolist())
            batch.reply({"a": np.zeros(len(batch), np.int64)})
    assert sizes == [2, 1] * 6
    assert all(sorted(seats[i:i + 3]) == [0, 1, 2] for i in range(0, len(seats), 3))  # each step: every seat once


@pytest.mark.timeout(60)
def test_seat_windows_line_up_every_seat_of_a_game_at_the_same_steps():
    T, games_per_batch = 4, 3
    gc = elfpy.GameContext(Relay, num_games=4, num_workers=2, seed=1)
    gc.add_tag("actor", batch_size=5, inputs=["s"], replies=["a"])
    gc.add_tag("train", batch_size=5, T=T, inputs=["s", "final_s", "r", "terminal", "episode_length"])
    joiner = SeatWindows(seats=[0, 1, 2], games=games_per_batch)
    joint_batches = []
    with gc:
        for batch in gc:
            if batch.tag == "actor":
                batch.reply({"a": np.zeros(len(batch), np.int64)})
            else:
                joint_batches += joiner.add(batch)
                if len(joint_batches) >= 6:
                    break
    for joint in joint_batches:
        assert joint["s"].shape == (T, games_per_batch, 3, 3) and joint["game_ids"].shape == (games_per_batch,)
        # Every seat's step and episode, read from its observation (or, once it left, from the step count of
        # the seats still in): the live seats agree, and seat k's own index is k.
        live = joint["episode_length"] > 0
        for g in range(games_per_batch):
            for t in range(T):
                step_episode = {tuple(joint["s"][t, g, k, 1:]) for k in range(3) if joint["s"][t, g, k].any()}
                assert len(step_episode) <= 1, (g, t, joint["s"][t, g])
                for k in range(3):
                    if joint["s"][t, g, k].any():
                        assert joint["s"][t, g, k, 0] == k
        assert live.any()


def test_a_terminal_row_of_length_zero_ends_no_episode_in_the_stats():
    from rlpytorch.learners.trainer import episodes_in

    batch = {"terminal": np.array([1, 1, 0, 1]), "episode_return": np.array([-3.0, 0.0, 5.0, 7.5]),
             "episode_length": np.array([4, 0, 2, 9])}
    rows, returns, lengths, _ = episodes_in(batch)
    np.testing.assert_array_equal(rows, [0, 3])  # row 1: a seat out of its game
    np.testing.assert_array_equal(returns, [-3.0, 7.5])
    np.testing.assert_array_equal(lengths, [4, 9])


class DictRelay(Relay):
    """Relay whose agents act in Dict(move: Discrete(3), push: Box(2)); the reward
    reports both entries: 10 * seat + move + push[0] + 100 * push[1]."""

    def action_space(self, agent):
        return gymnasium.spaces.Dict({"move": gymnasium.spaces.Discrete(3),
                                      "push": gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)})

    def step(self, actions):
        for action in actions.values():
            assert set(action) == {"move", "push"} and action["push"].shape == (2,)
        observations, _, terminations, truncations, infos = super().step(
            {agent: action["move"] for agent, action in actions.items()})
        rewards = {a: 10.0 * AGENTS.index(a) + int(actions[a]["move"]) + float(actions[a]["push"][0])
                   + 100.0 * float(actions[a]["push"][1]) for a in actions}
        return observations, rewards, terminations, truncations, infos


@pytest.mark.timeout(60)
def test_a_dict_action_space_gives_every_seat_one_key_per_entry_and_reaches_env_step():
    gc = elfpy.GameContext(DictRelay, num_games=2, num_workers=1)
    spec = gc.spec()
    assert "a" not in spec and spec["move"].space == gymnasium.spaces.Discrete(3)
    assert spec["push"].space.shape == (2,)
    gc.add_tag("actor", batch_size=6, inputs=["s", "r"], replies=["move", "push"])
    with gc:
        batches = iter(gc)
        batch = next(batches)
        seats = np.asarray(batch.seats)
        push = np.stack([0.25 * seats, np.full(len(batch), 0.01)], 1).astype(np.float32)
        batch.reply({"move": (seats + 1) % 3, "push": push})
        batch = next(batches)
        seats = np.asarray(batch.seats)
        expected = 10.0 * seats + (seats + 1) % 3 + 0.25 * seats + 1.0
        np.testing.assert_allclose(np.asarray(batch["r"]), expected, rtol=1e-5)



def _tictactoe_factory():
    from pettingzoo.classic import tictactoe_v3

    return tictactoe_v3.env()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("game", ["pz:pettingzoo.classic.tictactoe_v3", _tictactoe_factory],
                         ids=["module_without_parallel_env", "factory"])
def test_an_aec_game_is_stepped_turn_by_turn_as_the_environment_steps_directly(game):
    """tictactoe_v3 has no parallel_env(): each engine step is one turn, both
    seats reply, the mover's action is played (pz_host, "Turn-based games")."""
    from pettingzoo.classic import tictactoe_v3

    gc = elfpy.GameContext(game, num_games=1, num_workers=1, seed=0, deterministic=True)
    assert gc.seat_names == ("player_1", "player_2")
    inputs = ["observation", "action_mask", "final_observation", "r", "terminal"]
    gc.add_tag("turn", batch_size=2, inputs=inputs, replies=["a"])
    rng = np.random.default_rng(0)
    rows = []
    with gc:
        for _, batch in zip(range(40), gc, strict=False):
            assert batch.seats.tolist() == [0, 1]
            actions = [int(rng.choice(np.flatnonzero(mask))) if mask.any() else int(rng.integers(9))
                       for mask in batch["action_mask"]]  # a waiting seat's action is ignored, whatever it is
            rows.append(({k: batch[k].copy() for k in inputs}, actions))
            batch.reply({"a": np.array(actions, np.int64)})

    direct = tictactoe_v3.env()
    direct.reset(seed=game_seed(0, 0))
    agents = direct.possible_agents
    wins = 0
    for (row, actions), (after, _) in zip(rows, rows[1:], strict=False):
        for seat, agent in enumerate(agents):
            seen = direct.observe(agent)
            np.testing.assert_array_equal(row["observation"][seat], seen["observation"])
            np.testing.assert_array_equal(row["action_mask"][seat], seen["action_mask"])
        (mover,) = np.flatnonzero(row["action_mask"].any(axis=1))  # one seat to move at a time
        assert agents[mover] == direct.agent_selection
        direct.step(actions[mover])
        for seat, agent in enumerate(agents):
            assert after["r"][seat] == direct.rewards[agent]
        if all(direct.terminations.values()):
            assert after["terminal"].all()
            for seat, agent in enumerate(agents):
                np.testing.assert_array_equal(after["final_observation"][seat], direct.observe(agent)["observation"])
            wins += after["r"].any()
            direct.reset()
        else:
            assert not after["terminal"].any()
    assert wins >= 1  # a won game's rewards reached both seats
