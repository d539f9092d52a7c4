"""``model.predict`` outside the engine picks the actions the engine-driven actor picked.

The actor (``Evaluator``, greedy, as in evaluation) plays CartPole on the real
engine; each row it saw is then given to ``predict``, one observation at a
time and as a batch, with a recurrent model's state carried from call to call
and restarted at each episode start, as a Gymnasium loop would.
"""

import numpy as np
import pytest
import torch

import elfpy  # noqa: F401  (the real engine)
from rlpytorch.core.game_loader import GameLoader
from rlpytorch.learners.evaluator import Evaluator
from rlpytorch.models import LSTMActorCritic, MLPActorCritic, ModelSettings
from rlpytorch.run.eval_iters import EvalIters


def decisive(model):
    """The model with a re-drawn policy layer: a fresh policy is near uniform
    and its greedy action the same almost everywhere, which would test little."""
    torch.nn.init.normal_(model.heads["policy"].net[-1].weight, std=3.0)
    return model


def engine_rows(model, num_games=4, episodes=8):
    """What the engine-driven greedy actor saw and did: per game, a list of (s, terminal, a)."""
    loader = GameLoader(num_games=num_games, actor_batch=num_games, num_threads=1, deterministic=True)
    evaluator = Evaluator(model, num_games, eval_episodes=episodes)
    rows = {g: [] for g in range(num_games)}
    act = evaluator.actor

    def recording_actor(batch):
        reply = act(batch)
        for i, game in enumerate(np.asarray(batch.game_ids).tolist()):
            rows[game].append((np.array(batch["s"][i]), bool(batch["terminal"][i]), int(reply["a"][i])))
        return reply

    evaluator.actor = recording_actor
    EvalIters(evaluator, progress=False).run(loader.eval_context(num_games, seed=5, state_size=model.state_size))
    return rows


def test_predict_equals_the_engine_driven_actor_for_a_feed_forward_model():
    torch.manual_seed(0)
    model = decisive(MLPActorCritic((4,), 2, ModelSettings(hidden=16)))
    rows = engine_rows(model)
    everything = [row for game in rows.values() for row in game]
    assert len(everything) > 50 and len({a for _, _, a in everything}) == 2  # both actions occur
    for s, _, a in everything:
        action, state = model.predict(s)
        assert action == a and np.ndim(action) == 0 and state is None
    batch = np.stack([s for s, _, _ in everything])
    actions, _ = model.predict(batch)
    assert actions.tolist() == [a for _, _, a in everything]


def test_predict_carries_a_recurrent_state_like_the_engine_driven_actor():
    torch.manual_seed(4)  # weights whose greedy actions differ from row to row (checked below)
    model = decisive(LSTMActorCritic((4,), 2, ModelSettings(hidden=8, core_hidden=4)))
    rows = engine_rows(model)
    assert len({a for game in rows.values() for _, _, a in game}) == 2
    checked = 0
    for game_rows in rows.values():
        state = None
        for step, (s, terminal, a) in enumerate(game_rows):
            if step == 0 or terminal:  # a new episode starts from a zero state
                state = None
            action, state = model.predict(s, state)
            assert action == a and state.shape == (model.state_size,)
            checked += 1
    assert checked > 50


def test_predict_on_a_batch_carries_one_state_per_row():
    torch.manual_seed(2)
    model = LSTMActorCritic((4,), 2, ModelSettings(hidden=8, core_hidden=4))
    obs = torch.randn(3, 5, 4).numpy()  # 3 steps of 5 games
    state = None
    batched = []
    for t in range(3):
        actions, state = model.predict(obs[t], state)
        batched.append(actions)
    assert state.shape == (5, model.state_size)
    for game in range(5):  # the same games one at a time
        one = None
        for t in range(3):
            action, one = model.predict(obs[t, game], one)
            assert action == batched[t][game]
        np.testing.assert_allclose(one, state[game], atol=1e-6)  # batched matmuls round differently


def test_sampled_predictions_follow_torch_seed():
    model = MLPActorCritic((4,), 3, ModelSettings(hidden=8))
    obs = np.zeros((200, 4), np.float32)
    torch.manual_seed(7)
    first, _ = model.predict(obs, deterministic=False)
    torch.manual_seed(7)
    again, _ = model.predict(obs, deterministic=False)
    assert first.tolist() == again.tolist() and len(set(first.tolist())) == 3  # near-uniform initial policy


def test_predict_names_a_missing_observation_key():
    model = MLPActorCritic({"s": (4,), "v": (2,)}, 2)
    with pytest.raises(KeyError, match="'v'"):
        model.predict({"s": np.zeros(4, np.float32)})
