/* kernels: K/V cache store and bidirectional attention (GQA, flash-style
 * online softmax over key tiles, padded keys masked, fully-masked rows → 0). */
#include "common.cuh"

#define KCU_ATT_HD_MAX 128
#define KCU_ATT_DPL (KCU_ATT_HD_MAX / 32) /* head dims owned by one lane */
#define KCU_ATT_TK 32                     /* keys per shared-memory tile */
#define KCU_ATT_WARPS 4
#define KCU_ATT_RPW 4 /* query rows per warp */
#define KCU_ATT_QT (KCU_ATT_WARPS * KCU_ATT_RPW)

__global__ void kcu__kv_store(kcu_attn_shape s, const float *__restrict__ qkv, int stride,
                              int k_off, int v_off, float *__restrict__ kc,
                              float *__restrict__ vc) {
    int row = blockIdx.x; /* b * n_q + i */
    int b = row / s.n_q, i = row % s.n_q;
    int w = s.n_kv * s.head_dim;
    size_t dst = ((size_t)b * s.max_len + s.q_start + i) * w;
    const float *src = qkv + (size_t)row * stride;
    for (int c = threadIdx.x; c < w; c += blockDim.x) {
        kc[dst + c] = src[k_off + c];
        vc[dst + c] = src[v_off + c];
    }
}

base_status kcu_kv_store(kcu_ctx *k, const kcu_attn_shape *s, const float *qkv, int stride,
                         int k_off, int v_off, float *kcache, float *vcache) {
    KCU_REQUIRE(k, s->q_start >= 0 && s->q_start + s->n_q <= s->max_len, BASE_ERR_INVALID);
    int rows = s->n_seq * s->n_q;
    if (rows <= 0)
        return BASE_OK;
    kcu__kv_store<<<rows, 128, 0, k->stream>>>(*s, qkv, stride, k_off, v_off, kcache, vcache);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

/* Short windows (a hole-only step: a few dozen query rows over a long canvas)
 * give too few blocks to fill the GPU, so their keys are split into up to 8
 * ranges whose partial (max, sum, unnormalised output) a second kernel merges
 * (flash-decoding). */
#define KCU_ATT_MAX_SPLIT 8
#define KCU_ATT_SPLIT_MAX_Q 64

static int kcu__att_splits(const kcu_attn_shape *s) {
    if (s->n_q > KCU_ATT_SPLIT_MAX_Q)
        return 1;
    int n = s->len / 128;
    return n < 1 ? 1 : n > KCU_ATT_MAX_SPLIT ? KCU_ATT_MAX_SPLIT : n;
}

size_t kcu_attention_scratch(const kcu_attn_shape *s) {
    int n = kcu__att_splits(s);
    if (n <= 1)
        return 0;
    return (size_t)n * s->n_seq * s->n_q * s->n_head * (s->head_dim + 2);
}

__global__ void __launch_bounds__(KCU_ATT_WARPS * 32)
    kcu__attention(kcu_attn_shape s, const float *__restrict__ qkv, int stride,
                   const float *__restrict__ kc, const float *__restrict__ vc,
                   const uint8_t *__restrict__ valid, int n_split, float *__restrict__ part,
                   void *__restrict__ out, int odt) {
    __shared__ float qs[KCU_ATT_QT][KCU_ATT_HD_MAX];
    __shared__ float ks[KCU_ATT_TK][KCU_ATT_HD_MAX + 1];
    __shared__ float vs[KCU_ATT_TK][KCU_ATT_HD_MAX];
    __shared__ uint8_t kvalid[KCU_ATT_TK];

    const int hd = s.head_dim;
    const int q0 = blockIdx.x * KCU_ATT_QT;
    const int h = blockIdx.y, b = blockIdx.z / n_split, split = blockIdx.z % n_split;
    /* this block's key range, whole tiles */
    const int per = ((s.len + n_split - 1) / n_split + KCU_ATT_TK - 1) / KCU_ATT_TK * KCU_ATT_TK;
    const int j_begin = split * per, j_end = min(s.len, j_begin + per);
    const int kvh = h / (s.n_head / s.n_kv);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int kvw = s.n_kv * hd;
    const float scale = rsqrtf((float)hd);

    for (int t = threadIdx.x; t < KCU_ATT_QT * hd; t += blockDim.x) {
        int r = t / hd, d = t % hd;
        int qi = q0 + r;
        qs[r][d] = qi < s.n_q ? qkv[((size_t)b * s.n_q + qi) * stride + (size_t)h * hd + d] : 0.0f;
    }

    float m[KCU_ATT_RPW], l[KCU_ATT_RPW], acc[KCU_ATT_RPW][KCU_ATT_DPL];
#pragma unroll
    for (int r = 0; r < KCU_ATT_RPW; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
#pragma unroll
        for (int t = 0; t < KCU_ATT_DPL; t++)
            acc[r][t] = 0.0f;
    }

    for (int j0 = j_begin; j0 < j_end; j0 += KCU_ATT_TK) {
        __syncthreads();
        for (int t = threadIdx.x; t < KCU_ATT_TK * hd; t += blockDim.x) {
            int jj = t / hd, d = t % hd;
            int j = j0 + jj;
            float kv = 0.0f, vv = 0.0f;
            if (j < j_end) {
                size_t off = ((size_t)b * s.max_len + j) * kvw + (size_t)kvh * hd + d;
                kv = kc[off];
                vv = vc[off];
            }
            ks[jj][d] = kv;
            vs[jj][d] = vv;
        }
        if (threadIdx.x < KCU_ATT_TK) {
            int j = j0 + threadIdx.x;
            kvalid[threadIdx.x] =
                j < j_end && (valid == NULL || valid[(size_t)b * s.len + j] != 0) ? 1 : 0;
        }
        __syncthreads();

#pragma unroll
        for (int r = 0; r < KCU_ATT_RPW; r++) {
            const float *q = qs[warp * KCU_ATT_RPW + r];
            float sc = -INFINITY;
            if (kvalid[lane]) {
                float dot = 0.0f;
                for (int d = 0; d < hd; d++)
                    dot += q[d] * ks[lane][d];
                sc = dot * scale;
            }
            float mt = kcu__warp_max(sc);
            if (mt == -INFINITY)
                continue; /* no valid key in this tile */
            float mn = fmaxf(m[r], mt);
            float corr = m[r] == -INFINITY ? 0.0f : expf(m[r] - mn);
            float p = sc == -INFINITY ? 0.0f : expf(sc - mn);
            l[r] = l[r] * corr + kcu__warp_sum(p);
#pragma unroll
            for (int t = 0; t < KCU_ATT_DPL; t++)
                acc[r][t] *= corr;
            for (int jj = 0; jj < KCU_ATT_TK; jj++) {
                float pj = __shfl_sync(0xffffffffu, p, jj);
                if (pj == 0.0f)
                    continue;
#pragma unroll
                for (int t = 0; t < KCU_ATT_DPL; t++) {
                    int d = lane + 32 * t;
                    if (d < hd)
                        acc[r][t] += pj * vs[jj][d];
                }
            }
            m[r] = mn;
        }
    }

    if (n_split > 1) { /* partial results: acc (unnormalised), then m and l */
#pragma unroll
        for (int r = 0; r < KCU_ATT_RPW; r++) {
            int qi = q0 + warp * KCU_ATT_RPW + r;
            if (qi >= s.n_q)
                continue;
            size_t prow = (((size_t)split * s.n_seq + b) * s.n_q + qi) * s.n_head + h;
            float *pp = part + prow * (hd + 2);
#pragma unroll
            for (int t = 0; t < KCU_ATT_DPL; t++) {
                int d = lane + 32 * t;
                if (d < hd)
                    pp[d] = acc[r][t];
            }
            if (lane == 0) {
                pp[hd] = m[r];
                pp[hd + 1] = l[r];
            }
        }
        return;
    }

#pragma unroll
    for (int r = 0; r < KCU_ATT_RPW; r++) {
        int qi = q0 + warp * KCU_ATT_RPW + r;
        if (qi >= s.n_q)
            continue;
        bool qvalid = valid == NULL || valid[(size_t)b * s.len + s.q_start + qi] != 0;
        float inv = (qvalid && l[r] > 0.0f) ? 1.0f / l[r] : 0.0f;
        size_t orow = ((size_t)b * s.n_q + qi) * ((size_t)s.n_head * hd) + (size_t)h * hd;
#pragma unroll
        for (int t = 0; t < KCU_ATT_DPL; t++) {
            int d = lane + 32 * t;
            if (d < hd)
                kcu__st(out, odt, orow + d, acc[r][t] * inv);
        }
    }
}

/* One block per (row, head): merges the splits' partials. */
__global__ void kcu__attention_merge(kcu_attn_shape s, int n_split, const float *__restrict__ part,
                                     const uint8_t *__restrict__ valid, void *__restrict__ out,
                                     int odt) {
    const int hd = s.head_dim, h = blockIdx.y;
    const int row = blockIdx.x; /* b * n_q + qi */
    const int b = row / s.n_q, qi = row % s.n_q;
    const size_t rows = (size_t)s.n_seq * s.n_q;
    float mx = -INFINITY;
    for (int sp = 0; sp < n_split; sp++)
        mx = fmaxf(mx, part[(((size_t)sp * rows + row) * s.n_head + h) * (hd + 2) + hd]);
    bool qvalid = valid == NULL || valid[(size_t)b * s.len + s.q_start + qi] != 0;
    float L = 0.0f;
    if (mx > -INFINITY)
        for (int sp = 0; sp < n_split; sp++) {
            const float *pp = part + (((size_t)sp * rows + row) * s.n_head + h) * (hd + 2);
            if (pp[hd] > -INFINITY)
                L += pp[hd + 1] * expf(pp[hd] - mx);
        }
    float inv = (qvalid && L > 0.0f) ? 1.0f / L : 0.0f;
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float o = 0.0f;
        if (inv > 0.0f)
            for (int sp = 0; sp < n_split; sp++) {
                const float *pp = part + (((size_t)sp * rows + row) * s.n_head + h) * (hd + 2);
                if (pp[hd] > -INFINITY)
                    o += pp[d] * expf(pp[hd] - mx);
            }
        kcu__st(out, odt, (size_t)row * ((size_t)s.n_head * hd) + (size_t)h * hd + d, o * inv);
    }
}

base_status kcu_attention(kcu_ctx *k, const kcu_attn_shape *s, const float *qkv, int stride,
                          const float *kcache, const float *vcache, const uint8_t *valid,
                          float *scratch, void *out, kcu_dtype out_dt) {
    KCU_REQUIRE(k, s->head_dim > 0 && s->head_dim <= KCU_ATT_HD_MAX, BASE_ERR_UNSUPPORTED);
    KCU_REQUIRE(k, s->n_kv > 0 && s->n_head % s->n_kv == 0, BASE_ERR_INVALID);
    KCU_REQUIRE(k, s->len <= s->max_len && s->q_start + s->n_q <= s->len, BASE_ERR_INVALID);
    if (s->n_seq <= 0 || s->n_q <= 0)
        return BASE_OK;
    int n_split = scratch ? kcu__att_splits(s) : 1;
    dim3 grid((unsigned)((s->n_q + KCU_ATT_QT - 1) / KCU_ATT_QT), (unsigned)s->n_head,
              (unsigned)(s->n_seq * n_split));
    kcu__attention<<<grid, KCU_ATT_WARPS * 32, 0, k->stream>>>(
        *s, qkv, stride, kcache, vcache, valid, n_split, scratch, out, out_dt);
    KCU_CHECK_LAUNCH(k);
    if (n_split > 1) {
        dim3 mg((unsigned)(s->n_seq * s->n_q), (unsigned)s->n_head);
        kcu__attention_merge<<<mg, 128, 0, k->stream>>>(*s, n_split, scratch, valid, out, out_dt);
        KCU_CHECK_LAUNCH(k);
    }
    return BASE_OK;
}
