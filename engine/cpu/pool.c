/* A small fork-join thread pool for the CPU backend: the caller is thread 0,
 * tasks are handed out through an atomic counter. Between parallel loops a
 * worker first spins for a short while (ENG__SPIN_NS) on the loop counter,
 * then sleeps on a condition variable, and the caller waits for the last
 * worker the same way: a step runs a few hundred short loops back to back,
 * and a sleeping thread's wake-up (tens of microseconds in a VM) was paid
 * at every one of them, while after the step the threads still give the
 * cores back within the bound. INFILLD_CPU_SPIN_US sets the bound (0: sleep
 * at once). Also dtype conversions shared by the engine. */
#define _GNU_SOURCE
#include "engine_impl.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum { ENG__SPIN_NS = 100000 };

struct eng__pool {
    int n; /* threads including the caller */
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_mutex_t run_mu; /* one parallel loop at a time: contexts of one model on
                               different threads take turns */
    pthread_cond_t cv_work, cv_done;
    eng__task_fn fn;
    void *arg;
    int n_tasks;
    atomic_int next;
    atomic_uint gen;    /* bumped for every parallel loop (release: fn, arg, n_tasks) */
    atomic_int running; /* workers still inside the current loop */
    bool quit;
    int64_t spin_ns;
};

static int64_t eng__pool_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline void eng__pool_pause(void) {
#if defined(__x86_64__)
    _mm_pause();
#endif
}

/* Spins up to spin_ns until *gen != seen (a worker waiting for a loop) or,
 * with gen NULL, *running == 0 (the caller waiting for the workers); true
 * when it happened. */
static bool eng__pool_spin(const eng__pool *p, const atomic_uint *gen, unsigned seen,
                           const atomic_int *running) {
    if (p->spin_ns <= 0)
        return false;
    const int64_t t0 = eng__pool_now();
    for (int i = 0;; i++) {
        if (gen ? atomic_load_explicit(gen, memory_order_acquire) != seen
                : atomic_load_explicit(running, memory_order_acquire) == 0)
            return true;
        if ((i & 63) == 63 && eng__pool_now() - t0 > p->spin_ns)
            return false;
        eng__pool_pause();
    }
}

typedef struct {
    eng__pool *p;
    int tid;
} eng__worker_arg;

static void eng__pool_drain(eng__pool *p, int tid) {
    for (;;) {
        int t = atomic_fetch_add(&p->next, 1);
        if (t >= p->n_tasks)
            break;
        p->fn(p->arg, t, tid);
    }
}

static void *eng__pool_main(void *argp) {
    eng__worker_arg a = *(eng__worker_arg *)argp;
    free(argp);
    eng__pool *p = a.p;
    unsigned seen = 0;
    for (;;) {
        if (!eng__pool_spin(p, &p->gen, seen, NULL)) {
            pthread_mutex_lock(&p->mu);
            while (!p->quit && atomic_load(&p->gen) == seen)
                pthread_cond_wait(&p->cv_work, &p->mu);
            const bool quit = p->quit;
            pthread_mutex_unlock(&p->mu);
            if (quit)
                break;
        }
        seen = atomic_load_explicit(&p->gen, memory_order_acquire);
        eng__pool_drain(p, a.tid);
        if (atomic_fetch_sub_explicit(&p->running, 1, memory_order_acq_rel) == 1) {
            /* Under the mutex: the caller checks running and sleeps under it. */
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->cv_done);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

eng__pool *eng__pool_new(int n_threads) {
    if (n_threads < 1)
        n_threads = 1;
    eng__pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n = 1;
    const char *sp = getenv("INFILLD_CPU_SPIN_US");
    p->spin_ns = sp ? (int64_t)atoi(sp) * 1000 : ENG__SPIN_NS;
    atomic_init(&p->gen, 0);
    atomic_init(&p->running, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->run_mu, NULL);
    pthread_cond_init(&p->cv_work, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    atomic_init(&p->next, 0);
    p->th = calloc((size_t)n_threads, sizeof *p->th);
    if (!p->th) {
        eng__pool_free(p);
        return NULL;
    }
    for (int i = 1; i < n_threads; i++) {
        eng__worker_arg *a = malloc(sizeof *a);
        if (!a)
            break;
        a->p = p;
        a->tid = i;
        if (pthread_create(&p->th[i], NULL, eng__pool_main, a) != 0) {
            free(a);
            break;
        }
        p->n++;
    }
    return p;
}

void eng__pool_free(eng__pool *p) {
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = true; /* a spinning worker sees it once its spin ends */
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++)
        pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->run_mu);
    pthread_cond_destroy(&p->cv_work);
    pthread_cond_destroy(&p->cv_done);
    free(p->th);
    free(p);
}

int eng__pool_threads(const eng__pool *p) { return p->n; }

void eng__pool_run(eng__pool *p, eng__task_fn fn, void *arg, int n_tasks) {
    if (n_tasks <= 0)
        return;
    if (p->n == 1 || n_tasks == 1) {
        for (int t = 0; t < n_tasks; t++)
            fn(arg, t, 0);
        return;
    }
    pthread_mutex_lock(&p->run_mu);
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->n_tasks = n_tasks;
    atomic_store(&p->next, 0);
    atomic_store(&p->running, p->n - 1);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    eng__pool_drain(p, 0);
    if (!eng__pool_spin(p, NULL, 0, &p->running)) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->running) > 0)
            pthread_cond_wait(&p->cv_done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_unlock(&p->run_mu);
}

/* ---- conversions ---------------------------------------------------------- */

float eng__f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
    if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: renormalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            u = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | (man << 13);
    } else {
        u = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    union {
        uint32_t u;
        float f;
    } v = {u};
    return v.f;
}

void eng__tensor_row_f32(const eng_tensor *t, int64_t row, int64_t col0, int64_t n, float *out) {
    const int64_t off = row * t->cols + col0;
    if (eng__dtype_is_block(t->dtype)) {
        /* Whole rows only (embedding lookups, norms): col0 = 0, n = cols. */
        assert(col0 == 0 && n == t->cols);
        eng__dequant(t->dtype, t->data, off, n, out);
        return;
    }
    switch (t->dtype) {
    case ENG_F32:
        memcpy(out, (const float *)t->data + off, (size_t)n * sizeof(float));
        break;
    case ENG_BF16: {
        const uint16_t *s = (const uint16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++)
            out[i] = eng__bf16_to_f32(s[i]);
        break;
    }
    case ENG_F16: {
        const uint16_t *s = (const uint16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++)
            out[i] = eng__f16_to_f32(s[i]);
        break;
    }
    default:
        break;
    }
}
