#!/usr/bin/env bash
# Builds the libFuzzer harnesses (preset "fuzz", build/fuzz) and runs every
# fuzz_* executable there. Fails on a crash, leak or sanitizer report. Seeds:
# tests/fuzz/corpus/<name>/ when present; new inputs go to a scratch
# directory, never into the repository.
#
#   tests/fuzz/run.sh [CAP]         CI mode (tests/run-all.sh): deterministic.
#                                   Each harness runs with -seed=1 and a fixed
#                                   number of executions (-runs, table below),
#                                   so every run tries the same inputs; CAP
#                                   seconds (default 20) is only a safety cap
#                                   (-max_total_time) for a much slower machine.
#                                   Also -reload=0 (no timed corpus reloads) and,
#                                   where setarch allows, no address-space
#                                   randomisation: libFuzzer's comparison
#                                   tracing puts pointer values into its
#                                   dictionary, which would differ per run.
#   tests/fuzz/run.sh --long SECS   by hand: SECS seconds per harness, a fresh
#                                   random seed, no execution cap.
set -euo pipefail
mode=ci
cap=${1:-20}
if [ "${1:-}" = "--long" ]; then
  mode=long
  secs=${2:?usage: tests/fuzz/run.sh --long SECONDS}
fi
cd "$(dirname "$0")/../.."
root=$PWD

# -runs per harness in CI mode: about 6-8 s each (measured at load 3) on the 2-core reference
# machine (Debian 12, x86_64) while other builds ran, i.e. well under 15 s.
# Measured rates (executions/s with the checked-in seeds): fuzz_lsp ~5,000,
# fuzz_safetensors ~100,000, fuzz_gguf ~80,000 (CPU time; 2026-12-01), fuzz_syntax_edits ~170 (three tree layouts),
# fuzz_tokenizer ~50,000,
# fuzz_tokenizer_json ~4,000, fuzz_tokenizer_gemma ~9,000 and fuzz_remote ~6,000
# (CPU time, at load 10; 2026-12-01). A harness missing here gets default_runs.
# Since the engine and syntax libraries are instrumented too (2026-12-01),
# fuzz_tokenizer and fuzz_syntax_edits run slower (at load 19: ~1,600/s and
# ~20/s), hence their smaller counts.
# fuzz_syntax_edits reads its input as an edit script since 2026-12-02: more
# comparisons per run (~15 instead of ~8), 1,000 runs 7.7 s CPU against 6.1 s
# before, hence 800.
declare -A runs=(
  [fuzz_lsp]=20000
  [fuzz_safetensors]=400000
  [fuzz_gguf]=200000
  [fuzz_syntax_edits]=800
  [fuzz_tokenizer]=50000
  [fuzz_tokenizer_json]=20000
  [fuzz_tokenizer_spm]=20000
  [fuzz_tokenizer_gemma]=20000
  [fuzz_remote]=20000
)
default_runs=2000
# shellcheck source=maxlen.sh
. tests/fuzz/maxlen.sh
norand=()
if [ "$mode" = ci ] && setarch "$(uname -m)" -R true 2>/dev/null; then
  norand=(setarch "$(uname -m)" -R)
fi

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
  if [ "$mode" = ci ]; then
    n=${runs[$t]:-$default_runs}
    args=(-seed=1 -runs="$n" -reload=0 -max_total_time="$cap")
    echo "== $t: $n runs, seed 1 (cap ${cap}s)"
  else
    args=(-max_total_time="$secs")
    echo "== $t for ${secs}s"
  fi
  t0=$(date +%s.%N)
  # UBSan recovers by default: a report would pass unnoticed. Halt on it.
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "${norand[@]}" "$exe" "${args[@]}" -max_len="${maxlen[$t]:-$default_maxlen}" \
      -artifact_prefix="$scratch/$t-" -print_final_stats=1 "$scratch/$t" "${seeds[@]}" \
      >"$scratch/$t.log" 2>&1; then
    echo "fuzz: $t FAILED"
    tail -n 60 "$scratch/$t.log"
    mkdir -p "$root/build/fuzz/crashes"
    cp "$scratch/$t"-* "$root/build/fuzz/crashes/" 2>/dev/null || true
    status=1
  else
    took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$scratch/$t.log" | sed "s/^/$t: /"
    echo "$t: ${took}s"
    if [ "$mode" = ci ] && ! grep -q "Done $n runs" "$scratch/$t.log"; then
      echo "fuzz: note: $t hit the ${cap}s safety cap before $n runs (not deterministic this time)"
    fi
  fi
done
exit $status
