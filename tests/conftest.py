"""Fixtures shared by every test folder."""

import os

import pytest
import torch
from hypothesis import settings

# The suite is deterministic: property tests draw the same examples on every
# run, so a CI run cannot fail on a draw no earlier run made. To search for
# new failing examples, run with HYPOTHESIS_PROFILE=explore (random draws)
# and turn each one found into a plain test.
settings.register_profile("suite", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


@pytest.fixture
def one_torch_thread():
    """Torch's spinning intra-op threads beside the engine's worker slow a
    2-core machine several times over (train.py and evaluate.py use 1)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
