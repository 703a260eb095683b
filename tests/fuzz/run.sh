#!/usr/bin/env bash
# Builds the libFuzzer harnesses (preset "fuzz", build/fuzz) and runs every
# fuzz_* executable there for SECONDS each (default 20). Fails on a crash,
# leak or sanitizer report. Seeds: tests/fuzz/corpus/<name>/ when present;
# new inputs go to a scratch directory, never into the repository.
set -euo pipefail
secs=${1:-20}
cd "$(dirname "$0")/../.."
root=$PWD
if ! command -v clang >/dev/null; then
  echo "fuzz: clang not found, skipped"
  exit 0
fi
cmake --preset fuzz >/dev/null
# Build only the harnesses, not the whole project.
mapfile -t targets < <(ninja -C build/fuzz -t targets all | sed -n 's/^\(fuzz_[A-Za-z0-9_]*\): .*/\1/p' | sort -u)
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no fuzz_* targets"
  exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for t in "${targets[@]}"; do
  exe=build/fuzz/$t
  # Each harness builds on its own, so one module's breakage does not hide
  # the others' findings (it still fails the run).
  if ! cmake --build build/fuzz --target "$t" >"$scratch/$t.build.log" 2>&1; then
    echo "fuzz: $t does not build"
    tail -n 20 "$scratch/$t.build.log"
    status=1
    continue
  fi
  mkdir -p "$scratch/$t"
  seeds=()
  [ -d "tests/fuzz/corpus/$t" ] && seeds=("tests/fuzz/corpus/$t")
  echo "== $t for ${secs}s"
  if ! ASAN_OPTIONS=detect_leaks=1 "$exe" -max_total_time="$secs" -max_len=65536 \
      -artifact_prefix="$scratch/$t-" -print_final_stats=1 "$scratch/$t" "${seeds[@]}" \
      >"$scratch/$t.log" 2>&1; then
    echo "fuzz: $t FAILED"
    tail -n 60 "$scratch/$t.log"
    mkdir -p "$root/build/fuzz/crashes"
    cp "$scratch/$t"-* "$root/build/fuzz/crashes/" 2>/dev/null || true
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$scratch/$t.log" | sed "s/^/$t: /"
  fi
done
exit $status
