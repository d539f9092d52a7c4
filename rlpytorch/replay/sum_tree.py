"""``SumTree``: priorities with O(log N) update and proportional sampling.

A complete binary tree over ``P = 2^ceil(log2 N)`` leaves, stored as one
array (node ``i`` has children ``2i`` and ``2i + 1``, the root is node 1, the
leaves are ``P .. 2P - 1``). Every inner node holds the sum of its children,
so the root holds the total. Both operations take a whole batch of indices and
touch ``log2 P`` levels with one vectorised numpy step per level.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SumTree"]


class SumTree:
    """``update(i, p)`` sets leaf priorities; ``find(u)`` returns, for each ``u`` in
    ``[0, total)``, the leaf ``i`` with ``sum_{j<i} p_j <= u < sum_{j<=i} p_j``
    (so uniform ``u`` draws leaf ``i`` with probability ``p_i / total``)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a sum tree needs at least one leaf, got {size}")
        self.size = size
        self.leaves = 1 << max(0, (size - 1).bit_length())
        self.depth = self.leaves.bit_length() - 1
        self.nodes = np.zeros(2 * self.leaves, np.float64)

    @property
    def total(self) -> float:
        return float(self.nodes[1])

    def get(self, index: np.ndarray) -> np.ndarray:
        """The priorities of leaves ``index``."""
        return self.nodes[self.leaves + np.asarray(index)]

    def update(self, index: np.ndarray, priority: np.ndarray) -> None:
        """Set leaves ``index`` to ``priority`` (>= 0) and re-sum their ancestors."""
        index = np.asarray(index, np.int64).ravel()
        if index.size == 0:
            return
        priority = np.broadcast_to(np.asarray(priority, np.float64), index.shape)
        if (priority < 0).any() or not np.isfinite(priority).all():
            raise ValueError("priorities must be finite and >= 0")
        node = self.leaves + index
        self.nodes[node] = priority
        for _ in range(self.depth):  # a parent listed twice gets the same sum twice: no need to deduplicate
            node >>= 1
            self.nodes[node] = self.nodes[2 * node] + self.nodes[2 * node + 1]

    def find(self, u: np.ndarray) -> np.ndarray:
        """Leaf index for each prefix-sum value ``u`` (clipped into ``[0, total)``)."""
        u = np.minimum(np.asarray(u, np.float64).copy(), np.nextafter(self.total, 0.0))
        node = np.ones(u.shape, np.int64)
        for _ in range(self.depth):
            left = self.nodes[2 * node]
            right = u >= left
            u -= left * right
            node = 2 * node + right
        # Rounding can land on an empty leaf at the right edge: step back to the last non-empty one.
        index = node - self.leaves
        empty = self.nodes[node] <= 0
        if empty.any():
            nonzero = np.flatnonzero(self.nodes[self.leaves : self.leaves + self.size] > 0)
            before = np.searchsorted(nonzero, index[empty], side="right") - 1
            index[empty] = nonzero[np.maximum(before, 0)]
        return index
