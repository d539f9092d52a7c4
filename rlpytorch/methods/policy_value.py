"""AlphaZero's loss: the policy learns the search's visit distribution and the
value the game's outcome."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..core.args_provider import Configurable, at_least, setting

__all__ = ["PolicyValueLoss"]


@dataclass(eq=False)
class PolicyValueLoss(Configurable):
    """``loss = mean_i [ -sum_a pi_i(a) log p_i(a) + value_coef * (z_i - v_i)^2 ]``

    ``pi`` ``[B, A]`` the search's visit distribution, ``p = softmax(logits)``
    over the legal moves (``legal`` ``[B, A]``; a target puts no mass on an
    illegal move), ``z`` ``[B]`` the outcome for the side to move (+1 win, -1
    loss), ``v`` ``[B]`` the value head. L2 regularisation is the optimizer's
    weight decay. Returns the loss and float stats (policy and value parts,
    and the target entropy, the floor of the policy part).
    """

    value_coef: float = setting(1.0, "weight of the value loss", bounds=at_least(0))

    def __call__(self, logits: Tensor, value: Tensor, legal: Tensor, pi: Tensor,
                 z: Tensor) -> tuple[Tensor, dict[str, float]]:
        log_p = torch.log_softmax(logits.masked_fill(legal == 0, float("-inf")), dim=-1)
        log_p = log_p.masked_fill(legal == 0, 0.0)  # 0 * -inf would be nan; pi is 0 there
        policy_loss = -(pi * log_p).sum(-1).mean()
        value_loss = (z - value).pow(2).mean()
        entropy = -(pi * torch.log(pi.clamp_min(1e-12))).sum(-1).mean()
        loss = policy_loss + self.value_coef * value_loss
        return loss, {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
                      "target_entropy": entropy.item()}
