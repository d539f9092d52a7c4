"""The package installs anywhere: pip builds a wheel holding the engine module
and the shipped configs, and the wheel installed into a fresh virtual
environment trains from a folder outside the source tree, ``--config
cartpole_fast`` naming the shipped config.

About 8 s on 2 loaded cores when build/python holds the engine's build (the
wheel relinks nothing then; scripts/setup.sh leaves one); a cold build
compiles the engine first (minutes), hence the longer timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def run(cmd: list[str], cwd: Path) -> str:
    """Run ``cmd`` in ``cwd`` with a clean PYTHONPATH (the project must come from the wheel); its output."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def build_wheel(out: Path) -> Path:
    # No build isolation: the build tools and the engine's build folder (build/python) are reused.
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--quiet", "-w", str(out),
         str(ROOT)], cwd=out)
    (wheel,) = out.glob("elf_platform-*.whl")
    return wheel


@pytest.mark.timeout(900)
def test_the_wheel_installed_in_a_fresh_environment_trains_a_shipped_config_from_any_folder(tmp_path):
    wheel = build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    assert any(name.startswith("elfpy/_elf") and name.endswith(".so") for name in names), names
    assert "rlpytorch/configs/cartpole_fast.yaml" in names

    # The system's packages (torch and the other requirements) stay visible; the project is the wheel's.
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], cwd=tmp_path)
    python = str(venv / "bin" / "python")
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "--quiet",
         str(wheel)], cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = run([python, "-c", "import importlib.util as u; print(u.find_spec('rlpytorch').origin); "
                 "print(u.find_spec('elfpy').origin)"], cwd=elsewhere).split()
    assert all(Path(origin).is_relative_to(venv) for origin in where), where

    run([python, "-m", "rlpytorch.train", "--config", "cartpole_fast", "--num_frames", "300", "--eval_episodes", "1",
         "--no-progress", "--no-tensorboard", "--save_dir", "run"], cwd=elsewhere)
    config = yaml.safe_load((elsewhere / "run" / "config.yaml").read_text())
    assert (config["optimizer"], config["num_games"], config["num_frames"]) == ("sgd", 96, 300)
    assert (elsewhere / "run" / "last.pt").exists()
