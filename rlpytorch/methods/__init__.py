"""RL methods, each a short composable part whose docstring states its formula.

``ActorCritic = PolicyGradient + (DiscountedReward | GAE | LambdaReturn |
FinalReward) + ValueMatcher``; ``PPO = ClippedPolicyGradient + (GAE | ...) +
ValueMatcher`` over several minibatch passes per window. All inputs are
time-major ``[T, B, ...]``.
"""

from .actor_critic import RETURNS, ActorCritic
from .clipped_policy_gradient import ClippedPolicyGradient
from .discounted_reward import DiscountedReward
from .final_reward import FinalReward
from .gae import GAE
from .lambda_return import LambdaReturn
from .policy_gradient import PolicyGradient
from .ppo import PPO
from .value_matcher import ValueMatcher
from .window import final_values, forward_window, masked_mean, normalized, returns_of, window_cuts

METHODS = {"actor_critic": ActorCritic, "ppo": PPO}

__all__ = [
    "GAE",
    "METHODS",
    "PPO",
    "RETURNS",
    "ActorCritic",
    "ClippedPolicyGradient",
    "DiscountedReward",
    "FinalReward",
    "LambdaReturn",
    "PolicyGradient",
    "ValueMatcher",
    "final_values",
    "forward_window",
    "masked_mean",
    "normalized",
    "returns_of",
    "window_cuts",
]
