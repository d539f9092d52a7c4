"""Acting: a model's batched inference on an actor batch, and what it keeps between batches.

``act`` answers one actor batch: the model's observation keys in, the replies
out (``a``, the behaviour policy ``pi`` or ``logp``, ``V``; for a recurrent
model ``h``, the state each row started from; for a model reading its previous
action and reward the ``prev_`` inputs it was fed). Between batches it keeps one
recurrent state per (game, seat) (``RecurrentStates``) and one last action
(``PreviousActions``). The trainers' actor callbacks, ``Evaluator`` and
``predict`` all act through it, so a model acts the same in training, in
evaluation and outside the engine.

A batch is any mapping of key to array (numpy views from the engine are valid
only during the callback): ``to_tensors`` moves it to the device with one copy
(none on CPU), and nothing here keeps a reference after returning. Batches for
a CUDA device go through pinned host buffers (``rlpytorch.core.transfer``).

This module sits low: it reads a model through ``ActingModel`` (what
``models.base.Model`` has), so ``Model.predict`` can act without a circle.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

import numpy as np
import torch
from torch import Tensor, nn

from ..core.distributions import action_replies, behaviour_key, policy_family, policy_of
from ..core.transfer import HostStaging
from .prev_inputs import PrevInputs
from .sampler import Sampler

__all__ = [
    "SEAT_KEY",
    "ActingModel",
    "PreviousActions",
    "RecurrentStates",
    "act",
    "observations",
    "previous_actions",
    "replied_inputs",
    "to_tensors",
]

SEAT_KEY = "seat"  # the acting input of a model that reads_seats: each row's seat


class ActingModel(Protocol):
    """What acting reads of a model (``models.base.Model`` documents each)."""

    obs_keys: tuple[str, ...]
    obs_shapes: dict[str, tuple[int, ...]]
    state_size: int
    reads_seats: bool
    prev_inputs: PrevInputs | None

    def __call__(self, obs: Mapping[str, Tensor], *recurrent: Tensor) -> dict[str, Tensor]: ...

    def parameters(self) -> Iterator[nn.Parameter]: ...


def to_tensors(
    batch: Mapping[str, Any],
    keys: Iterable[str] | None,
    device: torch.device | str,
    staging: HostStaging | None = None,
) -> dict[str, Tensor]:
    """The ``keys`` present in ``batch`` (all with None) as tensors on ``device``
    (zero-copy on CPU; through ``staging``'s pinned buffers when given)."""
    present = list(batch.keys())
    if keys is None:
        keys = present
    else:
        present_set = set(present)
        keys = [k for k in keys if k in present_set]
    if staging is not None:
        return staging.to_device(batch, keys)
    return {key: torch.as_tensor(np.asarray(batch[key])).to(device, non_blocking=True) for key in keys}


class RecurrentStates:
    """The recurrent state of every (game, seat), kept between actor calls.

    Starts at zero and grows as new game ids appear. ``get`` returns the state
    a row continues from (the model zeroes it itself on the row's ``terminal``).
    """

    def __init__(self, state_size: int, device: torch.device | str = "cpu") -> None:
        self.state_size = state_size
        self.states = torch.zeros(0, 1, state_size, device=device)

    def _index(self, batch: Any) -> tuple[Tensor, Tensor]:
        games = torch.as_tensor(np.asarray(batch.game_ids), dtype=torch.long)
        seats = getattr(batch, "seats", None)
        seats = torch.zeros_like(games) if seats is None else torch.as_tensor(np.asarray(seats), dtype=torch.long)
        n_games = max(int(games.max()) + 1, self.states.shape[0])
        n_seats = max(int(seats.max()) + 1, self.states.shape[1])
        if (n_games, n_seats) != tuple(self.states.shape[:2]):
            grown = self.states.new_zeros(n_games, n_seats, self.state_size)
            grown[: self.states.shape[0], : self.states.shape[1]] = self.states
            self.states = grown
        device = self.states.device
        return games.to(device), seats.to(device)

    def get(self, batch: Any) -> Tensor:
        """``[B, S]``: the state each row of ``batch`` continues from."""
        games, seats = self._index(batch)
        return self.states[games, seats]

    def set(self, batch: Any, state: Tensor) -> None:
        """Store ``state`` ``[B, S]`` as the state after each row of ``batch``."""
        games, seats = self._index(batch)
        self.states[games, seats] = state.to(self.states.device)


class PreviousActions:
    """The encoded action each (game, seat) took last, kept between actor calls
    (``rlpytorch.acting.prev_inputs`` says what the previous inputs are).

    ``inputs`` gives a batch's previous inputs (zero at episode starts and on a
    game's first row); ``record`` stores the actions replied for it.
    """

    def __init__(self, part: PrevInputs, device: torch.device | str = "cpu") -> None:
        self.part = part
        self.table = RecurrentStates(part.width, device)  # one per-seat table serves states and actions

    def inputs(self, batch: Any, device: torch.device | str) -> dict[str, Tensor]:
        """``prev_action`` / ``prev_reward`` of every row of ``batch``, on ``device``."""
        last = self.table.get(batch).to(device)
        r = torch.as_tensor(np.asarray(batch["r"])).to(device)
        terminal = torch.as_tensor(np.asarray(batch["terminal"])).to(device)
        return self.part.step_inputs(last, r, terminal)

    def record(self, batch: Any, a: Tensor | Mapping[str, Tensor]) -> None:
        """The actions replied for the rows of ``batch``."""
        self.table.set(batch, self.part.encode(a))


def previous_actions(model: ActingModel, device: torch.device | str) -> PreviousActions | None:
    """The per-game record of last actions a model reading its previous inputs needs."""
    part = getattr(model, "prev_inputs", None)
    return PreviousActions(part, device) if part is not None else None


def act(
    model: ActingModel,
    sampler: Sampler,
    batch: Mapping[str, Any],
    device: torch.device | str,
    states: RecurrentStates | None = None,
    staging: HostStaging | None = None,
    previous: PreviousActions | None = None,
) -> dict[str, np.ndarray]:
    """Batched inference on the model's observation keys: actions, behaviour
    policy and value; for a recurrent model (``states`` given) also ``h``, the
    state each row started from, and the games' states move one step on; with
    ``previous`` (a model reading its previous action and reward) also the
    ``prev_`` inputs fed to the model, and the games' last actions move on.
    With a ``staging`` (a CUDA device) the batch goes in and the replies come
    out through its pinned buffers; the replies are then valid until the next
    call, long enough for the engine, which copies them at once.

    The behaviour policy is replied as ``pi`` (the distribution) for one
    discrete action and as ``logp`` (the log-probability of the replied action)
    for every other space (``distributions.behaviour_key``); a Dict action is
    replied under its entries' keys (``distributions.action_replies``)."""
    obs, prev = observations(model, batch, device, previous, staging)
    family = policy_family(model)
    with torch.inference_mode():
        if states is None:
            out = model(obs)
        else:  # one step of [T = 1, B] from each game's state
            h = states.get(batch).to(device)
            reset = to_tensors(batch, ["terminal"], device, staging)["terminal"].unsqueeze(0)
            out = model({k: v.unsqueeze(0) for k, v in obs.items()}, h, reset)
            states.set(batch, out["state"])
            out = {k: v[0] for k, v in out.items() if k != "state"}
        a, mu = sampler(policy_of(family, out))
    reply = {**action_replies(a), behaviour_key(family): mu, "V": out["V"]}
    if states is not None:
        reply["h"] = h
    reply.update(replied_inputs(batch, a, prev, previous))
    if staging is not None:
        return staging.to_host(reply)
    return {key: value.cpu().numpy() for key, value in reply.items()}


def observations(
    model: ActingModel,
    batch: Mapping[str, Any],
    device: torch.device | str,
    previous: PreviousActions | None,
    staging: HostStaging | None = None,
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The model's inputs for an actor batch, and among them the previous inputs
    ``previous`` made (none without it: then they must be keys of ``batch``, as in ``predict``);
    for a model that ``reads_seats``, ``SEAT_KEY`` ``[B]``: each row's seat (``batch.seats``)."""
    obs = to_tensors(batch, model.obs_keys, device, staging)
    if model.reads_seats:
        obs[SEAT_KEY] = torch.as_tensor(np.asarray(batch.seats, np.int64), device=device)
    prev = previous.inputs(batch, device) if previous is not None else {}
    missing = [k for k in model.obs_keys if k not in obs and k not in prev]
    if missing:
        raise ValueError(f"the model reads keys {missing} that the batch lacks; it has {sorted(batch.keys())}")
    return {**obs, **prev}, prev


def replied_inputs(
    batch: Mapping[str, Any], a: Tensor, prev: Mapping[str, Tensor], previous: PreviousActions | None
) -> dict[str, Tensor]:
    """After acting: record the actions ``a`` as the games' last, and return the
    previous inputs the model was fed, to reply (the history keeps them for training)."""
    if previous is None:
        return {}
    previous.record(batch, a)
    return dict(prev)
