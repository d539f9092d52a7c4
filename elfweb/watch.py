"""A watched game, one step at a time: its picture, and what the player saw in it.

Two kinds, by how the game draws itself (the same split as ``elfpy.video``):

- ``EngineWatch``: a native game that writes a ``board`` (MiniRTS), stepped
  in a one-game ``GameContext`` through an ``actor`` tag, as in evaluation.
  A model acts by ``rlpytorch.acting.act`` on the engine's batch itself, so
  its action probabilities (``pi``) and value (``V``) come out as in
  training; a person acts through ``command`` (MiniRTS's action ``a``, its
  nine strategic commands; a person who commands units one by one plays in
  ``elfweb.minirts_play``).
- ``HostedWatch``: a Python-hosted Gymnasium game, made here with
  ``render_mode="rgb_array"`` and its preset, each ``env.render()`` a picture;
  a model acts by the same ``act`` on a batch of the one observation (as
  ``predict`` does), so the view shows its ``pi`` (a Discrete action's) and ``V``.

``step()`` advances one step and returns a ``Frame``; a finished episode starts
the next one at the following step. Stepping blocks (the engine's workers run
the game), so the server calls it from a thread.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from elfpy.game_defaults import option_default
from elfpy.gym_host import env_action, game_seed, headless_rendering, is_hosted, observation_arrays
from elfpy.gym_presets import resolve
from elfpy.render.minirts import board_to_image

PLAYERS = ("model", "random", "ai", "human")  # ai: the game's built-in AI plays every side (MiniRTS seats=0)
BOARD_SCALE = 16  # pixels per MiniRTS tile: a 20x20 map is 320 pixels wide


@dataclass
class Frame:
    png: bytes
    step: int
    episode: int
    episode_return: float
    action: int | None = None  # what the watched seat played after this picture
    pi: list[float] | None = None
    value: float | None = None
    action_names: list[str] = field(default_factory=list)
    # A game played with the mouse (elfweb.minirts_play): the units the seat sees (uid, player, type, x, y,
    # hp, order), the names of the types, its resources, the tiles as text (fog bit cleared), its refused
    # commands in words.
    units: list[list[int]] | None = None
    unit_types: list[str] = field(default_factory=list)
    resources: int = 0
    tiles: list[str] | None = None
    refused: list[str] = field(default_factory=list)

    def info(self) -> dict[str, Any]:
        """Everything but the picture, for the page's side panel (and a mouse game's units to point at)."""
        info = {"step": self.step, "episode": self.episode, "episode_return": self.episode_return,
                "action": self.action, "pi": self.pi, "value": self.value, "action_names": self.action_names}
        if self.units is not None:
            info.update(units=self.units, unit_types=self.unit_types, resources=self.resources, tiles=self.tiles,
                        refused=self.refused)
        return info


def greedy_acting(model: Any) -> tuple[Any, Any]:
    """The greedy sampler a shown model acts with, and its recurrent states (None for a model without).
    rlpytorch is imported here: watching or playing without a model needs no torch."""
    from rlpytorch.acting.act import RecurrentStates
    from rlpytorch.acting.sampler import Sampler

    return Sampler("greedy"), RecurrentStates(model.state_size) if model.state_size else None


def png_bytes(rgb: Any) -> bytes:
    """A Pillow image or an ``[H, W, 3]`` uint8 array as PNG (fast compression: a frame lives 1/30 s)."""
    from PIL import Image

    image = rgb if isinstance(rgb, Image.Image) else Image.fromarray(np.asarray(rgb, dtype=np.uint8))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def action_names(meaning: str, count: int) -> list[str]:
    """The actions' names when the game's description lists them ("0 idle, 1 build worker, ..."),
    else their numbers."""
    found = dict(re.findall(r"(\d+) ([a-z][a-z /]*[a-z])", meaning))
    return [found.get(str(i), str(i)) for i in range(count)]


class EngineWatch:
    """A native game that draws its ``board``, one context of one game."""

    def __init__(self, game: str, options: dict[str, Any], player: str, model: Any = None, seed: int = 0) -> None:
        if player not in PLAYERS:
            raise ValueError(f"player '{player}': choose one of {list(PLAYERS)}")
        if player == "model" and model is None:
            raise ValueError("player 'model' needs a model")
        try:
            option_default(game, "board")  # the option that makes a game write its board, if it has one
        except ValueError:
            raise ValueError(f"game '{game}' cannot draw itself: the page shows native games that write a "
                             f"'board' (MiniRTS) and Python-hosted ones ('gym:<id>')") from None
        self.game, self.player, self.model, self.seed = game, player, model, seed
        self.options = {**options, "board": True, **({"seats": 0} if player == "ai" else {})}
        self.pending_command = 0  # the human seat's next command (0: idle, until the page says otherwise)
        self.episode = 0
        self._rng = np.random.default_rng(seed)
        self._open()

    def _open(self) -> None:
        import elfpy

        self._gc = elfpy.GameContext(self.game, num_games=1, num_threads=1, seed=self.seed + self.episode,
                                     **self.options)
        action = self._gc.spec()["a"]
        self.num_actions = int(action.space.n)
        self.action_names = action_names(action.meaning, self.num_actions)
        keys = list(self.model.obs_keys) if self.model is not None else []
        inputs = [*keys, "board", "final_board", "terminal", "episode_return"]
        self._gc.add_tag("actor", batch_size=self._gc.num_seats, inputs=list(dict.fromkeys(inputs)), replies=["a"])
        self._gc.start()
        self._batches = iter(self._gc)
        self._states = None
        if self.model is not None:
            self._greedy, self._states = greedy_acting(self.model)
        self.steps = 0  # since the game was opened or restarted

    def step(self) -> Frame:
        batch = next(self._batches)
        first = int(np.argsort(batch.seats, kind="stable")[0])  # seat 0: the watched side
        terminal = bool(batch["terminal"][first])
        board = batch["final_board" if terminal else "board"][first]
        frame = Frame(png_bytes(board_to_image(board, scale=BOARD_SCALE)), self.steps, self.episode,
                      float(batch["episode_return"][first]), action_names=self.action_names)
        actions = np.zeros(len(batch), dtype=np.int64)
        if self.player == "model":
            from rlpytorch.acting.act import act  # here: watching without a model needs no torch

            reply = act(self.model, self._greedy, batch, "cpu", self._states)
            actions = np.asarray(reply["a"], dtype=np.int64).reshape(len(batch))
            if "pi" in reply:
                frame.pi = [round(float(p), 4) for p in reply["pi"][first]]
            frame.value = float(reply["V"][first])
        elif self.player == "random":
            actions = self._rng.integers(0, self.num_actions, len(batch))
        elif self.player == "human":
            actions[:] = self.pending_command
        frame.action = int(actions[first]) if self.player != "ai" else None
        batch.reply({"a": actions})
        self.steps += 1
        if terminal:
            self.episode += 1
        return frame

    def command(self, action: int) -> None:
        """The human seat's command from now on; ValueError outside the game's action space."""
        if self.player != "human":
            raise ValueError("this game has no human seat")
        if not 0 <= action < self.num_actions:
            raise ValueError(f"command {action} is not one of the game's {self.num_actions}")
        self.pending_command = action

    def restart(self) -> None:
        self.close()
        self.episode += 1
        self.pending_command = 0
        self._open()

    def close(self) -> None:
        self._gc.stop()


class _OneRow(dict):
    """One observation as the actor batch ``act`` reads: game 0, seat 0."""

    game_ids = np.zeros(1, dtype=np.int64)
    seats = np.zeros(1, dtype=np.int64)

    def __len__(self) -> int:
        return 1


class HostedWatch:
    """A Python-hosted Gymnasium game drawn by its own ``render()``."""

    def __init__(self, game: str, preset: str | None, options: dict[str, Any], player: str, model: Any = None,
                 seed: int = 0) -> None:
        if player not in ("model", "random"):
            raise ValueError(f"a hosted game is watched with player 'model' or 'random', not '{player}'")
        if not is_hosted(game):
            raise ValueError(f"game '{game}' is not Python-hosted")
        engine_only = ("num_workers", "preset")  # a loader's options for the engine, not for the env
        options = {k: v for k, v in options.items() if k not in engine_only}
        _, self._chosen = resolve(game, preset, {**options, "render_mode": "rgb_array"})
        self.game, self.player, self.model, self.seed = game, player, model, seed
        self.episode = 0
        self.steps = 0  # since the game was opened or restarted, as EngineWatch counts
        self._env = None
        self._open()

    def _open(self) -> None:
        with headless_rendering():  # SDL starts as the game is made or draws its first frame: silently
            self._env = self._chosen.make()
            self._observation, _ = self._env.reset(seed=game_seed(self.seed + 7919, self.episode))
        self._env.action_space.seed(self.seed + self.episode)
        self._return = 0.0
        self._reward = 0.0  # the last step's: a model reading its previous reward is fed it
        if self.model is not None:  # each episode from a zero recurrent state and no previous action
            from rlpytorch.acting.act import previous_actions

            self._greedy, self._states = greedy_acting(self.model)
            self._previous = previous_actions(self.model, "cpu")
        names = getattr(self._env.unwrapped, "get_action_meanings", None)  # Atari's ("NOOP", "FIRE", ...)
        n = getattr(self._env.action_space, "n", None)
        self.action_names = list(names()) if names is not None else [str(i) for i in range(int(n or 0))]

    def step(self) -> Frame:
        with headless_rendering():
            frame = Frame(png_bytes(self._env.render()), self.steps, self.episode, self._return,
                          action_names=self.action_names)
            if self.player == "model":
                action = self._model_acts(frame)
            else:
                action = self._env.action_space.sample()
            if np.ndim(action) == 0:
                frame.action = int(action)
            self._observation, reward, terminated, truncated, _ = self._env.step(action)
        self._return += float(reward)
        self._reward = float(reward)
        self.steps += 1
        if terminated or truncated:
            self._next_episode()
        return frame

    def _model_acts(self, frame: Frame) -> Any:
        """The model's greedy action for the observation, and its policy and value into ``frame``."""
        from rlpytorch.acting.act import act
        from rlpytorch.core.distributions import actions_in, policy_family

        seen = self._chosen.preprocess(self._observation) if self._chosen.preprocess else self._observation
        batch = _OneRow({key: value[None] for key, value in observation_arrays(seen).items()},
                        r=np.array([self._reward], np.float32), terminal=np.zeros(1, dtype=bool))
        reply = act(self.model, self._greedy, batch, "cpu", self._states, previous=self._previous)
        if "pi" in reply:  # a Discrete action's distribution (other spaces reply logp)
            frame.pi = [round(float(p), 4) for p in reply["pi"][0]]
        frame.value = float(reply["V"][0])
        actions = actions_in(policy_family(self.model), reply)  # a Dict action's: entry -> rows
        row = {k: np.asarray(v)[0] for k, v in actions.items()} if isinstance(actions, dict) else np.asarray(actions)[0]
        return env_action(self._env.action_space, row)

    def command(self, action: int) -> None:
        raise ValueError("this game has no human seat")

    def _next_episode(self) -> None:
        self.close()
        self.episode += 1
        self._open()

    def restart(self) -> None:
        self._next_episode()
        self.steps = 0

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
