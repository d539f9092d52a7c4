"""Fixtures shared by every test folder."""

import pytest
import torch


@pytest.fixture
def one_torch_thread():
    """Torch's spinning intra-op threads beside the engine's worker slow a
    2-core machine several times over (train.py and evaluate.py use 1)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
