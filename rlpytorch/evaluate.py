"""Evaluate a saved model: ``python -m rlpytorch.evaluate --load runs/<run>`` (a run's
folder, for its last checkpoint) or ``--load path/to/checkpoint.pt``.

The checkpoint carries the training run's configuration, so the game and the
model are rebuilt from it; any option given here overrides the saved one
(e.g. ``--episodes 1000`` or ``--eval_sampler multinomial``). Where it runs
and how it shows itself (``--device``, ``--progress``, ``--verbose``: the
effective configuration printed first) are this run's, never the
checkpoint's: a model trained on a GPU evaluates on the CPU unless told. With
``--video DIR`` a few episodes are also saved as GIF or MP4 (``elfpy.video``);
a game or model that cannot be recorded is refused before anything is played.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .acting.prev_inputs import prev_shapes
from .core.args_provider import (
    ArgsError,
    ArgsProvider,
    Configurable,
    at_least,
    format_config,
    setting,
    settings_record,
)
from .core.devices import check_devices
from .core.game_loader import GameLoader, parse_options
from .core.seeding import RunSeed
from .core.settings import device_setting, progress_setting, torch_threads_setting
from .learners.evaluator import EvalResult, Evaluator
from .models.base import Model, read_checkpoint
from .models.loader import load_model
from .run.eval_iters import evaluate
from .run.run_dir import checkpoint_path
from .run.screen import Screen
from .training import command_line

__all__ = ["EvaluateScript", "check_video", "load_trained", "main", "save_videos"]

# Where and how this run runs, not how its model was trained: not taken from a checkpoint.
RUN_TIME_SETTINGS = ("device", "progress", "verbose")


@dataclass
class EvaluateScript(Configurable):
    """What to evaluate, and where."""

    load: str = setting("", "checkpoint, or run folder (its last checkpoint), to evaluate (required)")
    device: str = device_setting()
    torch_threads: int = torch_threads_setting()
    progress: bool = progress_setting()
    video: str = setting("", "folder to save videos of evaluated episodes in (empty: none); games that draw "
                             "themselves: Python-hosted ones (rgb_array) and MiniRTS")
    video_episodes: int = setting(1, "episodes saved as videos with --video", bounds=at_least(1))
    video_format: str = setting("gif", "video file format", choices=("gif", "mp4"))


def main(argv: Sequence[str] | None = None) -> EvalResult:
    """Evaluate the checkpoint named by ``--load``; prints and returns the result."""
    pre = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    pre.add_argument("--load", default="")
    try:
        load = pre.parse_known_args(argv)[0].load
    except argparse.ArgumentError:  # --load without a value: the full parser below says so, under this prog's name
        load = ""
    saved = read_checkpoint(checkpoint_path(load))["args"] if load else {}
    trained = {name: value for name, value in saved.items() if name not in RUN_TIME_SETTINGS}
    components = [EvaluateScript, Screen, RunSeed, GameLoader, Evaluator]
    provider = ArgsProvider(components, description=__doc__, prog="python -m rlpytorch.evaluate")
    config = provider.settings_class("EvaluateConfig")(**provider.parse(argv, defaults=trained))
    if not config.load:
        provider.parser.error("--load is required")
    check_devices(config, provider.args.values())
    if config.verbose:  # as a training run: the configuration only when asked for
        print("effective configuration:\n" + format_config(settings_record(config)), flush=True)
    torch.set_num_threads(config.torch_threads)

    model, loader = load_trained(config.load, settings_record(config))
    if config.video:
        check_video(model, loader)  # now, not after the evaluation's episodes
    result = evaluate(
        model, loader, config.eval_episodes, config.eval_sampler, device=config.device,
        progress=config.progress, seed=config.seed,
    )
    print(f"{config.eval_sampler} evaluation of {config.load} (step {model.step}): {result}")
    if config.video:
        paths = save_videos(model, loader, config.video, config.video_episodes, config.video_format,
                            greedy=config.eval_sampler == "greedy", seed=config.seed)
        print(f"videos: {', '.join(str(path) for path in paths)}")
    return result


def load_trained(load: str | Path, overrides: Mapping[str, Any] | None = None) -> tuple[Model, GameLoader]:
    """The model saved at ``load`` (a checkpoint, or a run folder for its last one) and
    the loader of the game it was trained on, both rebuilt from the checkpoint's
    configuration; ``overrides`` replaces saved settings (``{"num_threads": 1}``).
    Only tensors are read from the file (``read_checkpoint``), so it cannot run code."""
    path = checkpoint_path(load)
    loader = GameLoader.from_config({**read_checkpoint(path)["args"], **(overrides or {})})
    probe = loader.context(num_games=1, seed=0)  # the game's spec as trained; never started (its seed unused)
    try:
        model = load_model(path, loader.observation_spec(probe), loader.num_actions(probe), probe.num_seats)
    finally:
        probe.stop()
    return model, loader


def save_videos(model: Model, loader: GameLoader, folder: str, episodes: int, fmt: str,
                greedy: bool = True, *, seed: int) -> list[Path]:
    """``episodes`` episodes of the loader's game played by ``model`` (through
    ``predict``), seeded with ``seed``, saved as videos in ``folder`` by ``elfpy.video``."""
    import elfpy.video

    check_video(model, loader)

    def make_policy() -> elfpy.video.Policy:
        state = None

        def act(rows: Mapping[str, np.ndarray]) -> np.ndarray:
            nonlocal state
            actions, state = model.predict(rows, state, deterministic=greedy)
            return actions

        return act

    return elfpy.video.record(
        loader.game, make_policy, episodes, folder, obs_keys=model.obs_keys, fmt=fmt, seed=seed,
        preset=loader.preset or None, options=parse_options(loader.game_options, literal=loader.hosted),
    )


def check_video(model: Model, loader: GameLoader) -> None:
    """Raise ``ArgsError`` if ``--video`` cannot record ``model`` playing the loader's game."""
    import elfpy.video

    try:
        elfpy.video.check_drawable(loader.game)
    except ValueError as error:
        raise ArgsError(f"--video: {error}") from None
    if prev_shapes(model):  # the recording loop hands the policy observations only, not the rewards
        raise ArgsError("--video cannot feed a model its previous action and reward yet (--prev_action, "
                        "--prev_reward); evaluate it without --video")


if __name__ == "__main__":
    command_line(main, "python -m rlpytorch.evaluate")
