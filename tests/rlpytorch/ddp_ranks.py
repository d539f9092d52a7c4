"""One rank of test_distributed: launched by torchrun, trains on its half of a
fixed batch and saves its parameters to ``<out>/rank<R>.pt``."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from rlpytorch.core import distributed
from rlpytorch.methods import ActorCritic
from rlpytorch.models import MLPActorCritic, ModelSettings
from rlpytorch.models.interface import ModelInterface
from rlpytorch.models.normalization import RunningMeanStd

T, B, UPDATES = 5, 8, 3


def fixed_batch() -> dict[str, torch.Tensor]:
    """A window without terminals: every row counts, so a mean over B rows is
    the mean of two B/2 halves' means."""
    g = torch.Generator().manual_seed(7)
    return {
        "s": torch.randn(T, B, 4, generator=g),
        "a": torch.randint(0, 2, (T, B), generator=g),
        "pi": torch.full((T, B, 2), 0.5),
        "r": torch.rand(T, B, generator=g),
        "terminal": torch.zeros(T, B, dtype=torch.bool),
    }


def train(batch: dict[str, torch.Tensor], model_seed: int, distribute: bool) -> ModelInterface:
    torch.manual_seed(model_seed)
    mi = ModelInterface(lr=1e-2)
    mi.add_model("model", MLPActorCritic((4,), 2, ModelSettings(hidden=16)), optimize=True)
    if distribute:
        mi.distribute()
    method = ActorCritic.from_config({})
    for _ in range(UPDATES):
        method.update(mi, batch)
    return mi


if __name__ == "__main__":
    assert distributed.init_from_env(), "run me under torchrun"
    rank, size = distributed.rank(), distributed.world_size()
    width = B // size
    half = {k: v[:, rank * width:(rank + 1) * width] for k, v in fixed_batch().items()}
    mi = train(half, model_seed=rank, distribute=True)  # rank 1's own init is replaced by rank 0's
    model = mi["model"]
    stats = RunningMeanStd((4,))  # observation statistics merged over the ranks' halves
    stats.update(half["s"])
    torch.save({"params": [p.detach().clone() for p in model.parameters()], "step": model.step,
                "obs_mean": stats.mean, "obs_var": stats.var, "obs_count": stats.count},
               Path(sys.argv[1]) / f"rank{rank}.pt")
    # Both ranks leave together: a rank tearing down gloo while the other still
    # holds its connections aborted rank 0 ("terminate called without an active
    # exception") in about 1 of 7 runs under load.
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
