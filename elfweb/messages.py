"""What the page may send: one schema per message type, checked before anything acts on it.

A message is a JSON object with a ``type`` and exactly the fields its schema
names, each of the stated type and range. Anything else (not JSON, too long,
an unknown type, a missing, extra or wrong field) raises ``BadMessage``; the
server then closes that connection with the error and carries on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_MESSAGE_BYTES = 4096  # the largest valid message (a unit command for MAX_UNITS units) is under 1,200 bytes
MAX_NAME_CHARS = 64


class BadMessage(ValueError):
    """A message from the page that no schema accepts."""


@dataclass(frozen=True)
class Integer:
    low: int
    high: int

    def check(self, value: Any) -> bool:
        return type(value) is int and self.low <= value <= self.high  # type(): True is not an int here


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]

    def check(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options


@dataclass(frozen=True)
class IntegerList:
    """A JSON list of 1 to ``most`` integers, each in ``[low, high]``."""

    low: int
    high: int
    most: int

    def check(self, value: Any) -> bool:
        item = Integer(self.low, self.high)
        return type(value) is list and 0 < len(value) <= self.most and all(item.check(v) for v in value)


@dataclass(frozen=True)
class Name:
    """A short printable identifier (an entry of the server's catalog)."""

    def check(self, value: Any) -> bool:
        return isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS and value.isascii() and value.isprintable()


MAX_BOARD = 19
# MiniRTS's per-unit commands (cpp/games/rts/unit_commands.h): the game's own bounds of its action 'u', which
# the engine checks before the game does; the game then refuses a tile off its map or a uid it does not know.
MAX_UID = 2**31 - 2
MAX_TILE = 63  # the largest map is 64 tiles wide
MAX_UNITS = 80  # a player's units at most (the game allows 72)
UNIT_COMMAND_KINDS = ("stop", "move", "attack", "gather", "build")
BUILD_TYPES = ("none", "worker", "melee", "ranged", "barracks", "tower")
SCHEMAS: dict[str, dict[str, Integer | IntegerList | Choice | Name]] = {
    "open": {"entry": Name()},  # start the catalog entry's game, ending this viewer's previous one
    "control": {"action": Choice(("pause", "resume", "step", "restart"))},
    "speed": {"fps": Integer(1, 60)},
    "command": {"action": Integer(0, 1023)},  # a watched game's human seat; the game's own range is checked after
    "go_move": {"row": Integer(0, MAX_BOARD - 1), "col": Integer(0, MAX_BOARD - 1)},
    "go_pass": {},
    "go_resign": {},
    "go_undo": {},
    "seek": {"index": Integer(0, 10_000_000)},  # a replay's position; past the end means its last
    # MiniRTS with the mouse: units (uids) stop, move to (x, y), attack the unit target, gather from the mine at
    # (x, y) or build (a worker: a building at (x, y); a base or barracks: a unit); unused fields are 0 / "none"
    "unit_command": {"units": IntegerList(1, MAX_UID, MAX_UNITS), "kind": Choice(UNIT_COMMAND_KINDS),
                     "target": Integer(0, MAX_UID), "x": Integer(0, MAX_TILE), "y": Integer(0, MAX_TILE),
                     "build": Choice(BUILD_TYPES)},
}


def parse(text: str | bytes) -> dict[str, Any]:
    """The message ``text`` as a dict that its type's schema accepts; ``BadMessage`` saying why not."""
    if len(text) > MAX_MESSAGE_BYTES:
        raise BadMessage(f"message of {len(text)} bytes; at most {MAX_MESSAGE_BYTES}")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise BadMessage(f"not JSON: {error}") from None
    if not isinstance(message, dict):
        raise BadMessage("a message is a JSON object")
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in SCHEMAS:
        raise BadMessage(f"unknown message type {str(kind)[:MAX_NAME_CHARS]!r}; known: {sorted(SCHEMAS)}")
    schema = SCHEMAS[kind]
    fields = set(message) - {"type"}
    if fields != set(schema):
        given = sorted(f[:MAX_NAME_CHARS] for f in fields)
        raise BadMessage(f"'{kind}' takes the fields {sorted(schema)}, got {given}")
    for name, rule in schema.items():
        if not rule.check(message[name]):
            raise BadMessage(f"'{kind}': field '{name}' must be {rule}, got {str(message[name])[:MAX_NAME_CHARS]!r}")
    return message
