/* kernels: ggml's quantised block layouts (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K),
 * decoded and dotted with int8 activations by inline functions that compile
 * both as CUDA device code (kernels/qgemm.cu) and as host C11
 * (tests/engine/test_qblock.c runs these very functions on the CPU against
 * llama.cpp's vectors and the CPU backend's code, bit for bit).
 *
 * Exactness: every float operation is written out in the order of ggml's
 * dequantize_row_* and of the CPU backend's portable kernels (engine/cpu/
 * quant.c, qdot.c), through KQ_MUL/KQ_ADD/KQ_SUB, which on the device are
 * the _rn intrinsics (nvcc would otherwise contract a * b - c into an FMA,
 * changing the last bit) and on the host plain operators (ISO C11 does not
 * contract). The only primitives that differ between the two sides are the
 * little-endian 4-byte load (two 16-bit loads on the device, bytes on the
 * host) and the int8 dot of four lanes (__dp4a on the device, four products
 * on the host); both are exact integer operations.
 *
 * Block layouts (ggml-common.h), bytes:
 *   Q8_0   34: f16 d, int8 qs[32]                    x = d * q
 *   Q4_0   18: f16 d, u8 qs[16]                      x = d * (n - 8), low nibbles 0..15
 *   Q4_K  144: f16 d, f16 dmin, u8 scales[12], u8 qs[128]  x = d*sc * n - dmin*m per 32
 *   Q5_K  176: as Q4_K with u8 qh[32] (fifth bits) before qs
 *   Q6_K  210: u8 ql[128], u8 qh[64], int8 scales[16], f16 d   x = d*sc * (q - 32) per 16 */
#ifndef INFILLD_KERNELS_QBLOCK_H
#define INFILLD_KERNELS_QBLOCK_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define KQ_FN static __host__ __device__ __forceinline__
#else
#define KQ_FN static inline
#endif

#if defined(__CUDA_ARCH__)
#define KQ_MUL(a, b) __fmul_rn((a), (b))
#define KQ_ADD(a, b) __fadd_rn((a), (b))
#define KQ_SUB(a, b) __fsub_rn((a), (b))
#else
#define KQ_MUL(a, b) ((a) * (b))
#define KQ_ADD(a, b) ((a) + (b))
#define KQ_SUB(a, b) ((a) - (b))
#endif

/* Block types; the values are kcu_dtype's (kernels.h) for these types. */
enum { KQ_Q8_0 = 4, KQ_Q4_0 = 5, KQ_Q4_K = 6, KQ_Q5_K = 7, KQ_Q6_K = 8 };

/* Values per block and bytes per block; 0 for a type that is not a block type. */
KQ_FN int kq_block_values(int t) {
    return t == KQ_Q8_0 || t == KQ_Q4_0 ? 32 : t >= KQ_Q4_K && t <= KQ_Q6_K ? 256 : 0;
}
KQ_FN int kq_block_bytes(int t) {
    switch (t) {
    case KQ_Q8_0:
        return 34;
    case KQ_Q4_0:
        return 18;
    case KQ_Q4_K:
        return 144;
    case KQ_Q5_K:
        return 176;
    case KQ_Q6_K:
        return 210;
    default:
        return 0;
    }
}

/* One block of 32 activations as int8, the layout of the CPU backend's
 * eng__q8a (engine/cpu/cpu_impl.h; test_qblock checks the two agree):
 * x ~ d * q, |q| <= 127, s = the sums of q[0..15] and q[16..31]. */
typedef struct kq_q8a {
    float d;
    int16_t s[2];
    int8_t q[32];
} kq_q8a;

/* ---- primitives ------------------------------------------------------------- */

/* IEEE half to float, exact (every half is a float). */
KQ_FN float kq_f16(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu, u;
    if (e == 0x1F) {
        u = sign | 0x7F800000u | (m << 13);
    } else if (e != 0) {
        u = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m == 0) {
        u = sign;
    } else { /* subnormal: normalise */
        e = 113;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        u = sign | (e << 23) | ((m & 0x3FFu) << 13);
    }
    union {
        uint32_t u;
        float f;
    } v;
    v.u = u;
    return v.f;
}

/* Float to BF16, round to nearest even (NaN stays NaN), as __float2bfloat16_rn. */
KQ_FN uint16_t kq_bf16(float f) {
    union {
        float f;
        uint32_t u;
    } v;
    v.f = f;
    if ((v.u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((v.u >> 16) | 0x40u);
    return (uint16_t)((v.u + 0x7FFFu + ((v.u >> 16) & 1u)) >> 16);
}

KQ_FN uint16_t kq_ld16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
KQ_FN float kq_h(const uint8_t *p) { return kq_f16(kq_ld16(p)); }

/* 4 bytes little-endian from a 2-byte aligned address (every field the dot
 * products read as words is: the block sizes and field offsets are even). */
KQ_FN int32_t kq_ld32(const uint8_t *p) {
#if defined(__CUDA_ARCH__)
    const uint16_t *h = (const uint16_t *)p;
    return (int32_t)((uint32_t)h[0] | ((uint32_t)h[1] << 16));
#else
    return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                     ((uint32_t)p[3] << 24));
#endif
}

/* c + the sum of the products of the four signed bytes of a and b. */
KQ_FN int32_t kq_dp4a(int32_t a, int32_t b, int32_t c) {
#if defined(__CUDA_ARCH__)
    return __dp4a(a, b, c);
#else
    for (int i = 0; i < 4; i++)
        c += (int32_t)(int8_t)(uint8_t)((uint32_t)a >> (8 * i)) *
             (int32_t)(int8_t)(uint8_t)((uint32_t)b >> (8 * i));
    return c;
#endif
}

/* The 6-bit scale and minimum of sub-block j of a Q4_K/Q5_K super-block. */
KQ_FN void kq_scale_min_k4(int j, const uint8_t *q, int *d, int *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* ---- decoders: value j of a block, as ggml's dequantize_row_* ----------------- */

KQ_FN float kq_dq_q8_0(const uint8_t *b, int j) { return KQ_MUL((float)(int8_t)b[2 + j], kq_h(b)); }

KQ_FN float kq_dq_q4_0(const uint8_t *b, int j) {
    const uint8_t q = b[2 + (j & 15)];
    const int n = j < 16 ? (q & 0x0F) - 8 : (q >> 4) - 8;
    return KQ_MUL((float)n, kq_h(b));
}

/* Q4_K: sub-block is = j / 32; value l = j % 32 of the 32 qs bytes at
 * 16 + 32 * (is / 2), low nibble for even is, high for odd. */
KQ_FN float kq_dq_q4_k(const uint8_t *b, int j) {
    const int is = j >> 5, l = j & 31;
    int s, m;
    kq_scale_min_k4(is, b + 4, &s, &m);
    const float d1 = KQ_MUL(kq_h(b), (float)s), m1 = KQ_MUL(kq_h(b + 2), (float)m);
    const uint8_t q = b[16 + 32 * (is >> 1) + l];
    const int n = is & 1 ? q >> 4 : q & 0xF;
    return KQ_SUB(KQ_MUL(d1, (float)n), m1);
}

/* Q5_K: Q4_K's nibble plus bit `is` of qh[l] as 16. */
KQ_FN float kq_dq_q5_k(const uint8_t *b, int j) {
    const int is = j >> 5, l = j & 31;
    int s, m;
    kq_scale_min_k4(is, b + 4, &s, &m);
    const float d1 = KQ_MUL(kq_h(b), (float)s), m1 = KQ_MUL(kq_h(b + 2), (float)m);
    const uint8_t q = b[48 + 32 * (is >> 1) + l];
    const int n = (is & 1 ? q >> 4 : q & 0xF) + ((b[16 + l] >> is) & 1 ? 16 : 0);
    return KQ_SUB(KQ_MUL(d1, (float)n), m1);
}

/* Q6_K value i of 32-group k (0..3) of half h: the 6-bit value and its
 * offset of 32, as ggml lays them out (q1..q4 of dequantize_row_q6_K). */
KQ_FN int kq_q6_raw(const uint8_t *b, int h, int k, int i) {
    const uint8_t *ql = b + 64 * h, *qh = b + 128 + 32 * h;
    const int lo = k & 1 ? ql[32 + i] : ql[i];
    return (k < 2 ? lo & 0xF : lo >> 4) | (((qh[i] >> (2 * k)) & 3) << 4);
}

KQ_FN float kq_dq_q6_k(const uint8_t *b, int j) {
    const int h = j >> 7, k = (j >> 5) & 3, i = j & 31;
    const int q = kq_q6_raw(b, h, k, i) - 32;
    const int sc = (int8_t)b[192 + 8 * h + 2 * k + (i >> 4)];
    return KQ_MUL(KQ_MUL(kq_h(b + 208), (float)sc), (float)q);
}

/* Value j (0 <= j < kq_block_values(t)) of block b of type t. */
KQ_FN float kq_dq(int t, const uint8_t *b, int j) {
    switch (t) {
    case KQ_Q8_0:
        return kq_dq_q8_0(b, j);
    case KQ_Q4_0:
        return kq_dq_q4_0(b, j);
    case KQ_Q4_K:
        return kq_dq_q4_k(b, j);
    case KQ_Q5_K:
        return kq_dq_q5_k(b, j);
    default:
        return kq_dq_q6_k(b, j);
    }
}

/* ---- activations --------------------------------------------------------------- */

/* Quantises 32 floats as the CPU backend's eng__quantize_act_c: d = max|x| /
 * 127 (0 below 127 FLT_MIN), q = round-to-nearest-even(x * (1 / d)) clamped to
 * +-127. */
KQ_FN void kq_quantize32(const float *x, kq_q8a *out) {
    float amax = 0.0f;
    for (int i = 0; i < 32; i++) {
        const float a = x[i] < 0.0f ? -x[i] : x[i];
        amax = a > amax ? a : amax;
    }
    const float flt_min = 1.17549435e-38f;
#if defined(__CUDA_ARCH__)
    const float d = amax >= 127.0f * flt_min ? __fdiv_rn(amax, 127.0f) : 0.0f;
    const float id = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
#else
    const float d = amax >= 127.0f * flt_min ? amax / 127.0f : 0.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
#endif
    int s0 = 0, s1 = 0;
    for (int i = 0; i < 32; i++) {
#if defined(__CUDA_ARCH__)
        int q = __float2int_rn(__fmul_rn(x[i], id));
#else
        int q = (int)lrintf(x[i] * id); /* |x id| <= 127 (+ rounding) */
#endif
        q = q > 127 ? 127 : q < -127 ? -127 : q;
        out->q[i] = (int8_t)q;
        if (i < 16)
            s0 += q;
        else
            s1 += q;
    }
    out->d = d;
    out->s[0] = (int16_t)s0;
    out->s[1] = (int16_t)s1;
}

/* ---- int8 dot products: sub-block j (32 values) of block w with activation
 * block a, added to acc in the CPU backend's order (engine/cpu/qdot.c):
 *   Q8_0  acc + si * (d_w * d_a)
 *   Q4_0  acc + si * (d_w * d_a), si = sum((n - 8) q_a)
 *   Q4_K  acc + d_a * ((sc * si) * d - (m * sum(q_a)) * dmin), j = 0..7
 *   Q5_K  as Q4_K with 5-bit n
 *   Q6_K  acc + d_a * ((sc0 * si0 + sc1 * si1) * d), two 16-value halves, j = 4h + k
 * The integer sums are exact (|si| < 2^21), so every device lane and the host
 * agree on each term bit for bit; only the order of the acc additions across
 * lanes differs on the device. --------------------------------------------------- */

KQ_FN float kq_vd_q8_0(const uint8_t *w, const kq_q8a *a, float acc) {
    const uint8_t *q = w + 2;
    int32_t si = 0;
    for (int i = 0; i < 8; i++)
        si = kq_dp4a(kq_ld32(q + 4 * i), kq_ld32((const uint8_t *)a->q + 4 * i), si);
    return KQ_ADD(acc, KQ_MUL((float)si, KQ_MUL(kq_h(w), a->d)));
}

KQ_FN float kq_vd_q4_0(const uint8_t *w, const kq_q8a *a, float acc) {
    const uint8_t *q = w + 2;
    int32_t si = 0;
    for (int i = 0; i < 4; i++) {
        const int32_t v = kq_ld32(q + 4 * i);
        si = kq_dp4a(v & 0x0F0F0F0F, kq_ld32((const uint8_t *)a->q + 4 * i), si);
        si = kq_dp4a((v >> 4) & 0x0F0F0F0F, kq_ld32((const uint8_t *)a->q + 16 + 4 * i), si);
    }
    si -= 8 * (a->s[0] + a->s[1]);
    return KQ_ADD(acc, KQ_MUL((float)si, KQ_MUL(kq_h(w), a->d)));
}

KQ_FN float kq_vd_q4_k(const uint8_t *w, int j, const kq_q8a *a, float acc) {
    int sc, m;
    kq_scale_min_k4(j, w + 4, &sc, &m);
    const uint8_t *q = w + 16 + 32 * (j >> 1);
    const int sh = 4 * (j & 1);
    int32_t si = 0;
    for (int i = 0; i < 8; i++)
        si = kq_dp4a((kq_ld32(q + 4 * i) >> sh) & 0x0F0F0F0F,
                     kq_ld32((const uint8_t *)a->q + 4 * i), si);
    const float t1 = KQ_MUL((float)(sc * si), kq_h(w));
    const float t2 = KQ_MUL((float)(m * (a->s[0] + a->s[1])), kq_h(w + 2));
    return KQ_ADD(acc, KQ_MUL(a->d, KQ_SUB(t1, t2)));
}

KQ_FN float kq_vd_q5_k(const uint8_t *w, int j, const kq_q8a *a, float acc) {
    int sc, m;
    kq_scale_min_k4(j, w + 4, &sc, &m);
    const uint8_t *qh = w + 16, *q = w + 48 + 32 * (j >> 1);
    const int sh = 4 * (j & 1);
    int32_t si = 0;
    for (int i = 0; i < 8; i++) {
        const int32_t lo = (kq_ld32(q + 4 * i) >> sh) & 0x0F0F0F0F;
        const int32_t hi = ((kq_ld32(qh + 4 * i) >> j) & 0x01010101) << 4;
        si = kq_dp4a(lo | hi, kq_ld32((const uint8_t *)a->q + 4 * i), si);
    }
    const float t1 = KQ_MUL((float)(sc * si), kq_h(w));
    const float t2 = KQ_MUL((float)(m * (a->s[0] + a->s[1])), kq_h(w + 2));
    return KQ_ADD(acc, KQ_MUL(a->d, KQ_SUB(t1, t2)));
}

KQ_FN float kq_vd_q6_k(const uint8_t *w, int j, const kq_q8a *a, float acc) {
    const int h = j >> 2, k = j & 3;
    const uint8_t *ql = w + 64 * h + 32 * (k & 1), *qh = w + 128 + 32 * h;
    const int shl = 4 * (k >> 1), shh = 2 * k;
    int32_t si[2] = {0, 0};
    for (int i = 0; i < 8; i++) {
        const int32_t lo = (kq_ld32(ql + 4 * i) >> shl) & 0x0F0F0F0F;
        const int32_t hi = ((kq_ld32(qh + 4 * i) >> shh) & 0x03030303) << 4;
        si[i >> 2] = kq_dp4a(lo | hi, kq_ld32((const uint8_t *)a->q + 4 * i), si[i >> 2]);
    }
    si[0] -= 32 * a->s[0];
    si[1] -= 32 * a->s[1];
    const int8_t *g = (const int8_t *)(w + 192 + 8 * h + 2 * k);
    return KQ_ADD(acc, KQ_MUL(a->d, KQ_MUL((float)(g[0] * si[0] + g[1] * si[1]), kq_h(w + 208))));
}

/* Sub-block j (0 for Q8_0/Q4_0, 0..7 for the K-quants) of block w times a. */
KQ_FN float kq_vd(int t, const uint8_t *w, int j, const kq_q8a *a, float acc) {
    switch (t) {
    case KQ_Q8_0:
        return kq_vd_q8_0(w, a, acc);
    case KQ_Q4_0:
        return kq_vd_q4_0(w, a, acc);
    case KQ_Q4_K:
        return kq_vd_q4_k(w, j, a, acc);
    case KQ_Q5_K:
        return kq_vd_q5_k(w, j, a, acc);
    default:
        return kq_vd_q6_k(w, j, a, acc);
    }
}

#endif
