#!/usr/bin/env bash
# Runs every test on a clean clone: bootstraps, builds (warnings as errors),
# runs the whole ctest suite, the unit and protocol tests again under
# ASan+UBSan, the format check, and bounded fuzzing. This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

./bootstrap.sh

echo "== format check"
mapfile -t srcs < <(git ls-files '*.c' '*.h' | grep -v -E '^tests/([^/]+/)*(cases|data|fixtures|corpus)/' || true)
if [ ${#srcs[@]} -gt 0 ]; then
  clang-format --dry-run --Werror "${srcs[@]}"
fi

echo "== release build (warnings as errors)"
cmake --preset ci >/dev/null
cmake --build --preset ci

echo "== asan+ubsan build"
cmake --preset ci-asan >/dev/null
cmake --build --preset ci-asan

if [ -x tests/fuzz/run.sh ]; then
  echo "== fuzz (bounded)"
  tests/fuzz/run.sh 20
fi

echo "== unit and protocol tests under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --preset ci-asan

echo "== full test suite"
ctest --preset ci
