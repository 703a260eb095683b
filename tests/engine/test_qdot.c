/* The int8-activation kernels on quantised weight blocks (engine/cpu/qdot.c),
 * every path this CPU runs (portable, AVX2 pinned through
 * eng__kernels_named even on an AVX-512 machine, AVX-512's table), against
 * float references built from the dequantiser (cpu/quant.c, bit-exact to
 * ggml's and checked by test_gguf and the golden GGUF tests):
 *
 *   (a) the same quantised activations, dequantised, times the dequantised
 *       weights in double: the kernel computes every block's integer dot
 *       exactly and rounds only the float scale products and the float sum.
 *       Each block term carries at most 3 roundings (scale product, the int
 *       -> float conversion above 2^24, the term product), and a sum of nb
 *       terms at most nb more, so |y - ref| <= (nb + 3) u S with u = 2^-24
 *       and S = sum_i (|w_i| + |o_i|) |xq_i|, where o_i is the block's offset
 *       part (-dmin m, -8 d, -32 d sc: the value a zero quant decodes to),
 *       which bounds the magnitude of each partial term. The test allows 2x.
 *   (b) the float activations times the dequantised weights: the activation
 *       rounding is at most d_a / 2 per element, so |y - ref| <=
 *       sum_b d_a,b / 2 sum_{i in b} |w_i| + the bound of (a).
 * Weight blocks are random bytes with sane f16 scales (every quant value and
 * 6-bit scale occurs, Q8_0's -128 too); activations are normal with outliers
 * and an all-zero block. Shapes: 1, 3 and 33 rows (a hole step), several
 * column counts, accumulate on and off. */
#include "check.h"
#include "cpu_impl.h"
#include "xorshift.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) { return (uint32_t)(xorshift64(&rng) >> 16); }
static double unif(void) { return (rnd() % 1000000 + 0.5) / 1e6; }
static double gauss(void) {
    double u = (rnd() % 1000000 + 0.5) / 1e6, v = (rnd() % 1000000 + 0.5) / 1e6;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* f16 bits of a positive normal value (truncating the mantissa). */
static uint16_t f16_bits(float x) {
    union {
        float f;
        uint32_t u;
    } v = {x};
    int e = (int)((v.u >> 23) & 0xFF) - 127 + 15;
    if (e < 1) /* below f16's normal range: its smallest normal */
        return 0x0400;
    if (e > 30)
        return 0x7BFF;
    return (uint16_t)(((unsigned)e << 10) | ((v.u >> 13) & 0x3FF));
}
static void put_f16(uint8_t *p, float x) {
    uint16_t h = f16_bits(x);
    memcpy(p, &h, 2);
}

typedef struct qtype {
    eng_dtype t;
    int qk, bs;
    int q0, q1; /* the byte range of the quant values (zeroed for the offsets) */
} qtype;

static const qtype TYPES[] = {
    {ENG_Q8_0, 32, 34, 2, 34},     {ENG_Q4_0, 32, 18, 2, 18},    {ENG_Q4_K, 256, 144, 16, 144},
    {ENG_Q5_K, 256, 176, 16, 176}, {ENG_Q6_K, 256, 210, 0, 192},
};

static void random_blocks(const qtype *q, uint8_t *b, int64_t nblk) {
    for (int64_t i = 0; i < nblk; i++, b += q->bs) {
        for (int j = 0; j < q->bs; j++)
            b[j] = (uint8_t)rnd();
        switch (q->t) {
        case ENG_Q8_0:
        case ENG_Q4_0:
            put_f16(b, (float)(0.002 + 0.02 * unif()));
            break;
        case ENG_Q4_K:
        case ENG_Q5_K:
            put_f16(b, (float)(0.0005 + 0.002 * unif()));
            put_f16(b + 2, (float)(0.0005 + 0.002 * unif()));
            break;
        default:
            put_f16(b + 208, (float)(0.00002 + 0.0002 * unif()));
            break;
        }
    }
}

static double g_worst_a, g_worst_b; /* error / bound, worst over a type's shapes */

static int check_path(const eng__kernels *k, const qtype *q, int M, int N, int K, bool acc) {
    const int nb = K / 32;
    const size_t rb = (size_t)(K / q->qk) * q->bs;
    uint8_t *W = malloc(rb * N), *Wz = malloc(rb * N);
    float *Wf = malloc(sizeof(float) * N * K), *Of = malloc(sizeof(float) * N * K);
    float *X = malloc(sizeof(float) * M * K), *Y = malloc(sizeof(float) * M * N);
    float *Y0 = malloc(sizeof(float) * M * N);
    eng__q8a *Xq = malloc(sizeof(eng__q8a) * M * nb);
    random_blocks(q, W, (int64_t)N * (K / q->qk));
    memcpy(Wz, W, rb * N);
    for (int64_t i = 0; i < (int64_t)N * (K / q->qk); i++)
        memset(Wz + i * q->bs + q->q0, 0, (size_t)(q->q1 - q->q0));
    eng__dequant(q->t, W, 0, (int64_t)N * K, Wf);
    eng__dequant(q->t, Wz, 0, (int64_t)N * K, Of);
    if (q->t == ENG_Q8_0)
        memset(Of, 0, sizeof(float) * N * K);
    for (int m = 0; m < M; m++)
        for (int i = 0; i < K; i++) {
            double v = gauss();
            if (rnd() % 97 == 0)
                v *= 20; /* an outlier widens its block's scale */
            X[(int64_t)m * K + i] = (m == 1 && i < 32) ? 0.0f : (float)v;
        }
    for (int m = 0; m < M; m++)
        eng__quantize_act(X + (int64_t)m * K, K, Xq + (int64_t)m * nb);
    for (int i = 0; i < M * N; i++)
        Y[i] = Y0[i] = acc ? (float)(i % 7) - 3.0f : 0.0f;
    k->qgemm(q->t, W, rb, Xq, nb, Y, N, M, N, K, acc);
    int bad = 0;
    double worst_a = 0, worst_b = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            const float *w = Wf + (int64_t)n * K, *o = Of + (int64_t)n * K;
            const float *x = X + (int64_t)m * K;
            const eng__q8a *a = Xq + (int64_t)m * nb;
            double ra = 0, rf = 0, S = 0, R = 0;
            for (int b = 0; b < nb; b++) {
                double sw = 0;
                for (int i = 0; i < 32; i++) {
                    const int c = b * 32 + i;
                    const double xq = (double)a[b].d * a[b].q[i];
                    ra += (double)w[c] * xq;
                    rf += (double)w[c] * x[c];
                    S += (fabs(w[c]) + fabs(o[c])) * fabs(xq);
                    sw += fabs(w[c]);
                }
                R += a[b].d / 2.0 * (1 + 1e-6) * sw;
            }
            const double base = Y0[(int64_t)m * N + n];
            const double got = Y[(int64_t)m * N + n] - base;
            /* |base| <= 3 adds one rounding of the accumulate. */
            const double ba = 2 * (nb + 3) * ldexp(S, -24) + (acc ? ldexp(3 + fabs(got), -23) : 0);
            const double ea = fabs(got - ra), eb = fabs(got - rf);
            worst_a = fmax(worst_a, ba > 0 ? ea / ba : ea);
            worst_b = fmax(worst_b, eb / (R + ba));
            if (ea > ba || eb > R + ba) {
                if (bad++ < 3)
                    fprintf(stderr,
                            "%s %s M=%d N=%d K=%d m=%d n=%d: got %.9g ref_q %.9g (bound %.3g) "
                            "ref_f %.9g (bound %.3g)\n",
                            k->name, eng_dtype_name(q->t), M, N, K, m, n, got, ra, ba, rf, R + ba);
            }
        }
    g_worst_a = fmax(g_worst_a, worst_a);
    g_worst_b = fmax(g_worst_b, worst_b);
    free(W);
    free(Wz);
    free(Wf);
    free(Of);
    free(X);
    free(Y);
    free(Y0);
    free(Xq);
    return bad;
}

static void test_quantize_act(void) {
    float x[96];
    for (int i = 0; i < 96; i++)
        x[i] = (float)gauss() * (i < 32 ? 1.0f : i < 64 ? 0.0f : 1e-3f);
    eng__q8a a[3];
    eng__quantize_act(x, 96, a);
    CHECK(a[1].d == 0.0f);
    for (int b = 0; b < 3; b++) {
        int s0 = 0, s1 = 0, amax = 0;
        for (int i = 0; i < 32; i++) {
            const float e = fabsf(x[b * 32 + i] - a[b].d * a[b].q[i]);
            CHECK(e <= a[b].d * 0.5f * (1 + 1e-6f));
            CHECK(a[b].q[i] >= -127 && a[b].q[i] <= 127);
            *(i < 16 ? &s0 : &s1) += a[b].q[i];
            amax = abs(a[b].q[i]) > amax ? abs(a[b].q[i]) : amax;
        }
        CHECK_EQ_I(a[b].s[0], s0);
        CHECK_EQ_I(a[b].s[1], s1);
        CHECK(b == 1 || amax == 127);
    }
    /* The vector quantiser (AVX2 CPUs) gives the scalar code's bits: normal
     * blocks, outliers, zeros, denormal-sized values and exact .5 ties (amax
     * 127 makes d = 1, and j + 0.5 must round to even as lrintf does). */
    enum { NB = 64 };
    float *y = malloc(sizeof(float) * NB * 32);
    eng__q8a *q1 = malloc(sizeof(eng__q8a) * NB), *q2 = malloc(sizeof(eng__q8a) * NB);
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < 32; i++) {
            float v = (float)gauss();
            if (b % 4 == 1)
                v = i == 5 ? 127.0f : (float)((int)(rnd() % 254) - 127) + 0.5f;
            else if (b % 4 == 2)
                v = b % 8 == 2 ? 0.0f : v * 1e-40f;
            else if (rnd() % 13 == 0)
                v *= 50;
            y[b * 32 + i] = i == 31 && b % 4 == 1 ? -126.5f : v;
        }
    eng__quantize_act(y, NB * 32, q1);
    eng__quantize_act_c(y, NB * 32, q2);
    int same = 0;
    for (int b = 0; b < NB; b++)
        same += memcmp(&q1[b].d, &q2[b].d, sizeof(float)) == 0 && q1[b].s[0] == q2[b].s[0] &&
                q1[b].s[1] == q2[b].s[1] && memcmp(q1[b].q, q2[b].q, 32) == 0;
    CHECK_EQ_I(same, NB);
    free(y);
    free(q1);
    free(q2);
}

/* The path's vector log (the sampler's entropy), against double log: the
 * range reduction x = 2^e m is exact, the series to s^11 is below 1e-10
 * relative, and the float operations round ~6 times (s, the Horner steps on a
 * term <= 0.35, the final FMA) plus the float ln 2 (2e-9 relative): within
 * 2^-23 (|ln x| + 1). A wrong exponent or mantissa step is off by >= 1e-3. */
static void test_log(const eng__kernels *k) {
    enum { N = 2003 }; /* not a multiple of 8: the tail too */
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        const double u = unif();
        x[i] = i % 7 == 0    ? (float)(1.41421356 * (1 + (u - 0.5) * 1e-6)) /* around sqrt 2 */
               : i % 7 == 1  ? (float)(1 + (u - 0.5) * 1e-3)
               : i % 97 == 3 ? 1e-40f * (float)(1 + u) /* subnormal: the scalar fallback */
               : i % 89 == 5 ? 3.4e38f
                             : (float)exp((u - 0.5) * 170);
        y[i] = x[i];
    }
    k->log(y, N);
    int bad = 0;
    double worst = 0;
    for (int i = 0; i < N; i++) {
        const double ref = log((double)x[i]), err = fabs((double)y[i] - ref),
                     bound = ldexp(1.0, -23) * (fabs(ref) + 1);
        worst = err / bound > worst ? err / bound : worst;
        if (!(err <= bound) && bad++ < 5)
            fprintf(stderr, "log(%g) = %.9g, want %.9g\n", (double)x[i], (double)y[i], ref);
    }
    printf("  log: worst error / bound %.3f\n", worst);
    CHECK_EQ_I(bad, 0);
    free(x);
    free(y);
}

int main(void) {
    test_quantize_act();
    const char *paths[] = {"portable", "avx2", "avx512"};
    int ran = 0;
    for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
        const eng__kernels *k = eng__kernels_named(paths[p]);
        if (!k) {
            printf("path %s: not on this CPU\n", paths[p]);
            /* CI machines are x86-64 with AVX2: the AVX2 path must be tested there. */
            CHECK(strcmp(paths[p], "avx512") == 0 || !getenv("CI") ||
                  strcmp(paths[p], "portable") == 0);
            continue;
        }
        ran++;
        printf("path %s (%s)\n", paths[p], k->name);
        CHECK(k->qgemm != NULL);
        test_log(k);
        for (size_t t = 0; t < sizeof TYPES / sizeof *TYPES; t++) {
            /* M >= 4 and N >= 8 reach the register-tiled kernels (cpu/qtile.c):
             * 4-row groups, a 1-3 row tail, 8-column groups and a column tail. */
            const int Ms[] = {1, 3, 6, 33}, Ns[] = {1, 5, 17, 24}, Ks[] = {256, 512, 768};
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++)
                    for (int c = 0; c < 3; c++)
                        for (int acc = 0; acc < 2; acc++)
                            CHECK_EQ_I(check_path(k, &TYPES[t], Ms[a], Ns[b], Ks[c], acc), 0);
            /* K over several of the tiled kernels' 64-block chunks, the last partial. */
            for (int acc = 0; acc < 2; acc++)
                CHECK_EQ_I(check_path(k, &TYPES[t], 9, 16, 4608, acc), 0);
            if (TYPES[t].qk == 32) /* a row of 3 blocks: no 256 alignment needed */
                CHECK_EQ_I(check_path(k, &TYPES[t], 33, 5, 96, false), 0);
            printf("  %-5s worst error / bound: vs quantised-activation ref %.3f, vs float ref "
                   "%.3f\n",
                   eng_dtype_name(TYPES[t].t), g_worst_a, g_worst_b);
            g_worst_a = g_worst_b = 0;
        }
    }
    CHECK(ran >= 1);
    return check_finish("test_qdot");
}
