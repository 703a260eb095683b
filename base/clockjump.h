/* base clock jump: test hook (clockjump.c). With INFILLD_TEST_CLOCK_JUMP_MS=N
 * in the environment, each SIGUSR2 moves base_now_ns() N ms forward, as a
 * system suspend does. */
#ifndef INFILLD_BASE_CLOCKJUMP_H
#define INFILLD_BASE_CLOCKJUMP_H

#include <stdbool.h>
#include <stdint.h>

/* True when installed (the variable is set and valid). */
bool base_clock_jump_install(void);

/* Moves base_now_ns() forward by ns at once: a test's virtual time, so a
 * scripted stepper of known cost is timed exactly, whatever the load. */
void base_clock_advance_ns(uint64_t ns);

#endif
