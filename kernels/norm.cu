/* kernels: embedding gather, RMSNorm, RoPE, SwiGLU, bias/residual adds, row
 * gathers and positions — the row-wise and elementwise ops of a layer. */
#include "common.cuh"

__global__ void kcu__embed(const void *__restrict__ table, int dt, int vocab, int d,
                           const int32_t *__restrict__ ids, float *__restrict__ out) {
    int i = blockIdx.x;
    int32_t id = ids[i];
    bool ok = id >= 0 && id < vocab;
    for (int c = threadIdx.x; c < d; c += blockDim.x)
        out[(size_t)i * d + c] = ok ? kcu__ld(table, dt, (size_t)id * d + c) : 0.0f;
}

base_status kcu_embed(kcu_ctx *k, const void *table, kcu_dtype dt, int vocab, int d,
                      const int32_t *ids, int n, float *out) {
    if (n <= 0)
        return BASE_OK;
    if (kcu_dtype_is_block(dt))
        return kcu__embed_blocks_launch(k, table, dt, vocab, d, ids, n, out);
    kcu__embed<<<n, 256, 0, k->stream>>>(table, dt, vocab, d, ids, out);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

/* Matches the CPU reference: sum of squares in double, the inverse RMS rounded
 * to fp32, (x * r) * w in fp32. */
__global__ void kcu__rmsnorm(const float *__restrict__ x, const float *__restrict__ w, int d,
                             float eps, void *__restrict__ out, int odt) {
    __shared__ double red[32];
    const float *xr = x + (size_t)blockIdx.x * d;
    double ss = 0.0;
    for (int c = threadIdx.x; c < d; c += blockDim.x)
        ss += (double)xr[c] * xr[c];
    ss = kcu__block_sum_d(ss, red);
    float inv = (float)(1.0 / sqrt(ss / d + (double)eps));
    for (int c = threadIdx.x; c < d; c += blockDim.x)
        kcu__st(out, odt, (size_t)blockIdx.x * d + c, (xr[c] * inv) * w[c]);
}

base_status kcu_rmsnorm(kcu_ctx *k, const float *x, const float *w, int n, int d, float eps,
                        void *out, kcu_dtype out_dt) {
    if (n <= 0)
        return BASE_OK;
    kcu__rmsnorm<<<n, 256, 0, k->stream>>>(x, w, d, eps, out, out_dt);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

__global__ void kcu__bias_add(float *__restrict__ y, const float *__restrict__ b, size_t n, int d) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] += b[i % d];
}

base_status kcu_bias_add(kcu_ctx *k, float *y, const float *b, int n, int d) {
    size_t total = (size_t)n * d;
    if (total == 0)
        return BASE_OK;
    kcu__bias_add<<<kcu__blocks(total, 256), 256, 0, k->stream>>>(y, b, total, d);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

__global__ void kcu__add(float *__restrict__ y, const float *__restrict__ x, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] += x[i];
}

base_status kcu_add(kcu_ctx *k, float *y, const float *x, size_t n) {
    if (n == 0)
        return BASE_OK;
    kcu__add<<<kcu__blocks(n, 256), 256, 0, k->stream>>>(y, x, n);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

/* One block per row; thread j of a head rotates the pair (j, j + hd/2). The
 * angle p * theta^(-2j/hd) is formed in double and its cos/sin rounded to fp32,
 * as in the CPU reference. */
__global__ void kcu__rope(float *__restrict__ x, int row_stride, const int32_t *__restrict__ pos,
                          int n_head, int head_dim, float theta) {
    int half = head_dim / 2;
    float *xr = x + (size_t)blockIdx.x * row_stride;
    double p = (double)pos[blockIdx.x];
    for (int t = threadIdx.x; t < n_head * half; t += blockDim.x) {
        int h = t / half, j = t % half;
        double ang = p * pow((double)theta, -2.0 * j / head_dim);
        float c = (float)cos(ang), s = (float)sin(ang);
        float *xh = xr + (size_t)h * head_dim;
        float a = xh[j], b = xh[j + half];
        xh[j] = a * c - b * s;
        xh[j + half] = b * c + a * s;
    }
}

base_status kcu_rope(kcu_ctx *k, float *x, int row_stride, const int32_t *pos, int n, int n_head,
                     int head_dim, float theta) {
    KCU_REQUIRE(k, head_dim % 2 == 0, BASE_ERR_INVALID);
    if (n <= 0)
        return BASE_OK;
    kcu__rope<<<n, 128, 0, k->stream>>>(x, row_stride, pos, n_head, head_dim, theta);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

__global__ void kcu__swiglu(const float *__restrict__ gu, size_t n, int d_ff, void *out, int odt) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / d_ff, j = i % d_ff;
        float g = gu[r * 2 * d_ff + j], u = gu[r * 2 * d_ff + d_ff + j];
        kcu__st(out, odt, i, g / (1.0f + expf(-g)) * u);
    }
}

base_status kcu_swiglu(kcu_ctx *k, const float *gu, int n, int d_ff, void *out, kcu_dtype out_dt) {
    size_t total = (size_t)n * d_ff;
    if (total == 0)
        return BASE_OK;
    kcu__swiglu<<<kcu__blocks(total, 256), 256, 0, k->stream>>>(gu, total, d_ff, out, out_dt);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

__global__ void kcu__gather_rows(const float *__restrict__ src, const int32_t *__restrict__ idx,
                                 int d, float *__restrict__ dst) {
    int32_t r = idx[blockIdx.x];
    for (int c = threadIdx.x; c < d; c += blockDim.x)
        dst[(size_t)blockIdx.x * d + c] = r >= 0 ? src[(size_t)r * d + c] : 0.0f;
}

base_status kcu_gather_rows(kcu_ctx *k, const float *src, const int32_t *idx, int n, int d,
                            float *dst) {
    if (n <= 0)
        return BASE_OK;
    kcu__gather_rows<<<n, 256, 0, k->stream>>>(src, idx, d, dst);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

/* One thread per sequence: a sequential scan (len is at most a few thousand). */
__global__ void kcu__positions(const uint8_t *__restrict__ valid, int n_seq, int len, int q_start,
                               int n_q, int32_t *__restrict__ pos) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= n_seq)
        return;
    int c = 0;
    for (int i = 0; i < q_start + n_q && i < len; i++) {
        bool v = valid ? valid[(size_t)b * len + i] != 0 : true;
        c += v;
        if (i >= q_start)
            pos[(size_t)b * n_q + (i - q_start)] = v ? c - 1 : 1;
    }
}

base_status kcu_positions(kcu_ctx *k, const uint8_t *valid, int n_seq, int len, int q_start,
                          int n_q, int32_t *pos) {
    KCU_REQUIRE(k, q_start >= 0 && n_q >= 0 && q_start + n_q <= len, BASE_ERR_INVALID);
    if (n_seq <= 0 || n_q == 0)
        return BASE_OK;
    kcu__positions<<<(n_seq + 63) / 64, 64, 0, k->stream>>>(valid, n_seq, len, q_start, n_q, pos);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}
