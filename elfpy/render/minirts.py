"""MiniRTS pictures and replays: a board as text or PNG, a game saved and replayed.

With the option ``board=True`` the game writes a ``board`` observation (the
functions here ask for it): one byte per tile in map coordinates,
the character of what stands there ('.' ground, '#' rock, '$' mine, '%' empty
mine; player 0's units upper case W M R B K T, player 1's lower case; C / c a
flag carrier, F / f a flag on the ground). A seat's board hides what the seat
does not see: ' ' for tiles never seen, and the high bit (+128) on tiles seen
before but not now, which show terrain only. An observer's board (``seats=0``
or ``board_fog=False``) shows everything. On a terminal row ``board`` already
shows the next episode, and ``final_board`` the position the episode ended in.

    board_to_ascii(board)            the map as text, one line per row
    board_to_image(board, scale=16)  a Pillow image; save_png(board, path)
    play(options, policy)            one live episode -> Episode(replay, boards)
    replay_boards(replay)            re-simulate a Replay -> its boards
    verify(replay)                   re-simulate and check every board

A replay is the game's options, the episode's seed (``episode_seed``) and the
actions of each step; the game is deterministic, so re-simulating it with the
option ``episode_seed=<seed>`` reproduces every board. Each board's CRC-32 is
stored too, so a reloaded replay can check itself (``verify``).

    python -m elfpy.render.minirts                      # ASCII of a new game's first board
    python -m elfpy.render.minirts --png board.png --variant ctf --step 40
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from elfpy.files import write_atomically, write_text_atomically

FOG_BIT = 0x80
UNSEEN = ord(" ")

# Tile colours (RGB).
GROUND, ROCK, MINE, EMPTY_MINE, DARK = (214, 203, 170), (92, 86, 80), (236, 186, 40), (160, 140, 96), (24, 24, 28)
PLAYER_COLORS = ((40, 96, 220), (214, 48, 40))
TERRAIN_COLORS = {ord("."): GROUND, ord("#"): ROCK, ord("$"): MINE, ord("%"): EMPTY_MINE, UNSEEN: DARK}
BUILDINGS = set("BbKkTt")

Policy = Callable[[Mapping[str, np.ndarray]], np.ndarray]


class ReplayMismatch(AssertionError):
    """A re-simulated board differs from the recorded one."""


# ---------------------------------------------------------------------------
# Pictures


def decode(board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(chars, fogged)``: the characters as uint8 codes and where the fog bit is set."""
    board = np.asarray(board, dtype=np.uint8)
    return board & 0x7F, (board & FOG_BIT) != 0


def board_to_ascii(board: np.ndarray, frame: bool = True) -> str:
    """The board as text. Fogged tiles show their terrain, with ground as ':'.

    ``frame`` draws a border, so blank (never seen) edges stay visible.
    """
    chars, fogged = decode(board)
    chars = chars.copy()
    chars[fogged & (chars == ord("."))] = ord(":")
    lines = [bytes(row).decode("ascii") for row in chars]
    if not frame:
        return "\n".join(lines)
    width = chars.shape[1]
    return "\n".join(["+" + "-" * width + "+", *("|" + line + "|" for line in lines), "+" + "-" * width + "+"])


def board_to_image(board: np.ndarray, scale: int = 16, caption: str | None = None) -> Any:
    """The board as a Pillow RGB image, ``scale`` pixels per tile (and a caption line if given)."""
    from PIL import Image, ImageDraw, ImageFont

    chars, fogged = decode(board)
    h, w = chars.shape
    bar = scale + 4 if caption else 0
    # Terrain by array lookup: every tile's colour, then units on top.
    lut = np.tile(np.array(GROUND, dtype=np.uint8), (128, 1))
    for code, color in TERRAIN_COLORS.items():
        lut[code] = color
    rgb = lut[chars]
    rgb[fogged] = (rgb[fogged] * 0.55).astype(np.uint8)
    image = Image.fromarray(np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1), "RGB")
    if bar:
        canvas = Image.new("RGB", (w * scale, h * scale + bar), (255, 255, 255))
        canvas.paste(image, (0, bar))
        image = canvas
    draw = ImageDraw.Draw(image)
    font = _font(ImageFont, max(8, scale - 4))
    if caption:
        draw.text((2, 1), caption, fill=(0, 0, 0), font=_font(ImageFont, max(8, scale - 2)))
    pad = max(1, scale // 8)
    for y, x in zip(*np.nonzero(np.isin(chars, _UNIT_CODES)), strict=True):
        c = chr(chars[y, x])
        player = 0 if c.isupper() else 1
        x0, y0 = x * scale, y * scale + bar
        box = (x0 + pad, y0 + pad, x0 + scale - 1 - pad, y0 + scale - 1 - pad)
        color = PLAYER_COLORS[player]
        if c in "Ff":  # a flag: pole and pennant
            pole = x0 + scale // 4
            draw.line((pole, y0 + pad, pole, y0 + scale - pad), fill=(40, 40, 40), width=max(1, scale // 10))
            pennant = [(pole, y0 + pad), (x0 + scale - pad, y0 + scale // 3), (pole, y0 + 2 * scale // 3)]
            draw.polygon(pennant, fill=color)
            continue
        if c in BUILDINGS:
            draw.rectangle((x0, y0, x0 + scale - 1, y0 + scale - 1), fill=color, outline=(20, 20, 20))
        elif c in "Cc":
            draw.ellipse(box, fill=color, outline=MINE, width=max(1, scale // 6))
        else:
            draw.ellipse(box, fill=color)
        label = "F" if c in "Cc" else c.upper()
        draw.text((x0 + scale / 2, y0 + scale / 2), label, fill=(255, 255, 255), font=font, anchor="mm")
    return image


_UNIT_CODES = np.frombuffer(b"WMRBKTCFwmrbktcf", dtype=np.uint8)


def _font(image_font: Any, size: int) -> Any:
    try:
        return image_font.load_default(size=size)
    except TypeError:  # Pillow < 10.1: one fixed-size bitmap font
        return image_font.load_default()


def save_png(board: np.ndarray, path: str | Path, scale: int = 16, caption: str | None = None) -> Path:
    """Writes ``board_to_image(board, scale, caption)`` to ``path`` as PNG."""
    path = Path(path)
    image = board_to_image(board, scale, caption)
    write_atomically(path, lambda f: image.save(f, format="PNG"))
    return path


def save_gif(boards: Sequence[np.ndarray], path: str | Path, scale: int = 12, duration_ms: int = 120,
             captions: Sequence[str] | None = None) -> Path:
    """Writes the boards as an animated GIF (looping, ``duration_ms`` per frame)."""
    if not boards:
        raise ValueError("no boards to write")
    from PIL import Image

    path = Path(path)
    images = [board_to_image(b, scale, captions[i] if captions else None) for i, b in enumerate(boards)]
    # One palette for all frames, from the first (it shows both players and
    # every terrain), without dithering: flat colours compress well.
    palette = images[0].quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    frames = [image.quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
    write_atomically(path, lambda f: frames[0].save(f, format="GIF", save_all=True, append_images=frames[1:],
                                                    duration=duration_ms, loop=0))
    return path


# ---------------------------------------------------------------------------
# Replays


def board_crc(board: np.ndarray) -> int:
    """CRC-32 of a board's bytes (what a replay stores per step)."""
    return zlib.crc32(np.ascontiguousarray(board, dtype=np.uint8).tobytes())


@dataclasses.dataclass
class Replay:
    """One MiniRTS episode: enough to re-simulate it exactly.

    ``actions[t]`` holds the action of each seat at step t (ignored for
    ``seats=0``, where built-in AIs play both sides); ``board_crcs`` has one
    entry per board, the first before any action and the last the final
    position, so ``len(board_crcs) == len(actions) + 1``.
    """

    options: dict[str, Any]
    episode_seed: int
    actions: list[list[int]]
    board_crcs: list[int]
    rewards: list[float] = dataclasses.field(default_factory=list)  # per seat, on the final step
    won: list[bool] = dataclasses.field(default_factory=list)  # per seat
    game: str = "minirts"
    version: int = 1

    def save(self, path: str | Path) -> Path:
        """Writes the replay as JSON."""
        path = Path(path)
        write_text_atomically(path, json.dumps(dataclasses.asdict(self)))
        return path

    @classmethod
    def load(cls, path: str | Path) -> Replay:
        data = json.loads(Path(path).read_text())
        if data.get("version") != 1 or data.get("game") != "minirts":
            raise ValueError(f"{path}: not a version 1 MiniRTS replay")
        return cls(**data)

    @property
    def num_seats(self) -> int:
        return max(1, int(self.options.get("seats", 1)))


@dataclasses.dataclass
class Episode:
    """A played episode: its replay and every board (``boards[-1]`` is the final one)."""

    replay: Replay
    boards: list[np.ndarray]
    ticks: list[int]  # the game tick of each board


def random_policy(num_actions: int, seed: int = 0) -> Policy:
    """Uniformly random commands."""
    rng = np.random.default_rng(seed)
    return lambda batch: rng.integers(0, num_actions, len(batch["board"]))


def play(options: Mapping[str, Any] | None = None, policy: Policy | None = None, seed: int = 0,
         max_steps: int = 100_000, inputs: Sequence[str] = ()) -> Episode:
    """Plays one episode of MiniRTS with ``options`` and records it.

    ``policy(batch)`` returns one action per row of the batch (a row per
    seat; ``batch.seats`` says which), from the keys ``board`` plus
    ``inputs`` (e.g. ``("s",)`` for a model). Without a policy, every seat
    plays command 0 (idle) -- what ``seats=0`` (AI vs AI) wants.
    """
    return _run(dict(options or {}), policy, seed, max_steps, inputs, recorded=None)


def replay_boards(replay: Replay) -> Episode:
    """Re-simulates ``replay`` (without checking it): the boards it produces."""
    return _run(dict(replay.options), None, 0, len(replay.actions), (), recorded=replay, check=False)


def verify(replay: Replay) -> Episode:
    """Re-simulates ``replay`` and checks every board against its CRC; raises ReplayMismatch."""
    return _run(dict(replay.options), None, 0, len(replay.actions), (), recorded=replay, check=True)


def _run(options: dict[str, Any], policy: Policy | None, seed: int, max_steps: int, inputs: Sequence[str],
         recorded: Replay | None, check: bool = False) -> Episode:
    import elfpy

    game_options = {"board": True, **options}
    if recorded is not None:
        game_options["episode_seed"] = recorded.episode_seed
    gc = elfpy.GameContext("minirts", num_games=1, num_threads=1, seed=seed, deterministic=True, **game_options)
    seats = gc.num_seats
    keys = ["board", "final_board", "episode_seed", "terminal", "r", "won", "frames", *inputs]
    gc.add_tag("actor", batch_size=seats, inputs=list(dict.fromkeys(keys)), replies=["a"])
    boards: list[np.ndarray] = []
    ticks: list[int] = []
    actions: list[list[int]] = []
    episode_seed = -1
    rewards: list[float] = []
    won: list[bool] = []
    tick = 0
    with gc:
        for batch in gc:
            order = np.argsort(batch.seats, kind="stable")  # rows by seat
            terminal = bool(batch["terminal"][0])
            if episode_seed < 0:
                episode_seed = int(batch["episode_seed"][0])
            board = batch["final_board" if terminal else "board"][order[0]]
            boards.append(np.array(board, copy=True))
            tick += int(batch["frames"][0])
            ticks.append(tick)
            step = len(boards) - 1
            if check and recorded is not None and (
                step >= len(recorded.board_crcs) or board_crc(boards[-1]) != recorded.board_crcs[step]
            ):
                batch.reply({"a": np.zeros(len(batch), dtype=np.int64)})
                raise ReplayMismatch(f"board {step} (tick {tick}) differs from the recorded one")
            if terminal or len(actions) >= max_steps:
                rewards = [float(batch["r"][i]) for i in order]
                won = [bool(batch["won"][i]) for i in order]
                batch.reply({"a": np.zeros(len(batch), dtype=np.int64)})
                break
            reply = np.zeros(len(batch), dtype=np.int64)
            if recorded is not None:
                reply[order] = np.asarray(recorded.actions[len(actions)], dtype=np.int64)
            elif policy is not None:
                reply = np.asarray(policy(batch), dtype=np.int64).reshape(len(batch))
            actions.append([int(v) for v in reply[order]])
            batch.reply({"a": reply})
    if check and recorded is not None and len(boards) != len(recorded.board_crcs):
        raise ReplayMismatch(f"the replay has {len(recorded.board_crcs)} boards, the re-simulation {len(boards)}")
    replay = Replay(options=dict(options), episode_seed=episode_seed, actions=actions,
                    board_crcs=[board_crc(b) for b in boards], rewards=rewards, won=won)
    return Episode(replay, boards, ticks)


def main(argv: Sequence[str] | None = None) -> None:
    from elfpy.game_defaults import option_default

    parser = argparse.ArgumentParser(prog="python -m elfpy.render.minirts", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default=option_default("minirts", "variant"),
                        help="standard, ctf or tower_defense (default: %(default)s)")
    parser.add_argument("--map_size", type=int, default=int(option_default("minirts", "map_size")),
                        help="width and height of the map, in tiles (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the context (draws the episode seed)")
    parser.add_argument("--step", type=int, default=0, help="show the board after this many steps (AI vs AI)")
    parser.add_argument("--png", default="", help="also write the board as PNG here")
    parser.add_argument("--scale", type=int, default=16, help="pixels per tile of the PNG")
    args = parser.parse_args(argv)
    options = {"variant": args.variant, "map_size": args.map_size, "seats": 0}
    episode = play(options, seed=args.seed, max_steps=args.step)
    board = episode.boards[-1]
    print(f"MiniRTS {args.variant}, episode seed {episode.replay.episode_seed}, tick {episode.ticks[-1]}")
    print(board_to_ascii(board))
    if args.png:
        print("wrote", save_png(board, args.png, args.scale, caption=f"tick {episode.ticks[-1]}"))


if __name__ == "__main__":
    main()
