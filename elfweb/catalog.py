"""What a page may open: the entries fixed when the server starts.

Each entry has a short id the page sends back (``{"type": "open", "entry": id}``)
and a function that starts its game; the paths behind the entries are the
ones given on the command line, read here once, so nothing the page sends
ever names a file. Models load through ``rlpytorch.evaluate.load_trained``
(tensors only) and Go networks through ``elfpy.gtp.load_evaluator`` (a file
that could run code is refused).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elfweb.follow import FollowedRun
from elfweb.go_game import GoGame
from elfweb.minirts_play import MiniRtsPlay
from elfweb.replays import MiniRtsReplay, SgfReplay
from elfweb.watch import EngineWatch, HostedWatch


@dataclass(frozen=True)
class Entry:
    id: str
    label: str
    # "watch" (pictures and controls), "command" (the same, and a person's strategic commands), "play" (MiniRTS
    # with the mouse: the person's units commanded one by one), "go" (a board to play on), "replay" (pictures
    # to scrub through), "sgf" (a Go board to scrub through) or "run" (a training run's curve beside its
    # latest checkpoint playing)
    kind: str
    # seed -> a new EngineWatch, HostedWatch, MiniRtsPlay, GoGame, MiniRtsReplay, SgfReplay or FollowedRun
    open: Callable[[int], Any]

    def describe(self) -> dict[str, str]:
        return {"id": self.id, "label": self.label, "kind": self.kind}


def builtin_entries(playouts: int, games: Sequence[str] = ()) -> list[Entry]:
    """MiniRTS by its built-in AI, at random, or commanded from the page; Go against the
    built-in search (equal priors) or between two people; ``games`` (more games to
    watch, e.g. "gym:CartPole-v1") played at random."""
    from elfpy.go import play

    entries = [
        Entry("minirts-ai", "MiniRTS: built-in AI against built-in AI", "watch",
              lambda seed: EngineWatch("minirts", {}, "ai", seed=seed)),
        Entry("minirts-random", "MiniRTS: random commands against the built-in AI", "watch",
              lambda seed: EngineWatch("minirts", {}, "random", seed=seed)),
        Entry("minirts-human", "MiniRTS: you command (strategic commands) against the built-in AI", "command",
              lambda seed: EngineWatch("minirts", {}, "human", seed=seed)),
        Entry("minirts-play", "MiniRTS: you play with the mouse against the built-in AI", "play",
              lambda seed: MiniRtsPlay({}, seed=seed)),
        *(Entry(f"minirts-play-{variant}", f"MiniRTS, {rules}: you play with the mouse against the built-in AI",
                "play", lambda seed, variant=variant: MiniRtsPlay({"variant": variant}, seed=seed))
          for variant, rules in (("ctf", "capture the flag"), ("tower_defense", "tower defense"))),
        Entry("go-search", f"Go 9x9: you (black) against the search, no network ({playouts} playouts)", "go",
              lambda seed: GoGame(play.uniform_evaluator, playouts)),
        Entry("go-people", "Go 9x9: two people at one board", "go", lambda seed: GoGame(None, playouts)),
    ]
    for game in games:
        entries.append(_game_entry(game))
    return entries


def _game_entry(game: str) -> Entry:
    if game.startswith("gym:"):
        try:
            HostedWatch(game, None, {}, "random").close()  # a game that cannot be made or drawn fails at start
        except Exception as error:  # Gymnasium's errors (an unknown id, a missing package) are not ValueErrors
            raise ValueError(f"--game {game}: {type(error).__name__}: {error}") from None
        return Entry(_entry_id("random", game), f"{game}: random actions", "watch",
                     lambda seed: HostedWatch(game, None, {}, "random", seed=seed))
    EngineWatch(game, {}, "random").close()
    return Entry(_entry_id("random", game), f"{game}: random actions", "watch",
                 lambda seed: EngineWatch(game, {}, "random", seed=seed))


def loaded_entry(path: str, playouts: int) -> Entry:
    """The entry of a file given with ``--load``: a Go network (``.pt2``), a MiniRTS replay (``.json``), a
    Go game (``.sgf``), else a checkpoint or a run folder (its last checkpoint) whose model plays the game
    it was trained on. Each is read here, so that a bad file fails at start."""
    name = Path(path).name
    if path.endswith(".json"):
        MiniRtsReplay(path)
        return Entry(_entry_id("replay", name), f"MiniRTS replay {name}", "replay", lambda seed: MiniRtsReplay(path))
    if path.endswith(".sgf"):
        SgfReplay(path)
        return Entry(_entry_id("sgf", name), f"Go game {name}", "sgf", lambda seed: SgfReplay(path))
    if path.endswith(".pt2"):
        from elfpy.gtp import load_evaluator

        evaluator = load_evaluator(path)
        return Entry(_entry_id("go", name), f"Go: you (black) against {name} ({playouts} playouts)", "go",
                     lambda seed: GoGame(evaluator, playouts))
    if Path(path).is_dir() and (Path(path) / "progress.csv").exists():  # a run folder: followed as it trains
        model_watch(Path(path), 0)[0].close()  # a run whose model cannot be watched fails at start
        return Entry(_entry_id("run", name), f"run {name}: its curve, and its latest checkpoint playing", "run",
                     lambda seed: FollowedRun(path, model_watch, seed))
    watch, step = model_watch(Path(path), 0)
    watch.close()
    return Entry(_entry_id("model", name), f"{watch.game}: {name} (step {step})", "watch",
                 lambda seed: model_watch(Path(path), seed)[0])


def play_entry(path: str) -> Entry | None:
    """MiniRTS with the mouse against the checkpoint at ``path`` (or a run folder's last) when it plays native
    MiniRTS; None for any other file."""
    if path.endswith((".json", ".sgf", ".pt2")) or (Path(path) / "progress.csv").exists():
        return None
    from rlpytorch.evaluate import load_trained

    model, loader = load_trained(Path(path), {"num_threads": 1})
    if loader.hosted or loader.game != "minirts":
        return None
    name = Path(path).name

    def open_game(seed: int) -> MiniRtsPlay:
        model.eval()
        return MiniRtsPlay(loader.options, model, seed=seed)

    open_game(0).close()  # a model the game cannot feed fails at start
    return Entry(_entry_id("play", name), f"MiniRTS: you play with the mouse against {name}", "play", open_game)


def model_watch(path: Path, seed: int) -> tuple[EngineWatch | HostedWatch, int]:
    """The checkpoint at ``path`` (or a run folder's last one) playing the game it was trained on, and
    the model's step; ``ArgsError`` (a ValueError) if the game cannot draw itself or the loop cannot feed
    the model."""
    from rlpytorch.evaluate import check_video, load_trained

    model, loader = load_trained(path, {"num_threads": 1})
    check_video(model, loader)
    model.eval()
    if loader.hosted:
        watch = HostedWatch(loader.game, loader.preset or None, loader.options, "model", model, seed=seed)
    else:
        watch = EngineWatch(loader.game, loader.options, "model", model, seed=seed)
    return watch, model.step


def _entry_id(prefix: str, name: str) -> str:
    return f"{prefix}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}"[:48]


def catalog(entries: Sequence[Entry]) -> dict[str, Entry]:
    """Entries by id; ValueError if two share one (the same file given twice)."""
    by_id: dict[str, Entry] = {}
    for entry in entries:
        if entry.id in by_id:
            raise ValueError(f"two entries named '{entry.id}': give each file once")
        by_id[entry.id] = entry
    return by_id
