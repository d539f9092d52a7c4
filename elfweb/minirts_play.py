"""MiniRTS played with the mouse: the person's seat commands its units one by one, as ELF's page allowed.

The game runs with its option ``unit_commands`` (cpp/games/rts/unit_commands.h):
seat 0, player 0, is the person's and replies ``u``, the per-unit commands the
page sent since the last step (stop, move, attack, gather, build); player 1 is
the built-in AI (``seats=1``) or a trained model in seat 1 (``seats=2``). The
game checks each command against its rules and what the seat sees, and says in
``unit_results`` what became of it; a refused one is told to the person, and
the game goes on. The page draws the seat's own view (its fog of war) and reads
the seat's ``units`` (uid, player, type, tile, hp, order) to select and point.

One step is ``FRAME_SKIP`` ticks, so a person at the page's 30 frames per second
plays 30 ticks a second; a model opponent decides as often as it did in
training (every ``frame_skip`` ticks it was trained with), idle in between.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from elfpy.game_defaults import option_default
from elfpy.render.minirts import FOG_BIT, board_to_image
from elfweb.watch import BOARD_SCALE, Frame, action_names, greedy_acting, png_bytes

FRAME_SKIP = 1  # ticks per step: a worker crosses a 20-tile map in under three seconds at 30 steps a second
UNIT_COMMANDS = 16  # per step; a bigger selection's commands go out over the next steps
MAX_WAITING = 256  # commands waiting for a step; more are refused (a page cannot flood the game)
GAME = "minirts"


@dataclass(frozen=True)
class UnitOrder:
    """One command of the page for one unit, in the game's numbers (the game checks it)."""

    kind: int
    unit: int
    target: int
    x: int
    y: int
    type: int


def numbered_names(text: str) -> list[str]:
    """The names of a numbered list ("0 none, 1 done, 2 no such unit, ...") in their numbers' order."""
    return action_names(text, len(re.findall(r"\d+ [a-z]", text)))


def listed_names(meaning: str, label: str) -> list[str]:
    """The names of the numbered list after ``label:`` in a key's meaning ("kind: 0 none, 1 stop; ...")."""
    found = re.search(rf"\b{re.escape(label)}: ([^;]*)", meaning)
    if found is None:
        raise ValueError(f"the game's description names no '{label}' list: {meaning!r}")
    return numbered_names(found.group(1))


class MiniRtsPlay:
    """A MiniRTS game of the person (player 0, per-unit commands) against the built-in AI or ``model``."""

    def __init__(self, options: dict[str, Any], model: Any = None, seed: int = 0) -> None:
        self.model, self.seed = model, seed
        trained_skip = int(options.get("frame_skip", option_default(GAME, "frame_skip")))
        self.decide_every = max(1, trained_skip // FRAME_SKIP)  # the model's pace in steps
        self.options = {**options, "board": True, "frame_skip": FRAME_SKIP, "unit_commands": UNIT_COMMANDS,
                        "seats": 2 if model is not None else 1}
        self.episode = 0
        self._waiting: deque[UnitOrder] = deque()
        self._open()

    def _open(self) -> None:
        import elfpy

        self._gc = elfpy.GameContext(GAME, num_games=1, num_threads=1, seed=self.seed + self.episode, **self.options)
        spec = self._gc.spec()
        self.kinds = listed_names(spec["u"].meaning, "kind")
        self.types = listed_names(spec["u"].meaning, "type")
        self.results = numbered_names(spec["unit_results"].meaning)
        keys = list(self.model.obs_keys) if self.model is not None else []
        inputs = [*keys, "board", "final_board", "units", "final_units", "unit_results", "v", "terminal",
                  "episode_return"]
        self._gc.add_tag("actor", batch_size=self._gc.num_seats, inputs=list(dict.fromkeys(inputs)),
                         replies=["a", "u"])
        self._gc.start()
        self._batches = iter(self._gc)
        self._states = None
        if self.model is not None:
            self._greedy, self._states = greedy_acting(self.model)
        self._sent: list[UnitOrder] = []  # the commands of the last reply, in their slots
        self._since_decision = self.decide_every
        self.steps = 0

    def unit_command(self, units: list[int], kind: str, target: int, x: int, y: int, build: str) -> None:
        """``kind`` ("move", "attack", ...) for each unit of ``units`` (uids), from the next step on; a
        ValueError if the game has no such kind or type, or if too many commands wait already."""
        if kind not in self.kinds[1:]:
            raise ValueError(f"unit command '{kind}': the game knows {self.kinds[1:]}")
        if build not in ("none", *self.types):
            raise ValueError(f"build '{build}': the game knows {self.types}")
        if len(self._waiting) + len(units) > MAX_WAITING:
            raise ValueError(f"at most {MAX_WAITING} unit commands may wait for the game; wait for it to take them")
        type_ = self.types.index(build) if build != "none" else 0
        self._waiting.extend(UnitOrder(self.kinds.index(kind), uid, target, x, y, type_) for uid in units)

    def command(self, action: int) -> None:
        raise ValueError("this game takes the mouse's unit commands ('unit_command'), not strategic commands")

    def step(self) -> Frame:
        batch = next(self._batches)
        order = np.argsort(batch.seats, kind="stable")
        person = int(order[0])
        terminal = bool(batch["terminal"][person])
        final = "final_" if terminal else ""
        board = np.asarray(batch[f"{final}board"][person])
        units = np.asarray(batch[f"{final}units"][person])
        frame = Frame(png_bytes(board_to_image(board, scale=BOARD_SCALE)), self.steps, self.episode,
                      float(batch["episode_return"][person]))
        frame.units = units[units[:, 0] > 0].tolist()
        frame.unit_types = self.types
        frame.resources = round(float(batch["v"][person][0]) * 100)  # v[0]: own resources / 100 (its meaning)
        frame.tiles = [bytes(row).decode("ascii") for row in (board & ~np.uint8(FOG_BIT))]
        frame.refused = self._refusals(batch["unit_results"][person])
        actions = np.zeros(len(batch), dtype=np.int64)
        if self.model is not None:
            self._model_acts(batch, int(order[1]), terminal, actions)
        commands = np.zeros((len(batch), UNIT_COMMANDS, 6), dtype=np.int64)
        self._sent = [self._waiting.popleft() for _ in range(min(UNIT_COMMANDS, len(self._waiting)))]
        for slot, sent in enumerate(self._sent):
            commands[person, slot] = (sent.kind, sent.unit, sent.target, sent.x, sent.y, sent.type)
        batch.reply({"a": actions, "u": commands.reshape(len(batch), -1)})
        self.steps += 1
        if terminal:
            self.episode += 1
        return frame

    def _model_acts(self, batch: Any, row: int, terminal: bool, actions: np.ndarray) -> None:
        """The model's command into ``actions[row]`` on the steps it decides (0, idle, on the others)."""
        self._since_decision += 1
        if self._since_decision < self.decide_every and not terminal:
            return
        self._since_decision = 0
        from rlpytorch.acting.act import act  # here: playing the built-in AI needs no torch

        reply = act(self.model, self._greedy, batch, "cpu", self._states)
        actions[row] = int(np.asarray(reply["a"]).reshape(len(batch))[row])

    def _refusals(self, results: np.ndarray) -> list[str]:
        """What the person hears of the last step's commands the game refused."""
        said = []
        for sent, result in zip(self._sent, results, strict=False):
            if result > 1:  # 0 none, 1 done (the game's unit_results meaning)
                said.append(f"{self.kinds[sent.kind]} for unit {sent.unit} refused: {self.results[result]}")
        return said

    def restart(self) -> None:
        self.close()
        self.episode += 1
        self._waiting.clear()
        self._open()

    def close(self) -> None:
        self._gc.stop()
