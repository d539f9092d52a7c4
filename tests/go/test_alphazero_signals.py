"""Self-play stopped by SIGINT or SIGTERM saves what it reached: the loop ends
after the batch at hand, logs, writes last.pt and replay.npz, and the process
exits cleanly; the run then resumes from that frame. No step waits for a time:
the test polls for the first stats row, and pytest-timeout bounds a hang."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from test_alphazero import TINY

from rlpytorch.training import INTERRUPTED, main


def flags(settings: dict) -> list[str]:
    """The command line of ``settings`` (booleans as ``--name``/``--no-name``)."""
    out: list[str] = []
    for name, value in settings.items():
        out += [f"--{name}" if value else f"--no-{name}"] if isinstance(value, bool) else [f"--{name}", str(value)]
    return out


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_saves_the_self_play_run_and_it_resumes(tmp_path: Path, number: int) -> None:
    run = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "rlpytorch.train", *flags(TINY), "--num_frames", "1000000000",
                                "--no-progress", "--save_dir", str(run)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not (run / "progress.csv").exists():  # a stats line: the network is training
            assert process.poll() is None, process.communicate()
            time.sleep(0.01)
        process.send_signal(number)
        stdout, stderr = process.communicate()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == INTERRUPTED, stderr
    stopped = next(line for line in stdout.splitlines() if line.startswith("stopped by a signal at frame "))
    frames = int(stopped.split()[6].rstrip(":").replace(",", ""))
    saved = torch.load(run / "last.pt", weights_only=True)["resume"]
    assert saved["frames"] == frames > 0 and (run / "replay.npz").is_file()
    resumed = main(["--resume", str(run), "--num_frames", str(frames + 100)])
    assert not resumed.summary.interrupted and resumed.summary.frames >= frames + 100
