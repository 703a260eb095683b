/* kernels: GEMMs (cuBLAS, FP32 accumulation), FP8 weight storage, conversions
 * and synthetic weight fill. */
#include "common.cuh"

kcu_dtype kcu_act_dtype(kcu_dtype weight_dtype) {
    switch (weight_dtype) {
    case KCU_F16:
        return KCU_F16;
    case KCU_BF16:
    case KCU_FP8:
        return KCU_BF16;
    case KCU_Q8_0:
    case KCU_Q4_0:
    case KCU_Q4_K:
    case KCU_Q5_K:
    case KCU_Q6_K:
        return KCU_BF16; /* kernels/qgemm.cu */
    default:
        return KCU_F32;
    }
}

static cudaDataType_t kcu__cuda_type(kcu_dtype dt) {
    switch (dt) {
    case KCU_F16:
        return CUDA_R_16F;
    case KCU_BF16:
        return CUDA_R_16BF;
    default:
        return CUDA_R_32F;
    }
}

/* Fused FP8 dequantising GEMV for a few rows: one warp per output feature; each
 * lane streams 16 weight bytes at a time, so the weight is read once, 1 byte
 * per element. x is BF16 [n, cols]. */
#define KCU_FP8_MAXN 16
__global__ void kcu__fp8_gemv(const uint8_t *__restrict__ w, const float *__restrict__ scale,
                              const __nv_bfloat16 *__restrict__ x, int n, int rows, int cols,
                              float *__restrict__ y, float beta) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= rows)
        return;
    float acc[KCU_FP8_MAXN];
#pragma unroll
    for (int r = 0; r < KCU_FP8_MAXN; r++)
        acc[r] = 0.0f;
    const uint8_t *wr = w + (size_t)warp * cols;
    bool vec = (cols % 16) == 0;
    if (vec) {
        for (int k0 = lane * 16; k0 < cols; k0 += 32 * 16) {
            uint4 raw = *(const uint4 *)(wr + k0);
            const __nv_fp8_e4m3 *q = (const __nv_fp8_e4m3 *)&raw;
            float wf[16];
#pragma unroll
            for (int j = 0; j < 16; j++)
                wf[j] = float(q[j]);
#pragma unroll
            for (int r = 0; r < KCU_FP8_MAXN; r++) {
                if (r < n) {
                    const __nv_bfloat16 *xr = x + (size_t)r * cols + k0;
                    float s = 0.0f;
#pragma unroll
                    for (int j = 0; j < 16; j++)
                        s += wf[j] * __bfloat162float(xr[j]);
                    acc[r] += s;
                }
            }
        }
    } else {
        for (int kk = lane; kk < cols; kk += 32) {
            float wf = float(((const __nv_fp8_e4m3 *)wr)[kk]);
#pragma unroll
            for (int r = 0; r < KCU_FP8_MAXN; r++)
                if (r < n)
                    acc[r] += wf * __bfloat162float(x[(size_t)r * cols + kk]);
        }
    }
    float sc = scale[warp];
#pragma unroll
    for (int r = 0; r < KCU_FP8_MAXN; r++) {
        if (r < n) {
            float v = kcu__warp_sum(acc[r]) * sc;
            if (lane == 0) {
                float *yo = y + (size_t)r * rows + warp;
                *yo = beta != 0.0f ? *yo + v : v;
            }
        }
    }
}

__global__ void kcu__fp8_dequant(const uint8_t *__restrict__ w, const float *__restrict__ scale,
                                 int64_t rows, int64_t cols, __nv_bfloat16 *__restrict__ out) {
    size_t n = (size_t)rows * cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = float(((const __nv_fp8_e4m3 *)w)[i]) * scale[i / cols];
        out[i] = __float2bfloat16_rn(v);
    }
}

base_status kcu_gemm(kcu_ctx *k, const kcu_weight *w, const void *x, int n, float *y, float beta,
                     void *scratch) {
    if (w->n_parts > 0) /* quantised blocks: kernels/qgemm.cu */
        return kcu_gemm_q(k, w, x, n, y, beta, scratch, KCU_GEMM_AUTO);
    KCU_REQUIRE(k, n >= 0 && w->rows > 0 && w->cols > 0, BASE_ERR_INVALID);
    if (n == 0)
        return BASE_OK;
    int rows = (int)w->rows, cols = (int)w->cols;
    const void *a = w->data;
    kcu_dtype adt = w->dtype;
    if (w->dtype == KCU_FP8) {
        if (n <= KCU_FP8_MAXN) {
            unsigned threads = 256;
            unsigned blocks = (unsigned)(((size_t)rows * 32 + threads - 1) / threads);
            kcu__fp8_gemv<<<blocks, threads, 0, k->stream>>>((const uint8_t *)w->data, w->scale,
                                                             (const __nv_bfloat16 *)x, n, rows,
                                                             cols, y, beta);
            KCU_CHECK_LAUNCH(k);
            return BASE_OK;
        }
        KCU_REQUIRE(k, scratch != NULL, BASE_ERR_INVALID);
        kcu__fp8_dequant<<<kcu__blocks((size_t)rows * cols, 256), 256, 0, k->stream>>>(
            (const uint8_t *)w->data, w->scale, rows, cols, (__nv_bfloat16 *)scratch);
        KCU_CHECK_LAUNCH(k);
        a = scratch;
        adt = KCU_BF16;
    }
    cudaDataType_t t = kcu__cuda_type(adt);
    float alpha = 1.0f;
    /* Column-major view: Yᵀ[rows, n] = W[rows, cols] · Xᵀ[cols, n]; W row-major
     * [rows, cols] is column-major [cols, rows], hence OP_T with lda = cols. */
    KCU_BLAS(k, cublasGemmEx(k->blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, n, cols, &alpha, a, t, cols,
                             x, t, cols, &beta, y, CUDA_R_32F, rows, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT));
    return BASE_OK;
}

__global__ void kcu__quantize_fp8(const void *__restrict__ src, int dt, int64_t cols,
                                  uint8_t *__restrict__ dst, float *__restrict__ scale) {
    __shared__ float red[32];
    int64_t r = blockIdx.x;
    float amax = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        amax = fmaxf(amax, fabsf(kcu__ld(src, dt, (size_t)r * cols + c)));
    amax = kcu__block_max(amax, red);
    float s = amax > 0.0f ? amax / 448.0f : 1.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = kcu__ld(src, dt, (size_t)r * cols + c) / s;
        ((__nv_fp8_e4m3 *)dst)[(size_t)r * cols + c] = __nv_fp8_e4m3(v);
    }
    if (threadIdx.x == 0)
        scale[r] = s;
}

base_status kcu_quantize_fp8(kcu_ctx *k, const void *src, kcu_dtype src_dt, int64_t rows,
                             int64_t cols, kcu_weight *dst) {
    KCU_REQUIRE(k, rows > 0 && rows <= 0x7fffffff && cols > 0, BASE_ERR_INVALID);
    kcu__quantize_fp8<<<(unsigned)rows, 256, 0, k->stream>>>(src, src_dt, cols,
                                                             (uint8_t *)dst->data, dst->scale);
    KCU_CHECK_LAUNCH(k);
    dst->dtype = KCU_FP8;
    dst->rows = rows;
    dst->cols = cols;
    return BASE_OK;
}

__device__ __forceinline__ uint64_t kcu__mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__global__ void kcu__fill_random(void *p, int dt, size_t n, float scale, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t h = kcu__mix64(seed ^ kcu__mix64(i));
        float u = (float)((h >> 40) * (1.0 / 16777216.0)); /* [0, 1) */
        kcu__st(p, dt, i, (2.0f * u - 1.0f) * scale);
    }
}

base_status kcu_fill_random(kcu_ctx *k, void *dev, kcu_dtype dt, size_t n, float scale,
                            uint64_t seed) {
    if (n == 0)
        return BASE_OK;
    kcu__fill_random<<<kcu__blocks(n, 256), 256, 0, k->stream>>>(dev, dt, n, scale, seed);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

__global__ void kcu__convert(const void *src, int sdt, void *dst, int ddt, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        kcu__st(dst, ddt, i, kcu__ld(src, sdt, i));
}

base_status kcu_convert(kcu_ctx *k, const void *src, kcu_dtype src_dt, void *dst, kcu_dtype dst_dt,
                        size_t n) {
    if (n == 0)
        return BASE_OK;
    kcu__convert<<<kcu__blocks(n, 256), 256, 0, k->stream>>>(src, src_dt, dst, dst_dt, n);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}
