"""Fixtures shared by every test folder."""

import os
import signal

import pytest
import torch
from hypothesis import settings

# The suite is deterministic: property tests draw the same examples on every
# run, so a CI run cannot fail on a draw no earlier run made. To search for
# new failing examples, run with HYPOTHESIS_PROFILE=explore (random draws)
# and turn each one found into a plain test. No example is timed (deadline=None):
# Hypothesis's default 200 ms deadline per example fails on a loaded machine.
settings.register_profile("suite", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

# The stop-signal tests send SIGINT to the runs they start. A shell without job
# control starts a background command (`bash .ci/run &`) with SIGINT ignored, the
# children inherit that, and a run keeps an ignored signal ignored (as nohup's
# SIGHUP): the tests would wait for a run that never stops. A handler is not
# inherited across exec, so with one here every child starts with the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def one_torch_thread():
    """Torch's spinning intra-op threads beside the engine's worker slow a
    2-core machine several times over (train.py and evaluate.py use 1)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
