/* The CUDA backend's block decoders and int8 block dot products
 * (kernels/qblock.h: __host__ __device__ inline functions) run here, on the
 * CPU, without a GPU:
 *   - against llama.cpp's own vectors (tests/data/ggml/blocks.txt: fixed
 *     inputs quantised by ggml's quantize_row_*_ref and decoded by its
 *     dequantize_row_*, commit recorded in the file): every block of every
 *     type decodes to the same float32 bits, and so does the CPU backend's
 *     eng__dequant (engine/cpu/quant.c);
 *   - the half and BF16 conversions: every half against the engine's
 *     converter, BF16 rounding on ties, NaN and overflow;
 *   - the activation quantiser against the CPU backend's eng__quantize_act_c
 *     (same bytes, same layout as eng__q8a);
 *   - the block dot products, summed in the CPU's order, against the CPU
 *     backend's portable eng__qgemm_portable bit for bit; summed in the
 *     device kernel's lane order (32 lanes over the sub-blocks, then a
 *     butterfly), within the bound test_gpu_kernels uses for that kernel
 *     (both are sums of the same, bit-identical terms: |a - b| <= 2 g_n S with
 *     g_n = n u / (1 - n u), u = 2^-24, n terms, S = sum |term|). */
#include "check.h"
#include "cpu_impl.h"
#include "engine_impl.h"
#include "qblock.h"
#include "qblock_random.h"
#include "xorshift.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(kq_q8a) == sizeof(eng__q8a), "q8a layouts");
_Static_assert(offsetof(kq_q8a, s) == offsetof(eng__q8a, s), "q8a layouts");
_Static_assert(offsetof(kq_q8a, q) == offsetof(eng__q8a, q), "q8a layouts");
_Static_assert(KQ_Q8_0 - 1 == ENG_Q8_0 && KQ_Q6_K - 1 == ENG_Q6_K, "type numbering");

/* ---- the ground-truth file ----------------------------------------------------------- */

#define GT_N 1024
#define GT_TYPES 5

typedef struct gt_type {
    char name[8];
    uint8_t blocks[GT_N / 32 * 34]; /* the largest: Q8_0 */
    size_t n_bytes;
    uint32_t values[GT_N];
} gt_type;

static uint32_t gt_inputs[GT_N];
static gt_type gt[GT_TYPES];
static int gt_n;

static char *next_tok(char **p) {
    char *s = *p;
    while (*s == ' ' || *s == '\n')
        s++;
    if (!*s)
        return NULL;
    char *e = s;
    while (*e && *e != ' ' && *e != '\n')
        e++;
    if (*e)
        *e++ = '\0';
    *p = e;
    return s;
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool load_gt(const char *path) {
    char *text = NULL;
    size_t len = 0;
    if (base_read_file(path, &text, &len) != BASE_OK) {
        fprintf(stderr, "cannot read %s\n", path);
        return false;
    }
    /* drop comment lines */
    for (char *c = text; (c = strchr(c, '#'));) {
        char *e = strchr(c, '\n');
        memset(c, ' ', e ? (size_t)(e - c) : strlen(c));
    }
    char *p = text, *t;
    gt_type *cur = NULL;
    enum { NONE, INPUTS, BLOCKS, VALUES } mode = NONE;
    int n = 0;
    bool ok = true;
    while (ok && (t = next_tok(&p))) {
        if (!strcmp(t, "inputs")) {
            mode = INPUTS, n = 0;
        } else if (!strcmp(t, "type")) {
            ok = gt_n < GT_TYPES && (t = next_tok(&p)) && strlen(t) < 8;
            if (ok) {
                cur = &gt[gt_n++];
                strcpy(cur->name, t);
                ok = (t = next_tok(&p)) && !strcmp(t, "n") && (t = next_tok(&p)) && atoi(t) == GT_N;
            }
        } else if (!strcmp(t, "blocks")) {
            mode = BLOCKS, n = 0;
        } else if (!strcmp(t, "values")) {
            mode = VALUES, n = 0;
        } else if (!strcmp(t, "end")) {
            mode = NONE;
        } else if (mode == BLOCKS && cur) {
            for (size_t i = 0; ok && t[i]; i += 2) {
                ok = t[i + 1] && hexval(t[i]) >= 0 && hexval(t[i + 1]) >= 0 &&
                     cur->n_bytes < sizeof cur->blocks;
                if (ok)
                    cur->blocks[cur->n_bytes++] = (uint8_t)(hexval(t[i]) * 16 + hexval(t[i + 1]));
            }
        } else if ((mode == VALUES && cur) || mode == INPUTS) {
            ok = n < GT_N && strlen(t) == 8;
            if (ok)
                (mode == INPUTS ? gt_inputs : cur->values)[n++] = (uint32_t)strtoul(t, NULL, 16);
        } else {
            ok = false;
        }
    }
    free(text);
    if (!ok)
        fprintf(stderr, "%s: malformed\n", path);
    return ok && gt_n == GT_TYPES;
}

static int gt_kq_type(const char *name) {
    static const char *const names[] = {"Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(name, names[i]))
            return KQ_Q8_0 + i;
    return -1;
}

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- decoders ------------------------------------------------------------------------- */

static void test_ground_truth(void) {
    CHECK_EQ_I(gt_n, GT_TYPES);
    for (int g = 0; g < gt_n; g++) {
        const gt_type *T = &gt[g];
        const int t = gt_kq_type(T->name), qk = kq_block_values(t), bs = kq_block_bytes(t);
        CHECK(t > 0);
        if (t < 0)
            continue;
        CHECK_EQ_U(T->n_bytes, (size_t)(GT_N / qk * bs));
        int bad_kq = 0, bad_cpu = 0;
        float y[GT_N];
        eng__dequant((eng_dtype)(t - 1), T->blocks, 0, GT_N, y);
        for (int i = 0; i < GT_N; i++) {
            const float v = kq_dq(t, T->blocks + (size_t)(i / qk) * bs, i % qk);
            bad_kq += fbits(v) != T->values[i];
            bad_cpu += fbits(y[i]) != T->values[i];
        }
        CHECK_EQ_I(bad_kq, 0);
        CHECK_EQ_I(bad_cpu, 0);
        /* the quantiser did its job: the values are close to the inputs */
        double num = 0, den = 0;
        for (int i = 0; i < GT_N; i++) {
            const double e = (double)bitsf(T->values[i]) - bitsf(gt_inputs[i]);
            num += e * e;
            den += (double)bitsf(gt_inputs[i]) * bitsf(gt_inputs[i]);
        }
        fprintf(stderr, "  %s: %d values bit-equal to llama.cpp (kq and CPU), rel rms %.2e\n",
                T->name, GT_N - bad_kq, sqrt(num / den));
        CHECK(sqrt(num / den) < 0.1);
    }
}

static void test_conversions(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const float a = kq_f16((uint16_t)h), b = eng__f16_to_f32((uint16_t)h);
        bad += isnan(a) ? !isnan(b) : fbits(a) != fbits(b);
    }
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(kq_bf16(1.0f), 0x3F80);
    CHECK_EQ_U(kq_bf16(bitsf(0x3F808000u)), 0x3F80); /* tie, even stays */
    CHECK_EQ_U(kq_bf16(bitsf(0x3F818000u)), 0x3F82); /* tie, odd rounds up */
    CHECK_EQ_U(kq_bf16(bitsf(0x3F808001u)), 0x3F81);
    CHECK_EQ_U(kq_bf16(-2.0f), 0xC000);
    CHECK_EQ_U(kq_bf16(bitsf(0x7F7FFFFFu)), 0x7F80); /* FLT_MAX rounds to inf */
    CHECK(kq_bf16(NAN) > 0x7F80 || (kq_bf16(NAN) & 0x7FFF) > 0x7F80);
}

/* ---- activations and dot products ------------------------------------------------------ */

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) { return (uint32_t)(xorshift64(&rs) >> 32); }
static float nrand(void) {
    double u1 = (rnd() + 0.5) / 4294967296.0, u2 = rnd() / 4294967296.0;
    return (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}

static void fill_x(float *x, int k) {
    for (int i = 0; i < k; i++) {
        const int blk = i / 32;
        x[i] = blk % 7 == 3 ? 0.0f : nrand() * ldexpf(1.0f, blk % 5 - 2);
    }
    if (k > 64)
        x[40] = 1e-40f; /* a block of one subnormal: below 127 FLT_MIN */
    for (int i = 32; i < 64 && k > 64; i++)
        x[i] = i == 40 ? 1e-40f : 0.0f;
}

static void test_quantize(void) {
    enum { K = 4096 };
    static float x[K];
    static eng__q8a a[K / 32];
    static kq_q8a b[K / 32];
    for (int rep = 0; rep < 4; rep++) {
        fill_x(x, K);
        eng__quantize_act_c(x, K, a);
        for (int i = 0; i < K / 32; i++)
            kq_quantize32(x + 32 * i, &b[i]);
        CHECK(memcmp(a, b, sizeof a) == 0);
    }
}

static int rnd_below(int n) { return (int)(rnd() % (uint32_t)n); }

/* The device kernel's order for one output: lane l adds sub-blocks l, l + 32,
 * ... into its own accumulator from 0, then a butterfly over the 32 lanes. */
static float lane_order_dot(int t, const uint8_t *w, const kq_q8a *a, int nsub) {
    const int sub = kq_block_values(t) / 32, bs = kq_block_bytes(t);
    float acc[32] = {0};
    for (int i = 0; i < nsub; i++)
        acc[i % 32] = kq_vd(t, w + (size_t)(i / sub) * bs, i % sub, &a[i], acc[i % 32]);
    for (int o = 16; o > 0; o >>= 1) {
        float nx[32];
        for (int l = 0; l < 32; l++)
            nx[l] = acc[l] + acc[l ^ o];
        memcpy(acc, nx, sizeof acc);
    }
    return acc[0];
}

static void test_dot(void) {
    enum { M = 3, N = 5, K = 2048 };
    static float x[M * K];
    static eng__q8a xa[M * K / 32];
    static uint8_t w[N * K / 32 * 34];
    for (int t = KQ_Q8_0; t <= KQ_Q6_K; t++) {
        const int qk = kq_block_values(t), bs = kq_block_bytes(t), sub = qk / 32;
        const size_t row_bytes = (size_t)K / qk * bs;
        qblock_random(t, w, (size_t)N * K / qk, rnd_below);
        /* row 0 starts with llama.cpp's blocks of this type */
        for (int g = 0; g < gt_n; g++)
            if (gt_kq_type(gt[g].name) == t)
                memcpy(w, gt[g].blocks, gt[g].n_bytes);
        for (int m = 0; m < M; m++)
            fill_x(x + (size_t)m * K, K);
        eng__quantize_act_c(x, M * K, xa);
        float ycpu[M * N];
        eng__qgemm_portable((eng_dtype)(t - 1), w, row_bytes, xa, K / 32, ycpu, N, M, N, K, false);
        int bad = 0, over = 0;
        double worst = 0;
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                const kq_q8a *a = (const kq_q8a *)(xa + (size_t)m * K / 32);
                const uint8_t *wr = w + (size_t)n * row_bytes;
                float s = 0.0f;
                double sabs = 0;
                for (int i = 0; i < K / 32; i++) {
                    const uint8_t *blk = wr + (size_t)(i / sub) * bs;
                    s = kq_vd(t, blk, i % sub, &a[i], s);
                    sabs += fabs((double)kq_vd(t, blk, i % sub, &a[i], 0.0f));
                }
                bad += fbits(s) != fbits(ycpu[m * N + n]);
                const double u = 0x1p-24, nt = K / 32, g = nt * u / (1 - nt * u);
                const double e = fabs((double)lane_order_dot(t, wr, a, K / 32) - s);
                over += e > 2 * g * sabs;
                if (sabs > 0 && e / (2 * g * sabs) > worst)
                    worst = e / (2 * g * sabs);
            }
        CHECK_EQ_I(bad, 0);
        CHECK_EQ_I(over, 0);
        fprintf(stderr,
                "  dot %s: %d outputs bit-equal to eng__qgemm_portable; lane order within "
                "%.2f of its bound\n",
                eng_dtype_name((eng_dtype)(t - 1)), M * N - bad, worst);
    }
}

int main(void) {
    CHECK(load_gt(TQ_BLOCKS_FILE));
    test_ground_truth();
    test_conversions();
    test_quantize();
    test_dot();
    return check_finish("test_qblock");
}
