"""Running normalization of observations and rewards (Stable-Baselines3's VecNormalize, as modules).

``RunningMeanStd`` keeps the count, mean and variance of a stream and merges
each new batch with Chan et al.'s parallel formula: for the old statistics
``(n_a, m_a, v_a)`` and a batch's ``(n_b, m_b, v_b)``,

    n = n_a + n_b,   m = m_a + d n_b / n,   v = (v_a n_a + v_b n_b + d^2 n_a n_b / n) / n,   d = m_b - m_a.

Under torch.distributed a batch's count, sum and sum of squares are summed
over the ranks before the merge, so every rank holds the statistics of all
ranks' data, not of its own. The statistics are buffers: checkpoints carry
them, ``ModelInterface.update_model`` copies them to the actor, and
``frozen`` (set for evaluation) stops updates.

``ObservationNormalizer`` maps each float observation key to
``clip((x - mean) / sqrt(var + eps))``. ``RewardNormalizer`` divides rewards
by the standard deviation of the discounted return ``G_t = gamma G_{t-1} + r_t``
(reset at episode ends), which keeps the scale of value targets near one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
import torch.distributed as dist
from torch import Tensor, nn

from ..acting.prev_inputs import prev_shapes

__all__ = ["ObservationNormalizer", "RewardNormalizer", "RunningMeanStd", "add_normalizers", "normalize_window"]

EPS = 1e-8


class RunningMeanStd(nn.Module):
    """Count, mean and variance of every sample ``x[..., *shape]`` seen so far."""

    def __init__(self, shape: Sequence[int] = ()) -> None:
        super().__init__()
        self.shape = tuple(shape)
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(self.shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(self.shape, dtype=torch.float64))
        self.frozen = False

    @torch.no_grad()
    def update(self, x: Tensor) -> None:
        """Merge the samples of ``x`` (any leading shape, then ``shape``) into the statistics."""
        if self.frozen:
            return
        samples = x.detach().reshape(-1, *self.shape).to(torch.float64)
        moments = torch.stack([samples.new_tensor(float(samples.shape[0])).expand(self.shape),
                               samples.sum(0), samples.square().sum(0)])
        if dist.is_initialized() and dist.get_world_size() > 1:
            dist.all_reduce(moments)
        n_b = moments[0].reshape(-1)[0]
        if n_b == 0:
            return
        mean_b = moments[1] / n_b
        var_b = (moments[2] / n_b - mean_b.square()).clamp(min=0.0)
        n_a = self.count
        n = n_a + n_b
        delta = mean_b - self.mean
        self.var.copy_((self.var * n_a + var_b * n_b + delta.square() * n_a * n_b / n) / n)
        self.mean.add_(delta * n_b / n)
        self.count.copy_(n)

    def normalize(self, x: Tensor, clip: float) -> Tensor:
        """``clip((x - mean) / sqrt(var + eps), -clip, clip)`` in ``x``'s dtype."""
        scaled = (x - self.mean.to(x.dtype)) / torch.sqrt(self.var.to(x.dtype) + EPS)
        return scaled.clamp(-clip, clip)


class ObservationNormalizer(nn.Module):
    """One ``RunningMeanStd`` per observation key; keys whose values are not
    floating point (images, tokens) pass unchanged and are not counted."""

    def __init__(self, obs_shapes: Mapping[str, Sequence[int]], clip: float = 10.0) -> None:
        super().__init__()
        self.stats = nn.ModuleDict({key: RunningMeanStd(shape) for key, shape in obs_shapes.items()})
        self.clip = clip

    def update(self, obs: Mapping[str, Tensor]) -> None:
        for key, stats in self.stats.items():
            if obs[key].is_floating_point():
                stats.update(obs[key])

    def forward(self, obs: Mapping[str, Tensor]) -> dict[str, Tensor]:
        out = dict(obs)
        for key, stats in self.stats.items():
            if key in obs and obs[key].is_floating_point():
                out[key] = stats.normalize(obs[key], self.clip)
        return out

    def freeze(self, frozen: bool = True) -> None:
        for stats in self.stats.values():
            stats.frozen = frozen


class RewardNormalizer(nn.Module):
    """Scales rewards by the running standard deviation of the discounted return.

    ``update`` takes training windows ``[T, B]`` whose first row repeats the
    previous window's last row (the engine's overlap), so it reads rows
    ``1..T-1`` and carries each column's return ``G`` between windows by its
    ``ids`` (game and seat). ``terminal_t`` ends an episode at row ``t``: ``G``
    restarts from ``r_t``'s successor, as in VecNormalize.
    """

    def __init__(self, gamma: float, clip: float = 10.0) -> None:
        super().__init__()
        self.gamma = gamma
        self.clip = clip
        self.stats = RunningMeanStd(())
        self.returns: dict[int, float] = {}

    @torch.no_grad()
    def update(self, r: Tensor, terminal: Tensor, ids: Sequence[int]) -> None:
        """Accumulate ``G`` over rows ``1..T-1`` of each column and merge every ``G_t`` seen."""
        if self.stats.frozen:
            return
        G = torch.tensor([self.returns.get(int(i), 0.0) for i in ids], dtype=torch.float64)
        seen = []
        for t in range(1, r.shape[0]):
            G = self.gamma * G + r[t].to(torch.float64)
            seen.append(G.clone())
            G = torch.where(terminal[t].to(torch.bool), torch.zeros_like(G), G)
        self.returns.update(zip((int(i) for i in ids), G.tolist(), strict=True))
        if seen:
            self.stats.update(torch.stack(seen))

    def forward(self, r: Tensor) -> Tensor:
        """``clip(r / sqrt(var(G) + eps))`` (rewards are scaled, not centred)."""
        return (r / torch.sqrt(self.stats.var.to(r.dtype) + EPS)).clamp(-self.clip, self.clip)


def add_normalizers(model: nn.Module, norm_obs: bool, norm_reward: bool, gamma: float) -> nn.Module:
    """Give ``model`` the normalizers asked for (over the game's observation keys)."""
    if norm_obs:  # the game's keys: previous actions and rewards stay as the actor recorded them
        keys = [key for key in model.obs_keys if key not in prev_shapes(model)]
        model.obs_norm = ObservationNormalizer({key: model.obs_shapes.get(key, ()) for key in keys})
    if norm_reward:
        model.reward_norm = RewardNormalizer(gamma)
    return model


def normalize_window(model: nn.Module, window: dict[str, Tensor], ids: Sequence[int]) -> None:
    """Before an update on a ``[T, B]`` window: merge its new rows (``1..T-1``;
    row 0 repeats the previous window's last) into the learner ``model``'s
    observation statistics, and scale its rewards ``r`` in place. ``ids`` names
    each column's game and seat, whose discounted return carries over."""
    if model.obs_norm is not None:
        model.obs_norm.update({key: window[key][1:] for key in model.obs_norm.stats})
    if model.reward_norm is not None:
        model.reward_norm.update(window["r"], window["terminal"], ids)
        window["r"] = model.reward_norm(window["r"])
