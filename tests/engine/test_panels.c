/* The outer-product panel kernels for BF16 weights and few rows
 * (engine/cpu/cpu_kernels.c, AVX-512 without AMX; AVX2 keeps its dot-product
 * kernel, which was faster in situ, docs/PERFORMANCE.md):
 *
 *   (a) the packing: every f32 of a panel equals the bf16 weight it comes
 *       from, bit for bit, and every slot past the rows or columns asked for
 *       is +0, for row and column windows inside a larger tensor and column
 *       counts that are odd, below one vector and past a transpose's width;
 *   (b) the gemm on those panels against a double reference: an f32 sum of K
 *       exact products (bf16 x f32 needs 32 bits of mantissa, so each product
 *       is rounded once) is within (K + 1) u S of it, S = sum |x w|, u = 2^-24;
 *       the test allows 2x. With acc the old Y is added (one more rounding),
 *       and Y's columns past N and rows past M are never written.
 * Skipped (77) where no path has the panels. */
#include "check.h"
#include "cpu_impl.h"
#include "xorshift.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) { return (uint32_t)(xorshift64(&rng) >> 16); }
static float unif(void) { return (float)((rnd() % 2000001) / 1e6 - 1.0); }

static uint16_t bf16_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static double g_worst;

/* A window of N rows from row0 and kc columns from k0 of a BF16 tensor with
 * room around it; M X rows. Returns the number of failed element checks. */
static int check_case(const eng__kernels *k, int N, int kc, int M, bool acc) {
    const int row0 = 3, k0 = 7, rows = row0 + N + 2, cols = k0 + kc + 5;
    uint16_t *w = malloc((size_t)rows * cols * sizeof *w);
    for (int i = 0; i < rows * cols; i++)
        w[i] = bf16_of(unif() * 2.0f);
    const eng_tensor W = {"w", ENG_BF16, rows, cols, w};
    const int npan = (N + 15) / 16;
    const size_t pfl = (size_t)npan * kc * 16;
    float *P = aligned_alloc(64, (pfl * sizeof(float) + 63) / 64 * 64);
    for (size_t i = 0; i < pfl; i++)
        P[i] = NAN; /* every slot must be written */
    k->panels(&W, row0, N, k0, kc, P);
    int bad = 0;
    for (int p = 0; p < npan; p++)
        for (int kk = 0; kk < kc; kk++)
            for (int j = 0; j < 16; j++) {
                const float got = P[((size_t)p * kc + kk) * 16 + j];
                const int r = 16 * p + j;
                const float want =
                    r < N ? eng__bf16_to_f32(w[(size_t)(row0 + r) * cols + k0 + kk]) : 0.0f;
                if (memcmp(&got, &want, sizeof got) != 0)
                    bad++;
            }
    /* Y with two guard columns and a guard row around the written block. */
    const int ldx = kc + 3, ldy = N + 2;
    float *X = malloc((size_t)M * ldx * sizeof *X);
    float *Y = malloc((size_t)(M + 1) * ldy * sizeof *Y);
    float *Y0 = malloc((size_t)(M + 1) * ldy * sizeof *Y0);
    for (int i = 0; i < M * ldx; i++)
        X[i] = unif() * (rnd() % 16 == 0 ? 100.0f : 1.0f); /* outliers */
    for (int i = 0; i < (M + 1) * ldy; i++)
        Y0[i] = Y[i] = unif();
    k->gemm_panels(X, ldx, P, kc, Y, ldy, M, N, acc);
    for (int m = 0; m < M + 1; m++)
        for (int n = 0; n < ldy; n++) {
            const float y = Y[m * ldy + n];
            if (m == M || n >= N) {
                if (memcmp(&y, &Y0[m * ldy + n], sizeof y) != 0)
                    bad++;
                continue;
            }
            double ref = acc ? Y0[m * ldy + n] : 0, S = acc ? fabs(Y0[m * ldy + n]) : 0;
            for (int kk = 0; kk < kc; kk++) {
                const double wv = eng__bf16_to_f32(w[(size_t)(row0 + n) * cols + k0 + kk]);
                ref += (double)X[m * ldx + kk] * wv;
                S += fabs((double)X[m * ldx + kk] * wv);
            }
            const double bound = (kc + 2) * 0x1p-24 * S + 1e-30;
            const double e = fabs(y - ref) / bound;
            if (e > g_worst)
                g_worst = e;
            if (!(e <= 2.0))
                bad++;
        }
    if (bad)
        fprintf(stderr, "  %s: N %d kc %d M %d acc %d: %d bad elements\n", k->name, N, kc, M, acc,
                bad);
    free(w);
    free(P);
    free(X);
    free(Y);
    free(Y0);
    return bad;
}

int main(void) {
    const char *paths[] = {"avx512"};
    int ran = 0;
    for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
        const eng__kernels *k = eng__kernels_named(paths[p]);
        if (!k) {
            printf("path %s: not on this CPU\n", paths[p]);
            continue;
        }
        CHECK(k->panels != NULL && k->gemm_panels != NULL);
        if (!k->panels || !k->gemm_panels)
            continue;
        ran++;
        printf("path %s (%s)\n", paths[p], k->name);
        /* Rows: one, a panel's tail, whole panels, three panels (a task's
         * group). Columns: one, odd, a transpose's width and past it, a
         * chunk of the backend's (512). M: below, at and past a row block
         * (8) and a hole step's 34 (blocks of 7 and 6). */
        const int Ns[] = {1, 15, 16, 17, 33, 48}, Ks[] = {1, 15, 16, 31, 33, 100, 512};
        const int Ms[] = {1, 5, 6, 7, 8, 9, 34};
        for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
            for (size_t b = 0; b < sizeof Ks / sizeof *Ks; b++)
                for (size_t c = 0; c < sizeof Ms / sizeof *Ms; c++)
                    CHECK_EQ_I(check_case(k, Ns[a], Ks[b], Ms[c], (a + b + c) % 2 == 1), 0);
        printf("  worst error / bound %.3f\n", g_worst);
        g_worst = 0;
    }
    if (!ran) {
        printf("no panel kernels on this CPU: skipped\n");
        return 77;
    }
    return check_finish("test_panels");
}
