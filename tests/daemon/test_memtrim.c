/* daemon memtrim: memory freed in the middle of the heap goes back to the OS
 * once enough of it lies free, and not before (issue 17, RSS in the soak). */
#include "check.h"
#include "memtrim.h"
#include "rss.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define T_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define T_SANITIZER 1
#endif
#endif

enum { N = 1024, CHUNK = 64 << 10 }; /* 64 MiB in chunks below the mmap threshold */

static void *blocks[N];

static void fill(void) {
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(CHUNK);
        CHECK(blocks[i] != NULL);
        memset(blocks[i], 0x5a, CHUNK); /* resident */
    }
}

int main(void) {
    uv_loop_t loop;
    CHECK_EQ_I(uv_loop_init(&loop), 0);
    dmn_memtrim m;
    dmn_memtrim_start(&m, &loop);
    CHECK(m.started);
    /* The handles never keep the loop alive. */
    CHECK_EQ_I(uv_run(&loop, UV_RUN_NOWAIT), 0);

    fill();
    void *pin = malloc(256); /* above the blocks: free() cannot shrink the heap's top */
    CHECK(pin != NULL);
    dmn_memtrim_look(&m); /* the low point: the blocks are in use */
    uint64_t before = m.trims;
    /* A little freed: under DMN_MEMTRIM_MIN_BYTES, no trim. */
    for (int i = 0; i < 16; i++) {
        free(blocks[i]);
        blocks[i] = NULL;
    }
    dmn_memtrim_look(&m);
    CHECK_EQ_I((int)(m.trims - before), 0);
    long full = test_rss_kib();
    for (int i = 16; i < N; i++) {
        free(blocks[i]);
        blocks[i] = NULL;
    }
    long freed = test_rss_kib();
    dmn_memtrim_look(&m);
    long trimmed = test_rss_kib();
    printf("RSS: %ld KiB in use, %ld KiB after free(), %ld KiB after the trim (%llu trims)\n", full,
           freed, trimmed, (unsigned long long)m.trims);
#ifndef T_SANITIZER
    /* glibc kept the freed blocks resident; the trim gave back most of them. */
    CHECK_EQ_I((int)(m.trims - before), 1);
    CHECK(freed > full - 16 * 1024);
    CHECK(trimmed < freed - 48 * 1024);
    /* Nothing more was freed: the next look does not trim again. */
    dmn_memtrim_look(&m);
    CHECK_EQ_I((int)(m.trims - before), 1);
    /* The same memory used and freed again is trimmed again. */
    fill();
    dmn_memtrim_look(&m);
    for (int i = 0; i < N; i++)
        free(blocks[i]);
    dmn_memtrim_look(&m);
    CHECK_EQ_I((int)(m.trims - before), 2);
#endif
    free(pin);
    dmn_memtrim_stop(&m);
    CHECK_EQ_I(uv_run(&loop, UV_RUN_DEFAULT), 0);
    CHECK_EQ_I(uv_loop_close(&loop), 0);
    return check_finish("test_memtrim");
}
