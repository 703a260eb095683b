/* CPU kernels: dot products, axpy, exp, weight-tile conversion and the
 * register-tiled matrix kernel, each in a portable version and an AVX2+FMA
 * version compiled with a target attribute and picked at run time. */
#include "cpu_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "transpose512.h"
#define ENG__X86 1
#endif

/* ---- portable ---------------------------------------------------------------- */

static float eng__dot_portable(const float *a, const float *b, int n) {
    /* Eight partial sums let the compiler vectorise and shorten the dependency chain. */
    float s[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++)
            s[j] += a[i + j] * b[i + j];
    float t = 0;
    for (; i < n; i++)
        t += a[i] * b[i];
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7])) + t;
}

static void eng__axpy_portable(float *y, float a, const float *x, int n) {
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
}

static void eng__convert_portable(const eng_tensor *w, int64_t row0, int nrows, float *out) {
    const int64_t K = w->cols;
    const int64_t off = row0 * K;
    const int64_t n = (int64_t)nrows * K;
    if (w->dtype == ENG_BF16) {
        const uint16_t *s = (const uint16_t *)w->data + off;
        uint32_t *o = (uint32_t *)out;
        for (int64_t i = 0; i < n; i++)
            o[i] = (uint32_t)s[i] << 16;
    } else if (w->dtype == ENG_F16) {
        const uint16_t *s = (const uint16_t *)w->data + off;
        for (int64_t i = 0; i < n; i++)
            out[i] = eng__f16_to_f32(s[i]);
    } else {
        memcpy(out, (const float *)w->data + off, (size_t)n * sizeof(float));
    }
}

/* Y[m, n] (+)= X[m, :] . W[n, :] on a converted tile; W rows contiguous (ld = K). */
static void eng__gemm_portable(const float *X, int ldx, const float *W, int ldw, float *Y, int ldy,
                               int M, int N, int K, bool acc) {
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float v = eng__dot_portable(X + (int64_t)m * ldx, W + (int64_t)n * ldw, K);
            Y[(int64_t)m * ldy + n] = acc ? Y[(int64_t)m * ldy + n] + v : v;
        }
}

static void eng__pv_portable(const float *P, int ldp, int nq, int len, const float *V, int ldv,
                             float *O, int ldo, int hd) {
    for (int i = 0; i < nq; i++) {
        float *o = O + (int64_t)i * ldo;
        memset(o, 0, (size_t)hd * sizeof(float));
        for (int j = 0; j < len; j++) {
            const float p = P[(int64_t)i * ldp + j];
            if (p != 0.0f)
                eng__axpy_portable(o, p, V + (int64_t)j * ldv, hd);
        }
    }
}

static void eng__log_portable(float *x, int n) {
    for (int i = 0; i < n; i++)
        x[i] = logf(x[i]);
}

/* Natural exponential, elementwise in place. */
static void eng__exp_portable(float *x, int n) {
    for (int i = 0; i < n; i++)
        x[i] = expf(x[i]);
}

/* p = exp(l - mx) and sums[0] += sum p, sums[1] += sum p max(l - mx, -1e30)
 * (a -inf logit, p = 0, adds nothing). Float sums over chunks of 1,024 (at
 * most 128 terms a lane in the vector paths), added up in double. */
static inline void eng__softmax_sums_scalar(const float *l, float *p, int i0, int i1, float mx,
                                            float *z, float *pl) {
    for (int i = i0; i < i1; i++) {
        const float d = l[i] - mx, e = expf(d);
        p[i] = e;
        *z += e;
        *pl += e * (d > -1e30f ? d : -1e30f);
    }
}

static void eng__softmax_sums_portable(const float *l, float *p, int n, float mx, double sums[2]) {
    for (int c0 = 0; c0 < n; c0 += 1024) {
        float z = 0, pl = 0;
        eng__softmax_sums_scalar(l, p, c0, c0 + 1024 < n ? c0 + 1024 : n, mx, &z, &pl);
        sums[0] += z;
        sums[1] += pl;
    }
}

/* ---- AVX2 + FMA ------------------------------------------------------------------ */
#ifdef ENG__X86
#define ENG__AVX2 __attribute__((target("avx2,fma,f16c")))

ENG__AVX2 static inline float eng__hsum256(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

ENG__AVX2 static float eng__dot_avx2(const float *a, const float *b, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float t = eng__hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        t += a[i] * b[i];
    return t;
}

ENG__AVX2 static void eng__axpy_avx2(float *y, float a, const float *x, int n) {
    __m256 va = _mm256_set1_ps(a);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i,
                         _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++)
        y[i] += a * x[i];
}

ENG__AVX2 static void eng__convert_avx2(const eng_tensor *w, int64_t row0, int nrows, float *out) {
    const int64_t K = w->cols;
    const int64_t n = (int64_t)nrows * K;
    if (w->dtype == ENG_BF16) {
        const uint16_t *s = (const uint16_t *)w->data + row0 * K;
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
            _mm256_storeu_si256((__m256i *)(out + i), _mm256_slli_epi32(v, 16));
        }
        for (; i < n; i++)
            out[i] = eng__bf16_to_f32(s[i]);
    } else if (w->dtype == ENG_F16) {
        const uint16_t *s = (const uint16_t *)w->data + row0 * K;
        int64_t i = 0;
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
        for (; i < n; i++)
            out[i] = eng__f16_to_f32(s[i]);
    } else {
        memcpy(out, (const float *)w->data + row0 * K, (size_t)n * sizeof(float));
    }
}

/* 3 x 4 register tile: 12 accumulators, 3 X vectors and 1 W vector = 16 ymm. */
ENG__AVX2 static void eng__gemm_avx2(const float *X, int ldx, const float *W, int ldw, float *Y,
                                     int ldy, int M, int N, int K, bool acc) {
    const int K8 = K & ~7;
    int m = 0;
    for (; m + 3 <= M; m += 3) {
        const float *x0 = X + (int64_t)m * ldx, *x1 = x0 + ldx, *x2 = x1 + ldx;
        int n = 0;
        for (; n + 4 <= N; n += 4) {
            const float *w0 = W + (int64_t)n * ldw, *w1 = w0 + ldw, *w2 = w1 + ldw, *w3 = w2 + ldw;
            __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c03 = c00;
            __m256 c10 = c00, c11 = c00, c12 = c00, c13 = c00;
            __m256 c20 = c00, c21 = c00, c22 = c00, c23 = c00;
            for (int k = 0; k < K8; k += 8) {
                __m256 a0 = _mm256_loadu_ps(x0 + k), a1 = _mm256_loadu_ps(x1 + k),
                       a2 = _mm256_loadu_ps(x2 + k);
                __m256 b = _mm256_loadu_ps(w0 + k);
                c00 = _mm256_fmadd_ps(a0, b, c00);
                c10 = _mm256_fmadd_ps(a1, b, c10);
                c20 = _mm256_fmadd_ps(a2, b, c20);
                b = _mm256_loadu_ps(w1 + k);
                c01 = _mm256_fmadd_ps(a0, b, c01);
                c11 = _mm256_fmadd_ps(a1, b, c11);
                c21 = _mm256_fmadd_ps(a2, b, c21);
                b = _mm256_loadu_ps(w2 + k);
                c02 = _mm256_fmadd_ps(a0, b, c02);
                c12 = _mm256_fmadd_ps(a1, b, c12);
                c22 = _mm256_fmadd_ps(a2, b, c22);
                b = _mm256_loadu_ps(w3 + k);
                c03 = _mm256_fmadd_ps(a0, b, c03);
                c13 = _mm256_fmadd_ps(a1, b, c13);
                c23 = _mm256_fmadd_ps(a2, b, c23);
            }
            float r[12] = {eng__hsum256(c00), eng__hsum256(c01), eng__hsum256(c02),
                           eng__hsum256(c03), eng__hsum256(c10), eng__hsum256(c11),
                           eng__hsum256(c12), eng__hsum256(c13), eng__hsum256(c20),
                           eng__hsum256(c21), eng__hsum256(c22), eng__hsum256(c23)};
            for (int k = K8; k < K; k++)
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 4; j++)
                        r[i * 4 + j] +=
                            X[(int64_t)(m + i) * ldx + k] * W[(int64_t)(n + j) * ldw + k];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 4; j++) {
                    float *y = Y + (int64_t)(m + i) * ldy + n + j;
                    *y = acc ? *y + r[i * 4 + j] : r[i * 4 + j];
                }
        }
        for (; n < N; n++)
            for (int i = 0; i < 3; i++) {
                float v = eng__dot_avx2(X + (int64_t)(m + i) * ldx, W + (int64_t)n * ldw, K);
                float *y = Y + (int64_t)(m + i) * ldy + n;
                *y = acc ? *y + v : v;
            }
    }
    for (; m < M; m++)
        for (int n = 0; n < N; n++) {
            float v = eng__dot_avx2(X + (int64_t)m * ldx, W + (int64_t)n * ldw, K);
            float *y = Y + (int64_t)m * ldy + n;
            *y = acc ? *y + v : v;
        }
}

/* exp(x) for a vector: range reduction x = n ln2 + r, |r| <= ln2/2, then a
 * degree-6 polynomial for e^r (relative error ~2e-7) and 2^n built in the
 * exponent bits. Inputs below -87.3 give 0, above 88.7 give +inf. */
ENG__AVX2 static inline __m256 eng__exp256(__m256 x) {
    const __m256 hi = _mm256_set1_ps(88.7f), lo = _mm256_set1_ps(-87.3f);
    __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    __m256 over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
    x = _mm256_max_ps(_mm256_min_ps(x, hi), lo);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* n in [-126, 128]: scale in two halves so that 2^128 does not overflow the exponent. */
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i h1 = _mm256_srai_epi32(ni, 1), h2 = _mm256_sub_epi32(ni, h1);
    __m256 s1 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h1, _mm256_set1_epi32(127)), 23));
    __m256 s2 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h2, _mm256_set1_epi32(127)), 23));
    p = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
    p = _mm256_andnot_ps(under, p);
    return _mm256_blendv_ps(p, _mm256_set1_ps(INFINITY), over);
}

ENG__AVX2 static void eng__pv_avx2(const float *P, int ldp, int nq, int len, const float *V,
                                   int ldv, float *O, int ldo, int hd) {
    for (int i = 0; i < nq; i++) {
        float *o = O + (int64_t)i * ldo;
        memset(o, 0, (size_t)hd * sizeof(float));
        for (int j = 0; j < len; j++) {
            const float p = P[(int64_t)i * ldp + j];
            if (p != 0.0f)
                eng__axpy_avx2(o, p, V + (int64_t)j * ldv, hd);
        }
    }
}

ENG__AVX2 static void eng__softmax_sums_avx2(const float *l, float *p, int n, float mx,
                                             double sums[2]) {
    const __m256 vm = _mm256_set1_ps(mx), floor = _mm256_set1_ps(-1e30f);
    for (int c0 = 0; c0 < n; c0 += 1024) {
        const int c1 = c0 + 1024 < n ? c0 + 1024 : n;
        __m256 z0 = _mm256_setzero_ps(), z1 = z0, q0 = z0, q1 = z0;
        int i = c0;
        for (; i + 16 <= c1; i += 16) {
            const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(l + i), vm);
            const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(l + i + 8), vm);
            const __m256 e0 = eng__exp256(d0), e1 = eng__exp256(d1);
            _mm256_storeu_ps(p + i, e0);
            _mm256_storeu_ps(p + i + 8, e1);
            z0 = _mm256_add_ps(z0, e0);
            z1 = _mm256_add_ps(z1, e1);
            q0 = _mm256_fmadd_ps(e0, _mm256_max_ps(d0, floor), q0);
            q1 = _mm256_fmadd_ps(e1, _mm256_max_ps(d1, floor), q1);
        }
        float z = eng__hsum256(_mm256_add_ps(z0, z1)), pl = eng__hsum256(_mm256_add_ps(q0, q1));
        eng__softmax_sums_scalar(l, p, i, c1, mx, &z, &pl);
        sums[0] += z;
        sums[1] += pl;
    }
}

ENG__AVX2 static void eng__exp_avx2(float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, eng__exp256(_mm256_loadu_ps(x + i)));
    for (; i < n; i++)
        x[i] = expf(x[i]);
}

/* ln(x), the AVX-512 path's method (eng__log512 below) with the exponent and
 * mantissa taken from the bits: x = 2^e m, m in [1, 2), halved above sqrt(2);
 * ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), by the odd series to s^11. The
 * same operations as eng__log512, so both paths should give the same bits. Lanes
 * outside the normal range (zero, subnormal, inf, NaN) leave the vector to
 * logf. It was libm's scalar logf: 3 % of a 0.5B hole step, in the entropy. */
ENG__AVX2 static void eng__log_avx2(float *x, int n) {
    const __m256 lo = _mm256_set1_ps(1.17549435e-38f), hi = _mm256_set1_ps(3.40282347e+38f);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 ok =
            _mm256_and_ps(_mm256_cmp_ps(v, lo, _CMP_GE_OQ), _mm256_cmp_ps(v, hi, _CMP_LE_OQ));
        if (_mm256_movemask_ps(ok) != 0xFF) {
            for (int k = 0; k < 8; k++)
                x[i + k] = logf(x[i + k]);
            continue;
        }
        const __m256i b = _mm256_castps_si256(v);
        __m256 e =
            _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(127)));
        __m256 m = _mm256_castsi256_ps(_mm256_or_si256(
            _mm256_and_si256(b, _mm256_set1_epi32(0x007FFFFF)), _mm256_set1_epi32(0x3F800000)));
        const __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
        m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
        e = _mm256_blendv_ps(e, _mm256_add_ps(e, _mm256_set1_ps(1.0f)), big);
        const __m256 s = _mm256_div_ps(_mm256_sub_ps(m, _mm256_set1_ps(1.0f)),
                                       _mm256_add_ps(m, _mm256_set1_ps(1.0f)));
        const __m256 s2 = _mm256_mul_ps(s, s);
        __m256 p = _mm256_set1_ps(2.0f / 11);
        p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(2.0f / 9));
        p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(2.0f / 7));
        p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(2.0f / 5));
        p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(2.0f / 3));
        p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(2.0f));
        _mm256_storeu_ps(
            x + i, _mm256_fmadd_ps(e, _mm256_set1_ps(0.693147180559945f), _mm256_mul_ps(p, s)));
    }
    for (; i < n; i++)
        x[i] = logf(x[i]);
}
/* ---- AVX-512 ------------------------------------------------------------------------ */
#define ENG__AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))

ENG__AVX512 static float eng__dot_avx512(const float *a, const float *b, int n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    for (; i < n; i += 16) {
        __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i), s0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

ENG__AVX512 static void eng__axpy_avx512(float *y, float a, const float *x, int n) {
    __m512 va = _mm512_set1_ps(a);
    for (int i = 0; i < n; i += 16) {
        __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(
            y + i, k,
            _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(k, x + i), _mm512_maskz_loadu_ps(k, y + i)));
    }
}

ENG__AVX512 static void eng__convert_avx512(const eng_tensor *w, int64_t row0, int nrows,
                                            float *out) {
    const int64_t K = w->cols;
    const int64_t n = (int64_t)nrows * K;
    if (w->dtype == ENG_BF16) {
        const uint16_t *s = (const uint16_t *)w->data + row0 * K;
        int64_t i = 0;
        for (; i + 16 <= n; i += 16) {
            __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(s + i)));
            _mm512_storeu_si512((void *)(out + i), _mm512_slli_epi32(v, 16));
        }
        for (; i < n; i++)
            out[i] = eng__bf16_to_f32(s[i]);
    } else if (w->dtype == ENG_F16) {
        const uint16_t *s = (const uint16_t *)w->data + row0 * K;
        int64_t i = 0;
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(out + i,
                             _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(s + i))));
        for (; i < n; i++)
            out[i] = eng__f16_to_f32(s[i]);
    } else {
        memcpy(out, (const float *)w->data + row0 * K, (size_t)n * sizeof(float));
    }
}

/* Memory to prefetch into L2 while the AVX-512 kernels compute, one line
 * per step of their k loop: `rows` rows of `bytes` bytes, `ld` bytes apart
 * (one row for a contiguous range). The next part of the weights, so that
 * their conversion or packing reads L2 instead of waiting on memory. Per
 * thread; set by eng__prefetch_rows, walked by eng__pr_step. */
static _Thread_local const char *eng__pr_base;
static _Thread_local size_t eng__pr_ld, eng__pr_bytes, eng__pr_off;
static _Thread_local int eng__pr_rows, eng__pr_row;

static void eng__prefetch_rows_x86(const void *p, size_t ld, int rows, size_t bytes) {
    eng__pr_base = p;
    eng__pr_ld = ld;
    eng__pr_rows = p ? rows : 0;
    eng__pr_bytes = bytes;
    eng__pr_row = 0;
    eng__pr_off = 0;
}

/* The walk in a kernel's locals: loaded before its k loop, stepped in it,
 * stored back after it. */
typedef struct eng__pr_walk {
    const char *base;
    size_t ld, bytes, off;
    int rows, row;
} eng__pr_walk;

static inline eng__pr_walk eng__pr_load(void) {
    return (eng__pr_walk){eng__pr_base, eng__pr_ld,   eng__pr_bytes,
                          eng__pr_off,  eng__pr_rows, eng__pr_row};
}

static inline void eng__pr_store(const eng__pr_walk *w) {
    eng__pr_row = w->row;
    eng__pr_off = w->off;
}

static inline void eng__pr_step(eng__pr_walk *w) {
    if (w->row < w->rows) {
        _mm_prefetch(w->base + (size_t)w->row * w->ld + w->off, _MM_HINT_T1);
        w->off += 64;
        if (w->off >= w->bytes) {
            w->off = 0;
            w->row++;
        }
    }
}

/* The sums of a, b and c in lanes 0, 1, 2 (lane 3: 0): one shuffle-and-add
 * tree for the three, about half the shuffles of three separate reductions. */
ENG__AVX512 static inline __m128 eng__hsum3_512(__m512 a, __m512 b, __m512 c) {
    const __m512 z = _mm512_setzero_ps();
    /* per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3] and the same for c and 0 */
    __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
    __m512 cz = _mm512_add_ps(_mm512_unpacklo_ps(c, z), _mm512_unpackhi_ps(c, z));
    /* per lane: [a, b, c, 0] partial sums */
    __m512 u = _mm512_add_ps(_mm512_shuffle_ps(ab, cz, 0x44), _mm512_shuffle_ps(ab, cz, 0xEE));
    /* add the four 128-bit lanes */
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(u),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(u), 1)));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/* R x 3 register tile (R <= 8 rows of X, 3 rows of W): up to 24 accumulators
 * + 3 W vectors + 1 X vector = 28 zmm. Per 16-wide k step: R + 3 loads for 3R
 * FMAs; the K tail uses masked loads. R is a constant after inlining, so the
 * rows >= R and their accumulators vanish. */
ENG__AVX512 static inline __attribute__((always_inline)) void
eng__gemm512_rows(const int R, const float *x, int ldx, const float *W, int ldw, float *Y, int ldy,
                  int N, int K, bool acc) {
    int n = 0;
    for (; n + 3 <= N; n += 3) {
        const float *w0 = W + (int64_t)n * ldw, *w1 = w0 + ldw, *w2 = w1 + ldw;
        /* Named accumulators: an indexed array would be spilled to the stack. */
#define ENG__DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = c##i##0, c##i##2 = c##i##0
        ENG__DECL(0);
        ENG__DECL(1);
        ENG__DECL(2);
        ENG__DECL(3);
        ENG__DECL(4);
        ENG__DECL(5);
        ENG__DECL(6);
        ENG__DECL(7);
#undef ENG__DECL
        eng__pr_walk pw = eng__pr_load();
        for (int k = 0; k < K; k += 16) {
            eng__pr_step(&pw);
            __mmask16 km = K - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1);
            __m512 b0 = _mm512_maskz_loadu_ps(km, w0 + k), b1 = _mm512_maskz_loadu_ps(km, w1 + k),
                   b2 = _mm512_maskz_loadu_ps(km, w2 + k);
#define ENG__ROW(i)                                                                                \
    if (R > (i)) {                                                                                 \
        __m512 a = _mm512_maskz_loadu_ps(km, x + (int64_t)(i)*ldx + k);                            \
        c##i##0 = _mm512_fmadd_ps(a, b0, c##i##0);                                                 \
        c##i##1 = _mm512_fmadd_ps(a, b1, c##i##1);                                                 \
        c##i##2 = _mm512_fmadd_ps(a, b2, c##i##2);                                                 \
    }
            ENG__ROW(0)
            ENG__ROW(1)
            ENG__ROW(2)
            ENG__ROW(3)
            ENG__ROW(4)
            ENG__ROW(5)
            ENG__ROW(6)
            ENG__ROW(7)
#undef ENG__ROW
        }
        eng__pr_store(&pw);
#define ENG__OUT(i)                                                                                \
    if (R > (i)) {                                                                                 \
        float *y = Y + (int64_t)(i)*ldy + n;                                                       \
        float v[4];                                                                                \
        _mm_storeu_ps(v, eng__hsum3_512(c##i##0, c##i##1, c##i##2));                               \
        y[0] = acc ? y[0] + v[0] : v[0];                                                           \
        y[1] = acc ? y[1] + v[1] : v[1];                                                           \
        y[2] = acc ? y[2] + v[2] : v[2];                                                           \
    }
        ENG__OUT(0)
        ENG__OUT(1)
        ENG__OUT(2)
        ENG__OUT(3)
        ENG__OUT(4)
        ENG__OUT(5)
        ENG__OUT(6)
        ENG__OUT(7)
#undef ENG__OUT
    }
    for (; n < N; n++)
        for (int i = 0; i < R; i++) {
            float v = eng__dot_avx512(x + (int64_t)i * ldx, W + (int64_t)n * ldw, K);
            float *y = Y + (int64_t)i * ldy + n;
            *y = acc ? *y + v : v;
        }
}

/* One K chunk of eng__gemm_avx512, over every row block. */
ENG__AVX512 static void eng__gemm_avx512_k(const float *X, int ldx, const float *W, int ldw,
                                           float *Y, int ldy, int M, int N, int K, bool acc) {
    const int nblk = (M + 7) / 8;
    int m = 0;
    for (int b = 0; b < nblk; b++) {
        const int R = (M - m) / (nblk - b) + ((M - m) % (nblk - b) != 0);
        const float *x = X + (int64_t)m * ldx;
        float *y = Y + (int64_t)m * ldy;
        switch (R) {
#define ENG__CASE(r)                                                                               \
    case r:                                                                                        \
        eng__gemm512_rows(r, x, ldx, W, ldw, y, ldy, N, K, acc);                                   \
        break;
            ENG__CASE(1)
            ENG__CASE(2)
            ENG__CASE(3)
            ENG__CASE(4)
            ENG__CASE(5)
            ENG__CASE(6)
            ENG__CASE(7)
            ENG__CASE(8)
#undef ENG__CASE
        }
        m += R;
    }
}

/* Rows are split into ceil(M / 8) blocks of near-equal size (33 -> 7,7,7,6,6),
 * so that no block is a slow single row. A long K (the MLP down projection,
 * K = d_ff) is cut into near-equal chunks of at most ENG__KC so that a block's
 * X rows (8 x ENG__KC floats) stay in L1 while the weight tile streams from
 * L2; every chunk after the first accumulates into Y. */
enum { ENG__KC = 1024 };
ENG__AVX512 static void eng__gemm_avx512(const float *X, int ldx, const float *W, int ldw, float *Y,
                                         int ldy, int M, int N, int K, bool acc) {
    const int nkc = (K + ENG__KC - 1) / ENG__KC;
    const int kc = ((K + nkc - 1) / nkc + 15) & ~15;
    for (int k0 = 0; k0 < K; k0 += kc)
        eng__gemm_avx512_k(X + k0, ldx, W + k0, ldw, Y, ldy, M, N, BASE_MIN(kc, K - k0),
                           acc || k0 > 0);
}

/* ---- the outer-product path (BF16 weights, few rows) ----
 * The dot-product kernel above sums 16 lanes of one (row, weight row) pair
 * and reduces them at the end; here each lane is its own output: a weight
 * vector holds 16 weight rows at one k (a panel), each X value is broadcast,
 * and R x NP accumulators (R <= 8 rows, NP <= 3 panels) take one FMA per
 * vector and k, with no reduction and one load per FMA group. On a hot tile
 * it ran ~1.6x the dot-product kernel's rate (105 against 64 G/s, one core of
 * a Sapphire Rapids Xeon). The panels cost a transpose, done on pairs of
 * bf16 (one 32-bit word): 16 rows x 32 columns per 16 x 16 word transpose. */

/* One whole block of the panels: 16 rows (ld K bf16 apart from s) by the 32
 * columns from k, into P's slots for columns k to k + 31. The 16 x 16 word
 * transpose is done with half of its shuffles on the load side: register
 * A[g] takes the 16 bytes (four words, k + 8q to k + 8q + 7) of rows g, 4 + g,
 * 8 + g and 12 + g in its four 128-bit lanes (inserts from memory, which run
 * on two ports, not the one port of the cross-lane shuffles), so that a 4 x 4
 * transpose inside each lane leaves row 4L + g's word in lane slot 4L + g,
 * i.e. slot j = row j. The same bits as the general path (test_panels), at
 * ~0.09 ns per weight against ~0.14 (a packing microbenchmark, 48 rows x 128
 * columns in L1). */
ENG__AVX512 static inline void eng__panel_block512(const uint16_t *s, int64_t K, int k, float *P) {
    const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
    for (int q = 0; q < 4; q++) {
        __m512i A[4];
        for (int g = 0; g < 4; g++) {
            const uint16_t *r = s + (int64_t)g * K + k + 8 * q;
            __m512i a = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)r));
            a = _mm512_inserti32x4(a, _mm_loadu_si128((const __m128i *)(r + 4 * K)), 1);
            a = _mm512_inserti32x4(a, _mm_loadu_si128((const __m128i *)(r + 8 * K)), 2);
            A[g] = _mm512_inserti32x4(a, _mm_loadu_si128((const __m128i *)(r + 12 * K)), 3);
        }
        const __m512i t0 = _mm512_unpacklo_epi32(A[0], A[1]),
                      t1 = _mm512_unpackhi_epi32(A[0], A[1]);
        const __m512i t2 = _mm512_unpacklo_epi32(A[2], A[3]),
                      t3 = _mm512_unpackhi_epi32(A[2], A[3]);
        const __m512i o[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2),
                              _mm512_unpacklo_epi64(t1, t3), _mm512_unpackhi_epi64(t1, t3)};
        /* o[t]: slot j = the pair 4q + t of row j (low half column k + 2(4q + t)). */
        for (int t = 0; t < 4; t++) {
            const int c = k + 2 * (4 * q + t);
            _mm512_store_ps(P + (size_t)c * 16, _mm512_castsi512_ps(_mm512_slli_epi32(o[t], 16)));
            _mm512_store_ps(P + (size_t)(c + 1) * 16,
                            _mm512_castsi512_ps(_mm512_and_si512(o[t], hi)));
        }
    }
}

ENG__AVX512 static void eng__panels_avx512(const eng_tensor *w, int64_t row0, int nrows, int k0,
                                           int kc, float *out) {
    const int64_t K = w->cols;
    const uint16_t *src = (const uint16_t *)w->data + row0 * K + k0;
    const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
    for (int p = 0; p * 16 < nrows; p++) {
        const int rows = BASE_MIN(16, nrows - 16 * p);
        float *P = out + (size_t)p * kc * 16;
        for (int k = 0; k < kc; k += 32) {
            if (rows == 16 && kc - k >= 32) {
                eng__panel_block512(src + (int64_t)16 * p * K, K, k, P);
                continue;
            }
            /* Row j's 32 bf16 as 16 words (k + 2i, k + 2i + 1); columns past kc are 0. */
            const int left = kc - k;
            const __mmask16 km =
                left >= 32 ? (__mmask16)0xffff : (__mmask16)((1u << (left / 2)) - 1);
            __m512 r[16];
            for (int j = 0; j < 16; j++)
                r[j] = j < rows ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi32(
                                      km, src + (int64_t)(16 * p + j) * K + k))
                                : _mm512_setzero_ps();
            if (left < 32 && left % 2) /* an odd tail: the last word's high half is past kc */
                for (int j = 0; j < rows; j++)
                    r[j] = _mm512_castsi512_ps(_mm512_mask_blend_epi32(
                        (__mmask16)(1u << (left / 2)), _mm512_castps_si512(r[j]),
                        _mm512_set1_epi32(src[(int64_t)(16 * p + j) * K + k + left - 1])));
            eng__transpose16_512(r);
            /* r[i]: lane j = the pair i of row j; low half k + 2i, high half k + 2i + 1. */
            for (int i = 0; i < 16 && k + 2 * i < kc; i++) {
                const __m512i v = _mm512_castps_si512(r[i]);
                _mm512_store_ps(P + (size_t)(k + 2 * i) * 16,
                                _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)));
                if (k + 2 * i + 1 < kc)
                    _mm512_store_ps(P + (size_t)(k + 2 * i + 1) * 16,
                                    _mm512_castsi512_ps(_mm512_and_si512(v, hi)));
            }
        }
    }
}

#define ENG__GP(R, NP)                                                                             \
    ENG__AVX512 static void eng__gp512_##R##_##NP(const float *x, int ldx, const float *P, int K,  \
                                                  float *Y, int ldy, __mmask16 last, bool acc) {   \
        __m512 c[R][NP];                                                                           \
        _Pragma("GCC unroll 8") for (int i = 0; i < R; i++)                                        \
            _Pragma("GCC unroll 3") for (int p = 0; p < NP; p++) c[i][p] = _mm512_setzero_ps();    \
        eng__pr_walk pw = eng__pr_load(); /* one line every other k */                             \
        for (int k = 0; k < K; k++) {                                                              \
            if ((k & 1) == 0)                                                                      \
                eng__pr_step(&pw);                                                                 \
            __m512 w[NP];                                                                          \
            _Pragma("GCC unroll 3") for (int p = 0; p < NP; p++) w[p] =                            \
                _mm512_load_ps(P + ((size_t)p * K + k) * 16);                                      \
            _Pragma("GCC unroll 8") for (int i = 0; i < R; i++) {                                  \
                const __m512 a = _mm512_set1_ps(x[(int64_t)i * ldx + k]);                          \
                _Pragma("GCC unroll 3") for (int p = 0; p < NP; p++) c[i][p] =                     \
                    _mm512_fmadd_ps(a, w[p], c[i][p]);                                             \
            }                                                                                      \
        }                                                                                          \
        eng__pr_store(&pw);                                                                        \
        _Pragma("GCC unroll 8") for (int i = 0; i < R; i++)                                        \
            _Pragma("GCC unroll 3") for (int p = 0; p < NP; p++) {                                 \
            const __mmask16 mk = p == NP - 1 ? last : (__mmask16)0xffff;                           \
            float *y = Y + (int64_t)i * ldy + 16 * p;                                              \
            _mm512_mask_storeu_ps(                                                                 \
                y, mk, acc ? _mm512_add_ps(_mm512_maskz_loadu_ps(mk, y), c[i][p]) : c[i][p]);      \
        }                                                                                          \
    }
#define ENG__GP3(R) ENG__GP(R, 1) ENG__GP(R, 2) ENG__GP(R, 3)
ENG__GP3(1)
ENG__GP3(2)
ENG__GP3(3)
ENG__GP3(4)
ENG__GP3(5)
ENG__GP3(6)
ENG__GP3(7)
ENG__GP3(8)
#undef ENG__GP3
#undef ENG__GP

typedef void (*eng__gp_fn)(const float *, int, const float *, int, float *, int, __mmask16, bool);
static const eng__gp_fn eng__gp512[8][3] = {
#define ENG__ROWFN(R)                                                                              \
    { eng__gp512_##R##_1, eng__gp512_##R##_2, eng__gp512_##R##_3 }
    ENG__ROWFN(1), ENG__ROWFN(2), ENG__ROWFN(3), ENG__ROWFN(4),
    ENG__ROWFN(5), ENG__ROWFN(6), ENG__ROWFN(7), ENG__ROWFN(8),
#undef ENG__ROWFN
};

/* Rows in ceil(M / 8) near-equal blocks (34 -> 7, 7, 7, 7, 6), columns in
 * groups of three panels (48 weight rows), the last group's last panel
 * masked to N. */
ENG__AVX512 static void eng__gemm_panels_avx512(const float *X, int ldx, const float *P, int K,
                                                float *Y, int ldy, int M, int N, bool acc) {
    const int npan = (N + 15) / 16;
    for (int p0 = 0; p0 < npan; p0 += 3) {
        const int np = BASE_MIN(3, npan - p0);
        const int cols = BASE_MIN(N - 16 * p0, 16 * np);
        const int rem = cols - 16 * (np - 1);
        const __mmask16 last = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
        const int nblk = (M + 7) / 8;
        int m = 0;
        for (int b = 0; b < nblk; b++) {
            const int R = (M - m) / (nblk - b) + ((M - m) % (nblk - b) != 0);
            eng__gp512[R - 1][np - 1](X + (int64_t)m * ldx, ldx, P + (size_t)p0 * K * 16, K,
                                      Y + (int64_t)m * ldy + 16 * p0, ldy, last, acc);
            m += R;
        }
    }
}

/* Four query rows at a time share each V row: 4 x 4 accumulators per 64 columns. */
ENG__AVX512 static void eng__pv_avx512(const float *P, int ldp, int nq, int len, const float *V,
                                       int ldv, float *O, int ldo, int hd) {
    for (int c0 = 0; c0 < hd; c0 += 64) {
        const int w = hd - c0 < 64 ? hd - c0 : 64;
        __mmask16 mk[4];
        for (int v = 0; v < 4; v++) {
            int left = w - 16 * v;
            mk[v] = left >= 16  ? (__mmask16)0xffff
                    : left <= 0 ? (__mmask16)0
                                : (__mmask16)((1u << left) - 1);
        }
        int i = 0;
        for (; i + 4 <= nq; i += 4) {
            __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
            __m512 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
            __m512 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
            __m512 a30 = a00, a31 = a00, a32 = a00, a33 = a00;
            const float *p0 = P + (int64_t)i * ldp;
            for (int j = 0; j < len; j++) {
                const float *vr = V + (int64_t)j * ldv + c0;
                __m512 v0 = _mm512_maskz_loadu_ps(mk[0], vr),
                       v1 = _mm512_maskz_loadu_ps(mk[1], vr + 16),
                       v2 = _mm512_maskz_loadu_ps(mk[2], vr + 32),
                       v3 = _mm512_maskz_loadu_ps(mk[3], vr + 48);
#define ENG__PV(r)                                                                                 \
    do {                                                                                           \
        __m512 p = _mm512_set1_ps(p0[(int64_t)(r)*ldp + j]);                                       \
        a##r##0 = _mm512_fmadd_ps(p, v0, a##r##0);                                                 \
        a##r##1 = _mm512_fmadd_ps(p, v1, a##r##1);                                                 \
        a##r##2 = _mm512_fmadd_ps(p, v2, a##r##2);                                                 \
        a##r##3 = _mm512_fmadd_ps(p, v3, a##r##3);                                                 \
    } while (0)
                ENG__PV(0);
                ENG__PV(1);
                ENG__PV(2);
                ENG__PV(3);
#undef ENG__PV
            }
#define ENG__ST(r)                                                                                 \
    do {                                                                                           \
        float *o = O + (int64_t)(i + (r)) * ldo + c0;                                              \
        _mm512_mask_storeu_ps(o, mk[0], a##r##0);                                                  \
        _mm512_mask_storeu_ps(o + 16, mk[1], a##r##1);                                             \
        _mm512_mask_storeu_ps(o + 32, mk[2], a##r##2);                                             \
        _mm512_mask_storeu_ps(o + 48, mk[3], a##r##3);                                             \
    } while (0)
            ENG__ST(0);
            ENG__ST(1);
            ENG__ST(2);
            ENG__ST(3);
#undef ENG__ST
        }
        for (; i < nq; i++) {
            float *o = O + (int64_t)i * ldo + c0;
            memset(o, 0, (size_t)w * sizeof(float));
            for (int j = 0; j < len; j++)
                eng__axpy_avx512(o, P[(int64_t)i * ldp + j], V + (int64_t)j * ldv + c0, w);
        }
    }
}

/* ln(x) for x > 0: x = 2^e m with m in [sqrt(1/2), sqrt(2)), then
 * ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its odd series
 * to s^11 (relative error ~1e-8 before float rounding). */
ENG__AVX512 static inline __m512 eng__log512(__m512 x) {
    __m512 e = _mm512_getexp_ps(x);
    __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
    __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356f), _CMP_GT_OQ);
    m = _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
    e = _mm512_mask_add_ps(e, big, e, _mm512_set1_ps(1.0f));
    __m512 s = _mm512_div_ps(_mm512_sub_ps(m, _mm512_set1_ps(1.0f)),
                             _mm512_add_ps(m, _mm512_set1_ps(1.0f)));
    __m512 s2 = _mm512_mul_ps(s, s);
    __m512 p = _mm512_set1_ps(2.0f / 11);
    p = _mm512_fmadd_ps(p, s2, _mm512_set1_ps(2.0f / 9));
    p = _mm512_fmadd_ps(p, s2, _mm512_set1_ps(2.0f / 7));
    p = _mm512_fmadd_ps(p, s2, _mm512_set1_ps(2.0f / 5));
    p = _mm512_fmadd_ps(p, s2, _mm512_set1_ps(2.0f / 3));
    p = _mm512_fmadd_ps(p, s2, _mm512_set1_ps(2.0f));
    return _mm512_fmadd_ps(e, _mm512_set1_ps(0.693147180559945f), _mm512_mul_ps(p, s));
}

ENG__AVX512 static void eng__log_avx512(float *x, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(x + i, eng__log512(_mm512_loadu_ps(x + i)));
    for (; i < n; i++)
        x[i] = logf(x[i]);
}

ENG__AVX512 static void eng__exp_avx512(float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, eng__exp256(_mm256_loadu_ps(x + i)));
    for (; i < n; i++)
        x[i] = expf(x[i]);
}
#endif

/* ---- table ------------------------------------------------------------------------- */

static const eng__kernels eng__k_portable = {
    .name = "portable",
    .dot = eng__dot_portable,
    .axpy = eng__axpy_portable,
    .convert = eng__convert_portable,
    .gemm = eng__gemm_portable,
    .exp = eng__exp_portable,
    .softmax_sums = eng__softmax_sums_portable,
    .log = eng__log_portable,
    .pv = eng__pv_portable,
    .qgemm = eng__qgemm_portable,
};
#ifdef ENG__X86
static const eng__kernels eng__k_avx2 = {
    .name = "AVX2+FMA",
    .dot = eng__dot_avx2,
    .axpy = eng__axpy_avx2,
    .convert = eng__convert_avx2,
    .gemm = eng__gemm_avx2,
    .exp = eng__exp_avx2,
    .softmax_sums = eng__softmax_sums_avx2,
    .log = eng__log_avx2,
    .pv = eng__pv_avx2,
    .qgemm = eng__qgemm_avx2,
};
static const eng__kernels eng__k_avx512 = {
    .name = "AVX-512",
    .dot = eng__dot_avx512,
    .axpy = eng__axpy_avx512,
    .convert = eng__convert_avx512,
    .gemm = eng__gemm_avx512,
    .exp = eng__exp_avx512,
    .softmax_sums = eng__softmax_sums_avx2, /* its exp is 8 wide there too */
    .log = eng__log_avx512,
    .pv = eng__pv_avx512,
    .panels = eng__panels_avx512,
    .gemm_panels = eng__gemm_panels_avx512,
    .prefetch_rows = eng__prefetch_rows_x86,
    .qgemm = eng__qgemm_avx2, /* the AVX2 int8 kernels: no AVX-512 version written */
};
static const eng__kernels eng__k_avx512_nopf = {
    .name = "AVX-512",
    .dot = eng__dot_avx512,
    .axpy = eng__axpy_avx512,
    .convert = eng__convert_avx512,
    .gemm = eng__gemm_avx512,
    .exp = eng__exp_avx512,
    .softmax_sums = eng__softmax_sums_avx2, /* its exp is 8 wide there too */
    .log = eng__log_avx512,
    .pv = eng__pv_avx512,
    .qgemm = eng__qgemm_avx2,
};
#endif

const eng__kernels *eng__kernels_get(bool allow_simd) {
#ifdef ENG__X86
    if (allow_simd) {
        __builtin_cpu_init();
        const char *want = getenv("INFILLD_CPU_ISA"); /* "avx2" caps the ISA for comparisons */
        if (!(want && strcmp(want, "avx2") == 0) && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
            /* INFILLD_CPU_PREFETCH=0 turns the weight prefetch off (for A/B runs). */
            const char *pf = getenv("INFILLD_CPU_PREFETCH");
            return pf && strcmp(pf, "0") == 0 ? &eng__k_avx512_nopf : &eng__k_avx512;
        }
        /* Every CPU with AVX2 also has F16C (Haswell, Piledriver and later);
         * clang's __builtin_cpu_supports cannot test it. */
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            return &eng__k_avx2;
    }
#else
    (void)allow_simd;
#endif
    return &eng__k_portable;
}

const eng__kernels *eng__kernels_named(const char *name) {
    if (strcmp(name, "portable") == 0)
        return &eng__k_portable;
#ifdef ENG__X86
    __builtin_cpu_init();
    if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return &eng__k_avx2;
    if (strcmp(name, "avx512") == 0 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return &eng__k_avx512;
#endif
    return NULL;
}

const char *eng_cpu_kernels_name(void) { return eng__kernels_get(true)->name; }

bool eng_cpu_amx(void) {
    return strcmp(eng__kernels_get(true)->name, "AVX-512") == 0 && eng__amx_available();
}
