#!/bin/sh
# No misleading first lines: on a machine without an NVIDIA driver the log
# says so plainly, at info, once (the CUDA runtime's own words are "driver
# version is insufficient", which sends users to upgrade a driver they do not
# have). With a driver, nothing about drivers is logged by a CPU run.
# Usage: cuda_log.sh INFILLD MODEL_DIR FILE HAVE_CUDA(ON|OFF)
set -eu
exe=$1 model=$2 file=$3 have_cuda=$4
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$exe" complete "$file" --line 4 --col 12 --model "$model" --n 4 --steps 2 >/dev/null 2>"$err"
fail() {
  echo "FAIL: $*"
  sed 's/^/  stderr: /' "$err"
  exit 1
}
grep -qi 'insufficient' "$err" && fail "the log blames the driver version"
n=$(grep -ci 'cuda' "$err" || true)
[ "$n" -le 1 ] || fail "$n lines mention CUDA (want at most one)"
# python3 is only used to ask the dynamic loader whether a driver exists.
if python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  echo "ok   driver present: $n CUDA line(s), none about the driver version"
  exit 0
fi
if [ "$have_cuda" = ON ]; then
  grep -q ' info .*no NVIDIA driver found' "$err" || fail "no plain 'no NVIDIA driver found' line at info"
  echo "ok   no driver: one info line says so: $(grep -i cuda "$err")"
else
  [ "$n" -eq 0 ] || fail "a build without CUDA talks about CUDA"
  echo "ok   built without CUDA: no CUDA line"
fi
