/* kernels: quantised GGUF weights (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K) kept as their
 * blocks on the device. The bit-level work is kernels/qblock.h, shared with a
 * host test (tests/engine/test_qblock.c); this file only maps it onto threads.
 *
 * Few rows (hole steps, n <= the context's qdirect_max, default KCU_Q_MAXN):
 * the x rows are quantised to int8 blocks of 32, then one warp per output
 * feature walks the row's 32-value sub-blocks (lane l takes l, l + 32, ...) and
 * adds kq_vd's term for every x row (chunks of KCU_Q_MAXN) into a register
 * accumulator; a butterfly sums the lanes. The weight bytes are read once per
 * chunk, by one warp, and the x blocks (n * cols * 1.25 bytes) stay in L1/L2.
 * Chosen over dequantise-in-registers + fp32 FMA because (1) __dp4a does four
 * multiply-adds per instruction (about twice the fp32 FMA rate) with no
 * per-value conversion to float, and a 33-row step is bound by multiplies,
 * not by the weight read; (2) it computes the CPU backend's int8 terms
 * exactly (same activation quantiser, exact integer sums, the same fp32 scale
 * products), so the GPU result differs from the CPU's only by the order of
 * the fp32 sum over sub-blocks, a bound that can be derived and tested
 * (test_gpu_kernels). Int8 tensor-core MMA (llama.cpp's mmq) would be faster
 * for 8-64 rows; it is not written since it could not be run.
 *
 * Many rows (full forwards): each block part is dequantised to BF16 into the
 * context's scratch (one thread per value) and multiplied by cuBLAS, as the
 * FP8 path does. */
#include "common.cuh"
#include "qblock.h"

size_t kcu_row_bytes(kcu_dtype dt, int64_t cols) {
    if (!kcu_dtype_is_block(dt))
        return (size_t)cols * kcu_dtype_size(dt);
    const int qk = kq_block_values((int)dt);
    return cols % qk ? 0 : (size_t)(cols / qk) * (size_t)kq_block_bytes((int)dt);
}

/* ---- dequantisation ------------------------------------------------------------ */

template <int T>
__global__ void kcu__dequant(const uint8_t *__restrict__ src, size_t n, void *__restrict__ out,
                             int odt) {
    const int qk = kq_block_values(T), bs = kq_block_bytes(T);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        kcu__st(out, odt, i, kq_dq(T, src + (i / qk) * bs, (int)(i % qk)));
}

template <int T>
static void kcu__launch_dequant(kcu_ctx *k, const void *src, size_t n, void *out, kcu_dtype odt) {
    kcu__dequant<T>
        <<<kcu__blocks(n, 256), 256, 0, k->stream>>>((const uint8_t *)src, n, out, (int)odt);
}

base_status kcu_dequant(kcu_ctx *k, const void *blocks, kcu_dtype dt, size_t n_values, void *out,
                        kcu_dtype out_dt) {
    KCU_REQUIRE(k, kcu_dtype_is_block(dt), BASE_ERR_INVALID);
    KCU_REQUIRE(k, out_dt == KCU_F32 || out_dt == KCU_BF16 || out_dt == KCU_F16, BASE_ERR_INVALID);
    KCU_REQUIRE(k, n_values % (size_t)kq_block_values((int)dt) == 0, BASE_ERR_INVALID);
    if (n_values == 0)
        return BASE_OK;
    switch (dt) {
    case KCU_Q8_0:
        kcu__launch_dequant<KQ_Q8_0>(k, blocks, n_values, out, out_dt);
        break;
    case KCU_Q4_0:
        kcu__launch_dequant<KQ_Q4_0>(k, blocks, n_values, out, out_dt);
        break;
    case KCU_Q4_K:
        kcu__launch_dequant<KQ_Q4_K>(k, blocks, n_values, out, out_dt);
        break;
    case KCU_Q5_K:
        kcu__launch_dequant<KQ_Q5_K>(k, blocks, n_values, out, out_dt);
        break;
    default:
        kcu__launch_dequant<KQ_Q6_K>(k, blocks, n_values, out, out_dt);
        break;
    }
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

/* ---- embedding rows of a block-type table ----------------------------------------- */

__global__ void kcu__embed_blocks(const uint8_t *__restrict__ table, int t, size_t row_bytes,
                                  int vocab, int d, const int32_t *__restrict__ ids,
                                  float *__restrict__ out) {
    const int r = blockIdx.x, id = ids[r];
    const int qk = kq_block_values(t), bs = kq_block_bytes(t);
    float *o = out + (size_t)r * d;
    const uint8_t *row = table + (size_t)(id >= 0 && id < vocab ? id : 0) * row_bytes;
    for (int c = threadIdx.x; c < d; c += blockDim.x)
        o[c] = id >= 0 && id < vocab ? kq_dq(t, row + (size_t)(c / qk) * bs, c % qk) : 0.0f;
}

base_status kcu__embed_blocks_launch(kcu_ctx *k, const void *table, kcu_dtype dt, int vocab, int d,
                                     const int32_t *ids, int n, float *out) {
    const size_t rb = kcu_row_bytes(dt, d);
    KCU_REQUIRE(k, rb > 0, BASE_ERR_INVALID);
    kcu__embed_blocks<<<n, 256, 0, k->stream>>>((const uint8_t *)table, (int)dt, rb, vocab, d, ids,
                                                out);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

/* ---- activations ------------------------------------------------------------------- */

__global__ void kcu__quantize_act(const void *__restrict__ x, int dt, size_t n_blocks,
                                  kq_q8a *__restrict__ out) {
    for (size_t b = blockIdx.x * (size_t)blockDim.x + threadIdx.x; b < n_blocks;
         b += (size_t)gridDim.x * blockDim.x) {
        float v[32];
#pragma unroll
        for (int j = 0; j < 32; j++)
            v[j] = kcu__ld(x, dt, b * 32 + j);
        kq_quantize32(v, &out[b]);
    }
}

base_status kcu_quantize_act(kcu_ctx *k, const void *x, kcu_dtype x_dt, int n, int cols,
                             void *out) {
    KCU_REQUIRE(k, n >= 0 && cols > 0 && cols % 32 == 0, BASE_ERR_INVALID);
    KCU_REQUIRE(k, x_dt == KCU_F32 || x_dt == KCU_F16 || x_dt == KCU_BF16, BASE_ERR_INVALID);
    const size_t nb = (size_t)n * (cols / 32);
    if (nb == 0)
        return BASE_OK;
    kcu__quantize_act<<<kcu__blocks(nb, 128), 128, 0, k->stream>>>(x, (int)x_dt, nb, (kq_q8a *)out);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

/* ---- the direct few-row kernel ------------------------------------------------------ */

/* y[r, f] (row stride ldy) = sum over the row's sub-blocks of kq_vd for x row r,
 * for output features f < rows; xq holds n rows of nsub blocks. No
 * __launch_bounds__(256): with it ptxas caps the 40-row kernels at 64 registers
 * and spills; without, 66-71 registers and no spills (sm_90). */
template <int T, int NMAX>
__global__ void kcu__qgemv(const uint8_t *__restrict__ w, size_t row_bytes,
                           const kq_q8a *__restrict__ xq, int nsub, int n, int rows,
                           float *__restrict__ y, int ldy, float beta) {
    const int f = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (f >= rows)
        return;
    const int sub = kq_block_values(T) / 32, bs = kq_block_bytes(T);
    const uint8_t *wr = w + (size_t)f * row_bytes;
    float acc[NMAX];
#pragma unroll
    for (int r = 0; r < NMAX; r++)
        acc[r] = 0.0f;
    for (int i = lane; i < nsub; i += 32) {
        const uint8_t *blk = wr + (size_t)(i / sub) * bs;
        const int j = i % sub;
#pragma unroll
        for (int r = 0; r < NMAX; r++)
            if (r < n)
                acc[r] = kq_vd(T, blk, j, xq + (size_t)r * nsub + i, acc[r]);
    }
#pragma unroll
    for (int r = 0; r < NMAX; r++) {
        if (r < n) {
            const float v = kcu__warp_sum(acc[r]);
            if (lane == 0) {
                float *yo = y + (size_t)r * ldy + f;
                *yo = beta != 0.0f ? __fadd_rn(*yo, v) : v;
            }
        }
    }
}

template <int T>
static void kcu__launch_qgemv(kcu_ctx *k, const void *w, size_t row_bytes, const kq_q8a *xq,
                              int nsub, int n, int rows, float *y, int ldy, float beta) {
    const unsigned threads = 256;
    const unsigned blocks = (unsigned)(((size_t)rows * 32 + threads - 1) / threads);
    const uint8_t *wb = (const uint8_t *)w;
    if (n <= 8)
        kcu__qgemv<T, 8>
            <<<blocks, threads, 0, k->stream>>>(wb, row_bytes, xq, nsub, n, rows, y, ldy, beta);
    else
        kcu__qgemv<T, KCU_Q_MAXN>
            <<<blocks, threads, 0, k->stream>>>(wb, row_bytes, xq, nsub, n, rows, y, ldy, beta);
}

static void kcu__qgemv_dispatch(kcu_ctx *k, kcu_dtype t, const void *w, size_t row_bytes,
                                const kq_q8a *xq, int nsub, int n, int rows, float *y, int ldy,
                                float beta) {
    switch (t) {
    case KCU_Q8_0:
        kcu__launch_qgemv<KQ_Q8_0>(k, w, row_bytes, xq, nsub, n, rows, y, ldy, beta);
        break;
    case KCU_Q4_0:
        kcu__launch_qgemv<KQ_Q4_0>(k, w, row_bytes, xq, nsub, n, rows, y, ldy, beta);
        break;
    case KCU_Q4_K:
        kcu__launch_qgemv<KQ_Q4_K>(k, w, row_bytes, xq, nsub, n, rows, y, ldy, beta);
        break;
    case KCU_Q5_K:
        kcu__launch_qgemv<KQ_Q5_K>(k, w, row_bytes, xq, nsub, n, rows, y, ldy, beta);
        break;
    default:
        kcu__launch_qgemv<KQ_Q6_K>(k, w, row_bytes, xq, nsub, n, rows, y, ldy, beta);
        break;
    }
}

/* ---- GEMM over the parts ---------------------------------------------------------------- */

size_t kcu_gemm_scratch_bytes(const kcu_weight *w) {
    if (w->dtype == KCU_FP8 && w->n_parts == 0)
        return (size_t)w->rows * (size_t)w->cols * 2;
    size_t need = 0;
    bool blocks = false;
    for (int i = 0; i < w->n_parts; i++)
        if (kcu_dtype_is_block(w->part[i].dtype)) {
            blocks = true;
            size_t b = (size_t)w->part[i].rows * (size_t)w->cols * 2;
            need = b > need ? b : need;
        }
    size_t act = (size_t)KCU_Q_MAXN * (size_t)(w->cols / 32) * sizeof(kq_q8a);
    return blocks && act > need ? act : need;
}

/* Column-major view as kcu_gemm: Yᵀ[rows, n] (ldc = ldy) = A[rows, cols]ᵀ-stored · Xᵀ. */
static base_status kcu__blas_bf16(kcu_ctx *k, const void *a, int rows, int cols, const void *x,
                                  int n, float *y, int ldy, float beta) {
    float alpha = 1.0f;
    KCU_BLAS(k, cublasGemmEx(k->blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, n, cols, &alpha, a,
                             CUDA_R_16BF, cols, x, CUDA_R_16BF, cols, &beta, y, CUDA_R_32F, ldy,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return BASE_OK;
}

void kcu_ctx_set_qdirect(kcu_ctx *k, int max_rows) { k->qdirect_max = max_rows < 0 ? 0 : max_rows; }

base_status kcu_gemm_q(kcu_ctx *k, const kcu_weight *w, const void *x, int n, float *y, float beta,
                       void *scratch, kcu_gemm_path path) {
    KCU_REQUIRE(k, n >= 0 && w->rows > 0 && w->cols > 0 && w->n_parts > 0, BASE_ERR_INVALID);
    KCU_REQUIRE(k, w->rows <= 0x7fffffff && w->cols <= 0x7fffffff, BASE_ERR_INVALID);
    if (n == 0)
        return BASE_OK;
    const int cols = (int)w->cols, ldy = (int)w->rows;
    bool blocks = false;
    for (int i = 0; i < w->n_parts; i++)
        blocks |= kcu_dtype_is_block(w->part[i].dtype);
    const bool direct = path == KCU_GEMM_DIRECT || (path == KCU_GEMM_AUTO && n <= k->qdirect_max);
    KCU_REQUIRE(k, !blocks || scratch != NULL, BASE_ERR_INVALID);
    const int nsub = cols / 32;
    base_status st;
    /* BF16 parts (and, on the scratch path, the dequantised block parts) */
    int64_t r0 = 0;
    for (int i = 0; i < w->n_parts; i++) {
        const kcu_part *p = &w->part[i];
        const int prow = (int)p->rows;
        if (!kcu_dtype_is_block(p->dtype)) {
            KCU_REQUIRE(k, p->dtype == KCU_BF16, BASE_ERR_INVALID);
            if ((st = kcu__blas_bf16(k, p->data, prow, cols, x, n, y + r0, ldy, beta)))
                return st;
        } else if (!direct) {
            if ((st = kcu_dequant(k, p->data, p->dtype, (size_t)prow * cols, scratch, KCU_BF16)) ||
                (st = kcu__blas_bf16(k, scratch, prow, cols, x, n, y + r0, ldy, beta)))
                return st;
        } else {
            KCU_REQUIRE(k, kcu_row_bytes(p->dtype, cols) > 0, BASE_ERR_INVALID);
        }
        r0 += p->rows;
    }
    KCU_REQUIRE(k, r0 == w->rows, BASE_ERR_INVALID);
    if (!direct || !blocks)
        return BASE_OK;
    /* direct: chunks of KCU_Q_MAXN x rows, quantised once per chunk for every part */
    for (int c0 = 0; c0 < n; c0 += KCU_Q_MAXN) {
        const int nn = n - c0 < KCU_Q_MAXN ? n - c0 : KCU_Q_MAXN;
        const char *xc = (const char *)x + (size_t)c0 * cols * 2;
        if ((st = kcu_quantize_act(k, xc, KCU_BF16, nn, cols, scratch)))
            return st;
        r0 = 0;
        for (int i = 0; i < w->n_parts; i++) {
            const kcu_part *p = &w->part[i];
            if (kcu_dtype_is_block(p->dtype)) {
                kcu__qgemv_dispatch(k, p->dtype, p->data, kcu_row_bytes(p->dtype, cols),
                                    (const kq_q8a *)scratch, nsub, nn, (int)p->rows,
                                    y + (size_t)c0 * ldy + r0, ldy, beta);
                KCU_CHECK_LAUNCH(k);
            }
            r0 += p->rows;
        }
    }
    return BASE_OK;
}

/* ---- synthetic blocks ------------------------------------------------------------------------ */

__device__ __forceinline__ uint64_t kcu__qmix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Random bytes, then the f16 scales set so that the largest values are 0.03 to 0.12:
 * Q8_0 d = 2^-12 (|q| <= 127), Q4_0 d = 2^-8, Q4_K/Q5_K d = 2^-14, dmin = 2^-15
 * (6-bit scales and minimums), Q6_K d = 2^-16 (int8 scales, |q| <= 32). */
__global__ void kcu__fill_blocks(uint8_t *p, int t, size_t n_blocks, uint64_t seed) {
    const int bs = kq_block_bytes(t);
    for (size_t b = blockIdx.x * (size_t)blockDim.x + threadIdx.x; b < n_blocks;
         b += (size_t)gridDim.x * blockDim.x) {
        uint8_t *q = p + b * bs;
        for (int i = 0; i < bs; i += 8) {
            uint64_t h = kcu__qmix(seed ^ kcu__qmix(b * 32 + (size_t)i));
            for (int j = 0; j < 8 && i + j < bs; j++)
                q[i + j] = (uint8_t)(h >> (8 * j));
        }
        switch (t) {
        case KQ_Q8_0:
            q[0] = 0x00, q[1] = 0x0C; /* 2^-12 */
            break;
        case KQ_Q4_0:
            q[0] = 0x00, q[1] = 0x1C; /* 2^-8 */
            break;
        case KQ_Q4_K:
        case KQ_Q5_K:
            q[0] = 0x00, q[1] = 0x04; /* 2^-14 */
            q[2] = 0x00, q[3] = 0x02; /* 2^-15 (subnormal half) */
            break;
        default:
            q[208] = 0x00, q[209] = 0x01; /* 2^-16 */
            break;
        }
    }
}

base_status kcu_fill_random_blocks(kcu_ctx *k, void *dev, kcu_dtype dt, size_t n_values,
                                   uint64_t seed) {
    KCU_REQUIRE(k, kcu_dtype_is_block(dt), BASE_ERR_INVALID);
    const size_t nb = n_values / (size_t)kq_block_values((int)dt);
    if (nb == 0)
        return BASE_OK;
    kcu__fill_blocks<<<kcu__blocks(nb, 128), 128, 0, k->stream>>>((uint8_t *)dev, (int)dt, nb,
                                                                  seed);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}
