"""``predict``: a trained model acting outside the engine, Gymnasium-style.

    action, state = model.predict(obs)                    # one observation, greedy
    actions, state = model.predict(obs_batch, state)      # a batch, recurrent state in and out

It runs the very code the engine-driven actor runs (``trainer.act``) on a
batch made of the given observations, so a checkpoint acts in someone else's
loop exactly as it did in training or evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from .model_base import Model
from .sampler import Sampler
from .trainer import RecurrentStates, act

__all__ = ["predict"]


class _Rows(dict):
    """The observations as the batch ``act`` expects: one game per row, seat 0, no episode end."""

    def __init__(self, obs: Mapping[str, np.ndarray], rows: int) -> None:
        super().__init__(obs, terminal=np.zeros(rows, dtype=bool))
        self.game_ids = np.arange(rows)
        self.seats = np.zeros(rows, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.game_ids)


def predict(
    model: Model,
    obs: Mapping[str, Any] | Any,
    state: Any | None = None,
    deterministic: bool = True,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The actions of ``model`` for ``obs`` and, for a recurrent model, its state after them.

    ``obs`` is an array (the model's first observation key) or a dict of them,
    one observation or a batch (a leading dimension beyond the key's shape).
    ``state`` is what the previous call returned (None: the start of an
    episode, a zero state). ``deterministic`` acts greedily, otherwise samples
    from the policy (drawing from torch's global generator, so
    ``torch.manual_seed`` makes it repeatable). Returns ``(action, state)``,
    without the batch dimension for a single observation; ``state`` is None
    for a feed-forward model.
    """
    obs = {model.obs_keys[0]: obs} if not isinstance(obs, Mapping) else obs
    arrays = {key: np.asarray(obs[key]) for key in model.obs_keys}
    first = model.obs_keys[0]
    shape = model.obs_shapes.get(first)
    single = shape is not None and arrays[first].ndim == len(shape)
    if single:
        arrays = {key: value[None] for key, value in arrays.items()}
    rows = len(arrays[first])
    states = None
    if model.state_size:
        states = RecurrentStates(model.state_size)
        start = torch.zeros(rows, model.state_size) if state is None else torch.as_tensor(np.asarray(state))
        states.states = start.reshape(rows, 1, model.state_size).float().clone()
    if deterministic:
        sampler = Sampler("greedy")
    else:
        sampler = Sampler("multinomial", seed=int(torch.randint(2**62, ())))
    device = next(model.parameters()).device
    reply = act(model, sampler, _Rows(arrays, rows), device, states)
    actions = reply["a"][0] if single else reply["a"]
    if states is None:
        return actions, None
    after = states.states[:, 0].cpu().numpy()
    return actions, after[0] if single else after
