"""The engine's multi-seat games as PettingZoo environments (`elfpy.pettingzoo`),
checked with PettingZoo's own tests, then against the games' rules."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import elfpy
import elfpy.pettingzoo as ez

PARALLEL_GAMES = [("duel", {}), ("minirts", {"seats": 2}), ("go", {})]


@pytest.mark.parametrize(("game", "options"), PARALLEL_GAMES, ids=[game for game, _ in PARALLEL_GAMES])
def test_every_multi_seat_game_passes_pettingzoos_parallel_api_and_seed_tests(game, options):
    parallel_api_test(ez.parallel_env(game, **options), num_cycles=1000)
    parallel_seed_test(lambda: ez.parallel_env(game, **options))


def test_go_passes_pettingzoos_aec_api_and_seed_tests():
    api_test(ez.env("go"), num_cycles=1000)
    seed_test(lambda: ez.env("go"), num_cycles=500)


def test_every_native_game_with_several_seats_passes_the_parallel_api_test_with_its_defaults():
    several = []
    for game in elfpy.games():
        probe = elfpy.GameContext(game, num_games=1, num_threads=1)
        if probe.num_seats > 1:
            several.append((game, probe.num_seats))
        probe.stop()
    assert "duel" in dict(several)
    for game, seats in several:
        env = ez.parallel_env(game)
        assert env.possible_agents == [f"player_{seat}" for seat in range(seats)]
        spaces = [env.action_space(agent) for agent in env.possible_agents]
        assert len({id(space) for space in spaces}) == seats  # each agent's space is seeded on its own
        parallel_api_test(env, num_cycles=200)
        env.close()


def test_duel_rewards_and_observations_follow_its_rules():
    env = ez.parallel_env("duel", rounds=3)
    observations, _ = env.reset(seed=1)
    assert env.agents == ["player_0", "player_1"]
    np.testing.assert_array_equal(observations["player_1"], [1, -1, 0])  # own seat, opponent's last pick, round
    picks = [(2, 0), (1, 1), (0, 2)]
    for round_, (first, second) in enumerate(picks, start=1):
        observations, rewards, terminations, truncations, _ = env.step({"player_0": first, "player_1": second})
        expected = float(np.sign(first - second))
        assert rewards == {"player_0": expected, "player_1": -expected}
        np.testing.assert_array_equal(observations["player_0"], [0, second, round_])  # the last round's: final_s
        assert all(terminations.values()) == (round_ == 3) and not any(truncations.values())
    assert env.agents == []
    with pytest.raises(RuntimeError, match="call reset"):
        env.step({"player_0": 0, "player_1": 0})
    env.close()


def test_a_missing_action_is_named():
    env = ez.parallel_env("duel")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"missing \['player_1'\]"):
        env.step({"player_0": 0})
    env.close()


def test_minirts_self_play_ends_for_both_players_with_the_winner_in_info():
    env = ez.parallel_env("minirts", seats=2, max_tick=3000)
    env.reset(seed=0)
    for _ in range(1000):
        observations, rewards, terminations, truncations, infos = env.step(
            {agent: env.action_space(agent).sample() for agent in env.agents})
        if not env.agents:
            break
    assert env.agents == [] and all(terminations[a] or truncations[a] for a in env.possible_agents)
    won = [int(infos[agent]["won"]) for agent in env.possible_agents]
    assert won in ([1, 0], [0, 1], [0, 0]), won
    if won != [0, 0]:
        assert rewards["player_0"] == -rewards["player_1"] == (1.0 if won[0] else -1.0)
    assert env.observation_space("player_0").contains(observations["player_0"])
    env.close()


def test_an_unseeded_reset_continues_the_seed_sequence_of_the_last_seed_given():
    def episode_seeds(env, seeds):
        return [int(env.reset(seed=seed)[0]["player_0"]["episode_seed"]) for seed in seeds]

    first, second = ez.parallel_env("minirts", seats=2), ez.parallel_env("minirts", seats=2)
    drawn = episode_seeds(first, [5, None, None])
    assert drawn == episode_seeds(second, [5, None, None])
    assert len(set(drawn)) == 3
    assert episode_seeds(first, [None]) != episode_seeds(ez.parallel_env("minirts", seats=2), [None])
    first.close()
    second.close()


def test_go_alternates_colours_masks_the_waiting_agent_and_scores_zero_sum():
    env = ez.env("go", board_size=9, max_moves=12)
    env.reset(seed=0)
    order = []
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        other = next(a for a in env.agents if a != agent) if len(env.agents) == 2 else None
        if terminated or truncated:
            assert not observation["action_mask"].any()  # nothing is legal once the game is over
            env.step(None)
            continue
        if other is not None:
            assert not env.observe(other)["action_mask"].any()
        order.append(agent)
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert order == ["black_0", "white_0"] * 6
    env.reset(seed=0)
    for move in range(12):  # the same game again, to read the end's rewards
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        if move < 11:
            assert env.rewards == {"black_0": 0.0, "white_0": 0.0}
    assert env.rewards["black_0"] == -env.rewards["white_0"] != 0.0
    assert all(env.terminations.values())


def test_an_illegal_go_move_ends_the_game_with_the_mover_losing_as_pettingzoo_classic_does():
    env = ez.env("go")
    env.reset(seed=0)
    env.step(0)  # black at the corner; now that point is taken
    env.step(0)
    assert env.terminations == {"black_0": True, "white_0": True}
    assert env.rewards["white_0"] == -1.0


def test_raw_go_refuses_an_illegal_move_with_a_line_naming_it():
    env = ez.GoEnv()
    env.reset(seed=0)
    env.step(40)
    with pytest.raises(ValueError, match="move 40 of white_0 is illegal"):
        env.step(40)
    env.close()


def test_single_seat_and_simultaneous_games_are_refused_where_they_do_not_fit():
    with pytest.raises(ValueError, match="'cartpole' has one seat"):
        ez.parallel_env("cartpole")
    with pytest.raises(ValueError, match="'duel' is not turn-based.*parallel_env"):
        ez.env("duel")
    with pytest.raises(ValueError, match="parallel_env takes a native game .* got 'pz:mpe2.simple_spread_v3'"):
        ez.parallel_env("pz:mpe2.simple_spread_v3")

