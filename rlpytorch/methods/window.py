"""Shared helpers for time-major ``[T, B]`` training windows.

A window row ``t`` holds state ``s_t``; ``r_{t+1}`` and ``terminal_{t+1}`` on
the next row say what the action taken at ``t`` earned and whether it ended
the episode (the engine auto-resets, so after a terminal the row already holds
the next episode's first state).

A return can be computed only up to a *cut*: the last row of the window
(bootstrapped from ``V(s_{T-1})``). A time-limit truncation is not a cut when
the window carries the state the episode ended in (``final_<key>`` on its
terminal row): the return before it bootstraps from ``V(final_s)`` exactly
(``final_values``). Without those keys it is a cut: the return there
bootstraps from ``V(s_t)`` and the row is left out of the loss.

A recurrent model is replayed from the state ``h`` the actor stored
(``forward_window``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
from torch import Tensor

from ..models.base import Model

__all__ = [
    "alive_after",
    "backward_returns",
    "final_after",
    "final_values",
    "forward_window",
    "mask_weights",
    "masked_mean",
    "normalized",
    "returns_of",
    "window_cuts",
]


def backward_returns(V: Tensor, cut: Tensor, base: Tensor, decay: Tensor) -> Tensor:
    """Returns ``R`` ``[T, B]`` of a linear recursion scanned from the window's end:
    ``R_{T-1} = V_{T-1}``, ``R_t = V_t`` at cuts, else ``R_t = base_t + decay_t R_{t+1}``.

    ``base`` and ``decay`` are ``[T - 1, B]`` (rows ``0..T-2``), computed for all
    rows at once by the caller, so the scan itself is one fused multiply-add
    per row (every returns part is such a recursion). ``V`` should be detached.
    """
    keep = ~cut[:-1]
    base = torch.where(keep, base.to(V.dtype), V[:-1])
    decay = decay.to(V.dtype) * keep
    R = torch.empty_like(V)
    R[-1] = V[-1]
    for t in range(V.shape[0] - 2, -1, -1):
        torch.addcmul(base[t], decay[t], R[t + 1], out=R[t])
    return R


def alive_after(terminal: Tensor, dtype: torch.dtype) -> Tensor:
    """``1 - terminal_{t+1}`` for rows ``t = 0..T-2``: ``[T - 1, B]`` of ``dtype``."""
    return 1.0 - terminal[1:].to(dtype)


def final_after(final_value: Tensor | None, V: Tensor) -> Tensor | float:
    """``F_{t+1}`` for rows ``t = 0..T-2`` (0 when ``final_value`` is None)."""
    return 0.0 if final_value is None else final_value[1:].to(V.dtype)


def window_cuts(terminal: Tensor, truncated: Tensor | None = None) -> Tensor:
    """Rows ``t`` where returns bootstrap from ``V(s_t)``: ``[T, B]`` bool.

    ``cut[T-1]`` is always set; ``cut[t]`` is set when ``truncated[t+1]``.
    """
    cut = torch.zeros_like(terminal, dtype=torch.bool)
    cut[-1] = True
    if truncated is not None:
        cut[:-1] = truncated[1:].bool()
    return cut


def mask_weights(mask: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """``1 / n`` on the ``n`` rows where ``mask`` is set, 0 elsewhere (all 0 if none is):
    ``(x * mask_weights(mask)).sum()`` is ``masked_mean(x, mask)``."""
    weight = mask.to(dtype)
    return weight / weight.sum().clamp(min=1.0)


def masked_mean(x: Tensor, mask: Tensor) -> Tensor:
    """Mean of ``x`` over the rows where ``mask`` is set (0 if none is)."""
    mask = mask.to(x.dtype)
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def normalized(x: Tensor, mask: Tensor, eps: float = 1e-8) -> Tensor:
    """``(x - m) / (s + eps)`` with ``m``, ``s`` the mean and std of ``x`` over the rows of ``mask``."""
    mean = masked_mean(x, mask)
    std = masked_mean((x - mean).square(), mask).sqrt()
    return (x - mean) / (std + eps)


def forward_window(model: Model, batch: Mapping[str, Tensor], recurrence: int = 0) -> dict[str, Tensor]:
    """The model's outputs (``pi``, ``V``, ...) on every row of a ``[T, B]`` window.

    A feed-forward model sees all rows at once. A recurrent model is replayed
    in chunks of ``recurrence`` rows (0: the whole window), each started from
    the stored state ``h`` of its first row and reset on ``terminal`` rows, so
    gradients flow back at most ``recurrence`` steps (truncated
    back-propagation through time); its ``states_in`` come along.
    """
    obs = {k: batch[k] for k in model.obs_keys}
    if not model.state_size:
        return model(obs)
    T = batch["terminal"].shape[0]
    step = recurrence if recurrence > 0 else T
    chunks = []
    for start in range(0, T, step):
        rows = slice(start, start + step)
        part = {k: v[rows] for k, v in obs.items()}
        chunks.append(model(part, batch["h"][start], batch["terminal"][rows]))
    return {k: torch.cat([c[k] for c in chunks]) for k in chunks[0] if k != "state"}


def final_values(
    model: Model, batch: Mapping[str, Tensor], states_in: Tensor | None = None
) -> Tensor | None:
    """``[T, B]``: ``V(final_s)`` on the terminal rows of truncated episodes, 0 elsewhere.

    ``final_s`` is the state the episode ended in (keys ``final_<key>``); for
    a recurrent model it continues from ``states_in`` (the state carried into
    that row, before its reset). Detached. None when the window lacks
    ``truncated`` or a ``final_`` key of the model. Row 0 is skipped: its
    truncation belongs to the previous window.
    """
    finals = {k: f"final_{k}" for k in model.obs_keys}
    if "truncated" not in batch or not all(f in batch for f in finals.values()):
        return None
    ended = batch["truncated"].bool() & batch["terminal"].bool()
    ended[0] = False
    V = torch.zeros(ended.shape, device=ended.device)
    rows = ended.nonzero(as_tuple=True)
    if rows[0].numel() == 0:
        return V
    obs = {k: batch[f][rows] for k, f in finals.items()}
    with torch.no_grad():
        if model.state_size:
            n = rows[0].numel()
            out = model({k: v.unsqueeze(0) for k, v in obs.items()}, states_in[rows].detach(),
                        torch.zeros(1, n, dtype=torch.bool, device=V.device))
            V[rows] = out["V"][0].to(V.dtype)
        else:
            V[rows] = model(obs)["V"].to(V.dtype)
    return V


def returns_of(
    returns: Callable[..., Tensor], model: Model, batch: Mapping[str, Tensor], V: Tensor,
    states_in: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """Targets ``R`` ``[T, B]`` of the ``returns`` part on the window, with ``V``
    (detached) the model's values of its rows, and the mask of rows that have a
    target (not cuts)."""
    final = final_values(model, batch, states_in)
    cut = window_cuts(batch["terminal"], None if final is not None else batch.get("truncated"))
    R = returns(batch["r"].to(V.dtype), batch["terminal"], V.detach(), cut, final)
    return R, ~cut
