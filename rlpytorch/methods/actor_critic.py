"""Advantage actor-critic, composed from its parts (ELF's ActorCritic)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from torch import Tensor

from ..core.args_provider import Configurable, part, setting
from ..core.distributions import actions_in, behaviour_key, policy_family, policy_of
from ..core.settings import (
    gae_lambda_setting,
    gamma_setting,
    grad_clip_setting,
    recurrence_setting,
    returns_setting,
    td_lambda_setting,
)
from ..models.base import Model
from ..models.interface import ModelInterface
from .policy_gradient import PolicyGradient
from .returns import Returns, returns_part
from .value_matcher import ValueMatcher
from .window import forward_window, normalized, returns_of


@dataclass(eq=False)
class ActorCritic(Configurable):
    """``loss = PolicyGradient(pi, mu, a, R - V) + ValueMatcher(V, R)``.

    ``R`` comes from the ``returns`` part (``methods.returns``): a part given as a
    value, or the built-in one named ``discounted`` (``DiscountedReward``), ``gae``,
    ``lambda`` (``LambdaReturn``) or ``final`` (``FinalReward``), each bootstrapped
    from the learner's own detached value at the window's end (and from
    ``V(final_s)`` at a time-limit truncation). After construction ``returns`` is the part.
    ``mu`` is the behaviour policy ``pi`` the actor stored, so a lagging actor
    is corrected by ``min(pi/mu, c)``; for actions other than one discrete one,
    ``mu`` is the actor's ``logp`` of its action and ``pi/mu`` a ratio of
    densities. With ``norm_adv`` the advantages ``R - V`` of a window are
    normalised to zero mean and unit std first. After backward the global
    gradient norm is clipped to ``grad_clip`` (0: no clipping). A recurrent model is replayed
    from its stored states with back-propagation truncated to ``recurrence`` steps.

    The batch is a dict of time-major ``[T, B, ...]`` tensors with the model's
    observation keys, ``a``, ``pi``, ``r``, ``terminal`` and optionally
    ``truncated``, ``final_<key>``, ``V`` (the actor's values, for value
    clipping) and ``h`` (recurrent states).
    """

    # The parts first, in the order of the sum (ELF's ActorCritic(PolicyGradient(...), DiscountedReward(...),
    # ValueMatcher())), so that they may be given positionally; then the settings.
    policy_gradient: PolicyGradient = part(PolicyGradient)
    returns: str | Returns = returns_setting("discounted")
    value_matcher: ValueMatcher = part(ValueMatcher)
    gamma: float = gamma_setting()
    gae_lambda: float = gae_lambda_setting()
    td_lambda: float = td_lambda_setting()
    grad_clip: float = grad_clip_setting()
    norm_adv: bool = setting(False, "normalise the advantages of each window to zero mean and unit std")
    recurrence: int = recurrence_setting()

    # Settings of other components that suit ActorCritic (rlpytorch.train applies
    # them as defaults; a config file and the command line override them). On
    # CartPole the learning rate decides robustness: with 1e-3 (and its linear
    # decay over the 1M-frame budget) some seeds end below a greedy 475 (3 of
    # 5 reached 500); with 2e-3 all did. See docs/results/2026-11-26-cartpole-training.md.
    run_defaults: ClassVar[Mapping[str, Any]] = {"lr": 2e-3}

    def __post_init__(self) -> None:
        self.check_parts()
        self.returns = returns_part(self.returns, self.gamma, self.gae_lambda, self.td_lambda)

    def loss(self, model: Model, batch: Mapping[str, Tensor]) -> tuple[Tensor, dict[str, float]]:
        """The summed loss on one window, and the stats of each part."""
        out = forward_window(model, batch, self.recurrence)
        family = policy_family(model)
        pi, V = policy_of(family, out, self.policy_gradient.min_prob), out["V"]
        R, mask = returns_of(self.returns, model, batch, V, out.get("states_in"))
        advantage = R - V.detach()
        if self.norm_adv:
            advantage = normalized(advantage, mask)
        a = actions_in(family, batch)
        pg_loss, pg_stats = self.policy_gradient(pi, batch[behaviour_key(family)], a, advantage, mask)
        v_loss, v_stats = self.value_matcher(V, R, mask, batch.get("V"))
        return pg_loss + v_loss, {**pg_stats, **v_stats}

    def update(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> dict[str, float]:
        """One optimizer step of ``mi["model"]`` on ``batch``; returns the stats."""
        model = mi["model"]
        loss, stats = self.loss(model, batch)
        grad_norm = mi.step("model", loss, self.grad_clip)
        model.increment_step()
        return {**stats, "loss": loss.item(), "grad_norm": grad_norm}
