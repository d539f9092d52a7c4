"""Off-policy-corrected policy gradient with an entropy bonus."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..core.args_provider import Configurable, above, setting
from ..core.distributions import Distribution
from ..core.settings import entropy_coef_setting, min_prob_setting
from .window import mask_weights


def entropy_of(pi: Tensor, min_prob: float) -> Tensor:
    """``H(pi) = -sum_a pi_a log pi_a`` over the last axis (log floored at ``min_prob``)."""
    return -(pi * pi.clamp(min=min_prob).log()).sum(-1)


@dataclass
class PolicyGradient(Configurable):
    """``loss = -mean_t[ rho_t A_t log pi(a_t|s_t) ] - beta mean_t H(pi(.|s_t))``

    with the truncated importance weight ``rho_t = min(pi(a_t|s_t) / mu(a_t|s_t), c)``
    (detached), where ``mu`` is the behaviour policy the actor sampled from (the
    stored ``pi``), ``c`` is ``ratio_clamp`` and ``beta`` is ``entropy_coef``.
    The advantage ``A`` is taken as given (detached). Means run over the rows of
    ``mask``. Probabilities are floored at ``min_prob`` before the log.

    Inputs: ``pi`` and ``mu`` ``[T, B, A]``, ``a`` (int) ``advantage`` and
    ``mask`` ``[T, B]``. Any other action space: ``pi`` a ``Distribution`` and
    ``mu`` the behaviour log-probability ``log mu(a_t|s_t)`` ``[T, B]`` (the actor's
    ``logp``), so ``rho_t = min(exp(log pi(a_t|s_t) - log mu(a_t|s_t)), c)``, a ratio
    of densities for Box actions; ``H`` is the distribution's entropy.
    Returns the loss and a dict of float stats.
    """

    entropy_coef: float = entropy_coef_setting()
    ratio_clamp: float = setting(1.0, "c in the truncated importance weight min(pi/mu, c)", bounds=above(0))
    min_prob: float = min_prob_setting()

    def __call__(
        self, pi: Tensor | Distribution, mu: Tensor, a: Tensor, advantage: Tensor, mask: Tensor
    ) -> tuple[Tensor, dict[str, float]]:
        if isinstance(pi, Distribution):
            log_pi_a = pi.log_prob(a)
            with torch.no_grad():
                ratio = (log_pi_a - mu).exp().clamp(max=self.ratio_clamp)
            entropy = pi.entropy()
        else:
            index = a.long().unsqueeze(-1)
            log_pi = pi.clamp(min=self.min_prob).log()  # one log serves the action and the entropy
            log_pi_a = log_pi.gather(-1, index).squeeze(-1)
            with torch.no_grad():
                pi_a = pi.gather(-1, index).squeeze(-1)
                mu_a = mu.gather(-1, index).squeeze(-1)
                ratio = (pi_a / mu_a.clamp(min=self.min_prob)).clamp(max=self.ratio_clamp)
            entropy = -(pi * log_pi).sum(-1)
        weight = mask_weights(mask, log_pi_a.dtype)  # 1/n on the n rows of mask
        policy_loss = -(ratio * advantage.detach() * weight * log_pi_a).sum()
        entropy_mean = (entropy * weight).sum()
        stats = {
            "policy_loss": policy_loss.item(),
            "entropy": entropy_mean.item(),
            "ratio": (ratio * weight).sum().item(),
        }
        return policy_loss - self.entropy_coef * entropy_mean, stats
