"""Train an agent, e.g. ``python -m rlpytorch.train --game cartpole``.

Every option comes from the component that uses it (``--help`` lists them by
component); ``--config file.yaml`` sets many at once and the command line
overrides it. The run prints its effective configuration, trains with a
progress bar and a stats line per interval, and finally evaluates the greedy
policy. Everything goes into the run's folder (``--save_dir``, see
``rlpytorch.run.run_dir``): configuration, command line, versions, logs and
checkpoints (which carry the configuration).

Under ``torchrun`` (see ``rlpytorch.core.distributed``) each rank runs its own
games and actor, gradients are averaged over the ranks, and only rank 0
logs, evaluates and saves.

The value-based methods (``--method dqn``, ``r2d2``, ``drqn``) learn from a
``Replay`` through the ``ValueTrainer`` (replay ratio, epsilon schedule) with
a Q model (``q``, ``q_lstm``, ``q_gru``); ``--load`` starts from their weights,
with an empty replay. The off-policy methods on Box actions (``--method ddpg``,
``td3``, ``sac``) learn from a ``Replay`` through the ``OffPolicyTrainer`` (the
same replay ratio and learning starts, ``Exploration`` for acting) with an
``actor_q`` model; ``--method maddpg`` through the ``JointTrainer`` with a
``seat_actor_q`` model, its replay holding every seat of a game on each row.
Under ``--runner multi`` the replay lives in the learner process
(``run.multi_process``; not for MADDPG).

``--resume FOLDER`` continues the run in FOLDER from its ``last.pt`` (or
``--resume FILE`` from that checkpoint): its configuration, with the command
line's settings over it (e.g. a larger ``--num_frames``), and its training
state (``rlpytorch.run.resume`` says what that holds and when it is exact). A new
run refuses a ``--save_dir`` that already holds a run.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import gc as garbage_collector
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .acting.exploration import Exploration
from .acting.prev_inputs import prev_shapes
from .acting.sampler import Sampler
from .core import distributed
from .core.args_provider import (
    ArgsError,
    ArgsProvider,
    Configurable,
    convert_from,
    format_config,
    read_config_file,
    setting,
)
from .core.game_loader import GameLoader
from .core.stats import StatsLogger
from .learners.offpolicy_trainer import JointTrainer, OffPolicyTrainer, offpolicy_interface
from .learners.trainer import Evaluator, Method, Trainer, check_eval_episodes
from .learners.value_trainer import ValueTrainer, value_interface
from .methods import METHODS, OFFPOLICY_METHODS, VALUE_METHODS
from .models.base import CheckpointError, Model
from .models.interface import ModelInterface
from .models.loader import ModelLoader
from .models.q_networks import QValueHead
from .replay import Replay
from .run.eval_iters import evaluate
from .run.multi_process import MultiProcessRun
from .run.resume import engine_seed, read_resume_checkpoint, resume_argument, resumed_config
from .run.run_dir import check_run_dir, resolve_run_dir, save_dir_setting, undo_failed_start, write_run_files
from .run.single_process import SingleProcessRun

__all__ = [
    "TrainScript",
    "build_method",
    "build_offpolicy_trainer",
    "build_trainer",
    "chosen_method",
    "command_line",
    "components",
    "main",
    "torch_threads_setting",
]

RUNNERS = {"single": SingleProcessRun, "multi": MultiProcessRun}


def torch_threads_setting() -> Any:
    """Torch's intra-op threads, a setting of training and of evaluation."""
    return setting(1, "intra-op threads of torch (small models: 1 is fastest)")


@dataclass
class TrainScript(Configurable):
    """Choices of this script: the method, the runner, the run's folder, the final evaluation."""

    method: str = setting("actor_critic", "learning method", choices=tuple(METHODS))
    runner: str = setting("single", "single process, or the learner in its own process", choices=tuple(RUNNERS))
    save_dir: str = save_dir_setting()
    eval_at_end: bool = setting(True, "evaluate the trained model (see --eval_episodes)")
    torch_threads: int = torch_threads_setting()


def components(method: str) -> list[type[Configurable]]:
    """The components of a run with ``method`` (only its settings are offered)."""
    if method in OFFPOLICY_METHODS:
        learning: list[type[Configurable]] = [METHODS[method], Replay, Exploration, OffPolicyTrainer]
    elif method in VALUE_METHODS:
        learning = [METHODS[method], Replay, Sampler, ValueTrainer]
    else:
        learning = [METHODS[method], Sampler, Trainer]
    return [
        TrainScript,
        GameLoader,
        ModelLoader,
        ModelInterface,
        *learning,
        MultiProcessRun,  # its groups include SingleProcessRun's loop settings
        StatsLogger,
        Evaluator,
    ]


def chosen_method(argv: Sequence[str] | None, resumed: Mapping[str, Any] | None = None) -> str:
    """``--method`` from the command line, else from ``--config``, else that of
    the ``resumed`` run's configuration, else the default."""
    pre = argparse.ArgumentParser(prog="python -m rlpytorch.train", add_help=False, allow_abbrev=False)
    pre.add_argument("--method", choices=tuple(METHODS))
    pre.add_argument("--config", type=Path)
    known, _ = pre.parse_known_args(argv)
    if known.method is not None:
        return known.method
    method = next(arg for arg in TrainScript.settings() if arg.name == "method")
    in_file = read_config_file(known.config).get("method") if known.config is not None else None
    if in_file is not None:
        return convert_from(known.config, method, in_file)
    if (resumed or {}).get("method") is not None:
        return convert_from("the resumed run's configuration", method, resumed["method"])
    return method.default


def add_tags(method: str, loader: GameLoader, gc: Any, model: Model) -> Any:
    """``gc`` with the ``actor`` and ``train`` tags of ``method`` for ``model``
    (its recurrent state and previous-action/reward inputs)."""
    if method in VALUE_METHODS or method in OFFPOLICY_METHODS:
        return loader.add_value_tags(gc, model.state_size, prev_shapes(model))
    return loader.add_train_tags(gc, model.state_size, prev_shapes(model))


def build_method(name: str, config: Mapping[str, Any], seed: int) -> Method:
    """The method ``name`` from its settings in ``config``. A method that draws
    random numbers (PPO's minibatch order) has a ``seed`` field: it gets ``seed``."""
    cls = METHODS[name]
    takes_seed = any(f.name == "seed" for f in dataclasses.fields(cls))
    return cls.from_config(config, **({"seed": seed} if takes_seed else {}))


def build_trainer(
    method: str, config: Mapping[str, Any], loader: GameLoader, gc: Any, model: Model
) -> Trainer | ValueTrainer:
    """The trainer of ``method`` over ``model``, with ``gc``'s tags added: the
    actor-critic ``Trainer``, or for value-based methods the ``ValueTrainer``
    over a fresh ``Replay`` (one lane per game and seat)."""
    mi = ModelInterface.from_config(config)
    statistics = loader.statistic_keys(gc)
    if method in OFFPOLICY_METHODS:
        return build_offpolicy_trainer(method, config, loader, gc, model, mi)
    sampler = Sampler.from_config(config, seed=loader.seed)
    if method not in VALUE_METHODS:
        add_tags(method, loader, gc, model)
        return Trainer.from_config(
            config, mi=mi.add_actor_critic(model), method=build_method(method, config, loader.seed),
            sampler=sampler, seats_per_game=gc.num_seats, statistics=statistics,
        )
    if not any(isinstance(m, QValueHead) for m in model.modules()):
        raise ValueError(f"--method {method} needs a Q model (--model q, q_lstm or q_gru), not {model.name!r}")
    if distributed.is_distributed():
        raise ValueError(f"--method {method} does not run under torchrun (its replay is one process's)")
    cls = METHODS[method]
    in_sequences = any(f.name == "n_step" for f in dataclasses.fields(cls))  # R2D2: n-step inside the sequence
    learner = cls.from_config(config, **({"n_step": config["n_step"]} if in_sequences else {}))
    add_tags(method, loader, gc, model)
    seats = gc.num_seats
    replay = Replay.from_config(
        config, num_lanes=loader.num_games * seats, obs_keys=model.obs_keys, gamma=learner.gamma,
        sequence_length=getattr(learner, "replay_length", 0), seed=loader.seed,
    )
    return ValueTrainer.from_config(
        config, mi=value_interface(model, mi), method=learner, sampler=sampler, replay=replay,
        seats_per_game=seats, statistics=statistics,
    )


def acting_device(config: Mapping[str, Any]) -> str:
    """Where evaluation plays: the acting model's device (``--actor_device``, else ``--device``)."""
    return config.get("actor_device") or config["device"]


def build_offpolicy_trainer(
    method: str, config: Mapping[str, Any], loader: GameLoader, gc: Any, model: Model, mi: ModelInterface
) -> OffPolicyTrainer:
    """The ``OffPolicyTrainer`` of ``method`` (DDPG, TD3, SAC) over an ``actor_q`` ``model``
    and a fresh ``Replay`` (one lane per game and seat), with ``gc``'s tags added; for
    MADDPG the ``JointTrainer`` over a ``seat_actor_q`` model and a replay of joint
    transitions (one lane per game, every seat on each row)."""
    learner = METHODS[method].from_config(config, seed=loader.seed)
    learner.check_model(model)
    if distributed.is_distributed():
        raise ValueError(f"--method {method} does not run under torchrun (its replay is one process's)")
    seats = gc.num_seats
    joint = getattr(learner, "joint", False)
    if joint and config["runner"] != "single":
        raise ValueError(f"--method {method} runs with --runner single (its trainer joins a game's seats)")
    if joint and (seats < 2 or model.seats != seats):
        raise ValueError(f"--method {method} learns from every seat of a game together: it needs a game of at "
                         f"least 2 seats and a model of as many; game {loader.game!r} has {seats}, the model "
                         f"{model.seats}")
    add_tags(method, loader, gc, model)
    replay = Replay.from_config(config, num_lanes=loader.num_games * (1 if joint else seats),
                                obs_keys=model.obs_keys, gamma=learner.gamma, joint_seats=seats if joint else 0,
                                seed=loader.seed)
    family = model.policy_family
    exploration = Exploration.from_config(config, low=family.low, high=family.high,
                                          random_frames=config["learning_starts"], seed=loader.seed)
    return (JointTrainer if joint else OffPolicyTrainer).from_config(
        config, mi=offpolicy_interface(model, mi), method=learner, sampler=exploration, replay=replay,
        seats_per_game=seats, statistics=loader.statistic_keys(gc),
    )


def build_runner(method: str, config: Mapping[str, Any], loader: GameLoader, model: Model, trainer: Trainer,
                 run_dir: Path | None, engine_starts: int, main_rank: bool) -> tuple[SingleProcessRun, StatsLogger]:
    """The runner of ``config["runner"]`` over ``trainer`` and its stats logger
    (writing into ``run_dir``); only the main rank evaluates during training."""
    logger = StatsLogger.from_config(config, log_dir=run_dir, echo=main_rank, run_config=config)
    periodic_eval = functools.partial(
        evaluate, loader=loader, eval_episodes=config["eval_episodes"], eval_sampler="greedy",
        device=acting_device(config), progress=False,
    )

    def fresh_context(k: int) -> Any:
        return add_tags(method, loader, loader.context(seed=engine_seed(loader.seed, k)), model)

    runner = RUNNERS[config["runner"]].from_config(
        config, trainer=trainer, logger=logger, run_config=config, save_dir=run_dir,
        periodic_eval=periodic_eval if main_rank else None, fresh_context=fresh_context, engine_starts=engine_starts,
    )
    return runner, logger


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train as ``argv`` says; returns the run summary, evaluation result and configuration.

    A method may suggest settings of other components (``PPO.run_defaults``,
    e.g. a longer window ``T``); a config file and the command line override them.
    """
    result = train(argv)
    # Under torchrun the DistributedDataParallel model holds the process group.
    # Free it (reference cycles included) before the group is destroyed, so the
    # group's threads are joined now and not during the interpreter's exit,
    # where a gloo group can abort the process (SIGABRT, "terminate called
    # without an active exception"; seen once in CI on a finished run).
    garbage_collector.collect()
    distributed.finish()
    return result


def train(argv: Sequence[str] | None) -> dict[str, Any]:
    """The run of ``main``, up to leaving the process group."""
    argv = list(sys.argv[1:] if argv is None else argv)
    resume_file, checkpoint = None, None
    if resume_argument(argv):
        resume_file, checkpoint = read_resume_checkpoint(resume_argument(argv))
    resumed = resumed_config(resume_file, checkpoint)
    method = chosen_method(argv, resumed)
    provider = ArgsProvider(components(method), description=__doc__, prog="python -m rlpytorch.train",
                            epilog=f"The settings above are those of --method {method}; each method has its own:\n"
                                   f"    python -m rlpytorch.train --method ppo --help\n"
                                   f"lists PPO's. Methods: {', '.join(METHODS)}.")
    provider.parser.add_argument("--resume", default="", metavar="FOLDER_OR_FILE",
                                 help="continue the run in this folder (its last.pt), or from this checkpoint")
    config = provider.parse(argv, defaults={**METHODS[method].run_defaults, **resumed})
    config.pop("resume")
    if config["eval_at_end"] or config.get("eval_every"):
        check_eval_episodes(config["eval_episodes"])
    if distributed.init_from_env(config.get("learner_device") or config["device"]) and config["runner"] != "single":
        raise ValueError("under torchrun each rank is one process: use --runner single")
    main_rank = distributed.is_main()  # only rank 0 logs, evaluates and saves
    run_dir = resolve_run_dir(config["save_dir"]) if main_rank else None
    if run_dir is not None:
        check_run_dir(run_dir, resume_file)
    config["save_dir"] = str(run_dir or "")
    if not main_rank:
        config["progress"] = False
    trainer, frames_at_start = None, 0

    def trained_a_frame() -> bool:
        return trainer is not None and trainer.frames > frames_at_start

    with undo_failed_start(run_dir, trained_a_frame):  # so that the same --save_dir works on the next try
        torch.manual_seed(config["seed"])
        torch.set_num_threads(config["torch_threads"])
        with settings_checked():
            loader = GameLoader.from_config({**config, "seed": distributed.rank_seed(config["seed"])})
            # The games' k-th start in the run is seeded from the run's seed stream; a
            # resumed run starts them once more (rlpytorch.run.resume).
            start = 0 if checkpoint is None else checkpoint["resume"]["runner"]["engine_starts"] + 1
            gc = loader.context(seed=engine_seed(loader.seed, start))
        try:
            with settings_checked():
                obs_spec, num_actions = loader.observation_spec(gc), loader.num_actions(gc)
                model = ModelLoader.from_config(config).build(obs_spec, num_actions, gc.num_seats)
                trainer = build_trainer(method, config, loader, gc, model)
                if distributed.is_distributed():
                    trainer.mi.distribute()
                if main_rank:  # everything is built: the run is written down
                    print("effective configuration:\n" + format_config(config), flush=True)
                if run_dir is not None:
                    write_run_files(run_dir, config, ["python", "-m", "rlpytorch.train", *argv], resume_file)
                    print(f"run folder: {run_dir}", flush=True)
                runner, logger = build_runner(method, config, loader, model, trainer, run_dir, start, main_rank)
            if checkpoint is not None:
                runner.load_training_state(checkpoint["resume"])  # last before the run: it sets the random states
                logger.note(f"resumed from {resume_file} at {trainer.frames:,} frames, {trainer.updates:,} updates")
            frames_at_start = trainer.frames
            summary = runner.run(gc)
        except BaseException:
            gc.stop()  # release what the context holds (a hosted one: its worker processes); safe when stopped
            raise
    logger.note(f"trained {summary.frames:,} frames in {summary.seconds:.1f}s ({summary.fps:,.0f} FPS)")
    result = None
    if config["eval_at_end"] and not summary.interrupted and main_rank:
        result = evaluate(
            distributed.unwrap(trainer.mi["model"]),
            loader,
            config["eval_episodes"],
            config["eval_sampler"],
            device=acting_device(config),
            progress=config["progress"],
        )
        logger.note(f"{config['eval_sampler']} evaluation: {result}")
    logger.close()
    return {"summary": summary, "eval": result, "config": config}


@contextlib.contextmanager
def settings_checked() -> Iterator[None]:
    """While the run is built from its settings, a ValueError is a setting
    that the games, the model or the optimizer refused (``--num_games -4``,
    ``--seed -1``, ``--lr nan``, an unknown game): an ``ArgsError``, which the
    command line prints as one line, not a traceback."""
    try:
        yield
    except (ArgsError, CheckpointError):  # already named
        raise
    except ValueError as error:
        raise ArgsError(f"a setting was refused: {error}") from error


def command_line(main: Callable[[Sequence[str] | None], Any], prog: str, argv: Sequence[str] | None = None) -> Any:
    """Run ``main`` for a command line (``argv``, by default ``sys.argv[1:]``)
    and return what it returns: an error in what it was given (an option, a
    config file, a checkpoint) is one line on stderr and exit status 1."""
    try:
        return main(argv)
    except (ArgsError, CheckpointError) as error:
        sys.exit(f"{prog}: error: {error}")


if __name__ == "__main__":
    command_line(main, "python -m rlpytorch.train")
