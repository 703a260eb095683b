/* Random but well-formed GGUF blocks for the quantised-kernel tests (the host
 * test_qblock and the GPU test_gpu_kernels): random bytes, with the f16 scale
 * d (and dmin for Q4_K/Q5_K) set to moderate values so that products stay
 * finite. below(n) is the test's own generator, uniform in [0, n). */
#ifndef INFILLD_TESTS_QBLOCK_RANDOM_H
#define INFILLD_TESTS_QBLOCK_RANDOM_H

#include "qblock.h"

#include <stddef.h>
#include <stdint.h>

static inline void qblock_random(int t, uint8_t *w, size_t n_blocks, int (*below)(int n)) {
    const int bs = kq_block_bytes(t);
    for (size_t b = 0; b < n_blocks; b++) {
        uint8_t *p = w + b * (size_t)bs;
        for (int i = 0; i < bs; i++)
            p[i] = (uint8_t)below(256);
        const uint16_t d = (uint16_t)(0x1800 + below(0x800));
        const uint16_t dm = (uint16_t)(0x1400 + below(0x800));
        if (t == KQ_Q6_K) { /* Q6_K keeps its d at the end of the block */
            p[208] = (uint8_t)d, p[209] = (uint8_t)(d >> 8);
        } else {
            p[0] = (uint8_t)d, p[1] = (uint8_t)(d >> 8);
            if (t == KQ_Q4_K || t == KQ_Q5_K)
                p[2] = (uint8_t)dm, p[3] = (uint8_t)(dm >> 8);
        }
    }
}

#endif
