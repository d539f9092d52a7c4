"""The bootstrapped target of Q-learning, plain or Double (van Hasselt et al., 2016)."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["greedy_next_action", "q_target"]


def greedy_next_action(q_online_next: Tensor | None, q_target_next: Tensor) -> Tensor:
    """``a* = argmax_a Q(x', a)`` with the learner's values (Double DQN), or
    ``argmax_a Q'(x', a)`` with the target network's when ``q_online_next`` is None."""
    return (q_target_next if q_online_next is None else q_online_next).argmax(-1)


def q_target(r: Tensor, discount: Tensor, q_target_next: Tensor, q_online_next: Tensor | None = None) -> Tensor:
    """``y = r + discount * Q'(x', a*)``, ``a*`` from ``greedy_next_action``.

    ``r`` is the (n-step) discounted reward sum and ``discount`` the
    ``gamma^k`` of the bootstrap (0 after a real episode end). Detached.
    """
    with torch.no_grad():
        a_star = greedy_next_action(q_online_next, q_target_next)
        next_value = q_target_next.gather(-1, a_star.unsqueeze(-1)).squeeze(-1)
        return r + discount * next_value
