#!/usr/bin/env bash
# The serve-http load benchmark of issue 16 on the GPU machine: 32 sessions
# against `infilld serve-http` with batching off (--batch-max 1) and on (5 ms
# window, up to 8), the same measurement as tests/remote/bench_serve_http.mjs
# (tests/gpu/bench_serve_http.py: Python's stdlib, no Node there).
#
#   tests/gpu/serve_http_load.sh CARRY MODEL_DIR DEVICE SECONDS OUTDIR
#
# MODEL_DIR "-": the daemon's embedded tiny model.
# Uses CARRY/serve.tar.gz (tests/gpu/prepare.sh), unpacked into WORK
# (default /tmp/infilld-gpu-work). Exit 77 when the carried daemon does not
# load on this machine (another glibc or CUDA toolkit): no figures, the reason
# in the log. Writes OUTDIR/serve-http-{off,on}.json.
set -uo pipefail
CARRY=$1 MODEL=$2 DEVICE=$3 SECONDS_=$4 OUT=$5
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python3}
WORK=${WORK:-${TMPDIR:-/tmp}/infilld-gpu-work}
if [ ! -f "$CARRY/serve.tar.gz" ]; then
    echo "serve_http_load: $CARRY/serve.tar.gz is missing (prepare.sh found no build/ci/infilld)"
    exit 77
fi
mkdir -p "$WORK"
rm -rf "$WORK/serve"
tar -C "$WORK" -xzf "$CARRY/serve.tar.gz" || exit 77
BIN=$WORK/serve/bin/infilld
export LD_LIBRARY_PATH="$WORK/serve/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$BIN" --version; then
    echo "serve_http_load: the carried infilld does not load here:"
    ldd "$BIN" | grep -i "not found"
    exit 77
fi
m=()
[ "$MODEL" != - ] && m=(--model "$MODEL")
rc=0
for mode in off on; do
    if [ $mode = off ]; then b=(--batch-max 1); else b=(--batch-ms 5 --batch-max 8); fi
    echo "== batching $mode"
    "$PY" "$HERE/bench_serve_http.py" "$BIN" ${m[@]+"${m[@]}"} --device "$DEVICE" --sessions 32 \
        --seconds "$SECONDS_" --max-tokens 16 "${b[@]}" --check | tee "$OUT/serve-http-$mode.json" ||
        rc=1
done
exit $rc
