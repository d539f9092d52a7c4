"""The callbacks of off-policy actor-critic training on Box actions (DDPG, TD3, SAC).

``OffPolicyTrainer`` is the ``ValueTrainer`` (replay, replay ratio, learning
starts, actor copy) with another actor: the acting copy's policy explored by
``Exploration`` (uniform random actions for the first ``learning_starts``
frames, then Gaussian noise on a deterministic actor, or the squashed
Gaussian's own samples), replying ``a``. ``offpolicy_interface`` gathers the
learner (an ``ActorQ``), its acting copy, its target network and one optimizer
per learned part: ``critic`` (the critics) and ``policy`` (the actor and, for
a Gaussian actor, the temperature).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from .exploration import Exploration
from .model_interface import ModelInterface
from .models.actor_q import ActorQ
from .trainer import to_tensors
from .value_trainer import ValueTrainer

__all__ = ["OffPolicyTrainer", "offpolicy_interface"]


def offpolicy_interface(model: ActorQ, mi: ModelInterface | None = None) -> ModelInterface:
    """``mi`` (its optimizer settings) holding ``model`` (the learner, saved in checkpoints),
    its ``actor`` copy and ``target`` network, and the optimized parts ``critic`` and
    ``policy``, each with its own optimizer. A Gaussian actor's temperature is
    optimized with the actor: their losses share no parameter, so one Adam over
    both, stepped on the sum of the two losses, is one backward pass where two
    Adams would take two, with the same updates."""
    mi = mi or ModelInterface()
    mi.add_model("model", model)
    for name, copy in (("actor", model.clone()), ("target", model.clone())):
        mi.add_model(name, copy).requires_grad_(False)
    mi.add_model("critic", model.critics, optimize=True)
    policy = model.actor if model.temperature is None else nn.ModuleList([model.actor, model.temperature])
    mi.add_model("policy", policy, optimize=True)
    return mi


@dataclass(eq=False)
class OffPolicyTrainer(ValueTrainer):
    """Actor and train callbacks over ``mi`` (``offpolicy_interface``) and a ``Replay``."""

    sampler: Exploration  # type: ignore[assignment]  # the actor's exploration, in the sampler's place
    interface = staticmethod(offpolicy_interface)  # the learner, actor copy, target, critic and policy parts

    def actor(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Reply the explored action ``a`` for every row; record finished episodes."""
        first_frame = self.frames
        self.record_acting(batch)
        model = self.mi["actor"]
        with torch.inference_mode():
            policy = model.policy(model.encode(to_tensors(batch, model.obs_keys, self.device)))
        return {"a": self.sampler(policy, first_frame).numpy()}

    def exploration_stats(self) -> dict[str, float]:
        return {}
