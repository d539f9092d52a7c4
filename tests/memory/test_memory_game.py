"""The memory game: its rules, and that it separates policies with and without memory.

Within a fixed frame budget (seeded, deterministic engine, so the runs are the
same every time), PPO with a feed-forward policy stays at chance (the query
looks the same whatever the cue) while LSTM and GRU policies, replayed from
their stored states, learn to recall the cue.
"""

import numpy as np
import pytest

import elfpy
import rlpytorch

FRAMES = 30_000
CHANCE = 0.5  # two cues


def play(actions_by_step, num_games=4, delay=2):
    """Rows seen by an actor that answers ``actions_by_step[k]`` at the k-th call."""
    gc = elfpy.GameContext("memory", num_games=num_games, num_threads=1, seed=3, deterministic=True, delay=delay)
    gc.add_tag("actor", num_games, ["s", "r", "terminal"], ["a"])
    gc.start()
    rows = []
    try:
        for actions in actions_by_step:
            batch = next(iter(gc))
            order = np.argsort(batch.game_ids)
            rows.append({k: np.array(batch[k])[order] for k in ("s", "r", "terminal")})
            batch.reply({"a": np.asarray(actions, np.int64)[batch.game_ids]})
    finally:
        gc.stop()
    return rows


def test_cue_shows_on_the_first_step_only_and_the_query_pays_for_naming_it():
    first = play([[0, 0, 0, 0]])[0]
    cues = first["s"][:, :2].argmax(1)
    assert first["s"][:, :2].sum(1).tolist() == [1.0] * 4 and not first["s"][:, 2].any()
    answers = np.where(np.arange(4) < 2, cues, 1 - cues)  # games 0, 1 answer right; 2, 3 wrong
    rows = play([[0] * 4, [1] * 4, [0] * 4, answers, [0] * 4])
    assert not rows[1]["s"].any() and not rows[2]["s"].any()  # blank steps
    assert rows[3]["s"][:, 2].tolist() == [1.0] * 4 and not rows[3]["s"][:, :2].any()  # the query
    assert rows[4]["terminal"].all()
    assert rows[4]["r"].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert sum(r["r"].sum() for r in rows[:4]) == 0.0  # nothing is paid before the query


def learn(model, recurrence=0, T=9):
    return rlpytorch.train(rlpytorch.config(
        game="memory", method="ppo", model=model, T=T, lr=1e-3, recurrence=recurrence, seed=0, deterministic=True,
        num_threads=2, num_frames=FRAMES, eval_episodes=100, save_dir="", progress=False, log_every=FRAMES))


def test_a_feed_forward_policy_stays_at_chance():
    out = learn("mlp")
    assert out.summary.frames == pytest.approx(FRAMES, abs=64)
    assert abs(out.summary.mean_return - CHANCE) < 0.15
    assert abs(out.eval.mean - CHANCE) < 0.15


# LSTM: back-propagation through each whole 8-step window; GRU: 16-step windows
# replayed in two 8-step pieces, the second from its stored state.
@pytest.mark.parametrize(("model", "recurrence", "T"), [("lstm", 0, 9), ("gru", 8, 17)])
def test_a_recurrent_policy_recalls_the_cue(model, recurrence, T):
    out = learn(model, recurrence, T)
    assert out.summary.mean_return > 0.9
    assert out.eval.mean > 0.95
