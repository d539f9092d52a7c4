"""RL methods, each a short composable part whose docstring states its formula.

``ActorCritic = PolicyGradient + (DiscountedReward | GAE | LambdaReturn |
FinalReward) + ValueMatcher``. All inputs are time-major ``[T, B, ...]``.
"""

from .actor_critic import RETURNS, ActorCritic
from .discounted_reward import DiscountedReward
from .final_reward import FinalReward
from .gae import GAE
from .lambda_return import LambdaReturn
from .policy_gradient import PolicyGradient
from .value_matcher import ValueMatcher
from .window import masked_mean, window_cuts

METHODS = {"actor_critic": ActorCritic}

__all__ = [
    "GAE",
    "RETURNS",
    "ActorCritic",
    "DiscountedReward",
    "FinalReward",
    "LambdaReturn",
    "PolicyGradient",
    "ValueMatcher",
    "masked_mean",
    "window_cuts",
]
