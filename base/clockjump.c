/* base clock jump: a test hook that moves base_now_ns() forward, as a
 * system suspend or a VM pause does to a monotonic clock (issue 17).
 *
 * Only when INFILLD_TEST_CLOCK_JUMP_MS is set in the environment:
 * base_clock_jump_install() then makes every SIGUSR2 add that many
 * milliseconds to the clock every module reads for budgets, deadlines and
 * timeouts. Thread CPU time (parse budgets) does not move, as on a real
 * resume; nor does libuv's loop clock (the daemon's own timers). */
#define _POSIX_C_SOURCE 200809L
#include "clockjump.h"

#include <stdint.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Read by base_now_ns() (misc.c). */
_Atomic uint64_t base__clock_skew_ns;
static uint64_t base__clock_jump_ns;

static void base__on_jump(int sig) {
    (void)sig;
    atomic_fetch_add_explicit(&base__clock_skew_ns, base__clock_jump_ns, memory_order_relaxed);
}

void base_clock_advance_ns(uint64_t ns) {
    atomic_fetch_add_explicit(&base__clock_skew_ns, ns, memory_order_relaxed);
}

bool base_clock_jump_install(void) {
    const char *v = getenv("INFILLD_TEST_CLOCK_JUMP_MS");
    if (!v || !*v)
        return false;
    char *end = NULL;
    unsigned long long ms = strtoull(v, &end, 10);
    if (!end || *end || ms == 0 || ms > 86400ull * 1000 * 365)
        return false;
    base__clock_jump_ns = ms * 1000000ull;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = base__on_jump;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    return sigaction(SIGUSR2, &sa, NULL) == 0;
}
