"""SAC's automatic entropy temperature (Haarnoja et al., 2018b)."""

from __future__ import annotations

from torch import Tensor

__all__ = ["temperature_loss"]


def temperature_loss(log_alpha: Tensor, log_prob: Tensor, target_entropy: float) -> Tensor:
    """``J(alpha) = -mean_i log_alpha * (log pi(a_i|s_i) + H_target)``, ``a_i ~ pi(.|s_i)``
    (``log_prob`` detached).

    Its gradient ``-mean(log pi + H_target)`` is positive when the policy's entropy
    ``-mean log pi`` is above the target, so gradient descent lowers alpha (less
    entropy bonus), and negative below it, raising alpha.
    """
    return -(log_alpha * (log_prob.detach() + target_entropy)).mean()
