/* CPU kernels: dot products, axpy, exp, weight-tile conversion and the
 * register-tiled matrix kernel, each in a portable version and an AVX2+FMA
 * version compiled with a target attribute and picked at run time. */
#include "cpu_impl.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
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

/* Natural exponential, elementwise in place. */
static void eng__exp_portable(float *x, int n) {
    for (int i = 0; i < n; i++)
        x[i] = expf(x[i]);
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

ENG__AVX2 static void eng__exp_avx2(float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, eng__exp256(_mm256_loadu_ps(x + i)));
    for (; i < n; i++)
        x[i] = expf(x[i]);
}
#endif

/* ---- table ------------------------------------------------------------------------- */

static const eng__kernels eng__k_portable = {
    "portable",         eng__dot_portable, eng__axpy_portable, eng__convert_portable,
    eng__gemm_portable, eng__exp_portable,
};
#ifdef ENG__X86
static const eng__kernels eng__k_avx2 = {
    "AVX2+FMA", eng__dot_avx2, eng__axpy_avx2, eng__convert_avx2, eng__gemm_avx2, eng__exp_avx2,
};
#endif

const eng__kernels *eng__kernels_get(bool allow_simd) {
#ifdef ENG__X86
    if (allow_simd) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
            __builtin_cpu_supports("f16c"))
            return &eng__k_avx2;
    }
#else
    (void)allow_simd;
#endif
    return &eng__k_portable;
}
