/* Resident memory of this process, for the tests and benchmarks that watch
 * it (test_memtrim, bench_lsp). Header-only: tests/unit is every test's
 * include directory (testcheck). */
#ifndef INFILLD_TESTS_RSS_H
#define INFILLD_TESTS_RSS_H

#include <stdio.h>
#include <unistd.h>

/* KiB resident, from /proc/self/statm (its second field counts pages of
 * sysconf(_SC_PAGESIZE) bytes: 4 KiB on x86_64, 16 or 64 KiB on some arm64
 * kernels); -1 when it cannot be read. */
static inline long test_rss_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = -1;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2)
        res = -1;
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return res < 0 || page <= 0 ? -1 : res * (page / 1024);
}

#endif
