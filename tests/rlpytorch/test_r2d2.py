"""R2D2 / DRQN: the sequence target and priorities recomputed by hand, and training on the fake engine."""

import pytest
import torch
from fakes import fake_loader

from rlpytorch.acting.sampler import Sampler
from rlpytorch.learners.value_trainer import ValueTrainer, value_interface
from rlpytorch.methods.r2d2 import DRQN, R2D2
from rlpytorch.methods.target_network import TargetNetwork
from rlpytorch.methods.value_rescaling import rescale, unrescale
from rlpytorch.models.interface import ModelInterface
from rlpytorch.models.q_networks import LSTMQNetwork, QSettings
from rlpytorch.replay import Replay
from rlpytorch.run.single_process import SingleProcessRun


def sequence(L=5, B=2):
    g = torch.Generator().manual_seed(0)
    terminal = torch.zeros(L, B, dtype=torch.bool)
    terminal[3, 1] = True  # column 1: a_2 ended its episode for real
    return {
        "s": torch.randn(L, B, 3, generator=g),
        "a": torch.randint(0, 2, (L, B), generator=g),
        "r": torch.tensor([[9.0, 9.0], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]),
        "terminal": terminal,
        "h": torch.randn(L, B, 8, generator=g),
        "weight": torch.tensor([1.0, 0.5]),
    }


def test_r2d2_target_is_the_rescaled_double_nstep_bootstrap_after_the_burn_in():
    torch.manual_seed(0)
    mi = value_interface(LSTMQNetwork({"s": (3,)}, 2, QSettings(hidden=8, layers=1, core_hidden=4)),
                         ModelInterface(lr=0.0))
    method = R2D2(target=TargetNetwork(1000), gamma=0.5, sequence_length=4, burn_in=1, n_step=2, priority_eta=0.5)
    batch = sequence()
    per_seq, priority, _ = method.loss(mi, batch)
    model, target = mi["model"], mi["target"]
    with torch.no_grad():  # replay by hand: burn-in row 0 from the stored state, then rows 1..4
        state = model({"s": batch["s"][:1]}, batch["h"][0], batch["terminal"][:1])["state"]
        Q = model({"s": batch["s"][1:]}, state, batch["terminal"][1:])["Q"]
        Qt = target({"s": batch["s"]}, batch["h"][0], batch["terminal"])["Q"][1:]
    q = Q.gather(-1, batch["a"][1:, :, None]).squeeze(-1)

    def boot(t, b):
        a_star = Q[t, b].argmax()
        return unrescale(Qt[t, b, a_star])

    # column 0 (no end): rows t = 0..2 of the trained part; t=2 has only one step left
    y0 = [rescale(3.0 + 0.5 * 5.0 + 0.25 * boot(2, 0)), rescale(5.0 + 0.5 * 7.0 + 0.25 * boot(3, 0)),
          rescale(7.0 + 0.5 * boot(3, 0))]
    # column 1: the episode ends at trained row 2 (terminal), nothing is bootstrapped across it
    y1 = [rescale(torch.tensor(4.0 + 0.5 * 6.0)), rescale(torch.tensor(6.0)), rescale(8.0 + 0.5 * boot(3, 1))]
    d0 = torch.stack([q[t, 0] - y for t, y in enumerate(y0)]).abs()
    d1 = torch.stack([q[t, 1] - y for t, y in enumerate(y1)]).abs()
    torch.testing.assert_close(per_seq, torch.stack([0.5 * d0.square().mean(), 0.5 * d1.square().mean()]))
    expected = [0.5 * d.max() + 0.5 * d.mean() for d in (d0, d1)]  # eta = 0.5
    torch.testing.assert_close(priority, torch.stack(expected))


def test_drqn_starts_from_zero_without_burn_in_or_rescaling():
    method = DRQN.from_config({})
    assert (method.burn_in, method.value_rescaling, method.stored_state, method.n_step) == (0, False, False, 1)
    assert R2D2.from_config({}).replay_length == 8 + 16


def test_r2d2_trains_on_sequences_from_the_fake_engine():
    torch.manual_seed(0)
    loader = fake_loader(num_games=8, T=5)
    gc = loader.context(seed=0)
    settings = QSettings(hidden=8, layers=1, core_hidden=8)
    model = LSTMQNetwork(loader.observation_spec(gc), loader.num_actions(gc), settings)
    ValueTrainer.add_tags(loader, gc, model.state_size)
    method = R2D2(target=TargetNetwork(20), sequence_length=4, burn_in=2, n_step=2)
    replay = Replay(8, model.obs_keys, replay_capacity=2000, prioritized=True, sequence_length=method.replay_length)
    trainer = ValueTrainer(value_interface(model), method, Sampler("epsilon_greedy", epsilon=0.5),
                           replay, replay_ratio=0.25, learning_starts=80, replay_batch=4)
    summary = SingleProcessRun(trainer, num_frames=240, save_dir="", progress=False).run(gc)
    assert summary.updates == pytest.approx(0.25 * (summary.frames - 100), abs=0.25 * 8 * 4 + 1)
    sample = replay.sample(3)
    assert sample["s"].shape[:2] == (6, 3) and sample["h"].shape == (6, 3, model.state_size)
