"""``Replay``: a train tag's windows in, transitions ``[B]`` or sequences ``[L, B]`` out.

Composed of a ``LaneStore`` (each step stored once; frame-based storage for
stacked frames), a sampler (``UniformSampler`` or ``PrioritizedSampler``) and
the n-step targets of ``nstep.py``. Transitions come with their n-step reward
sum ``r`` (the key of a step's reward in windows too) and bootstrap observation, so a learner computes
``y = r + discount * Q(next_obs)``; sequences come as consecutive rows
with the stored recurrent state ``h`` of their first row (for burn-in).

When the games restart (``games_restarted``: a resume, or a save with
``--restart_games_at_save``), no transition joins a lane's last row to the new
game's first: n-step sums stop at the last row before the break and bootstrap
from its state (a time limit, not an end), that row itself is never sampled,
and sequences never cross the break (``LaneStore``'s segments).

Joint transitions (``joint_seats = S``, MADDPG): a lane is a game, and each row
holds every seat's step (``SeatWindows``' windows, keys ``[T, B, S, ...]``).
A sample is one step of a game for all its seats: observations and actions
``[B, S, ...]``, one-step ``r`` and ``discount`` per seat ``[B, S]``, each
seat's next observation (its ``final_<key>`` where its episode was truncated),
and ``live`` ``[B, S]``: false for a seat that left the game's episode before
the row (terminal while the game's other seats are not), whose row is empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..core.args_provider import Bounds, Configurable, above, at_least, setting
from ..core.devices import device_name
from .lanes import FINAL, LaneStore
from .nstep import nstep_targets
from .prioritized import PrioritizedSampler
from .uniform import UniformSampler

__all__ = ["Replay"]

ENGINE_KEYS = ("a", "r", "terminal", "truncated")


@dataclass(eq=False)
class Replay(Configurable):
    """Replay memory of ``replay_capacity`` steps over ``num_lanes`` game seats.

    ``sequence_length = 0``: ``sample`` draws transitions; ``> 0``: ``sample``
    draws sequences of that many rows (burn-in included). ``gamma`` is the
    method's discount (the n-step sums use it).
    """

    num_lanes: int
    obs_keys: Sequence[str]
    replay_capacity: int = setting(100_000, "steps kept in replay, all games together (oldest dropped first)",
                                   bounds=at_least(1))
    prioritized: bool = setting(False, "prioritized replay (sum tree) instead of uniform")
    priority_alpha: float = setting(0.6, "prioritized replay: P(i) ~ p_i^alpha", bounds=at_least(0))
    priority_beta: float = setting(0.4, "prioritized replay: importance-weight exponent at the start, annealed to 1",
                                   bounds=Bounds(0, 1))
    priority_eps: float = setting(1e-6, "prioritized replay: p = |td error| + eps", bounds=above(0))
    n_step: int = setting(1, "steps summed before bootstrapping (n-step returns)", bounds=at_least(1))
    frame_stack: int = setting(0, "observations [k, H, W] of k stacked frames stored one frame per step (0: off)",
                               bounds=at_least(0))
    replay_device: str = setting("", "where the stored frames live and stacks are rebuilt (--frame_stack): "
                                 "host memory (empty) or a torch device, e.g. cuda: sampled frames never cross the bus",
                                 check=device_name)
    gamma: float = 0.99
    sequence_length: int = 0
    joint_seats: int = 0  # S > 0: one lane per game, rows [S, ...] of every seat (joint transitions)
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.n_step < 1:
            raise ValueError(f"n_step must be >= 1, got {self.n_step}")
        if self.joint_seats and (self.n_step != 1 or self.sequence_length or self.frame_stack):
            raise ValueError(f"joint transitions of {self.joint_seats} seats are one-step transitions of vector "
                             f"observations: n_step 1, no sequences, no frame_stack; got n_step {self.n_step}, "
                             f"sequence_length {self.sequence_length}, frame_stack {self.frame_stack}")
        self.obs_keys = tuple(self.obs_keys)
        self.store = LaneStore(self.replay_capacity, self.num_lanes, self.frame_stack, device=self.replay_device)
        horizon = self.sequence_length - 1 if self.sequence_length else self.n_step
        span = horizon if self.sequence_length else 1  # rows a sample needs before a break: sequences never cross
        self.sampler: UniformSampler | PrioritizedSampler
        if self.prioritized:
            self.sampler = PrioritizedSampler(self.store, horizon, span, self.priority_alpha, self.priority_beta,
                                              self.priority_eps, self.seed)
        else:
            self.sampler = UniformSampler(horizon, span, self.seed)
        self.lost_finals = 0

    def add(self, window: Mapping[str, Any], lanes: np.ndarray) -> None:
        """Store a ``[T, B]`` window (numpy arrays or tensors) of game seats ``lanes``."""
        arrays = {k: _numpy(window[k]) for k in window.keys()}
        missing = [k for k in (*self.obs_keys, *ENGINE_KEYS[:3]) if k not in arrays]
        if missing:
            raise ValueError(f"replay needs keys {missing} in the train windows; they have {sorted(arrays)}")
        if "truncated" in arrays and arrays["truncated"][1:].any():
            absent = [FINAL + k for k in self.obs_keys if FINAL + k not in arrays]
            if absent:
                raise ValueError(f"a time-limit truncation needs {absent} in the train windows to bootstrap from")
        for lanes_written, first, rows in self.store.add(arrays, lanes):
            self.sampler.on_write(self.store, lanes_written, first, rows)

    def games_restarted(self) -> None:
        """The games started afresh: every lane's next window comes from a new game, a break
        that no transition or sequence crosses (a second call before the next window changes nothing)."""
        lanes = self.store.restart()
        self.sampler.on_write(self.store, lanes, self.store.count[lanes], 0)

    def __len__(self) -> int:
        """Rows that can be sampled now."""
        return self.sampler.size(self.store)

    def anneal(self, progress: float) -> None:
        """Move prioritized replay's ``beta`` to ``progress`` (0 -> 1) of its schedule."""
        if isinstance(self.sampler, PrioritizedSampler):
            self.sampler.anneal(progress)

    def update_priorities(self, index: Tensor | np.ndarray, priority: Tensor | np.ndarray) -> None:
        """After a learning step: the new priorities (``|TD error|``) of the sampled ``index``."""
        self.sampler.update(_numpy(index), _numpy(priority))

    def sample(self, batch_size: int) -> dict[str, Tensor]:
        """Transitions ``[B]`` (``sequence_length = 0``) or sequences ``[L, B]``."""
        absolute, lanes, weight, index = self.sampler.sample(self.store, batch_size)
        if self.joint_seats:
            out = self._joint_transitions(absolute, lanes)
        elif self.sequence_length:
            out = self._sequences(absolute, lanes)
        else:
            out = self._transitions(absolute, lanes)
        keep = out.pop("_keep", None)  # a truncation whose final frame was recycled cannot bootstrap
        out["weight"] = torch.from_numpy(weight if keep is None else weight * keep.numpy())
        out["index"] = torch.from_numpy(index)
        return out

    def _transitions(self, absolute: np.ndarray, lanes: np.ndarray) -> dict[str, Tensor]:
        store = self.store
        rows = absolute[None] + np.arange(self.n_step + 1)[:, None]  # [n + 1, B]: t .. t + n
        flags = {k: torch.from_numpy(store.get(k, rows, lanes)) for k in ("r", "terminal", "truncated")
                 if k in store.data}
        cut = torch.from_numpy(store.is_break(rows, lanes))
        targets = nstep_targets(flags["r"], flags["terminal"], flags.get("truncated"), self.gamma, self.n_step, cut)
        boot = absolute + targets.boot[0].numpy()
        final = targets.final[0].numpy()
        out = {k: _tensor(store.get(k, absolute, lanes)) for k in self.obs_keys}
        out["a"] = torch.from_numpy(store.get("a", absolute, lanes))
        out["r"], out["discount"] = targets.r[0], targets.discount[0]
        weight_mask = np.ones(len(absolute), bool)
        for key in self.obs_keys:
            nxt = _tensor(store.get(key, boot, lanes))
            if final.any():
                ended = np.flatnonzero(final)
                value = self._final(key, boot[ended], lanes[ended])
                nxt[torch.from_numpy(ended).to(nxt.device)] = _tensor(value[0])
                weight_mask[ended[value[1]]] = False
            out["next_" + key] = nxt
        out["_keep"] = torch.from_numpy(weight_mask)
        return out

    def _joint_transitions(self, absolute: np.ndarray, lanes: np.ndarray) -> dict[str, Tensor]:
        store = self.store
        rows = absolute[None] + np.arange(2)[:, None]  # [2, B]: t, t + 1
        flags = {k: torch.from_numpy(store.get(k, rows, lanes)) for k in ("r", "terminal", "truncated")
                 if k in store.data}  # [2, B, S]
        targets = nstep_targets(flags["r"], flags["terminal"], flags.get("truncated"), self.gamma, 1)
        out = {k: torch.from_numpy(store.get(k, absolute, lanes)) for k in (*self.obs_keys, "a")}
        out["r"], out["discount"] = targets.r[0], targets.discount[0]
        now = flags["terminal"][0].bool()
        out["live"] = ~(now & ~now.all(-1, keepdim=True))
        b, seat = np.nonzero(targets.final[0].numpy())
        for key in self.obs_keys:
            nxt = store.get(key, absolute + 1, lanes)
            if b.size:  # a seat whose episode was truncated bootstraps from its final observation
                nxt[b, seat] = store.get(FINAL + key, absolute[b] + 1, lanes[b])[np.arange(b.size), seat]
            out["next_" + key] = torch.from_numpy(nxt)
        return out

    def _final(self, key: str, absolute: np.ndarray, lanes: np.ndarray) -> tuple[np.ndarray | Tensor, np.ndarray]:
        """The state episodes ended in at truncated rows, and which of them were lost."""
        if key in self.store.final_frames:
            stack, lost = self.store.final_stack(key, absolute, lanes)
            self.lost_finals += int(lost.sum())
            return stack, lost
        return self.store.get(FINAL + key, absolute, lanes), np.zeros(len(absolute), bool)

    def _sequences(self, absolute: np.ndarray, lanes: np.ndarray) -> dict[str, Tensor]:
        rows = absolute[None] + np.arange(self.sequence_length)[:, None]  # [L, B]
        keys = [k for k in self.store.data if not k.startswith(FINAL)]
        out = {k: _tensor(self.store.get(k, rows, lanes)) for k in keys}
        for key in self.obs_keys:
            if FINAL + key in self.store.data or key in self.store.final_frames:
                out[FINAL + key] = _tensor(self._final(key, rows, lanes)[0])
        return out

    def state_dict(self) -> dict[str, Any]:
        """What continues the replay exactly (``rlpytorch.run.resume``): the stored rows,
        lanes' positions and breaks, the sampler's priorities and generator, the lost finals counted.
        The n-step sums and sequences are read from the stored rows when sampled: no
        state of their own. Tensors, not copies: write the state out before the next ``add``."""
        return {"store": self.store.state_dict(), "sampler": self.sampler.state_dict(),
                "lost_finals": self.lost_finals}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned, into a replay of the same settings."""
        self.store.load_state_dict(state["store"])
        self.sampler.load_state_dict(state["sampler"])
        self.lost_finals = int(state["lost_finals"])

    def stats(self) -> dict[str, float]:
        """Size and memory of the replay (for the stats line)."""
        stats = {
            "replay_rows": float(self.store.stored),
            "replay_sampleable": float(len(self)),
            "replay_mb": self.store.nbytes / 2**20,
            "replay_lost_finals": float(self.lost_finals),
        }
        if isinstance(self.sampler, PrioritizedSampler):
            stats["replay_beta"] = self.sampler.beta
        return stats


def _tensor(value: np.ndarray | Tensor) -> Tensor:
    """A sampled array as a tensor (frames stored on a device are tensors already)."""
    return value if isinstance(value, Tensor) else torch.from_numpy(value)


def _numpy(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)
