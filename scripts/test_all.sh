#!/usr/bin/env bash
# Sets up, then runs every test: the API docs build (warnings are errors), the
# C++ suite (ctest) plain, under AddressSanitizer (with LeakSanitizer) and
# under ThreadSanitizer, then pytest.
# The two sanitizer builds add about 3 minutes on 2 cores.
# If setup fails, nothing else can run: the script stops there. A suite that
# fails does not stop the others; the script ends with one line per suite
# (passed / failed) and exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

names=(setup)
results=("done in $SECONDS s")
failed=0
# Runs one suite (a command line), recording whether it passed and its wall time.
suite() {
  local name="$1"
  shift
  echo "=== $name: $*"
  local start=$SECONDS
  if "$@"; then
    results+=("passed in $((SECONDS - start)) s")
  else
    results+=("failed (exit $?) in $((SECONDS - start)) s")
    failed=1
  fi
  names+=("$name")
}

suite "docs" bash scripts/build_docs.sh
suite "C++ plain" bash scripts/test_cpp.sh
suite "C++ ASan" bash scripts/test_cpp.sh address
suite "C++ TSan" bash scripts/test_cpp.sh thread
# Two workers, one a core: most tests are one busy process, so the suite takes about half the time. The
# Ray tests share a worker (their xdist_group), so two local Ray clusters never start at once.
suite "pytest" python3 -m pytest -q -n 2 --dist loadgroup tests

echo "=== summary"
for i in "${!names[@]}"; do
  printf '%-10s %s\n' "${names[$i]}:" "${results[$i]}"
done
exit "$failed"
