"""The package installs anywhere: pip builds a wheel holding the engine module
and the shipped configs, and the wheel installed into a fresh virtual
environment trains from a folder outside the source tree, ``--config
cartpole_fast`` naming the shipped config. The wheel requires what the
defaults use, torch at the README's release, and names every extra that a
command's message asks for.

About 8 s on 2 loaded cores when build/python holds the engine's build (the
wheel relinks nothing then; scripts/setup.sh leaves one); a cold build
compiles the engine first (minutes), hence the longer timeout. The venv sees
the system's packages: installing the requirements into an empty one takes
about 95 s more (torch alone is most of it), so that is checked by hand
(docs/compatibility.md, "pip and the wheel").
"""

from __future__ import annotations

import dataclasses
import email
import importlib.metadata
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from rlpytorch.core.stats import StatsLogger

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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("dist"))


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


@pytest.mark.timeout(900)
def test_the_wheel_requires_what_the_defaults_use_and_torch_as_the_readme_pins_it(wheel):
    metadata = wheel_metadata(wheel)
    required = [Requirement(r) for r in metadata.get_all("Requires-Dist") if "extra ==" not in r]
    by_name = {r.name.lower(): r for r in required}
    readme = (ROOT / "README.md").read_text()
    assert {f"=={pin}" for pin in re.findall(r"torch==([\w.]+)", readme)} == {str(by_name["torch"].specifier)}
    stats_default = {f.name: f.default for f in dataclasses.fields(StatsLogger)}["tensorboard"]
    assert stats_default and "tensorboard" in by_name  # TensorBoard is on by default, so it is required
    for requirement in required:  # and the suite runs against the releases the wheel asks for
        installed = importlib.metadata.version(requirement.name)
        assert requirement.specifier.contains(installed, prereleases=True), (requirement, installed)
    assert re.search(r"pip wheel \. --no-deps -w dist", readme), "the README's wheel command builds only ours"


@pytest.mark.timeout(900)
def test_every_extra_a_message_names_is_one_the_wheel_provides(wheel):
    named = set()
    for path in [*ROOT.glob("elfpy/**/*.py"), *ROOT.glob("rlpytorch/**/*.py"), ROOT / "README.md"]:
        named |= set(re.findall(r"elf-platform\[(\w+)\]", path.read_text()))
    provided = set(wheel_metadata(wheel).get_all("Provides-Extra"))
    assert {"plot", "tune", "pettingzoo"} <= named <= provided, (named, provided)


@pytest.mark.timeout(900)
def test_the_wheel_installed_in_a_fresh_environment_trains_a_shipped_config_from_any_folder(wheel, tmp_path):
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
         "--no-progress", "--save_dir", "run"], cwd=elsewhere)  # TensorBoard on, as by default
    config = yaml.safe_load((elsewhere / "run" / "config.yaml").read_text())
    assert (config["optimizer"], config["num_games"], config["num_frames"]) == ("sgd", 96, 300)
    assert (elsewhere / "run" / "last.pt").exists()
    assert list((elsewhere / "run").glob("events.out.tfevents.*"))
