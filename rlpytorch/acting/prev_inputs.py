"""The previous action and reward as model inputs (rlpyt's ``prev_action``, ``prev_reward``).

With ``--prev_action`` / ``--prev_reward`` a model reads two more observation
keys. For row ``t`` of a game (seat):

    prev_action_t = 0 if t starts an episode else enc(a_{t-1})
    prev_reward_t = 0 if t starts an episode else r_t

(``r_t``, on row ``t``, is what ``a_{t-1}`` earned; a row starts an episode
when its ``terminal`` is set, the engine having reset the game, or when it is
the game's first row.) ``enc`` is one-hot for a Discrete action, one one-hot
per component for MultiDiscrete (concatenated), and the replied values for Box;
for a Dict of such entries it is the concatenation of the entries' encodings in
the Dict's key order (the actions then being a mapping entry -> tensor).

One place makes them: the actor (``act.PreviousActions``, one encoded action
per game and seat, and the batch's ``r`` and ``terminal``). It feeds them to the
model and replies them as keys ``prev_action`` / ``prev_reward``, which the
engine keeps in the history like the recurrent state ``h``; training windows
and replay therefore carry exactly what the actor saw, row by row, and reward
normalization (which scales the window's ``r``) cannot change them. Only the
state an episode ended in (``final_<key>``, for bootstrapping a truncation)
was never acted on: ``add_final_inputs`` derives its inputs from the window,
``enc(a_{t-1})`` and ``r_t`` of the truncated row ``t``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor, nn

__all__ = ["PREV_ACTION", "PREV_REWARD", "PrevInputs", "add_final_inputs", "prev_shapes"]

PREV_ACTION = "prev_action"
PREV_REWARD = "prev_reward"


class PrevInputs(nn.Module):
    """A model's part saying which previous inputs it reads and how actions are encoded.

    No weights: ``Model.prev_inputs`` holds it so the acting copy, checkpoints'
    rebuilds (``models.loader.load_model``) and ``predict`` know the encoding.
    """

    def __init__(self, space: Any, action: bool, reward: bool) -> None:
        super().__init__()
        space = spaces.Discrete(space) if isinstance(space, int) else space
        # a Dict's entries, each encoded alone; plain dict: no weights to register
        self.entries: dict[str, PrevInputs] | None = None
        if isinstance(space, spaces.Dict):
            self.entries = {str(name): PrevInputs(entry, action, reward) for name, entry in space.spaces.items()}
            self.nvec = None
            width = sum(entry.width for entry in self.entries.values())
        elif isinstance(space, spaces.Discrete):
            self.nvec: tuple[int, ...] | None = (int(space.n),)
            width = int(space.n)
        elif isinstance(space, spaces.MultiDiscrete):
            self.nvec = tuple(int(n) for n in np.asarray(space.nvec).reshape(-1))
            width = sum(self.nvec)
        elif isinstance(space, spaces.Box):
            self.nvec = None  # raw values
            width = math.prod(space.shape)
        else:
            raise ValueError(f"--prev_action supports Discrete, MultiDiscrete, Box and Dict of them, not {space}")
        self.action_shape = () if self.entries is not None else tuple(space.shape)
        self.width = width
        self.keys = (PREV_ACTION,) * action + (PREV_REWARD,) * reward

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """The keys this part adds to the model's observations, with their shapes."""
        return {key: (self.width,) if key == PREV_ACTION else () for key in self.keys}

    def encode(self, a: Tensor | Mapping[str, Tensor]) -> Tensor:
        """Actions ``[..., *action_shape]`` (a mapping entry -> such a tensor for a
        Dict) -> ``[..., width]`` floats (see the module docstring)."""
        if self.entries is not None:
            return torch.cat([part.encode(a[name]) for name, part in self.entries.items()], -1)
        lead = a.shape[: a.dim() - len(self.action_shape)]
        if self.nvec is None:
            return a.reshape(*lead, self.width).float()
        parts = a.reshape(*lead, len(self.nvec)).long().unbind(-1)
        return torch.cat([nn.functional.one_hot(p, n) for p, n in zip(parts, self.nvec, strict=True)], -1).float()

    def step_inputs(self, last_action: Tensor, r: Tensor, terminal: Tensor) -> dict[str, Tensor]:
        """The inputs of rows whose game last took ``last_action`` (encoded) and now
        shows reward ``r`` and flag ``terminal``: zero where ``terminal`` starts an episode."""
        keep = ~terminal.bool()
        inputs = {PREV_ACTION: last_action * keep.unsqueeze(-1).to(last_action.dtype),
                  PREV_REWARD: r.float() * keep}
        return {key: inputs[key] for key in self.keys}


def prev_shapes(model: nn.Module) -> dict[str, tuple[int, ...]]:
    """The previous-input keys ``model`` reads, with their shapes (none without ``prev_inputs``)."""
    part = getattr(model, "prev_inputs", None)
    return part.shapes() if part is not None else {}


def add_final_inputs(model: nn.Module, window: MutableMapping[str, Tensor]) -> None:
    """Add ``final_prev_action`` / ``final_prev_reward`` to a ``[T, B]`` window that has
    ``truncated``: on row ``t >= 1``, ``enc(a_{t-1})`` and ``r_t``, the inputs of the
    state an episode ended in (used only on truncated rows; row 0's action is zero:
    its truncation belongs to the previous window). Call it before rewards are normalized."""
    part = getattr(model, "prev_inputs", None)
    if part is None or "truncated" not in window:
        return
    # a Dict's actions are stored under its entries' keys (see elfpy.gym_host)
    a = window["a"] if part.entries is None else {name: window[name] for name in part.entries}
    encoded, r = part.encode(a), window["r"]
    final: Mapping[str, Tensor] = {
        PREV_ACTION: torch.cat([torch.zeros_like(encoded[:1]), encoded[:-1]]),
        PREV_REWARD: r.float(),
    }
    for key in part.keys:
        window["final_" + key] = final[key]
