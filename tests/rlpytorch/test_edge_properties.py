"""Maths at the edges, as properties over many inputs (``hypothesis``): the C51
projection for any support, finite reward and discount; the replay's capacity
for any capacity and number of lanes."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlpytorch.methods.categorical import project_distribution
from rlpytorch.replay import Replay

BOUNDED = settings(max_examples=150, deadline=None)
finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


# --- the C51 projection ---------------------------------------------------------------


@st.composite
def supports(draw):
    """Evenly spaced atoms as the heads make them (``torch.linspace``), spacing at least 0.01."""
    num_atoms = draw(st.integers(2, 101))
    v_min = draw(st.floats(-1000, 1000))
    width = draw(st.floats(0.01 * (num_atoms - 1), 2000))
    return torch.linspace(v_min, v_min + width, num_atoms)


def distributions(rows: int, atoms: int, seed: int) -> torch.Tensor:
    """``[rows, atoms]`` probabilities, some atoms empty."""
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, atoms, generator=generator) * 3
    return torch.softmax(logits, -1)


@BOUNDED
@given(supports(), st.lists(finite32, min_size=1, max_size=4), st.lists(finite32, min_size=1, max_size=4),
       st.integers(0, 2**31 - 1))
def test_the_projection_stays_on_the_support_and_keeps_every_row_a_distribution(support, rewards, discounts, seed):
    rows = min(len(rewards), len(discounts))
    reward, discount = torch.tensor(rewards[:rows]), torch.tensor(discounts[:rows])
    probs = distributions(rows, support.numel(), seed)
    m = project_distribution(probs, reward, discount, support)  # scatter_add_ raises on an index out of range
    assert m.shape == probs.shape and torch.isfinite(m).all() and (m >= 0).all()
    torch.testing.assert_close(m.sum(-1), torch.ones(rows), atol=1e-5, rtol=0)


@BOUNDED
@given(supports(), st.floats(-5000, 5000, width=32), st.floats(-2, 2, width=32), st.integers(0, 2**31 - 1))
def test_the_projection_keeps_the_mean_of_the_clipped_shifted_atoms(support, reward, discount, seed):
    # Splitting an atom between its neighbours in proportion to its distance keeps its position
    # on average: the projected mean is the mean of clip(r + gamma z), whatever lands on an edge.
    probs = distributions(1, support.numel(), seed)
    m = project_distribution(probs, torch.tensor([reward]), torch.tensor([discount]), support)
    z = support.double()
    shifted = (reward + discount * z).clamp(float(support[0]), float(support[-1]))
    dz = float(support[1] - support[0])
    scale = float(support.abs().max())
    assert float((m[0].double() * z).sum()) == pytest.approx(float((probs[0].double() * shifted).sum()),
                                                              abs=1e-5 * scale + 1e-3 * dz)


def test_an_atom_clipped_to_v_max_by_a_large_reward_lands_on_the_last_atom():
    # The example: in float32 the index of v_max comes out as 50.000004, whose ceil is atom 51.
    support = torch.linspace(-10, 200, 51)
    probs = distributions(2, 51, 0)
    m = project_distribution(probs, torch.tensor([1000.0, -1000.0]), torch.tensor([0.9, 0.9]), support)
    expected = torch.zeros(2, 51)
    expected[0, -1] = expected[1, 0] = 1.0
    torch.testing.assert_close(m, expected)


def test_a_shifted_atom_splits_between_its_neighbours_by_hand():
    # dz = 210 / 50 = 4.2; atom 5 is z = 11: Tz = 1 + 0.5 * 11 = 6.5 at index 16.5 / 4.2 = 3.9286:
    # 0.0714 to atom 3, 0.9286 to atom 4.
    support = torch.linspace(-10, 200, 51)
    probs = torch.zeros(1, 51)
    probs[0, 5] = 1.0
    m = project_distribution(probs, torch.tensor([1.0]), torch.tensor([0.5]), support)
    expected = torch.zeros(1, 51)
    expected[0, 3], expected[0, 4] = 1 - 16.5 / 4.2 + 3, 16.5 / 4.2 - 3
    torch.testing.assert_close(m, expected)


# --- the replay's capacity ----------------------------------------------------------------


def steps_window(T: int, lanes: int, start: int) -> dict[str, np.ndarray]:
    """Rows ``start .. start + T - 1`` of every lane: ``s`` = 1000 * lane + step, no episode end."""
    steps = np.arange(start, start + T)[:, None] + 1000 * np.arange(lanes)[None]
    return {"s": steps[..., None].astype(np.float32), "a": np.zeros((T, lanes), np.int64),
            "r": np.ones((T, lanes), np.float32), "terminal": np.zeros((T, lanes), bool)}


@BOUNDED
@given(st.integers(1, 400), st.integers(1, 24), st.integers(2, 9), st.integers(1, 60), st.booleans())
def test_the_replay_never_holds_more_than_its_capacity_and_samples_only_what_it_holds(capacity, lanes, T, windows,
                                                                                      prioritized):
    if capacity < lanes:
        with pytest.raises(ValueError, match=f"replay capacity {capacity} .* below its {lanes} lanes"):
            Replay(num_lanes=lanes, obs_keys=["s"], replay_capacity=capacity)
        return
    replay = Replay(num_lanes=lanes, obs_keys=["s"], replay_capacity=capacity, prioritized=prioritized, seed=0)
    for k in range(windows):
        replay.add(steps_window(T, lanes, k * (T - 1)), np.arange(lanes))
        assert replay.store.stored <= capacity
    written = windows * (T - 1) + 1  # rows per lane: consecutive windows share a row
    kept = min(written, capacity // lanes)
    assert replay.store.stored == lanes * kept > capacity - lanes or written < capacity // lanes
    assert replay.store.data["s"].shape[:2] == (capacity // lanes, lanes)
    assert len(replay) == lanes * max(kept - 1, 0)  # each kept row but the last has its next one
    if not len(replay):
        return
    batch = replay.sample(64)
    s, nxt = batch["s"][:, 0].long(), batch["next_s"][:, 0].long()
    lane, step = s // 1000, s % 1000
    assert ((step >= written - kept) & (step < written - 1)).all()  # among the rows still held
    assert (nxt == s + 1).all()  # and followed by the step after them
    assert set(lane.tolist()) <= set(range(lanes))
