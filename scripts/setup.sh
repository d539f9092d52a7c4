#!/usr/bin/env bash
# Installs everything the project needs into the current Python and builds
# the engine (pip install -e . drives CMake). Safe to run again: it only
# rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --upgrade pip
python3 -m pip install --quiet torch==2.13.0  # the CPU build; unpinned pulls a multi-GB CUDA build
python3 -m pip install --quiet -r requirements.txt -r requirements-dev.txt
python3 -m pip install --quiet --no-build-isolation -e .
python3 -c "import elfpy, rlpytorch; print('elfpy ready; games:', ', '.join(elfpy.games()))"
