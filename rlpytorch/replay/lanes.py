"""``LaneStore``: every game's history as a ring of rows, one ring (lane) per game seat.

A train tag's ``[T, B]`` windows arrive game by game; consecutive windows of
a game share one row (the last row of one is the first of the next), so a
lane's first window (and its first after a restart: Breaks, below) is stored
whole and every later one without its first row: each step is stored once, in order, and a lane's rows are consecutive
steps. Rows are addressed by their absolute number in the lane (``0, 1, ...``);
the ring keeps the last ``rows = capacity // lanes`` of them, so the store holds
at most ``capacity`` steps in all (and more than ``capacity - lanes``: every ring
has the same length, so one modulus maps rows to ring positions and to the
prioritized sampler's leaves); ``capacity`` must be at least the lanes. Keys
keep the dtype they arrive in (images stay uint8).

Frame-based storage (``frame_stack = k > 1``): an observation of shape
``[k, H, W]`` (the last ``k`` frames, oldest first) is stored as its newest
frame only, and the stack of row ``t`` is rebuilt at sample time from the
frames of rows ``t-k+1 .. t``. At an episode start (a ``terminal`` row, whose
state is the next episode's first, or a lane's first row) the older frames
are the first frame repeated, as Gymnasium's ``FrameStackObservation`` pads.
The state an episode ended in (``final_<key>`` on a truncated row) is the
previous ``k - 1`` frames plus one new frame, kept in a small ring of its own
(``final_slots`` frames; a truncation whose frame has been recycled is
reported ``lost``).

Breaks (``restart``): when the games restart (a fresh context, at a resume or
with ``--restart_games_at_save``), a lane's next window comes from a new game,
so it is stored whole and its first row starts a new *segment*: no step leads
into it from the row before. The break is kept as the key
``lane * LANE_STRIDE + row`` of that first row in ``breaks`` (sorted), until
the row before it leaves the ring. A lane's sampleable rows are then one
interval per segment (``segments``): a row needs ``span`` rows after it in its
own segment where a break closed it (1 for n-step transitions, whose sums stop
at the break and bootstrap from its last row; a sequence's length for
sequences, which never cross it), and ``horizon`` rows after it in the open
last segment (rows still to come complete them). The first row of a segment
is an episode start for frame stacks.

With ``device`` set, the frames (and the final frames) are torch tensors on
that device, so a sampled stack is rebuilt there and never crosses the bus:
on a GPU the replay's largest arrays and the learner's batches both live in
its memory. Everything else (flags, actions, rewards, the bookkeeping)
stays in numpy arrays in host memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

__all__ = ["LaneStore"]

FINAL = "final_"
LANE_STRIDE = 1 << 40  # a break's key is lane * LANE_STRIDE + row: sorted keys run lane by lane, then row by row


class LaneStore:
    """Rows ``[rows, num_lanes, ...]`` per key; ``count[lane]`` rows ever written to each lane."""

    def __init__(self, capacity: int, num_lanes: int, frame_stack: int = 0, final_slots: int = 0,
                 device: str = "") -> None:
        if num_lanes < 1:
            raise ValueError(f"a replay needs at least one lane, got {num_lanes}")
        if capacity < num_lanes:
            raise ValueError(f"replay capacity {capacity} (--replay_capacity) is below its {num_lanes} lanes "
                             f"(one per game seat): each lane needs a row")
        if device and frame_stack <= 1:
            raise ValueError(f"a replay device ({device!r}) holds stacked frames: it needs frame_stack > 1, "
                             f"got {frame_stack}")
        self.device = torch.device(device) if device else None
        self.num_lanes = num_lanes
        self.rows = capacity // num_lanes
        self.frame_stack = frame_stack if frame_stack > 1 else 0
        self.count = np.zeros(num_lanes, np.int64)
        self.data: dict[str, np.ndarray | torch.Tensor] = {}
        self.frame_keys: tuple[str, ...] = ()
        self.start = np.zeros((self.rows, num_lanes), bool)
        self.final_slots = final_slots or 2 * num_lanes + self.rows * num_lanes // 16
        self.final_frames: dict[str, np.ndarray | torch.Tensor] = {}
        self.final_slot = np.full((0, 0), -1, np.int64)
        self.slot_owner = np.full(0, -1, np.int64)
        self.next_slot = 0
        self.breaks = np.zeros(0, np.int64)  # sorted keys of the rows that start a segment (after a restart)

    # --- writing -------------------------------------------------------------

    def add(self, window: Mapping[str, np.ndarray], lanes: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """Store a ``[T, B]`` window of lanes ``lanes`` ``[B]``; returns the writes made,
        each ``(lanes, first absolute row, rows written)``."""
        window = {k: np.asarray(v) for k, v in window.items()}
        lanes = np.asarray(lanes, np.int64)
        self._check(window, lanes)
        if not self.data:
            self._allocate(window)
        writes = []
        fresh = (self.count[lanes] == 0) | self.is_break(self.count[lanes], lanes)  # stored whole
        if fresh.any():
            writes.append(self._write({k: v[:1, fresh] for k, v in window.items()}, lanes[fresh]))
        writes.append(self._write({k: v[1:] for k, v in window.items()}, lanes))
        self._forget_old_breaks()
        return [w for w in writes if w[2] > 0]

    def restart(self) -> np.ndarray:
        """The games restarted: every lane holding rows starts a new segment at its next
        row (a second call before that row is written changes nothing). Returns those lanes."""
        lanes = np.flatnonzero(self.count > 0)
        self.breaks = np.union1d(self.breaks, lanes * LANE_STRIDE + self.count[lanes])
        return lanes

    def is_break(self, absolute: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        """Whether rows ``absolute`` of ``lanes`` (broadcast together) start a segment."""
        return np.isin(lanes * LANE_STRIDE + absolute, self.breaks)

    def _forget_old_breaks(self) -> None:
        """Drop the breaks whose previous row has left the ring: nothing can cross them."""
        lanes, rows = np.divmod(self.breaks, LANE_STRIDE)
        self.breaks = self.breaks[rows > self.oldest[lanes]]

    def _check(self, window: Mapping[str, np.ndarray], lanes: np.ndarray) -> None:
        if "terminal" not in window:
            raise ValueError(f"replay needs the key 'terminal' in its windows; got {sorted(window)}")
        T, B = window["terminal"].shape[:2]
        if T < 2:
            raise ValueError(f"replay needs windows of T >= 2 rows (the train tag's T), got T = {T}")
        if lanes.shape != (B,) or len(np.unique(lanes)) != B:
            raise ValueError(f"lanes must be {B} distinct ids, one per window column; got {lanes}")
        if lanes.min() < 0 or lanes.max() >= self.num_lanes:
            raise ValueError(f"lane ids must lie in [0, {self.num_lanes}); got {lanes.min()}..{lanes.max()}")
        if self.data:
            expected = set(self.data) | {FINAL + k for k in self.final_frames}
            if set(window) != expected:
                raise ValueError(f"window keys {sorted(window)} differ from the first window's {sorted(expected)}")

    def _is_frames(self, key: str, value: np.ndarray) -> bool:
        return bool(self.frame_stack) and value.ndim == 5 and value.shape[2] == self.frame_stack

    def _allocate(self, window: Mapping[str, np.ndarray]) -> None:
        R, L = self.rows, self.num_lanes
        frames = [k for k, v in window.items() if not k.startswith(FINAL) and self._is_frames(k, v)]
        self.frame_keys = tuple(frames)
        for key, value in window.items():
            if key.startswith(FINAL) and key[len(FINAL) :] in frames:
                self.final_frames[key[len(FINAL) :]] = self._zeros((self.final_slots, *value.shape[3:]), value.dtype)
                continue
            if key in frames:
                self.data[key] = self._zeros((R, L, *value.shape[3:]), value.dtype)
            else:
                self.data[key] = np.zeros((R, L, *value.shape[2:]), value.dtype)
        if self.final_frames:
            self.final_slot = np.full((R, L), -1, np.int64)
            self.slot_owner = np.full(self.final_slots, -1, np.int64)

    def _zeros(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | torch.Tensor:
        """Frame storage: in host memory, or on ``device``."""
        if self.device is None:
            return np.zeros(shape, dtype)
        return torch.zeros(shape, dtype=torch.from_numpy(np.zeros(0, dtype)).dtype, device=self.device)

    def _write(self, rows: Mapping[str, np.ndarray], lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        m = rows["terminal"].shape[0]
        first = self.count[lanes].copy()
        if m == 0:
            return lanes, first, 0
        absolute = first[None] + np.arange(m)[:, None]
        pos, lane = absolute % self.rows, np.broadcast_to(lanes, absolute.shape)
        for key, store in self.data.items():
            value = rows[key]
            _put(store, (pos, lane), value[:, :, -1] if key in self.frame_keys else value)
        # A row starts an episode where every seat on it is terminal (joint rows [.., S]: the game reset),
        # and where a lane's history starts or restarts (a new game's first row).
        self.start[pos, lane] = (rows["terminal"].reshape(*pos.shape, -1).all(-1) | (absolute == 0)
                                 | self.is_break(absolute, lane))
        if self.final_frames:
            self._write_finals(rows, absolute, pos, lane)
        self.count[lanes] += m
        return lanes, first, m

    def _write_finals(self, rows: Mapping[str, np.ndarray], absolute: np.ndarray, pos: np.ndarray,
                      lane: np.ndarray) -> None:
        self.final_slot[pos, lane] = -1
        if "truncated" not in rows:
            return
        t, b = np.nonzero(rows["terminal"] & rows["truncated"])
        if t.size == 0:
            return
        slots = (self.next_slot + np.arange(t.size)) % self.final_slots
        self.next_slot = int(slots[-1] + 1) % self.final_slots
        for key, ring in self.final_frames.items():
            _put(ring, (slots,), rows[FINAL + key][t, b, -1])
        self.slot_owner[slots] = absolute[t, b] * self.num_lanes + lane[t, b]
        self.final_slot[pos[t, b], lane[t, b]] = slots

    # --- saving --------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything stored, as tensors (``torch.load(weights_only=True)`` reads them):
        the ring rows written so far (``[filled, lanes, ...]``, rows never written left out),
        the lanes' counts, the episode starts, the breaks and the final-frame ring. Host arrays are
        shared, not copied: write the state out before the store takes another window."""
        filled = int(min(self.rows, self.count.max()))
        return {
            "rows": self.rows, "num_lanes": self.num_lanes, "count": torch.from_numpy(self.count),
            "data": {key: _saved(value[:filled]) for key, value in self.data.items()},
            "frame_keys": list(self.frame_keys), "start": torch.from_numpy(self.start[:filled]),
            "final_frames": {key: _saved(ring) for key, ring in self.final_frames.items()},
            "final_slot": torch.from_numpy(self.final_slot[:filled]), "slot_owner": torch.from_numpy(self.slot_owner),
            "next_slot": self.next_slot, "breaks": torch.from_numpy(self.breaks),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned, into a store of the same rows and lanes."""
        if (state["rows"], state["num_lanes"]) != (self.rows, self.num_lanes):
            raise ValueError(f"the saved replay holds {state['rows']} rows of {state['num_lanes']} lanes, this one "
                             f"{self.rows} of {self.num_lanes}: resume with the run's --replay_capacity and games")
        self.count = state["count"].numpy().copy()
        self.frame_keys = tuple(state["frame_keys"])
        self.data = {key: self._restored(key in self.frame_keys, value, self.rows)
                     for key, value in state["data"].items()}
        self.start = _padded(state["start"].numpy(), self.rows)
        self.final_frames = {key: self._restored(True, ring, len(ring)) for key, ring in state["final_frames"].items()}
        self.final_slot = _padded(state["final_slot"].numpy(), self.rows if self.final_frames else 0, fill=-1)
        self.slot_owner = state["slot_owner"].numpy().copy()
        self.next_slot = int(state["next_slot"])
        self.breaks = state["breaks"].numpy().copy()

    def _restored(self, frames: bool, saved: torch.Tensor, rows: int) -> np.ndarray | torch.Tensor:
        """A saved array at its full ``rows``: frames on ``device`` (if set), the rest in host memory."""
        if frames and self.device is not None:
            full = torch.zeros((rows, *saved.shape[1:]), dtype=saved.dtype, device=self.device)
            full[: len(saved)] = saved.to(self.device)
            return full
        return _padded(saved.numpy(), rows)

    # --- reading -------------------------------------------------------------

    @property
    def oldest(self) -> np.ndarray:
        """Absolute number of each lane's oldest stored row."""
        return np.maximum(0, self.count - self.rows)

    @property
    def lowest(self) -> np.ndarray:
        """Per lane, the lowest row that can be sampled: the oldest whose frame stack
        (its ``k - 1`` rows before) is still stored."""
        pad = np.where(self.count > self.rows, max(self.frame_stack - 1, 0), 0)
        return self.oldest + pad

    def segments(self, horizon: int, span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The sampleable rows as intervals ``(lanes, lo, hi)``, absolute rows ``[lo, hi)``,
        ordered by lane then row: rows no lower than ``lowest`` with ``span`` rows after
        them in a segment a break closed, ``horizon`` in a lane's last segment. One
        interval per lane (in lane order) where no break is stored."""
        lowest = self.lowest
        break_lanes, break_rows = np.divmod(self.breaks, LANE_STRIDE)
        lanes = np.concatenate([np.arange(self.num_lanes), break_lanes])
        starts = np.concatenate([lowest, break_rows])
        is_break = np.arange(len(lanes)) >= self.num_lanes
        order = np.lexsort((starts, is_break, lanes))  # per lane: its lowest row, then its breaks in order
        lanes, starts = lanes[order], starts[order]
        ends = self.count[lanes] - horizon
        closed = np.flatnonzero(lanes[1:] == lanes[:-1])  # intervals followed by a break of their lane
        ends[closed] = starts[closed + 1] - span
        lo = np.maximum(starts, lowest[lanes])
        return lanes, lo, np.maximum(lo, ends)

    def sampleable(self, absolute: np.ndarray, lanes: np.ndarray, horizon: int, span: int) -> np.ndarray:
        """Whether rows ``absolute`` of ``lanes`` (same shape) lie in ``segments(horizon, span)``."""
        keys = lanes * LANE_STRIDE + absolute
        after = np.searchsorted(self.breaks, keys, side="right")  # the first break above each row
        next_break = self.breaks[np.minimum(after, len(self.breaks) - 1)] if len(self.breaks) else keys
        closed = (after < len(self.breaks)) & (next_break // LANE_STRIDE == lanes)
        end = np.where(closed, next_break % LANE_STRIDE - span, self.count[lanes] - horizon)
        return (absolute >= self.lowest[lanes]) & (absolute < end)

    def absolute(self, pos: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        """The absolute row now stored at ring position ``pos`` of ``lanes``."""
        last = self.count[lanes] - 1
        return last - (last - pos) % self.rows

    def get(self, key: str, absolute: np.ndarray, lanes: np.ndarray) -> np.ndarray | torch.Tensor:
        """Key ``key`` at rows ``absolute`` of ``lanes`` (broadcast together); frame keys rebuilt."""
        if key in self.frame_keys:
            return self._stack(key, absolute, lanes)
        if key.startswith(FINAL) and key[len(FINAL) :] in self.final_frames:
            return self.final_stack(key[len(FINAL) :], absolute, lanes)[0]
        return self.data[key][absolute % self.rows, lanes]

    def _stack(self, key: str, absolute: np.ndarray, lanes: np.ndarray) -> np.ndarray | torch.Tensor:
        """Frames ``t-k+1 .. t``, each source row clamped to the episode's first row."""
        k = self.frame_stack
        back = np.arange(k - 1)  # rows t, t-1, ..., t-k+2 may start the episode
        rows = absolute[..., None] - back
        starts = self.start[rows % self.rows, lanes[..., None]] & (rows >= 0)
        last_start = np.where(starts, rows, -1).max(-1)
        source = np.maximum(absolute[..., None] - (k - 1) + np.arange(k), last_start[..., None])
        return _take(self.data[key], source % self.rows, lanes[..., None])

    def final_stack(self, key: str, absolute: np.ndarray,
                    lanes: np.ndarray) -> tuple[np.ndarray | torch.Tensor, np.ndarray]:
        """The stack an episode ended in at truncated rows ``absolute`` (zeros elsewhere)
        and ``lost``: truncations whose final frame has been recycled."""
        slot = self.final_slot[absolute % self.rows, lanes]
        owner = np.where(slot >= 0, self.slot_owner[slot.clip(min=0)], -2)
        kept = owner == absolute * self.num_lanes + lanes
        before = self._stack(key, absolute - 1, lanes)[..., 1:, :, :]
        frame = _take(self.final_frames[key], slot.clip(min=0))[..., None, :, :]
        if self.device is None:
            stack = np.concatenate([before, frame], axis=-3)
            stack[~kept] = 0
        else:
            stack = torch.cat([before, frame], dim=-3)
            stack[torch.from_numpy(~kept).to(self.device)] = 0
        return stack, (slot >= 0) & ~kept

    @property
    def nbytes(self) -> int:
        """Bytes held by the stored rows (all keys, flags and final frames)."""
        arrays = [*self.data.values(), self.start, self.count, *self.final_frames.values(),
                  self.final_slot, self.slot_owner, self.breaks]
        return int(sum(a.nbytes if isinstance(a, np.ndarray) else a.numel() * a.element_size() for a in arrays))

    @property
    def stored(self) -> int:
        """Steps held now (all lanes)."""
        return int(np.minimum(self.count, self.rows).sum())


def _saved(array: np.ndarray | torch.Tensor) -> torch.Tensor:
    """A stored array as a host tensor (a host array's view; a device array's copy)."""
    return torch.from_numpy(array) if isinstance(array, np.ndarray) else array.cpu()


def _padded(saved: np.ndarray, rows: int, fill: int = 0) -> np.ndarray:
    """A writable array of ``rows`` rows beginning with ``saved``'s, the rest ``fill``."""
    full = np.full((rows, *saved.shape[1:]), fill, saved.dtype)
    full[: len(saved)] = saved
    return full


def _take(array: np.ndarray | torch.Tensor, *index: np.ndarray) -> np.ndarray | torch.Tensor:
    """``array[index]`` (numpy index arrays, broadcast together), on the array's device."""
    if isinstance(array, np.ndarray):
        return array[index]
    return array[tuple(torch.tensor(i, device=array.device) for i in index)]


def _put(array: np.ndarray | torch.Tensor, index: tuple[np.ndarray, ...], value: np.ndarray) -> None:
    """``array[index] = value`` (numpy index arrays and value), on the array's device."""
    if isinstance(array, np.ndarray):
        array[index] = value
        return
    array[tuple(torch.tensor(i, device=array.device) for i in index)] = torch.tensor(value, device=array.device)
