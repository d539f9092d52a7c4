"""``--when_behind``'s default under ``--runner multi``: the replay methods hold
their replay ratio (``wait``), the on-policy ones keep acting (``drop``), and the
stats line says which policy is in force."""

import pytest
from test_multi_process_replay import value_run

from rlpytorch.core.stats import format_record
from rlpytorch.methods.dqn import DQN
from rlpytorch.methods.target_network import TargetNetwork
from rlpytorch.run.multi_process import MultiProcessRun


def stats_line(run):
    return format_record({"frames": 0.0, **run._extra_stats()})


def test_on_policy_methods_drop_windows_by_default_and_the_stats_line_counts_them(trainer):
    run = MultiProcessRun(trainer, progress=False)
    assert run.when_behind == "auto" and run.policy == "drop"
    assert "  dropped 0  U dropped 0" in stats_line(run) and "waited" not in stats_line(run)


def test_replay_methods_wait_by_default_and_the_stats_line_gives_the_seconds_waited():
    _, _, run = value_run(DQN(target=TargetNetwork(50)), num_frames=100)
    assert run.when_behind == "auto" and run.policy == "wait"
    run.waited = 1.5
    assert "  waited 1.5" in stats_line(run) and "dropped" not in stats_line(run)


@pytest.mark.parametrize("when_behind", ["drop", "wait"])
def test_a_policy_named_is_the_policy_in_force(trainer, when_behind):
    assert MultiProcessRun(trainer, progress=False, when_behind=when_behind).policy == when_behind
