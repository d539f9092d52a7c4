"""The AlphaZero parts: the loss on hand-worked numbers, board symmetries,
records getting their game's outcome, and a short self-play run whose loss
falls."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

import rlpytorch
from rlpytorch import training
from rlpytorch.methods.policy_value import PolicyValueLoss
from rlpytorch.plot import read_columns
from rlpytorch.replay.position_replay import PositionReplay, RecordKeys, SelfPlayRecords
from rlpytorch.replay.symmetries import transform_planes, transform_policy


def test_policy_value_loss_on_hand_worked_numbers():
    # logits (0, ln 3) over 2 moves: p = (1/4, 3/4); target pi = (1/2, 1/2):
    # policy loss = -(1/2 ln 1/4 + 1/2 ln 3/4) = 0.5 * (ln 4 + ln 4/3);
    # value: v = 0.5, z = -1: (z - v)^2 = 2.25, weighted by 2.
    logits = torch.tensor([[0.0, math.log(3.0)]])
    loss, stats = PolicyValueLoss(value_coef=2.0)(logits, torch.tensor([0.5]), torch.ones(1, 2),
                                                  torch.tensor([[0.5, 0.5]]), torch.tensor([-1.0]))
    policy = 0.5 * (math.log(4) + math.log(4 / 3))
    assert math.isclose(stats["policy_loss"], policy, rel_tol=1e-6)
    assert math.isclose(stats["value_loss"], 2.25, rel_tol=1e-6)
    assert math.isclose(loss.item(), policy + 2 * 2.25, rel_tol=1e-6)
    assert math.isclose(stats["target_entropy"], math.log(2), rel_tol=1e-6)


def test_policy_value_loss_ignores_illegal_moves():
    logits = torch.tensor([[0.0, 0.0, 100.0]])
    loss, stats = PolicyValueLoss()(logits, torch.zeros(1), torch.tensor([[1, 1, 0]]), torch.tensor([[1.0, 0, 0]]),
                                    torch.zeros(1))
    assert math.isclose(stats["policy_loss"], math.log(2), rel_tol=1e-6)  # p = (1/2, 1/2) over the legal two


def test_symmetries_move_planes_and_policy_points_alike_and_keep_the_pass():
    size = 3
    planes = torch.arange(9.0).reshape(1, 1, 3, 3)
    policy = torch.cat([torch.arange(9.0), torch.tensor([42.0])]).reshape(1, 10)
    images = set()
    for k in range(8):
        moved = transform_planes(planes, k)
        moved_policy = transform_policy(policy, k, size)
        assert torch.equal(moved.reshape(1, 9), moved_policy[:, :9])  # same permutation
        assert moved_policy[0, 9] == 42.0
        images.add(tuple(moved.flatten().tolist()))
    assert len(images) == 8  # all eight are different
    # k = 1: a quarter turn anticlockwise moves the top-right corner (2) to the top left.
    assert transform_planes(planes, 1)[0, 0, 0, 0] == 2.0
    assert transform_planes(planes, 4)[0, 0, 0, 0] == 2.0  # mirror: top right to top left


def test_records_get_the_outcome_of_their_game_for_the_side_that_moved():
    replay = PositionReplay(10, (1, 2, 2), 5)
    keys = RecordKeys("root", "visits", "move", "player", "check")
    ended = []
    records = SelfPlayRecords(keys, replay, lambda g, moves, players, r: ended.append((g, moves, players, r)))

    def batch(move, player, terminal, r, check=0):
        return {"root": np.full((2, 1, 2, 2), move % 256, np.uint8), "visits": np.full((2, 5), 0.2, np.float32),
                "move": np.array([move, -1]), "player": np.array([player, 0.0], np.float32),
                "terminal": np.array([terminal, terminal]), "r": np.array([r, r], np.float32),
                "check": np.array([check, 0], np.int32)}

    ids = np.array([7, 7])
    records.add_batch(batch(1, 1.0, False, 0.0), ids)
    records.add_batch(batch(-1, 0.0, False, 0.0), ids)  # no move this step
    records.add_batch(batch(2, -1.0, False, 0.0), ids)
    records.add_batch(batch(-2, 1.0, True, -1.0, check=0), ids)  # black resigned; white (player -1) won
    assert replay.size == 3
    assert replay.z[:3].tolist() == [-1.0, 1.0, -1.0]
    assert replay.planes[:3, 0, 0, 0].tolist() == [1, 2, 254]  # -2 as uint8
    assert ended == [(7, [1, 2, -2], [1.0, -1.0, 1.0], -1.0)]
    assert records.stats.games == 1 and records.stats.resigned == 1


def test_moves_of_fast_searches_count_in_the_game_but_give_no_record():
    replay = PositionReplay(10, (1, 2, 2), 3)
    keys = RecordKeys("root", "visits", "move", "player")
    ended = []
    records = SelfPlayRecords(keys, replay, lambda g, moves, players, r: ended.append(moves))
    visits = [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]  # the second move: a fast search
    for i, (player, pi) in enumerate(zip([1.0, -1.0, 1.0], visits, strict=True)):
        records.add_batch({"root": np.full((1, 1, 2, 2), i, np.uint8), "visits": np.array([pi], np.float32),
                           "move": np.array([i]), "player": np.array([player], np.float32),
                           "terminal": np.array([i == 2]), "r": np.array([1.0 if i == 2 else 0.0], np.float32)},
                          np.array([3]))
    assert replay.size == 2
    assert replay.planes[:2, 0, 0, 0].tolist() == [0, 2] and replay.z[:2].tolist() == [1.0, 1.0]
    assert ended == [[0, 1, 2]] and records.stats.moves == 3


# A tiny self-play set-up: 4 games of 10 moves on 9x9, 4 playouts a move.
TINY = dict(
    method="alphazero", game="go_mcts", num_games=4, num_threads=1, actor_batch=8, seed=1,
    game_options="board_size=9,komi=7.5,playouts=4,leaves=2,max_moves=10,resign_threshold=-1",
    state_key="s", legal_key="legal", policy_reply="policy", value_reply="value",
    record_state_key="root_s", visits_key="visits", move_key="move", player_key="player",
    resign_check_key="resign_check", min_replay=40, sgd_batch=32,
    updates_per_batch=1, lr=0.05, log_every=20, channels=8, blocks=1,
    export=False,
)


def self_play(**settings) -> rlpytorch.Run:
    """The tiny self-play run with ``settings`` over it."""
    return rlpytorch.train(rlpytorch.config(**{**TINY, **settings}))


def test_short_self_play_run_trains_and_its_loss_falls(tmp_path):
    history = self_play(num_frames=1400, save_dir=str(tmp_path / "run"), game_writer="elfpy.go.sgf:SgfWriter").history
    assert len(history) >= 4
    # The value part falls to ~0 within 40 steps (white wins every 10-move game
    # on komi); the policy part then falls below its start (log 82 = 4.41).
    assert history[-1]["loss"] < 0.93 * history[0]["loss"], [h["loss"] for h in history]
    assert history[-1]["policy_loss"] < history[0]["policy_loss"] - 0.1
    assert history[-1]["games"] >= 15 and history[-1]["moves_per_game"] == 10
    last = history[-1]
    assert 0 < last["batch_fill"] <= 1 and last["sims_per_s"] == pytest.approx(last["frames"] / last["time"])
    run = tmp_path / "run"
    for name in ("config.yaml", "run.yaml", "log.txt", "progress.csv", "last.pt"):
        assert (run / name).is_file(), name
    losses = read_columns(run / "progress.csv", "frames", "loss")[1]
    assert losses.tolist() == pytest.approx([h["loss"] for h in history])
    logged = (run / "log.txt").read_text().splitlines()  # the stats lines, then every run's closing summary
    assert len(logged) == len(history) + 1 and logged[-1].startswith("trained 1,400 frames in ")
    games = sorted((run / "games").glob("*.sgf"))
    assert len(games) == history[-1]["games"]
    assert games[0].read_text().startswith("(;FF[4]GM[1]SZ[9]KM[7.5]")
    assert games[0].read_text().count(";B[") == 5


def test_help_groups_settings_by_component_and_the_go9_config_is_accepted(capsys):
    provider = training.arguments("alphazero")
    assert list(provider.groups) == ["MethodChoice", "Screen", "SelfPlayScript", "RunSeed", "GameLoader",
                                     "AlphaZero", "SelfPlayKeys", "PolicyValueLoss", "PolicyValueSettings",
                                     "StatsLogger"]
    config = provider.parse(["--config", "go9"])
    assert config["state_key"] == "s" and config["channels"] == 32 and config["game_writer"]
    with pytest.raises(SystemExit):
        provider.parse(["--help"])
    assert "SelfPlayKeys:" in capsys.readouterr().out


def test_the_replay_window_round_trips_through_its_file(tmp_path):
    window = PositionReplay(3, (2, 3, 3), 10)
    rng = np.random.default_rng(0)
    window.add(rng.integers(0, 2, (4, 2, 3, 3)).astype(np.uint8), rng.random((4, 10), np.float32),
               np.array([1, -1, 1, -1], np.float32))  # 4 into 3 slots: the first overwritten
    window.save(tmp_path / "replay.npz")
    loaded = PositionReplay(3, (2, 3, 3), 10)
    loaded.load(tmp_path / "replay.npz")
    assert (loaded.added, loaded.size) == (4, 3)
    for name in ("planes", "pi", "z"):
        assert np.array_equal(getattr(loaded, name), getattr(window, name))
    with pytest.raises(ValueError, match="another --replay_size"):
        PositionReplay(5, (2, 3, 3), 10).load(tmp_path / "replay.npz")


class Payload:
    """Unpickled, it creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (self.marker,)


def test_a_replay_file_holding_a_pickle_or_damage_is_refused_by_name(tmp_path):
    window = PositionReplay(3, (2, 3, 3), 10)
    pickled, truncated, incomplete = tmp_path / "pickled.npz", tmp_path / "truncated.npz", tmp_path / "incomplete.npz"
    np.savez(pickled, planes=np.array([Payload(tmp_path / "ran")], dtype=object), pi=window.pi, z=window.z, added=0)
    window.save(tmp_path / "replay.npz")
    truncated.write_bytes((tmp_path / "replay.npz").read_bytes()[:100])
    np.savez(incomplete, planes=window.planes, pi=window.pi, z=window.z)
    for path in (pickled, truncated, incomplete):
        with pytest.raises(ValueError, match=f"{path}: not a replay window"):
            window.load(path)
    assert not (tmp_path / "ran").exists()


def test_the_replay_file_is_written_whole_or_left_as_it_was(tmp_path, monkeypatch):
    window = PositionReplay(3, (2, 3, 3), 10)
    window.save(tmp_path / "replay.npz")
    before = (tmp_path / "replay.npz").read_bytes()

    def write_part_then_die(file, **arrays):
        file.write(before[:100])
        raise KeyboardInterrupt  # the run killed while saving

    monkeypatch.setattr(np, "savez_compressed", write_part_then_die)
    window.add(np.ones((1, 2, 3, 3), np.uint8), np.ones((1, 10), np.float32), np.ones(1, np.float32))
    with pytest.raises(KeyboardInterrupt):
        window.save(tmp_path / "replay.npz")
    assert (tmp_path / "replay.npz").read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["replay.npz"]


def test_a_self_play_run_saved_along_the_way_resumes_where_it_stopped(tmp_path):
    run = tmp_path / "run"
    self_play(num_frames=600, save_every=250, save_dir=str(run))
    saved = torch.load(run / "last.pt", weights_only=True)
    state = saved["resume"]
    assert state["frames"] >= 600 and state["stats"]["games"] >= 4 and state["replay_added"] >= 40
    assert state["optimizer"]["state"]  # momentum buffers of the SGD steps taken
    with pytest.raises(ValueError, match="already holds a run"):
        self_play(num_frames=600, save_dir=str(run))

    # The command line's path, end to end: the method, then the resumed run's configuration.
    resumed = training.main(["--method", "alphazero", "--resume", str(run), "--num_frames", "1200"]).history
    first = resumed[0]
    assert state["frames"] < first["frames"] and resumed[-1]["frames"] >= 1200
    assert first["step"] > saved["step"]  # the SGD step count goes on
    assert first["games"] >= state["stats"]["games"] and first["time"] > state["seconds"]
    assert first["replay"] >= min(state["replay_added"], 50000)  # the window came back, then grew
    assert "resumed" in (run / "run.yaml").read_text()
    assert torch.load(run / "last.pt", weights_only=True)["resume"]["engine_starts"] == 1  # fresh games

    with np.load(run / "replay.npz") as saved_window:
        shapes = saved_window["planes"].shape, saved_window["pi"].shape[1]
    PositionReplay(shapes[0][0], shapes[0][1:], shapes[1]).save(run / "replay.npz")  # not the window of last.pt
    with pytest.raises(ValueError, match="not saved together"):
        rlpytorch.train(rlpytorch.config(resume=str(run), num_frames=1800))


@pytest.mark.parametrize("setting, named", [
    (["--save_dir", ""], "--game_writer needs a folder"),
    (["--game_options", "foo=1"], "unknown game option 'foo'"),
])
def test_a_refused_setting_is_one_line_and_leaves_no_run_folder(tmp_path, setting, named):
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_:
        # go9 names its method: the command line needs no --method alphazero
        training.command_line(training.main, "prog", ["--config", "go9", "--save_dir", str(run), *setting])
    assert named in str(exit_.value.code) and "\n" not in str(exit_.value.code)
    assert not run.exists()
