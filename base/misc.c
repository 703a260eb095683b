#define _POSIX_C_SOURCE 200809L
#include "base.h"

#include <stdatomic.h>
#include <time.h>

extern _Atomic uint64_t base__clock_skew_ns; /* clockjump.c: 0 but in tests */

uint64_t base_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
           atomic_load_explicit(&base__clock_skew_ns, memory_order_relaxed);
}

uint64_t base_thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return base_now_ns();
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t base__splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void base_rng_seed(base_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = base__splitmix64(&x);
}

static inline uint64_t base__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t base_rng_next(base_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = base__rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = base__rotl(s[3], 45);
    return result;
}

double base_rng_uniform(base_rng *r) { return (double)(base_rng_next(r) >> 11) * 0x1.0p-53; }
