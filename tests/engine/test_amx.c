/* The BF16 matmuls on Intel AMX (engine/cpu/amx.c), where the CPU and the OS
 * allow them (exit 77 elsewhere: nothing here can run without the tile unit).
 *
 *   (a) The split of each f32 activation into three bf16 parts is lossless:
 *       with one-hot weight rows (W[n][k] = 1 for k = n) every output equals
 *       its input bit for bit, for values with full 24-bit mantissas, both
 *       signs and exponents from 2^-100 to 2^100.
 *   (b) Against a double reference on random bf16 weights: products of a part
 *       and a weight are exact in f32, and each output is a sum of 3K of
 *       them rounded once per addition, so |y - ref| <= 3K u S with u = 2^-24
 *       and S = sum_k |x_k w_k| (plus one rounding of the first Y when
 *       accumulating). The test allows 2x. Shapes: one row, a hole step's
 *       17 and 34 rows, more than the five blocks of one pass (the K-blocked
 *       path, K = 2048), N of one block to several, K from 32 to 4864;
 *       accumulate on and off; rows and columns outside Y untouched.
 *   (c) Through the backend on a tiny BF16 checkpoint whose FFN width (200)
 *       leaves a tail of 8 weight rows for the FMA kernel and whose down
 *       projection (K = 200) stays off AMX: logits against the scalar
 *       reference and against the same machine with INFILLD_CPU_AMX=0,
 *       for 37 and 260 positions (more than one packed slice of 240 rows);
 *       the device names AMX only for BF16 weights and only when it is on.
 *   (d) Q8_0 weights on the int8 tile unit (below), where the CPU has AMX-INT8. */
#include "tmodel.h"

#include "check.h"
#include "cpu_impl.h"
#include "engine.h"
#include "tforward.h"
#include "xorshift.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) { return (uint32_t)(xorshift64(&rng) >> 16); }

static float bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A float with a random 23-bit mantissa, sign and exponent in [lo, hi]. */
static float rand_full(int lo, int hi) {
    uint32_t e = (uint32_t)(127 + lo + (int)(rnd() % (uint32_t)(hi - lo + 1)));
    uint32_t u = ((rnd() & 1u) << 31) | (e << 23) | ((rnd() << 7 ^ rnd()) & 0x7FFFFFu);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t *pack(const float *X, int ldx, int M, int K) {
    uint16_t *xp = aligned_alloc(64, (eng__amx_xpack_elems(M, K) * 2 + 63) / 64 * 64);
    for (int b = 0; b < (M + 15) / 16; b++) /* in two column ranges, as the backend may */
        for (int h = 0; h < 2; h++)
            eng__amx_pack_x(X, ldx, M, K, b, K / 32 * h / 2, K / 32 * (h + 1) / 2, xp);
    return xp;
}

static void test_split_exact(void) {
    enum { M = 19, N = 64, K = 64 };
    float *X = malloc(sizeof(float) * M * K), *Y = malloc(sizeof(float) * M * N);
    uint16_t *W = calloc((size_t)N * K, 2);
    for (int i = 0; i < M * K; i++)
        X[i] = rand_full(-100, 100);
    for (int n = 0; n < N; n++)
        W[(size_t)n * K + n] = 0x3F80; /* 1.0 */
    uint16_t *xp = pack(X, K, M, K);
    eng__amx_gemm(W, K, xp, M, Y, N, N, false);
    int same = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++)
            same += memcmp(&Y[m * N + n], &X[m * K + n], 4) == 0;
    CHECK_EQ_I(same, M * N);
    free(X);
    free(Y);
    free(W);
    free(xp);
}

/* Entries of Y (M + 1 rows, ldy apart) outside [0, M) x [0, N) that differ
 * from Y0: a kernel must write nothing there. */
static int outside_changed(const float *Y, const float *Y0, int M, int N, int ldy) {
    int changed = 0;
    for (int m = 0; m <= M; m++)
        for (int n = 0; n < ldy; n++)
            if (m == M || n >= N)
                changed += Y[(size_t)m * ldy + n] != Y0[(size_t)m * ldy + n];
    return changed;
}

static void test_shape(int M, int N, int K, bool acc) {
    const int ldy = N + 3;
    float *X = malloc(sizeof(float) * (size_t)M * K);
    float *Y = malloc(sizeof(float) * (size_t)(M + 1) * ldy);
    float *Y0 = malloc(sizeof(float) * (size_t)(M + 1) * ldy);
    uint16_t *W = malloc((size_t)N * K * 2);
    for (size_t i = 0; i < (size_t)M * K; i++)
        X[i] = i % 97 == 5 ? 0.0f : rand_full(-8, 3);
    for (size_t i = 0; i < (size_t)N * K; i++) {
        float f = rand_full(-12, -1);
        uint32_t u;
        memcpy(&u, &f, 4);
        W[i] = (uint16_t)(u >> 16);
    }
    for (size_t i = 0; i < (size_t)(M + 1) * ldy; i++)
        Y0[i] = (float)(rnd() % 2001) / 1000.0f - 1.0f;
    memcpy(Y, Y0, sizeof(float) * (size_t)(M + 1) * ldy);
    uint16_t *xp = pack(X, K, M, K);
    eng__amx_gemm(W, K, xp, M, Y, ldy, N, acc);
    double worst = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            const size_t at = (size_t)m * ldy + n;
            double ref = acc ? Y0[at] : 0, S = acc ? fabs(Y0[at]) : 0;
            for (int k = 0; k < K; k++) {
                const double p = (double)X[(size_t)m * K + k] * bf16_to_f32(W[(size_t)n * K + k]);
                ref += p;
                S += fabs(p);
            }
            const double bound = (3.0 * K + 1) * 0x1p-24 * S + 1e-30;
            worst = fmax(worst, fabs(Y[at] - ref) / bound);
        }
    fprintf(stderr, "amx %3d x %3d x %4d acc %d: error %.3f of the bound\n", M, N, K, acc, worst);
    CHECK(worst <= 2.0);
    CHECK_EQ_I(outside_changed(Y, Y0, M, N, ldy), 0);
    free(X);
    free(Y);
    free(Y0);
    free(W);
    free(xp);
}

/* (d) Q8_0 weights on the int8 tile unit (eng__amx_q8_gemm) against the
 * same block terms in double: each term d_w d_x i_b has at most three
 * roundings (the scale product, the int -> float conversion is exact here,
 * the product) and the sum of nb terms nb more, so |y - ref| <= (nb + 3) u S
 * with S = sum_b |d_w d_x| sum_k |q_w q_x|; the test allows 2x. */
static void test_q8_shape(int M, int N, int K, bool acc) {
    const int nb = K / 32, ldy = N + 5;
    const size_t rb = (size_t)nb * 34;
    uint8_t *W = malloc(rb * (size_t)N);
    for (int n = 0; n < N; n++)
        for (int b = 0; b < nb; b++) {
            uint8_t *blk = W + (size_t)n * rb + (size_t)b * 34;
            const uint16_t h = (uint16_t)(0x1C00 + rnd() % 0x1000); /* f16 in [2^-8, 2^-4) */
            memcpy(blk, &h, 2);
            for (int i = 0; i < 32; i++)
                blk[2 + i] = (uint8_t)rnd(); /* -128 included */
        }
    float *X = malloc(sizeof(float) * (size_t)M * K);
    for (size_t i = 0; i < (size_t)M * K; i++)
        X[i] = i % 61 == 7 ? 0.0f : rand_full(-6, 4);
    eng__q8a *xq = malloc(sizeof *xq * (size_t)M * nb);
    for (int m = 0; m < M; m++)
        eng__quantize_act(X + (size_t)m * K, K, xq + (size_t)m * nb);
    int8_t *xp = aligned_alloc(64, (size_t)((M + 15) / 16) * nb * 512);
    memset(xp, 0x5A, (size_t)((M + 15) / 16) * nb * 512); /* padding rows hold garbage */
    for (int m = 0; m < M; m++)
        eng__amx_q8_pack_row(xq + (size_t)m * nb, m, nb, xp);
    float *Y = malloc(sizeof(float) * (size_t)(M + 1) * ldy);
    float *Y0 = malloc(sizeof(float) * (size_t)(M + 1) * ldy);
    for (size_t i = 0; i < (size_t)(M + 1) * ldy; i++)
        Y0[i] = (float)(rnd() % 2001) / 100.0f - 10.0f;
    memcpy(Y, Y0, sizeof(float) * (size_t)(M + 1) * ldy);
    eng__amx_q8_gemm(W, rb, xp, xq, nb, M, Y, ldy, N, K, acc);
    double worst = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            const size_t at = (size_t)m * ldy + n;
            double ref = acc ? Y0[at] : 0, S = acc ? fabs(Y0[at]) : 0;
            for (int b = 0; b < nb; b++) {
                const uint8_t *blk = W + (size_t)n * rb + (size_t)b * 34;
                uint16_t h;
                memcpy(&h, blk, 2);
                const double dw = eng__f16_to_f32(h), dx = xq[(size_t)m * nb + b].d;
                long long isum = 0, iabs = 0;
                for (int i = 0; i < 32; i++) {
                    const int p = (int8_t)blk[2 + i] * xq[(size_t)m * nb + b].q[i];
                    isum += p;
                    iabs += p < 0 ? -p : p;
                }
                ref += dw * dx * (double)isum;
                S += fabs(dw * dx) * (double)iabs;
            }
            worst = fmax(worst, fabs(Y[at] - ref) / ((nb + 3) * 0x1p-24 * S + 1e-30));
        }
    fprintf(stderr, "amx q8_0 %3d x %3d x %4d acc %d: error %.3f of the bound\n", M, N, K, acc,
            worst);
    CHECK(worst <= 2.0);
    CHECK_EQ_I(outside_changed(Y, Y0, M, N, ldy), 0);
    free(W);
    free(X);
    free(xq);
    free(xp);
    free(Y);
    free(Y0);
}

/* ---- through the backend ------------------------------------------------------------ */

static char *g_root;

static eng_model *load(const char *dir, bool ref, bool amx) {
    if (ref)
        setenv("INFILLD_CPU_KERNEL", "reference", 1);
    if (!amx)
        setenv("INFILLD_CPU_AMX", "0", 1);
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.device = ENG_DEVICE_CPU;
    o.n_threads = 2;
    eng_error err = {0};
    eng_model *m = eng_model_load(dir, &o, &err);
    unsetenv("INFILLD_CPU_KERNEL");
    unsetenv("INFILLD_CPU_AMX");
    if (!m)
        fprintf(stderr, "load %s: %s\n", dir, err.msg);
    CHECK(m != NULL);
    return m;
}

static void test_backend(bool bf16) {
    tm_spec s = tm_default(TM_DREAM);
    s.bf16 = bf16;
    s.ff = 200;
    s.seed = 31 + bf16;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/m%d", g_root, bf16);
    CHECK_EQ_I(tm_write(dir, &s), 0);
    eng_model *ref = load(dir, true, true), *on = load(dir, false, true),
              *off = load(dir, false, false);
    if (!ref || !on || !off)
        goto done;
    CHECK((strstr(eng_model_device_desc(on), "BF16 on AMX") != NULL) == bf16);
    CHECK(strstr(eng_model_device_desc(off), "AMX") == NULL);
    CHECK(strstr(eng_model_device_desc(ref), "AMX") == NULL);
    static const int lens[] = {37, 260};
    for (int i = 0; i < 2; i++) {
        const int len = lens[i];
        int32_t *tok = malloc(sizeof(int32_t) * (size_t)len);
        for (int t = 0; t < len; t++)
            tok[t] = (int32_t)(rnd() % (uint32_t)s.vocab);
        float *lr = tf_forward_all(ref, tok, NULL, 1, len),
              *lon = tf_forward_all(on, tok, NULL, 1, len),
              *loff = tf_forward_all(off, tok, NULL, 1, len);
        const double e_ref = tf_row_err(lon, lr, len, s.vocab),
                     e_off = tf_row_err(lon, loff, len, s.vocab);
        fprintf(stderr, "backend %s, %d positions [%s]: vs reference %.3g, vs AMX off %.3g\n",
                bf16 ? "bf16" : "f32", len, eng_model_device_desc(on), e_ref, e_off);
        CHECK(e_ref <= 1e-5);
        CHECK(e_off <= 1e-5);
        free(tok);
        free(lr);
        free(lon);
        free(loff);
    }
done:
    eng_model_free(ref);
    eng_model_free(on);
    eng_model_free(off);
}

int main(void) {
    if (!eng__amx_available()) {
        fprintf(stderr, "skipped: no AMX-BF16 tile unit on this CPU (or not granted by the OS)\n");
        return 77;
    }
    setenv("INFILLD_CPU_AMX", "0", 1);
    CHECK(!eng__amx_available());
    unsetenv("INFILLD_CPU_AMX");
    test_split_exact();
    static const int shapes[][3] = {{1, 16, 32},     {17, 48, 896}, {34, 160, 896}, {34, 64, 4864},
                                    {100, 48, 2048}, {81, 16, 64},  {34, 32, 96}};
    for (size_t i = 0; i < BASE_ARRAY_LEN(shapes); i++)
        for (int acc = 0; acc < 2; acc++)
            test_shape(shapes[i][0], shapes[i][1], shapes[i][2], acc);
    if (eng__amx_int8_available()) {
        static const int q8[][3] = {{1, 16, 32}, {17, 48, 896}, {34, 64, 4864}, {81, 32, 64}};
        for (size_t i = 0; i < BASE_ARRAY_LEN(q8); i++)
            for (int acc = 0; acc < 2; acc++)
                test_q8_shape(q8[i][0], q8[i][1], q8[i][2], acc);
    }
    if (!tm_have_tokenizer()) {
        fprintf(stderr, "no Qwen tokenizer.json (run ./bootstrap.sh): backend checks left out\n");
        CHECK(false);
    } else {
        g_root = tm_tmpdir();
        CHECK(g_root != NULL);
        if (g_root) {
            base_log_set_level(BASE_LOG_WARN);
            test_backend(true);
            test_backend(false);
            tm_rmrf(g_root);
            free(g_root);
        }
    }
    return check_finish("test_amx");
}
