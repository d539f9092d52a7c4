#!/usr/bin/env bash
# Installs everything the project needs into the current Python and builds
# the engine (pip install -e . drives CMake). Safe to run again: it only
# rebuilds what changed. With --if_changed it does nothing when the set-up
# inputs (this script, the build files, the requirements, the C++ sources and
# the Python environment) hash as at its last full run and the packages import;
# scripts/train.sh uses it, CI (scripts/test_all.sh) always runs it in full.
set -euo pipefail
cd "$(dirname "$0")/.."
STAMP=build/setup.stamp

inputs_hash() {
  python3 -c 'import sys; print(sys.prefix, sys.version)'
  find scripts/setup.sh setup.py pyproject.toml CMakeLists.txt requirements*.txt cpp -type f | LC_ALL=C sort |
    xargs sha256sum
}

if [ "${1:-}" = --if_changed ] && [ -f "$STAMP" ] && [ "$(inputs_hash | sha256sum)" = "$(cat "$STAMP")" ] &&
  python3 -c "import elfpy, rlpytorch" 2>/dev/null; then
  exit 0
fi

echo "setup: upgrading pip ..."
python3 -m pip install --quiet --upgrade pip
# GNU Go: the Go tests and benchmarks play against it over GTP (Debian installs it in /usr/games).
if ! command -v gnugo >/dev/null && [ ! -x /usr/games/gnugo ]; then
  echo "setup: installing GNU Go (apt) ..."
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq gnugo >/dev/null || { apt-get update -qq && apt-get install -y -qq gnugo >/dev/null; }
  else sudo apt-get install -y -qq gnugo >/dev/null; fi
fi
# Chromium and its driver: the web page's tests (tests/web) drive it headless through Selenium.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  echo "setup: installing chromium and chromium-driver (apt) ..."
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq chromium chromium-driver >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }
  else sudo apt-get install -y -qq chromium chromium-driver >/dev/null; fi
fi
# Pinned. Which build comes depends on the index: the registry of these machines serves the
# CPU wheel; PyPI serves the CUDA build on Linux (several GB). Unpinned, pip would take the newest.
echo "setup: installing PyTorch 2.13.0 ..."
python3 -m pip install --quiet torch==2.13.0
echo "setup: installing the requirements (requirements.txt, requirements-dev.txt) ..."
python3 -m pip install --quiet -r requirements.txt -r requirements-dev.txt
echo "setup: building the engine (C++ through CMake: a few minutes the first time) ..."
python3 -m pip install --quiet --no-build-isolation -e .
python3 -c "import elfpy, rlpytorch; print('elfpy ready; games:', ', '.join(elfpy.games()))"
# The stamp lands whole (a temporary file moved over it), so a stopped run never leaves a half hash.
mkdir -p build
inputs_hash | sha256sum > "$STAMP.tmp"
sync "$STAMP.tmp"
mv "$STAMP.tmp" "$STAMP"
