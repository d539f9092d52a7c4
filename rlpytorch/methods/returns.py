"""The returns part of ``ActorCritic`` and ``PPO``: what one is, and the built-in ones by name.

A returns part is any callable ``(r, terminal, V, cut, final_value) -> R`` on a
window's ``[T, B]`` tensors (``Returns``; ``window.returns_of`` calls it): the
value targets, which also make the advantages ``R - V``. A method takes one as
a value, a built-in one (``GAE(0.99, 0.95)``) or one of your own::

    ActorCritic(returns=GAE(gamma=0.99, gae_lambda=0.9))
    PPO(returns=MyReturns(...))          # picklable, for --runner multi's learner process

or by name (``returns="gae"``, ``--returns gae`` on the command line), the
built-in part then built from the method's ``gamma``, ``gae_lambda`` and
``td_lambda`` settings (a part given as a value carries its own).
"""

from __future__ import annotations

from typing import Protocol

from torch import Tensor

from ..core.settings import RETURNS
from .discounted_reward import DiscountedReward
from .final_reward import FinalReward
from .gae import GAE
from .lambda_return import LambdaReturn

__all__ = ["RETURNS", "Returns", "returns_part"]


class Returns(Protocol):
    """Targets ``R`` ``[T, B]`` of a window: ``r``, ``terminal``, ``V`` (detached) and
    ``cut`` ``[T, B]``, ``final_value`` ``V(final_s)`` on truncated terminal rows or None
    (``DiscountedReward`` states the conventions; rows at cuts are masked out of the losses)."""

    def __call__(
        self, r: Tensor, terminal: Tensor, V: Tensor, cut: Tensor, final_value: Tensor | None = None
    ) -> Tensor: ...




def returns_part(returns: str | Returns, gamma: float, gae_lambda: float, td_lambda: float) -> Returns:
    """``returns`` itself when it is a part, else the built-in part it names (one of ``RETURNS``)."""
    if isinstance(returns, str):
        if returns not in RETURNS:
            raise ValueError(f"unknown returns {returns!r}; choose from {RETURNS} or pass a returns part")
        return {
            "discounted": lambda: DiscountedReward(gamma),
            "gae": lambda: GAE(gamma, gae_lambda),
            "lambda": lambda: LambdaReturn(gamma, td_lambda),
            "final": FinalReward,
        }[returns]()
    if not callable(returns):
        raise TypeError(f"returns must be one of {RETURNS} or a returns part, a callable "
                        f"(r, terminal, V, cut, final_value) -> R; got {returns!r}")
    return returns
