"""MiniRTS boards, pictures, replays and GIFs (elfpy/render/minirts.py; examples/visualize.py, run as a script).

A replay is the options, the episode seed and the actions; re-simulating it
must reproduce every board of the live game, byte for byte.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import elfpy
import rlpytorch
from elfpy.render import minirts as render

ROOT = Path(__file__).resolve().parents[2]


def visualize(*argv: str) -> str:
    """Run examples/visualize.py as a user does; returns its stdout."""
    done = subprocess.run([sys.executable, str(ROOT / "examples/visualize.py"), *argv],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def first_board(**options) -> np.ndarray:
    return render.play(options, max_steps=0).boards[0]


def test_observer_board_shows_both_bases_mines_and_rock():
    board = first_board(seats=0, map_size=20)
    assert board.shape == (20, 20) and board.dtype == np.uint8
    assert chr(board[2, 2]) == "B" and chr(board[17, 17]) == "b"
    assert (board == ord("$")).sum() == 6
    assert (board == ord("#")).sum() > 0
    assert not (board & render.FOG_BIT).any()


def test_seat_board_hides_what_the_seat_does_not_see():
    board = first_board(seats=1, map_size=20)
    assert chr(board[2, 2]) == "B"
    assert board[17, 17] == render.UNSEEN  # never seen: the enemy base does not show
    whole = first_board(seats=1, map_size=20, board_fog=False)
    assert chr(whole[17, 17]) == "b"


def test_ascii_has_one_line_per_row_and_png_one_square_per_tile(tmp_path):
    board = first_board(seats=0, map_size=16)
    text = render.board_to_ascii(board)
    lines = text.splitlines()
    assert len(lines) == 16 + 2 and all(len(line) == 16 + 2 for line in lines)
    assert lines[3][3] == "B"  # row 2, column 2, inside the frame
    assert render.board_to_ascii(board, frame=False).splitlines()[2][2] == "B"
    from PIL import Image

    path = render.save_png(board, tmp_path / "board.png", scale=8)
    with Image.open(path) as image:
        assert image.size == (16 * 8, 16 * 8)
        assert image.convert("RGB").getpixel((2 * 8 + 1, 2 * 8 + 1)) == render.PLAYER_COLORS[0]  # inside the base


def test_fogged_tiles_render_darker_and_as_colons():
    board = np.full((10, 10), ord("."), dtype=np.uint8)
    board[0, :] |= render.FOG_BIT
    board[9, :] = render.UNSEEN
    assert render.board_to_ascii(board, frame=False).splitlines()[0] == ":" * 10
    image = render.board_to_image(board, scale=4)
    lit, fogged = image.getpixel((2, 6)), image.getpixel((2, 2))
    assert sum(fogged) < sum(lit)
    assert image.getpixel((2, 38)) == render.DARK


@pytest.mark.parametrize("variant", ["standard", "ctf", "tower_defense"])
def test_replay_of_a_random_game_reproduces_every_board(tmp_path, variant):
    options = {"variant": variant, "map_size": 16, "frame_skip": 20, "max_tick": 2000}
    policy = render.random_policy(10 if variant == "tower_defense" else 9, seed=1)
    live = render.play(options, policy, seed=4)
    assert len(live.boards) == len(live.replay.actions) + 1 > 2
    path = live.replay.save(tmp_path / "game.json")
    loaded = render.Replay.load(path)
    assert loaded == live.replay
    again = render.verify(loaded)
    assert len(again.boards) == len(live.boards)
    for step, (a, b) in enumerate(zip(live.boards, again.boards, strict=True)):
        assert np.array_equal(a, b), f"board {step} differs"
    assert again.replay.actions == live.replay.actions
    assert again.ticks == live.ticks


def test_self_play_replay_reproduces_both_seats():
    rng = np.random.default_rng(3)
    options = {"seats": 2, "map_size": 12, "frame_skip": 40, "max_tick": 3000}
    live = render.play(options, lambda batch: rng.integers(0, 9, len(batch["board"])), seed=2)
    assert all(len(a) == 2 for a in live.replay.actions)
    again = render.verify(live.replay)
    assert all(np.array_equal(a, b) for a, b in zip(live.boards, again.boards, strict=True))


def test_a_tampered_replay_is_caught():
    live = render.play({"seats": 0, "frame_skip": 200})
    wrong_seed = render.Replay(**{**live.replay.__dict__, "episode_seed": live.replay.episode_seed + 1})
    with pytest.raises(render.ReplayMismatch, match="board 0"):
        render.verify(wrong_seed)


def test_episode_seed_option_repeats_the_episode_and_the_key_reports_it():
    a = render.play({"seats": 0, "frame_skip": 300}, seed=1)
    b = render.play({"seats": 0, "frame_skip": 300, "episode_seed": a.replay.episode_seed}, seed=99)
    assert b.replay.episode_seed == a.replay.episode_seed
    assert all(np.array_equal(x, y) for x, y in zip(a.boards, b.boards, strict=True))
    c = render.play({"seats": 0, "frame_skip": 300}, seed=2)
    assert c.replay.episode_seed != a.replay.episode_seed


def test_won_is_set_exactly_on_won_terminal_rows():
    gc = elfpy.GameContext("minirts", num_games=4, num_threads=1, seed=5, seats=0, frame_skip=500)
    gc.add_tag("actor", batch_size=4, inputs=["won", "r", "terminal"], replies=["a"])
    finals = 0
    with gc:
        for batch in gc:
            won, r, terminal = batch["won"].astype(bool), batch["r"], batch["terminal"]
            assert not won[~terminal].any()
            assert np.array_equal(won[terminal], r[terminal] > 0)
            finals += int(terminal.sum())
            batch.reply({"a": np.zeros(len(batch), dtype=np.int64)})
            if finals >= 8:
                break
    assert finals >= 8


def test_visualize_writes_gifs_from_a_live_game_and_from_its_replay(tmp_path):
    from PIL import Image

    live_gif, replay_file = tmp_path / "live.gif", tmp_path / "game.json"
    visualize("--policy", "random", "--variant", "ctf", "--map_size", "12", "--frame_skip", "50",
              "--out", str(live_gif), "--save_replay", str(replay_file), "--scale", "6")
    again_gif = tmp_path / "again.gif"
    visualize("--replay", str(replay_file), "--out", str(again_gif), "--scale", "6")
    replay = render.Replay.load(replay_file)
    for gif in (live_gif, again_gif):
        with Image.open(gif) as image:
            assert image.format == "GIF"
            assert image.n_frames == len(replay.actions) + 1
            assert image.size[0] == 12 * 6


def test_visualize_ai_against_ai_in_tower_defense(tmp_path):
    out = tmp_path / "td.gif"
    printed = visualize("--variant", "tower_defense", "--frame_skip", "300", "--out", str(out), "--ascii")
    assert out.exists()
    assert "frames" in printed and "+" + "-" * 20 + "+" in printed  # the final board as text


def test_visualize_plays_a_trained_checkpoint_greedily(tmp_path):
    save_dir = tmp_path / "ckpt"
    rlpytorch.train(rlpytorch.config(game="minirts", game_options="map_size=12,variant=tower_defense", num_games=4,
                                     actor_batch=4, train_batch=4, num_threads=1, num_frames=400,
                                     save_dir=str(save_dir), progress=False, eval_at_end=False))
    replay_file = tmp_path / "model.json"
    visualize("--load", str(save_dir / "last.pt"), "--out", str(tmp_path / "model.gif"),
              "--save_replay", str(replay_file), "--fog", "--scale", "4")
    replay = render.Replay.load(replay_file)
    assert replay.options["variant"] == "tower_defense" and replay.options["map_size"] == "12"
    render.verify(replay)  # the model's game replays exactly


def test_visualize_refuses_a_checkpoint_of_another_game_naming_it(tmp_path):
    save_dir = tmp_path / "ckpt"
    rlpytorch.train(rlpytorch.config(game="cartpole", num_games=4, actor_batch=4, train_batch=4, num_threads=1,
                                     num_frames=200, save_dir=str(save_dir), progress=False, eval_at_end=False))
    done = subprocess.run([sys.executable, str(ROOT / "examples/visualize.py"), "--load", str(save_dir),
                           "--out", str(tmp_path / "model.gif")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and not (tmp_path / "model.gif").exists()
    assert done.stderr.splitlines()[-1] == f"visualize.py: error: --load {save_dir}: trained on 'cartpole', not minirts"
    assert "Traceback" not in done.stderr
