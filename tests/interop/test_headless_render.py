"""Games that draw with pygame render into arrays without a desktop session, and say nothing about it:
SDL, started on its own drivers, prints "error: XDG_RUNTIME_DIR is invalid or not set" (elfpy.gym_host, "Rendering")."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The worker's observation is CartPole's picture: each reset and step renders, in the probe made in the
# parent and in the worker process.
PIXEL_CARTPOLE = """
    import gymnasium
    import numpy as np
    import elfpy

    def pixels():
        return gymnasium.wrappers.AddRenderObservation(gymnasium.make("CartPole-v1", render_mode="rgb_array"))

    if __name__ == "__main__":
        gc = elfpy.GameContext(pixels, num_games=1, num_workers=1, num_threads=1)
        gc.add_tag("actor", batch_size=1, inputs=["s"], replies=["a"])
        with gc:
            for step, batch in zip(range(3), gc):
                assert batch["s"].shape == (1, 400, 600, 3) and batch["s"].any()
                batch.reply({"a": np.zeros(1, np.int64)})
"""

VIDEO = """
    import numpy as np
    from elfpy import video

    if __name__ == "__main__":
        video.record("gym:CartPole-v1", lambda: (lambda rows: np.zeros(1, np.int64)), 1, {folder!r}, max_steps=3)
"""


def run_without_a_desktop(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """``script`` in a fresh interpreter whose environment names no display, sound or SDL driver."""
    unset = ("XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER", "SDL_AUDIODRIVER")
    env = {name: value for name, value in os.environ.items() if name not in unset}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    (tmp_path / "script.py").write_text(textwrap.dedent(script))
    return subprocess.run([sys.executable, "script.py"], cwd=tmp_path, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("script", ["pixel observations", "video"])
def test_rendering_into_arrays_prints_nothing(tmp_path: Path, script: str) -> None:
    """CartPole draws with pygame (installed with mpe2, as tests/interop/test_video.py's videos need)."""
    source = PIXEL_CARTPOLE if script == "pixel observations" else VIDEO.format(folder=str(tmp_path / "videos"))
    done = run_without_a_desktop(source, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "XDG_RUNTIME_DIR" not in done.stderr and "ALSA" not in done.stderr, done.stderr
    if script == "video":
        assert (tmp_path / "videos" / "episode_0.gif").stat().st_size > 0
