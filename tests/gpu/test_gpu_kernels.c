/* Every CUDA kernel against a plain CPU reference written here (llm.c style),
 * with a per-op bound on the normalised mean squared error
 * NMSE = sum (gpu - ref)^2 / sum ref^2, or exact equality where the op is exact.
 * Low-precision inputs are rounded on the device and read back, so the
 * references see exactly the values the kernels saw. Exits 77 (skipped) when
 * no CUDA device is usable. */
#include "../engine/qblock_random.h"
#include "check.h"
#include "cpu_impl.h"
#include "engine.h"
#include "kernels.h"
#include "qblock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kcu_ctx *K;

/* ---- helpers ----------------------------------------------------------------- */

static uint64_t rng_state = 0x1234567ull;

static double urand(void) { /* [0, 1) */
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

static float nrand(void) {
    double u1 = urand() + 1e-12, u2 = urand();
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static float *host_randn(size_t n, float scale) {
    float *h = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        h[i] = nrand() * scale;
    return h;
}

static void *dev_alloc(size_t bytes) {
    void *d = NULL;
    if (kcu_malloc(K, bytes, &d) != BASE_OK) {
        fprintf(stderr, "kcu_malloc(%zu): %s\n", bytes, kcu_ctx_error(K));
        exit(1);
    }
    return d;
}

static float *dev_f32(const float *h, size_t n) {
    float *d = dev_alloc(n * sizeof(float));
    CHECK_EQ_I(kcu_upload(K, d, h, n * sizeof(float)), BASE_OK);
    return d;
}

static void get_f32(float *h, const float *d, size_t n) {
    CHECK_EQ_I(kcu_download(K, h, d, n * sizeof(float)), BASE_OK);
}

/* Rounds host values to dt on the device; returns the device copy in dt and
 * writes the rounded values back into h. */
static void *dev_rounded(float *h, size_t n, kcu_dtype dt) {
    float *f = dev_f32(h, n);
    void *r = dev_alloc(n * kcu_dtype_size(dt));
    CHECK_EQ_I(kcu_convert(K, f, KCU_F32, r, dt, n), BASE_OK);
    CHECK_EQ_I(kcu_convert(K, r, dt, f, KCU_F32, n), BASE_OK);
    get_f32(h, f, n);
    kcu_free(K, f);
    return r;
}

static double nmse(const float *a, const double *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)a[i] - ref[i];
        num += e * e;
        den += ref[i] * ref[i];
    }
    return den > 0 ? num / den : num;
}

#define CHECK_NMSE(name, a, ref, n, bound)                                                         \
    do {                                                                                           \
        double nm_ = nmse((a), (ref), (n));                                                        \
        fprintf(stderr, "  %-28s nmse %.3e (bound %.0e)\n", (name), nm_, (double)(bound));         \
        CHECK(nm_ <= (bound));                                                                     \
    } while (0)

/* ---- tests ------------------------------------------------------------------------ */

static void test_noise(void) {
    const int n = 4096;
    double *d = dev_alloc(n * sizeof(double));
    double *h = malloc(n * sizeof(double));
    uint64_t seeds[2] = {0, 0xdeadbeefcafef00dull};
    for (int s = 0; s < 2; s++) {
        CHECK_EQ_I(kcu_noise_uniform(K, seeds[s], 7, 1234, 150000, n, d), BASE_OK);
        CHECK_EQ_I(kcu_download(K, h, d, n * sizeof(double)), BASE_OK);
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += h[i] != eng_noise_uniform(seeds[s], 7, 1234, 150000 + (uint32_t)i);
        CHECK_EQ_I(bad, 0); /* bit-exact with engine/sample/noise.c */
    }
    free(h);
    kcu_free(K, d);
}

static void test_embed(void) {
    const int V = 50, d = 40, n = 6;
    float *tab = host_randn((size_t)V * d, 1.0f);
    kcu_dtype dts[3] = {KCU_F32, KCU_F16, KCU_BF16};
    int32_t ids[6] = {0, 49, 7, -1, 50, 7};
    int32_t *dids = dev_alloc(sizeof ids);
    CHECK_EQ_I(kcu_upload(K, dids, ids, sizeof ids), BASE_OK);
    float *dout = dev_alloc((size_t)n * d * 4), *out = malloc((size_t)n * d * 4);
    for (int t = 0; t < 3; t++) {
        float *h = malloc((size_t)V * d * 4);
        memcpy(h, tab, (size_t)V * d * 4);
        void *dt = dev_rounded(h, (size_t)V * d, dts[t]);
        CHECK_EQ_I(kcu_embed(K, dt, dts[t], V, d, dids, n, dout), BASE_OK);
        get_f32(out, dout, (size_t)n * d);
        int bad = 0;
        for (int i = 0; i < n; i++)
            for (int c = 0; c < d; c++) {
                float want = ids[i] >= 0 && ids[i] < V ? h[ids[i] * d + c] : 0.0f;
                bad += out[i * d + c] != want;
            }
        CHECK_EQ_I(bad, 0);
        kcu_free(K, dt);
        free(h);
    }
    kcu_free(K, dids);
    kcu_free(K, dout);
    free(out);
    free(tab);
}

static void test_rmsnorm(void) {
    const int n = 5, d = 300;
    float *x = host_randn((size_t)n * d, 2.0f), *w = host_randn(d, 1.0f);
    float *dx = dev_f32(x, (size_t)n * d), *dw = dev_f32(w, d);
    double *ref = malloc((size_t)n * d * sizeof(double));
    for (int i = 0; i < n; i++) {
        double ss = 0;
        for (int c = 0; c < d; c++)
            ss += (double)x[i * d + c] * x[i * d + c];
        float r = (float)(1.0 / sqrt(ss / d + 1e-6));
        for (int c = 0; c < d; c++)
            ref[i * d + c] = (x[i * d + c] * r) * w[c];
    }
    float *dout = dev_alloc((size_t)n * d * 4), *out = malloc((size_t)n * d * 4);
    CHECK_EQ_I(kcu_rmsnorm(K, dx, dw, n, d, 1e-6f, dout, KCU_F32), BASE_OK);
    get_f32(out, dout, (size_t)n * d);
    CHECK_NMSE("rmsnorm f32", out, ref, (size_t)n * d, 1e-12);
    void *db = dev_alloc((size_t)n * d * 2);
    CHECK_EQ_I(kcu_rmsnorm(K, dx, dw, n, d, 1e-6f, db, KCU_BF16), BASE_OK);
    CHECK_EQ_I(kcu_convert(K, db, KCU_BF16, dout, KCU_F32, (size_t)n * d), BASE_OK);
    get_f32(out, dout, (size_t)n * d);
    CHECK_NMSE("rmsnorm bf16 out", out, ref, (size_t)n * d, 3e-5);
    kcu_free(K, db);
    kcu_free(K, dx);
    kcu_free(K, dw);
    kcu_free(K, dout);
    free(x);
    free(w);
    free(out);
    free(ref);
}

static void test_rope(void) {
    const int n = 7, nh = 3, hd = 64, stride = nh * hd + 10;
    const float theta = 1e6f;
    float *x = host_randn((size_t)n * stride, 1.0f);
    int32_t pos[7] = {0, 1, 2, 100, 1023, 2047, 3999};
    int32_t *dpos = dev_alloc(sizeof pos);
    CHECK_EQ_I(kcu_upload(K, dpos, pos, sizeof pos), BASE_OK);
    float *dx = dev_f32(x, (size_t)n * stride);
    CHECK_EQ_I(kcu_rope(K, dx, stride, dpos, n, nh, hd, theta), BASE_OK);
    float *out = malloc((size_t)n * stride * 4);
    get_f32(out, dx, (size_t)n * stride);
    double *ref = malloc((size_t)n * stride * sizeof(double));
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < stride; c++)
            ref[i * stride + c] = x[i * stride + c];
        for (int h = 0; h < nh; h++)
            for (int j = 0; j < hd / 2; j++) {
                double a = (double)pos[i] * pow((double)theta, -2.0 * j / hd);
                float cs = (float)cos(a), sn = (float)sin(a);
                float u = x[i * stride + h * hd + j], v = x[i * stride + h * hd + j + hd / 2];
                ref[i * stride + h * hd + j] = u * cs - v * sn;
                ref[i * stride + h * hd + j + hd / 2] = v * cs + u * sn;
            }
    }
    CHECK_NMSE("rope", out, ref, (size_t)n * stride, 1e-12);
    /* the 10 trailing columns of each row are untouched */
    int bad = 0;
    for (int i = 0; i < n; i++)
        for (int c = nh * hd; c < stride; c++)
            bad += out[i * stride + c] != x[i * stride + c];
    CHECK_EQ_I(bad, 0);
    kcu_free(K, dpos);
    kcu_free(K, dx);
    free(x);
    free(out);
    free(ref);
}

static void test_swiglu_adds_gather(void) {
    const int n = 3, ff = 100;
    float *gu = host_randn((size_t)n * 2 * ff, 3.0f);
    float *dgu = dev_f32(gu, (size_t)n * 2 * ff);
    float *dout = dev_alloc((size_t)n * ff * 4), *out = malloc((size_t)n * ff * 4);
    double *ref = malloc((size_t)n * ff * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ff; j++) {
            double g = gu[i * 2 * ff + j], u = gu[i * 2 * ff + ff + j];
            ref[i * ff + j] = g / (1.0 + exp(-g)) * u;
        }
    CHECK_EQ_I(kcu_swiglu(K, dgu, n, ff, dout, KCU_F32), BASE_OK);
    get_f32(out, dout, (size_t)n * ff);
    CHECK_NMSE("swiglu", out, ref, (size_t)n * ff, 1e-12);

    /* bias add and residual add are exact fp32 additions */
    float *b = host_randn(ff, 1.0f), *y = host_randn((size_t)n * ff, 1.0f);
    float *db = dev_f32(b, ff), *dy = dev_f32(y, (size_t)n * ff);
    CHECK_EQ_I(kcu_bias_add(K, dy, db, n, ff), BASE_OK);
    CHECK_EQ_I(kcu_add(K, dy, dout, (size_t)n * ff), BASE_OK);
    float *got = malloc((size_t)n * ff * 4);
    get_f32(got, dy, (size_t)n * ff);
    int bad = 0;
    for (int i = 0; i < n * ff; i++)
        bad += got[i] != (y[i] + b[i % ff]) + out[i];
    CHECK_EQ_I(bad, 0);

    /* row gather */
    int32_t idx[4] = {2, 0, 2, 1};
    int32_t *didx = dev_alloc(sizeof idx);
    CHECK_EQ_I(kcu_upload(K, didx, idx, sizeof idx), BASE_OK);
    float *dg = dev_alloc((size_t)4 * ff * 4), *g = malloc((size_t)4 * ff * 4);
    CHECK_EQ_I(kcu_gather_rows(K, dy, didx, 4, ff, dg), BASE_OK);
    get_f32(g, dg, (size_t)4 * ff);
    bad = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < ff; j++)
            bad += g[i * ff + j] != got[idx[i] * ff + j];
    CHECK_EQ_I(bad, 0);
    kcu_free(K, didx);
    kcu_free(K, dg);
    kcu_free(K, db);
    kcu_free(K, dy);
    kcu_free(K, dgu);
    kcu_free(K, dout);
    free(g);
    free(got);
    free(b);
    free(y);
    free(gu);
    free(out);
    free(ref);
}

static void test_positions(void) {
    const int n_seq = 2, len = 9;
    uint8_t valid[18] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0};
    uint8_t *dv = dev_alloc(sizeof valid);
    CHECK_EQ_I(kcu_upload(K, dv, valid, sizeof valid), BASE_OK);
    int32_t *dp = dev_alloc(18 * 4), pos[18];
    /* window [2, 8) */
    CHECK_EQ_I(kcu_positions(K, dv, n_seq, len, 2, 6, dp), BASE_OK);
    CHECK_EQ_I(kcu_download(K, pos, dp, 12 * 4), BASE_OK);
    int want[12] = {2, 3, 4, 5, 6, 7, /* seq 1: cumsum - 1, pads -> 1 */ 0, 1, 1, 2, 3, 4};
    int bad = 0;
    for (int i = 0; i < 12; i++)
        bad += pos[i] != want[i];
    CHECK_EQ_I(bad, 0);
    /* valid NULL: plain 0..len-1 */
    CHECK_EQ_I(kcu_positions(K, NULL, 1, len, 0, len, dp), BASE_OK);
    CHECK_EQ_I(kcu_download(K, pos, dp, (size_t)len * 4), BASE_OK);
    bad = 0;
    for (int i = 0; i < len; i++)
        bad += pos[i] != i;
    CHECK_EQ_I(bad, 0);
    kcu_free(K, dv);
    kcu_free(K, dp);
}

/* Attention: kv_store of a window into a pre-filled cache, then attention of the
 * window queries over the whole canvas, against a double-precision reference. */
static void attention_case(const char *name, int n_seq, int len, int max_len, int q_start, int n_q,
                           int nh, int nkv, int hd, const uint8_t *valid) {
    const int q = nh * hd, kv = nkv * hd, stride = q + 2 * kv;
    const size_t rows = (size_t)n_seq * n_q, cache = (size_t)n_seq * max_len * kv;
    float *qkv = host_randn(rows * stride, 1.0f);
    float *kc = host_randn(cache, 1.0f), *vc = host_randn(cache, 1.0f);
    float *dqkv = dev_f32(qkv, rows * stride), *dkc = dev_f32(kc, cache), *dvc = dev_f32(vc, cache);
    uint8_t *dval = NULL;
    if (valid) {
        dval = dev_alloc((size_t)n_seq * len);
        CHECK_EQ_I(kcu_upload(K, dval, valid, (size_t)n_seq * len), BASE_OK);
    }
    kcu_attn_shape s = {n_seq, len, max_len, q_start, n_q, nh, nkv, hd};
    float *dout = dev_alloc(rows * q * 4), *out = malloc(rows * q * 4);
    size_t part_n = kcu_attention_scratch(&s);
    float *part = part_n ? dev_alloc(part_n * 4) : NULL;
    CHECK_EQ_I(kcu_kv_store(K, &s, dqkv, stride, q, q + kv, dkc, dvc), BASE_OK);
    /* without scratch: one pass over all keys */
    CHECK_EQ_I(kcu_attention(K, &s, dqkv, stride, dkc, dvc, dval, NULL, dout, KCU_F32), BASE_OK);
    float *out1 = malloc(rows * q * 4);
    get_f32(out1, dout, rows * q);
    /* with scratch: split keys when the window is short */
    CHECK_EQ_I(kcu_attention(K, &s, dqkv, stride, dkc, dvc, dval, part, dout, KCU_F32), BASE_OK);
    get_f32(out, dout, rows * q);
    fprintf(stderr, "  %-28s key splits: %s\n", name, part_n ? "yes" : "no");

    /* reference cache after the store */
    for (int b = 0; b < n_seq; b++)
        for (int i = 0; i < n_q; i++)
            for (int c = 0; c < kv; c++) {
                size_t dst = ((size_t)b * max_len + q_start + i) * kv + c;
                kc[dst] = qkv[((size_t)b * n_q + i) * stride + q + c];
                vc[dst] = qkv[((size_t)b * n_q + i) * stride + q + kv + c];
            }
    float *kback = malloc(cache * 4);
    get_f32(kback, dkc, cache);
    CHECK(memcmp(kback, kc, cache * 4) == 0);
    free(kback);

    double *ref = calloc(rows * q, sizeof(double));
    double *sc = malloc((size_t)len * sizeof(double));
    int zero_rows_bad = 0;
    for (int b = 0; b < n_seq; b++)
        for (int i = 0; i < n_q; i++)
            for (int h = 0; h < nh; h++) {
                int kh = h / (nh / nkv);
                const float *qv = qkv + ((size_t)b * n_q + i) * stride + (size_t)h * hd;
                double *o = ref + ((size_t)b * n_q + i) * q + (size_t)h * hd;
                bool qval = !valid || valid[b * len + q_start + i];
                double mx = -INFINITY;
                for (int j = 0; j < len; j++) {
                    if (valid && !valid[b * len + j]) {
                        sc[j] = -INFINITY;
                        continue;
                    }
                    const float *kr = kc + ((size_t)b * max_len + j) * kv + (size_t)kh * hd;
                    double dot = 0;
                    for (int c = 0; c < hd; c++)
                        dot += (double)qv[c] * kr[c];
                    sc[j] = dot / sqrt((double)hd);
                    mx = fmax(mx, sc[j]);
                }
                if (!qval || mx == -INFINITY) {
                    const float *g = out + ((size_t)b * n_q + i) * q + (size_t)h * hd;
                    for (int c = 0; c < hd; c++)
                        zero_rows_bad += g[c] != 0.0f;
                    continue;
                }
                double z = 0;
                for (int j = 0; j < len; j++)
                    z += sc[j] == -INFINITY ? 0.0 : exp(sc[j] - mx);
                for (int j = 0; j < len; j++) {
                    if (sc[j] == -INFINITY)
                        continue;
                    double p = exp(sc[j] - mx) / z;
                    const float *vr = vc + ((size_t)b * max_len + j) * kv + (size_t)kh * hd;
                    for (int c = 0; c < hd; c++)
                        o[c] += p * vr[c];
                }
            }
    CHECK_EQ_I(zero_rows_bad, 0); /* padded / fully-masked rows are exact zeros */
    char nm1[80];
    snprintf(nm1, sizeof nm1, "%s (no split)", name);
    CHECK_NMSE(nm1, out1, ref, rows * q, 1e-10);
    free(out1);
    kcu_free(K, part);
    int nan = 0;
    for (size_t i = 0; i < rows * q; i++)
        nan += isnan(out[i]);
    CHECK_EQ_I(nan, 0);
    CHECK_NMSE(name, out, ref, rows * q, 1e-10);
    kcu_free(K, dqkv);
    kcu_free(K, dkc);
    kcu_free(K, dvc);
    kcu_free(K, dval);
    kcu_free(K, dout);
    free(qkv);
    free(kc);
    free(vc);
    free(out);
    free(ref);
    free(sc);
}

static void test_attention(void) {
    /* hd 64, GQA 4/2, window in the middle crossing query tiles, no padding */
    attention_case("attention hd64 gqa2", 2, 70, 80, 20, 37, 4, 2, 64, NULL);
    /* hd 128, GQA 7/1 (Dream's ratio), padded slots in sequence 1, one of them in
     * the window; sequence 2 entirely padded (every row must be zeros) */
    enum { L = 45 };
    uint8_t valid[3 * L];
    for (int i = 0; i < 3 * L; i++)
        valid[i] = i < L ? 1 : i < 2 * L ? (uint8_t)(i % 5 != 0) : 0;
    attention_case("attention hd128 gqa7 padded", 3, L, L, 0, L, 7, 1, 128, valid);
    /* Open-dCoder-like head: hd 64, 14/2, hole-only window of 5 rows */
    attention_case("attention hd64 window5", 1, 300, 512, 150, 5, 14, 2, 64, NULL);
    /* tiny head_dim (tests use 16/32) */
    attention_case("attention hd16", 2, 33, 33, 0, 33, 4, 4, 16, valid);
    /* Dream-7B hole-only step: 33 window rows over 1057 keys, 28/4 heads of 128
     * (8 key splits), with padding in the second sequence */
    enum { LL = 1057 };
    static uint8_t v2[2 * LL];
    for (int i = 0; i < 2 * LL; i++)
        v2[i] = i < LL ? 1 : (uint8_t)(i % 7 != 0);
    attention_case("attention dream hole step", 2, LL, LL + 7, 512, 33, 28, 4, 128, v2);
}

/* y[n, rows] = x W^T (+ y0) in double from the rounded inputs. */
static void gemm_ref(const float *w, const float *x, const float *y0, int rows, int cols, int n,
                     double *ref) {
    for (int i = 0; i < n; i++)
        for (int r = 0; r < rows; r++) {
            double s = y0 ? y0[(size_t)i * rows + r] : 0.0;
            for (int c = 0; c < cols; c++)
                s += (double)x[(size_t)i * cols + c] * w[(size_t)r * cols + c];
            ref[(size_t)i * rows + r] = s;
        }
}

static void test_gemm(void) {
    const int rows = 300, cols = 320;
    kcu_dtype dts[3] = {KCU_F32, KCU_F16, KCU_BF16};
    const char *names[3] = {"gemm f32", "gemm f16", "gemm bf16"};
    int ns[3] = {1, 7, 40};
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < 3; k++) {
            int n = ns[k];
            float *w = host_randn((size_t)rows * cols, 0.05f), *x = host_randn((size_t)n * cols, 1);
            float *y0 = host_randn((size_t)n * rows, 1.0f);
            kcu_weight W = {.dtype = dts[t],
                            .rows = rows,
                            .cols = cols,
                            .data = dev_rounded(w, (size_t)rows * cols, dts[t])};
            void *dx = dev_rounded(x, (size_t)n * cols, kcu_act_dtype(dts[t]));
            float *dy = dev_f32(y0, (size_t)n * rows), *y = malloc((size_t)n * rows * 4);
            double *ref = malloc((size_t)n * rows * sizeof(double));
            /* beta = 1: the fused residual add */
            CHECK_EQ_I(kcu_gemm(K, &W, dx, n, dy, 1.0f, NULL), BASE_OK);
            get_f32(y, dy, (size_t)n * rows);
            gemm_ref(w, x, y0, rows, cols, n, ref);
            char nm[64];
            snprintf(nm, sizeof nm, "%s n=%d beta=1", names[t], n);
            CHECK_NMSE(nm, y, ref, (size_t)n * rows, 1e-10);
            CHECK_EQ_I(kcu_gemm(K, &W, dx, n, dy, 0.0f, NULL), BASE_OK);
            get_f32(y, dy, (size_t)n * rows);
            gemm_ref(w, x, NULL, rows, cols, n, ref);
            snprintf(nm, sizeof nm, "%s n=%d", names[t], n);
            CHECK_NMSE(nm, y, ref, (size_t)n * rows, 1e-10);
            kcu_free(K, W.data);
            kcu_free(K, dx);
            kcu_free(K, dy);
            free(w);
            free(x);
            free(y0);
            free(y);
            free(ref);
        }
}

/* FP8 E4M3 with per-row scales: quantisation error, then both GEMM paths
 * (fused GEMV for n <= 16, dequantise + cuBLAS above) against the
 * dequantised weights. */
static void test_fp8(void) {
    int colss[2] = {320, 100}; /* vectorised and scalar GEMV paths */
    for (int cc = 0; cc < 2; cc++) {
        const int rows = 200, cols = colss[cc];
        float *w = host_randn((size_t)rows * cols, 0.05f);
        for (int c = 0; c < cols; c++)
            w[c] *= 20.0f; /* one row with a much larger range: per-row scales matter */
        void *wb = dev_rounded(w, (size_t)rows * cols, KCU_BF16);
        kcu_weight W = {.dtype = KCU_FP8,
                        .rows = rows,
                        .cols = cols,
                        .data = dev_alloc((size_t)rows * cols),
                        .scale = dev_alloc(rows * 4)};
        CHECK_EQ_I(kcu_quantize_fp8(K, wb, KCU_BF16, rows, cols, &W), BASE_OK);
        /* dequantised weights on the host */
        float *dq = malloc((size_t)rows * cols * 4), *sc = malloc(rows * 4);
        float *tmp = dev_alloc((size_t)rows * cols * 4);
        CHECK_EQ_I(kcu_convert(K, W.data, KCU_FP8, tmp, KCU_F32, (size_t)rows * cols), BASE_OK);
        get_f32(dq, tmp, (size_t)rows * cols);
        get_f32(sc, W.scale, rows);
        double *wref = malloc((size_t)rows * cols * sizeof(double));
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                dq[(size_t)r * cols + c] *= sc[r];
                wref[(size_t)r * cols + c] = w[(size_t)r * cols + c];
            }
        CHECK_NMSE("fp8 quantisation", dq, wref, (size_t)rows * cols, 2e-3);
        void *scratch = dev_alloc((size_t)rows * cols * 2);
        int ns[2] = {5, 40};
        for (int k = 0; k < 2; k++) {
            int n = ns[k];
            float *x = host_randn((size_t)n * cols, 1.0f);
            void *dx = dev_rounded(x, (size_t)n * cols, KCU_BF16);
            float *dy = dev_alloc((size_t)n * rows * 4), *y = malloc((size_t)n * rows * 4);
            double *ref = malloc((size_t)n * rows * sizeof(double));
            CHECK_EQ_I(kcu_gemm(K, &W, dx, n, dy, 0.0f, scratch), BASE_OK);
            get_f32(y, dy, (size_t)n * rows);
            gemm_ref(dq, x, NULL, rows, cols, n, ref);
            char nm[64];
            snprintf(nm, sizeof nm, "fp8 gemm cols=%d n=%d", cols, n);
            /* the n > 16 path rounds the dequantised weights to BF16 */
            CHECK_NMSE(nm, y, ref, (size_t)n * rows, n <= 16 ? 1e-10 : 3e-5);
            kcu_free(K, dx);
            kcu_free(K, dy);
            free(x);
            free(y);
            free(ref);
        }
        kcu_free(K, scratch);
        kcu_free(K, tmp);
        kcu_free(K, wb);
        kcu_free(K, W.data);
        kcu_free(K, W.scale);
        free(w);
        free(dq);
        free(sc);
        free(wref);
    }
}

/* ---- quantised GGUF blocks (kernels/qgemm.cu) ------------------------------------------ */

static int urand_below(int n) { return (int)(urand() * (double)n); }

static uint32_t q_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* |min| of the sub-block holding value j of a Q4_K/Q5_K block (dmin * m), else 0:
 * the part of a weight that cancels in d*sc*n - dmin*m (the bound's magnitudes). */
static double q_min_part(int t, const uint8_t *blk, int j) {
    if (t != KQ_Q4_K && t != KQ_Q5_K)
        return 0.0;
    int sc, m;
    kq_scale_min_k4(j / 32, blk + 4, &sc, &m);
    return fabs((double)kq_h(blk + 2) * m);
}

/* One type: the dequantise kernel against kq_dq (F32 and BF16 bit for bit), the
 * activation quantiser against the CPU's, the embedding gather, and both GEMM paths
 * against the CPU backend's int8 kernel (eng__qgemm_portable) within derived bounds:
 *
 * direct (the int8 kernel, chunks of KCU_Q_MAXN rows): the device adds the same fp32 terms kq_vd as
 * the CPU (test_qblock checks the terms bit for bit on the host; the x blocks are checked equal
 * here), in another order: |gpu - cpu| <= 2 g_n S, n = sub-blocks per row, g_n = n u / (1 - n u), u
 * = 2^-24, S = sum |term| (both sums are within g_n S of the exact sum of the terms). scratch
 * (dequantise to BF16 + cuBLAS): against the exact sum E = sum_k w_k x_k of the decoded weights w_k
 * and the (BF16-exact) inputs x_k, the device is off by at most sum |bf16(w_k) - w_k| |x_k| (the
 * weight rounding, exact from the data) plus 2 g_K sum |bf16(w_k) x_k| (fp32 accumulation of exact
 * BF16 products in any order; the factor 2 allows tensor-core accumulation that truncates); the CPU
 * is off by sum |w_k| |x_k - a_k| (the int8 activation a_k = d q_k, exact from the data) plus 8 u
 * sum M_k (|x_k| + |a_k|) (the 4 roundings of a term's scale products and the 3 of the decoded
 * weight, each relative to M_k = |w_k| + 2 |dmin m| since d*sc*n and dmin*m can cancel) plus g_n S.
 */
static void quant_case(int t, int rows, int cols) {
    const int qk = kq_block_values(t), bs = kq_block_bytes(t), nsub = cols / 32;
    const size_t rb = (size_t)cols / qk * bs, nval = (size_t)rows * cols;
    const char *tn = eng_dtype_name((eng_dtype)(t - 1));
    uint8_t *hw = malloc(rows * rb);
    qblock_random(t, hw, (size_t)rows * cols / qk, urand_below);
    float *wf = malloc(nval * 4);
    for (size_t i = 0; i < nval; i++)
        wf[i] = kq_dq(t, hw + (i / cols) * rb + (i % cols) / qk * bs, (int)((i % cols) % qk));
    void *dw = dev_alloc(rows * rb);
    CHECK_EQ_I(kcu_upload(K, dw, hw, rows * rb), BASE_OK);

    /* dequantisation, F32 and BF16 */
    float *df = dev_alloc(nval * 4), *got = malloc(nval * 4);
    CHECK_EQ_I(kcu_dequant(K, dw, (kcu_dtype)t, nval, df, KCU_F32), BASE_OK);
    get_f32(got, df, nval);
    int bad = 0;
    for (size_t i = 0; i < nval; i++)
        bad += q_bits(got[i]) != q_bits(wf[i]);
    uint16_t *gb = malloc(nval * 2);
    CHECK_EQ_I(kcu_dequant(K, dw, (kcu_dtype)t, nval, df, KCU_BF16), BASE_OK);
    CHECK_EQ_I(kcu_download(K, gb, df, nval * 2), BASE_OK);
    int bad16 = 0;
    for (size_t i = 0; i < nval; i++)
        bad16 += gb[i] != kq_bf16(wf[i]);
    fprintf(stderr, "  %s dequant: %d/%zu F32 and %d/%zu BF16 values differ from kq_dq\n", tn, bad,
            nval, bad16, nval);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_I(bad16, 0);

    /* embedding gather of a block table (rows as vocabulary) */
    int32_t ids[5] = {0, rows - 1, 3, -1, rows};
    int32_t *dids = dev_alloc(sizeof ids);
    CHECK_EQ_I(kcu_upload(K, dids, ids, sizeof ids), BASE_OK);
    CHECK_EQ_I(kcu_embed(K, dw, (kcu_dtype)t, rows, cols, dids, 5, df), BASE_OK);
    get_f32(got, df, (size_t)5 * cols);
    int bad_e = 0;
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < cols; c++) {
            const float want = ids[r] >= 0 && ids[r] < rows ? wf[(size_t)ids[r] * cols + c] : 0;
            bad_e += q_bits(got[(size_t)r * cols + c]) != q_bits(want);
        }
    CHECK_EQ_I(bad_e, 0);
    kcu_free(K, dids);

    kcu_weight W = {0};
    W.dtype = (kcu_dtype)t;
    W.rows = rows;
    W.cols = cols;
    W.n_parts = 1;
    W.part[0] = (kcu_part){(kcu_dtype)t, rows, dw};
    void *scratch = dev_alloc(kcu_gemm_scratch_bytes(&W) > (size_t)64 * nsub * sizeof(kq_q8a)
                                  ? kcu_gemm_scratch_bytes(&W)
                                  : (size_t)64 * nsub * sizeof(kq_q8a));
    /* direct: 64 rows run as two chunks of KCU_Q_MAXN and 24 */
    const int ns[2][5] = {{1, 7, 33, KCU_Q_MAXN, 64}, {1, 7, 33, 64, 0}};
    for (int pass = 0; pass < 2; pass++)
        for (int kk = 0; kk < 5 && ns[pass][kk]; kk++) {
            const int n = ns[pass][kk];
            const kcu_gemm_path path = pass ? KCU_GEMM_SCRATCH : KCU_GEMM_DIRECT;
            float *x = host_randn((size_t)n * cols, 1.0f);
            void *dx = dev_rounded(x, (size_t)n * cols, KCU_BF16); /* x now BF16-exact */
            eng__q8a *xa = malloc((size_t)n * nsub * sizeof *xa);
            eng__quantize_act_c(x, n * cols, xa);
            if (!pass) { /* the device's x blocks are the CPU's */
                void *dq = dev_alloc((size_t)n * nsub * sizeof(kq_q8a));
                kq_q8a *hq = malloc((size_t)n * nsub * sizeof *hq);
                CHECK_EQ_I(kcu_quantize_act(K, dx, KCU_BF16, n, cols, dq), BASE_OK);
                CHECK_EQ_I(kcu_download(K, hq, dq, (size_t)n * nsub * sizeof *hq), BASE_OK);
                CHECK(memcmp(hq, xa, (size_t)n * nsub * sizeof *hq) == 0);
                kcu_free(K, dq);
                free(hq);
            }
            float *ycpu = malloc((size_t)n * rows * 4), *y = malloc((size_t)n * rows * 4);
            eng__qgemm_portable((eng_dtype)(t - 1), hw, rb, xa, nsub, ycpu, rows, n, rows, cols,
                                false);
            float *dy = dev_alloc((size_t)n * rows * 4);
            CHECK_EQ_I(kcu_gemm_q(K, &W, dx, n, dy, 0.0f, scratch, path), BASE_OK);
            get_f32(y, dy, (size_t)n * rows);
            const double u = 0x1p-24, gn = nsub * u / (1 - nsub * u);
            const double gK = cols * u / (1 - cols * u);
            int over = 0, nonfinite = 0;
            double worst = 0;
            for (int i = 0; i < n; i++)
                for (int r = 0; r < rows; r++) {
                    const uint8_t *wr = hw + (size_t)r * rb;
                    const kq_q8a *a = (const kq_q8a *)(xa + (size_t)i * nsub);
                    double S = 0;
                    for (int j = 0; j < nsub; j++)
                        S += fabs(kq_vd(t, wr + (size_t)(j / (qk / 32)) * bs, j % (qk / 32), &a[j],
                                        0.0f));
                    double bound = 2 * gn * S;
                    if (pass) {
                        double ew = 0, eb = 0, ea = 0, em = 0;
                        for (int c = 0; c < cols; c++) {
                            const float wv = wf[(size_t)r * cols + c], xv = x[(size_t)i * cols + c];
                            const uint16_t b16 = kq_bf16(wv);
                            uint32_t bu = (uint32_t)b16 << 16;
                            float bw;
                            memcpy(&bw, &bu, 4);
                            const double av = (double)a[c / 32].d * a[c / 32].q[c % 32];
                            const double M =
                                fabs(wv) + 2 * q_min_part(t, wr + (size_t)(c / qk) * bs, c % qk);
                            ew += fabs((double)bw - wv) * fabs(xv);
                            eb += fabs((double)bw * xv);
                            ea += fabs(wv) * fabs(xv - av);
                            em += M * (fabs(xv) + fabs(av));
                        }
                        bound = ew + 2 * gK * eb + ea + 8 * u * em + gn * S;
                    }
                    const double yv = y[(size_t)i * rows + r], yc = ycpu[(size_t)i * rows + r];
                    nonfinite += !isfinite(yv);
                    const double e = fabs(yv - yc);
                    over += !(e <= bound);
                    if (bound > 0 && e / bound > worst)
                        worst = e / bound;
                }
            fprintf(stderr, "  %s gemm %s n=%d: %d/%d outputs over the bound, worst %.3f of it\n",
                    tn, pass ? "scratch+cuBLAS" : "direct int8", n, over, n * rows, worst);
            CHECK_EQ_I(over, 0);
            CHECK_EQ_I(nonfinite, 0);
            kcu_free(K, dx);
            kcu_free(K, dy);
            free(x);
            free(xa);
            free(y);
            free(ycpu);
        }
    kcu_free(K, scratch);
    kcu_free(K, df);
    kcu_free(K, dw);
    free(hw);
    free(wf);
    free(got);
    free(gb);
}

/* A stacked matrix of three parts (Q4_K rows, Q6_K rows, BF16 rows, as q/k/v of a
 * Q4_K_M file with a BF16 fallback) on both paths, with beta = 1: each row range
 * against its own single-part GEMM (already checked above), which the stacked call
 * must reproduce exactly (same kernels, same inputs, row offset and stride only). */
static void quant_parts(void) {
    const int cols = 512, r0 = 64, r1 = 32, r2 = 24, rows = r0 + r1 + r2;
    uint8_t *h0 = malloc((size_t)r0 * cols / 256 * 144),
            *h1 = malloc((size_t)r1 * cols / 256 * 210);
    qblock_random(KQ_Q4_K, h0, (size_t)r0 * cols / 256, urand_below);
    qblock_random(KQ_Q6_K, h1, (size_t)r1 * cols / 256, urand_below);
    float *w2 = host_randn((size_t)r2 * cols, 0.05f);
    kcu_weight W = {0};
    W.dtype = KCU_Q4_K;
    W.rows = rows;
    W.cols = cols;
    W.n_parts = 3;
    W.part[0] = (kcu_part){KCU_Q4_K, r0, dev_alloc((size_t)r0 * cols / 256 * 144)};
    W.part[1] = (kcu_part){KCU_Q6_K, r1, dev_alloc((size_t)r1 * cols / 256 * 210)};
    W.part[2] = (kcu_part){KCU_BF16, r2, dev_rounded(w2, (size_t)r2 * cols, KCU_BF16)};
    CHECK_EQ_I(kcu_upload(K, W.part[0].data, h0, (size_t)r0 * cols / 256 * 144), BASE_OK);
    CHECK_EQ_I(kcu_upload(K, W.part[1].data, h1, (size_t)r1 * cols / 256 * 210), BASE_OK);
    void *scratch = dev_alloc(kcu_gemm_scratch_bytes(&W));
    const int ns[2] = {9, 57};
    for (int k = 0; k < 2; k++) {
        const int n = ns[k];
        float *x = host_randn((size_t)n * cols, 1.0f), *y0 = host_randn((size_t)n * rows, 1.0f);
        void *dx = dev_rounded(x, (size_t)n * cols, KCU_BF16);
        float *dy = dev_f32(y0, (size_t)n * rows), *y = malloc((size_t)n * rows * 4);
        CHECK_EQ_I(kcu_gemm(K, &W, dx, n, dy, 1.0f, scratch), BASE_OK);
        get_f32(y, dy, (size_t)n * rows);
        int bad = 0;
        for (int p = 0; p < 3; p++) {
            kcu_weight S = {0};
            S.dtype = W.part[p].dtype;
            S.rows = W.part[p].rows;
            S.cols = cols;
            S.n_parts = 1;
            S.part[0] = W.part[p];
            const int off = p == 0 ? 0 : p == 1 ? r0 : r0 + r1;
            float *hs = malloc((size_t)n * S.rows * 4);
            for (int i = 0; i < n; i++)
                memcpy(hs + (size_t)i * S.rows, y0 + (size_t)i * rows + off, (size_t)S.rows * 4);
            float *ds = dev_f32(hs, (size_t)n * S.rows);
            CHECK_EQ_I(kcu_gemm(K, &S, dx, n, ds, 1.0f, scratch), BASE_OK);
            get_f32(hs, ds, (size_t)n * S.rows);
            for (int i = 0; i < n; i++)
                for (int r = 0; r < S.rows; r++)
                    bad +=
                        q_bits(hs[(size_t)i * S.rows + r]) != q_bits(y[(size_t)i * rows + off + r]);
            kcu_free(K, ds);
            free(hs);
        }
        fprintf(stderr, "  stacked Q4_K+Q6_K+BF16 parts n=%d: %d outputs differ from the parts\n",
                n, bad);
        CHECK_EQ_I(bad, 0);
        kcu_free(K, dx);
        kcu_free(K, dy);
        free(x);
        free(y0);
        free(y);
    }
    for (int p = 0; p < 3; p++)
        kcu_free(K, W.part[p].data);
    kcu_free(K, scratch);
    free(h0);
    free(h1);
    free(w2);
}

/* Synthetic blocks (bench_cuda) decode to finite values of at most about 0.03-0.12. */
static void quant_fill(void) {
    for (int t = KQ_Q8_0; t <= KQ_Q6_K; t++) {
        const size_t n = 4096;
        void *d = dev_alloc(n / kq_block_values(t) * kq_block_bytes(t));
        float *df = dev_alloc(n * 4), *h = malloc(n * 4);
        CHECK_EQ_I(kcu_fill_random_blocks(K, d, (kcu_dtype)t, n, 42), BASE_OK);
        CHECK_EQ_I(kcu_dequant(K, d, (kcu_dtype)t, n, df, KCU_F32), BASE_OK);
        get_f32(h, df, n);
        double amax = 0;
        int nf = 0;
        for (size_t i = 0; i < n; i++) {
            nf += !isfinite(h[i]);
            amax = fabs(h[i]) > amax ? fabs(h[i]) : amax;
        }
        CHECK_EQ_I(nf, 0);
        CHECK(amax > 0.005 && amax < 0.15); /* Q5_K: up to 2^-14 * 63 * 31 = 0.12 */
        kcu_free(K, d);
        kcu_free(K, df);
        free(h);
    }
}

static void test_quant(void) {
    for (int t = KQ_Q8_0; t <= KQ_Q6_K; t++)
        quant_case(t, 96, 1024);
    quant_case(KQ_Q4_K, 40, 3584); /* a 7B row width: 112 sub-blocks, lanes uneven */
    quant_parts();
    quant_fill();
}

static void test_fill_random(void) {
    const size_t n = 100000;
    void *a = dev_alloc(n * 2), *b = dev_alloc(n * 2);
    float *fa = dev_alloc(n * 4), *fb = dev_alloc(n * 4);
    CHECK_EQ_I(kcu_fill_random(K, a, KCU_BF16, n, 0.5f, 42), BASE_OK);
    CHECK_EQ_I(kcu_fill_random(K, b, KCU_BF16, n, 0.5f, 42), BASE_OK);
    CHECK_EQ_I(kcu_convert(K, a, KCU_BF16, fa, KCU_F32, n), BASE_OK);
    CHECK_EQ_I(kcu_convert(K, b, KCU_BF16, fb, KCU_F32, n), BASE_OK);
    float *ha = malloc(n * 4), *hb = malloc(n * 4);
    get_f32(ha, fa, n);
    get_f32(hb, fb, n);
    CHECK(memcmp(ha, hb, n * 4) == 0); /* deterministic */
    double mean = 0, mabs = 0;
    int out = 0;
    for (size_t i = 0; i < n; i++) {
        mean += ha[i];
        mabs += fabs(ha[i]);
        out += fabsf(ha[i]) > 0.5f;
    }
    mean /= n;
    mabs /= n;
    CHECK_EQ_I(out, 0);
    CHECK(fabs(mean) < 0.01);
    CHECK(fabs(mabs - 0.25) < 0.01); /* uniform on [-0.5, 0.5] */
    kcu_free(K, a);
    kcu_free(K, b);
    kcu_free(K, fa);
    kcu_free(K, fb);
    free(ha);
    free(hb);
}

/* ---- vocabulary reductions: the CPU backend's documented semantics ------------- */

static int cmp_desc_l;
static const float *cmp_l;

static int cmp_desc(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (cmp_l[x] != cmp_l[y])
        return cmp_l[x] > cmp_l[y] ? -1 : 1;
    return x < y ? -1 : 1;
}

static void ref_reduce(const float *raw, int V, const kcu_sample_params *p, const kcu_bias *bias,
                       uint32_t pos, kcu_row_result *r) {
    float *l = malloc((size_t)V * 4);
    double *e = malloc((size_t)V * sizeof(double));
    memcpy(l, raw, (size_t)V * 4);
    for (int i = 0; i < p->n_bias; i++)
        l[bias[i].id] += bias[i].bias;
    int32_t token = 0;
    if (p->pick == KCU_PICK_GUMBEL) {
        double bv = -INFINITY;
        for (int v = 0; v < V; v++) {
            if (l[v] == -INFINITY)
                continue;
            double x = l[v];
            if (p->temperature > 0)
                x += p->temperature * -log(-log(eng_noise_uniform(p->seed, p->step, pos, v)));
            if (x > bv) {
                bv = x;
                token = v;
            }
        }
    } else {
        if (p->temperature > 0)
            for (int v = 0; v < V; v++)
                l[v] /= p->temperature;
        if (p->top_p < 1.0f) {
            float mx = -INFINITY;
            for (int v = 0; v < V; v++)
                mx = fmaxf(mx, l[v]);
            double z = 0;
            for (int v = 0; v < V; v++)
                z += e[v] = l[v] == -INFINITY ? 0 : exp((double)l[v] - mx);
            int32_t *ix = malloc((size_t)V * 4);
            for (int v = 0; v < V; v++)
                ix[v] = v;
            cmp_l = l;
            qsort(ix, (size_t)V, 4, cmp_desc);
            double cum = 0;
            int keep = V;
            for (int k = 0; k < V; k++) {
                cum += e[ix[k]];
                if (cum > p->top_p * z) {
                    keep = k + 1;
                    break;
                }
            }
            for (int k = keep; k < V; k++)
                l[ix[k]] = -INFINITY;
            free(ix);
        }
        if (p->top_k > 0 && p->top_k < V) {
            float *s = malloc((size_t)V * 4);
            memcpy(s, l, (size_t)V * 4);
            int32_t *ix = malloc((size_t)V * 4);
            for (int v = 0; v < V; v++)
                ix[v] = v;
            cmp_l = s;
            qsort(ix, (size_t)V, 4, cmp_desc);
            float kth = s[ix[p->top_k - 1]];
            for (int v = 0; v < V; v++)
                if (l[v] < kth)
                    l[v] = -INFINITY;
            free(ix);
            free(s);
        }
    }
    float mx = -INFINITY;
    for (int v = 0; v < V; v++)
        mx = fmaxf(mx, l[v]);
    double z = 0;
    for (int v = 0; v < V; v++)
        z += e[v] = l[v] == -INFINITY ? 0 : (float)exp((double)l[v] - mx);
    if (p->pick == KCU_PICK_DREAM) {
        if (p->temperature > 0) {
            double target = eng_noise_uniform(p->seed, p->step, pos, 0) * z, cum = 0;
            token = -1;
            for (int v = 0; v < V; v++) {
                if (e[v] <= 0)
                    continue;
                cum += e[v];
                token = v;
                if (cum > target)
                    break;
            }
            if (token < 0)
                token = 0;
        } else {
            double best = -1;
            for (int v = 0; v < V; v++)
                if (e[v] > best) {
                    best = e[v];
                    token = v;
                }
        }
    }
    double t1 = -1, t2 = -1, ent = 0;
    for (int v = 0; v < V; v++) {
        double pv = e[v] / z;
        if (pv > t1) {
            t2 = t1;
            t1 = pv;
        } else if (pv > t2) {
            t2 = pv;
        }
        if (pv > 0)
            ent += pv * log(pv + 1e-10);
    }
    r->token = token;
    r->prob = (float)(e[token] / z);
    r->margin = (float)(t1 - (t2 < 0 ? 0 : t2));
    r->neg_entropy = (float)ent;
    (void)cmp_desc_l;
    free(l);
    free(e);
}

static void vocab_case(const char *name, int V, int n, float spread, kcu_sample_params prm,
                       const kcu_bias *bias) {
    float *lg = host_randn((size_t)n * V, spread);
    /* a near-certain row and a flat row */
    lg[5] += 40.0f;
    if (n > 1)
        for (int v = 0; v < V; v++)
            lg[V + v] *= 0.01f;
    float *dl = dev_f32(lg, (size_t)n * V);
    kcu_sample_params *dp = dev_alloc(sizeof prm);
    CHECK_EQ_I(kcu_upload(K, dp, &prm, sizeof prm), BASE_OK);
    kcu_bias *db = dev_alloc(8 * sizeof(kcu_bias) + 1);
    if (prm.n_bias)
        CHECK_EQ_I(kcu_upload(K, db, bias, (size_t)prm.n_bias * sizeof(kcu_bias)), BASE_OK);
    uint32_t *np = malloc((size_t)n * 4);
    for (int i = 0; i < n; i++)
        np[i] = 1000u + 3u * (uint32_t)i;
    uint32_t *dnp = dev_alloc((size_t)n * 4);
    CHECK_EQ_I(kcu_upload(K, dnp, np, (size_t)n * 4), BASE_OK);
    kcu_row_result *dr = dev_alloc((size_t)n * sizeof(kcu_row_result));
    kcu_row_result *got = malloc((size_t)n * sizeof(kcu_row_result));
    CHECK_EQ_I(kcu_vocab_reduce(K, dl, n, V, dp, db, dnp, dr), BASE_OK);
    CHECK_EQ_I(kcu_download(K, got, dr, (size_t)n * sizeof(kcu_row_result)), BASE_OK);
    int bad_tok = 0;
    double worst = 0;
    for (int i = 0; i < n; i++) {
        kcu_row_result want;
        ref_reduce(lg + (size_t)i * V, V, &prm, bias, np[i], &want);
        bad_tok += got[i].token != want.token;
        if (got[i].token != want.token)
            fprintf(stderr, "  %s row %d: token %d, want %d (p %g vs %g)\n", name, i, got[i].token,
                    want.token, got[i].prob, want.prob);
        double d1 = fabs(got[i].prob - want.prob), d2 = fabs(got[i].margin - want.margin);
        double d3 = fabs(got[i].neg_entropy - want.neg_entropy) / (1.0 + fabs(want.neg_entropy));
        worst = fmax(worst, fmax(d1, fmax(d2, d3)));
    }
    fprintf(stderr, "  %-28s tokens %d/%d equal, worst stat error %.2e\n", name, n - bad_tok, n,
            worst);
    CHECK_EQ_I(bad_tok, 0);
    CHECK(worst < 1e-4);
    kcu_free(K, dl);
    kcu_free(K, dp);
    kcu_free(K, db);
    kcu_free(K, dnp);
    kcu_free(K, dr);
    free(lg);
    free(np);
    free(got);
}

static void test_vocab(void) {
    kcu_sample_params p;
    memset(&p, 0, sizeof p);
    p.top_p = 1.0f;
    p.seed = 99;
    p.step = 3;
    p.pick = KCU_PICK_DREAM;
    vocab_case("dream greedy V=1000", 1000, 6, 2.0f, p, NULL);
    vocab_case("dream greedy V=152064", 152064, 4, 3.0f, p, NULL);
    p.temperature = 0.7f;
    vocab_case("dream T=0.7", 152064, 4, 3.0f, p, NULL);
    p.top_p = 0.9f;
    vocab_case("dream T=0.7 top_p=0.9", 152064, 4, 3.0f, p, NULL);
    p.top_k = 50;
    vocab_case("dream T=0.7 p=0.9 k=50", 152064, 4, 3.0f, p, NULL);
    p.top_p = 1.0f;
    p.top_k = 3;
    p.temperature = 0.0f;
    vocab_case("dream greedy top_k=3", 5000, 4, 2.0f, p, NULL);
    p.top_k = 0;
    p.pick = KCU_PICK_GUMBEL;
    vocab_case("gumbel T=0", 126464, 4, 3.0f, p, NULL);
    p.temperature = 1.0f;
    vocab_case("gumbel T=1", 126464, 4, 3.0f, p, NULL);
    /* logit bias: forbid the planted winner of row 0 and boost another id */
    kcu_bias bias[2] = {{5, -INFINITY}, {77, 2.5f}};
    p.pick = KCU_PICK_DREAM;
    p.temperature = 0.0f;
    p.n_bias = 2;
    vocab_case("dream greedy + bias", 3000, 3, 2.0f, p, bias);

    /* every id forbidden: token 0 and zero statistics, as the CPU */
    float lg[4] = {1, 2, 3, 4};
    float *dl = dev_f32(lg, 4);
    kcu_bias all[4] = {{0, -INFINITY}, {1, -INFINITY}, {2, -INFINITY}, {3, -INFINITY}};
    kcu_bias *db = dev_alloc(sizeof all);
    CHECK_EQ_I(kcu_upload(K, db, all, sizeof all), BASE_OK);
    p.n_bias = 4;
    kcu_sample_params *dp = dev_alloc(sizeof p);
    CHECK_EQ_I(kcu_upload(K, dp, &p, sizeof p), BASE_OK);
    kcu_row_result *dr = dev_alloc(sizeof(kcu_row_result)), r;
    CHECK_EQ_I(kcu_vocab_reduce(K, dl, 1, 4, dp, db, NULL, dr), BASE_OK);
    CHECK_EQ_I(kcu_download(K, &r, dr, sizeof r), BASE_OK);
    CHECK_EQ_I(r.token, 0);
    CHECK(r.prob == 0.0f && r.margin == 0.0f && r.neg_entropy == 0.0f);
    kcu_free(K, dl);
    kcu_free(K, db);
    kcu_free(K, dp);
    kcu_free(K, dr);
}

/* A captured graph replays with new pinned inputs (the step's pattern). */
static void test_graph(void) {
    const int n = 1000;
    float *pin_in = NULL, *pin_out = NULL;
    CHECK_EQ_I(kcu_host_alloc(K, n * 4, (void **)&pin_in), BASE_OK);
    CHECK_EQ_I(kcu_host_alloc(K, n * 4, (void **)&pin_out), BASE_OK);
    float *dx = dev_alloc(n * 4), *dy = dev_alloc(n * 4);
    CHECK_EQ_I(kcu_memset(K, dy, 0, n * 4), BASE_OK);
    kcu_graph *g = NULL;
    CHECK_EQ_I(kcu_graph_begin(K), BASE_OK);
    CHECK_EQ_I(kcu_upload_async(K, dx, pin_in, n * 4), BASE_OK);
    CHECK_EQ_I(kcu_add(K, dy, dx, n), BASE_OK);
    CHECK_EQ_I(kcu_download_async(K, pin_out, dy, n * 4), BASE_OK);
    CHECK_EQ_I(kcu_graph_end(K, &g), BASE_OK);
    CHECK(g != NULL);
    if (!g)
        return;
    for (int it = 1; it <= 3; it++) {
        for (int i = 0; i < n; i++)
            pin_in[i] = (float)(i * it);
        CHECK_EQ_I(kcu_graph_launch(K, g), BASE_OK);
        CHECK_EQ_I(kcu_sync(K), BASE_OK);
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += pin_out[i] != (float)(i * 6); /* i*1 + i*2 + i*3 */
    CHECK_EQ_I(bad, 0);
    kcu_graph_free(g);
    kcu_free(K, dx);
    kcu_free(K, dy);
    kcu_host_free(K, pin_in);
    kcu_host_free(K, pin_out);
}

/* An invalid launch is reported with file and line, and the context survives. */
static void test_errors(void) {
    kcu_attn_shape s = {1, 10, 10, 0, 10, 4, 4, 512,
                        /* head_dim too large */};
    base_status st = kcu_attention(K, &s, NULL, 0, NULL, NULL, NULL, NULL, NULL, KCU_F32);
    CHECK_EQ_I(st, BASE_ERR_UNSUPPORTED);
    CHECK(strstr(kcu_ctx_error(K), "attn.cu") != NULL);
    CHECK(!kcu_ctx_lost(K));
    void *p = NULL;
    st = kcu_malloc(K, (size_t)1 << 50, &p); /* 1 PiB */
    CHECK_EQ_I(st, BASE_ERR_NOMEM);
    CHECK(strstr(kcu_ctx_error(K), "ctx.cu") != NULL);
    CHECK(!kcu_ctx_lost(K));
    CHECK_EQ_I(kcu_sync(K), BASE_OK);
}

static void test_bandwidth(void) {
    double bw = 0, ms = 0;
    CHECK_EQ_I(kcu_measure_d2d_bandwidth(K, 64u << 20, 10, &bw), BASE_OK);
    fprintf(stderr, "  d2d copy bandwidth %.1f GB/s\n", bw / 1e9);
    CHECK(bw > 1e9);
    CHECK_EQ_I(kcu_timer_start(K), BASE_OK);
    CHECK_EQ_I(kcu_timer_stop(K, &ms), BASE_OK);
    CHECK(ms >= 0);
}

int main(void) {
    kcu_device_info di;
    char msg[256];
    if (kcu_device_query(&di, msg, sizeof msg) != BASE_OK) {
        fprintf(stderr, "test_gpu_kernels: skipped: %s\n", msg);
        return 77;
    }
    fprintf(stderr, "test_gpu_kernels: %s\n", msg);
    K = kcu_ctx_new(0, msg, sizeof msg);
    if (!K) {
        fprintf(stderr, "test_gpu_kernels: kcu_ctx_new: %s\n", msg);
        return 1;
    }
    test_noise();
    test_embed();
    test_rmsnorm();
    test_rope();
    test_swiglu_adds_gather();
    test_positions();
    test_attention();
    test_gemm();
    test_fp8();
    test_quant();
    test_fill_random();
    test_vocab();
    test_graph();
    test_errors();
    test_bandwidth();
    kcu_ctx_free(K);
    return check_finish("test_gpu_kernels");
}
