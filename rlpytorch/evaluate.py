"""Evaluate a saved model: ``python -m rlpytorch.evaluate --load checkpoints/last.pt``.

The checkpoint carries the training run's configuration, so the game and the
model are rebuilt from it; any option given here overrides the saved one
(e.g. ``--episodes 1000`` or ``--eval_sampler multinomial``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import torch

from .args_provider import Arg, ArgsProvider, Configurable, format_config
from .game_loader import GameLoader
from .model_base import read_checkpoint
from .model_loader import load_model
from .runner import evaluate
from .trainer import EvalResult, Evaluator


class EvaluateScript(Configurable):
    """What to evaluate, and where."""

    args = (
        Arg("load", "", "checkpoint to evaluate (required)"),
        Arg("device", "cpu", "torch device of the model"),
        Arg("torch_threads", 1, "intra-op threads of torch"),
        Arg("progress", True, "show a progress bar"),
    )


def main(argv: Sequence[str] | None = None) -> EvalResult:
    """Evaluate the checkpoint named by ``--load``; prints and returns the result."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--load", default="")
    known, _ = pre.parse_known_args(argv)
    saved = read_checkpoint(known.load)["args"] if known.load else {}
    provider = ArgsProvider([EvaluateScript, GameLoader, Evaluator], description=__doc__)
    config = provider.parse(argv, defaults=saved)
    if not config["load"]:
        provider.parser.error("--load is required")
    print("effective configuration:\n" + format_config(config), flush=True)
    torch.set_num_threads(config["torch_threads"])

    loader = GameLoader.from_config(config)
    probe = loader.context(num_games=1)  # the spec the model was trained on; never started
    try:
        model = load_model(config["load"], loader.observation_spec(probe), loader.num_actions(probe))
    finally:
        probe.stop()
    result = evaluate(model, loader, config, progress=config["progress"])
    print(f"{config['eval_sampler']} evaluation of {config['load']} (step {model.step}): {result}")
    return result


if __name__ == "__main__":
    main()
