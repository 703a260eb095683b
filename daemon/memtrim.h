/* daemon memtrim: hands heap memory freed after a peak back to the OS.
 *
 * glibc's free() returns memory to the kernel only from the top of an arena;
 * what a 1 MB paste costs while it is parsed (tree-sitter nodes, copies of
 * the text) is freed in the middle of the heap, so without this the RSS of a
 * long-running daemon stays at the highest peak it has seen (the soak's long
 * profile: +52 % from request 2,000 to 10,000, docs/PERFORMANCE.md).
 *
 * After a loop iteration, at most every DMN_MEMTRIM_GAP_MS, the free bytes
 * in the heap (mallinfo2) are compared with their lowest value since the
 * last trim; once at least DMN_MEMTRIM_MIN_BYTES more lie free,
 * malloc_trim(0) releases the free pages of every arena. A one-shot timer
 * looks once more after a burst of work. No-op where the C library is not
 * glibc. Loop-thread only. */
#ifndef INFILLD_DAEMON_MEMTRIM_H
#define INFILLD_DAEMON_MEMTRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define DMN_MEMTRIM_GAP_MS 500
#define DMN_MEMTRIM_MIN_BYTES ((size_t)8 << 20)

typedef struct dmn_memtrim {
    uv_check_t check;
    uv_timer_t timer;
    uint64_t last_ms; /* loop time of the last look */
    size_t low;       /* fewest free heap bytes seen since the last trim */
    bool armed;       /* the timer is running */
    bool ticked;      /* the timer fired in this loop iteration */
    bool started;
    uint64_t trims;       /* malloc_trim calls so far */
    uint64_t trim_ns_max; /* the longest of them */
} dmn_memtrim;

/* Starts watching on loop; the handles do not keep the loop alive. */
void dmn_memtrim_start(dmn_memtrim *m, uv_loop_t *loop);
/* Closes the handles (their close callbacks run on the loop). */
void dmn_memtrim_stop(dmn_memtrim *m);
/* Looks now, whatever the time since the last look (tests). */
void dmn_memtrim_look(dmn_memtrim *m);

#endif
