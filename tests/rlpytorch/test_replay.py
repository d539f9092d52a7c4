"""Replay parts against hand-worked numbers and against the histories they were fed."""

import io

import numpy as np
import pytest
import torch

from rlpytorch.replay import LaneStore, PrioritizedSampler, Replay, SumTree, nstep_targets


def col(*values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype).unsqueeze(1)


# --- sum tree and prioritized sampling ------------------------------------------------


def test_sum_tree_finds_the_leaf_whose_prefix_interval_holds_u():
    tree = SumTree(5)
    tree.update(np.arange(5), np.array([1.0, 0.0, 2.0, 3.0, 4.0]))
    assert tree.total == 10.0
    # prefix intervals: 0 [0,1), 1 empty, 2 [1,3), 3 [3,6), 4 [6,10)
    u = np.array([0.0, 0.99, 1.0, 2.5, 3.0, 5.99, 6.0, 9.99, 10.0])
    assert tree.find(u).tolist() == [0, 0, 2, 2, 3, 3, 4, 4, 4]
    tree.update(np.array([4, 4]), np.array([0.5, 0.5]))
    assert tree.total == 6.5


def test_sum_tree_rejects_negative_priorities():
    with pytest.raises(ValueError, match="priorities"):
        SumTree(4).update(np.array([0]), np.array([-1.0]))


def window(T, B, start=0, terminal_at=(), truncated_at=()):
    """A CartPole-like window: s = step number, a = step % 2, r = 1."""
    steps = np.arange(start, start + T, dtype=np.float32)[:, None].repeat(B, 1)
    terminal = np.zeros((T, B), bool)
    truncated = np.zeros((T, B), bool)
    for t in terminal_at:
        terminal[t] = True
    for t in truncated_at:
        terminal[t] = truncated[t] = True
    return {
        "s": steps[..., None],
        "final_s": np.where(terminal, -steps, 0)[..., None].astype(np.float32),
        "a": (steps % 2).astype(np.int64),
        "r": np.ones((T, B), np.float32),
        "terminal": terminal,
        "truncated": truncated,
    }


def test_prioritized_draw_frequencies_follow_priority_to_the_alpha():
    replay = Replay(num_lanes=1, obs_keys=["s"], replay_capacity=8, prioritized=True, priority_alpha=0.5, seed=0)
    replay.add(window(5, 1), np.array([0]))  # rows 0..4, rows 0..3 sampleable (n = 1)
    index = replay.sample(4)["index"]
    replay.update_priorities(index.sort().values, torch.tensor([1.0, 4.0, 9.0, 16.0]) - 1e-6)
    counts = np.zeros(8)
    for _ in range(100):
        np.add.at(counts, replay.sample(320)["index"].numpy(), 1)
    # p^alpha = 1, 2, 3, 4 -> probabilities 0.1, 0.2, 0.3, 0.4
    np.testing.assert_allclose(counts[:4] / counts.sum(), [0.1, 0.2, 0.3, 0.4], atol=0.01)
    assert counts[4:].sum() == 0


def test_importance_weights_are_normalised_inverse_probabilities():
    store = LaneStore(4, 1)
    sampler = PrioritizedSampler(store, horizon=1, span=1, alpha=1.0, beta=0.5, seed=0)
    store_writes = store.add(window(5, 1), np.array([0]))  # 4 rows kept (1..4), 3 sampleable
    for lanes, first, rows in store_writes:
        sampler.on_write(store, lanes, first, rows)
    sampler.update(np.array([1, 2, 3]), np.array([1.0, 2.0, 1.0]) - 1e-6)
    _, _, w, leaf = sampler.sample(store, 64)
    # N = 3, P = 1/4, 1/2, 1/4: w = (3 P)^-1/2 / max = 1 for P = 1/4, sqrt(1/2) for P = 1/2
    expected = {1: 1.0, 2: np.sqrt(0.5), 3: 1.0}
    assert {int(i) for i in leaf} == {1, 2, 3}
    np.testing.assert_allclose(w, [expected[int(i)] for i in leaf], rtol=1e-6)
    sampler.anneal(0.5)
    assert sampler.beta == pytest.approx(0.75)


# --- n-step targets ---------------------------------------------------------------------


R = col(9.0, 1.0, 2.0, 3.0, 4.0)


def test_nstep_sums_n_rewards_and_bootstraps_n_rows_later():
    none = col(False, False, False, False, False, dtype=torch.bool)
    out = nstep_targets(R, none, none, gamma=0.5, n=2)
    # t=0: 1 + 0.5 * 2, boot row 2, discount 0.25; t=2: 3 + 0.5 * 4; t=3: only one row left
    assert out.r.squeeze(1).tolist() == [2.0, 3.5, 5.0, 4.0, 0.0]
    assert out.discount.squeeze(1).tolist() == [0.25, 0.25, 0.25, 0.5, 1.0]
    assert out.boot.squeeze(1).tolist() == [2, 3, 4, 4, 4]
    assert out.valid.squeeze(1).tolist() == [True, True, True, True, False]


def test_nstep_stops_at_a_terminal_and_does_not_bootstrap_after_a_real_end():
    terminal = col(False, False, True, False, False, dtype=torch.bool)
    out = nstep_targets(R, terminal, None, gamma=0.5, n=3)
    # a_1 ended the episode: t=0 gets 1 + 0.5 * 2 and nothing after; t=1 gets 2; t=2 starts afresh
    assert out.r.squeeze(1).tolist() == [2.0, 2.0, 3.0 + 0.5 * 4, 4.0, 0.0]
    assert out.discount.squeeze(1).tolist() == [0.0, 0.0, 0.25, 0.5, 1.0]


def test_nstep_bootstraps_from_the_final_state_at_a_truncation():
    terminal = col(False, False, True, False, False, dtype=torch.bool)
    out = nstep_targets(R, terminal, terminal, gamma=0.5, n=3)
    assert out.r.squeeze(1).tolist() == [2.0, 2.0, 5.0, 4.0, 0.0]
    assert out.discount.squeeze(1).tolist() == [0.25, 0.5, 0.25, 0.5, 1.0]
    assert out.boot.squeeze(1).tolist()[:2] == [2, 2]
    assert out.final.squeeze(1).tolist() == [True, True, False, False, False]


def test_sampled_transitions_carry_nstep_targets_across_a_truncation():
    replay = Replay(num_lanes=1, obs_keys=["s"], gamma=0.5, n_step=3, replay_capacity=16, seed=0)
    replay.add(window(4, 1, terminal_at=()), np.array([0]))
    replay.add(window(4, 1, start=3, truncated_at=(1,)), np.array([0]))  # row 4 truncated: final_s = -4
    batch = replay.sample(64)
    by_state = {float(s): i for i, s in enumerate(batch["s"][:, 0])}
    i = by_state[2.0]  # a_2 -> r = 1, a_3 -> r = 1 and ended by the time limit at row 4
    assert batch["r"][i] == 1.5 and batch["discount"][i] == 0.25 and batch["next_s"][i, 0] == -4.0
    i = by_state[0.0]  # three steps, all inside the episode
    assert batch["r"][i] == 1.75 and batch["discount"][i] == 0.125 and batch["next_s"][i, 0] == 3.0
    assert set(by_state) == {0.0, 1.0, 2.0, 3.0}  # rows 4..6 lack 3 rows after them


# --- storage ---------------------------------------------------------------------------


def test_overlapping_windows_store_each_step_once():
    store = LaneStore(100, 2)
    store.add(window(4, 2), np.array([0, 1]))
    store.add(window(4, 2, start=3), np.array([1, 0]))
    assert store.count.tolist() == [7, 7]
    np.testing.assert_array_equal(store.get("s", np.arange(7), np.array(0))[:, 0], np.arange(7))


def test_memory_stays_within_its_bound():
    replay = Replay(num_lanes=4, obs_keys=["s"], replay_capacity=40, seed=0)
    replay.add(window(5, 4), np.arange(4))
    size = replay.store.nbytes
    for k in range(1, 50):
        replay.add(window(5, 4, start=4 * k), np.arange(4))
    assert replay.store.nbytes == size
    assert replay.store.stored == 40 and len(replay) == 36
    s = replay.sample(256)["s"][:, 0]
    assert s.min() >= 4 * 49 + 4 - 9  # only the last 10 steps of each lane remain


def test_bad_windows_raise_clear_errors():
    replay = Replay(num_lanes=2, obs_keys=["s"], replay_capacity=40)
    with pytest.raises(ValueError, match="'s'"):
        replay.add({k: v for k, v in window(4, 2).items() if k != "s"}, np.arange(2))
    with pytest.raises(ValueError, match="final_s"):
        replay.add({k: v for k, v in window(4, 2, truncated_at=(2,)).items() if k != "final_s"}, np.arange(2))
    with pytest.raises(ValueError, match="lane"):
        replay.add(window(4, 2), np.array([0, 5]))
    with pytest.raises(ValueError, match="nothing to sample"):
        replay.sample(4)


# --- frame-based storage -----------------------------------------------------------------


def stacked_history(steps, games, k, seed):
    """What a FrameStackObservation game sends: per row the stack of the last k frames
    (the first frame repeated at an episode start), final_s on truncated rows."""
    rng = np.random.default_rng(seed)
    s = np.zeros((steps, games, k, 2, 3), np.uint8)
    final = np.zeros_like(s)
    terminal = rng.random((steps, games)) < 0.15
    terminal[0] = False
    truncated = terminal & (rng.random((steps, games)) < 0.5)
    frame_id = 0
    for g in range(games):
        stack = None
        for t in range(steps):
            frame_id += 1
            frame = np.full((2, 3), frame_id % 256, np.uint8)
            frame[0, 0] = frame_id // 256
            if t > 0 and terminal[t, g]:
                final[t, g] = np.concatenate([stack[1:], frame[None]])
                frame_id += 1
                frame = np.full((2, 3), frame_id % 256, np.uint8)
                frame[0, 0] = frame_id // 256
            if t == 0 or terminal[t, g]:
                stack = np.repeat(frame[None], k, 0)
            else:
                stack = np.concatenate([stack[1:], frame[None]])
            s[t, g] = stack
    final[~truncated] = 0
    return {"s": s, "final_s": final, "terminal": terminal, "truncated": truncated,
            "a": np.zeros((steps, games), np.int64), "r": rng.random((steps, games)).astype(np.float32)}


def feed(replay, history, T):
    steps = history["s"].shape[0]
    for start in range(0, steps - T + 1, T - 1):
        replay.add({k: v[start : start + T] for k, v in history.items()}, np.arange(history["s"].shape[1]))


def test_frame_stacks_are_rebuilt_exactly_at_episode_starts_and_truncations():
    history = stacked_history(steps=61, games=3, k=4, seed=0)
    replay = Replay(num_lanes=3, obs_keys=["s"], replay_capacity=3 * 40, frame_stack=4, n_step=2, seed=1)
    feed(replay, history, T=6)
    assert replay.store.data["s"].shape == (40, 3, 2, 3)  # one frame per step
    absolute, lanes, *_ = replay.sampler.sample(replay.store, 500)
    np.testing.assert_array_equal(replay.store.get("s", absolute, lanes), history["s"][absolute, lanes])
    batch = replay.sample(400)
    rows = {history["s"][t, g].tobytes(): (t, g) for t in range(61) for g in range(3)}
    checked_final = 0
    for i in range(400):
        t, g = rows[batch["s"][i].numpy().tobytes()]
        rows_after = {k: torch.from_numpy(history[k][t : t + 3, g]) for k in ("r", "terminal", "truncated")}
        nstep = nstep_targets(rows_after["r"], rows_after["terminal"], rows_after["truncated"], 0.99, 2)
        b = t + int(nstep.boot[0])
        expected = history["final_s"][b, g] if nstep.final[0] else history["s"][b, g]
        if batch["weight"][i] == 0:  # its final frame was recycled: left out of the loss
            assert nstep.final[0]
            continue
        checked_final += bool(nstep.final[0])
        np.testing.assert_array_equal(batch["next_s"][i].numpy(), expected)
        assert batch["r"][i] == pytest.approx(float(nstep.r[0]))
    assert checked_final > 0


DEVICES = ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("settings", [{"n_step": 2}, {"n_step": 3, "prioritized": True}, {"sequence_length": 4}])
def test_frames_stored_on_a_device_give_the_batches_of_host_storage(device, settings):
    """--replay_device: the same windows and seed give the same samples as frames
    kept in host memory, at episode starts, truncations and recycled finals too."""
    history = stacked_history(steps=61, games=3, k=4, seed=0)
    host, there = (Replay(num_lanes=3, obs_keys=["s"], replay_capacity=3 * 40, frame_stack=4, seed=1,
                          replay_device=where, **settings) for where in ("", device))
    feed(host, history, T=6)
    feed(there, history, T=6)
    assert isinstance(there.store.data["s"], torch.Tensor) and there.store.data["s"].device.type == device
    assert there.store.nbytes == host.store.nbytes
    for _ in range(3):
        expected, got = host.sample(200), there.sample(200)
        assert set(got) == set(expected)
        for key, value in expected.items():
            torch.testing.assert_close(got[key].cpu(), value, rtol=0, atol=0, msg=key)
        if settings.get("prioritized"):
            for replay in (host, there):
                replay.update_priorities(expected["index"], np.arange(200) % 7 + 0.5)
    assert history["truncated"].any() and host.lost_finals == there.lost_finals


def test_a_replay_device_needs_frame_storage():
    with pytest.raises(ValueError, match="frame_stack > 1"):
        Replay(num_lanes=2, obs_keys=["s"], replay_device="cpu")


def test_frame_storage_takes_at_least_3_5x_less_memory_than_full_stacks():
    history = stacked_history(steps=201, games=4, k=4, seed=2)
    history = {k: (np.repeat(np.repeat(v, 28, -1), 42, -2) if k in ("s", "final_s") else v) for k, v in history.items()}
    full = Replay(num_lanes=4, obs_keys=["s"], replay_capacity=800, seed=0)
    frames = Replay(num_lanes=4, obs_keys=["s"], replay_capacity=800, frame_stack=4, seed=0)
    feed(full, history, T=11)
    feed(frames, history, T=11)
    assert full.store.stored == frames.store.stored == 800
    assert full.store.nbytes / frames.store.nbytes >= 3.5


# --- sequences ---------------------------------------------------------------------------


def test_sequences_are_consecutive_rows_with_the_stored_state_of_their_first_row():
    replay = Replay(num_lanes=2, obs_keys=["s"], replay_capacity=100, sequence_length=4, seed=0)
    for k in range(3):
        w = window(5, 2, start=4 * k, truncated_at=(2,) if k == 1 else ())
        w["h"] = np.repeat(w["s"] * 10, 3, -1)
        replay.add(w, np.arange(2))
    batch = replay.sample(32)
    s = batch["s"][..., 0]
    assert s.shape == (4, 32)
    assert (s[1:] - s[:-1] == 1).all()
    assert (batch["h"][0, :, 0] == 10 * s[0]).all()
    assert set(batch) >= {"a", "r", "terminal", "truncated", "final_s", "weight", "index"}
    assert (s[0] <= 12 - 3).all()  # 13 steps per lane, each start needs 3 more


# --- saving and resuming ------------------------------------------------------------------


def saved_and_loaded(state):
    """``state`` through a checkpoint file's round trip (no pickled objects: weights only)."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def assert_same(got, expected, where="state"):
    """Nested dicts and lists of tensors and numbers, equal in every item."""
    if isinstance(expected, dict):
        assert set(got) == set(expected), where
        for key in expected:
            assert_same(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected, rtol=0, atol=0, msg=where)
    else:
        assert got == expected, where


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("settings", [{"n_step": 2}, {"n_step": 3, "prioritized": True}, {"sequence_length": 4},
                                      {"n_step": 2, "frame_stack": 4}, {"prioritized": True, "frame_stack": 4}])
def test_a_replay_saved_mid_run_and_loaded_samples_what_the_replay_that_went_on_samples(device, settings):
    """Rows, lanes' positions, episode starts, final frames, priorities and the
    generator come back: the loaded replay takes the rest of the history and
    samples exactly what the one never saved does (frames on ``device``, too)."""
    history = stacked_history(steps=81, games=3, k=4, seed=0)
    if not settings.get("frame_stack"):  # vector observations: the stack's newest frame, flattened
        history = {**history, **{k: history[k][:, :, -1].reshape(81, 3, -1).astype(np.float32)
                                 for k in ("s", "final_s")}}
    device_setting = {"replay_device": device} if settings.get("frame_stack") else {}
    make = lambda: Replay(num_lanes=3, obs_keys=["s"], replay_capacity=3 * 40, seed=1, **device_setting,  # noqa: E731
                          **settings)
    first_part = {k: v[:46] for k, v in history.items()}
    rest = {k: v[45:] for k, v in history.items()}
    unbroken = make()
    feed(unbroken, first_part, T=6)  # the ring has gone round once
    unbroken.update_priorities(unbroken.sample(50)["index"], np.arange(50) % 7 + 0.5)
    resumed = make()
    resumed.load_state_dict(saved_and_loaded(unbroken.state_dict()))
    assert_same(resumed.state_dict(), unbroken.state_dict())
    if settings.get("prioritized"):
        np.testing.assert_array_equal(resumed.sampler.tree.nodes, unbroken.sampler.tree.nodes)  # sums and all
    for replay in (unbroken, resumed):
        feed(replay, rest, T=6)
    assert resumed.store.stored == unbroken.store.stored == 120  # rows from before and after the save
    for _ in range(3):
        expected, got = unbroken.sample(100), resumed.sample(100)
        assert set(got) == set(expected)
        for key, value in expected.items():
            torch.testing.assert_close(got[key], value, rtol=0, atol=0, msg=key)
        for replay in (unbroken, resumed):
            replay.update_priorities(expected["index"], np.arange(100) % 5 + 0.25)
    assert resumed.stats() == unbroken.stats()


def test_an_empty_replay_saves_and_loads():
    replay = Replay(num_lanes=2, obs_keys=["s"], replay_capacity=40, seed=0)
    other = Replay(num_lanes=2, obs_keys=["s"], replay_capacity=40, seed=0)
    other.load_state_dict(saved_and_loaded(replay.state_dict()))
    assert len(other) == 0 and other.store.stored == 0


def test_a_replay_refuses_the_state_of_another_capacity():
    replay = Replay(num_lanes=2, obs_keys=["s"], replay_capacity=40, seed=0)
    replay.add(window(5, 2), np.arange(2))
    with pytest.raises(ValueError, match="holds 20 rows of 2 lanes, this one 30 of 2: resume with"):
        Replay(num_lanes=2, obs_keys=["s"], replay_capacity=60).load_state_dict(replay.state_dict())
