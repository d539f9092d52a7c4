"""Evaluate a saved model: ``python -m rlpytorch.evaluate --load runs/<run>`` (a run's
folder, for its last checkpoint) or ``--load path/to/checkpoint.pt``.

The checkpoint carries the training run's configuration, so the game and the
model are rebuilt from it; any option given here overrides the saved one
(e.g. ``--episodes 1000`` or ``--eval_sampler multinomial``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .args_provider import ArgsProvider, Configurable, format_config, setting
from .game_loader import GameLoader
from .model_base import read_checkpoint
from .model_loader import load_model
from .run_dir import checkpoint_path
from .runner import evaluate, progress_setting
from .train import torch_threads_setting
from .trainer import EvalResult, Evaluator, device_setting

__all__ = ["EvaluateScript", "main"]


@dataclass
class EvaluateScript(Configurable):
    """What to evaluate, and where."""

    load: str = setting("", "checkpoint, or run folder (its last checkpoint), to evaluate (required)")
    device: str = device_setting()
    torch_threads: int = torch_threads_setting()
    progress: bool = progress_setting()


def main(argv: Sequence[str] | None = None) -> EvalResult:
    """Evaluate the checkpoint named by ``--load``; prints and returns the result."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--load", default="")
    known, _ = pre.parse_known_args(argv)
    saved = read_checkpoint(checkpoint_path(known.load))["args"] if known.load else {}
    components = [EvaluateScript, GameLoader, Evaluator]
    provider = ArgsProvider(components, description=__doc__, prog="python -m rlpytorch.evaluate")
    config = provider.parse(argv, defaults=saved)
    if not config["load"]:
        provider.parser.error("--load is required")
    print("effective configuration:\n" + format_config(config), flush=True)
    torch.set_num_threads(config["torch_threads"])

    path = checkpoint_path(config["load"])
    loader = GameLoader.from_config(config)
    probe = loader.context(num_games=1)  # the spec the model was trained on; never started
    try:
        model = load_model(path, loader.observation_spec(probe), loader.num_actions(probe))
    finally:
        probe.stop()
    result = evaluate(
        model, loader, config["eval_episodes"], config["eval_sampler"], device=config["device"],
        progress=config["progress"],
    )
    print(f"{config['eval_sampler']} evaluation of {config['load']} (step {model.step}): {result}")
    return result


if __name__ == "__main__":
    main()
