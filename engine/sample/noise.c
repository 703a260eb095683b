/* Counter-based noise shared by every backend and by the test references.
 *
 * Definition (reproduce exactly in any reference implementation):
 *   mix(z)  = splitmix64 finaliser of (z + 0x9E3779B97F4A7C15), all mod 2^64:
 *             z += 0x9E3779B97F4A7C15
 *             z  = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
 *             z  = (z ^ (z >> 27)) * 0x94D049BB133111EB
 *             z  =  z ^ (z >> 31)
 *   h       = mix(seed ^ mix(((step << 32) | position) ^ mix(v)))
 *   u       = ((h >> 11) + 0.5) / 2^53            in (0, 1), never 0 or 1
 * A counter-based generator lets a GPU draw the noise for (row, vocab entry)
 * in parallel and still match the CPU bit for bit. */
#include "engine.h"

static inline uint64_t eng__mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double eng_noise_uniform(uint64_t seed, uint32_t step, uint32_t position, uint32_t v) {
    uint64_t k = ((uint64_t)step << 32) | position;
    uint64_t h = eng__mix(seed ^ eng__mix(k ^ eng__mix(v)));
    return ((double)(h >> 11) + 0.5) * 0x1.0p-53;
}
