"""Proximal policy optimisation, composed from its parts (Schulman et al., 2017)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor

from ..core.args_provider import Configurable, at_least, part, setting
from ..core.distributions import action_columns, actions_in, behaviour_key, policy_family, policy_of
from ..core.settings import (
    gae_lambda_setting,
    gamma_setting,
    grad_clip_setting,
    recurrence_setting,
    returns_setting,
    td_lambda_setting,
)
from ..models.base import Model
from ..models.interface import ModelInterface
from .clipped_policy_gradient import ClippedPolicyGradient
from .returns import Returns, returns_part
from .value_matcher import ValueMatcher
from .window import forward_window, normalized, returns_of


@dataclass(eq=False)
class PPO(Configurable):
    """``loss = ClippedPolicyGradient(pi, mu, a, norm(A)) + ValueMatcher(V, R, V_old)``, several passes per window.

    On each ``[T, B]`` window:

    1. targets ``R`` from the ``returns`` part (as ``ActorCritic``'s; GAE by default) with
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

    # The parts first, in the order of the sum (ELF's ActorCritic(PolicyGradient(...), DiscountedReward(...),
    # ValueMatcher())), so that they may be given positionally; then the settings.
    policy_gradient: ClippedPolicyGradient = part(ClippedPolicyGradient)
    returns: str | Returns = returns_setting("gae")
    value_matcher: ValueMatcher = part(ValueMatcher)
    gamma: float = gamma_setting()
    gae_lambda: float = gae_lambda_setting()
    td_lambda: float = td_lambda_setting()
    grad_clip: float = grad_clip_setting()
    ppo_epochs: int = setting(4, "passes over each window", bounds=at_least(1))
    minibatches: int = setting(2, "minibatches per pass", bounds=at_least(1))
    norm_adv: bool = setting(True, "normalise advantages per minibatch")
    target_kl: float = setting(0.0, "stop a window's passes when approx KL > 1.5 x this (0: never)", bounds=at_least(0))
    recurrence: int = recurrence_setting()
    seed: int | None = None  # of the minibatch order (the run's seed, given by whoever assembles the run)

    # Settings of other components that suit PPO (rlpytorch.train applies them as defaults).
    run_defaults: ClassVar[Mapping[str, Any]] = {"T": 17, "lr": 3e-3}

    def __post_init__(self) -> None:
        self.check_parts()
        self.returns = returns_part(self.returns, self.gamma, self.gae_lambda, self.td_lambda)
        self._generator: torch.Generator | None = None  # made on first use: the method is pickled to learners

    def update(self, mi: ModelInterface, batch: Mapping[str, Tensor]) -> dict[str, float]:
        """``ppo_epochs`` passes of minibatch steps of ``mi["model"]`` on one window."""
        model = mi["model"]
        with torch.no_grad():
            out = forward_window(model, batch, self.recurrence)
            V_old = out["V"]
            R, mask = returns_of(self.returns, model, batch, V_old, out.get("states_in"))
        data = {k: batch[k] for k in model.obs_keys}
        family = policy_family(model)
        data.update(action_columns(family, batch))
        # The mask as floats once: every mean over it (masked_mean, mask_weights) converts it to floats,
        # seven times a minibatch otherwise; the same 0s and 1s.
        data.update(mu=batch[behaviour_key(family)], terminal=batch["terminal"], R=R, A=R - V_old, V_old=V_old,
                    mask=mask.to(V_old.dtype))
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
                # index_select, not v[:, cols]: the same rows at a third of advanced indexing's cost
                stats = self._step(mi, {k: v.index_select(1, cols) for k, v in seqs.items()},
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

    def state_dict(self) -> dict[str, Any]:
        """The minibatch order's generator state (to resume a run)."""
        return {"generator": self._shuffle_generator().get_state()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self._shuffle_generator().set_state(state["generator"])

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
        family = policy_family(model)
        pi = policy_of(family, out, self.policy_gradient.min_prob)
        pg_loss, pg_stats = self.policy_gradient(pi, mb["mu"], actions_in(family, mb), advantage, mask)
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
