/* kernels: private helpers shared by the .cu files — the context struct, the
 * error-check macros (file and line in every message, in the manner of llm.c's
 * cudaCheck) and dtype load/store helpers. */
#ifndef INFILLD_KERNELS_COMMON_CUH
#define INFILLD_KERNELS_COMMON_CUH

#include "kernels.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <stdio.h>

struct kcu_ctx {
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    void *workspace; /* dev, cuBLAS workspace (fixed so GEMMs can be captured) */
    size_t workspace_bytes;
    cudaEvent_t t0, t1; /* timer marks */
    bool lost;          /* a sticky error happened: the context is unusable */
    int qdirect_max;    /* quantised GEMMs: rows up to which the direct int8 kernel runs */
    char err[512];
};

struct kcu_graph {
    cudaGraphExec_t exec;
};

/* Records a CUDA runtime failure into k->err and maps it to a status. */
base_status kcu__fail(kcu_ctx *k, const char *file, int line, cudaError_t e, const char *what);
base_status kcu__fail_blas(kcu_ctx *k, const char *file, int line, cublasStatus_t s,
                           const char *what);
base_status kcu__fail_msg(kcu_ctx *k, const char *file, int line, base_status st, const char *msg);

#define KCU_CHECK(k, call)                                                                         \
    do {                                                                                           \
        cudaError_t kcu_e_ = (call);                                                               \
        if (kcu_e_ != cudaSuccess)                                                                 \
            return kcu__fail((k), __FILE__, __LINE__, kcu_e_, #call);                              \
    } while (0)

#define KCU_CHECK_LAUNCH(k) KCU_CHECK(k, cudaGetLastError())

#define KCU_BLAS(k, call)                                                                          \
    do {                                                                                           \
        cublasStatus_t kcu_s_ = (call);                                                            \
        if (kcu_s_ != CUBLAS_STATUS_SUCCESS)                                                       \
            return kcu__fail_blas((k), __FILE__, __LINE__, kcu_s_, #call);                         \
    } while (0)

#define KCU_REQUIRE(k, cond, st)                                                                   \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return kcu__fail_msg((k), __FILE__, __LINE__, (st), "precondition failed: " #cond);    \
    } while (0)

/* kcu_embed of a block-type table (kernels/qgemm.cu). */
base_status kcu__embed_blocks_launch(kcu_ctx *k, const void *table, kcu_dtype dt, int vocab, int d,
                                     const int32_t *ids, int n, float *out);

static inline unsigned kcu__blocks(size_t n, unsigned threads) {
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 65535u * 32u ? 65535u * 32u : b);
}

/* Loads element i of a typed buffer as fp32. */
__device__ __forceinline__ float kcu__ld(const void *p, int dt, size_t i) {
    switch (dt) {
    case KCU_F16:
        return __half2float(((const __half *)p)[i]);
    case KCU_BF16:
        return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case KCU_FP8:
        return float(((const __nv_fp8_e4m3 *)p)[i]);
    default:
        return ((const float *)p)[i];
    }
}

/* Stores v into element i of a typed buffer (round to nearest even). */
__device__ __forceinline__ void kcu__st(void *p, int dt, size_t i, float v) {
    switch (dt) {
    case KCU_F16:
        ((__half *)p)[i] = __float2half_rn(v);
        break;
    case KCU_BF16:
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
        break;
    case KCU_FP8:
        ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(v);
        break;
    default:
        ((float *)p)[i] = v;
        break;
    }
}

__device__ __forceinline__ float kcu__warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float kcu__warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Block-wide sum; every thread gets the result. scratch: >= 32 floats. */
__device__ __forceinline__ float kcu__block_sum(float v, float *scratch) {
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = kcu__warp_sum(v);
    __syncthreads();
    if (lane == 0)
        scratch[wid] = v;
    __syncthreads();
    float r = lane < nw ? scratch[lane] : 0.0f;
    r = kcu__warp_sum(r);
    return r;
}

__device__ __forceinline__ double kcu__block_sum_d(double v, double *scratch) {
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if (lane == 0)
        scratch[wid] = v;
    __syncthreads();
    double r = lane < nw ? scratch[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1)
        r += __shfl_xor_sync(0xffffffffu, r, o);
    return r;
}

__device__ __forceinline__ float kcu__block_max(float v, float *scratch) {
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = kcu__warp_max(v);
    __syncthreads();
    if (lane == 0)
        scratch[wid] = v;
    __syncthreads();
    float r = lane < nw ? scratch[lane] : -INFINITY;
    r = kcu__warp_max(r);
    return r;
}

#endif
