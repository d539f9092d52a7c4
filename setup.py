"""Builds elfpy._elf (engine, games and bindings) through CMake."""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        import pybind11

        out_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_dir = ROOT / "build" / "python"
        build_dir.mkdir(parents=True, exist_ok=True)
        configure = [
            "cmake", str(ROOT),
            f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={out_dir}",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DELF_BUILD_TESTS=OFF",
        ]
        jobs = str(os.cpu_count() or 2)
        subprocess.run(configure, cwd=build_dir, check=True)
        subprocess.run(["cmake", "--build", ".", "--target", "_elf", "-j", jobs], cwd=build_dir, check=True)


setup(
    name="elf-platform",
    version="0.1.0",
    description="A game-research platform for reinforcement learning: C++ games batched into PyTorch.",
    packages=find_packages(include=["elfpy", "elfpy.*", "rlpytorch", "rlpytorch.*"]),
    ext_modules=[CMakeExtension("elfpy._elf")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.10",
    install_requires=["numpy", "tqdm", "pyyaml"],
    zip_safe=False,
)
