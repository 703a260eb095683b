/* Register-tiled int8 matmuls for many X rows (a hole step's ~33) on Q8_0,
 * Q4_K and Q6_K weights, AVX2. The one-row kernels of qdot.c pay, per 32
 * multiply-adds of one output, an int32 -> float conversion, a scale product
 * and an FMA next to the three integer instructions, because each output sits
 * in its own register and is summed horizontally at the end. Here eight weight
 * rows are repacked (per K chunk, into a stack tile) so that one 32-byte
 * vector holds four consecutive values of each of the eight rows (an 8 x 8
 * transpose of 32-bit groups): one vpmaddubsw against four activation bytes
 * broadcast to every lane gives the eight rows' partial dots side by side, the
 * int32 lanes accumulate a whole block exactly, and the block's scales (one
 * per row, a vector) are applied once per block and X row for all eight
 * outputs. Four X rows share each loaded weight vector. Nibbles and 6-bit
 * values are unpacked at repack time, so the inner loop is the same for
 * every type:
 *
 *   Q8_0  per 32: |w| . sign(a, w) (the sign trick: vpmaddubsw needs an
 *         unsigned side), vpmaddwd to int32 at every step (a pair of
 *         products reaches 2 * 128 * 127, no room to add two in int16)
 *   Q4_K  per 32: n . a with n in 0..15: a pair is at most 2 * 15 * 127 =
 *         3810, so the eight steps of a block add in int16 (<= 30480) and
 *         one vpmaddwd widens them; d sc and dmin m are float vectors
 *   Q6_K  per 32: u . a with u = q + 32 in 0..63: a pair <= 16002, two steps
 *         add in int16, vpmaddwd by the sub-block's int8 scale widens them;
 *         the -32 offset is subtracted exactly in int32 (sc_lo s0 + sc_hi s1
 *         of the activation's half sums, one more vpmaddwd)
 *
 * Every integer dot is exact, as in qdot.c; the float work per block and
 * output is a scale product and an FMA, so test_qdot's bounds hold. */
#include "cpu_impl.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define ENG__TAVX2 __attribute__((target("avx2,fma,f16c")))

enum {
    ENG__TKC = 64, /* 32-blocks per K chunk: the tile (<= 24 KiB) and X rows stay in L1 */
    ENG__TBS = 384 /* tile bytes per 32-block: 256 values + up to four 32-byte vectors */
};

ENG__TAVX2 static inline float eng__th16(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

/* c[j] dword r = r[r] dword j (8 x 8 transpose of 32-bit groups), stored. */
ENG__TAVX2 static inline void eng__t8x8(__m256i r[8], uint8_t *out) {
    const __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    const __m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
    const __m256i t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
    const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    const __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    const __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    __m256i *o = (__m256i *)out;
    _mm256_store_si256(o + 0, _mm256_permute2x128_si256(u0, u4, 0x20));
    _mm256_store_si256(o + 1, _mm256_permute2x128_si256(u1, u5, 0x20));
    _mm256_store_si256(o + 2, _mm256_permute2x128_si256(u2, u6, 0x20));
    _mm256_store_si256(o + 3, _mm256_permute2x128_si256(u3, u7, 0x20));
    _mm256_store_si256(o + 4, _mm256_permute2x128_si256(u0, u4, 0x31));
    _mm256_store_si256(o + 5, _mm256_permute2x128_si256(u1, u5, 0x31));
    _mm256_store_si256(o + 6, _mm256_permute2x128_si256(u2, u6, 0x31));
    _mm256_store_si256(o + 7, _mm256_permute2x128_si256(u3, u7, 0x31));
}

/* ---- repack: 8 weight rows (w[r], the chunk's first byte), nbc 32-blocks ---------------- */

/* Q8_0 tile block: values, then d_w of the eight rows (f32). */
ENG__TAVX2 static void eng__pack_q8_0(const uint8_t *const w[8], int nbc, uint8_t *T) {
    for (int b = 0; b < nbc; b++, T += ENG__TBS) {
        __m256i r[8];
        float d[8];
        for (int i = 0; i < 8; i++) {
            r[i] = _mm256_loadu_si256((const __m256i *)(w[i] + (size_t)b * 34 + 2));
            d[i] = eng__th16(w[i] + (size_t)b * 34);
        }
        eng__t8x8(r, T);
        memcpy(T + 256, d, sizeof d);
    }
}

/* Q4_K tile block (sub-block s of a super-block): nibbles as bytes, then d sc
 * and dmin m of the eight rows (f32). */
ENG__TAVX2 static void eng__pack_q4_k(const uint8_t *const w[8], int nbc, uint8_t *T) {
    const __m256i m4 = _mm256_set1_epi8(0xF);
    for (int b = 0; b < nbc; b += 8)
        for (int s = 0; s < 8; s++, T += ENG__TBS) {
            __m256i r[8];
            float dsc[8], dm[8];
            for (int i = 0; i < 8; i++) {
                const uint8_t *sb = w[i] + (size_t)(b / 8) * 144;
                const __m256i q = _mm256_loadu_si256((const __m256i *)(sb + 16 + 32 * (s / 2)));
                r[i] =
                    s & 1 ? _mm256_and_si256(_mm256_srli_epi16(q, 4), m4) : _mm256_and_si256(q, m4);
                const uint8_t *k = sb + 4;
                int sc, m;
                if (s < 4) {
                    sc = k[s] & 63;
                    m = k[s + 4] & 63;
                } else {
                    sc = (k[s + 4] & 0xF) | ((k[s - 4] >> 6) << 4);
                    m = (k[s + 4] >> 4) | ((k[s] >> 6) << 4);
                }
                dsc[i] = eng__th16(sb) * (float)sc;
                dm[i] = eng__th16(sb + 2) * (float)m;
            }
            eng__t8x8(r, T);
            memcpy(T + 256, dsc, sizeof dsc);
            memcpy(T + 288, dm, sizeof dm);
        }
}

/* Q6_K tile block (32-block g = 4h + k of a super-block): q + 32 as bytes; the
 * int16 pairs (sc_lo, sc_lo), (sc_hi, sc_hi) and (sc_lo, sc_hi) of each row's
 * dword; d of the eight rows (f32). */
ENG__TAVX2 static void eng__pack_q6_k(const uint8_t *const w[8], int nbc, uint8_t *T) {
    const __m256i m4 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3);
    for (int b = 0; b < nbc; b += 8)
        for (int g = 0; g < 8; g++, T += ENG__TBS) {
            const int h = g / 4, k = g % 4;
            __m256i r[8];
            int16_t slo[16], shi[16], sp[16];
            float d[8];
            for (int i = 0; i < 8; i++) {
                const uint8_t *sb = w[i] + (size_t)(b / 8) * 210;
                const __m256i lo =
                    _mm256_loadu_si256((const __m256i *)(sb + 64 * h + 32 * (k & 1)));
                const __m256i qh = _mm256_loadu_si256((const __m256i *)(sb + 128 + 32 * h));
                const __m256i nib = k < 2 ? _mm256_and_si256(lo, m4)
                                          : _mm256_and_si256(_mm256_srli_epi16(lo, 4), m4);
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), m3);
                r[i] = _mm256_or_si256(nib, _mm256_slli_epi16(hb, 4));
                const int8_t *sc = (const int8_t *)(sb + 192) + 2 * g;
                slo[2 * i] = slo[2 * i + 1] = sc[0];
                shi[2 * i] = shi[2 * i + 1] = sc[1];
                sp[2 * i] = sc[0];
                sp[2 * i + 1] = sc[1];
                d[i] = eng__th16(sb + 208);
            }
            eng__t8x8(r, T);
            memcpy(T + 256, slo, sizeof slo);
            memcpy(T + 288, shi, sizeof shi);
            memcpy(T + 320, sp, sizeof sp);
            memcpy(T + 352, d, sizeof d);
        }
}

/* ---- compute: R X rows (a, ldxb blocks apart, at the chunk's first block) x 8 rows ---------
 * acc[r] (8 outputs of X row r) += the chunk's dots. */

ENG__TAVX2 static inline __m256i eng__tbc(const eng__q8a *a, int j) {
    int32_t v;
    memcpy(&v, a->q + 4 * j, 4);
    return _mm256_set1_epi32(v);
}

/* The next chunk's weights (pointers to each of its eight rows, bytes per
 * 32-block): fetched into L1 a block at a time while this chunk computes, so
 * that reading the weights overlaps the arithmetic. */
typedef struct eng__tpf {
    const uint8_t *w[8];
    int num, den; /* a 32-block is num / den bytes (Q6_K: 210 / 8) */
} eng__tpf;

ENG__TAVX2 static inline void eng__tprefetch(const eng__tpf *pf, int b) {
    if (!pf)
        return;
    const size_t o = (size_t)b * (size_t)pf->num / (size_t)pf->den;
    for (int i = 0; i < 8; i++)
        _mm_prefetch((const char *)pf->w[i] + o, _MM_HINT_T0);
}

/* INFILLD_CPU_PREFETCH=0 turns the prefetch off (A/B runs), as on the
 * AVX-512 f32 path; read once. */
static atomic_int eng__tpf_on = -1;

void eng__qtile_prefetch(bool on) { atomic_store(&eng__tpf_on, on ? 1 : 0); }

#define ENG__TK static inline __attribute__((always_inline, target("avx2,fma,f16c"))) void

ENG__TK eng__tk_q8_0(const uint8_t *T, const eng__q8a *a, int ldxb, int nbc, int R, __m256 acc[4],
                     const eng__tpf *pf) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int b = 0; b < nbc; b++, T += ENG__TBS) {
        eng__tprefetch(pf, b);
        __m256i s[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            s[r] = _mm256_setzero_si256();
#pragma GCC unroll 1
        for (int j = 0; j < 8; j++) {
            const __m256i v = _mm256_load_si256((const __m256i *)T + j);
            const __m256i u = _mm256_sign_epi8(v, v);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const __m256i x = _mm256_sign_epi8(eng__tbc(a + (int64_t)r * ldxb + b, j), v);
                s[r] = _mm256_add_epi32(s[r], _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), ones));
            }
        }
        const __m256 dw = _mm256_load_ps((const float *)(T + 256));
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const __m256 da = _mm256_set1_ps(a[(int64_t)r * ldxb + b].d);
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[r]), _mm256_mul_ps(dw, da), acc[r]);
        }
    }
}

ENG__TK eng__tk_q4_k(const uint8_t *T, const eng__q8a *a, int ldxb, int nbc, int R, __m256 acc[4],
                     const eng__tpf *pf) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int b = 0; b < nbc; b++, T += ENG__TBS) {
        eng__tprefetch(pf, b);
        __m256i s[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            s[r] = _mm256_setzero_si256();
#pragma GCC unroll 1
        for (int j = 0; j < 8; j++) {
            const __m256i v = _mm256_load_si256((const __m256i *)T + j);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++)
                s[r] = _mm256_add_epi16(
                    s[r], _mm256_maddubs_epi16(v, eng__tbc(a + (int64_t)r * ldxb + b, j)));
        }
        const __m256 dsc = _mm256_load_ps((const float *)(T + 256));
        const __m256 dm = _mm256_load_ps((const float *)(T + 288));
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const eng__q8a *ar = a + (int64_t)r * ldxb + b;
            const __m256i p = _mm256_madd_epi16(s[r], ones);
            const __m256 da = _mm256_set1_ps(ar->d);
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dsc, da), acc[r]);
            acc[r] =
                _mm256_fnmadd_ps(dm, _mm256_set1_ps(ar->d * (float)(ar->s[0] + ar->s[1])), acc[r]);
        }
    }
}

ENG__TK eng__tk_q6_k(const uint8_t *T, const eng__q8a *a, int ldxb, int nbc, int R, __m256 acc[4],
                     const eng__tpf *pf) {
    for (int b = 0; b < nbc; b++, T += ENG__TBS) {
        eng__tprefetch(pf, b);
        __m256i s[4][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            s[r][0] = s[r][1] = _mm256_setzero_si256();
        const __m256i slo = _mm256_load_si256((const __m256i *)(T + 256));
        const __m256i shi = _mm256_load_si256((const __m256i *)(T + 288));
#pragma GCC unroll 4
        for (int j = 0; j < 8; j += 2) {
            const __m256i v0 = _mm256_load_si256((const __m256i *)T + j);
            const __m256i v1 = _mm256_load_si256((const __m256i *)T + j + 1);
            const __m256i sc = j < 4 ? slo : shi;
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const eng__q8a *ar = a + (int64_t)r * ldxb + b;
                /* two steps: at most 2 * 16002 in int16 */
                const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(v0, eng__tbc(ar, j)),
                                                   _mm256_maddubs_epi16(v1, eng__tbc(ar, j + 1)));
                const int h = (j >> 1) & 1;
                s[r][h] = _mm256_add_epi32(s[r][h], _mm256_madd_epi16(p, sc));
            }
        }
        const __m256i sp = _mm256_load_si256((const __m256i *)(T + 320));
        const __m256 d = _mm256_load_ps((const float *)(T + 352));
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const eng__q8a *ar = a + (int64_t)r * ldxb + b;
            int32_t hs;
            memcpy(&hs, ar->s, 4); /* the half sums s0, s1 as one int16 pair */
            const __m256i off = _mm256_madd_epi16(sp, _mm256_set1_epi32(hs));
            const __m256i p =
                _mm256_sub_epi32(_mm256_add_epi32(s[r][0], s[r][1]), _mm256_slli_epi32(off, 5));
            const __m256 da = _mm256_set1_ps(ar->d);
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(d, da), acc[r]);
        }
    }
}

typedef void (*eng__tpack_fn)(const uint8_t *const w[8], int nbc, uint8_t *T);

#define ENG__TROWS(KERN)                                                                           \
    ENG__TAVX2 static void KERN##_rows(const uint8_t *T, const eng__q8a *X, int ldxb, int nbc,     \
                                       float *Y, int ldy, int M, bool add, const eng__tpf *pf) {   \
        int m = 0;                                                                                 \
        for (; m + 4 <= M; m += 4) {                                                               \
            __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),        \
                             _mm256_setzero_ps()};                                                 \
            KERN(T, X + (int64_t)m * ldxb, ldxb, nbc, 4, acc, m == 0 ? pf : NULL);                 \
            for (int r = 0; r < 4; r++) {                                                          \
                float *y = Y + (int64_t)(m + r) * ldy;                                             \
                _mm256_storeu_ps(y, add ? _mm256_add_ps(_mm256_loadu_ps(y), acc[r]) : acc[r]);     \
            }                                                                                      \
        }                                                                                          \
        for (; m < M; m++) {                                                                       \
            __m256 acc[4] = {_mm256_setzero_ps()};                                                 \
            KERN(T, X + (int64_t)m * ldxb, ldxb, nbc, 1, acc, NULL);                               \
            float *y = Y + (int64_t)m * ldy;                                                       \
            _mm256_storeu_ps(y, add ? _mm256_add_ps(_mm256_loadu_ps(y), acc[0]) : acc[0]);         \
        }                                                                                          \
    }

ENG__TROWS(eng__tk_q8_0)
ENG__TROWS(eng__tk_q4_k)
ENG__TROWS(eng__tk_q6_k)

typedef void (*eng__trows_fn)(const uint8_t *T, const eng__q8a *X, int ldxb, int nbc, float *Y,
                              int ldy, int M, bool add, const eng__tpf *pf);

ENG__TAVX2 int eng__qgemm_tile_avx2(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X,
                                    int ldxb, float *Y, int ldy, int M, int N, int K, bool acc) {
    eng__tpack_fn pack;
    eng__trows_fn rows;
    size_t blk; /* bytes of one 32-block of a row, averaged: chunk offsets are whole super-blocks */
    switch (t) {
    case ENG_Q8_0:
        pack = eng__pack_q8_0, rows = eng__tk_q8_0_rows, blk = 34;
        break;
    case ENG_Q4_K:
        pack = eng__pack_q4_k, rows = eng__tk_q4_k_rows, blk = 18;
        break;
    case ENG_Q6_K:
        pack = eng__pack_q6_k, rows = eng__tk_q6_k_rows, blk = 0; /* 210 per 8 blocks */
        break;
    default:
        return 0;
    }
    if (M < 4)
        return 0; /* one to three rows: the repack would not pay */
    int pf_on = atomic_load_explicit(&eng__tpf_on, memory_order_relaxed);
    if (pf_on < 0) {
        const char *e = getenv("INFILLD_CPU_PREFETCH");
        pf_on = !(e && strcmp(e, "0") == 0);
        atomic_store_explicit(&eng__tpf_on, pf_on, memory_order_relaxed);
    }
    _Alignas(32) uint8_t T[ENG__TKC * ENG__TBS];
    const int nb = K / 32, n8 = N / 8 * 8;
    for (int n = 0; n < n8; n += 8)
        for (int b0 = 0; b0 < nb; b0 += ENG__TKC) {
            const int nbc = BASE_MIN(ENG__TKC, nb - b0);
            const size_t off = t == ENG_Q6_K ? (size_t)b0 / 8 * 210 : (size_t)b0 * blk;
            const uint8_t *w[8];
            for (int i = 0; i < 8; i++)
                w[i] = (const uint8_t *)W + (size_t)(n + i) * row_bytes + off;
            pack(w, nbc, T);
            /* the chunk after this one: further along the same rows, or the next rows */
            const int nn = b0 + ENG__TKC < nb ? n : n + 8, nb0 = nn == n ? b0 + ENG__TKC : 0;
            eng__tpf pf = {{NULL}, t == ENG_Q6_K ? 210 : (int)blk, t == ENG_Q6_K ? 8 : 1};
            const size_t noff = t == ENG_Q6_K ? (size_t)nb0 / 8 * 210 : (size_t)nb0 * blk;
            for (int i = 0; i < 8 && nn < n8; i++)
                pf.w[i] = (const uint8_t *)W + (size_t)(nn + i) * row_bytes + noff;
            rows(T, X + b0, ldxb, nbc, Y + n, ldy, M, acc || b0 > 0, nn < n8 && pf_on ? &pf : NULL);
        }
    return n8;
}
#else
void eng__qtile_prefetch(bool on) { (void)on; }
int eng__qgemm_tile_avx2(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X, int ldxb,
                         float *Y, int ldy, int M, int N, int K, bool acc) {
    (void)t, (void)W, (void)row_bytes, (void)X, (void)ldxb, (void)Y, (void)ldy, (void)M, (void)N,
        (void)K, (void)acc;
    return 0;
}
#endif
