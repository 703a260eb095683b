#!/usr/bin/env bash
# Fuzzing to depth, by hand (not CI): runs each harness of build/fuzz toward
# RUNS executions (default 10^7) or SECS seconds, whichever comes first, one
# harness at a time at nice 19 (FUZZ_NICE; the machine is shared). The corpus grows in
# build/fuzz/deep/<harness>/ (outside the repository) on top of the seeds in
# tests/fuzz/corpus/<harness>/; crashes land in build/fuzz/deep/crashes/.
# Prints one summary line per harness for docs/perf/fuzz.md.
# FUZZ_BUILD picks the build (default build/fuzz, ASan + UBSan); the
# fuzz-ubsan preset's build/fuzz-ubsan runs the slow harnesses about 1.8x
# faster with UBSan only, on the same corpus.
#
#   tests/fuzz/deep.sh [RUNS] [harness:SECS ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-10000000}
shift || true
out=build/fuzz/deep
# shellcheck source=maxlen.sh
. tests/fuzz/maxlen.sh
mkdir -p "$out/crashes"
for spec in "$@"; do
  t=${spec%%:*}
  secs=${spec##*:}
  mkdir -p "$out/$t"
  seeds=()
  [ -d "tests/fuzz/corpus/$t" ] && seeds=("tests/fuzz/corpus/$t")
  t0=$(date +%s)
  # FUZZ_GEMMA_FULL: fuzz_tokenizer_gemma also encodes with the real Gemma 3 vocabulary.
  FUZZ_GEMMA_FULL=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 nice -n "${FUZZ_NICE:-19}" "${FUZZ_BUILD:-build/fuzz}/$t" -runs="$runs" -max_total_time="$secs" \
    -max_len="${maxlen[$t]:-$default_maxlen}" -artifact_prefix="$out/crashes/$t-" -print_final_stats=1 \
    "$out/$t" "${seeds[@]}" >"$out/$t.log" 2>&1
  rc=$?
  t1=$(date +%s)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$out/$t.log" | tail -1)
  echo "$t rc=$rc execs=${execs:-?} secs=$((t1 - t0)) corpus=$(ls "$out/$t" | wc -l) $cov"
done
