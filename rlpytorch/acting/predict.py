"""``predict``: a trained model acting outside the engine, Gymnasium-style.

    action, state = model.predict(obs)                    # one observation, greedy
    actions, state = model.predict(obs_batch, state)      # a batch, recurrent state in and out
    action, state = model.predict(obs, state, prev_action=action, prev_reward=reward)  # --prev_action/_reward

It runs the very code the engine-driven actor runs (``act.act``) on a
batch made of the given observations, so a checkpoint acts in someone else's
loop exactly as it did in training or evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..core.distributions import actions_in, policy_family
from .act import ActingModel, RecurrentStates, act
from .prev_inputs import PREV_ACTION, PREV_REWARD, PrevInputs, prev_shapes
from .sampler import Sampler

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
    model: ActingModel,
    obs: Mapping[str, Any] | Any,
    state: Any | None = None,
    deterministic: bool = True,
    prev_action: Any | None = None,
    prev_reward: Any | None = None,
) -> tuple[np.ndarray | dict[str, np.ndarray], np.ndarray | None]:
    """The actions of ``model`` for ``obs`` and, for a recurrent model, its state after them.

    ``obs`` is an array (the model's first observation key) or a dict of them,
    one observation or a batch (a leading dimension beyond the key's shape).
    ``state`` is what the previous call returned (None: the start of an
    episode, a zero state). ``deterministic`` acts greedily, otherwise samples
    from the policy (drawing from torch's global generator, so
    ``torch.manual_seed`` makes it repeatable). Returns ``(action, state)``,
    without the batch dimension for a single observation; ``state`` is None
    for a feed-forward model. A Dict action is a dict of entry -> array (and
    so is its ``prev_action``).

    A model reading its previous action and reward (``--prev_action``,
    ``--prev_reward``) takes them here as the environment gave them: the action
    taken last (as the previous call returned it) and the reward it earned;
    None (at an episode's first step) feeds zeros, as in training. Rows that
    need different treatment can pass the model's inputs themselves as keys
    ``prev_action`` (encoded: one-hot, ``PrevInputs.encode``) and ``prev_reward``
    of ``obs``.
    """
    obs = {model.obs_keys[0]: obs} if not isinstance(obs, Mapping) else obs
    first = model.obs_keys[0]
    made = prev_shapes(model)  # made below from prev_action / prev_reward unless given
    arrays = {key: np.asarray(obs[key]) for key in model.obs_keys if key in obs or key not in made}
    shape = model.obs_shapes.get(first)
    single = shape is not None and arrays[first].ndim == len(shape)
    if single:
        arrays = {key: value[None] for key, value in arrays.items()}
    rows = len(arrays[first])
    arrays.update(_prev_inputs(model, arrays, rows, prev_action, prev_reward))
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
    actions = actions_in(policy_family(model), reply)
    if single:
        actions = {k: v[0] for k, v in actions.items()} if isinstance(actions, Mapping) else actions[0]
    if states is None:
        return actions, None
    after = states.states[:, 0].cpu().numpy()
    return actions, after[0] if single else after


def _prev_inputs(
    model: ActingModel, given: Mapping[str, np.ndarray], rows: int, prev_action: Any | None, prev_reward: Any | None
) -> dict[str, np.ndarray]:
    """The previous-input keys the model reads and ``given`` lacks, from the raw
    ``prev_action`` / ``prev_reward`` (zeros when None)."""
    part = model.prev_inputs
    if part is None:
        return {}
    made = {}
    if PREV_ACTION in part.keys and PREV_ACTION not in given:
        zeros = np.zeros((rows, part.width), np.float32)
        made[PREV_ACTION] = zeros if prev_action is None else part.encode(_as_rows(part, prev_action, rows)).numpy()
    if PREV_REWARD in part.keys and PREV_REWARD not in given:
        reward = 0.0 if prev_reward is None else prev_reward
        made[PREV_REWARD] = np.broadcast_to(np.asarray(reward, np.float32), (rows,)).copy()
    return made


def _as_rows(part: PrevInputs, a: Any, rows: int) -> torch.Tensor | dict[str, torch.Tensor]:
    """Raw actions (a dict of them for a Dict action) as ``[rows, *action_shape]`` tensors."""
    if part.entries is not None:
        return {name: _as_rows(entry, a[name], rows) for name, entry in part.entries.items()}
    return torch.as_tensor(np.asarray(a)).reshape(rows, *part.action_shape)
