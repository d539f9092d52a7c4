"""Episodes as videos (GIF or MP4), for any game that can draw itself.

- A Python-hosted game ("gym:<id>", with or without a preset, or a factory
  taking ``render_mode``): the environment is made once more in this
  process with ``render_mode="rgb_array"`` and the same preset, and each
  ``env.render()`` is a frame; the policy sees what the engine's rows
  would hold (after the preset's ``preprocess``).
- MiniRTS: each board, drawn by ``elfpy.render.minirts``.

A policy is made fresh for each episode (so a recurrent one starts from its
initial state): ``make_policy()`` returns ``act(rows) -> actions``, where
``rows`` maps each observation key to an array with one row per seat.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from elfpy.files import atomic_path
from elfpy.gym_host import env_action, game_seed, headless_rendering, is_hosted, observation_arrays
from elfpy.gym_presets import resolve

__all__ = ["Policy", "check_drawable", "record", "save_video"]

Policy = Callable[[Mapping[str, np.ndarray]], np.ndarray]
FORMATS = ("gif", "mp4")


def save_video(frames: list[np.ndarray], path: str | Path, fps: int = 30) -> Path:
    """Writes RGB frames ``[H, W, 3]`` uint8 as a looping GIF or an MP4 (by the suffix)."""
    import imageio.v2 as imageio

    path = Path(path)
    if path.suffix not in (".gif", ".mp4"):
        raise ValueError(f"video {path}: the suffix must be one of {['.' + f for f in FORMATS]}")
    with atomic_path(path) as tmp:
        if path.suffix == ".gif":
            imageio.mimsave(tmp, frames, duration=1000 / fps, loop=0)
        else:  # H.264 in yuv420p needs even sides; imageio's default (16) would resize most game frames
            imageio.mimsave(tmp, frames, fps=fps, macro_block_size=2)
    return path


def check_drawable(game: Any) -> None:
    """Raise ``ValueError`` naming ``game`` if it cannot draw itself (before anything is played)."""
    if not (is_hosted(game) or game == "minirts"):
        raise ValueError(f"game '{game}' cannot draw itself: videos are made for Python-hosted games "
                         f"(rendered with render_mode='rgb_array') and MiniRTS")
    try:
        import imageio  # noqa: F401  (writes the frames)
        import PIL  # noqa: F401  (draws MiniRTS; imageio's GIFs)
    except ImportError as error:
        raise ValueError(f"videos need {error.name}: pip install 'elf-platform[video]'") from None


def record(game: Any, make_policy: Callable[[], Policy], episodes: int, folder: str | Path, *,
           obs_keys: Sequence[str] = ("s",), fmt: str = "gif", seed: int = 0, preset: str | None = None,
           options: Mapping[str, Any] | None = None, max_steps: int = 10_000) -> list[Path]:
    """Plays ``episodes`` episodes of ``game`` with a fresh policy each (reading
    ``obs_keys``) and saves ``<folder>/episode_<k>.<fmt>``; returns the paths."""
    if fmt not in FORMATS:
        raise ValueError(f"video format '{fmt}': choose one of {list(FORMATS)}")
    options = dict(options or {})
    check_drawable(game)
    if is_hosted(game):
        play = _hosted_episode(game, preset, options, seed, max_steps)
    else:
        play = _minirts_episode(options, tuple(obs_keys), seed, max_steps)
    folder = Path(folder)
    return [save_video(play(episode, make_policy()), folder / f"episode_{episode}.{fmt}")
            for episode in range(episodes)]


def _hosted_episode(game: Any, preset: str | None, options: dict[str, Any], seed: int,
                    max_steps: int) -> Callable[[int, Policy], list[np.ndarray]]:
    _, chosen = resolve(game, preset, {**options, "render_mode": "rgb_array"})

    def play(episode: int, act: Policy) -> list[np.ndarray]:
        with headless_rendering():  # SDL starts as the game is made or draws its first frame: silently
            env = chosen.make()
            try:
                observation, _ = env.reset(seed=game_seed(seed + 7919, episode))  # games apart from training's
                frames = [env.render()]
                for _ in range(max_steps):
                    seen = chosen.preprocess(observation) if chosen.preprocess else observation
                    rows = {key: value[None] for key, value in observation_arrays(seen).items()}
                    action = env_action(env.action_space, np.asarray(act(rows))[0])
                    observation, _, terminated, truncated, _ = env.step(action)
                    frames.append(env.render())
                    if terminated or truncated:
                        break
                return frames
            finally:
                env.close()

    return play


def _minirts_episode(options: dict[str, Any], inputs: tuple[str, ...], seed: int,
                     max_steps: int) -> Callable[[int, Policy], list[np.ndarray]]:
    from elfpy.render import minirts

    def play(episode: int, act: Policy) -> list[np.ndarray]:
        played = minirts.play(options, lambda batch: act({key: batch[key] for key in inputs}),
                              seed=seed + 7919 + episode, max_steps=max_steps, inputs=inputs)
        return [np.asarray(minirts.board_to_image(board, scale=12).convert("RGB")) for board in played.boards]

    return play

