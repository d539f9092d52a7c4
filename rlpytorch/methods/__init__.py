"""RL methods, each a short composable part whose docstring states its formula.

``ActorCritic = PolicyGradient + (DiscountedReward | GAE | LambdaReturn |
FinalReward | any Returns) + ValueMatcher``; ``PPO = ClippedPolicyGradient + (GAE | ...) +
ValueMatcher`` over several minibatch passes per window. Every part is a value
the method takes (``ActorCritic(returns=MyReturns(), value_matcher=ValueMatcher(value_coef=1.0))``, or
positionally in the sum's order, ``ActorCritic(PolicyGradient(entropy_coef=0.05), DiscountedReward(0.9),
ValueMatcher())``; a part in the wrong place is a ``TypeError``);
the command line builds the built-in ones from its settings (``--returns gae``). All inputs are
time-major ``[T, B, ...]``. The methods on replay (the DQN
family; DDPG, TD3, SAC on Box actions, and MADDPG on the joint transitions of
a game's seats) learn from replayed transitions ``[B, ...]``. Which trainer,
tags and replay each method runs with is its recipe's (``rlpytorch.recipes``).
The methods may import ``core``, ``acting``, ``models`` and ``replay``.
"""

from .actor_critic import ActorCritic
from .clipped_policy_gradient import ClippedPolicyGradient
from .ddpg import DDPG
from .discounted_reward import DiscountedReward
from .dqn import DQN
from .final_reward import FinalReward
from .gae import GAE
from .lambda_return import LambdaReturn
from .maddpg import MADDPG
from .policy_gradient import PolicyGradient
from .ppo import PPO
from .r2d2 import DRQN, R2D2
from .returns import RETURNS, Returns
from .sac import SAC
from .target_network import TargetNetwork
from .td3 import TD3
from .value_matcher import ValueMatcher
from .window import final_values, forward_window, masked_mean, normalized, returns_of, window_cuts

__all__ = [
    "DDPG",
    "DQN",
    "DRQN",
    "GAE",
    "MADDPG",
    "PPO",
    "R2D2",
    "RETURNS",
    "SAC",
    "TD3",
    "ActorCritic",
    "ClippedPolicyGradient",
    "DiscountedReward",
    "FinalReward",
    "LambdaReturn",
    "PolicyGradient",
    "Returns",
    "TargetNetwork",
    "ValueMatcher",
    "final_values",
    "forward_window",
    "masked_mean",
    "normalized",
    "returns_of",
    "window_cuts",
]
