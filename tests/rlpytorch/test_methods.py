"""Method parts checked against numbers worked by hand (gamma = 0.5 keeps them exact)."""

import math

import pytest
import torch
from fakes import cartpole_window

from rlpytorch.methods import (
    GAE,
    ActorCritic,
    DiscountedReward,
    FinalReward,
    LambdaReturn,
    PolicyGradient,
    ValueMatcher,
    final_values,
    forward_window,
    normalized,
    returns_of,
    window_cuts,
)
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.interface import ModelInterface


def col(*values, dtype=torch.float32):
    """A [T, 1] column."""
    return torch.tensor(values, dtype=dtype).unsqueeze(1)


# One window, T = 4: r[0] belongs to the previous window and must be ignored.
R_IN = col(9.0, 1.0, 2.0, 3.0)
V_IN = col(10.0, 20.0, 30.0, 40.0)
NO_END = col(False, False, False, False, dtype=torch.bool)
END_AT_2 = col(False, False, True, False, dtype=torch.bool)


def cuts(terminal, truncated=None):
    return window_cuts(terminal, truncated)


def test_discounted_reward_bootstraps_from_last_value():
    R = DiscountedReward(gamma=0.5)(R_IN, NO_END, V_IN, cuts(NO_END))
    # R3 = V3 = 40; R2 = 3 + 20 = 23; R1 = 2 + 11.5; R0 = 1 + 6.75
    assert R.squeeze(1).tolist() == [7.75, 13.5, 23.0, 40.0]


def test_discounted_reward_stops_at_terminal_inside_window():
    R = DiscountedReward(gamma=0.5)(R_IN, END_AT_2, V_IN, cuts(END_AT_2))
    # the action at t=1 ended the episode: R1 = r2 = 2, nothing flows back across it
    assert R.squeeze(1).tolist() == [2.0, 2.0, 23.0, 40.0]


def test_without_final_state_truncation_bootstraps_from_value_before_it_and_leaves_the_row_out():
    cut = cuts(END_AT_2, truncated=END_AT_2)
    assert cut.squeeze(1).tolist() == [False, True, False, True]
    R = DiscountedReward(gamma=0.5)(R_IN, END_AT_2, V_IN, cut)
    # R1 = V1 = 20 (final state unseen), R0 = 1 + 0.5 * 20
    assert R.squeeze(1).tolist() == [11.0, 20.0, 23.0, 40.0]


# The episode ended at row 2 by a time limit; V(final_s) = 50 sits on that row.
FINAL_AT_2 = col(0.0, 0.0, 50.0, 0.0)


def test_truncation_bootstraps_from_the_value_of_the_final_state():
    R = DiscountedReward(gamma=0.5)(R_IN, END_AT_2, V_IN, cuts(END_AT_2), FINAL_AT_2)
    # R1 = r2 + 0.5 * V(final_s) = 2 + 25, and the row stays in the loss (no cut); R0 = 1 + 13.5
    assert R.squeeze(1).tolist() == [14.5, 27.0, 23.0, 40.0]


def test_gae_and_lambda_return_bootstrap_from_the_final_state_at_a_truncation():
    gae = GAE(gamma=0.5, gae_lambda=0.5)(R_IN, END_AT_2, V_IN, cuts(END_AT_2), FINAL_AT_2)
    # deltas: d2 = 3 + 20 - 30 = -7, d1 = 2 + 25 - 20 = 7, d0 = 1 + 10 - 10 = 1
    # A2 = -7, A1 = 7 (nothing flows back across the end), A0 = 1 + 0.25 * 7
    assert gae.squeeze(1).tolist() == [12.75, 27.0, 23.0, 40.0]
    lam = LambdaReturn(gamma=0.5, td_lambda=0.5)(R_IN, END_AT_2, V_IN, cuts(END_AT_2), FINAL_AT_2)
    # G1 = 2 + 0.5 * 50; G0 = 1 + 0.5 * (0.5 * 20 + 0.5 * 27)
    assert lam.squeeze(1).tolist() == [12.75, 27.0, 23.0, 40.0]


def test_final_reward_adds_the_final_state_value_of_a_cut_episode():
    r = col(0.0, 0.0, 1.0, 0.0, 0.0)
    terminal = col(False, False, True, False, False, dtype=torch.bool)
    V = col(0.1, 0.2, 0.3, 0.4, 0.5)
    final = col(0.0, 0.0, 0.7, 0.0, 0.0)
    R = FinalReward()(r, terminal, V, cuts(terminal), final)
    assert R.squeeze(1).tolist() == pytest.approx([1.7, 1.7, 0.5, 0.5, 0.5])


def test_final_reward_credits_the_outcome_to_every_step_of_its_episode():
    r = col(0.0, 0.0, 1.0, 0.0, 0.0)
    terminal = col(False, False, True, False, False, dtype=torch.bool)
    V = col(0.1, 0.2, 0.3, 0.4, 0.5)
    R = FinalReward()(r, terminal, V, cuts(terminal))
    assert R.squeeze(1).tolist() == pytest.approx([1.0, 1.0, 0.5, 0.5, 0.5])


def test_gae_matches_hand_worked_advantages():
    R = GAE(gamma=0.5, gae_lambda=0.5)(R_IN, NO_END, V_IN, cuts(NO_END))
    # deltas 1, -3, -7; A2 = -7, A1 = -3 - 1.75, A0 = 1 - 1.1875; R = A + V
    assert R.squeeze(1).tolist() == [9.8125, 15.25, 23.0, 40.0]


def test_gae_does_not_look_past_a_terminal():
    R = GAE(gamma=0.5, gae_lambda=0.5)(R_IN, END_AT_2, V_IN, cuts(END_AT_2))
    # delta1 = 2 - 20 = -18 (no bootstrap), A0 = 1 + 0.25 * -18
    assert R.squeeze(1).tolist() == [6.5, 2.0, 23.0, 40.0]


def test_lambda_return_matches_hand_worked_values():
    G = LambdaReturn(gamma=0.5, td_lambda=0.5)(R_IN, NO_END, V_IN, cuts(NO_END))
    # G2 = 3 + 0.5 * 40; G1 = 2 + 0.5 * (15 + 11.5); G0 = 1 + 0.5 * (10 + 7.625)
    assert G.squeeze(1).tolist() == [9.8125, 15.25, 23.0, 40.0]


def random_window(T=9, B=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    r = torch.randn(T, B, generator=g, dtype=torch.float64)
    terminal = torch.rand(T, B, generator=g) < 0.2
    truncated = terminal & (torch.rand(T, B, generator=g) < 0.5)
    V = torch.randn(T, B, generator=g, dtype=torch.float64)
    return r, terminal, V, window_cuts(terminal, truncated)


def numpy_style_discounted(r, terminal, V, cut, gamma):
    """Reference: one Python loop per column, written from the formula."""
    T, B = V.shape
    out = torch.zeros(T, B, dtype=V.dtype)
    for b in range(B):
        R = float(V[T - 1, b])
        out[T - 1, b] = R
        for t in reversed(range(T - 1)):
            R = float(V[t, b]) if cut[t, b] else float(r[t + 1, b]) + gamma * (0.0 if terminal[t + 1, b] else R)
            out[t, b] = R
    return out


def test_discounted_reward_matches_a_per_column_reference_on_random_windows():
    r, terminal, V, cut = random_window()
    expected = numpy_style_discounted(r, terminal, V, cut, gamma=0.9)
    torch.testing.assert_close(DiscountedReward(0.9)(r, terminal, V, cut), expected)


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_gae_targets_equal_lambda_returns(lam):
    r, terminal, V, cut = random_window(seed=1)
    gae = GAE(gamma=0.9, gae_lambda=lam)(r, terminal, V, cut)
    lam_ret = LambdaReturn(gamma=0.9, td_lambda=lam)(r, terminal, V, cut)
    torch.testing.assert_close(gae, lam_ret)


def test_lambda_one_is_the_discounted_return():
    r, terminal, V, cut = random_window(seed=2)
    torch.testing.assert_close(
        LambdaReturn(0.9, td_lambda=1.0)(r, terminal, V, cut),
        DiscountedReward(0.9)(r, terminal, V, cut),
    )


def pg_inputs():
    pi = torch.tensor([[[0.25, 0.75]], [[0.5, 0.5]]], requires_grad=True)
    mu = torch.tensor([[[0.5, 0.5]], [[0.8, 0.2]]])
    a = col(1, 0, dtype=torch.int64)
    advantage = col(2.0, -1.0)
    return pi, mu, a, advantage


def test_policy_gradient_clamps_the_importance_ratio():
    pi, mu, a, adv = pg_inputs()
    mask = col(True, False, dtype=torch.bool)
    # rho = 0.75 / 0.5 = 1.5, clamped to c
    loss_c1, stats = PolicyGradient(entropy_coef=0.0, ratio_clamp=1.0)(pi, mu, a, adv, mask)
    assert loss_c1.item() == pytest.approx(-2.0 * math.log(0.75))
    assert stats["ratio"] == pytest.approx(1.0)
    loss_c2, stats = PolicyGradient(entropy_coef=0.0, ratio_clamp=2.0)(pi, mu, a, adv, mask)
    assert loss_c2.item() == pytest.approx(-1.5 * 2.0 * math.log(0.75))
    assert stats["ratio"] == pytest.approx(1.5)


def test_policy_gradient_averages_over_mask_and_subtracts_entropy_bonus():
    pi, mu, a, adv = pg_inputs()
    mask = col(True, True, dtype=torch.bool)
    loss, stats = PolicyGradient(entropy_coef=0.1, ratio_clamp=10.0)(pi, mu, a, adv, mask)
    pg = -(1.5 * 2.0 * math.log(0.75) + 0.625 * -1.0 * math.log(0.5)) / 2
    h0 = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    h1 = math.log(2.0)
    entropy = (h0 + h1) / 2
    assert stats["policy_loss"] == pytest.approx(pg)
    assert stats["entropy"] == pytest.approx(entropy)
    assert loss.item() == pytest.approx(pg - 0.1 * entropy)


def test_policy_gradient_treats_the_ratio_as_a_constant():
    pi, mu, a, adv = pg_inputs()
    mask = col(True, False, dtype=torch.bool)
    loss, _ = PolicyGradient(entropy_coef=0.0, ratio_clamp=10.0)(pi, mu, a, adv, mask)
    loss.backward()
    # d/dpi_a of -rho * A * log(pi_a) with rho fixed: -1.5 * 2 / 0.75
    assert pi.grad[0, 0].tolist() == pytest.approx([0.0, -4.0])
    assert pi.grad[1, 0].tolist() == [0.0, 0.0]


def test_value_matcher_half_squared_error_over_mask():
    V = col(1.0, 2.0, 7.0)
    target = col(3.0, 2.0, 0.0)
    mask = col(True, True, False, dtype=torch.bool)
    loss, stats = ValueMatcher(value_coef=0.5)(V, target, mask)
    assert stats["value_loss"] == pytest.approx(1.0)  # (0.5 * 4 + 0) / 2
    assert loss.item() == pytest.approx(0.5)


def test_value_matcher_huber_is_linear_for_large_errors():
    loss, _ = ValueMatcher(value_coef=1.0, value_loss="huber")(col(0.0), col(5.0), col(True, dtype=torch.bool))
    assert loss.item() == pytest.approx(4.5)


@pytest.mark.parametrize(
    ("kind", "part"),
    [
        ("discounted", DiscountedReward),
        ("gae", GAE),
        ("lambda", LambdaReturn),
        ("final", FinalReward),
    ],
)
def test_actor_critic_swaps_its_returns_part_by_one_argument(kind, part):
    method = ActorCritic.from_config({"returns": kind})
    assert isinstance(method.returns, part)


def test_actor_critic_loss_is_the_sum_of_its_parts():
    torch.manual_seed(0)
    model = MLPActorCritic((4,), 2)
    batch = cartpole_window()
    method = ActorCritic.from_config({"gamma": 0.9, "entropy_coef": 0.05})
    loss, stats = method.loss(model, batch)

    out = model(batch["s"])
    cut = window_cuts(batch["terminal"])
    R = DiscountedReward(0.9)(batch["r"], batch["terminal"], out["V"].detach(), cut)
    pg, _ = PolicyGradient(entropy_coef=0.05)(out["pi"], batch["pi"], batch["a"], R - out["V"].detach(), ~cut)
    v, _ = ValueMatcher()(out["V"], R, ~cut)
    assert loss.item() == pytest.approx((pg + v).item(), rel=1e-6)
    assert set(stats) >= {"policy_loss", "entropy", "ratio", "value_loss"}


def test_normalized_uses_mean_and_std_of_the_masked_rows_only():
    x = col(1.0, 3.0, 100.0)
    mask = col(True, True, False, dtype=torch.bool)
    # mean 2, std 1 over the first two rows; the third row is scaled alike
    assert normalized(x, mask).squeeze(1).tolist() == pytest.approx([-1.0, 1.0, 98.0])


def test_actor_critic_with_norm_adv_feeds_normalized_advantages_to_the_policy_gradient():
    torch.manual_seed(0)
    model = MLPActorCritic((4,), 2)
    batch = cartpole_window()
    loss, _ = ActorCritic.from_config({"gamma": 0.9, "norm_adv": True}).loss(model, batch)

    out = model(batch["s"])
    cut = window_cuts(batch["terminal"])
    R = DiscountedReward(0.9)(batch["r"], batch["terminal"], out["V"].detach(), cut)
    advantage = normalized(R - out["V"].detach(), ~cut)
    pg, _ = PolicyGradient()(out["pi"], batch["pi"], batch["a"], advantage, ~cut)
    v, _ = ValueMatcher()(out["V"], R, ~cut)
    assert loss.item() == pytest.approx((pg + v).item(), rel=1e-6)
    plain, _ = ActorCritic.from_config({"gamma": 0.9}).loss(model, batch)
    assert plain.item() != pytest.approx(loss.item(), rel=1e-3)


def test_actor_critic_update_clips_global_grad_norm_and_counts_the_step():
    torch.manual_seed(0)
    mi = ModelInterface(optimizer="sgd", lr=1.0).add_actor_critic(MLPActorCritic((4,), 2))
    before = [p.detach().clone() for p in mi["model"].parameters()]
    stats = ActorCritic.from_config({"grad_clip": 1e-3}).update(mi, cartpole_window())
    moved = torch.cat([(p.detach() - b).flatten() for p, b in zip(mi["model"].parameters(), before, strict=True)])
    assert stats["grad_norm"] > 1e-3  # reported before clipping
    assert moved.norm().item() == pytest.approx(1e-3, rel=1e-3)  # SGD lr=1: step = clipped grad
    assert mi["model"].step == 1
    assert mi["actor"].step == 0


class ConstantValue(torch.nn.Module):
    """A stand-in model: V(s) = sum of s, uniform policy."""

    obs_keys = ("s",)
    state_size = 0

    def forward(self, obs):
        s = obs["s"] if isinstance(obs, dict) else obs
        return {"V": s.sum(-1), "pi": torch.full((*s.shape[:-1], 2), 0.5)}


def test_final_values_are_the_values_of_final_states_on_truncated_terminal_rows_only():
    T, B = 4, 2
    batch = {
        "final_s": torch.arange(T * B * 2, dtype=torch.float32).reshape(T, B, 2),
        "terminal": torch.tensor([[True, True], [False, True], [True, False], [False, False]]),
        "truncated": torch.tensor([[True, False], [False, True], [False, False], [True, False]]),
    }
    V = final_values(ConstantValue(), batch)
    # row 0 belongs to the previous window; (1, 1) is a truncated end; (2, 0) ended
    # for real (no bootstrap); (3, 0) is truncated without being terminal (ignored)
    expected = torch.zeros(T, B)
    expected[1, 1] = 6.0 + 7.0
    assert V.tolist() == expected.tolist()


def test_final_values_are_none_without_final_keys_so_truncations_become_cuts():
    batch = {"terminal": torch.zeros(3, 1, dtype=torch.bool), "truncated": torch.zeros(3, 1, dtype=torch.bool)}
    assert final_values(ConstantValue(), batch) is None


def test_actor_critic_keeps_a_truncated_step_in_the_loss_when_the_final_state_is_known():
    batch = cartpole_window(T=4, B=1)
    batch["terminal"] = END_AT_2.clone()
    batch["truncated"] = END_AT_2.clone()
    batch["r"] = R_IN.clone()
    batch["final_s"] = torch.full((4, 1, 4), 2.0)
    method = ActorCritic.from_config({"gamma": 0.5})
    R, mask = returns_of(method.returns, ConstantValue(), batch, batch["s"].sum(-1))
    assert mask.squeeze(1).tolist() == [True, True, True, False]
    assert R[1, 0].item() == pytest.approx(2.0 + 0.5 * 8.0)
    del batch["final_s"]
    _, mask = returns_of(method.returns, ConstantValue(), batch, batch["s"].sum(-1))
    assert mask.squeeze(1).tolist() == [True, False, True, False]


def test_a_recurrent_model_values_the_final_state_from_the_state_it_carried_into_the_end():
    from rlpytorch.models import LSTMActorCritic

    torch.manual_seed(0)
    model = LSTMActorCritic((4,), 2, ModelSettings(hidden=8, core_hidden=4))
    T, B = 4, 1
    batch = cartpole_window(T, B)
    batch["terminal"] = END_AT_2.clone()
    batch["truncated"] = END_AT_2.clone()
    batch["final_s"] = torch.randn(T, B, 4)
    batch["h"] = torch.randn(T, B, model.state_size)
    out = forward_window(model, batch)
    V = final_values(model, batch, out["states_in"])
    # by hand: rows 0 and 1 from the stored state, then the final state instead of row 2
    by_hand = model({"s": torch.stack([batch["s"][0], batch["s"][1], batch["final_s"][2]])}, batch["h"][0])
    assert V[2, 0].item() == pytest.approx(by_hand["V"][2, 0].item(), abs=1e-6)
    assert V[[0, 1, 3], 0].tolist() == [0.0, 0.0, 0.0]
