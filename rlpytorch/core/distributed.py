"""Data-parallel training over processes and machines: torch.distributed, launched by torchrun.

Each rank runs its own games and actor and learns from its own windows;
``DistributedDataParallel`` averages the learner's gradients over the ranks in
the backward pass, so every rank takes the same optimizer step and the
parameters stay equal (rank 0's initial weights are broadcast when the model
is wrapped). With equal per-rank batches and a loss that is a mean over rows,
one step equals a single process's step on the ranks' batches concatenated.
Only rank 0 logs, evaluates and saves. ::

    torchrun --nproc_per_node 2 -m rlpytorch.train --game cartpole        # 2 ranks, one machine
    torchrun --nnodes 2 --nproc_per_node 4 --rdzv_backend c10d \\
        --rdzv_endpoint HOST:29500 -m rlpytorch.train ...                 # 2 machines x 4 ranks

The backend is NCCL when the learner is on a GPU, gloo otherwise.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

__all__ = ["DataParallelModel", "agree_to_stop", "finish", "init_from_env", "is_distributed", "is_main", "rank",
           "rank_seed", "relaunch_command", "unwrap", "world_size"]


def world_size() -> int:
    """Number of ranks (1 outside torchrun)."""
    return dist.get_world_size() if dist.is_initialized() else int(os.environ.get("WORLD_SIZE", "1"))


def rank() -> int:
    """This process's rank (0 outside torchrun)."""
    return dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", "0"))


def is_main() -> bool:
    """Whether this process logs, evaluates and saves."""
    return rank() == 0


def is_distributed() -> bool:
    """Whether this process is one of several ranks of a process group."""
    return dist.is_initialized() and dist.get_world_size() > 1


def rank_seed(seed: int) -> int:
    """The seed of this rank's games and sampler: ranks play different games."""
    return seed + 1_000_003 * rank()


def agree_to_stop(done: bool, frames: int, device: torch.device | str = "cpu") -> tuple[bool, int]:
    """Every rank calls this once after each of its updates (so the calls pair
    up): whether any rank is done, and the frames of all ranks together. Ranks
    must stop after the same update, or one would wait forever in the next
    update's gradient all-reduce."""
    flags = torch.tensor([float(done), float(frames)], dtype=torch.float64, device=device)
    dist.all_reduce(flags)
    return bool(flags[0].item() > 0), int(flags[1].item())


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The model inside a ``DataParallelModel`` (the model itself otherwise)."""
    return model.module if isinstance(model, DistributedDataParallel) else model


def launched() -> bool:
    """Whether torchrun started this process as one of several ranks."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def relaunch_command(program: str) -> str:
    """``program`` (``python -m MODULE``) as the command that starts a run of this one's
    shape: itself in a single process; under torchrun, torchrun with this run's ranks per
    machine (and, over several machines, their number and a rendezvous to fill in)."""
    if not launched():
        return program
    module = program.split(" -m ", 1)[1]
    local = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ["WORLD_SIZE"]))
    nodes = int(os.environ["WORLD_SIZE"]) // local
    where = "--standalone" if nodes == 1 else f"--nnodes {nodes} --rdzv_backend c10d --rdzv_endpoint HOST:PORT"
    return f"torchrun {where} --nproc_per_node {local} -m {module}"


def init_from_env(device: str = "cpu") -> bool:
    """Joins the process group torchrun described in the environment (RANK,
    WORLD_SIZE, MASTER_ADDR, ...). Returns whether training is distributed.
    With CUDA each rank takes the GPU of its LOCAL_RANK."""
    if not launched() or dist.is_initialized():
        return dist.is_initialized()
    cuda = torch.device(device).type == "cuda"
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl" if cuda else "gloo")
    return True


def finish() -> None:
    """Leaves the process group at the end of a run that succeeded: each rank
    waits for the others (rank 0 may still be evaluating), then the group is
    destroyed while the interpreter is alive. A gloo group left to the
    interpreter's exit can abort the process (SIGABRT, "terminate called
    without an active exception"), failing torchrun after a finished run."""
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


class DataParallelModel(DistributedDataParallel):
    """``DistributedDataParallel`` that reads as the model it wraps.

    Forward passes go through DDP (so gradients are averaged over the ranks in
    backward). Buffers are equal at the start and not synchronized at each
    forward: the model's buffers
    (normalization statistics) are merged over the ranks by their own update,
    and a forward on rank 0 alone (evaluation) must not wait for the others.
    Everything else the wrapper lacks (``save``, ``clone``,
    ``state_size``, ``obs_keys``, ...) is the model's, and ``step`` reads and
    writes the model's update counter, so checkpoints count every update.
    """

    def __init__(self, module: torch.nn.Module, **kwargs: Any) -> None:
        super().__init__(module, forward_sync_buffers=False, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)

    @property
    def step(self) -> int:
        return self.module.step

    @step.setter
    def step(self, value: int) -> None:
        self.module.step = value
