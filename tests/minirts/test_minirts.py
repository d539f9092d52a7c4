"""MiniRTS through elfpy.GameContext: specs, options, seats and final rewards.

The rules themselves are pinned down by the C++ suite (cpp/tests/test_minirts.cc);
these tests check what a Python user sees. Win rates come from the reward on
terminal rows: with auto-reset, the row that ends an episode already shows the
next episode's first state, and its `r` is the final +1 (win) or -1 (loss).
"""

from __future__ import annotations

import numpy as np
import pytest

import elfpy

NUM_PLANES, NUM_SCALARS, NUM_COMMANDS = 15, 14, 9


def random_actions(rng: np.random.Generator):
    return lambda batch: {"a": rng.integers(0, NUM_COMMANDS, len(batch))}


def test_spec_states_planes_scalars_and_commands():
    gc = elfpy.GameContext("minirts", num_games=2, num_threads=1, map_size=16)
    spec = gc.spec()
    assert spec["s"].shape == (NUM_PLANES, 16, 16) and spec["s"].dtype == np.float32
    assert spec["v"].shape == (NUM_SCALARS,) and spec["v"].dtype == np.float32
    assert spec["a"].role == "action" and spec["a"].bounds == (0, NUM_COMMANDS - 1)
    assert gc.num_seats == 1
    assert {name for name, _, _ in elfpy.GameContext.game_options("minirts")} >= {
        "map_size", "max_tick", "frame_skip", "opponent", "seats", "shaped_reward", "army_shaping", "flag_shaping"}


def test_random_actions_run_on_an_actor_tag():
    rng = np.random.default_rng(0)
    gc = elfpy.GameContext("minirts", num_games=8, num_threads=1, seed=1)
    gc.add_tag("actor", batch_size=4, inputs=["s", "v", "r", "terminal"], replies=["a"])
    gc.reg_callback("actor", random_actions(rng))
    seen = []

    def check(batch):
        assert batch["s"].shape == (len(batch), NUM_PLANES, 20, 20)
        assert batch["v"].shape == (len(batch), NUM_SCALARS)
        # Own base in the top-left corner, on every row.
        assert np.all(batch["s"][:, 3, 2, 2] == 1.0)
        seen.append(len(batch))
        return random_actions(rng)(batch)

    gc.reg_callback("actor", check)
    with gc:
        for _ in range(50):
            gc.run()
    assert sum(seen) == 200


@pytest.mark.parametrize(
    ("options", "message"),
    [({"map_size": 5}, "10..64"),
     ({"opponent": "nobody"}, "valid choices: simple, hit_and_run"),
     ({"seats": 3}, "0, 1, 2"),
     ({"variant": "koth"}, "valid choices: standard, ctf, tower_defense"),
     ({"variant": "tower_defense", "seats": 2}, "one player")],
)
def test_invalid_options_raise_value_error_with_valid_choices(options, message):
    with pytest.raises(ValueError, match=message):
        elfpy.GameContext("minirts", num_games=1, num_threads=1, **options)


def test_self_play_seats_have_their_own_tags():
    gc = elfpy.GameContext("minirts", num_games=4, num_threads=1, seats=2, frame_skip=50)
    assert gc.num_seats == 2
    rng = np.random.default_rng(1)
    counts = {"actor0": 0, "actor1": 0}
    finals = []

    def actor(name):
        def fn(batch):
            counts[name] += len(batch)
            assert np.all(batch.seats == int(name[-1]))
            assert np.all(batch["s"][:, 3, 2, 2] == 1.0)  # each seat sees its own base top-left
            finals.extend(batch["r"][batch["terminal"]].tolist())
            return random_actions(rng)(batch)
        return fn

    for seat in (0, 1):
        gc.add_tag(f"actor{seat}", batch_size=2, inputs=["s", "r", "terminal"], replies=["a"], seats=[seat])
        gc.reg_callback(f"actor{seat}", actor(f"actor{seat}"))
    with gc:
        for _ in range(100):
            gc.run()
    assert counts["actor0"] > 0 and counts["actor1"] > 0
    assert all(r in (-1.0, 0.0, 1.0) for r in finals)


def test_games_against_the_simple_ai_end_with_plus_or_minus_one():
    rng = np.random.default_rng(2)
    gc = elfpy.GameContext("minirts", num_games=8, num_threads=1, seed=3, frame_skip=50, max_tick=3000)
    gc.add_tag("actor", batch_size=8, inputs=["r", "terminal", "frames"], replies=["a"])
    finals = []
    with gc:
        for batch in gc:
            finals.extend(batch["r"][batch["terminal"]].tolist())
            # Every step runs frame_skip ticks, except the last of a game.
            assert np.all(batch["frames"][~batch["terminal"]] % 50 == 0)
            assert np.all(batch["frames"] <= 50)
            batch.reply(random_actions(rng)(batch))
            if len(finals) >= 8:
                break
    assert len(finals) >= 8
    assert set(finals) <= {-1.0, 1.0}
    assert -1.0 in finals  # random commands lose to the simple AI (almost always)


def test_ai_against_ai_spectator_mode_finishes_games():
    gc = elfpy.GameContext("minirts", num_games=2, num_threads=1, seats=0, frame_skip=500,
                           ai0="hit_and_run", opponent="simple")
    gc.add_tag("actor", batch_size=2, inputs=["r", "terminal"], replies=["a"])
    finals = []
    with gc:
        for batch in gc:
            finals.extend(batch["r"][batch["terminal"]].tolist())
            batch.reply({"a": np.zeros(len(batch), dtype=np.int64)})
            if len(finals) >= 4:
                break
    assert set(finals) <= {-1.0, 0.0, 1.0} and len(finals) >= 4
    assert 1.0 in finals or -1.0 in finals  # the AIs fight it out before max_tick


def test_same_seed_same_observations():
    def first_rows(seed: int) -> np.ndarray:
        gc = elfpy.GameContext("minirts", num_games=2, num_threads=1, seed=seed, deterministic=True)
        gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
        rows = []
        with gc:
            for i, batch in enumerate(gc):
                rows.append(np.array(batch["s"], copy=True))
                batch.reply({"a": np.full(len(batch), i % NUM_COMMANDS, dtype=np.int64)})
                if i == 20:
                    break
        return np.stack(rows)

    assert np.array_equal(first_rows(5), first_rows(5))
    assert not np.array_equal(first_rows(5), first_rows(6))


@pytest.mark.parametrize(
    ("variant", "planes", "scalars", "commands"),
    [("standard", 15, 14, 9), ("ctf", 17, 16, 9), ("tower_defense", 16, 17, 10)],
)
def test_each_variant_states_its_features_and_commands(variant, planes, scalars, commands):
    spec = elfpy.GameContext("minirts", num_games=1, num_threads=1, variant=variant, map_size=12, board=True).spec()
    assert spec["s"].shape == (planes, 12, 12)
    assert spec["v"].shape == (scalars,)
    assert spec["a"].bounds == (0, commands - 1)
    assert spec["board"].shape == (12, 12) and spec["board"].dtype == np.uint8
    assert spec["won"].dtype == np.int32
    plain = elfpy.GameContext("minirts", num_games=1, num_threads=1, variant=variant).spec()
    assert "board" not in plain  # only on request: models reading every observation do not get it


@pytest.mark.parametrize("variant", ["ctf", "tower_defense"])
def test_variants_play_to_a_final_reward_against_their_opponent(variant):
    rng = np.random.default_rng(7)
    gc = elfpy.GameContext("minirts", num_games=4, num_threads=1, seed=8, variant=variant, frame_skip=50)
    num_commands = gc.spec()["a"].bounds[1] + 1
    gc.add_tag("actor", batch_size=4, inputs=["s", "r", "terminal", "won"], replies=["a"])
    finals = []
    with gc:
        for batch in gc:
            finals.extend(batch["r"][batch["terminal"]].tolist())
            batch.reply({"a": rng.integers(0, num_commands, len(batch))})
            if len(finals) >= 4:
                break
    assert set(finals) <= {-1.0, 0.0, 1.0} and -1.0 in finals


def test_minirts_works_as_a_gymnasium_vector_env():
    from elfpy.vector import make_vector

    env = make_vector("minirts", num_envs=2, num_threads=1, map_size=12, frame_skip=100)
    try:
        obs, _ = env.reset(seed=0)
        assert obs["s"].shape == (2, NUM_PLANES, 12, 12)
        for _ in range(3):
            obs, reward, terminated, truncated, _ = env.step(np.zeros(2, dtype=np.int64))
        assert obs["v"].shape == (2, NUM_SCALARS) and reward.shape == (2,)
    finally:
        env.close()


def shaping_rewards(options: dict, rows_per_game: int) -> list[tuple[np.ndarray, np.ndarray, float, bool]]:
    """(v, board, r, terminal) rows of an AI-against-AI game (seats=0: the seat observes player 0)."""
    gc = elfpy.GameContext("minirts", num_games=1, num_threads=1, seed=11, seats=0, frame_skip=5,
                           board=True, board_fog=False, **options)
    gc.add_tag("actor", batch_size=1, inputs=["v", "board", "r", "terminal"], replies=["a"])
    rows = []
    with gc:
        for batch in gc:
            row = (batch["v"][0].copy(), batch["board"][0].copy(), float(batch["r"][0]), bool(batch["terminal"][0]))
            rows.append(row)
            batch.reply({"a": np.zeros(1, dtype=np.int64)})
            if len(rows) >= rows_per_game:
                break
    return rows


def test_army_shaping_pays_the_change_in_own_minus_enemy_troops():
    # Own troops from `v` (melee, ranged / 10), the enemy's counted on the whole board ('m', 'r').
    rows = shaping_rewards({"army_shaping": 0.25}, 600)

    def balance(v, board):
        return round(10 * (v[2] + v[3])) - int(np.isin(board, [ord("m"), ord("r")]).sum())

    checked = changed = 0
    for (v0, b0, _, _), (v1, b1, r, terminal) in zip(rows, rows[1:], strict=False):
        if terminal:
            assert r in (-1.0, 0.0, 1.0)  # the final row stays the bare outcome
            continue
        change = balance(v1, b1) - balance(v0, b0)
        assert r == pytest.approx(0.25 * change), (r, change)
        checked += 1
        changed += change != 0
    assert checked > 500 and changed >= 5  # troops were built and killed, not just an idle game


def test_flag_shaping_pays_when_a_flag_is_picked_up_and_charges_when_ours_is():
    # ctf scalars 14 and 15: own and enemy flag, 1 while carried.
    rows = shaping_rewards({"variant": "ctf", "flag_shaping": 0.5, "max_tick": 20000}, 2000)

    def carried(v):
        return int(v[15] == 1.0) - int(v[14] == 1.0)

    pickups = 0
    for (v0, _, _, _), (v1, _, r, terminal) in zip(rows, rows[1:], strict=False):
        if not terminal:
            assert r == 0.5 * (carried(v1) - carried(v0))
            pickups += r != 0
    assert pickups >= 2


def test_unit_commands_reach_the_game_through_a_checked_reply():
    """The seat's per-unit commands (option unit_commands) are a MultiDiscrete reply 'u' of (kind, unit,
    target, x, y, type) each: the engine refuses one outside its space before the game steps; the game
    carries out one inside and says what became of it in 'unit_results' (cpp/games/rts/unit_commands.h)."""
    gc = elfpy.GameContext("minirts", num_games=1, num_threads=1, seed=2, unit_commands=2, frame_skip=4)
    spec = gc.spec()
    assert spec["u"].shape == (12,) and spec["units"].shape == (160, 7) and spec["unit_results"].shape == (2,)
    gc.add_tag("actor", batch_size=1, inputs=["units", "unit_results"], replies=["a", "u"])
    with gc:
        batches = iter(gc)
        batch = next(batches)
        units = batch["units"][0]
        worker = units[(units[:, 1] == 0) & (units[:, 2] == 0)][0]  # player 0's first worker
        move = np.zeros((1, 12), dtype=np.int64)
        move[0, :6] = (2, worker[0], 0, 10, 10, 0)  # move to (10, 10)
        move[0, 6:] = (2, worker[0], 0, 30, 10, 0)  # the same to a tile off this 20x20 map
        off_space = move.copy()
        off_space[0, 3] = 64  # past every map: outside the action's space
        with pytest.raises(ValueError, match="'u'"):
            batch.reply({"a": np.zeros(1, dtype=np.int64), "u": off_space}, refusal_keeps_batch=True)
        batch.reply({"a": np.zeros(1, dtype=np.int64), "u": move})
        batch = next(batches)
        assert batch["unit_results"][0].tolist() == [1, 5]  # done; target off the map
        moved = batch["units"][0][batch["units"][0][:, 0] == worker[0]][0]
        assert (moved[3] - 10) ** 2 + (moved[4] - 10) ** 2 < (worker[3] - 10) ** 2 + (worker[4] - 10) ** 2
        batch.reply({"a": np.zeros(1, dtype=np.int64), "u": np.zeros((1, 12), dtype=np.int64)})
