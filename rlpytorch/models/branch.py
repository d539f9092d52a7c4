"""``BranchModel``: heads on encoders, RL2's branch model.

A branch is ``(encoder, head)``: the encoder maps the observation dict to
features, the head maps features to named outputs (``pi``, ``V``, ``Q``, ...).
Branches given the *same* encoder object share it: it is stored once and runs
once per call, its features going to every head on it. So

    BranchModel({"policy": (enc_a, PolicyHead(...)), "value": (enc_b, ValueHead(...))})

has separate trunks, and passing ``enc_a`` twice gives one shared trunk. Any
``nn.Module`` with an ``out_dim`` drops in as an encoder, any module returning
a dict as a head.

With a ``core`` (a ``RecurrentCore``) the model is recurrent: all branches share
one encoder, and the core runs between it and the heads over time-major
``[T, B, ...]`` inputs, carrying a per-game state (see ``recurrent.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from .base import Model

__all__ = ["BranchModel"]


class BranchModel(Model):
    """``out = union over branches of head(core?(encoder(obs)))``; see the module docstring.

    ``forward(obs)`` takes a dict ``{key: [..., *shape]}`` (or one tensor, read as
    the first of ``obs_keys``) with any leading shape. A recurrent model's
    ``forward(obs, state, reset)`` takes ``[T, B, ...]`` inputs, the state ``[B, S]``
    before row 0 and ``reset`` ``[T, B]`` (rows where the state restarts from
    zero: episode starts), and adds ``state`` (after the last row) and
    ``states_in`` (``[T, B, S]``, the state carried into each row before its
    reset) to the outputs.
    """

    def __init__(
        self,
        branches: Mapping[str, tuple[nn.Module, nn.Module]],
        obs_keys: Sequence[str] = ("s",),
        core: nn.Module | None = None,
        obs_shapes: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        super().__init__()
        encoders: dict[str, nn.Module] = {}
        self._encoder_of: dict[str, str] = {}
        for name, (encoder, _) in branches.items():
            shared = next((n for n, e in encoders.items() if e is encoder), None)
            if shared is None:
                encoders[name] = encoder
            self._encoder_of[name] = shared or name
        self.encoders = nn.ModuleDict(encoders)
        self.heads = nn.ModuleDict({name: head for name, (_, head) in branches.items()})
        if core is not None and len(encoders) != 1:
            raise ValueError("a recurrent core needs every branch to share one encoder")
        self.core = core
        self.obs_keys = tuple(obs_keys)
        self.obs_shapes = {key: tuple(shape) for key, shape in (obs_shapes or {}).items()}
        self.state_size = int(core.state_size) if core is not None else 0
        # The distribution its policy head parameterises (see rlpytorch.core.distributions).
        self.policy_family = next((h.family for h in self.heads.values() if hasattr(h, "family")), None)

    def forward(
        self,
        obs: Mapping[str, Tensor] | Tensor,
        state: Tensor | None = None,
        reset: Tensor | None = None,
    ) -> dict[str, Tensor]:
        obs = self.as_obs(obs)
        features = {name: encoder(obs) for name, encoder in self.encoders.items()}
        out: dict[str, Any] = {}
        if self.core is not None:
            ((name, x),) = features.items()
            T, B = x.shape[:2]
            if state is None:
                state = x.new_zeros(B, self.state_size)
            if reset is None:
                reset = torch.zeros(T, B, dtype=torch.bool, device=x.device)
            features[name], out["state"], out["states_in"] = self.core(x, state, reset)
        for name, head in self.heads.items():
            out.update(head(features[self._encoder_of[name]]))
        return out
