"""The previous action and reward as model inputs (``--prev_action``, ``--prev_reward``).

Hand-worked sequences pin down the reset at episode starts and the encodings;
then, on the fake engine and the C++ games, every row a training window (or a
replayed R2D2 sequence) carries equals what the acting model was fed for that
game's step, and the C++ ``picks`` game (which shows its last picks) and
``pendulum`` (Box) check the values against the game itself.
"""

import numpy as np
import pytest
import torch
from fakes import fake_loader
from gymnasium import spaces

import elfpy  # noqa: F401  (the real engine)
from rlpytorch.acting.act import PreviousActions, act
from rlpytorch.acting.prev_inputs import PREV_ACTION, PREV_REWARD, PrevInputs, add_final_inputs, prev_shapes
from rlpytorch.acting.sampler import Sampler
from rlpytorch.core.game_loader import GameLoader
from rlpytorch.learners.trainer import Trainer
from rlpytorch.learners.value_trainer import ValueTrainer, value_interface
from rlpytorch.methods import ActorCritic
from rlpytorch.methods.r2d2 import R2D2
from rlpytorch.methods.target_network import TargetNetwork
from rlpytorch.methods.window import forward_window
from rlpytorch.models.interface import ModelInterface
from rlpytorch.models.loader import ModelLoader, load_model
from rlpytorch.replay import Replay


class Rows(dict):
    """An actor batch: keys, ``game_ids``, ``seats``."""

    def __init__(self, games, **keys):
        super().__init__({k: np.asarray(v) for k, v in keys.items()})
        self.game_ids = np.asarray(games)
        self.seats = np.zeros(len(games), np.int64)

    def __len__(self):
        return len(self.game_ids)


def test_previous_inputs_reset_at_episode_starts_hand_worked():
    previous = PreviousActions(PrevInputs(3, action=True, reward=True))
    # two games acting in turn; game 1 ends an episode at its 3rd row (terminal: a new episode's first state)
    steps = [  # (games, r, terminal, actions replied)
        ([0, 1], [0.0, 0.0], [False, False], [2, 1]),
        ([0, 1], [5.0, 7.0], [False, False], [0, 2]),
        ([1, 0], [9.0, 6.0], [True, False], [1, 1]),
        ([0, 1], [4.0, 3.0], [False, False], [2, 0]),
    ]
    seen = []
    for games, r, terminal, a in steps:
        batch = Rows(games, r=np.float32(r), terminal=terminal)
        inputs = previous.inputs(batch, "cpu")
        seen.append((inputs[PREV_ACTION].argmax(-1).tolist(), inputs[PREV_ACTION].sum(-1).tolist(),
                     inputs[PREV_REWARD].tolist()))
        previous.record(batch, torch.tensor(a))
    assert seen == [
        ([0, 0], [0.0, 0.0], [0.0, 0.0]),  # a game's first row: nothing before it
        ([2, 1], [1.0, 1.0], [5.0, 7.0]),  # one-hot of the previous action, the reward it earned
        ([0, 0], [0.0, 1.0], [0.0, 6.0]),  # game 1 starts an episode: zeros; game 0 goes on (a = 0)
        ([1, 1], [1.0, 1.0], [4.0, 3.0]),  # game 1's episode goes on from its first action (1)
    ]


def test_encodings_of_discrete_multidiscrete_and_box_actions():
    multi = PrevInputs(spaces.MultiDiscrete([3, 5]), action=True, reward=False)
    assert multi.shapes() == {PREV_ACTION: (8,)}
    assert multi.encode(torch.tensor([[2, 1], [0, 4]])).tolist() == [
        [0, 0, 1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 1]]
    box = PrevInputs(spaces.Box(-1.0, 1.0, (2,)), action=True, reward=True)
    assert box.shapes() == {PREV_ACTION: (2,), PREV_REWARD: ()}
    assert box.encode(torch.tensor([[0.5, -2.0]])).tolist() == [[0.5, -2.0]]  # as replied, not clipped
    assert PrevInputs(4, action=False, reward=True).shapes() == {PREV_REWARD: ()}
    with pytest.raises(ValueError, match="Discrete, MultiDiscrete, Box and Dict of them"):
        PrevInputs(spaces.Tuple((spaces.Discrete(2),)), action=True, reward=False)
    both = PrevInputs(spaces.Dict({"move": spaces.Discrete(3), "force": spaces.Box(-1.0, 1.0, (2,))}), True, False)
    assert both.shapes() == {PREV_ACTION: (5,)}  # 3 + 2; gymnasium sorts a dict's keys: force, move
    a = {"move": torch.tensor([2, 0]), "force": torch.tensor([[0.5, -0.25], [1.0, 0.0]])}
    assert both.encode(a).tolist() == [[0.5, -0.25, 0, 0, 1], [1.0, 0.0, 1, 0, 0]]


def test_dict_previous_inputs_reset_at_episode_starts_and_in_final_inputs():
    space = spaces.Dict({"move": spaces.Discrete(2), "pick": spaces.MultiDiscrete([2, 2])})  # move, pick
    part = PrevInputs(space, action=True, reward=True)
    previous = PreviousActions(part)
    steps = [  # (games, r, terminal, move, pick)
        ([0, 1], [0.0, 0.0], [False, False], [1, 0], [[0, 1], [1, 1]]),
        ([0, 1], [5.0, 7.0], [True, False], [0, 1], [[1, 0], [0, 0]]),
        ([1, 0], [9.0, 6.0], [False, False], [0, 0], [[0, 0], [0, 0]]),
    ]
    seen = []
    for games, r, terminal, move, pick in steps:
        batch = Rows(games, r=np.float32(r), terminal=terminal)
        inputs = previous.inputs(batch, "cpu")
        seen.append((inputs[PREV_ACTION].tolist(), inputs[PREV_REWARD].tolist()))
        previous.record(batch, {"move": torch.tensor(move), "pick": torch.tensor(pick)})
    assert seen == [
        ([[0, 0, 0, 0, 0, 0]] * 2, [0.0, 0.0]),  # first rows
        ([[0, 0, 0, 0, 0, 0], [1, 0, 0, 1, 0, 1]], [0.0, 7.0]),  # game 0 starts an episode; game 1: move 0, pick 1 1
        ([[0, 1, 1, 0, 1, 0], [1, 0, 0, 1, 1, 0]], [9.0, 6.0]),  # game 1: move 1, pick 0 0; game 0: move 0, pick 1 0
    ]
    model = torch.nn.Module()
    model.prev_inputs = part
    ended = torch.tensor([[False], [True]])
    window = {"move": torch.tensor([[1], [0]]), "pick": torch.tensor([[[0, 1]], [[1, 1]]]),
              "r": torch.tensor([[1.0], [2.0]]), "terminal": ended, "truncated": ended}
    add_final_inputs(model, window)
    assert window["final_prev_action"][:, 0].tolist() == [[0, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 1]]


def test_final_inputs_of_a_truncated_row_are_the_action_and_reward_that_ended_it():
    model = torch.nn.Module()
    model.prev_inputs = PrevInputs(3, action=True, reward=True)
    ended = torch.tensor([[False], [False], [True]])
    window = {"a": torch.tensor([[2], [0], [1]]), "r": torch.tensor([[1.0], [2.0], [3.0]]),
              "terminal": ended, "truncated": ended}
    add_final_inputs(model, window)
    assert window["final_prev_action"][:, 0].tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 0]]  # enc(a_{t-1})
    assert window["final_prev_reward"][:, 0].tolist() == [1.0, 2.0, 3.0]


def prev_model(loader, gc, model="mlp", **settings):
    values = {"hidden": 16, "layers": 1, "core_hidden": 8, **settings}
    return ModelLoader(model=model, prev_action=True, prev_reward=True, values=values).build(
        loader.observation_spec(gc), loader.num_actions(gc))


def feeding_record(trainer):
    """Wrap ``trainer.actor``: per game, the previous inputs the acting model was fed, step by step."""
    fed, last = {}, {}
    model = trainer.mi["actor"]
    model.register_forward_pre_hook(lambda _, args: last.update(obs=args[0]))
    actor = trainer.actor

    def recording(batch):
        reply = actor(batch)
        for i, game in enumerate(np.asarray(batch.game_ids).tolist()):
            row = {k: v.reshape(-1, *v.shape[-1 if k == PREV_ACTION else len(v.shape):])[i].clone()
                   for k, v in last["obs"].items() if k in (PREV_ACTION, PREV_REWARD)}
            for key in row:  # the reply (kept in the history) is what the model was fed
                np.testing.assert_array_equal(reply[key][i], row[key].numpy())
            fed.setdefault(game, []).append(row)
        return reply

    trainer.actor = recording
    return fed


def run(gc, trainer, on_window, steps):
    gc.reg_callback("actor", trainer.actor)

    def train(batch):
        on_window(batch)
        trainer.train(batch)

    gc.reg_callback("train", train)
    gc.start()
    try:
        for _ in range(steps):
            gc.run()
    finally:
        gc.stop()


def check_window_rows(window, fed, T, space_encode):
    """Each window row equals what the actor fed for that game's step, and follows the rule by hand."""
    for col, game in enumerate(np.asarray(window.game_ids).tolist()):
        rows = fed[game][-T:]
        for t in range(T):
            for key in (PREV_ACTION, PREV_REWARD):
                np.testing.assert_array_equal(np.asarray(window[key])[t, col], rows[t][key].numpy())
    terminal = torch.as_tensor(np.asarray(window["terminal"]))
    keep = (~terminal[1:]).float()
    expected_a = space_encode(torch.as_tensor(np.asarray(window["a"]))[:-1]) * keep.unsqueeze(-1)
    torch.testing.assert_close(torch.as_tensor(np.asarray(window[PREV_ACTION]))[1:], expected_a)
    expected_r = torch.as_tensor(np.asarray(window["r"]))[1:] * keep
    torch.testing.assert_close(torch.as_tensor(np.asarray(window[PREV_REWARD]))[1:], expected_r)


def test_actor_critic_windows_carry_what_the_recurrent_actor_was_fed_row_by_row():
    torch.manual_seed(0)
    loader = fake_loader(num_games=4, T=5, max_steps=7)  # time-limit ends too: final_ inputs are derived
    gc = loader.context(seed=0)
    model = prev_model(loader, gc, "lstm")
    assert model.obs_keys == ("s", PREV_ACTION, PREV_REWARD) and prev_shapes(model) == {PREV_ACTION: (2,),
                                                                                        PREV_REWARD: ()}
    Trainer.add_tags(loader, gc, model.state_size, prev_shapes(model))
    trainer = Trainer(ModelInterface(lr=0.0).add_actor_critic(model), ActorCritic.from_config({}),
                      Sampler(seed=0))
    fed = feeding_record(trainer)
    windows = []

    def on_window(batch):
        check_window_rows(batch, fed, 5, model.prev_inputs.encode)
        window = {k: torch.as_tensor(np.asarray(batch[k])) for k in batch.keys()}
        with torch.no_grad():  # same weights (lr 0): the replay gives the actor's values exactly
            torch.testing.assert_close(forward_window(model, window)["V"], window["V"])
        windows.append(window)

    run(gc, trainer, on_window, 60)
    starts = torch.cat([w["terminal"][1:] for w in windows])
    assert len(windows) > 5 and starts.any() and (~starts).any()
    assert any(w["truncated"].any() for w in windows)


def test_r2d2_replayed_sequences_carry_what_the_actor_was_fed():
    torch.manual_seed(0)
    loader = fake_loader(num_games=4, T=5, max_steps=6)
    gc = loader.context(seed=0)
    model = prev_model(loader, gc, "q_lstm")
    ValueTrainer.add_tags(loader, gc, model.state_size, prev_shapes(model))
    method = R2D2(target=TargetNetwork(20), sequence_length=3, burn_in=1, n_step=2)
    replay = Replay(4, model.obs_keys, replay_capacity=4000, sequence_length=method.replay_length)
    trainer = ValueTrainer(value_interface(model), method, Sampler("epsilon_greedy", epsilon=0.5), replay,
                           learning_starts=20, replay_batch=4)
    fed = feeding_record(trainer)
    run(gc, trainer, lambda batch: None, 80)
    absolute = np.array([0, 3, 7, 10])
    lanes = np.array([0, 1, 2, 3])
    sequences = replay._sequences(absolute, lanes)  # the rows a sampled sequence is made of
    for b, (start, lane) in enumerate(zip(absolute, lanes, strict=True)):
        for t in range(method.replay_length):
            for key in (PREV_ACTION, PREV_REWARD):
                np.testing.assert_array_equal(sequences[key][t, b].numpy(), fed[lane][start + t][key].numpy())
    assert "final_prev_action" in sequences and trainer.updates > 0
    transitions = replay._transitions(absolute, lanes)  # DQN's: the bootstrap row's inputs as next_ keys
    assert replay.n_step == 1
    compared = 0
    for b, (start, lane) in enumerate(zip(absolute, lanes, strict=True)):
        after = fed[lane][start + 1]
        if after[PREV_REWARD] != 0:  # the fake CartPole pays 1 a step: 0 marks an episode start (no bootstrap)
            for key in (PREV_ACTION, PREV_REWARD):
                np.testing.assert_array_equal(transitions["next_" + key][b].numpy(), after[key].numpy())
            compared += 1
    assert compared >= 2
    sample = replay.sample(4)
    assert sample[PREV_ACTION].shape == (4, 4, 2)


def test_picks_multidiscrete_inputs_match_the_picks_the_game_shows():
    """``picks`` observes the picks replied last (-1 at an episode start) and rewards their sum."""
    loader = GameLoader(game="picks", num_games=4, num_threads=1, actor_batch=4, train_batch=4, T=4,
                        deterministic=True)
    gc = loader.context(seed=0)
    model = prev_model(loader, gc, "mlp")
    Trainer.add_tags(loader, gc, 0, prev_shapes(model))
    trainer = Trainer(ModelInterface(lr=1e-3).add_actor_critic(model), ActorCritic.from_config({}), Sampler(seed=0))
    fed = feeding_record(trainer)
    checked = []

    def on_window(batch):
        check_window_rows(batch, fed, 4, model.prev_inputs.encode)
        s = torch.as_tensor(np.asarray(batch["s"]))
        started = s[..., 0] < 0
        shown = torch.cat([torch.nn.functional.one_hot(s[..., 0].clamp(min=0).long(), 3),
                           torch.nn.functional.one_hot(s[..., 1].clamp(min=0).long(), 5)], -1).float()
        expected = shown * (~started).unsqueeze(-1)
        torch.testing.assert_close(torch.as_tensor(np.asarray(batch[PREV_ACTION])), expected)
        expected_r = (s[..., 0] + s[..., 1]) * ~started
        torch.testing.assert_close(torch.as_tensor(np.asarray(batch[PREV_REWARD])), expected_r)
        checked.append(bool(started.any()))

    run(gc, trainer, on_window, 40)
    assert len(checked) > 5 and any(checked)


def test_pendulum_box_inputs_are_the_replied_actions():
    loader = GameLoader(game="pendulum", num_games=2, num_threads=1, actor_batch=2, train_batch=2, T=5,
                        deterministic=True, game_options="max_steps=12")
    gc = loader.context(seed=0)
    model = prev_model(loader, gc, "gru", box_policy="gaussian")
    Trainer.add_tags(loader, gc, model.state_size, prev_shapes(model))
    trainer = Trainer(ModelInterface(lr=1e-3).add_actor_critic(model), ActorCritic.from_config({}), Sampler(seed=0))
    fed = feeding_record(trainer)
    ends = []

    def on_window(batch):
        check_window_rows(batch, fed, 5, model.prev_inputs.encode)
        ends.append(bool(np.asarray(batch["terminal"])[1:].any()))

    run(gc, trainer, on_window, 60)
    assert any(ends) and fed[0][1][PREV_ACTION].abs().sum() > 0


def test_predict_feeds_the_raw_previous_action_and_reward_like_the_actor(tmp_path):
    torch.manual_seed(1)
    loader = fake_loader(num_games=2)
    gc = loader.context(seed=0)
    model = prev_model(loader, gc, "mlp")
    torch.nn.init.normal_(model.heads["policy"].net[-1].weight, std=3.0)  # a decisive policy
    model.save(tmp_path / "m.pt", {"prev_action": True, "prev_reward": True, "model": "mlp", "hidden": 16,
                                   "layers": 1})
    loaded = load_model(tmp_path / "m.pt", loader.observation_spec(gc), loader.num_actions(gc))
    assert prev_shapes(loaded) == prev_shapes(model)
    s = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    a = np.arange(64) % 2
    r = np.linspace(-3, 3, 64).astype(np.float32)
    encoded = {PREV_ACTION: np.eye(2, dtype=np.float32)[a], PREV_REWARD: r}
    batch = Rows(np.arange(64), s=s, terminal=np.zeros(64, bool), **encoded)
    engine = act(loaded, Sampler("greedy"), batch, "cpu")["a"]  # the actor, inputs given as the history holds them
    actions, state = loaded.predict(s, prev_action=a, prev_reward=r)
    assert actions.tolist() == engine.tolist() and state is None
    assert loaded.predict(s[5], prev_action=a[5], prev_reward=r[5])[0] == engine[5]  # one observation
    zeros = {PREV_ACTION: np.zeros((64, 2), np.float32), PREV_REWARD: np.zeros(64, np.float32)}
    at_start = act(loaded, Sampler("greedy"), Rows(np.arange(64), s=s, terminal=np.zeros(64, bool), **zeros), "cpu")
    assert loaded.predict(s)[0].tolist() == at_start["a"].tolist()  # None: an episode's first step, zeros
    assert at_start["a"].tolist() != engine.tolist()  # the inputs matter to this model
