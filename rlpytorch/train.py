"""Train an agent on a native game, e.g. ``python -m rlpytorch.train --game cartpole``.

Every option comes from the component that uses it (``--help`` lists them by
component); ``--config file.yaml`` sets many at once and the command line
overrides it. The run prints its effective configuration, trains with a
progress bar and a stats line per interval, saves checkpoints (which carry
that configuration) and finally evaluates the greedy policy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .args_provider import Arg, ArgsProvider, Configurable, format_config, read_config_file
from .game_loader import GameLoader
from .methods import METHODS
from .model_interface import ModelInterface
from .model_loader import ModelLoader
from .runner import MultiProcessRun, SingleProcessRun, evaluate
from .sampler import Sampler
from .stats import StatsLogger
from .trainer import Evaluator, Trainer

RUNNERS = {"single": SingleProcessRun, "multi": MultiProcessRun}


class TrainScript(Configurable):
    """Choices of this script: the method and whether to evaluate at the end."""

    args = (
        Arg("method", "actor_critic", "learning method", choices=tuple(METHODS)),
        Arg("runner", "single", "single process, or the learner in its own process", choices=tuple(RUNNERS)),
        Arg("eval_at_end", True, "evaluate the trained model (see --eval_episodes)"),
        Arg("torch_threads", 1, "intra-op threads of torch (small models: 1 is fastest)"),
    )


def components(method: str) -> list[type[Configurable]]:
    """The components of a run with ``method`` (only its arguments are offered)."""
    return [
        TrainScript,
        GameLoader,
        ModelLoader,
        ModelInterface,
        METHODS[method],
        Sampler,
        Trainer,
        MultiProcessRun,  # its groups include SingleProcessRun's loop options
        StatsLogger,
        Evaluator,
    ]


def chosen_method(argv: Sequence[str] | None) -> str:
    """``--method`` from the command line, else from ``--config``, else the default."""
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--method", choices=tuple(METHODS))
    pre.add_argument("--config", type=Path)
    known, _ = pre.parse_known_args(argv)
    if known.method is None and known.config is not None:
        known.method = read_config_file(known.config).get("method")
    return known.method or TrainScript.defaults()["method"]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train as ``argv`` says; returns the run summary and evaluation result.

    A method may suggest settings of other components (``PPO.run_defaults``,
    e.g. a longer window ``T``); a config file and the command line override them.
    """
    method = chosen_method(argv)
    suggested = getattr(METHODS[method], "run_defaults", {})
    config = ArgsProvider(components(method), description=__doc__).parse(argv, defaults=suggested)
    print("effective configuration:\n" + format_config(config), flush=True)
    torch.manual_seed(config["seed"])
    torch.set_num_threads(config["torch_threads"])

    loader = GameLoader.from_config(config)
    gc = loader.context()
    obs_spec, num_actions = loader.observation_spec(gc), loader.num_actions(gc)
    model = ModelLoader.from_config(config).build(obs_spec, num_actions, config)
    loader.add_train_tags(gc, model.state_size)
    trainer = Trainer.from_config(
        config,
        mi=ModelInterface.actor_critic(model, config),
        method=METHODS[config["method"]].from_config(config),
        sampler=Sampler.from_config(config, seed=config["seed"]),
    )
    logger = StatsLogger.from_config(config)
    runner = RUNNERS[config["runner"]].from_config(config, trainer=trainer, logger=logger, run_config=config)
    summary = runner.run(gc)
    logger.close()
    print(f"trained {summary.frames:,} frames in {summary.seconds:.1f}s ({summary.fps:,.0f} FPS)")
    result = None
    if config["eval_at_end"] and not summary.interrupted:
        result = evaluate(trainer.mi["model"], loader, config, progress=config["progress"])
        print(f"{config['eval_sampler']} evaluation: {result}")
    return {"summary": summary, "eval": result, "config": config}


if __name__ == "__main__":
    main()
