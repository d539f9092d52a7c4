#!/usr/bin/env bash
# Sets up, then runs every test: the API docs build (warnings are errors), the
# C++ suite (ctest) plain, under AddressSanitizer (with LeakSanitizer) and
# under ThreadSanitizer, then pytest.
# The two sanitizer builds add about 3 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build_docs.sh
bash scripts/test_cpp.sh
bash scripts/test_cpp.sh address
bash scripts/test_cpp.sh thread
python3 -m pytest -q tests
