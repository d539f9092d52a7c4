"""Proximal policy optimisation, composed from its parts (Schulman et al., 2017)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from ..args_provider import Arg, Configurable
from ..distributions import behaviour_key, policy_family, policy_of
from ..model_base import Model
from ..model_interface import ModelInterface
from .actor_critic import RETURNS, make_returns
from .clipped_policy_gradient import ClippedPolicyGradient
from .gae import GAE
from .lambda_return import LambdaReturn
from .value_matcher import ValueMatcher
from .window import RECURRENCE, forward_window, normalized, returns_of


class PPO(Configurable):
    """``loss = ClippedPolicyGradient(pi, mu, a, norm(A)) + ValueMatcher(V, R, V_old)``, several passes per window.

    On each ``[T, B]`` window:

    1. targets ``R`` from the returns part (``--returns``, GAE by default) with
       the learner's values ``V_old`` before this window's updates (bootstrapped
       at the window's end and at time-limit truncations, as in ``ActorCritic``);
       advantages ``A = R - V_old``;
    2. ``ppo_epochs`` passes over the window's trained rows (all but the last),
       each in ``minibatches`` random minibatches of *sequences*: single rows
       for a feed-forward model; ``recurrence``-row pieces (0: the whole
       window) for a recurrent one, each replayed from the state ``h`` stored
       at its first row;
    3. per minibatch: advantages normalised to mean 0 and std 1 (``norm_adv``),
       one optimizer step with the global gradient norm clipped to ``grad_clip``;
       the remaining passes over the window are skipped once the approximate
       KL divergence from the behaviour policy exceeds ``1.5 target_kl``
       (``target_kl`` 0: never).

    ``mu`` is the behaviour policy ``pi`` the actor stored (for actions other
    than one discrete one, its ``logp``), so the ratio is exact however stale
    the actor. Batch keys as ``ActorCritic``.
    """

    args = (
        Arg("gamma", 0.99, "discount factor"),
        Arg("returns", "gae", "how value targets are computed", choices=RETURNS),
        Arg("grad_clip", 0.5, "max global gradient norm (0: no clipping)"),
        Arg("ppo_epochs", 4, "passes over each window"),
        Arg("minibatches", 2, "minibatches per pass"),
        Arg("norm_adv", True, "normalise advantages per minibatch"),
        Arg("target_kl", 0.0, "stop a window's passes when approx KL > 1.5 x this (0: never)"),
        RECURRENCE,
    )

    # Settings of other components that suit PPO (train.py applies them as defaults).
    run_defaults: Mapping[str, Any] = {"T": 17, "lr": 3e-3}

    def __init__(
        self,
        policy_gradient: ClippedPolicyGradient,
        returns: Any,
        value_matcher: ValueMatcher,
        grad_clip: float = 0.5,
        ppo_epochs: int = 4,
        minibatches: int = 2,
        norm_adv: bool = True,
        target_kl: float = 0.0,
        recurrence: int = 0,
        seed: int | None = None,
    ) -> None:
        self.policy_gradient = policy_gradient
        self.returns = returns
        self.value_matcher = value_matcher
        self.grad_clip = grad_clip
        self.ppo_epochs = ppo_epochs
        self.minibatches = minibatches
        self.norm_adv = norm_adv
        self.target_kl = target_kl
        self.recurrence = recurrence
        self.seed = seed
        self._generator: torch.Generator | None = None  # made on first use: the method is pickled to learners

    @classmethod
    def arg_groups(cls) -> dict[str, tuple[Arg, ...]]:
        return {
            cls.__name__: cls.args,
            "ClippedPolicyGradient": ClippedPolicyGradient.args,
            "ValueMatcher": ValueMatcher.args,
            "GAE": GAE.args,
            "LambdaReturn": LambdaReturn.args,
        }

    @classmethod
    def from_config(cls, config: Mapping, **extra: Any) -> PPO:
        """Compose the method from ``config``: its parts take their own keys."""
        options = {**cls.defaults(), **config}
        own = {arg.name: options[arg.name] for arg in cls.args if arg.name not in ("gamma", "returns")}
        extra.setdefault("seed", options.get("seed"))
        return cls(
            ClippedPolicyGradient.from_config(options),
            make_returns(options["returns"], options),
            ValueMatcher.from_config(options),
            **own,
            **extra,
        )

    def update(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> dict[str, float]:
        """``ppo_epochs`` passes of minibatch steps of ``mi["model"]`` on one window."""
        model = mi["model"]
        with torch.no_grad():
            out = forward_window(model, batch, self.recurrence)
            V_old = out["V"]
            R, mask = returns_of(self.returns, model, batch, V_old, out.get("states_in"))
        data = {k: batch[k] for k in model.obs_keys}
        mu = batch[behaviour_key(policy_family(model))]
        data.update(a=batch["a"], mu=mu, terminal=batch["terminal"], R=R, A=R - V_old, V_old=V_old, mask=mask)
        length = self._sequence_length(model, batch["terminal"].shape[0] - 1)
        seqs, start_states = _sequences(data, length, batch.get("h") if model.state_size else None)
        count = seqs["mask"].shape[1]
        size = max(1, math.ceil(count / self.minibatches))
        totals: dict[str, float] = {}
        steps = 0
        stop = False
        for _ in range(self.ppo_epochs):
            order = torch.randperm(count, generator=self._shuffle_generator()).to(R.device)
            for first in range(0, count, size):
                cols = order[first : first + size]
                stats = self._step(mi, {k: v[:, cols] for k, v in seqs.items()},
                                   None if start_states is None else start_states[cols])
                for key, value in stats.items():
                    totals[key] = totals.get(key, 0.0) + value
                steps += 1
                if self.target_kl > 0 and stats["approx_kl"] > 1.5 * self.target_kl:
                    stop = True
                    break
            if stop:
                break
        model.increment_step()
        means = {key: value / steps for key, value in totals.items()}
        return {**means, "minibatch_steps": float(steps)}

    def __getstate__(self) -> dict[str, Any]:
        # A torch.Generator does not travel through torch.multiprocessing's pickler;
        # the copy reseeds its own.
        return {**self.__dict__, "_generator": None}

    def _shuffle_generator(self) -> torch.Generator:
        if self._generator is None:
            self._generator = torch.Generator()
            if self.seed is not None:
                self._generator.manual_seed(self.seed)
        return self._generator

    def _sequence_length(self, model: Model, rows: int) -> int:
        if not model.state_size:
            return 1
        return min(self.recurrence, rows) if self.recurrence > 0 else rows

    def _step(self, mi: ModelInterface, mb: Mapping[str, Tensor], state: Tensor | None) -> dict[str, float]:
        model = mi["model"]
        obs = {k: mb[k] for k in model.obs_keys}
        out = model(obs) if state is None else model(obs, state, mb["terminal"])
        advantage, mask = mb["A"], mb["mask"]
        if self.norm_adv:
            advantage = normalized(advantage, mask)
        pi = policy_of(policy_family(model), out, self.policy_gradient.min_prob)
        pg_loss, pg_stats = self.policy_gradient(pi, mb["mu"], mb["a"], advantage, mask)
        v_loss, v_stats = self.value_matcher(out["V"], mb["R"], mask, mb["V_old"])
        loss = pg_loss + v_loss
        grad_norm = mi.step("model", loss, self.grad_clip)
        return {**pg_stats, **v_stats, "loss": loss.item(), "grad_norm": grad_norm}


def _sequences(
    data: Mapping[str, Tensor], length: int, h: Tensor | None
) -> tuple[dict[str, Tensor], Tensor | None]:
    """Cut the trained rows ``0..T-2`` of ``[T, B, ...]`` tensors into ``[length, K B, ...]``
    sequences (column ``k B + b``: rows ``k length ..`` of game ``b``), padding
    the last piece with masked-out rows; and the stored state at each start."""
    rows = data["mask"].shape[0] - 1
    pieces = math.ceil(rows / length)
    padded = pieces * length
    out = {}
    for key, x in data.items():
        x = x[:rows]
        if padded > rows:
            x = torch.cat([x, x.new_zeros((padded - rows, *x.shape[1:]))])
        out[key] = x.reshape(pieces, length, *x.shape[1:]).transpose(0, 1).reshape(length, -1, *x.shape[2:])
    starts = None if h is None else h[:rows:length].reshape(-1, h.shape[-1])
    return out, starts
