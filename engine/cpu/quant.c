/* Quantised weight blocks: ggml's published layouts (ggml-common.h) and their
 * dequantisation, written to give the same float32 values bit for bit as
 * ggml's dequantize_row_* (same operations in the same order; the build is
 * ISO C11, so no contraction into FMAs).
 *
 *   Q8_0  32 values: f16 d, int8 qs[32]                  x = d * q
 *   Q4_0  32 values: f16 d, u8 qs[16]                    x = d * (nibble - 8); low nibbles
 *                                                        are values 0..15, high 16..31
 *   Q4_K  256 values: f16 d, f16 dmin, u8 scales[12] (eight 6-bit scale/min pairs),
 *         u8 qs[128]                                     x = d*sc * q - dmin*m per 32
 *   Q5_K  as Q4_K plus u8 qh[32] (fifth bit) before qs
 *   Q6_K  256 values: u8 ql[128], u8 qh[64], int8 scales[16], f16 d
 *                                                        x = d * sc * (q - 32) per 16 */
#include "engine_impl.h"

#include <assert.h>
#include <string.h>

const char *eng_dtype_name(eng_dtype t) {
    static const char *const n[] = {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"};
    return (unsigned)t < BASE_ARRAY_LEN(n) ? n[t] : "?";
}

uint64_t eng__dtype_bytes(eng_dtype t, int64_t n) {
    switch (t) {
    case ENG_F32:
        return (uint64_t)n * 4;
    case ENG_F16:
    case ENG_BF16:
        return (uint64_t)n * 2;
    case ENG_Q8_0:
        return (uint64_t)n / 32 * 34;
    case ENG_Q4_0:
        return (uint64_t)n / 32 * 18;
    case ENG_Q4_K:
        return (uint64_t)n / 256 * 144;
    case ENG_Q5_K:
        return (uint64_t)n / 256 * 176;
    case ENG_Q6_K:
        return (uint64_t)n / 256 * 210;
    }
    return 0;
}

static inline float eng__h(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return eng__f16_to_f32(h);
}

static inline void eng__scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

static void eng__dq_q8_0(const uint8_t *b, float *y) {
    const float d = eng__h(b);
    const int8_t *q = (const int8_t *)(b + 2);
    for (int j = 0; j < 32; j++)
        y[j] = q[j] * d;
}

static void eng__dq_q4_0(const uint8_t *b, float *y) {
    const float d = eng__h(b);
    const uint8_t *q = b + 2;
    for (int j = 0; j < 16; j++) {
        y[j] = ((q[j] & 0x0F) - 8) * d;
        y[j + 16] = ((q[j] >> 4) - 8) * d;
    }
}

static void eng__dq_q4_k(const uint8_t *b, float *y) {
    const float d = eng__h(b), min = eng__h(b + 2);
    const uint8_t *sc = b + 4, *q = b + 16;
    for (int j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
        uint8_t s, m;
        eng__scale_min_k4(is, sc, &s, &m);
        const float d1 = d * s, m1 = min * m;
        eng__scale_min_k4(is + 1, sc, &s, &m);
        const float d2 = d * s, m2 = min * m;
        for (int l = 0; l < 32; l++)
            *y++ = d1 * (q[l] & 0xF) - m1;
        for (int l = 0; l < 32; l++)
            *y++ = d2 * (q[l] >> 4) - m2;
    }
}

static void eng__dq_q5_k(const uint8_t *b, float *y) {
    const float d = eng__h(b), min = eng__h(b + 2);
    const uint8_t *sc = b + 4, *qh = b + 16, *ql = b + 48;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0, is = 0; j < 256; j += 64, is += 2, ql += 32) {
        uint8_t s, m;
        eng__scale_min_k4(is, sc, &s, &m);
        const float d1 = d * s, m1 = min * m;
        eng__scale_min_k4(is + 1, sc, &s, &m);
        const float d2 = d * s, m2 = min * m;
        for (int l = 0; l < 32; l++)
            *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
        for (int l = 0; l < 32; l++)
            *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
        u1 = (uint8_t)(u1 << 2);
        u2 = (uint8_t)(u2 << 2);
    }
}

static void eng__dq_q6_k(const uint8_t *b, float *y) {
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    const float d = eng__h(b + 208);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; l++) {
            const int is = l / 16;
            const int8_t q1 = (int8_t)((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int8_t q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int8_t q3 = (int8_t)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int8_t q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l + 0] = d * sc[is + 0] * q1;
            y[l + 32] = d * sc[is + 2] * q2;
            y[l + 64] = d * sc[is + 4] * q3;
            y[l + 96] = d * sc[is + 6] * q4;
        }
    }
}

void eng__dequant(eng_dtype t, const void *data, int64_t first, int64_t n, float *out) {
    const uint8_t *p = data;
    int qk, bs;
    void (*fn)(const uint8_t *, float *);
    switch (t) {
    case ENG_Q8_0:
        qk = 32, bs = 34, fn = eng__dq_q8_0;
        break;
    case ENG_Q4_0:
        qk = 32, bs = 18, fn = eng__dq_q4_0;
        break;
    case ENG_Q4_K:
        qk = 256, bs = 144, fn = eng__dq_q4_k;
        break;
    case ENG_Q5_K:
        qk = 256, bs = 176, fn = eng__dq_q5_k;
        break;
    case ENG_Q6_K:
        qk = 256, bs = 210, fn = eng__dq_q6_k;
        break;
    default:
        assert(!"eng__dequant: not a block type");
        return;
    }
    assert(first % qk == 0 && n % qk == 0);
    p += first / qk * bs;
    for (int64_t i = 0; i < n; i += qk, p += bs)
        fn(p, out + i);
}
