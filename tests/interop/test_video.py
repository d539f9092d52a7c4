"""Videos of evaluated episodes: hosted Gymnasium games (Atari, MiniGrid, CartPole) and MiniRTS."""

from __future__ import annotations

from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pytest

import rlpytorch
from elfpy import video
from rlpytorch import evaluate


def random_policy(n: int):
    rng = np.random.default_rng(0)
    return lambda: (lambda rows: rng.integers(0, n, len(next(iter(rows.values())))))


def frames_of(path: Path) -> list[np.ndarray]:
    return list(imageio.mimread(path, memtest=False))


def mp4_count_and_shape(path: Path) -> tuple[int, tuple[int, int]]:
    """Frames in an MP4, and their (height, width), read by ffmpeg."""
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    width, height = next(reader)["size"]
    return sum(1 for _ in reader), (height, width)


@pytest.mark.parametrize(("game", "preset", "shape"), [
    ("gym:ALE/Pong-v5", "atari", (210, 160)),
    ("gym:MiniGrid-DoorKey-5x5-v0", "minigrid", (160, 160)),
])
def test_hosted_games_render_their_frames_whatever_the_preset(tmp_path: Path, game: str, preset: str,
                                                                shape: tuple[int, ...]) -> None:
    (path,) = video.record(game, random_policy(3), 1, tmp_path, fmt="mp4", preset=preset, max_steps=20)
    # the first state and one frame per step (the episode outlives 20 steps), at the game's own size
    assert mp4_count_and_shape(path) == (21, shape)
    (gif,) = video.record(game, random_policy(3), 1, tmp_path / "gif", preset=preset, max_steps=20)
    frames = frames_of(gif)  # a GIF keeps only frames that differ from the one before
    assert frames[0].shape[:2] == shape and len(frames) > 1


def test_evaluate_saves_videos_of_a_trained_hosted_cartpole_as_gif_and_mp4(tmp_path: Path) -> None:
    run = tmp_path / "run"
    rlpytorch.train(rlpytorch.config(game="gym:CartPole-v1", num_workers=1, num_games=8, actor_batch=8,
                                     train_batch=8, num_frames=2000, save_dir=str(run), progress=False,
                                     eval_at_end=False))
    for fmt in ("gif", "mp4"):
        out = tmp_path / fmt
        evaluate.main(["--load", str(run), "--eval_episodes", "2", "--no-progress", "--video", str(out),
                       "--video_episodes", "2", "--video_format", fmt])
        paths = sorted(out.iterdir())
        assert [p.name for p in paths] == [f"episode_0.{fmt}", f"episode_1.{fmt}"]
        if fmt == "mp4":
            count, shape = mp4_count_and_shape(paths[0])
            assert count >= 9 and shape == (400, 600)  # CartPole ends after at least 8 steps
        else:
            assert frames_of(paths[0])[0].shape == (400, 600, 3)


def test_evaluate_saves_a_minirts_game_of_a_pretrained_model(tmp_path: Path) -> None:
    model = Path(__file__).resolve().parents[2] / "pretrained" / "minirts_simple_ac.pt"
    evaluate.main(["--load", str(model), "--eval_episodes", "2", "--no-progress", "--video", str(tmp_path),
                   "--num_games", "2", "--actor_batch", "2", "--train_batch", "2"])
    (path,) = tmp_path.iterdir()
    frames = frames_of(path)
    assert len(frames) > 10 and frames[0].ndim == 3 and frames[0].shape[2] == 3


def test_a_game_that_cannot_draw_itself_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="game 'cartpole' cannot draw itself"):
        video.record("cartpole", random_policy(2), 1, tmp_path)
