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


def _visit_total(visits: np.ndarray) -> int:
    """The root's visit count behind a visit distribution: the least total that makes every share whole."""
    return next(t for t in range(1, 100_000) if np.allclose(visits * t, np.round(visits * t), atol=1e-4))


def test_a_kept_search_starts_the_next_move_from_the_visits_of_the_line_played():
    """genmove, then the other side's move through `play`: with tree reuse the next search's root holds the
    visits the first search gave that line besides its own 200 playouts (199 after the root's expansion)."""
    logits = np.random.default_rng(0).normal(size=82).astype(np.float32)
    weights = np.arange(81, dtype=np.float32).reshape(1, 1, 9, 9)

    def evaluator(s, legal):  # fixed priors, a value that differs from position to position
        policy = np.exp(logits)[None] * legal
        value = np.tanh((s.astype(np.float32) * weights).sum(axis=(1, 2, 3)) % 1.7 - 0.85)
        return policy / policy.sum(axis=1, keepdims=True), value.astype(np.float32)

    totals = {}
    for reuse in (True, False):
        with play.TreeSearch(evaluator, 9, 7.5, [], "b", playouts=200, leaves=1, reuse_tree=reuse) as tree:
            first = tree.genmove()
            assert _visit_total(first.visits) == 199 and (tree.moves, tree.to_move) == (1, "w")
            reply = int(next(a for a in np.argsort(-logits[:81]) if a != first.action))  # a line it searched
            tree.play(reply)
            assert (tree.moves, tree.to_move, tree.can_play) == (2, "b", False)
            totals[reuse] = _visit_total(tree.genmove().visits)
    assert totals[False] == 199 and totals[True] > 199


def test_a_kept_search_refuses_an_illegal_move_from_outside_by_name():
    with play.TreeSearch(play.uniform_evaluator, 9, 7.5, [("b", "E5")], "w", playouts=8, leaves=2) as tree:
        tree.genmove()
        with pytest.raises(elfpy.GameError, match="the move made outside, action 40, is illegal after 2 moves"):
            tree.play(40)  # E5 holds black's stone


def test_a_kept_search_ends_with_the_game():
    def passer(s, legal):  # every prior on the pass
        policy = np.zeros(legal.shape, np.float32)
        policy[:, -1] = 1
        return policy, np.zeros(len(s), np.float32)

    with play.TreeSearch(passer, 9, 7.5, [], "b", playouts=8, leaves=2, pass_only_when_done=False) as tree:
        assert tree.genmove().action == 81 and tree.can_play
        tree.play(81)  # the other side passes too
        assert not tree.usable and not tree.can_play
    with play.TreeSearch(passer, 9, 7.5, [("b", "pass")], "w", playouts=8, leaves=2, pass_only_when_done=False) as tree:
        assert tree.genmove().action == 81  # its own pass ends the game
        assert not tree.usable
        with pytest.raises(RuntimeError, match="over"):
            tree.genmove()


def test_a_search_told_to_stop_moves_on_what_it_has_and_the_next_search_runs_in_full():
    """`stop` (the go_mcts reply move_now) ends a move's search after the first step it answers True:
    at once, the move is the priors' best (no visit yet); the next move's search runs to `playouts`."""
    logits = np.random.default_rng(1).normal(size=82).astype(np.float32)
    calls = 0

    def evaluator(s, legal):  # fixed priors, value 0; counts its calls
        nonlocal calls
        calls += 1
        policy = np.exp(logits)[None] * legal
        return policy / policy.sum(axis=1, keepdims=True), np.zeros(len(s), np.float32)

    with play.TreeSearch(evaluator, 9, 7.5, [], "b", playouts=64, leaves=4) as tree:
        first = tree.genmove(stop=lambda: True)
        assert calls == 1 and first.action == int(np.argmax(logits)) and first.visits.sum() == 0
        steps = []
        second = tree.genmove(stop=lambda: steps.append(1) or len(steps) == 5)
        assert len(steps) == 5 and calls == 1 + 1 + 5  # the first move's batch, answered first, then 5 steps
        assert second.visits[second.action] == second.visits.max() > 0
        calls = 0
        tree.genmove()
        assert calls >= 64 // 4  # 64 simulations, at most 4 a step
