/* The 16 x 16 transpose of 32-bit words in AVX-512 registers, shared by the
 * panel kernels (cpu_kernels.c) and the AMX packing (amx.c). x86-64 only. */
#ifndef INFILLD_ENGINE_CPU_TRANSPOSE512_H
#define INFILLD_ENGINE_CPU_TRANSPOSE512_H

#include <immintrin.h>

/* r[j] <- column j of the 16 x 16 matrix whose row j is r[j]: four rounds of
 * two-source shuffles (pairs, quads, 128-bit lanes, 256-bit halves). */
__attribute__((target("avx512f"))) static inline void eng__transpose16_512(__m512 r[16]) {
    __m512 t[16];
    for (int j = 0; j < 16; j += 2) {
        t[j] = _mm512_unpacklo_ps(r[j], r[j + 1]);
        t[j + 1] = _mm512_unpackhi_ps(r[j], r[j + 1]);
    }
    for (int j = 0; j < 16; j += 4) {
        r[j] = _mm512_shuffle_ps(t[j], t[j + 2], 0x44);
        r[j + 1] = _mm512_shuffle_ps(t[j], t[j + 2], 0xEE);
        r[j + 2] = _mm512_shuffle_ps(t[j + 1], t[j + 3], 0x44);
        r[j + 3] = _mm512_shuffle_ps(t[j + 1], t[j + 3], 0xEE);
    }
    for (int j = 0; j < 4; j++) {
        t[j] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0x88);
        t[j + 4] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0xDD);
        t[j + 8] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0x88);
        t[j + 12] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0xDD);
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xDD);
        r[j + 4] = _mm512_shuffle_f32x4(t[j + 4], t[j + 12], 0x88);
        r[j + 12] = _mm512_shuffle_f32x4(t[j + 4], t[j + 12], 0xDD);
    }
}

#endif
