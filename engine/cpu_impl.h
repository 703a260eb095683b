/* CPU backend private: the kernel table picked at run time (portable or
 * AVX2+FMA). The scalar reference path lives in backend_cpu.c. */
#ifndef INFILLD_ENGINE_CPU_IMPL_H
#define INFILLD_ENGINE_CPU_IMPL_H

#include "engine_impl.h"

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
} eng__kernels;

/* AVX2+FMA when allowed and the CPU has it, else portable C. */
const eng__kernels *eng__kernels_get(bool allow_simd);

#endif
