#!/usr/bin/env bash
# Builds the C++ engine, games and tests and runs them with ctest.
#
#   scripts/test_cpp.sh            plain build in build/cpp
#   scripts/test_cpp.sh address    AddressSanitizer (+ LeakSanitizer) in build/cpp-asan
#   scripts/test_cpp.sh thread     ThreadSanitizer in build/cpp-tsan
#
# Extra arguments go to ctest (for example `-R test_tag`). Exits non-zero if
# a test fails or a sanitizer reports anything.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitizer="${1:-}"
case "$sanitizer" in
  "") build="$root/build/cpp" ;;
  address) build="$root/build/cpp-asan" ;;
  thread) build="$root/build/cpp-tsan" ;;
  -*) sanitizer=""; build="$root/build/cpp"; set -- "" "$@" ;;
  *) echo "usage: $0 [address|thread] [ctest arguments...]" >&2; exit 2 ;;
esac
shift || true
jobs="$(nproc 2>/dev/null || echo 2)"

# A sanitizer build is compiled with -O1 (Release's -O3 hides stack frames
# and is slow to compile); the plain build is the project's Release.
build_type=Release
[ -n "$sanitizer" ] && build_type=RelWithDebInfo

cmake -S "$root" -B "$build" -DELF_BUILD_PYTHON=OFF -DELF_BUILD_TESTS=ON \
  -DCMAKE_BUILD_TYPE="$build_type" -DELF_SANITIZER="$sanitizer" >/dev/null
cmake --build "$build" --parallel "$jobs"

run=()
case "$sanitizer" in
  address)
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    ;;
  thread)
    export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    ;;
esac

cd "$build"
"${run[@]}" ctest --output-on-failure -j "$jobs" "$@"
