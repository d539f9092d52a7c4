"""n-step returns over time-major rows, correct across terminals and time limits.

Engine semantics: row ``t`` holds ``s_t``; ``r_{t+1}`` and ``terminal_{t+1}``
(on the next row) are what the action ``a_t`` earned and whether it ended the
episode; on such a terminal row ``s_{t+1}`` is already the next episode's
first state, and ``truncated_{t+1}`` says the end was a time limit, whose
state ``final_s`` sits on that row. So the target of ``(s_t, a_t)`` is

    G_t = sum_{i=1..k} gamma^{i-1} r_{t+i}  +  D_t Q(x_{t+k})

with ``k`` the first ``i <= n`` where ``terminal_{t+i}`` (else ``n``, or the
rows left), ``x_{t+k} = final_s_{t+k}`` after a truncation and ``s_{t+k}``
otherwise, and ``D_t = gamma^k``, or 0 when the episode really ended.

A ``cut`` row starts a new segment (the games restarted before it:
``LaneStore.restart``): no step leads into it, so the rows before it stop at
the row before it and bootstrap from that row's own state, ``D_t = gamma^k``,
as at the end of the rows.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["NStep", "nstep_targets"]


class NStep(NamedTuple):
    """Per row ``t`` ``[T, B]``: ``r`` the discounted reward sum ``G`` (named as the
    engine names a reward, and as replay samples carry it), the bootstrap
    ``discount`` ``D`` (0 after a real end), the row ``boot`` to bootstrap from,
    ``final`` (bootstrap from ``final_<key>`` of that row: a truncation) and
    ``valid`` (the row has at least one step after it: not the last row, nor the last before a cut)."""

    r: Tensor
    discount: Tensor
    boot: Tensor
    final: Tensor
    valid: Tensor


def nstep_targets(r: Tensor, terminal: Tensor, truncated: Tensor | None, gamma: float, n: int,
                  cut: Tensor | None = None) -> NStep:
    """The n-step quantities of every row of ``[T, B]`` rows (``r`` float, flags bool);
    near the end (or a ``cut``) a row uses the ``T - 1 - t < n`` steps it has."""
    if n < 1:
        raise ValueError(f"n-step needs n >= 1, got {n}")
    T = r.shape[0]
    terminal = terminal.bool()
    truncated = torch.zeros_like(terminal) if truncated is None else truncated.bool()
    rows = torch.arange(T, device=r.device).view(T, *([1] * (r.dim() - 1))).expand(r.shape)
    G = torch.zeros(r.shape, dtype=torch.float32, device=r.device)
    scale = torch.ones_like(G)  # gamma^(i-1) while the episode goes on
    alive = rows < T - 1
    boot = rows.clone()
    final = torch.zeros_like(terminal)
    ended = torch.zeros_like(terminal)
    cut = torch.zeros_like(terminal) if cut is None else cut.bool()
    valid = alive & ~cut.roll(-1, 0)  # (the last row, which the roll wraps, is not alive)
    for i in range(1, n + 1):
        idx = (rows + i).clamp(max=T - 1)
        step = alive & (rows + i <= T - 1) & ~cut.gather(0, idx)
        G += torch.where(step, scale * r.gather(0, idx).float(), 0.0)
        scale = torch.where(step, scale * gamma, scale)
        boot = torch.where(step, idx, boot)
        stop = step & terminal.gather(0, idx)
        final |= stop & truncated.gather(0, idx)
        ended |= stop & ~truncated.gather(0, idx)
        alive = step & ~stop
    discount = torch.where(ended, 0.0, scale)
    return NStep(G, discount, boot, final, valid)
