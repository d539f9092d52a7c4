"""Replay across a restart of the games (``Replay.games_restarted``): no transition or
sequence joins a lane's last row before the restart to the new game's first, n-step
sums stop at the break, and the break survives a checkpoint."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_replay import assert_same, saved_and_loaded, window

from rlpytorch.acting.sampler import Sampler
from rlpytorch.learners.value_trainer import ValueTrainer, value_interface
from rlpytorch.methods.dqn import DQN
from rlpytorch.methods.target_network import TargetNetwork
from rlpytorch.models.q_networks import QNetwork, QSettings
from rlpytorch.replay import Replay, nstep_targets
from rlpytorch.replay.lanes import LANE_STRIDE


def col(*values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype).unsqueeze(1)


def test_nstep_sums_stop_before_a_cut_and_bootstrap_from_the_row_before_it():
    r = col(9.0, 1.0, 2.0, 3.0, 4.0)
    none = col(False, False, False, False, False, dtype=torch.bool)
    cut = col(False, False, False, True, False, dtype=torch.bool)  # row 3 is a new game's first
    out = nstep_targets(r, none, none, gamma=0.5, n=3, cut=cut)
    # t=0: 1 + 0.5 * 2, then the cut: boot row 2, discount 0.25 (no end: it bootstraps);
    # t=1: 2 alone; t=2: no step (the last row before the cut); t=3: 4 alone (the rows end)
    assert out.r.squeeze(1).tolist() == [2.0, 2.0, 0.0, 4.0, 0.0]
    assert out.discount.squeeze(1).tolist() == [0.25, 0.5, 1.0, 0.5, 1.0]
    assert out.boot.squeeze(1).tolist() == [2, 2, 2, 4, 4]
    assert out.valid.squeeze(1).tolist() == [True, True, False, True, False]
    assert not out.final.any()


def restarted(replay):
    """Two lanes: steps 0..6 of the old games, a restart, steps 100..106 of the new ones
    (lane rows 0..6, then 7..13; windows of T = 4 overlapping by one row)."""
    replay.add(window(4, 2), np.arange(2))
    replay.add(window(4, 2, start=3), np.arange(2))
    replay.games_restarted()
    replay.add(window(4, 2, start=100), np.arange(2))  # a new game's first window: stored whole
    replay.add(window(4, 2, start=103), np.arange(2))
    return replay


@pytest.mark.parametrize("prioritized", [False, True])
def test_no_transition_joins_the_old_games_to_the_new_and_nstep_sums_stop_at_the_break(prioritized):
    replay = restarted(Replay(num_lanes=2, obs_keys=["s"], gamma=0.5, n_step=3, replay_capacity=64,
                              prioritized=prioritized, seed=0))
    assert replay.store.count.tolist() == [14, 14]
    assert replay.store.get("s", np.arange(14), np.array(0))[:, 0].tolist() == [*range(7), *range(100, 107)]
    # per lane: rows 0..5 (the break closed their game: one step after them is enough), row 6
    # (no step after it) never; rows 7..10 of the new game (3 rows after them)
    assert len(replay) == 2 * (6 + 4)
    batch = replay.sample(400)
    s, next_s = batch["s"][:, 0], batch["next_s"][:, 0]
    assert set(s.tolist()) == {0, 1, 2, 3, 4, 5, 100, 101, 102, 103}
    assert ((s < 100) == (next_s < 100)).all()  # (a): no pre-restart state with a post-restart next state
    expected = {  # (b): s -> (reward, discount, next s), r = 1 on every row, gamma 0.5
        3: (1.75, 0.125, 6), 4: (1.5, 0.25, 6), 5: (1.0, 0.5, 6), 100: (1.75, 0.125, 103), 103: (1.75, 0.125, 106)}
    for i, state in enumerate(s.tolist()):
        if state in expected:
            assert (batch["r"][i].item(), batch["discount"][i].item(), next_s[i].item()) == expected[state]
    if prioritized:  # the sum tree: a leaf per sampleable row (position * lanes + lane), none for row 6
        sampleable = [*range(6), *range(7, 11)]
        leaves = np.flatnonzero(replay.sampler.tree.get(np.arange(64)))
        assert leaves.tolist() == sorted(row * 2 + lane for row in sampleable for lane in range(2))


@pytest.mark.parametrize("prioritized", [False, True])
def test_sequences_never_cross_the_break(prioritized):
    replay = Replay(num_lanes=2, obs_keys=["s"], replay_capacity=64, sequence_length=3, prioritized=prioritized,
                    seed=0)
    restarted(replay)
    batch = replay.sample(400)
    s = batch["s"][..., 0]
    assert (s[1:] - s[:-1] == 1).all()  # consecutive steps of one game (6 -> 100 would not be)
    # starts: rows 0..4 (two rows after them in their game), rows 7..11 (two rows stored after them)
    assert set(s[0].tolist()) == {0, 1, 2, 3, 4, 100, 101, 102, 103, 104}
    assert len(replay) == 2 * 10


def test_a_new_games_first_row_starts_its_frame_stacks():
    """Frame storage: the stack of the new game's first row is its frame repeated, not the old game's frames."""
    k = 3
    def stacked(start, first_of_game):  # noqa: E306
        w = window(4, 1, start=start)
        frames = w["s"][:, 0, 0]
        stacks = np.stack([np.maximum(frames - j, start if first_of_game else 0) for j in range(k - 1, -1, -1)], -1)
        w["s"] = np.broadcast_to(stacks[:, None, :, None, None], (4, 1, k, 1, 1)).astype(np.uint8).copy()
        w["final_s"] = np.zeros_like(w["s"])
        return w
    replay = Replay(num_lanes=1, obs_keys=["s"], replay_capacity=32, frame_stack=k, seed=0)
    replay.add(stacked(0, True), np.array([0]))
    replay.add(stacked(3, False), np.array([0]))
    replay.games_restarted()
    replay.add(stacked(100, True), np.array([0]))
    stack = replay.store.get("s", np.arange(7, 10), np.array(0))[:, :, 0, 0]
    assert stack.tolist() == [[100, 100, 100], [100, 100, 101], [100, 101, 102]]


@pytest.mark.parametrize("settings", [{"n_step": 3}, {"n_step": 2, "prioritized": True},
                                      {"sequence_length": 3, "prioritized": True}])
def test_a_break_comes_back_from_a_checkpoint_before_and_after_the_new_games_first_window(settings):
    """(d): saved just after the restart (the break still waiting for its first row) or
    after it, then loaded (weights only): the replay goes on as the one never saved."""
    make = lambda: Replay(num_lanes=2, obs_keys=["s"], gamma=0.5, replay_capacity=64, seed=0, **settings)  # noqa: E731
    unbroken = make()
    unbroken.add(window(4, 2), np.arange(2))
    unbroken.add(window(4, 2, start=3), np.arange(2))
    unbroken.games_restarted()
    state = saved_and_loaded(unbroken.state_dict())
    assert state["store"]["breaks"].tolist() == [7, LANE_STRIDE + 7]  # lane * stride + the new game's first row
    resumed = make()
    resumed.load_state_dict(state)
    assert_same(resumed.state_dict(), unbroken.state_dict())
    for k, start in enumerate((100, 103)):
        for replay in (unbroken, resumed):
            replay.add(window(4, 2, start=start), np.arange(2))
        if k == 0:
            again = make()
            again.load_state_dict(saved_and_loaded(unbroken.state_dict()))
    again.add(window(4, 2, start=103), np.arange(2))
    for _ in range(3):
        expected = unbroken.sample(64)
        if "sequence_length" in settings:
            assert (expected["s"][1:] - expected["s"][:-1] == 1).all()
        else:
            assert ((expected["s"] < 100) == (expected["next_s"] < 100)).all()
        for replay in (resumed, again):
            got = replay.sample(64)
            for key, value in expected.items():
                torch.testing.assert_close(got[key], value, rtol=0, atol=0, msg=key)
        for replay in (unbroken, resumed, again):
            replay.update_priorities(expected["index"], np.arange(64) % 5 + 0.25)


def test_restarting_twice_before_the_next_window_is_one_break():
    replay = Replay(num_lanes=2, obs_keys=["s"], replay_capacity=64, n_step=2, prioritized=True, seed=0)
    replay.add(window(5, 2), np.arange(2))
    replay.games_restarted()
    replay.update_priorities(np.array([4, 5]), np.array([3.0, 3.0]))  # rows 2 (now sampleable): learned priorities
    tree = replay.sampler.tree.nodes.copy()
    replay.games_restarted()  # a resume's load, then the trainer's games_restarted
    np.testing.assert_array_equal(replay.sampler.tree.nodes, tree)
    assert replay.store.breaks.tolist() == [5, LANE_STRIDE + 5]


# --- against a reference: random windows, restarts and a ring that goes round ------------------


OPS = st.lists(st.one_of(st.integers(2, 5), st.just("restart")), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None)
@given(ops=OPS, n_step=st.integers(1, 3), sequence_length=st.sampled_from([0, 3]), prioritized=st.booleans(),
       capacity=st.integers(6, 16))
def test_sampleable_rows_and_targets_match_a_reference_history(ops, n_step, sequence_length, prioritized, capacity):
    """Every lane's history as (game, step) per row; a row is sampleable when its game has
    the rows after it a sample needs (one, or a sequence's, once a restart ended its game),
    and a transition's n-step sum runs to its game's last stored row at most."""
    lanes = 2
    replay = Replay(num_lanes=lanes, obs_keys=["s"], gamma=0.5, n_step=n_step, sequence_length=sequence_length,
                    prioritized=prioritized, replay_capacity=lanes * capacity, seed=0)
    games = []  # per absolute row (the same for both lanes): the game it belongs to
    game, step, pending = 0, 0, True
    for op in ops:
        if op == "restart":
            replay.games_restarted()
            if games:
                game, step, pending = game + 1, 0, True
            continue
        first = 0 if pending else 1
        replay.add(window(op, lanes, start=1000 * game + step - first), np.arange(lanes))
        games += [game] * (op - first)
        step += op - first
        pending = False
    count = len(games)
    ended = pending and count > 0  # a restart waiting for its first row closed the last game too
    horizon = sequence_length - 1 if sequence_length else n_step
    span = horizon if sequence_length else 1

    def last_row_of(t):
        return max(u for u in range(count) if games[u] == games[t])

    def sampleable(t):
        closed = last_row_of(t) < count - 1 or ended
        return t + span <= last_row_of(t) if closed else t + horizon <= count - 1

    oldest = max(0, count - capacity)
    expected = {t for t in range(oldest, count) if sampleable(t)}
    assert len(replay) == lanes * len(expected)
    if prioritized:
        leaves = np.flatnonzero(replay.sampler.tree.get(np.arange(lanes * capacity)))
        assert leaves.tolist() == sorted((t % capacity) * lanes + lane for t in expected for lane in range(lanes))
    if not expected:
        return
    batch = replay.sample(64)
    s = batch["s"][..., 0].numpy().astype(np.int64)
    row_of = {1000 * games[t] + t - games.index(games[t]): t for t in expected}  # s -> its row
    if sequence_length:
        assert (np.diff(s, axis=0) == 1).all() and set(s[0]) <= set(row_of)
        return
    for i, state in enumerate(s):
        row = row_of[state]
        k = min(n_step, last_row_of(row) - row)
        assert batch["r"][i].item() == pytest.approx(2 * (1 - 0.5**k))
        assert batch["discount"][i].item() == 0.5**k
        assert batch["next_s"][i, 0].item() == state + k


# --- the trainer's side -------------------------------------------------------------------


def value_trainer():
    torch.manual_seed(0)
    model = QNetwork({"s": (1,)}, 2, QSettings(hidden=4, layers=1))
    replay = Replay(2, model.obs_keys, replay_capacity=64, n_step=2, seed=0)
    return ValueTrainer(value_interface(model), DQN(target=TargetNetwork(50)), Sampler("epsilon_greedy", seed=0),
                        replay, learning_starts=0)


def test_a_value_trainer_records_a_break_at_games_restarted_and_at_a_loaded_state():
    """At a save with --restart_games_at_save (the runner calls games_restarted) and at a
    resume (the learning half's load, also in a learner process, which never sees the call)."""
    trainer = value_trainer()
    trainer.replay.add(window(4, 2), np.arange(2))
    state = saved_and_loaded(trainer.learning().state_dict())
    trainer.games_restarted()
    assert trainer.replay.store.breaks.tolist() == [4, LANE_STRIDE + 4]
    resumed = value_trainer()
    resumed.learning().load_state_dict(state)
    assert resumed.replay.store.breaks.tolist() == [4, LANE_STRIDE + 4]
