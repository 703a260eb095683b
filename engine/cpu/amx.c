/* BF16 weight matmuls on Intel AMX (Sapphire Rapids and later): the tile
 * unit's TDPBF16PS multiplies 16 x 32 bf16 by 32 x 16 bf16 into 16 x 16 f32
 * in one instruction, about 16 times the multiply-adds of an AVX-512 FMA in
 * the same time.
 *
 * It takes bf16 on both sides, and the activations are f32. They are not
 * rounded: each f32 x is split exactly into three bf16 parts by truncation,
 * x = x1 + x2 + x3 (8 + 8 + 8 significant bits >= the 24 of an f32), and
 * every product of a bf16 weight with a part is exact in f32. So the result
 * is an f32 accumulation of exact products, like the FMA kernels' (in
 * another order, and with the parts added one after the other), not a bf16
 * matmul. Denormal inputs (|x| < 2^-126) count as zero in the tile unit.
 *
 * Layout: C^T = W X^T. The weight rows are the tile unit's A operand as they
 * lie in the file (16 rows x 32 columns per tile, no conversion, no copy);
 * X is packed once per matmul into the B operand's pair-interleaved layout:
 * for each block of 16 rows, each chunk of 32 columns and each part, a
 * 1 KiB tile whose row r holds (x[m][2r], x[m][2r + 1]) for the 16 rows m.
 * Tiles (palette 1, all 16 rows x 64 bytes): tmm0 the weights, tmm1/tmm2
 * the parts of X (alternating, so that a load overlaps the product before),
 * tmm3..tmm7 up to five 16 x 16 blocks of C (80 rows of X per pass over a
 * weight block; more rows take further passes, reading the block from L1/L2). */
#define _GNU_SOURCE
#include "cpu_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include "transpose512.h"
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>

#define ENG__AMX                                                                                   \
    __attribute__((target("amx-tile,amx-bf16,amx-int8,avx512f,avx512bw,avx512vl,avx512bf16,"       \
                          "f16c")))

enum { ENG__AMX_GMAX = 5 }; /* blocks of C per pass */

static bool eng__amx_ok, eng__amx_int8_ok;
static pthread_once_t eng__amx_once = PTHREAD_ONCE_INIT;

static void eng__amx_probe(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return;
    /* EDX bit 22: AMX-BF16, bit 24: AMX-TILE; ECX bit 27: OSXSAVE (leaf 1). */
    if (!(d & (1u << 22)) || !(d & (1u << 24)))
        return;
    unsigned a1, b1, c1, d1;
    if (!__get_cpuid(1, &a1, &b1, &c1, &d1) || !(c1 & (1u << 27)))
        return;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & (3u << 17)) != (3u << 17)) /* XTILECFG and XTILEDATA enabled by the OS */
        return;
    /* Linux hands out the 8 KiB tile state only on request (ARCH_REQ_XCOMP_PERM,
     * feature 18, XTILEDATA); the permission then holds for every thread. */
    if (syscall(SYS_arch_prctl, 0x1023, 18) != 0)
        return;
    eng__amx_ok = true;
    eng__amx_int8_ok = (d & (1u << 25)) != 0; /* AMX-INT8 */
}

bool eng__amx_available(void) {
    const char *e = getenv("INFILLD_CPU_AMX"); /* "0": off, for A/B runs and tests */
    if (e && strcmp(e, "0") == 0)
        return false;
    pthread_once(&eng__amx_once, eng__amx_probe);
    return eng__amx_ok;
}

bool eng__amx_int8_available(void) { return eng__amx_available() && eng__amx_int8_ok; }

typedef struct eng__amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} eng__amx_cfg;

/* Palette 1 with tmm0 (the weights) a_rows x a_cols bytes, tmm1/tmm2 (X)
 * b_rows x 64 and tmm3..tmm7 (C) 16 x 64. */
ENG__AMX static void eng__amx_config(int a_rows, int a_cols, int b_rows) {
    eng__amx_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.rows[t] = (uint8_t)(t == 0 ? a_rows : t < 3 ? b_rows : 16);
        cfg.colsb[t] = (uint16_t)(t == 0 ? a_cols : 64);
    }
    /* gcc does not model ldtilecfg's read of cfg: without this, the inlined
     * config's stores of rows and columns were dropped (SIGILL at the first
     * tile load, seen once the Q8_0 kernel was reshaped). */
    __asm__ volatile("" : : "r"(&cfg) : "memory");
    _tile_loadconfig(&cfg);
}

/* Part p (0, 1, 2) of 16 floats: p = 0 the top 8 significant bits
 * (truncated), 1 the next 8 of the remainder, 2 what is left (at most 8
 * bits). Each is exact in bf16 and x = part 0 + part 1 + part 2. */
ENG__AMX static inline __m512 eng__amx_part(__m512 v, int p) {
    const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
    for (int i = 0; i < p; i++)
        v = _mm512_sub_ps(v, _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), hi)));
    return p < 2 ? _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), hi)) : v;
}

/* The three bf16 parts of rows [m0, m0 + 16) of X (rows >= M are zero) for
 * the chunks [c0, c1) of 32 columns, in the B layout described above: per
 * part, row m's 32 values become 16 words of two bf16 (the rounding
 * conversion keeps them: they are exact), and a 16 x 16 transpose of the
 * words gives the tile's rows, written as whole cache lines. */
ENG__AMX static void eng__amx_pack_block(const float *X, int ldx, int m0, int M, int c0, int c1,
                                         uint16_t *out) {
    const int rows = BASE_MIN(16, M - m0);
    for (int c = c0; c < c1; c++) {
        float *t = (float *)(out + (size_t)c * 3 * 512);
        _Pragma("GCC unroll 3") for (int p = 0; p < 3; p++) {
            __m512 r[16];
            for (int m = 0; m < 16; m++) {
                if (m >= rows) {
                    r[m] = _mm512_setzero_ps();
                    continue;
                }
                const float *x = X + (int64_t)(m0 + m) * ldx + c * 32;
                r[m] = (__m512)_mm512_cvtne2ps_pbh(eng__amx_part(_mm512_loadu_ps(x + 16), p),
                                                   eng__amx_part(_mm512_loadu_ps(x), p));
            }
            eng__transpose16_512(r);
            for (int j = 0; j < 16; j++)
                _mm512_store_ps(t + p * 256 + j * 16, r[j]);
        }
    }
}

void eng__amx_pack_x(const float *X, int ldx, int M, int K, int blk, int c0, int c1, uint16_t *xp) {
    eng__amx_pack_block(X, ldx, blk * 16, M, c0, c1,
                        xp + (size_t)blk * eng__amx_xpack_elems(16, K));
}

/* Writes (acc: adds) the 16 x 16 block c[n][m] of C^T into Y[m][n] for the
 * first `rows` m: a 16 x 16 transpose in registers. */
ENG__AMX static void eng__amx_store(const float *c, int rows, float *Y, int ldy, bool acc) {
    __m512 r[16];
    for (int j = 0; j < 16; j++)
        r[j] = _mm512_loadu_ps(c + 16 * j);
    eng__transpose16_512(r);
    for (int m = 0; m < rows; m++) {
        float *y = Y + (int64_t)m * ldy;
        _mm512_storeu_ps(y, acc ? _mm512_add_ps(_mm512_loadu_ps(y), r[m]) : r[m]);
    }
}

/* One pass: G blocks of C (G <= 5) over every chunk of K for the 16 weight
 * rows at w. The three parts of a chunk go into the same C block one after
 * the other. Tile numbers are immediates, hence the macro per block. */
#define ENG__AMX_B(g, tc, p, tb)                                                                   \
    do {                                                                                           \
        _tile_loadd(tb, xp + ((size_t)(g)*per + (size_t)c * 1536 + (size_t)(p)*512), 64);          \
        _tile_dpbf16ps(tc, 0, tb);                                                                 \
    } while (0)

#define ENG__AMX_BG(g, tc, p, G)                                                                   \
    do {                                                                                           \
        if ((G) > (g)) {                                                                           \
            if ((((p) * (G) + (g)) & 1) == 0)                                                      \
                ENG__AMX_B(g, tc, p, 1);                                                           \
            else                                                                                   \
                ENG__AMX_B(g, tc, p, 2);                                                           \
        }                                                                                          \
    } while (0)

#define ENG__AMX_PASS(G)                                                                           \
    ENG__AMX static void eng__amx_pass##G(const uint16_t *w, int ld, int nc, const uint16_t *xp,   \
                                          size_t per, const uint16_t *wn) {                        \
        const size_t ldw = (size_t)ld * 2;                                                         \
        for (int c = 0; c < nc; c++) {                                                             \
            /* The weight rows four chunks ahead (at the end, the next block's first               \
             * chunks), one line each: the A tile's 16 lines come from 16 rows, more               \
             * streams than the hardware prefetcher follows. */                                    \
            const uint16_t *pf = c + 4 < nc ? w + (c + 4) * 32                                     \
                                 : wn       ? wn + (c + 4 - nc) * 32                               \
                                            : NULL;                                                      \
            if (pf)                                                                                \
                for (int r = 0; r < 16; r++)                                                       \
                    _mm_prefetch((const char *)(pf + (size_t)r * ld), _MM_HINT_T0);                \
            _tile_loadd(0, w + c * 32, ldw);                                                       \
            /* The two B tiles alternate over the whole sequence of products. */                   \
            _Pragma("GCC unroll 3") for (int p = 0; p < 3; p++) {                                  \
                ENG__AMX_BG(0, 3, p, G);                                                           \
                ENG__AMX_BG(1, 4, p, G);                                                           \
                ENG__AMX_BG(2, 5, p, G);                                                           \
                ENG__AMX_BG(3, 6, p, G);                                                           \
                ENG__AMX_BG(4, 7, p, G);                                                           \
            }                                                                                      \
        }                                                                                          \
    }
ENG__AMX_PASS(1)
ENG__AMX_PASS(2)
ENG__AMX_PASS(3)
ENG__AMX_PASS(4)
ENG__AMX_PASS(5)
#undef ENG__AMX_PASS
#undef ENG__AMX_BG
#undef ENG__AMX_B

/* More than one pass of row blocks (a full forward) cuts K into blocks of
 * 1,024 columns, so that a pass's packed rows (80 x 1,024 x 3 parts, 480
 * KiB) and a task's weights for that block stay in L2 while every weight
 * block and every pass reuse them; one pass (a hole step) streams K whole. */
ENG__AMX void eng__amx_gemm(const uint16_t *W, int K, const uint16_t *xp, int M, float *Y, int ldy,
                            int N, bool acc) {
    const size_t per = eng__amx_xpack_elems(16, K);
    const int nblk = (M + 15) / 16, nct = K / 32, kcb = nblk > ENG__AMX_GMAX ? 32 : nct;
    float cbuf[ENG__AMX_GMAX][256] __attribute__((aligned(64)));
    eng__amx_config(16, 64, 16);
    for (int kb = 0; kb < nct; kb += kcb) {
        const int nc = BASE_MIN(kcb, nct - kb);
        for (int b0 = 0; b0 < nblk; b0 += ENG__AMX_GMAX) {
            const int G = BASE_MIN(ENG__AMX_GMAX, nblk - b0);
            const uint16_t *x = xp + (size_t)b0 * per + (size_t)kb * 1536;
            for (int n = 0; n + 16 <= N; n += 16) {
                const uint16_t *w = W + (size_t)n * K + (size_t)kb * 32;
                const uint16_t *wn = n + 32 <= N ? w + (size_t)16 * K : NULL;
                _tile_zero(3);
                _tile_zero(4);
                _tile_zero(5);
                _tile_zero(6);
                _tile_zero(7);
                switch (G) {
                case 1:
                    eng__amx_pass1(w, K, nc, x, per, wn);
                    break;
                case 2:
                    eng__amx_pass2(w, K, nc, x, per, wn);
                    break;
                case 3:
                    eng__amx_pass3(w, K, nc, x, per, wn);
                    break;
                case 4:
                    eng__amx_pass4(w, K, nc, x, per, wn);
                    break;
                default:
                    eng__amx_pass5(w, K, nc, x, per, wn);
                    break;
                }
                _tile_stored(3, cbuf[0], 64);
                _tile_stored(4, cbuf[1], 64);
                _tile_stored(5, cbuf[2], 64);
                _tile_stored(6, cbuf[3], 64);
                _tile_stored(7, cbuf[4], 64);
                for (int g = 0; g < G; g++) {
                    const int m0 = (b0 + g) * 16;
                    eng__amx_store(cbuf[g], BASE_MIN(16, M - m0), Y + (int64_t)m0 * ldy + n, ldy,
                                   acc || kb > 0);
                }
            }
        }
    }
    _tile_release();
}

/* ---- Q8_0 weights on the int8 tile unit (TDPBSSD) ----
 * A Q8_0 block is an f16 scale and 32 int8; each block has its own scale in
 * every weight row and every activation row, so the integer dot of one block
 * (16 weight rows x 16 activation rows, K = 32) is a tile product of its
 * own, scaled and added into f32 sums kept in L1: y = sum_b (d_w d_x) i_b,
 * every i_b exact (|i_b| <= 32 * 127 * 128 < 2^24), as the AVX2 int8 kernels
 * compute it. The weights' quants are the A operand in place (16 rows, 32
 * bytes, the block's stride apart); the activations' quants are packed per
 * block and 16 rows as the B operand (row r: the words (q[4r..4r+3]) of the
 * 16 rows). Tiles: tmm0 A (16 x 32 bytes), tmm1/tmm2 B (8 x 64), tmm3..7 C. */

void eng__amx_q8_pack_row(const eng__q8a *row, int m, int nb, int8_t *xp) {
    /* Row m of its block of 16: for each block b, its 8 words go to column m
     * of the B tile's 8 rows. */
    const int mb = m / 16, mi = m % 16;
    for (int b = 0; b < nb; b++) {
        int8_t *t = xp + ((size_t)mb * nb + b) * 512;
        for (int r = 0; r < 8; r++)
            memcpy(t + r * 64 + mi * 4, row[b].q + 4 * r, 4);
    }
}

#define ENG__AMX_Q8B(g, tc, tb)                                                                    \
    do {                                                                                           \
        if (G > (g)) {                                                                             \
            _tile_loadd(tb, xp + (((size_t)(b0 + (g)) * nb + b) * 512), 64);                       \
            _tile_zero(tc);                                                                        \
            _tile_dpbssd(tc, 0, tb);                                                               \
            _tile_stored(tc, cb[g], 64);                                                           \
        }                                                                                          \
    } while (0)

ENG__AMX void eng__amx_q8_gemm(const uint8_t *W, size_t row_bytes, const int8_t *xp,
                               const eng__q8a *xq, int ldxb, int M, float *Y, int ldy, int N, int K,
                               bool acc) {
    const int nb = K / 32, nblk = (M + 15) / 16;
    int32_t cb[ENG__AMX_GMAX][256] __attribute__((aligned(64)));
    float sum[ENG__AMX_GMAX][256] __attribute__((aligned(64)));
    eng__amx_config(16, 32, 8); /* A: one block's 32 quants; B: 32 / 4 rows */
    for (int n = 0; n + 16 <= N; n += 16) {
        const uint8_t *w = W + (size_t)n * row_bytes;
        for (int b0 = 0; b0 < nblk; b0 += ENG__AMX_GMAX) {
            const int G = BASE_MIN(ENG__AMX_GMAX, nblk - b0);
            memset(sum, 0, sizeof(float) * 256 * (size_t)G);
            for (int b = 0; b < nb; b++) {
                const uint8_t *blk = w + (size_t)b * 34;
                _tile_loadd(0, blk + 2, row_bytes);
                ENG__AMX_Q8B(0, 3, 1);
                ENG__AMX_Q8B(1, 4, 2);
                ENG__AMX_Q8B(2, 5, 1);
                ENG__AMX_Q8B(3, 6, 2);
                ENG__AMX_Q8B(4, 7, 1);
                /* The weight rows' scales of this block, then C * (d_w d_x) into the sums. */
                uint16_t hw[16];
                for (int r = 0; r < 16; r++)
                    memcpy(&hw[r], blk + (size_t)r * row_bytes, 2);
                float dw[16];
                _mm512_storeu_ps(dw, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)hw)));
                for (int g = 0; g < G; g++) {
                    const int m0 = (b0 + g) * 16, rows = BASE_MIN(16, M - m0);
                    float dxv[16] = {0};
                    for (int i = 0; i < rows; i++)
                        dxv[i] = xq[(size_t)(m0 + i) * ldxb + b].d;
                    const __m512 dx = _mm512_loadu_ps(dxv);
                    for (int r = 0; r < 16; r++) {
                        const __m512 sc = _mm512_mul_ps(_mm512_set1_ps(dw[r]), dx);
                        const __m512 c = _mm512_cvtepi32_ps(_mm512_load_si512(cb[g] + 16 * r));
                        _mm512_store_ps(sum[g] + 16 * r,
                                        _mm512_fmadd_ps(c, sc, _mm512_load_ps(sum[g] + 16 * r)));
                    }
                }
            }
            for (int g = 0; g < G; g++) {
                const int m0 = (b0 + g) * 16;
                eng__amx_store(sum[g], BASE_MIN(16, M - m0), Y + (int64_t)m0 * ldy + n, ldy, acc);
            }
        }
    }
    _tile_release();
}
#undef ENG__AMX_Q8B

#else /* not x86-64 */

bool eng__amx_available(void) { return false; }
bool eng__amx_int8_available(void) { return false; }
void eng__amx_pack_x(const float *X, int ldx, int M, int K, int blk, int c0, int c1, uint16_t *xp) {
    (void)X, (void)ldx, (void)M, (void)K, (void)blk, (void)c0, (void)c1, (void)xp;
}
void eng__amx_gemm(const uint16_t *W, int K, const uint16_t *xp, int M, float *Y, int ldy, int N,
                   bool acc) {
    (void)W, (void)K, (void)xp, (void)M, (void)Y, (void)ldy, (void)N, (void)acc;
}
void eng__amx_q8_pack_row(const eng__q8a *row, int m, int nb, int8_t *xp) {
    (void)row, (void)m, (void)nb, (void)xp;
}
void eng__amx_q8_gemm(const uint8_t *W, size_t row_bytes, const int8_t *xp, const eng__q8a *xq,
                      int ldxb, int M, float *Y, int ldy, int N, int K, bool acc) {
    (void)W, (void)row_bytes, (void)xp, (void)xq, (void)ldxb, (void)M, (void)Y, (void)ldy, (void)N,
        (void)K, (void)acc;
}

#endif
