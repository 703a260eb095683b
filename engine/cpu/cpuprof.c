/* Per-op CPU profile of the CPU backend, for benchmarks (INFILLD_CPU_PROFILE=1).
 * Every parallel loop of a pass is labelled with its op; each task's thread
 * CPU time is summed per op, and so is the loop's wall time. A loop's idle
 * thread time, threads x wall - task CPU, is what the threads spent waiting
 * at its barrier (load imbalance, wake-up latency, or descheduling on a
 * loaded machine). Process-wide counters: one model profiled at a time. */
#define _GNU_SOURCE
#include "cpu_impl.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const eng__prof_names[ENG__P_N] = {
    "embedding",   "norms",          "QKV matmuls",    "RoPE + K/V cache",
    "attention",   "O matmul",       "gate/up matmul", "SwiGLU",
    "down matmul", "LM head matmul", "sampler",        "X quantisation / AMX packing",
};

static atomic_llong eng__prof_cpu[ENG__P_N], eng__prof_wall[ENG__P_N], eng__prof_idle[ENG__P_N],
    eng__prof_calls[ENG__P_N];
static int eng__prof_state = -1; /* -1: environment not read yet */

bool eng__prof_enabled(void) {
    if (eng__prof_state < 0) {
        const char *e = getenv("INFILLD_CPU_PROFILE");
        eng__prof_state = e && e[0] && strcmp(e, "0") != 0;
    }
    return eng__prof_state == 1;
}

int64_t eng__prof_thread_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t eng__prof_wall_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void eng__prof_add_cpu(eng__prof_op op, int64_t ns) { atomic_fetch_add(&eng__prof_cpu[op], ns); }

void eng__prof_add_loop(eng__prof_op op, int64_t wall_ns, int64_t idle_ns) {
    atomic_fetch_add(&eng__prof_wall[op], wall_ns);
    atomic_fetch_add(&eng__prof_idle[op], idle_ns > 0 ? idle_ns : 0);
    atomic_fetch_add(&eng__prof_calls[op], 1);
}

void eng__cpu_profile_reset(void) {
    for (int i = 0; i < ENG__P_N; i++) {
        atomic_store(&eng__prof_cpu[i], 0);
        atomic_store(&eng__prof_wall[i], 0);
        atomic_store(&eng__prof_idle[i], 0);
        atomic_store(&eng__prof_calls[i], 0);
    }
}

void eng__cpu_profile_print(FILE *f, int passes, int threads) {
    if (passes < 1)
        passes = 1;
    if (threads < 1)
        threads = 1;
    double cpu = 0, wall = 0, idle = 0;
    for (int i = 0; i < ENG__P_N; i++) {
        cpu += (double)atomic_load(&eng__prof_cpu[i]);
        wall += (double)atomic_load(&eng__prof_wall[i]);
        idle += (double)atomic_load(&eng__prof_idle[i]);
    }
    fprintf(f,
            "| op (per pass, %d passes) | loops | CPU per thread | share | wall | idle at "
            "barrier, per thread |\n|---|---:|---:|---:|---:|---:|\n",
            passes);
    for (int i = 0; i < ENG__P_N; i++) {
        const double c = (double)atomic_load(&eng__prof_cpu[i]);
        fprintf(f, "| %s | %lld | %.1f ms | %.1f %% | %.1f ms | %.1f ms |\n", eng__prof_names[i],
                (long long)atomic_load(&eng__prof_calls[i]) / passes, c / threads / passes / 1e6,
                cpu > 0 ? 100.0 * c / cpu : 0.0,
                (double)atomic_load(&eng__prof_wall[i]) / passes / 1e6,
                (double)atomic_load(&eng__prof_idle[i]) / threads / passes / 1e6);
    }
    fprintf(f, "| **all parallel loops** | | %.1f ms | 100 %% | %.1f ms | %.1f ms |\n",
            cpu / threads / passes / 1e6, wall / passes / 1e6, idle / threads / passes / 1e6);
}
