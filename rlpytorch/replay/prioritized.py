"""``PrioritizedSampler``: proportional prioritized replay (Schaul et al., 2016).

Row ``i`` is drawn with ``P(i) = p_i^alpha / sum_j p_j^alpha`` through a
``SumTree`` (O(log N) per update and per draw), and weighted by
``w_i = (N P(i))^-beta / max_{j in batch} (N P(j))^-beta`` to undo the bias,
``N`` the number of sampleable rows and ``beta`` annealed towards 1 by the
caller (``anneal``). New rows enter with the largest priority seen so far;
after a learning step ``update`` sets ``p_i = |delta_i| + eps``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from .lanes import LaneStore
from .sum_tree import SumTree
from .uniform import no_sample_error

__all__ = ["PrioritizedSampler"]


class PrioritizedSampler:
    """Sum-tree sampling over ring positions (leaf ``position * lanes + lane``)."""

    def __init__(self, store: LaneStore, horizon: int, span: int, alpha: float = 0.6, beta: float = 0.4,
                 eps: float = 1e-6, seed: int | None = None) -> None:
        if alpha < 0 or not 0 <= beta <= 1:
            raise ValueError(f"priority alpha must be >= 0 and beta in [0, 1]; got {alpha}, {beta}")
        self.horizon = horizon
        self.span = span
        self.alpha = alpha
        self.beta_start = beta
        self.beta = beta
        self.eps = eps
        self.max_priority = 1.0
        self.tree = SumTree(store.rows * store.num_lanes)
        self.rng = np.random.default_rng(seed)

    def anneal(self, progress: float) -> None:
        """``beta`` moves linearly from its start to 1 as ``progress`` goes 0 -> 1."""
        self.beta = self.beta_start + (1.0 - self.beta_start) * min(max(progress, 0.0), 1.0)

    def on_write(self, store: LaneStore, lanes: np.ndarray, first: np.ndarray, rows: int) -> None:
        """Rows that just became sampleable get the max priority; rows that stopped being so, 0.
        Called with ``rows = 0`` at a break (``LaneStore.restart``): rows before it may become
        sampleable (n-step sums cut short) or stop being so (sequences that would cross it)."""
        h = self.horizon
        pad = max(store.frame_stack - 1, 0)
        span = first[:, None] - h + np.arange(rows + h)  # the new rows and the h before them
        oldest = store.oldest[lanes][:, None] + np.arange(pad)  # rows whose earlier frames are gone
        absolute = np.concatenate([span, oldest], 1)
        lane = np.broadcast_to(lanes[:, None], absolute.shape)
        count = store.count[lanes][:, None]
        kept = (absolute >= 0) & (absolute >= count - store.rows)
        written = (absolute >= first[:, None])[kept]  # rows just written: their leaves held recycled rows
        absolute, lane = absolute[kept], lane[kept]
        leaf = (absolute % store.rows) * store.num_lanes + lane
        held = self.tree.get(leaf)  # rows already sampleable (a second call at a break) keep their priority
        fresh = np.where(written | (held == 0), self.max_priority**self.alpha, held)
        self.tree.update(leaf, np.where(store.sampleable(absolute, lane, h, self.span), fresh, 0.0))

    def size(self, store: LaneStore) -> int:
        _, lo, hi = store.segments(self.horizon, self.span)
        return int((hi - lo).sum())

    def sample(self, store: LaneStore, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(absolute rows, lanes, importance weights, leaf index)`` of ``n`` draws."""
        total = self.tree.total
        if total <= 0:
            raise no_sample_error(store, self.horizon)
        u = (np.arange(n) + self.rng.random(n)) * (total / n)  # one draw per equal slice of the mass
        leaf = self.tree.find(u)
        lanes = leaf % store.num_lanes
        absolute = store.absolute(leaf // store.num_lanes, lanes)
        prob = self.tree.get(leaf) / total
        weight = (self.size(store) * prob) ** -self.beta
        return absolute, lanes, (weight / weight.max()).astype(np.float32), leaf

    def state_dict(self) -> dict[str, Any]:
        """The priorities (the sum tree's leaves: its sums follow from them), the largest
        priority seen, ``beta`` and the generator's state (to resume a run)."""
        tree = self.tree
        return {"priorities": torch.from_numpy(tree.nodes[tree.leaves : tree.leaves + tree.size].copy()),
                "max_priority": self.max_priority, "beta": self.beta, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        priorities = state["priorities"].numpy()
        if len(priorities) != self.tree.size:
            raise ValueError(f"the saved replay has {len(priorities)} priorities, this one {self.tree.size} rows: "
                             "resume with the run's --replay_capacity and games")
        self.tree = SumTree(self.tree.size)
        self.tree.update(np.arange(len(priorities)), priorities)
        self.max_priority, self.beta = float(state["max_priority"]), float(state["beta"])
        self.rng.bit_generator.state = dict(state["rng"])

    def update(self, index: np.ndarray, priority: np.ndarray) -> None:
        """Set ``p = |priority| + eps`` for leaves still sampleable (others may have been recycled)."""
        index = np.asarray(index, np.int64)
        p = np.abs(np.asarray(priority, np.float64)) + self.eps
        live = self.tree.get(index) > 0
        if live.any():
            self.max_priority = max(self.max_priority, float(p[live].max()))
            self.tree.update(index[live], p[live] ** self.alpha)
