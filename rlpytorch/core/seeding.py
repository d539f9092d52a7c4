"""One run seed, many random streams.

Two generators seeded with the same number draw the same numbers: a run whose
initialisation (torch's global generator), exploration, method noise and replay
sampling were all seeded with its one ``--seed`` would explore with the very
numbers its initial weights were made of. Each component takes its own stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .args_provider import Configurable, at_least, setting


@dataclass
class RunSeed(Configurable):
    """The run's one seed (``--seed``): whoever assembles a run derives every stream from
    it (the games' starts, ``stream_seeds`` for the sampler, the method and the replay,
    torch's global generator) and passes each part its own."""

    seed: int = setting(0, "seed of the games, the sampler and the model initialization",
                        bounds=at_least(0, 2**64 - 1))


def stream_seeds(seed: int, count: int) -> list[int]:
    """``count`` seeds of independent streams derived from ``seed`` (numpy's
    ``SeedSequence.spawn``), none equal to ``seed``'s own stream; 63 bits, which
    both ``torch.Generator.manual_seed`` and ``numpy.random.default_rng`` accept."""
    children = np.random.SeedSequence(abs(seed)).spawn(count)
    return [int(child.generate_state(1, np.uint64)[0] >> np.uint64(1)) for child in children]
