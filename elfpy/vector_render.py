"""The frames of `elfpy.make_vector(..., render_mode="rgb_array")`: which games draw themselves, and how.

- Python-hosted environments ("gym:<id>", a factory): the environment's own
  `render()`, made with render_mode="rgb_array", taken in its worker after
  every reset and step (`GameContext(render_frames=True)`, the hidden key
  `rgb_frame`).
- Native CartPole, Pendulum and MountainCarContinuous: Gymnasium's drawing of
  the same state. The games have Gymnasium's dynamics and observe their whole
  state, so one Gymnasium environment in this process is handed each env's
  state and draws it.
- MiniRTS: its board (`elfpy.render.minirts.board_to_image`); the env asks
  for the `board` key (option board=True) and keeps it out of the
  observations unless the caller asked for it too.

Other games draw nothing: render_mode="rgb_array" for them is a ValueError
naming the game, as is any render mode but "rgb_array" and None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from elfpy.gym_host import FRAME_KEY, headless_rendering, is_hosted

RENDER_MODES = ("rgb_array",)


def _cartpole_state(env: Any, s: np.ndarray) -> None:
    env.state = s.astype(np.float64)


def _pendulum_state(env: Any, s: np.ndarray) -> None:
    env.state = np.array([np.arctan2(s[1], s[0]), s[2]])  # (cos, sin, speed) -> (angle, speed)
    env.last_u = None  # the torque arrow: the observation does not hold the last action


def _mountain_car_state(env: Any, s: np.ndarray) -> None:
    env.state = s.astype(np.float64)


# Native game -> (its Gymnasium counterpart, how to hand it an observation `s` as its state).
_GYMNASIUM_DRAWN: dict[str, tuple[str, Callable[[Any, np.ndarray], None]]] = {
    "cartpole": ("CartPole-v1", _cartpole_state),
    "pendulum": ("Pendulum-v1", _pendulum_state),
    "mountain_car_continuous": ("MountainCarContinuous-v0", _mountain_car_state),
}


class Renderer:
    """Draws the rows of a batch. `game_options` are the options to run the
    game with (the caller's plus what drawing needs), `hidden_keys` the keys
    the batch must carry for drawing that are not observations of the env."""

    def __init__(self, game_options: dict[str, Any], hidden_keys: tuple[str, ...],
                 draw: Callable[[Mapping[str, np.ndarray]], tuple[np.ndarray, ...]],
                 close: Callable[[], None] = lambda: None) -> None:
        self.game_options = game_options
        self.hidden_keys = hidden_keys
        self._draw = draw
        self.close = close

    def frames(self, batch: Mapping[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        return self._draw(batch)


def _gymnasium_drawn(game: str, game_options: dict[str, Any]) -> Renderer:
    env_id, set_state = _GYMNASIUM_DRAWN[game]
    with headless_rendering():
        env = gym.make(env_id, render_mode="rgb_array").unwrapped
        env.reset(seed=0)  # makes its drawing state (Gymnasium refuses to draw before a reset)

    def draw(batch: Mapping[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        frames = []
        with headless_rendering():
            for s in batch["s"]:
                set_state(env, s)
                frames.append(env.render())
        return tuple(frames)

    return Renderer(game_options, (), draw, env.close)


def _minirts(game_options: dict[str, Any]) -> Renderer:
    from elfpy.render.minirts import board_to_image

    asked = bool(game_options.get("board", False))

    def draw(batch: Mapping[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        return tuple(np.asarray(board_to_image(board).convert("RGB")) for board in batch["board"])

    return Renderer({**game_options, "board": True}, () if asked else ("board",), draw)


def _hosted(game_options: dict[str, Any]) -> Renderer:
    def draw(batch: Mapping[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        return tuple(frame.copy() for frame in batch[FRAME_KEY])

    return Renderer({**game_options, "render_mode": "rgb_array", "render_frames": True}, (FRAME_KEY,), draw)


def make_renderer(game: Any, render_mode: str | None, game_options: dict[str, Any]) -> Renderer | None:
    """The renderer of `game` for `render_mode` (None for None)."""
    if render_mode is None:
        return None
    if render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be one of {list(RENDER_MODES)} or None, got {render_mode!r}")
    if is_hosted(game):
        return _hosted(game_options)
    if game in _GYMNASIUM_DRAWN:
        return _gymnasium_drawn(game, game_options)
    if game == "minirts":
        return _minirts(game_options)
    raise ValueError(f"game '{game}' draws no frames: render_mode='rgb_array' is for hosted environments, "
                     f"{', '.join(sorted(_GYMNASIUM_DRAWN))} and minirts")
