/* bench_qlimits: the two limits of a quantised hole step on this machine (not a test).
 *
 *   bench_qlimits [--threads N] [--mib 1024]
 *
 * (1) read bandwidth: N threads sum disjoint parts of a --mib buffer (int64
 *     loads, 4 independent sums per thread), best of 5 passes after one warm-up;
 * (2) the int8 multiply-add rate of each kernel path and block type: qgemm on
 *     33 quantised X rows (a hole step's rows) times 64 weight rows of K = 4096
 *     (Q8_0 278 KiB, Q4_K 144 KiB: L2-resident, so arithmetic-bound), on N
 *     threads, each on its own copy, best of 5.
 * (3) the register-only peak of the AVX2 kernels' instruction mixes (below),
 *     what (2) would reach with no loads, unpacking or scales;
 * (4) the f32 multiply-add rate of each path's gemm kernel (the BF16/F16/F32
 *     weights' few-row path) on a converted tile as a hole step sees it: 34 X
 *     rows times 72 weight rows of K = 896 (252 KiB) and 24 of K = 4864 (the
 *     MLP down projection, 456 KiB): L2-resident, so arithmetic-bound.
 * A hole step's limits are then weight bytes / (1) and multiply-adds / (2);
 * docs/PERFORMANCE.md puts them next to the measured step (bench_engine). */
#define _GNU_SOURCE
#include "cpu_impl.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) { return (double)base_now_ns() / 1e9; }

typedef struct bw_arg {
    const int64_t *p;
    size_t n;
    int64_t sum;
} bw_arg;

static void *bw_run(void *v) {
    bw_arg *a = v;
    int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 4 <= a->n; i += 4) {
        s0 += a->p[i];
        s1 += a->p[i + 1];
        s2 += a->p[i + 2];
        s3 += a->p[i + 3];
    }
    a->sum = s0 + s1 + s2 + s3;
    return NULL;
}

typedef struct qg_arg {
    const eng__kernels *k;
    eng_dtype t;
    uint8_t *W;
    eng__q8a *X;
    float *Y;
    int reps;
    double cpu; /* thread CPU seconds of the last run */
} qg_arg;

enum { QM = 33, QN = 64, QK = 4096 };

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
/* (3) The instruction-mix peaks of the AVX2 int8 kernels, registers only (no
 * loads), four independent chains; `asm volatile` keeps the compiler from
 * hoisting the products out of the loop. Per 32 multiply-adds:
 *   q8   vpsignb + vpmaddubsw + vpmaddwd + vpaddd (Q8_0: the sign trick, int32 every step)
 *   k    vpmaddubsw + vpaddw (Q4_K's unsigned nibbles: int16 sums over a block)
 * Returns multiply-adds per second of thread CPU time. */
#define PK_ITERS 50000000L
__attribute__((target("avx2"), noinline)) static double peak_q8(void) {
    __m256i w = _mm256_set1_epi8(3), x0 = _mm256_set1_epi8(1), x1 = _mm256_set1_epi8(2),
            x2 = _mm256_set1_epi8(-3), x3 = _mm256_set1_epi8(4), one = _mm256_set1_epi16(1);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (long n = 0; n < PK_ITERS; n++) {
        __asm__ volatile("" : "+x"(w));
        const __m256i u = _mm256_sign_epi8(w, w);
#define PK(i)                                                                                      \
    a##i = _mm256_add_epi32(                                                                       \
        a##i, _mm256_madd_epi16(_mm256_maddubs_epi16(u, _mm256_sign_epi8(x##i, w)), one));
        PK(0) PK(1) PK(2) PK(3)
#undef PK
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    __asm__ volatile("" : : "x"(a0), "x"(a1), "x"(a2), "x"(a3));
    const double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return 4.0 * 32 * PK_ITERS / dt;
}
__attribute__((target("avx2"), noinline)) static double peak_k(void) {
    __m256i w = _mm256_set1_epi8(3), x0 = _mm256_set1_epi8(1), x1 = _mm256_set1_epi8(2),
            x2 = _mm256_set1_epi8(-3), x3 = _mm256_set1_epi8(4);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (long n = 0; n < PK_ITERS; n++) {
        __asm__ volatile("" : "+x"(w));
#define PK(i) a##i = _mm256_add_epi16(a##i, _mm256_maddubs_epi16(w, x##i));
        PK(0) PK(1) PK(2) PK(3)
#undef PK
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    __asm__ volatile("" : : "x"(a0), "x"(a1), "x"(a2), "x"(a3));
    const double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return 4.0 * 32 * PK_ITERS / dt;
}
typedef struct pk_arg {
    double (*fn)(void);
    double rate;
} pk_arg;
static void *pk_run(void *v) {
    pk_arg *a = v;
    a->rate = a->fn();
    return NULL;
}
#endif

typedef struct fg_arg {
    const eng__kernels *k;
    const float *W, *X;
    float *Y;
    int N, K, reps;
    double cpu;
} fg_arg;

enum { FM = 34 };

static void *fg_run(void *v) {
    fg_arg *a = v;
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (int r = 0; r < a->reps; r++)
        a->k->gemm(a->X, a->K, a->W, a->K, a->Y, a->N, FM, a->N, a->K, false);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    a->cpu = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return NULL;
}

/* Runs fn on nt threads, each on its own element of args (elements `size`
 * bytes apart, each with its thread CPU seconds at byte `cpu_off`), six
 * times; the best wall time and the best slowest-thread CPU time of the
 * last five. */
static void best_of_5(void *(*fn)(void *), void *args, size_t size, size_t cpu_off, int nt,
                      double *wall, double *cpu) {
    pthread_t th[64];
    char *a = args;
    *wall = *cpu = 1e30;
    for (int r = 0; r < 6; r++) {
        double t0 = now_s();
        for (int t = 0; t < nt; t++)
            pthread_create(&th[t], NULL, fn, a + (size_t)t * size);
        for (int t = 0; t < nt; t++)
            pthread_join(th[t], NULL);
        double dt = now_s() - t0, ct = 0;
        for (int t = 0; t < nt; t++) {
            double c;
            memcpy(&c, a + (size_t)t * size + cpu_off, sizeof c);
            ct = ct > c ? ct : c;
        }
        if (r > 0 && dt < *wall)
            *wall = dt;
        if (r > 0 && ct < *cpu)
            *cpu = ct;
    }
}

static void *qg_run(void *v) {
    qg_arg *a = v;
    const size_t rb = (size_t)eng__dtype_bytes(a->t, QK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (int r = 0; r < a->reps; r++)
        a->k->qgemm(a->t, a->W, rb, a->X, QK / 32, a->Y, QN, QM, QN, QK, false);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    a->cpu = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return NULL;
}

int main(int argc, char **argv) {
    int nt = 2, mib = 1024;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            nt = atoi(argv[++i]);
        else if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc)
            mib = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_qlimits [--threads N] [--mib 1024]\n");
            return 2;
        }
    }
    if (nt < 1 || nt > 64 || mib < 16)
        return 2;
    const size_t n = (size_t)mib << 17; /* int64 elements */
    int64_t *buf = malloc(n * sizeof *buf);
    if (!buf)
        return 1;
    for (size_t i = 0; i < n; i++)
        buf[i] = (int64_t)i;
    double best = 1e30;
    pthread_t th[64];
    bw_arg ba[64];
    for (int r = 0; r < 6; r++) {
        double t0 = now_s();
        for (int t = 0; t < nt; t++) {
            ba[t] = (bw_arg){buf + n / nt * t, n / nt, 0};
            pthread_create(&th[t], NULL, bw_run, &ba[t]);
        }
        for (int t = 0; t < nt; t++)
            pthread_join(th[t], NULL);
        double dt = now_s() - t0;
        if (r > 0 && dt < best)
            best = dt;
    }
    printf("read bandwidth: %.2f GB/s (%d threads, %d MiB, best of 5)\n",
           (double)n * 8 / best / 1e9, nt, mib);
    free(buf);

#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx2")) {
        const char *names[] = {"Q8_0 mix (vpsignb+vpmaddubsw+vpmaddwd+vpaddd)",
                               "K-quant mix (vpmaddubsw+vpaddw)"};
        double (*fns[])(void) = {peak_q8, peak_k};
        for (int f = 0; f < 2; f++) {
            pk_arg pa[64];
            double sum = 0;
            for (int t = 0; t < nt; t++) {
                pa[t] = (pk_arg){fns[f], 0};
                pthread_create(&th[t], NULL, pk_run, &pa[t]);
            }
            for (int t = 0; t < nt; t++) {
                pthread_join(th[t], NULL);
                sum += pa[t].rate;
            }
            printf("int8 peak, AVX2 %s: %.1f G/s per CPU time (%d threads, registers only)\n",
                   names[f], sum / 1e9, nt);
        }
    }
#endif
    const char *paths[] = {"portable", "avx2", "avx512"};
    const int fshape[2][2] = {{72, 896}, {24, 4864}};
    for (size_t p = 1; p < 3; p++) {
        const eng__kernels *k = eng__kernels_named(paths[p]);
        if (!k)
            continue;
        for (int s = 0; s < 2; s++) {
            const int N = fshape[s][0], K = fshape[s][1];
            fg_arg fa[64];
            for (int t = 0; t < nt; t++) {
                float *W = malloc(sizeof(float) * (size_t)N * K),
                      *X = malloc(sizeof(float) * (size_t)FM * K);
                for (size_t i = 0; i < (size_t)N * K; i++)
                    W[i] = (float)((int)(i * 2654435761u >> 20) % 201 - 100) / 100.0f;
                for (size_t i = 0; i < (size_t)FM * K; i++)
                    X[i] = (float)((int)(i * 40503u >> 5) % 201 - 100) / 100.0f;
                fa[t] = (fg_arg){k, W, X, malloc(sizeof(float) * FM * N), N, K, 400, 0};
            }
            double bw, bc;
            best_of_5(fg_run, fa, sizeof *fa, offsetof(fg_arg, cpu), nt, &bw, &bc);
            const double macs = (double)FM * N * K * fa[0].reps * nt;
            printf("f32 multiply-adds, %-8s %2d x %d x %4d: %.1f G/s wall, %.1f G/s per CPU "
                   "time (%d threads)\n",
                   k->name, FM, N, K, macs / bw / 1e9, macs / bc / 1e9, nt);
            for (int t = 0; t < nt; t++) {
                free((void *)fa[t].W);
                free((void *)fa[t].X);
                free(fa[t].Y);
            }
        }
    }
    const eng_dtype types[] = {ENG_Q8_0, ENG_Q4_0, ENG_Q4_K, ENG_Q5_K, ENG_Q6_K};
    for (size_t p = 0; p < 3; p++) {
        const eng__kernels *k = eng__kernels_named(paths[p]);
        if (!k)
            continue;
        for (size_t ti = 0; ti < 5; ti++) {
            qg_arg qa[64];
            for (int t = 0; t < nt; t++) {
                const size_t wb = (size_t)eng__dtype_bytes(types[ti], (int64_t)QN * QK);
                qa[t] = (qg_arg){k,
                                 types[ti],
                                 malloc(wb),
                                 malloc(sizeof(eng__q8a) * QM * QK / 32),
                                 malloc(sizeof(float) * QM * QN),
                                 p == 0 ? 2 : 10,
                                 0};
                for (size_t i = 0; i < wb; i++)
                    qa[t].W[i] = (uint8_t)(i * 2654435761u >> 13);
                /* sane f16 scales: 0x2000 (~0.0078) in every 16-bit word */
                for (size_t i = 0; i + 1 < wb; i += 2)
                    if (((i * 40503u) >> 7) % 3 == 0) {
                        qa[t].W[i] = 0;
                        qa[t].W[i + 1] = 0x20;
                    }
                float *x = malloc(sizeof(float) * QK);
                for (int i = 0; i < QK; i++)
                    x[i] = (float)((i * 7919) % 201 - 100) / 50.0f;
                for (int m = 0; m < QM; m++)
                    eng__quantize_act(x, QK, qa[t].X + (size_t)m * (QK / 32));
                free(x);
            }
            double bq, bc;
            best_of_5(qg_run, qa, sizeof *qa, offsetof(qg_arg, cpu), nt, &bq, &bc);
            const double macs = (double)QM * QN * QK * qa[0].reps * nt;
            printf("int8 multiply-adds, %-8s %-5s: %.1f G/s wall, %.1f G/s per CPU time "
                   "(%d threads)\n",
                   k->name, eng_dtype_name(types[ti]), macs / bq / 1e9, macs / bc / 1e9, nt);
            for (int t = 0; t < nt; t++) {
                free(qa[t].W);
                free(qa[t].X);
                free(qa[t].Y);
            }
        }
    }
    return 0;
}
