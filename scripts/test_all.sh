#!/usr/bin/env bash
# Sets up, then runs every test: the C++ suite (ctest), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test_cpp.sh
python3 -m pytest -q tests
