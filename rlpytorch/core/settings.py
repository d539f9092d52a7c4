"""Settings that several components declare, each stated once here.

A setting is a dataclass field (``core.args_provider.setting``: its default,
help, type and bounds). Most belong to one component and are declared where
it is; those below are fields of several components (the discount of every
method, the device of training and of evaluation, ...), so each component
declares its field with the one factory here, e.g.
``gamma: float = gamma_setting()``, and the default and help are written once.
"""

from __future__ import annotations

from typing import Any

from .args_provider import Bounds, at_least, setting
from .devices import device_name

__all__ = [
    "RETURNS",
    "actor_device_setting",
    "actor_sync_setting",
    "device_setting",
    "double_setting",
    "entropy_coef_setting",
    "gae_lambda_setting",
    "gamma_setting",
    "grad_clip_setting",
    "learner_device_setting",
    "min_prob_setting",
    "net_arch_setting",
    "progress_setting",
    "recurrence_setting",
    "returns_setting",
    "save_dir_setting",
    "td_lambda_setting",
    "torch_threads_setting",
]

RETURNS = ("discounted", "gae", "lambda", "final")  # the built-in returns parts, by name (methods.returns)


def torch_threads_setting() -> Any:
    """Torch's intra-op threads, a setting of training and of evaluation."""
    return setting(1, "intra-op threads of torch (small models: 1 is fastest)", bounds=at_least(1))


def device_setting() -> Any:
    """The torch device, a setting of training and of evaluation."""
    return setting("cpu", "torch device of models and batches: cpu, cuda, cuda:1, ...", check=device_name)


def actor_device_setting() -> Any:
    """Where the acting model runs, a setting of every trainer."""
    return setting("", "torch device of the acting model (empty: --device)", check=device_name)


def learner_device_setting() -> Any:
    """Where the learner runs, a setting of every trainer."""
    return setting("", "torch device of the learner and its train windows (empty: --device)",
                   check=device_name)


def actor_sync_setting() -> Any:
    """How often the acting copy follows the learner, a setting of every trainer."""
    return setting(1, "copy the learner into the actor every N updates", bounds=at_least(1))


def double_setting() -> Any:
    """``--double``, a setting of DQN and R2D2."""
    return setting(True, "Double DQN: the learner picks the bootstrap action, the target network values it")


def gamma_setting() -> Any:
    """The discount factor, a setting of every method."""
    return setting(0.99, "discount factor", bounds=Bounds(0, 1))


def grad_clip_setting() -> Any:
    """The gradient norm clip, a setting of every actor-critic-style method."""
    return setting(0.5, "max global gradient norm (0: no clipping)", bounds=at_least(0))


def returns_setting(default: str) -> Any:
    """The ``returns`` field of a method: a built-in part's name (the command line's) or a part."""
    return setting(default, "how value targets are computed: the built-in returns part of this name",
                   choices=RETURNS)


def gae_lambda_setting() -> Any:
    """GAE's lambda, a setting of ActorCritic and PPO (for ``--returns gae``)."""
    return setting(0.95, "GAE lambda (used when --returns gae)", bounds=Bounds(0, 1))


def td_lambda_setting() -> Any:
    """The lambda-return's lambda, a setting of ActorCritic and PPO (``--returns lambda``)."""
    return setting(0.95, "lambda of the lambda-return (used when --returns lambda)", bounds=Bounds(0, 1))


def recurrence_setting() -> Any:
    """How far a method back-propagates through a recurrent model, a setting of every method."""
    return setting(
        0,
        "recurrent models: back-propagate through at most N steps, replaying each N-step chunk "
        "from its stored state (0: the whole window)",
        bounds=at_least(0),
    )


def entropy_coef_setting() -> Any:
    """The entropy bonus weight, a setting of every policy-gradient part."""
    return setting(0.01, "weight beta of the entropy bonus", bounds=at_least(0))


def min_prob_setting() -> Any:
    """The probability floor before logs, a setting of every policy-gradient part."""
    return setting(1e-6, "floor on probabilities before taking logs",
                   bounds=Bounds(0, 1, low_open=True, high_open=True))


def net_arch_setting() -> Any:
    """Hidden widths of the actor and critic MLPs, a setting of ``actor_q`` and ``seat_actor_q``."""
    return setting("256,256", "actor_q models: hidden widths of the actor and of each critic")


def save_dir_setting() -> Any:
    """``--save_dir``, a setting of every script that writes a run folder."""
    return setting(
        "runs/{time}",
        "the run's folder: configuration, command line, versions, logs, checkpoints "
        "({time}: the start time; empty: write nothing)",
    )


def progress_setting() -> Any:
    """Whether to show a progress bar, a setting of training and of evaluation."""
    return setting(True, "show a progress bar (on a terminal only)")
