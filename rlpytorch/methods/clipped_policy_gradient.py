"""PPO's clipped surrogate objective (Schulman et al., 2017), with an entropy bonus."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..core.args_provider import Configurable, above, setting
from ..core.distributions import Distribution
from ..core.settings import entropy_coef_setting, min_prob_setting
from .policy_gradient import entropy_of
from .window import masked_mean


@dataclass
class ClippedPolicyGradient(Configurable):
    """``loss = -mean_t min(rho_t A_t, clip(rho_t, 1 - eps, 1 + eps) A_t) - beta mean_t H(pi(.|s_t))``

    with the ratio ``rho_t = pi(a_t|s_t) / mu(a_t|s_t)`` kept in the graph (the
    gradient flows through it), ``mu`` the behaviour policy the actor sampled
    from (the stored ``pi``), ``eps`` = ``clip_eps`` and ``beta`` =
    ``entropy_coef``. The advantage ``A`` is taken as given (detached). Means
    run over the rows of ``mask``; probabilities are floored at ``min_prob``.

    Stats besides the loss and entropy: the mean ratio, ``clip_fraction`` (rows
    with ``|rho - 1| > eps``) and ``approx_kl``, ``mean((rho - 1) - log rho)``,
    an unbiased, non-negative estimate of ``KL(mu || pi)`` (for early stopping).

    Inputs: ``pi`` and ``mu`` ``[T, B, A]``, ``a`` (int) ``advantage`` and
    ``mask`` ``[T, B]``. Any other action space: ``pi`` a ``Distribution`` and
    ``mu`` the behaviour log-probability ``log mu(a_t|s_t)`` ``[T, B]``, so
    ``rho_t = exp(log pi(a_t|s_t) - log mu(a_t|s_t))`` (densities for Box actions).
    Returns the loss and a dict of float stats.
    """

    clip_eps: float = setting(0.2, "eps of the clipped ratio clip(pi/mu, 1 - eps, 1 + eps)", bounds=above(0))
    entropy_coef: float = entropy_coef_setting()
    min_prob: float = min_prob_setting()

    def __call__(
        self, pi: Tensor | Distribution, mu: Tensor, a: Tensor, advantage: Tensor, mask: Tensor
    ) -> tuple[Tensor, dict[str, float]]:
        if isinstance(pi, Distribution):
            log_pi_a, log_mu_a, entropy = pi.log_prob(a), mu, pi.entropy()
        else:
            index = a.long().unsqueeze(-1)
            log_pi_a = pi.gather(-1, index).squeeze(-1).clamp(min=self.min_prob).log()
            log_mu_a = mu.gather(-1, index).squeeze(-1).clamp(min=self.min_prob).log()
            entropy = entropy_of(pi, self.min_prob)
        log_ratio = log_pi_a - log_mu_a.detach()
        ratio = log_ratio.exp()
        advantage = advantage.detach()
        clipped = ratio.clamp(1.0 - self.clip_eps, 1.0 + self.clip_eps)
        policy_loss = -masked_mean(torch.minimum(ratio * advantage, clipped * advantage), mask)
        entropy_mean = masked_mean(entropy, mask)
        rho = ratio.detach()
        stats = {
            "policy_loss": policy_loss.item(),
            "entropy": entropy_mean.item(),
            "ratio": masked_mean(rho, mask).item(),
            "clip_fraction": masked_mean(((rho - 1.0).abs() > self.clip_eps).float(), mask).item(),
            "approx_kl": masked_mean((rho - 1.0) - log_ratio.detach(), mask).item(),
        }
        return policy_loss - self.entropy_coef * entropy_mean, stats

