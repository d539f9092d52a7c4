"""The categorical (C51) projection and loss (Bellemare et al., 2017)."""

from __future__ import annotations

from torch import Tensor

__all__ = ["categorical_loss", "project_distribution"]


def project_distribution(probs: Tensor, r: Tensor, discount: Tensor, support: Tensor) -> Tensor:
    """Project the distribution of ``r + discount * Z`` onto ``support``.

    ``Z`` has probabilities ``probs`` ``[B, N]`` on atoms ``z_j`` (``support``,
    evenly spaced from ``v_min`` to ``v_max``). Each shifted atom
    ``Tz_j = clip(r + discount z_j, v_min, v_max)`` sits at fractional
    index ``b_j = (Tz_j - v_min) / dz`` and splits its mass between its
    neighbours: ``m_l += p_j (u - b_j)``, ``m_u += p_j (b_j - l)``, ``l =
    floor(b_j)``, ``u = ceil(b_j)`` (all of it to ``l`` when ``b_j`` is whole).

    ``b_j`` is clamped to ``[0, N - 1]``: in float32 an atom clipped to ``v_max``
    can land a rounding error above ``N - 1`` (support ``(-10, 200, 51)``,
    reward 1000), and ``ceil`` would then index atom ``N``.
    """
    v_min, v_max = float(support[0]), float(support[-1])
    dz = (v_max - v_min) / (support.numel() - 1)
    tz = (r.unsqueeze(-1) + discount.unsqueeze(-1) * support).clamp(v_min, v_max)
    b = ((tz - v_min) / dz).clamp(0, support.numel() - 1)
    lower, upper = b.floor(), b.ceil()
    whole = (upper == lower).to(probs.dtype)
    m = probs.new_zeros(probs.shape)
    m.scatter_add_(-1, lower.long(), probs * (upper - b + whole))
    m.scatter_add_(-1, upper.long(), probs * (b - lower))
    return m


def categorical_loss(log_p: Tensor, target: Tensor) -> Tensor:
    """Cross-entropy ``-sum_j m_j log p_j`` per row (``log_p`` of the taken action, ``[B, N]``)."""
    return -(target.detach() * log_p).sum(-1)
