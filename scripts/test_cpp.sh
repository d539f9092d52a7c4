#!/usr/bin/env bash
# Builds the C++ engine, games and tests (no Python module) and runs them
# with ctest.
#
#   scripts/test_cpp.sh            plain Release build in build/cpp
#   scripts/test_cpp.sh address    AddressSanitizer + LeakSanitizer, build/cpp-asan
#   scripts/test_cpp.sh thread     ThreadSanitizer, build/cpp-tsan
#
# Further arguments go to ctest, e.g. `scripts/test_cpp.sh thread -R test_stress`.
# Exits non-zero if the build fails, a test fails, or a sanitizer reports
# anything (a report makes the test's process exit non-zero).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitizer=""
if [[ $# -gt 0 && "$1" != -* ]]; then
  sanitizer="$1"
  shift
fi
case "$sanitizer" in
  "") build="$root/build/cpp"; build_type=Release ;;
  address) build="$root/build/cpp-asan"; build_type=RelWithDebInfo ;;
  thread) build="$root/build/cpp-tsan"; build_type=RelWithDebInfo ;;
  *) echo "usage: $0 [address|thread] [ctest arguments...]" >&2; exit 2 ;;
esac
jobs="$(nproc 2>/dev/null || echo 2)"

cmake -S "$root" -B "$build" -DELF_BUILD_PYTHON=OFF -DELF_BUILD_TESTS=ON \
  -DCMAKE_BUILD_TYPE="$build_type" -DELF_SANITIZER="$sanitizer" >/dev/null
cmake --build "$build" --parallel "$jobs"

# Sanitizer settings: report everything, keep going after a report so one
# run shows them all, and fail the test process at exit.
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:strict_init_order=1:halt_on_error=0:exitcode=23${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1:exitcode=66${TSAN_OPTIONS:+:$TSAN_OPTIONS}"

prefix=()
if [[ "$sanitizer" == thread ]]; then
  # ThreadSanitizer needs the memory layout it was built for; kernels with
  # high ASLR entropy (vm.mmap_rnd_bits > 28) break it with "unexpected
  # memory mapping". Running without ASLR (setarch -R, inherited by every
  # test ctest starts) fixes that; only use it when needed.
  probe="$build/test_rng"
  if [[ -x "$probe" ]] && ! "$probe" >/dev/null 2>"$build/tsan-probe.log"; then
    if grep -q "unexpected memory mapping\|FATAL: ThreadSanitizer" "$build/tsan-probe.log"; then
      echo "ThreadSanitizer cannot map its shadow memory here; running the tests under setarch -R" >&2
      prefix=(setarch "$(uname -m)" -R)
    fi
  fi
fi

cd "$build"
exec "${prefix[@]}" ctest --output-on-failure --parallel "$jobs" "$@"
