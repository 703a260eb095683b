/* CPU backend private: the kernel table picked at run time (portable or
 * AVX2+FMA). The scalar reference path lives in backend_cpu.c. */
#ifndef INFILLD_ENGINE_CPU_IMPL_H
#define INFILLD_ENGINE_CPU_IMPL_H

#include "engine_impl.h"

#include <stdio.h>

/* One block of 32 activations quantised to int8 for the quantised-weight
 * kernels (cpu/qdot.c): x ~ d * q, |q| <= 127; s = the sums of q[0..15] and
 * q[16..31] (for the offsets and minimums of Q4_0, Q4_K, Q5_K and Q6_K). */
typedef struct eng__q8a {
    float d;
    int16_t s[2];
    int8_t q[32];
} eng__q8a;

/* Quantises k floats (k a multiple of 32) to k / 32 blocks; the same
 * values for every kernel path, so that all paths see the same activations. */
void eng__quantize_act(const float *x, int k, eng__q8a *out);
/* The scalar code of eng__quantize_act, which uses an AVX2 version of it
 * (the same bits) where the CPU has AVX2; for test_qdot. */
void eng__quantize_act_c(const float *x, int k, eng__q8a *out);

typedef struct eng__kernels {
    const char *name;
    float (*dot)(const float *a, const float *b, int n);
    void (*axpy)(float *y, float a, const float *x, int n); /* y += a x */
    /* Converts rows [row0, row0 + nrows) of w to f32, contiguous (ld = w->cols). */
    void (*convert)(const eng_tensor *w, int64_t row0, int nrows, float *out);
    /* Y[m, n] = (acc ? Y[m, n] : 0) + sum_k X[m, k] W[n, k]. */
    void (*gemm)(const float *X, int ldx, const float *W, int ldw, float *Y, int ldy, int M, int N,
                 int K, bool acc);
    void (*exp)(float *x, int n); /* in place */
    void (*log)(float *x, int n); /* natural log in place, x > 0 */
    /* p = exp(l - mx); sums[0] += sum p, sums[1] += sum p max(l - mx, -1e30). */
    void (*softmax_sums)(const float *l, float *p, int n, float mx, double sums[2]);
    /* O[i, :hd] = sum_j P[i, j] V[j, :hd] for i < nq, j < len (attention's P V). */
    void (*pv)(const float *P, int ldp, int nq, int len, const float *V, int ldv, float *O, int ldo,
               int hd);
    /* Optional (NULL: none), the outer-product path for BF16 weights and few
     * rows: rows [row0, row0 + nrows) (nrows <= 48) and columns [k0, k0 + kc)
     * of w as f32 panels of 16 rows, k-major: out[(p kc + k) 16 + j] =
     * w[row0 + 16 p + j][k0 + k], rows >= nrows zero. */
    void (*panels)(const eng_tensor *w, int64_t row0, int nrows, int k0, int kc, float *out);
    /* Y[m, n] = (acc ? Y[m, n] : 0) + sum_k X[m, k] P[n / 16][k][n % 16] for n < N. */
    void (*gemm_panels)(const float *X, int ldx, const float *P, int K, float *Y, int ldy, int M,
                        int N, bool acc);
    /* Optional (NULL: none): prefetch `rows` rows of `bytes` bytes, `ld`
     * bytes apart from p (one row: a contiguous range), into L2 while the
     * next gemm or gemm_panels calls of this thread compute, a line per
     * inner step; p = NULL stops it. */
    void (*prefetch_rows)(const void *p, size_t ld, int rows, size_t bytes);
    /* Y[m, n] = (acc ? Y[m, n] : 0) + sum_k X[m, k] W[n, k] for a block-type
     * W (rows at W, row_bytes apart) and X quantised per row into K / 32
     * blocks, ldxb blocks apart (cpu/qdot.c). */
    void (*qgemm)(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X, int ldxb,
                  float *Y, int ldy, int M, int N, int K, bool acc);
} eng__kernels;

/* BF16 weights on Intel AMX (cpu/amx.c). Available: the CPU has AMX-TILE
 * and AMX-BF16, the OS enabled the tile state and granted it to this
 * process, and INFILLD_CPU_AMX is not "0". */
bool eng__amx_available(void);
/* The same, and the CPU has AMX-INT8 (for Q8_0 weights). */
bool eng__amx_int8_available(void);
/* Packed X for M rows of K columns (K a multiple of 32), in uint16 elements:
 * per block of 16 rows, K / 32 chunks of three 512-element tiles. */
static inline size_t eng__amx_xpack_elems(int M, int K) {
    return (size_t)((M + 15) / 16) * (size_t)(K / 32) * 3 * 512;
}
/* Packs the column chunks [c0, c1) (32 columns each) of row block blk of X
 * (M rows, ldx apart; rows >= M as zero) into xp, the whole packed X. */
void eng__amx_pack_x(const float *X, int ldx, int M, int K, int blk, int c0, int c1, uint16_t *xp);
/* Y[m, n] = (acc ? Y[m, n] : 0) + sum_k X[m, k] W[n, k] for m < M and n < N
 * (N a multiple of 16), W the bf16 rows (K apart, K a multiple of 32), X
 * packed by eng__amx_pack_x from its first block. */
void eng__amx_gemm(const uint16_t *W, int K, const uint16_t *xp, int M, float *Y, int ldy, int N,
                   bool acc);
/* Q8_0 weights on the int8 tile unit (cpu/amx.c; AMX-INT8 comes with AMX-BF16
 * on every CPU that has them). eng__amx_q8_pack_row writes quantised row m
 * (nb blocks) into xp, the B layout: per block of 16 rows, nb tiles of 512
 * bytes. eng__amx_q8_gemm: Y[m, n] = (acc ? Y : 0) + sum_b d_w d_x i_b for
 * m < M, n < N (N a multiple of 16), W the Q8_0 rows (row_bytes apart), xp
 * and xq (ldxb blocks a row) from the first row of the M. */
void eng__amx_q8_pack_row(const eng__q8a *row, int m, int nb, int8_t *xp);
void eng__amx_q8_gemm(const uint8_t *W, size_t row_bytes, const int8_t *xp, const eng__q8a *xq,
                      int ldxb, int M, float *Y, int ldy, int N, int K, bool acc);

/* The quantised-weight matmuls of each path (cpu/qdot.c). */
void eng__qgemm_portable(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X, int ldxb,
                         float *Y, int ldy, int M, int N, int K, bool acc);
void eng__qgemm_avx2(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X, int ldxb,
                     float *Y, int ldy, int M, int N, int K, bool acc);
/* The register-tiled AVX2 kernels (cpu/qtile.c) for Q8_0, Q4_K and Q6_K and
 * M >= 4: computes the first N / 8 * 8 columns of Y and returns how many
 * (0: type or shape not handled, nothing written). */
int eng__qgemm_tile_avx2(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X, int ldxb,
                         float *Y, int ldy, int M, int N, int K, bool acc);
/* Turns the tiled kernels' weight prefetch on or off (INFILLD_CPU_PREFETCH=0
 * at start-up: off), for benchmarks that alternate the two. */
void eng__qtile_prefetch(bool on);
/* A kernel table by name ("portable", "avx2", "avx512"), for tests that pin
 * one path whatever the CPU; NULL when this CPU or build cannot run it. */
const eng__kernels *eng__kernels_named(const char *name);

/* OpenBLAS entry points (dlopen'ed; CBLAS enum values spelled out). */
enum { ENG__ROW_MAJOR = 101, ENG__NO_TRANS = 111, ENG__TRANS = 112 };
typedef struct eng__blas {
    void (*sgemm)(int order, int ta, int tb, int M, int N, int K, float alpha, const float *A,
                  int lda, const float *B, int ldb, float beta, float *C, int ldc);
    void (*set_threads)(int n);
    char *(*corename)(void);
} eng__blas;
/* The process-wide OpenBLAS, loaded on first call; NULL when unavailable
 * (or INFILLD_NO_BLAS is set). */
const eng__blas *eng__blas_get(void);

/* Per-op profile of the CPU backend's parallel loops (cpu/cpuprof.c), on
 * when INFILLD_CPU_PROFILE=1: thread CPU time of the tasks, wall time and
 * idle thread time at the loop's barrier, per op. */
typedef enum eng__prof_op {
    ENG__P_EMBED,
    ENG__P_NORM,
    ENG__P_QKV,
    ENG__P_ROPE,
    ENG__P_ATTN,
    ENG__P_O,
    ENG__P_GATEUP,
    ENG__P_SWIGLU,
    ENG__P_DOWN,
    ENG__P_HEAD,
    ENG__P_SAMPLE,
    ENG__P_QUANT,
    ENG__P_N
} eng__prof_op;
bool eng__prof_enabled(void);
int64_t eng__prof_thread_ns(void);
int64_t eng__prof_wall_ns(void);
void eng__prof_add_cpu(eng__prof_op op, int64_t ns);
void eng__prof_add_loop(eng__prof_op op, int64_t wall_ns, int64_t idle_ns);
void eng__cpu_profile_reset(void);
/* A Markdown table of the counters since the last reset, divided by passes
 * (CPU and idle time also by threads). */
void eng__cpu_profile_print(FILE *f, int passes, int threads);

/* AVX-512 or AVX2+FMA when allowed and the CPU has it (INFILLD_CPU_ISA=avx2
 * caps it at AVX2), else portable C. */
const eng__kernels *eng__kernels_get(bool allow_simd);

#endif
