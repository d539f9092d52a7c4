"""PPO's parts on numbers worked by hand, and the composed method's passes over a window."""

import math

import pytest
import torch
from fakes import cartpole_window

from rlpytorch.methods import PPO, ClippedPolicyGradient, ValueMatcher
from rlpytorch.methods.ppo import _sequences
from rlpytorch.models import LSTMActorCritic, MLPActorCritic, ModelSettings
from rlpytorch.models.interface import ModelInterface


def col(*values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype).unsqueeze(1)


def surrogate_inputs():
    # row 0: rho = 0.75 / 0.5 = 1.5 with A = +2; row 1: rho = 0.5 / 0.8 = 0.625 with A = -1
    pi = torch.tensor([[[0.25, 0.75]], [[0.5, 0.5]]], requires_grad=True)
    mu = torch.tensor([[[0.5, 0.5]], [[0.8, 0.2]]])
    return pi, mu, col(1, 0, dtype=torch.int64), col(2.0, -1.0), col(True, True, dtype=torch.bool)


def test_clipped_surrogate_takes_the_pessimistic_clipped_term_and_stops_its_gradient():
    pi, mu, a, adv, mask = surrogate_inputs()
    loss, stats = ClippedPolicyGradient(clip_eps=0.2, entropy_coef=0.0)(pi, mu, a, adv, mask)
    # row 0: min(1.5 * 2, 1.2 * 2) = 2.4; row 1: min(0.625 * -1, 0.8 * -1) = -0.8
    assert loss.item() == pytest.approx(-(2.4 - 0.8) / 2)
    assert stats["clip_fraction"] == 1.0
    assert stats["ratio"] == pytest.approx((1.5 + 0.625) / 2)
    # k3 estimator: (rho - 1) - log rho, averaged
    kl = ((0.5 - math.log(1.5)) + (-0.375 - math.log(0.625))) / 2
    assert stats["approx_kl"] == pytest.approx(kl)
    loss.backward()
    assert pi.grad.abs().sum().item() == 0.0  # both rows clipped: no gradient


def test_unclipped_surrogate_differentiates_through_the_ratio():
    pi, mu, a, adv, mask = surrogate_inputs()
    loss, stats = ClippedPolicyGradient(clip_eps=1.0, entropy_coef=0.0)(pi, mu, a, adv, mask)
    assert loss.item() == pytest.approx(-(1.5 * 2.0 - 0.625) / 2)
    assert stats["clip_fraction"] == 0.0
    loss.backward()
    # d/dpi_a of -(pi_a / mu_a) A / 2 = -A / (2 mu_a)
    assert pi.grad[0, 0].tolist() == pytest.approx([0.0, -2.0])
    assert pi.grad[1, 0].tolist() == pytest.approx([0.625, 0.0])


def test_clipped_surrogate_subtracts_the_entropy_bonus_over_the_mask():
    pi, mu, a, adv, _ = surrogate_inputs()
    mask = col(True, False, dtype=torch.bool)
    loss, stats = ClippedPolicyGradient(clip_eps=0.2, entropy_coef=0.1)(pi, mu, a, adv, mask)
    h0 = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert stats["entropy"] == pytest.approx(h0)
    assert loss.item() == pytest.approx(-2.4 - 0.1 * h0)


def test_value_clipping_keeps_the_larger_error_of_the_plain_and_clipped_value():
    V = col(3.0, 3.0).requires_grad_()
    target, V_old, mask = col(5.0, 0.0), col(1.0, 1.0), col(True, True, dtype=torch.bool)
    loss, stats = ValueMatcher(value_coef=1.0, value_clip=0.5)(V, target, mask, V_old)
    # row 0: plain 0.5 * 2^2 = 2, clipped 0.5 * (1.5 - 5)^2 = 6.125 -> 6.125
    # row 1: plain 0.5 * 3^2 = 4.5, clipped 0.5 * 1.5^2 = 1.125 -> 4.5
    assert loss.item() == pytest.approx((6.125 + 4.5) / 2)
    loss.backward()
    # the clipped term is flat in V (row 0); the plain one gives (V - R) / 2 (row 1)
    assert V.grad.squeeze(1).tolist() == pytest.approx([0.0, 1.5])


def test_value_clipping_is_off_by_default_and_without_old_values():
    V, target, V_old, mask = col(3.0), col(5.0), col(1.0), col(True, dtype=torch.bool)
    assert ValueMatcher(value_coef=1.0)(V, target, mask, V_old)[0].item() == pytest.approx(2.0)
    assert ValueMatcher(value_coef=1.0, value_clip=0.5)(V, target, mask)[0].item() == pytest.approx(2.0)


def test_sequences_cut_the_trained_rows_into_pieces_that_start_from_the_stored_state():
    T, B = 6, 2  # trained rows 0..4, pieces of 2: rows (0, 1), (2, 3), (4, pad)
    x = torch.arange(T * B).reshape(T, B)
    mask = torch.ones(T, B, dtype=torch.bool)
    h = torch.arange(T * B, dtype=torch.float32).reshape(T, B, 1) * 10
    seqs, starts = _sequences({"x": x, "mask": mask}, 2, h)
    assert seqs["x"].T.tolist() == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 0], [9, 0]]
    assert seqs["mask"].T.tolist() == [[True, True]] * 4 + [[True, False]] * 2
    assert starts.squeeze(1).tolist() == [0.0, 10.0, 40.0, 50.0, 80.0, 90.0]


def window():
    return cartpole_window(T=9, B=8, terminal_rate=0.1, state_size=128)


def test_ppo_takes_epochs_times_minibatches_steps_per_window():
    torch.manual_seed(0)
    mi = ModelInterface(lr=1e-3).add_actor_critic(MLPActorCritic((4,), 2, ModelSettings(hidden=8)))
    before = [p.detach().clone() for p in mi["model"].parameters()]
    stats = PPO.from_config({"ppo_epochs": 3, "minibatches": 4}, seed=0).update(mi, window())
    assert stats["minibatch_steps"] == 12
    assert mi["model"].step == 1
    assert any(not torch.equal(p, b) for p, b in zip(mi["model"].parameters(), before, strict=True))
    assert set(stats) >= {"policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "grad_norm"}


def test_ppo_stops_a_window_early_when_the_kl_passes_its_target():
    torch.manual_seed(0)
    mi = ModelInterface(lr=0.1).add_actor_critic(MLPActorCritic((4,), 2, ModelSettings(hidden=8)))
    batch = window()
    batch["pi"] = torch.tensor([0.9, 0.1]).expand(9, 8, 2)  # far from the model's near-uniform policy
    method = PPO.from_config({"ppo_epochs": 5, "minibatches": 2, "target_kl": 0.01}, seed=0)
    assert method.update(mi, batch)["minibatch_steps"] == 1


def test_ppo_replays_a_recurrent_model_in_pieces_of_recurrence_steps():
    torch.manual_seed(0)
    model = LSTMActorCritic((4,), 2, ModelSettings(hidden=8, core_hidden=64))
    mi = ModelInterface(lr=1e-3).add_actor_critic(model)
    seen = []
    forward = model.forward

    def spy(obs, state=None, reset=None):
        seen.append((obs["s"].shape[:2], None if state is None else tuple(state.shape)))
        return forward(obs, state, reset)

    model.forward = spy
    stats = PPO.from_config({"ppo_epochs": 1, "minibatches": 2, "recurrence": 4}, seed=0).update(mi, window())
    # the whole window in pieces of 4 from the stored states (targets), then 2 minibatches of
    # the 8 trained rows cut into 2 pieces x 8 games = 16 sequences
    assert seen[:3] == [((4, 8), (8, 128)), ((4, 8), (8, 128)), ((1, 8), (8, 128))]
    assert seen[3:] == [((4, 8), (8, 128)), ((4, 8), (8, 128))]
    assert stats["minibatch_steps"] == 2


def minibatch_columns(method: PPO, batch) -> list[list[int]]:
    """The window columns (row t, game b: ``t B + b``) of each minibatch ``method``
    steps on, in order, read back from their (distinct, random) observations."""
    torch.manual_seed(0)
    mi = ModelInterface(lr=1e-3).add_actor_critic(MLPActorCritic((4,), 2, ModelSettings(hidden=8)))
    rows = batch["s"][:-1].reshape(-1, 4)  # the trained rows 0..T-2, in column order
    seen = []
    step = method._step

    def recording_step(mi, mb, state):
        observations = mb["s"].reshape(-1, 4)
        seen.append([int((rows == o).all(-1).nonzero()) for o in observations])
        return step(mi, mb, state)

    method._step = recording_step
    method.update(mi, batch)
    return seen


def test_ppo_travels_to_a_learner_process_and_shuffles_the_same_there():
    import io
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing  # noqa: F401  (registers torch's shared-memory reductions)

    batch = cartpole_window(T=9, B=8, terminal_rate=0.1)
    settings = {"ppo_epochs": 2, "minibatches": 4}
    buffer = io.BytesIO()
    ForkingPickler(buffer).dump(PPO.from_config(settings, seed=3))  # as MultiProcessRun sends it to its learner
    travelled = minibatch_columns(ForkingPickler.loads(buffer.getvalue()), batch)
    here = minibatch_columns(PPO.from_config(settings, seed=3), batch)
    assert travelled == here  # the same minibatches, in the same order

    # ...and that order is a shuffle: each pass a partition of the 64 trained columns into 4 random
    # minibatches of 16, the two passes in different orders, another seed in another.
    assert [len(m) for m in here] == [16] * 8
    passes = [sum(here[:4], []), sum(here[4:], [])]
    assert all(sorted(order) == list(range(64)) for order in passes)
    assert passes[0] != list(range(64)) and passes[0] != passes[1]
    assert minibatch_columns(PPO.from_config(settings, seed=4), batch) != here
