"""``UniformSampler``: every sampleable row equally likely."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .lanes import LaneStore

__all__ = ["UniformSampler", "no_sample_error"]


def no_sample_error(store: LaneStore, horizon: int) -> ValueError:
    return ValueError(f"replay has nothing to sample yet: {store.stored} steps stored, each lane needs more than "
                      f"{horizon} rows (fill it before sampling, e.g. with --learning_starts)")


class UniformSampler:
    """Draws rows uniformly among those with ``horizon`` rows after them (``span`` before
    a break: ``LaneStore.segments``); weights are 1."""

    def __init__(self, horizon: int, span: int, seed: int | None = None) -> None:
        self.horizon = horizon
        self.span = span
        self.rng = np.random.default_rng(seed)

    def on_write(self, store: LaneStore, lanes: np.ndarray, first: np.ndarray, rows: int) -> None:
        """Nothing to keep up to date."""

    def size(self, store: LaneStore) -> int:
        _, lo, hi = store.segments(self.horizon, self.span)
        return int((hi - lo).sum())

    def sample(self, store: LaneStore, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(absolute rows, lanes, weights, index)`` of ``n`` draws with replacement."""
        segment_lanes, lo, hi = store.segments(self.horizon, self.span)
        sizes = hi - lo
        cumulative = np.cumsum(sizes)
        if cumulative[-1] == 0:
            raise no_sample_error(store, self.horizon)
        u = self.rng.integers(cumulative[-1], size=n)
        segment = np.searchsorted(cumulative, u, side="right")
        absolute = lo[segment] + u - (cumulative[segment] - sizes[segment])
        lanes = segment_lanes[segment]
        index = (absolute % store.rows) * store.num_lanes + lanes
        return absolute, lanes, np.ones(n, np.float32), index

    def update(self, index: np.ndarray, priority: np.ndarray) -> None:
        """Uniform replay ignores priorities."""

    def state_dict(self) -> dict[str, Any]:
        """The generator's state (to resume a run)."""
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.rng.bit_generator.state = dict(state["rng"])
