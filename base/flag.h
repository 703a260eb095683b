/* Cancel flags shared between threads: the loop thread sets one while the
 * worker (and the samplers, backends and remote source it runs) polls it.
 * A plain volatile int read and written on two threads is a data race in
 * C11 (ThreadSanitizer reports it); these accesses are atomic. Relaxed
 * order: the flag publishes no other data, it only asks the reader to stop
 * (the worker's mutex orders everything else). The types stay volatile int
 * so that every signature keeps its shape. */
#ifndef INFILLD_BASE_FLAG_H
#define INFILLD_BASE_FLAG_H

#include <stddef.h>

/* The flag's value, 0 when there is no flag. */
static inline int base_flag_get(const volatile int *f) {
    return f ? __atomic_load_n(f, __ATOMIC_RELAXED) : 0;
}

static inline void base_flag_set(volatile int *f, int v) {
    __atomic_store_n(f, v, __ATOMIC_RELAXED);
}

#endif
