/* engine mapguard: weight files are mmap'ed, so a file truncated while mapped
 * (a model being re-downloaded, a full disk, a network file system) turns the
 * next read of its vanished pages into SIGBUS, on whichever thread reads
 * them: the worker, a CPU pool thread, or a device upload.
 *
 * Why not sigsetjmp around weight reads: a jump only works on the thread
 * that armed it, and a CPU pool thread jumping out of a forward pass would
 * leave the pool's barrier and the K/V cache half-written. Why not mlock or
 * pre-reading: truncation removes pages from every mapping, locked or not,
 * and a 15 GB model cannot be copied. Instead the SIGBUS handler maps a page
 * of zeros over the faulting page of a registered weight mapping and counts
 * the fault; the interrupted read resumes and the pass finishes on garbage,
 * which the caller then throws away: after each request it asks whether any
 * of the model's mappings faulted (eng_model_files_damaged), fails the
 * request and unloads the model. A SIGBUS outside every weight mapping is
 * passed on (to the previous handler, or the default action: the process
 * dies as it would have). */
#define _GNU_SOURCE
#include "engine_impl.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { ENG__GUARD_SLOTS = 256 };

/* Read by the signal handler without locks: a slot is published by storing
 * its length last and retired by storing 0 first. */
static struct {
    _Atomic uintptr_t start;
    _Atomic size_t len;
    _Atomic unsigned faults;
} eng__slots[ENG__GUARD_SLOTS];

static pthread_mutex_t eng__guard_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t eng__guard_once = PTHREAD_ONCE_INIT;
static struct sigaction eng__prev;
static bool eng__installed;

static void eng__on_sigbus(int sig, siginfo_t *si, void *uc) {
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < ENG__GUARD_SLOTS; i++) {
        size_t n = atomic_load(&eng__slots[i].len);
        uintptr_t s = atomic_load(&eng__slots[i].start);
        if (n && a >= s && a - s < n) {
            uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
            void *p = (void *)(a & ~(page - 1));
            /* mmap is a plain system call here, safe in a handler. */
            if (mmap(p, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
                MAP_FAILED) {
                atomic_fetch_add(&eng__slots[i].faults, 1);
                return;
            }
            break;
        }
    }
    /* Not ours: what would have happened without this handler. */
    if (eng__prev.sa_flags & SA_SIGINFO && eng__prev.sa_sigaction) {
        eng__prev.sa_sigaction(sig, si, uc);
        return;
    }
    if (eng__prev.sa_handler != SIG_DFL && eng__prev.sa_handler != SIG_IGN &&
        eng__prev.sa_handler) {
        eng__prev.sa_handler(sig);
        return;
    }
    signal(SIGBUS, SIG_DFL); /* the faulting read runs again and ends the process */
}

static void eng__guard_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = eng__on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    eng__installed = sigaction(SIGBUS, &sa, &eng__prev) == 0;
}

int eng__mapguard_add(const void *p, size_t n) {
    if (!p || !n)
        return -1;
    pthread_once(&eng__guard_once, eng__guard_install);
    if (!eng__installed)
        return -1;
    int slot = -1;
    pthread_mutex_lock(&eng__guard_mu);
    for (int i = 0; i < ENG__GUARD_SLOTS && slot < 0; i++)
        if (!atomic_load(&eng__slots[i].len)) {
            atomic_store(&eng__slots[i].faults, 0);
            atomic_store(&eng__slots[i].start, (uintptr_t)p);
            atomic_store(&eng__slots[i].len, n);
            slot = i;
        }
    pthread_mutex_unlock(&eng__guard_mu);
    return slot;
}

void eng__mapguard_remove(int slot) {
    if (slot < 0 || slot >= ENG__GUARD_SLOTS)
        return;
    pthread_mutex_lock(&eng__guard_mu);
    atomic_store(&eng__slots[slot].len, 0);
    atomic_store(&eng__slots[slot].start, 0);
    pthread_mutex_unlock(&eng__guard_mu);
}

unsigned eng__mapguard_faults(int slot) {
    if (slot < 0 || slot >= ENG__GUARD_SLOTS)
        return 0;
    return atomic_load(&eng__slots[slot].faults);
}
