"""A recurrent core (LSTM or GRU) stepped over time-major ``[T, B, F]`` features.

The core carries one flat state per game, ``[B, S]`` (an LSTM's ``h`` and ``c``
concatenated, ``S = 2 H``; a GRU's ``h``, ``S = H``). At each row ``t`` the state
is zeroed where ``reset[t]`` is set (the row starts an episode: the engine's
``terminal``), then the cell consumes ``x[t]``. The actor keeps each game's
state between calls and replies the state it started from as key ``h``; a
train window replays the model from the stored ``h`` of its first row (or of
each chunk's first row, for truncated back-propagation), which reproduces the
actor's computation exactly when the weights are the same.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["RecurrentCore"]


class RecurrentCore(nn.Module):
    """``kind`` ``"lstm"`` or ``"gru"``: ``(x [T,B,F], state [B,S], reset [T,B]) ->
    (y [T,B,H], state after the last row [B,S], state carried into each row before its reset [T,B,S])``."""

    def __init__(self, kind: str, in_dim: int, hidden: int) -> None:
        super().__init__()
        if kind not in ("lstm", "gru"):
            raise ValueError(f"unknown recurrent core {kind!r}; choose lstm or gru")
        self.kind = kind
        self.cell = nn.LSTMCell(in_dim, hidden) if kind == "lstm" else nn.GRUCell(in_dim, hidden)
        self.out_dim = hidden
        self.state_size = 2 * hidden if kind == "lstm" else hidden

    def forward(self, x: Tensor, state: Tensor, reset: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        keep = (~reset.bool()).unsqueeze(-1).to(x.dtype)
        outputs, carried = [], []
        for t in range(x.shape[0]):
            carried.append(state)
            state = state * keep[t]
            if self.kind == "lstm":
                h, c = self.cell(x[t], state.chunk(2, -1))
                state = torch.cat([h, c], -1)
            else:
                h = state = self.cell(x[t], state)
            outputs.append(h)
        return torch.stack(outputs), state, torch.stack(carried)
