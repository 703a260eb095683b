/* Matmuls on quantised weight blocks (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K) with
 * int8 activations, in the manner of ggml's vec_dot_*_q8_*: each X row is
 * quantised once into blocks of 32 (eng__q8a: f32 scale, int8 values and
 * their two 16-value sums), each weight block's integers are multiplied with
 * the activation integers exactly, and only the per-block scales are float:
 *
 *   Q8_0  d_w d_a sum(q_w q_a)
 *   Q4_0  d_w d_a sum((n - 8) q_a)
 *   Q4_K  d_a (d sc sum(n q_a) - dmin m sum(q_a))      per 32 (sc, m 6-bit)
 *   Q5_K  as Q4_K with 5-bit n
 *   Q6_K  d_a d sum_16 sc (sum(n q_a) - 32 sum(q_a))    per 16 (sc int8)
 *
 * The portable versions are plain C; the AVX2 versions multiply unsigned
 * weight bytes by signed activation bytes with vpmaddubsw (Q8_0 and Q4_0
 * through the sign trick: |w| times sign(w) a) and sum pairs with vpmaddwd.
 * No product overflows int16: |w| <= 128 (Q8_0), 63 (Q6_K), |a| <= 127,
 * two products per lane. The results differ from the float path only by the
 * activation rounding (at most d_a / 2 per element) and float summation. */
#include "cpu_impl.h"

#include <float.h>
#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ENG__QX86 1
#endif

void eng__quantize_act_c(const float *x, int k, eng__q8a *out) {
    for (int b = 0; b < k / 32; b++, x += 32, out++) {
        float amax = 0;
        for (int i = 0; i < 32; i++)
            amax = fmaxf(amax, fabsf(x[i]));
        /* amax below 127 FLT_MIN: 1 / d would overflow, the block is zero. */
        const float d = amax >= 127.0f * FLT_MIN ? amax / 127.0f : 0.0f;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        int s0 = 0, s1 = 0;
        for (int i = 0; i < 32; i++) {
            const int q = (int)lrintf(x[i] * id); /* |x id| <= 127 (+ rounding) */
            out->q[i] = (int8_t)(q > 127 ? 127 : q < -127 ? -127 : q);
        }
        for (int i = 0; i < 16; i++) {
            s0 += out->q[i];
            s1 += out->q[i + 16];
        }
        out->d = d;
        out->s[0] = (int16_t)s0;
        out->s[1] = (int16_t)s1;
    }
}

static inline float eng__qh(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return eng__f16_to_f32(h);
}

/* The 6-bit scale and minimum of sub-block j of a Q4_K/Q5_K super-block. */
static inline void eng__qsm(int j, const uint8_t *q, int *d, int *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* ---- portable ---------------------------------------------------------------- */

static float eng__vd_q8_0(const uint8_t *w, const eng__q8a *a, int nb) {
    float s = 0;
    for (int b = 0; b < nb; b++, w += 34, a++) {
        const int8_t *q = (const int8_t *)(w + 2);
        int si = 0;
        for (int i = 0; i < 32; i++)
            si += q[i] * a->q[i];
        s += (float)si * (eng__qh(w) * a->d);
    }
    return s;
}

static float eng__vd_q4_0(const uint8_t *w, const eng__q8a *a, int nb) {
    float s = 0;
    for (int b = 0; b < nb; b++, w += 18, a++) {
        const uint8_t *q = w + 2;
        int si = 0;
        for (int i = 0; i < 16; i++)
            si += ((q[i] & 0xF) - 8) * a->q[i] + ((q[i] >> 4) - 8) * a->q[i + 16];
        s += (float)si * (eng__qh(w) * a->d);
    }
    return s;
}

static float eng__vd_q4_k(const uint8_t *w, const eng__q8a *a, int nb) {
    float s = 0;
    for (int b = 0; b < nb; b += 8, w += 144) {
        const float d = eng__qh(w), dmin = eng__qh(w + 2);
        const uint8_t *q = w + 16;
        for (int j = 0; j < 4; j++, q += 32, a += 2) {
            int sc0, m0, sc1, m1, lo = 0, hi = 0;
            eng__qsm(2 * j, w + 4, &sc0, &m0);
            eng__qsm(2 * j + 1, w + 4, &sc1, &m1);
            for (int i = 0; i < 32; i++) {
                lo += (q[i] & 0xF) * a[0].q[i];
                hi += (q[i] >> 4) * a[1].q[i];
            }
            s += a[0].d * ((float)(sc0 * lo) * d - (float)(m0 * (a[0].s[0] + a[0].s[1])) * dmin);
            s += a[1].d * ((float)(sc1 * hi) * d - (float)(m1 * (a[1].s[0] + a[1].s[1])) * dmin);
        }
    }
    return s;
}

static float eng__vd_q5_k(const uint8_t *w, const eng__q8a *a, int nb) {
    float s = 0;
    for (int b = 0; b < nb; b += 8, w += 176) {
        const float d = eng__qh(w), dmin = eng__qh(w + 2);
        const uint8_t *qh = w + 16, *q = w + 48;
        for (int j = 0; j < 4; j++, q += 32, a += 2) {
            int sc0, m0, sc1, m1, lo = 0, hi = 0;
            eng__qsm(2 * j, w + 4, &sc0, &m0);
            eng__qsm(2 * j + 1, w + 4, &sc1, &m1);
            for (int i = 0; i < 32; i++) {
                lo += ((q[i] & 0xF) | (((qh[i] >> (2 * j)) & 1) << 4)) * a[0].q[i];
                hi += ((q[i] >> 4) | (((qh[i] >> (2 * j + 1)) & 1) << 4)) * a[1].q[i];
            }
            s += a[0].d * ((float)(sc0 * lo) * d - (float)(m0 * (a[0].s[0] + a[0].s[1])) * dmin);
            s += a[1].d * ((float)(sc1 * hi) * d - (float)(m1 * (a[1].s[0] + a[1].s[1])) * dmin);
        }
    }
    return s;
}

/* Q6_K value i of 32-group k of half h: the layout of ggml's dequantize_row_q6_K. */
static inline int eng__q6v(const uint8_t *ql, const uint8_t *qh, int k, int i) {
    const int lo = k & 1 ? ql[32 + i] : ql[i];
    return ((k < 2 ? lo & 0xF : lo >> 4) | (((qh[i] >> (2 * k)) & 3) << 4)) - 32;
}

static float eng__vd_q6_k(const uint8_t *w, const eng__q8a *a, int nb) {
    float s = 0;
    for (int b = 0; b < nb; b += 8, w += 210) {
        const float d = eng__qh(w + 208);
        const int8_t *sc = (const int8_t *)(w + 192);
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < 4; k++, a++) {
                const uint8_t *ql = w + 64 * h, *qh = w + 128 + 32 * h;
                int s0 = 0, s1 = 0;
                for (int i = 0; i < 16; i++) {
                    s0 += eng__q6v(ql, qh, k, i) * a->q[i];
                    s1 += eng__q6v(ql, qh, k, i + 16) * a->q[i + 16];
                }
                const int8_t *g = sc + 8 * h + 2 * k;
                s += a->d * ((float)(g[0] * s0 + g[1] * s1) * d);
            }
    }
    return s;
}

typedef float (*eng__vdot_fn)(const uint8_t *w, const eng__q8a *a, int nb);

/* Rows of X are taken in groups of 8 so that a group's activation blocks stay
 * in L1 while every weight row of the call passes over them. */
static void eng__qgemm_with(eng__vdot_fn fn, const void *W, size_t row_bytes, const eng__q8a *X,
                            int ldxb, float *Y, int ldy, int M, int N, int K, bool acc) {
    const int nb = K / 32;
    for (int m0 = 0; m0 < M; m0 += 8) {
        const int m1 = BASE_MIN(M, m0 + 8);
        for (int n = 0; n < N; n++) {
            const uint8_t *w = (const uint8_t *)W + (size_t)n * row_bytes;
            for (int m = m0; m < m1; m++) {
                const float v = fn(w, X + (int64_t)m * ldxb, nb);
                float *y = Y + (int64_t)m * ldy + n;
                *y = acc ? *y + v : v;
            }
        }
    }
}

static eng__vdot_fn eng__vdot_portable(eng_dtype t) {
    switch (t) {
    case ENG_Q8_0:
        return eng__vd_q8_0;
    case ENG_Q4_0:
        return eng__vd_q4_0;
    case ENG_Q4_K:
        return eng__vd_q4_k;
    case ENG_Q5_K:
        return eng__vd_q5_k;
    case ENG_Q6_K:
        return eng__vd_q6_k;
    default:
        return NULL;
    }
}

void eng__qgemm_portable(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X, int ldxb,
                         float *Y, int ldy, int M, int N, int K, bool acc) {
    eng__qgemm_with(eng__vdot_portable(t), W, row_bytes, X, ldxb, Y, ldy, M, N, K, acc);
}

/* ---- AVX2 --------------------------------------------------------------------------- */
#ifdef ENG__QX86
#define ENG__QAVX2 __attribute__((target("avx2,fma,f16c")))

/* f16 scale with F16C, inline (the portable converter is a call per block). */
ENG__QAVX2 static inline float eng__qh16(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

ENG__QAVX2 static inline float eng__qhsum(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

/* eng__quantize_act_c with the same float operations in vectors, so the same
 * bits (max of |x| is exact; cvtps rounds to nearest even, as lrintf does in
 * the default rounding mode); test_qdot compares the two. */
ENG__QAVX2 static void eng__quantize_act_avx2(const float *x, int k, eng__q8a *out) {
    const __m256 sgn = _mm256_set1_ps(-0.0f);
    const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
    for (int b = 0; b < k / 32; b++, x += 32, out++) {
        __m256 v[4], mx = _mm256_setzero_ps();
        for (int i = 0; i < 4; i++) {
            v[i] = _mm256_loadu_ps(x + 8 * i);
            mx = _mm256_max_ps(mx, _mm256_andnot_ps(sgn, v[i]));
        }
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        const float d = amax >= 127.0f * FLT_MIN ? amax / 127.0f : 0.0f;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        const __m256 idv = _mm256_set1_ps(id);
        __m256i q[4];
        for (int i = 0; i < 4; i++)
            q[i] = _mm256_min_epi32(
                hi, _mm256_max_epi32(lo, _mm256_cvtps_epi32(_mm256_mul_ps(v[i], idv))));
        const __m256i p =
            _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256((__m256i *)out->q, _mm256_permutevar8x32_epi32(
                                                   p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
        const __m256i s01 = _mm256_add_epi32(q[0], q[1]), s23 = _mm256_add_epi32(q[2], q[3]);
        /* horizontal sums of s01 (values 0-15) and s23 (16-31) */
        const __m256i h = _mm256_hadd_epi32(s01, s23); /* per lane: s01 pairs, s23 pairs */
        const __m256i h2 = _mm256_hadd_epi32(h, h);
        const __m128i t =
            _mm_add_epi32(_mm256_castsi256_si128(h2), _mm256_extracti128_si256(h2, 1));
        out->d = d;
        out->s[0] = (int16_t)_mm_cvtsi128_si32(t);
        out->s[1] = (int16_t)_mm_extract_epi32(t, 1);
    }
}

/* Eight int32 sums of four adjacent u8 x s8 products each. */
ENG__QAVX2 static inline __m256i eng__mul_us(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

ENG__QAVX2 static inline __m256i eng__aq(const eng__q8a *a) {
    return _mm256_loadu_si256((const __m256i *)a->q);
}

ENG__QAVX2 static float eng__vd_q8_0_avx2(const uint8_t *w, const eng__q8a *a, int nb) {
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++, w += 34, a++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(w + 2));
        const __m256i p = eng__mul_us(_mm256_sign_epi8(q, q), _mm256_sign_epi8(eng__aq(a), q));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(eng__qh16(w) * a->d), acc);
    }
    return eng__qhsum(acc);
}

/* 16 bytes of nibbles as 32 bytes: low nibbles then high nibbles. */
ENG__QAVX2 static inline __m256i eng__nib32(const uint8_t *p) {
    const __m128i v = _mm_loadu_si128((const __m128i *)p), m = _mm_set1_epi8(0xF);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), m), _mm_and_si128(v, m));
}

ENG__QAVX2 static float eng__vd_q4_0_avx2(const uint8_t *w, const eng__q8a *a, int nb) {
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++, w += 18, a++) {
        const __m256i q = _mm256_sub_epi8(eng__nib32(w + 2), _mm256_set1_epi8(8));
        const __m256i p = eng__mul_us(_mm256_sign_epi8(q, q), _mm256_sign_epi8(eng__aq(a), q));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(eng__qh16(w) * a->d), acc);
    }
    return eng__qhsum(acc);
}

/* Q4_K and Q5_K: 32 unsigned values (lo), their scale and minimum, one
 * activation block: acc += d_a d sc (lo . a); returns d_a m sum(a) for the
 * caller's minimum term. */
ENG__QAVX2 static inline __m256 eng__k_part(__m256i u, int sc, const eng__q8a *a, float d,
                                            __m256 acc) {
    const __m256i p =
        _mm256_madd_epi16(_mm256_maddubs_epi16(u, eng__aq(a)), _mm256_set1_epi16((int16_t)sc));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * a->d), acc);
}

ENG__QAVX2 static float eng__vd_q4_k_avx2(const uint8_t *w, const eng__q8a *a, int nb) {
    __m256 acc = _mm256_setzero_ps();
    float mins = 0;
    const __m256i m4 = _mm256_set1_epi8(0xF);
    for (int b = 0; b < nb; b += 8, w += 144) {
        const float d = eng__qh16(w), dmin = eng__qh16(w + 2);
        float ms = 0;
        for (int j = 0; j < 4; j++, a += 2) {
            int sc0, m0, sc1, m1;
            eng__qsm(2 * j, w + 4, &sc0, &m0);
            eng__qsm(2 * j + 1, w + 4, &sc1, &m1);
            const __m256i q = _mm256_loadu_si256((const __m256i *)(w + 16 + 32 * j));
            acc = eng__k_part(_mm256_and_si256(q, m4), sc0, &a[0], d, acc);
            acc = eng__k_part(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), sc1, &a[1], d, acc);
            ms += a[0].d * (float)(m0 * (a[0].s[0] + a[0].s[1])) +
                  a[1].d * (float)(m1 * (a[1].s[0] + a[1].s[1]));
        }
        mins += dmin * ms;
    }
    return eng__qhsum(acc) - mins;
}

ENG__QAVX2 static float eng__vd_q5_k_avx2(const uint8_t *w, const eng__q8a *a, int nb) {
    __m256 acc = _mm256_setzero_ps();
    float mins = 0;
    const __m256i m4 = _mm256_set1_epi8(0xF), b16 = _mm256_set1_epi8(16);
    for (int b = 0; b < nb; b += 8, w += 176) {
        const float d = eng__qh16(w), dmin = eng__qh16(w + 2);
        const __m256i qh = _mm256_loadu_si256((const __m256i *)(w + 16));
        float ms = 0;
        for (int j = 0; j < 4; j++, a += 2) {
            int sc0, m0, sc1, m1;
            eng__qsm(2 * j, w + 4, &sc0, &m0);
            eng__qsm(2 * j + 1, w + 4, &sc1, &m1);
            const __m256i q = _mm256_loadu_si256((const __m256i *)(w + 48 + 32 * j));
            const __m256i bl = _mm256_set1_epi8((char)(1 << (2 * j)));
            const __m256i bh = _mm256_set1_epi8((char)(2 << (2 * j)));
            const __m256i hl =
                _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bl), bl), b16);
            const __m256i hh =
                _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bh), bh), b16);
            acc = eng__k_part(_mm256_or_si256(_mm256_and_si256(q, m4), hl), sc0, &a[0], d, acc);
            acc = eng__k_part(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), hh),
                              sc1, &a[1], d, acc);
            ms += a[0].d * (float)(m0 * (a[0].s[0] + a[0].s[1])) +
                  a[1].d * (float)(m1 * (a[1].s[0] + a[1].s[1]));
        }
        mins += dmin * ms;
    }
    return eng__qhsum(acc) - mins;
}

ENG__QAVX2 static float eng__vd_q6_k_avx2(const uint8_t *w, const eng__q8a *a, int nb) {
    __m256 acc = _mm256_setzero_ps();
    float offs = 0;
    const __m256i m4 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3);
    for (int b = 0; b < nb; b += 8, w += 210) {
        const float d = eng__qh16(w + 208);
        const int8_t *sc = (const int8_t *)(w + 192);
        float os = 0;
        for (int h = 0; h < 2; h++) {
            const __m256i l0 = _mm256_loadu_si256((const __m256i *)(w + 64 * h));
            const __m256i l1 = _mm256_loadu_si256((const __m256i *)(w + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h));
            for (int k = 0; k < 4; k++, a++) {
                const __m256i lo = k & 1 ? l1 : l0;
                const __m256i nib = k < 2 ? _mm256_and_si256(lo, m4)
                                          : _mm256_and_si256(_mm256_srli_epi16(lo, 4), m4);
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k),
                                                    m3); /* bits 2k, 2k+1 of each byte */
                const __m256i u = _mm256_or_si256(nib, _mm256_slli_epi16(hb, 4));
                const int8_t *g = sc + 8 * h + 2 * k;
                /* int16 lanes 0-7 hold values 0-15 (scale g[0]), 8-15 values 16-31. */
                const __m256i scv = _mm256_set_m128i(_mm_set1_epi16(g[1]), _mm_set1_epi16(g[0]));
                const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(u, eng__aq(a)), scv);
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * a->d), acc);
                os += a->d * (float)(32 * (g[0] * a->s[0] + g[1] * a->s[1]));
            }
        }
        offs += d * os;
    }
    return eng__qhsum(acc) - offs;
}

/* Four X rows at once for the types of common files (Q8_0, Q4_K, Q6_K): a
 * weight block is loaded and unpacked once for the four rows, and its scales
 * decoded once, which is most of the work per block when X has few rows. */
typedef void (*eng__vdot4_fn)(const uint8_t *w, const eng__q8a *a, int ldxb, int nb, float out[4]);

ENG__QAVX2 static void eng__vd4_q8_0_avx2(const uint8_t *w, const eng__q8a *a, int ldxb, int nb,
                                          float out[4]) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
    for (int b = 0; b < nb; b++, w += 34) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(w + 2));
        const __m256i ax = _mm256_sign_epi8(q, q);
        const float dw = eng__qh16(w);
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            const eng__q8a *ar = a + (int64_t)r * ldxb + b;
            const __m256i p = eng__mul_us(ax, _mm256_sign_epi8(eng__aq(ar), q));
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw * ar->d), acc[r]);
        }
    }
    for (int r = 0; r < 4; r++)
        out[r] = eng__qhsum(acc[r]);
}

ENG__QAVX2 static void eng__vd4_q4_k_avx2(const uint8_t *w, const eng__q8a *a, int ldxb, int nb,
                                          float out[4]) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
    float mins[4] = {0, 0, 0, 0};
    const __m256i m4 = _mm256_set1_epi8(0xF);
    for (int b = 0; b < nb; b += 8, w += 144) {
        const float d = eng__qh16(w), dmin = eng__qh16(w + 2);
        for (int j = 0; j < 4; j++) {
            int sc0, m0, sc1, m1;
            eng__qsm(2 * j, w + 4, &sc0, &m0);
            eng__qsm(2 * j + 1, w + 4, &sc1, &m1);
            const __m256i q = _mm256_loadu_si256((const __m256i *)(w + 16 + 32 * j));
            const __m256i lo = _mm256_and_si256(q, m4);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i s0 = _mm256_set1_epi16((int16_t)sc0),
                          s1 = _mm256_set1_epi16((int16_t)sc1);
#pragma GCC unroll 4
            for (int r = 0; r < 4; r++) {
                const eng__q8a *ar = a + (int64_t)r * ldxb + b + 2 * j;
                const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, eng__aq(&ar[0])), s0);
                const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, eng__aq(&ar[1])), s1);
                acc[r] =
                    _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(d * ar[0].d), acc[r]);
                acc[r] =
                    _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(d * ar[1].d), acc[r]);
                mins[r] += dmin * (ar[0].d * (float)(m0 * (ar[0].s[0] + ar[0].s[1])) +
                                   ar[1].d * (float)(m1 * (ar[1].s[0] + ar[1].s[1])));
            }
        }
    }
    for (int r = 0; r < 4; r++)
        out[r] = eng__qhsum(acc[r]) - mins[r];
}

ENG__QAVX2 static void eng__vd4_q6_k_avx2(const uint8_t *w, const eng__q8a *a, int ldxb, int nb,
                                          float out[4]) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
    float offs[4] = {0, 0, 0, 0};
    const __m256i m4 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3);
    for (int b = 0; b < nb; b += 8, w += 210) {
        const float d = eng__qh16(w + 208);
        const int8_t *sc = (const int8_t *)(w + 192);
        for (int h = 0; h < 2; h++) {
            const __m256i l0 = _mm256_loadu_si256((const __m256i *)(w + 64 * h));
            const __m256i l1 = _mm256_loadu_si256((const __m256i *)(w + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h));
            for (int k = 0; k < 4; k++) {
                const __m256i lo = k & 1 ? l1 : l0;
                const __m256i nib = k < 2 ? _mm256_and_si256(lo, m4)
                                          : _mm256_and_si256(_mm256_srli_epi16(lo, 4), m4);
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), m3);
                const __m256i u = _mm256_or_si256(nib, _mm256_slli_epi16(hb, 4));
                const int8_t *g = sc + 8 * h + 2 * k;
                const __m256i scv = _mm256_set_m128i(_mm_set1_epi16(g[1]), _mm_set1_epi16(g[0]));
#pragma GCC unroll 4
                for (int r = 0; r < 4; r++) {
                    const eng__q8a *ar = a + (int64_t)r * ldxb + b + 4 * h + k;
                    const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(u, eng__aq(ar)), scv);
                    acc[r] =
                        _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * ar->d), acc[r]);
                    offs[r] += d * (ar->d * (float)(32 * (g[0] * ar->s[0] + g[1] * ar->s[1])));
                }
            }
        }
    }
    for (int r = 0; r < 4; r++)
        out[r] = eng__qhsum(acc[r]) - offs[r];
}

ENG__QAVX2 void eng__qgemm_avx2(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X,
                                int ldxb, float *Y, int ldy, int M, int N, int K, bool acc) {
    eng__vdot_fn fn = t == ENG_Q8_0   ? eng__vd_q8_0_avx2
                      : t == ENG_Q4_0 ? eng__vd_q4_0_avx2
                      : t == ENG_Q4_K ? eng__vd_q4_k_avx2
                      : t == ENG_Q5_K ? eng__vd_q5_k_avx2
                                      : eng__vd_q6_k_avx2;
    eng__vdot4_fn fn4 = t == ENG_Q8_0   ? eng__vd4_q8_0_avx2
                        : t == ENG_Q4_K ? eng__vd4_q4_k_avx2
                        : t == ENG_Q6_K ? eng__vd4_q6_k_avx2
                                        : NULL;
    /* Many X rows: the register-tiled kernels (cpu/qtile.c) take the rows of
     * W in groups of eight; the rest go through the kernels below. */
    const int nt = eng__qgemm_tile_avx2(t, W, row_bytes, X, ldxb, Y, ldy, M, N, K, acc);
    W = (const uint8_t *)W + (size_t)nt * row_bytes;
    Y += nt;
    N -= nt;
    if (!fn4) {
        eng__qgemm_with(fn, W, row_bytes, X, ldxb, Y, ldy, M, N, K, acc);
        return;
    }
    const int nb = K / 32;
    for (int m0 = 0; m0 < M; m0 += 8) {
        const int m1 = BASE_MIN(M, m0 + 8);
        for (int n = 0; n < N; n++) {
            const uint8_t *w = (const uint8_t *)W + (size_t)n * row_bytes;
            int m = m0;
            for (; m + 4 <= m1; m += 4) {
                float v[4];
                fn4(w, X + (int64_t)m * ldxb, ldxb, nb, v);
                for (int r = 0; r < 4; r++) {
                    float *y = Y + (int64_t)(m + r) * ldy + n;
                    *y = acc ? *y + v[r] : v[r];
                }
            }
            for (; m < m1; m++) {
                const float v = fn(w, X + (int64_t)m * ldxb, nb);
                float *y = Y + (int64_t)m * ldy + n;
                *y = acc ? *y + v : v;
            }
        }
    }
}
void eng__quantize_act(const float *x, int k, eng__q8a *out) {
    static int avx2 = -1;
    if (avx2 < 0)
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0; /* benign race: same value */
    if (avx2)
        eng__quantize_act_avx2(x, k, out);
    else
        eng__quantize_act_c(x, k, out);
}
#else
void eng__quantize_act(const float *x, int k, eng__q8a *out) { eng__quantize_act_c(x, k, out); }

void eng__qgemm_avx2(eng_dtype t, const void *W, size_t row_bytes, const eng__q8a *X, int ldxb,
                     float *Y, int ldy, int M, int N, int K, bool acc) {
    eng__qgemm_portable(t, W, row_bytes, X, ldxb, Y, ldy, M, N, K, acc);
}
#endif
