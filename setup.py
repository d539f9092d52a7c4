"""Builds elfpy._elf (engine, games and bindings) through CMake.

CMake builds in build/python, kept between builds (editable or wheel), so a
rebuild compiles only what changed; the module it links there is copied to
where setuptools wants it. The example configs ship as package data
(rlpytorch/configs, loaded by name: ``--config cartpole_fast``), and so do the
web page's assets (elfweb/static: it works offline). ``pip install .[web]``
adds the web server's packages.
"""

import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
CMAKE_BUILD = ROOT / "build" / "python"


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CleanBuild(build):
    """Empties setuptools' staging folder first: a module deleted from the source
    would otherwise stay there from an earlier build and ship in the wheel."""

    def run(self) -> None:
        shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        import pybind11

        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        # One output folder whatever the destination (an editable install stages in a new
        # temporary folder each time): a changed output folder would make CMake relink.
        lib_dir = CMAKE_BUILD / "lib"
        configure = [
            "cmake", str(ROOT),
            f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={lib_dir}",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DELF_BUILD_TESTS=OFF",
        ]
        jobs = str(os.cpu_count() or 2)
        CMAKE_BUILD.mkdir(parents=True, exist_ok=True)
        with open(CMAKE_BUILD / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two builds at once (pip install -e . and a wheel) would share the folder
            subprocess.run(configure, cwd=CMAKE_BUILD, check=True)
            subprocess.run(["cmake", "--build", ".", "--target", "_elf", "-j", jobs], cwd=CMAKE_BUILD, check=True)
            copy_whole(lib_dir / target.name, target)


def copy_whole(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` so that the module lands whole (with a new
    file's mode, 0644 under the usual umask, as Debian installs shared libraries),
    through elfpy.files (standard library only), loaded from its file: importing
    the package would need the module this build makes."""
    spec = importlib.util.spec_from_file_location("elfpy_files", ROOT / "elfpy" / "files.py")
    files = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(files)
    with open(source, "rb") as module:
        files.write_atomically(target, lambda out: shutil.copyfileobj(module, out))


# What the defaults use: training logs to TensorBoard unless --no-tensorboard, configs are YAML, hosted
# games reach their workers through cloudpickle. torch is the release the README names (scripts/setup.sh
# installs it first; which build, CPU or CUDA, depends on the index).
REQUIRED = ["numpy", "tqdm", "pyyaml", "tensorboard", "gymnasium>=1.0", "cloudpickle", "typing_extensions",
            "torch==2.13.0"]
# The optional parts, each named by the one line that a command needing it prints when it is missing
# ("pip install 'elf-platform[plot]'"); pinned where requirements.txt pins them.
EXTRAS = {
    "plot": ["matplotlib"],  # python -m rlpytorch.plot
    "tune": ["optuna", "matplotlib"],  # python -m rlpytorch.tune (and its study.png)
    "ray": ["ray"],  # rlpytorch.launch --backend ray
    "wandb": ["wandb"],  # --track wandb
    "video": ["imageio", "imageio-ffmpeg", "pillow"],  # evaluate --video: GIF or MP4, MiniRTS drawn with Pillow
    "atari": ["ale-py==0.12.1", "opencv-python-headless"],  # gym:ALE/<game>, preset="atari" (OpenCV resizes)
    "envpool": ["envpool==1.2.5"],  # envpool:<task>
    "minigrid": ["minigrid==3.2.0"],  # gym:MiniGrid-<...>, gym:BabyAI-<...>
    "minatar": ["minatar==1.0.15"],  # gym:MinAtar/<game>
    "mujoco": ["mujoco==4.0.0"],  # gym:HalfCheetah-v5 and the other MuJoCo tasks
    "pettingzoo": ["pettingzoo==1.27.0", "mpe2==1.1.1"],  # elfpy.pettingzoo; pz:<module>, the MPE configs
    "sb3": ["stable-baselines3"],  # elfpy.sb3
    "web": ["starlette==1.10.0", "uvicorn==0.54.0", "websockets==17.4", "pillow"],  # python -m elfweb
}
EXTRAS["all"] = sorted({requirement for extra in EXTRAS.values() for requirement in extra})

setup(
    name="elf-platform",
    version="0.1.0",
    description="A game-research platform for reinforcement learning: C++ games batched into PyTorch.",
    packages=find_packages(include=["elfpy", "elfpy.*", "rlpytorch", "rlpytorch.*", "elfweb"]),
    package_data={"rlpytorch": ["configs/*.yaml"], "elfweb": ["static/*"]},
    ext_modules=[CMakeExtension("elfpy._elf")],
    cmdclass={"build": CleanBuild, "build_ext": CMakeBuild},
    python_requires=">=3.10",
    install_requires=REQUIRED,
    extras_require=EXTRAS,
    zip_safe=False,
)
