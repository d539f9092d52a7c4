"""The go_mcts game from Python: its keys, and a failing evaluator stopping
every search cleanly."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import elfpy
from elfpy.go import play


def test_search_game_declares_its_reply_keys_as_bounded_boxes():
    gc = elfpy.GameContext("go_mcts", num_games=2, num_threads=1, leaves=4, board_size=13)
    spec = gc.spec()
    assert gc.num_seats == 4
    assert spec["policy"].shape == (170,) and spec["policy"].role == "action" and spec["policy"].bounds == (0, 1)
    assert spec["value"].shape == () and spec["value"].bounds == (-1, 1)
    assert spec["s"].shape == (23, 13, 13) and spec["s"].dtype == np.uint8
    gc.stop()


def test_an_exception_in_the_evaluation_callback_stops_every_search():
    threads_before = threading.active_count()
    gc = elfpy.GameContext("go_mcts", num_games=8, num_threads=2, leaves=4, playouts=16)
    gc.add_tag("eval", batch_size=16, inputs=["s", "legal"], replies=["policy", "value"])
    calls = 0

    def evaluate(batch):
        nonlocal calls
        calls += 1
        if calls == 5:
            raise RuntimeError("network exploded")
        return dict(zip(("policy", "value"), play.uniform_evaluator(batch["s"], batch["legal"]), strict=True))

    gc.reg_callback("eval", evaluate)
    gc.start()
    with pytest.raises(RuntimeError, match="network exploded"):
        for _ in range(100):
            gc.run()
    with pytest.raises(elfpy.GameError, match="callback for tag 'eval' raised RuntimeError: network exploded"):
        gc.run()
    gc.stop()
    assert calls == 5
    assert threading.active_count() == threads_before


def test_a_search_from_python_reports_a_legal_move_and_its_visits():
    moves = [("b", "D5"), ("w", "E5"), ("b", "F5"), ("w", "pass"), ("b", "E6")]
    result = play.search(play.uniform_evaluator, 9, 7.5, moves, "w", playouts=64, leaves=4)
    legal = play.observe(9, 7.5, moves).legal
    assert legal[result.action] == 1
    assert abs(result.visits.sum() - 1) < 1e-5 and result.visits[result.action] == result.visits.max()


def test_a_search_draws_the_opening_moves_by_visits_when_asked():
    """Before `sampled_moves` moves the move is drawn by the visits (the same seed, the same draw);
    from then on it is the most visited again."""
    def opening(seed: int, moves=()) -> play.SearchResult:
        return play.search(play.uniform_evaluator, 9, 7.5, list(moves), None, playouts=64, leaves=4,
                           sampled_moves=2, seed=seed)
    drawn = [opening(seed).action for seed in range(8)]
    assert len(set(drawn)) > 1
    assert opening(3).action == drawn[3]
    later = opening(0, [("b", "E5"), ("w", "C3")])
    assert later.visits[later.action] == later.visits.max()


def test_the_search_refuses_a_negative_sampled_moves():
    with pytest.raises(ValueError, match="'temperature_moves' must be >= 0"):
        play.search(play.uniform_evaluator, 9, 7.5, [], None, playouts=8, leaves=4, sampled_moves=-1)
