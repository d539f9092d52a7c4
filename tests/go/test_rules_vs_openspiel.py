"""The engine's Go rules against OpenSpiel's, move by move on random games
(elfpy.go.openspiel states how the two conventions are reconciled; the
thousands-of-games run is `python benchmarks/bench_go.py rules`)."""

from __future__ import annotations

import pyspiel  # open-spiel is a test requirement: without it this suite fails rather than skips

from elfpy.go.openspiel import compare_random_games, to_openspiel


def test_actions_map_to_openspiel_rows_counted_from_the_bottom():
    state = pyspiel.load_game("go", {"board_size": 9}).new_initial_state()
    assert state.action_to_string(0, to_openspiel(0, 9)) == "B a9"  # our action 0 is A9, the top left
    assert state.action_to_string(0, to_openspiel(80, 9)) == "B j1"
    assert to_openspiel(81, 9) == 81
    assert all(to_openspiel(to_openspiel(a, 9), 9) == a for a in range(82))


def test_fifty_random_games_agree_on_legal_moves_stones_ends_and_scores():
    report = compare_random_games(50, board_size=9, komi=7.5, seed=3)
    assert report.games == 50
    assert report.mismatches == 0, report.examples
    assert report.moves > 50 * 50
    assert report.captures > 100  # random games capture a lot: the comparison covers captures


def test_thirteen_by_thirteen_agrees_too():
    report = compare_random_games(6, board_size=13, komi=0.5, seed=4)
    assert report.games == 6 and report.mismatches == 0, report.examples
    assert report.moves > 6 * 100
