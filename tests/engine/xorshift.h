/* The engine tests' deterministic source of random inputs: Marsaglia's
 * xorshift64 (shifts 13, 7, 17), one state per test file so that each file's
 * inputs stay the same whatever the others draw. */
#ifndef INFILLD_TESTS_XORSHIFT_H
#define INFILLD_TESTS_XORSHIFT_H

#include <stdint.h>

static inline uint64_t xorshift64(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
