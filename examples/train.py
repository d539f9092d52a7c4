"""Train an agent on a native game, e.g. ``python examples/train.py --game cartpole``.

Every option comes from the component that uses it (``--help`` lists them by
component); ``--config file.yaml`` sets many at once and the command line
overrides it. The run prints its effective configuration, trains with a
progress bar and a stats line per interval, saves checkpoints (which carry
that configuration) and finally evaluates the greedy policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from rlpytorch.args_provider import Arg, ArgsProvider, Configurable, format_config
from rlpytorch.game_loader import GameLoader
from rlpytorch.methods import METHODS, ActorCritic
from rlpytorch.model_interface import ModelInterface
from rlpytorch.model_loader import ModelLoader
from rlpytorch.runner import MultiProcessRun, SingleProcessRun, evaluate
from rlpytorch.sampler import Sampler
from rlpytorch.stats import StatsLogger
from rlpytorch.trainer import Evaluator, Trainer

RUNNERS = {"single": SingleProcessRun, "multi": MultiProcessRun}


class TrainScript(Configurable):
    """Choices of this script: the method and whether to evaluate at the end."""

    args = (
        Arg("method", "actor_critic", "learning method", choices=tuple(METHODS)),
        Arg("runner", "single", "single process, or the learner in its own process", choices=tuple(RUNNERS)),
        Arg("eval_at_end", True, "evaluate the trained model (see --eval_episodes)"),
        Arg("torch_threads", 1, "intra-op threads of torch (small models: 1 is fastest)"),
    )


COMPONENTS = [
    TrainScript,
    GameLoader,
    ModelLoader,
    ModelInterface,
    ActorCritic,
    Sampler,
    Trainer,
    MultiProcessRun,  # its groups include SingleProcessRun's loop options
    StatsLogger,
    Evaluator,
]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train as ``argv`` says; returns the run summary and evaluation result."""
    config = ArgsProvider(COMPONENTS, description=__doc__).parse(argv)
    print("effective configuration:\n" + format_config(config), flush=True)
    torch.manual_seed(config["seed"])
    torch.set_num_threads(config["torch_threads"])

    loader = GameLoader.from_config(config)
    gc = loader.train_context()
    obs_shape, num_actions = loader.shapes(gc)
    model = ModelLoader.from_config(config).build(obs_shape, num_actions, config)
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
        print(f"greedy evaluation: {result}")
    return {"summary": summary, "eval": result, "config": config}


if __name__ == "__main__":
    main()
