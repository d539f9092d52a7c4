"""Policies for every action space: distributions over actions and the families that build them.

A ``Distribution`` has the same small face whatever the space: ``sample``
(seedable), ``mode`` (the greedy action), ``log_prob(a)`` (summed over the
action's components, so one number per row) and ``entropy``. The methods need
nothing else: the importance weight and PPO's ratio are
``exp(log_prob_new(a) - log_prob_behaviour(a))`` in every space. ::

    | space | distribution | parameters (model outputs) |
    |---|---|---|
    | Discrete(n) | ``Categorical`` | ``pi`` ``[..., n]`` probabilities |
    | MultiDiscrete(nvec) | ``MultiCategorical``: independent categoricals | ``pi`` ``[..., sum(nvec)]`` |
    | Box | ``DiagGaussian`` (actions unbounded: the game clips them) | ``mean``, ``std`` ``[..., D]`` |
    | Box | ``TanhGaussian``: ``a = c + h tanh(u)``, ``u ~ N(mean, std)`` inside the bounds | ``mean``, ``std`` |
    | Box | ``Deterministic``: the action itself, a point mass (DDPG, TD3) | ``action`` ``[..., D]`` |
    | Dict | ``DictDistribution`` of the above, one per action key | each one's parameters, prefixed ``key.`` |

A *family* (``CategoricalFamily``, ``GaussianFamily``, ...) is the picklable,
parameter-free description a policy head carries: which model outputs it reads
and which distribution it builds from them (``family(out)``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = [
    "BEHAVIOUR_LOGP",
    "BEHAVIOUR_PI",
    "CategoricalFamily",
    "Categorical",
    "DictDistribution",
    "DictFamily",
    "DiagGaussian",
    "Deterministic",
    "DeterministicFamily",
    "Distribution",
    "GaussianFamily",
    "MultiCategorical",
    "MultiCategoricalFamily",
    "TanhGaussian",
    "action_columns",
    "action_replies",
    "actions_in",
    "behaviour_key",
    "gaussian_log_prob",
    "is_categorical",
    "log_one_minus_tanh_squared",
    "policy_family",
    "policy_of",
    "sample_gaussian",
]

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Distribution:
    """A batch of action distributions (leading shape ``[...]``, e.g. ``[B]`` or ``[T, B]``)."""

    device: torch.device  # where its parameters live (a sampling generator must live there too)

    def sample(self, generator: torch.Generator | None = None) -> Any:
        raise NotImplementedError

    def mode(self) -> Any:
        """The most likely action (the greedy one)."""
        raise NotImplementedError

    def log_prob(self, a: Any) -> Tensor:
        """``log p(a)`` ``[...]``, summed over the action's components."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """``H = -E[log p(a)]`` ``[...]``."""
        raise NotImplementedError


class Categorical(Distribution):
    """``p(a) = pi_a`` over the last axis; logs floored at ``min_prob``."""

    def __init__(self, probs: Tensor, min_prob: float = 1e-6) -> None:
        self.probs = probs
        self.min_prob = min_prob
        self.device = probs.device

    def sample(self, generator: torch.Generator | None = None) -> Tensor:
        """Inverse CDF, one uniform per row."""
        pi = self.probs
        u = torch.rand(pi.shape[:-1] + (1,), generator=generator, device=pi.device)
        a = (pi.cumsum(-1) < u * pi.sum(-1, keepdim=True)).sum(-1)
        return a.clamp(max=pi.shape[-1] - 1)

    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    def log_prob(self, a: Tensor) -> Tensor:
        return self.probs.gather(-1, a.long().unsqueeze(-1)).squeeze(-1).clamp(min=self.min_prob).log()

    def entropy(self) -> Tensor:
        """``-sum_a pi_a log pi_a``."""
        return -(self.probs * self.probs.clamp(min=self.min_prob).log()).sum(-1)


class MultiCategorical(Distribution):
    """Independent categoricals, one per component of a MultiDiscrete action:
    ``log p(a) = sum_i log pi^i_{a_i}``, ``H = sum_i H(pi^i)``.

    ``probs`` ``[..., sum(nvec)]`` holds the components' probabilities side by side;
    actions are ``[..., len(nvec)]`` int64."""

    def __init__(self, probs: Tensor, nvec: Sequence[int], min_prob: float = 1e-6) -> None:
        self.parts = [Categorical(p, min_prob) for p in probs.split(list(nvec), dim=-1)]
        self.device = probs.device

    def sample(self, generator: torch.Generator | None = None) -> Tensor:
        return torch.stack([part.sample(generator) for part in self.parts], -1)

    def mode(self) -> Tensor:
        return torch.stack([part.mode() for part in self.parts], -1)

    def log_prob(self, a: Tensor) -> Tensor:
        return sum(part.log_prob(a[..., i]) for i, part in enumerate(self.parts))

    def entropy(self) -> Tensor:
        return sum(part.entropy() for part in self.parts)


def sample_gaussian(mean: Tensor, std: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """Draw continuous actions ``a ~ N(mean, std^2)``, independently per dimension."""
    noise = torch.randn(mean.shape, generator=generator, device=mean.device)
    return mean + std * noise


def gaussian_log_prob(a: Tensor, mean: Tensor, std: Tensor) -> Tensor:
    """``log N(a; mean, std^2)`` summed over the last (action) dimension."""
    z = (a - mean) / std
    return (-0.5 * z.square() - std.log() - LOG_SQRT_2PI).sum(-1)


class DiagGaussian(Distribution):
    """``a ~ N(mean, diag(std^2))`` over the last axis: ``H = sum_d (1/2 + log(2 pi)/2 + log std_d)``."""

    def __init__(self, mean: Tensor, std: Tensor) -> None:
        self.mean = mean
        self.std = std
        self.device = mean.device

    def sample(self, generator: torch.Generator | None = None) -> Tensor:
        return sample_gaussian(self.mean, self.std, generator)

    def mode(self) -> Tensor:
        return self.mean

    def log_prob(self, a: Tensor) -> Tensor:
        return gaussian_log_prob(a, self.mean, self.std)

    def entropy(self) -> Tensor:
        return (0.5 + LOG_SQRT_2PI + self.std.log()).sum(-1)


def log_one_minus_tanh_squared(u: Tensor) -> Tensor:
    """``log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2 u))``, finite for every ``u``
    (the direct form is ``log 0`` once ``tanh(u)`` rounds to 1, near ``|u| > 9`` in float32)."""
    return 2.0 * (math.log(2.0) - u - F.softplus(-2.0 * u))


class TanhGaussian(Distribution):
    """``a = c + h tanh(u)`` with ``u ~ N(mean, diag(std^2))``, ``c = (high + low) / 2``,
    ``h = (high - low) / 2``: actions always inside ``[low, high]``.

    Change of variables: ``log p(a) = log N(u; mean, std) - sum_d [log h_d + log(1 - tanh(u_d)^2)]``,
    the second term the log-determinant of the Jacobian ``da/du``. ``log_prob(a)``
    recovers ``u = atanh((a - c) / h)`` with ``(a - c) / h`` clamped to
    ``+-(1 - eps)`` (an action on the bound has no finite ``u``). There is no
    closed-form entropy: ``entropy()`` is the one-sample estimate
    ``H(u) + sum_d [log h_d + log(1 - tanh(u_d)^2)]`` at ``u = mean + std * noise``
    (differentiable through ``mean`` and ``std``).
    """

    def __init__(self, mean: Tensor, std: Tensor, low: Tensor | float, high: Tensor | float, eps: float = 1e-6):
        self.base = DiagGaussian(mean, std)
        low = torch.as_tensor(low, dtype=mean.dtype, device=mean.device)
        high = torch.as_tensor(high, dtype=mean.dtype, device=mean.device)
        self.center = (high + low) / 2
        self.half = (high - low) / 2
        self.eps = eps
        self.device = mean.device

    def _squash(self, u: Tensor) -> Tensor:
        return self.center + self.half * torch.tanh(u)

    def _log_det(self, u: Tensor) -> Tensor:
        """``sum_d log |da_d / du_d|``."""
        return (self.half.log() + log_one_minus_tanh_squared(u)).sum(-1)

    def sample(self, generator: torch.Generator | None = None) -> Tensor:
        return self._squash(self.base.sample(generator))

    def sample_with_log_prob(self, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        """A reparameterised sample ``a`` (differentiable through ``mean`` and ``std``) and
        ``log p(a)`` computed from its ``u`` directly: exact even where ``a`` rounds onto
        a bound, where ``log_prob(a)`` would have to clamp."""
        u = self.base.sample(generator)
        return self._squash(u), self.base.log_prob(u) - self._log_det(u)

    def mode(self) -> Tensor:
        return self._squash(self.base.mean)

    def log_prob(self, a: Tensor) -> Tensor:
        y = ((a - self.center) / self.half).clamp(-1.0 + self.eps, 1.0 - self.eps)
        u = torch.atanh(y)
        return self.base.log_prob(u) - self._log_det(u)

    def entropy(self) -> Tensor:
        u = self.base.mean + self.base.std * torch.randn_like(self.base.mean)
        return self.base.entropy() + self._log_det(u)


class Deterministic(Distribution):
    """A deterministic policy's action ``[..., D]`` as a point mass: ``sample`` and
    ``mode`` are the action, ``log_prob(a)`` is 0 (probability 1) where ``a`` is it
    and ``-inf`` elsewhere, the entropy 0. Exploration noise is the sampler's
    (``rlpytorch.acting.exploration``), not the policy's."""

    def __init__(self, action: Tensor) -> None:
        self.action = action
        self.device = action.device

    def sample(self, generator: torch.Generator | None = None) -> Tensor:
        return self.action

    def mode(self) -> Tensor:
        return self.action

    def log_prob(self, a: Tensor) -> Tensor:
        same = (a == self.action).all(-1)
        return torch.where(same, 0.0, -math.inf).to(self.action.dtype)

    def entropy(self) -> Tensor:
        return self.action.new_zeros(self.action.shape[:-1])


class DictDistribution(Distribution):
    """Independent distributions, one per action key: ``log p(a) = sum_k log p_k(a_k)``,
    ``H = sum_k H_k``; actions are dicts of key -> tensor."""

    def __init__(self, parts: Mapping[str, Distribution]) -> None:
        self.parts = dict(parts)
        self.device = next(iter(self.parts.values())).device

    def sample(self, generator: torch.Generator | None = None) -> dict[str, Tensor]:
        return {key: part.sample(generator) for key, part in self.parts.items()}

    def mode(self) -> dict[str, Tensor]:
        return {key: part.mode() for key, part in self.parts.items()}

    def log_prob(self, a: Mapping[str, Tensor]) -> Tensor:
        return sum(part.log_prob(a[key]) for key, part in self.parts.items())

    def entropy(self) -> Tensor:
        return sum(part.entropy() for part in self.parts.values())


# --- families: what a policy head outputs and which distribution reads it ---------


class CategoricalFamily:
    """Discrete(n): ``Categorical(out["pi"])``."""

    outputs = ("pi",)

    def __call__(self, out: Mapping[str, Tensor], min_prob: float = 1e-6) -> Categorical:
        return Categorical(out["pi"], min_prob)


class MultiCategoricalFamily:
    """MultiDiscrete(nvec): ``MultiCategorical(out["pi"], nvec)``."""

    outputs = ("pi",)

    def __init__(self, nvec: Sequence[int]) -> None:
        self.nvec = [int(n) for n in nvec]

    def __call__(self, out: Mapping[str, Tensor], min_prob: float = 1e-6) -> MultiCategorical:
        return MultiCategorical(out["pi"], self.nvec, min_prob)


class GaussianFamily:
    """Box: ``DiagGaussian(mean, std)``, or with ``low``/``high`` given, ``TanhGaussian`` inside them."""

    outputs = ("mean", "std")

    def __init__(self, low: Sequence[float] | None = None, high: Sequence[float] | None = None) -> None:
        if (low is None) != (high is None):
            raise ValueError("a squashed Gaussian needs both low and high")
        self.low = None if low is None else [float(x) for x in low]
        self.high = None if high is None else [float(x) for x in high]

    @property
    def squashed(self) -> bool:
        return self.low is not None

    def __call__(self, out: Mapping[str, Tensor], min_prob: float = 1e-6) -> DiagGaussian | TanhGaussian:
        if self.low is None:
            return DiagGaussian(out["mean"], out["std"])
        return TanhGaussian(out["mean"], out["std"], self.low, self.high)


class DeterministicFamily:
    """Box, deterministic actor (DDPG, TD3): ``Deterministic(out["action"])``; ``low`` and
    ``high`` are the bounds its actions lie in (exploration noise is clipped to them)."""

    outputs = ("action",)

    def __init__(self, low: Sequence[float], high: Sequence[float]) -> None:
        self.low = [float(x) for x in low]
        self.high = [float(x) for x in high]

    def __call__(self, out: Mapping[str, Tensor], min_prob: float = 1e-6) -> Deterministic:
        return Deterministic(out["action"])


class DictFamily:
    """Dict: one family per action key, reading the outputs prefixed ``key.``."""

    def __init__(self, parts: Mapping[str, Any]) -> None:
        self.parts = dict(parts)
        self.outputs = tuple(f"{key}.{name}" for key, part in self.parts.items() for name in part.outputs)

    def __call__(self, out: Mapping[str, Tensor], min_prob: float = 1e-6) -> DictDistribution:
        return DictDistribution(
            {
                key: part({name: out[f"{key}.{name}"] for name in part.outputs}, min_prob)
                for key, part in self.parts.items()
            }
        )


# --- what the actor and the methods read of a model's policy ----------------------

# The key an actor replies to describe its behaviour policy: ``pi``, the whole
# distribution, for one discrete action (kept as it was: exact and cheap);
# ``logp``, the log-probability of the action it took, for every other space.
BEHAVIOUR_PI = "pi"
BEHAVIOUR_LOGP = "logp"


def policy_family(model: Any) -> Any:
    """The distribution family of ``model``'s policy head (``model.policy_family``;
    categorical for models that do not say)."""
    return getattr(model, "policy_family", None) or CategoricalFamily()


def is_categorical(family: Any) -> bool:
    return isinstance(family, CategoricalFamily)


def behaviour_key(family: Any) -> str:
    """The reply key describing the behaviour policy of a policy of ``family``."""
    return BEHAVIOUR_PI if is_categorical(family) else BEHAVIOUR_LOGP


def policy_of(family: Any, out: Mapping[str, Tensor], min_prob: float = 1e-6) -> Tensor | Distribution:
    """The policy in model outputs ``out``: the probabilities ``pi`` for a categorical
    family (the methods' probability path), else the family's ``Distribution``."""
    return out["pi"] if is_categorical(family) else family(out, min_prob)


# Where actions live in batches: one action is the key ``a``; a Dict action is
# one key per entry, named by the entry (the game's action keys, elfpy.gym_host),
# so the actor replies, and windows carry, one plain array per entry.


def action_columns(family: Any, batch: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """The keys of ``batch`` holding the actions of a ``family`` policy: ``a``, or a Dict's entries."""
    keys = family.parts if isinstance(family, DictFamily) else ("a",)
    return {key: batch[key] for key in keys}


def actions_in(family: Any, batch: Mapping[str, Tensor]) -> Tensor | dict[str, Tensor]:
    """The actions of ``batch`` as its ``family``'s distributions take them:
    ``a``, or for a Dict the mapping entry -> its key's tensor."""
    columns = action_columns(family, batch)
    return columns if isinstance(family, DictFamily) else columns["a"]


def action_replies(a: Tensor | Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Sampled actions as reply keys: ``a``, or a Dict action's entries under their own keys."""
    return dict(a) if isinstance(a, Mapping) else {"a": a}
