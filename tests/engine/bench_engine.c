/* bench_engine: CPU backend speed on a real-shaped checkpoint (not a test).
 *
 *   bench_engine --model DIR [--threads N] [--ctx 512] [--hole 32] [--reps 3]
 *
 * Reports, for a canvas of ctx context tokens with a hole of `hole` masks in
 * the middle:
 *   (a) a full forward over every position with LM-head rows only for the hole,
 *   (b) a hole-only step (ENG_STEP_WINDOW) attending to the cached context K/V,
 *   (c) GFLOP/s of (a) against OpenBLAS sgemm 2048^3 on the same threads,
 *       measured in the same run,
 *   (d) peak RSS against the weight file size,
 *   (e) RSS by kind (file-mapped weights, anonymous) against the K/V cache and
 *       context scratch computed from the model's shape,
 * plus llama.cpp's llama-diffusion-cli canvas: 13 prompt tokens + 64 masks,
 * full recompute per step. INFILLD_CPU_KERNEL=avx2|portable|blas|reference
 * selects the kernel path. Results go to stdout as Markdown.
 *
 * --perf-ctl FIFO writes "enable" / "disable" to perf's control FIFO around
 * the hole steps of (b), so that `perf record -D -1 --control fifo:FIFO`
 * samples those steps only (not the load or the full pass before them).
 * With INFILLD_CPU_PROFILE=1 the CPU backend's per-op profile of those steps
 * (cpu/cpuprof.c) is printed before the table.
 *
 * --pair MODEL2 (a second model of the same family and tokenizer, e.g. the
 * Q8_0 GGUF of a BF16 directory) or --pair-prefetch (the same model with the
 * int8 tiles' prefetch off, INFILLD_CPU_PREFETCH=0's switch) alternates hole
 * steps of the two, 4 x reps pairs after a warm-up pair, and prints both
 * medians and the median of the per-pair ratios: on a machine shared with
 * other jobs the CPU time of one step drifts by +-25 % over minutes, and
 * alternating steps puts both sides in the same conditions. --pair-env
 * VAR=VALUE sets an environment variable for the second model's load only
 * (without --pair, the same model loaded again): a backend switch read at
 * load, e.g. INFILLD_CPU_PANELS=0, against the default in one process.
 *
 * --limit-pairs N alternates N hole steps with N runs of sgemm 2048^3 and
 * prints the median and range of step / (the step's FLOPs / that sgemm's
 * rate): the hole step against the FLOP limit with both sides measured in
 * the same minute (the machine's speed drifts by more than the margins in
 * question between the table's (b) and (c)). */
#define _GNU_SOURCE
#include "cpu_impl.h" /* engine-private: the dlopen'ed OpenBLAS the CPU backend uses */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) { return (double)base_now_ns() / 1e9; }

/* Process CPU time: on a machine shared with other jobs, CPU time per thread
 * shows what the wall clock would be without the competition. */
static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double sgemm_peak(int threads, int reps, double *cpu_gflops) {
    const eng__blas *bl = eng__blas_get();
    if (!bl)
        return 0;
    const int n = 2048;
    float *a = malloc((size_t)n * n * sizeof(float)), *b = malloc((size_t)n * n * sizeof(float)),
          *c = malloc((size_t)n * n * sizeof(float));
    for (size_t i = 0; i < (size_t)n * n; i++) {
        a[i] = (float)(i % 7) * 0.1f;
        b[i] = (float)(i % 5) * 0.1f;
    }
    bl->set_threads(threads);
    double best = 1e30, best_cpu = 1e30;
    for (int r = 0; r < reps + 1; r++) {
        double t0 = now_s(), c0 = cpu_s();
        bl->sgemm(ENG__ROW_MAJOR, ENG__NO_TRANS, ENG__NO_TRANS, n, n, n, 1.0f, a, n, b, n, 0.0f, c,
                  n);
        double t = now_s() - t0, ct = (cpu_s() - c0) / threads;
        if (r > 0 && t < best)
            best = t;
        if (r > 0 && ct < best_cpu)
            best_cpu = ct;
    }
    *cpu_gflops = 2.0 * n * n * (double)n / best_cpu / 1e9;
    bl->set_threads(1);
    free(a);
    free(b);
    free(c);
    return 2.0 * n * n * (double)n / best / 1e9;
}

/* perf's --control FIFO: one command per open, as `perf record` reads it. */
static void perf_control(const char *fifo, const char *cmd) {
    if (!fifo)
        return;
    FILE *f = fopen(fifo, "w");
    if (!f) {
        fprintf(stderr, "bench_engine: %s: cannot open\n", fifo);
        return;
    }
    fprintf(f, "%s\n", cmd);
    fclose(f);
}

int main(int argc, char **argv) {
    const char *model = NULL;
    int threads = 0, ctx_len = 512, hole = 32, reps = 3;
    const char *parts = "abl"; /* which measurements: a, b, l (llama.cpp canvas) */
    const char *perf_ctl = NULL, *pair = NULL, *pair_env = NULL;
    bool pair_pf = false;
    int limit_pairs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            model = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--ctx") == 0 && i + 1 < argc)
            ctx_len = atoi(argv[++i]);
        else if (strcmp(argv[i], "--hole") == 0 && i + 1 < argc)
            hole = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--parts") == 0 && i + 1 < argc)
            parts = argv[++i];
        else if (strcmp(argv[i], "--perf-ctl") == 0 && i + 1 < argc)
            perf_ctl = argv[++i];
        else if (strcmp(argv[i], "--pair") == 0 && i + 1 < argc)
            pair = argv[++i];
        else if (strcmp(argv[i], "--pair-prefetch") == 0)
            pair_pf = true;
        else if (strcmp(argv[i], "--limit-pairs") == 0 && i + 1 < argc)
            limit_pairs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--pair-env") == 0 && i + 1 < argc && strchr(argv[i + 1], '='))
            pair_env = argv[++i];
        else {
            fprintf(stderr, "usage: bench_engine --model DIR [--threads N] [--ctx 512] [--hole 32] "
                            "[--reps 3] [--parts abl] [--perf-ctl FIFO] [--pair MODEL2 | "
                            "--pair-prefetch] [--pair-env VAR=VALUE] [--limit-pairs N]\n");
            return 2;
        }
    }
    if (!model || reps < 1 || ctx_len < 2 || hole < 1)
        return 2;
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.device = ENG_DEVICE_CPU;
    o.n_threads = threads;
    eng_error err = {0};
    double t0 = now_s();
    eng_model *m = eng_model_load(model, &o, &err);
    if (!m) {
        fprintf(stderr, "bench_engine: %s\n", err.msg);
        return 1;
    }
    const double t_load = now_s() - t0;
    const eng_model_info *in = eng_model_get_info(m);
    const int len = ctx_len + hole, h0 = ctx_len / 2, h1 = h0 + hole;
    const int V = in->vocab_size;
    int32_t *tok = malloc((size_t)len * sizeof *tok), *pos = malloc((size_t)hole * sizeof *pos);
    base_rng rng;
    base_rng_seed(&rng, 1);
    for (int i = 0; i < len; i++)
        tok[i] = (int32_t)(base_rng_next(&rng) % 150000);
    for (int i = h0; i < h1; i++) {
        tok[i] = in->mask_id;
        pos[i - h0] = i;
    }
    int32_t *rows = malloc((size_t)hole * sizeof *rows);
    for (int i = 0; i < hole; i++)
        rows[i] = in->shift_logits ? pos[i] - 1 : pos[i];
    float *logits = malloc((size_t)hole * V * sizeof(float));
    eng_row_result *res = malloc((size_t)(hole > 64 ? hole : 64) * sizeof *res);
    eng_ctx *c = eng_ctx_new(m, 1, len, &err);
    if (!c || !logits || !res) {
        fprintf(stderr, "bench_engine: %s\n", c ? "out of memory" : err.msg);
        return 1;
    }
    eng_batch b = {1, len, tok, NULL};
    double *ta = calloc((size_t)reps + 1, sizeof(double)),
           *tb = calloc((size_t)reps * 4 + 1, sizeof(double)),
           *tc = calloc((size_t)reps + 1, sizeof(double));
    double *tac = calloc((size_t)reps + 1, sizeof(double)),
           *tbc = calloc((size_t)reps * 4 + 1, sizeof(double)),
           *tcc = calloc((size_t)reps + 1, sizeof(double));

    /* (a) full forward, head rows for the hole only. */
    for (int r = 0; r <= (strchr(parts, 'a') ? reps : 0); r++) {
        double s = now_s(), cs = cpu_s();
        if (eng_forward(c, &b, rows, hole, logits) != BASE_OK)
            return 1;
        if (r > 0) {
            ta[r - 1] = now_s() - s;
            tac[r - 1] = cpu_s() - cs;
        }
    }
    const double t_a = median(ta, reps);
    const double c_a = median(tac, reps);
    /* (b) hole-only step on the cached context. */
    eng_sampling smp = {ENG_PICK_DREAM, 0.0f, 1.0f, 0, 1, 0, NULL, 0};
    eng_step_req full = {ENG_STEP_FULL, 0, 0, pos, hole, smp};
    eng_step_req win = {ENG_STEP_WINDOW, in->shift_logits ? h0 - 1 : h0, h1, pos, hole, smp};
    if (eng_step(c, &b, &full, res) != BASE_OK)
        return 1;
    perf_control(perf_ctl, "enable");
    eng__cpu_profile_reset();
    for (int r = 0; r <= (strchr(parts, 'b') ? reps * 4 : 0); r++) {
        double s = now_s(), cs = cpu_s();
        if (eng_step(c, &b, &win, res) != BASE_OK)
            return 1;
        if (r > 0) {
            tb[r - 1] = now_s() - s;
            tbc[r - 1] = cpu_s() - cs;
        }
    }
    perf_control(perf_ctl, "disable");
    if (pair_env && !pair)
        pair = model;
    if (pair || pair_pf) {
        eng_model *m2 = m;
        eng_ctx *cp = c;
        int32_t *tok2 = tok;
        if (pair) {
            char var[128], *old = NULL;
            const size_t vl = (size_t)(pair_env ? strchr(pair_env, '=') - pair_env : 0);
            const bool env = pair_env && vl < sizeof var;
            if (env) {
                memcpy(var, pair_env, vl);
                var[vl] = 0;
                old = getenv(var) ? strdup(getenv(var)) : NULL;
                setenv(var, pair_env + vl + 1, 1);
            }
            m2 = eng_model_load(pair, &o, &err);
            if (env) { /* model A's setting back for anything read later */
                if (old)
                    setenv(var, old, 1);
                else
                    unsetenv(var);
                free(old);
            }
            if (!m2) {
                fprintf(stderr, "bench_engine: %s\n", err.msg);
                return 1;
            }
            const eng_model_info *in2 = eng_model_get_info(m2);
            if (in2->vocab_size != V || in2->shift_logits != in->shift_logits) {
                fprintf(stderr, "bench_engine: --pair needs the same vocabulary and shift\n");
                return 1;
            }
            cp = eng_ctx_new(m2, 1, len, &err);
            tok2 = malloc((size_t)len * sizeof *tok2);
            if (!cp || !tok2) {
                fprintf(stderr, "bench_engine: %s\n", cp ? "out of memory" : err.msg);
                return 1;
            }
            memcpy(tok2, tok, (size_t)len * sizeof *tok2);
            for (int i = h0; i < h1; i++)
                tok2[i] = in2->mask_id;
        }
        eng_batch b2p = {1, len, tok2, NULL};
        if (pair && eng_step(cp, &b2p, &full, res) != BASE_OK)
            return 1;
        const int np = reps * 4;
        double *pa = calloc((size_t)np, sizeof(double)), *pb = calloc((size_t)np, sizeof(double)),
               *pr = calloc((size_t)np, sizeof(double)), *wa = calloc((size_t)np, sizeof(double)),
               *wb = calloc((size_t)np, sizeof(double));
        for (int r = 0; r <= np; r++) {
            double s = now_s(), cs = cpu_s();
            if (eng_step(c, &b, &win, res) != BASE_OK)
                return 1;
            const double wa1 = now_s() - s, ca1 = cpu_s() - cs;
            if (pair_pf)
                eng__qtile_prefetch(false);
            s = now_s(), cs = cpu_s();
            if (eng_step(cp, &b2p, &win, res) != BASE_OK)
                return 1;
            const double wb1 = now_s() - s, cb1 = cpu_s() - cs;
            if (pair_pf)
                eng__qtile_prefetch(true);
            if (r > 0) {
                pa[r - 1] = ca1, pb[r - 1] = cb1, pr[r - 1] = ca1 / cb1;
                wa[r - 1] = wa1, wb[r - 1] = wb1;
            }
        }
        const int ntp = threads > 0 ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
        printf("paired hole steps, A = %s, B = %s, %d pairs alternating:\n\n"
               "| | A | B | A / B |\n|---|---:|---:|---:|\n",
               model,
               pair_env ? pair_env
               : pair   ? pair
                        : "the same, int8 prefetch off",
               np);
        const double ma = median(pa, np), mb = median(pb, np), ra = median(pr, np);
        printf("| CPU per thread, median | %.0f ms | %.0f ms | %.3f (median of pair ratios %.3f, "
               "range %.3f-%.3f) |\n",
               ma / ntp * 1e3, mb / ntp * 1e3, ma / mb, ra, pr[0], pr[np - 1]);
        printf("| wall, median | %.0f ms | %.0f ms | %.3f |\n\n", median(wa, np) * 1e3,
               median(wb, np) * 1e3, median(wa, np) / median(wb, np));
        free(pa), free(pb), free(pr), free(wa), free(wb);
        if (pair) {
            eng_ctx_free(cp);
            eng_model_free(m2);
            free(tok2);
        }
    }
    const int b_steps = strchr(parts, 'b') ? reps * 4 + 1 : 0;
    if (b_steps && eng__prof_enabled()) {
        printf("CPU profile of the hole steps (INFILLD_CPU_PROFILE=1):\n\n");
        eng__cpu_profile_print(stdout, b_steps,
                               threads > 0 ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN));
        printf("\n");
    }
    const double t_b = median(tb, reps * 4);
    const double c_b = median(tbc, reps * 4);
    /* llama.cpp's canvas: 13 prompt + 64 masks, full recompute per step. */
    const int lc = 13 + 64;
    int32_t ctok[77], cpos[64];
    for (int i = 0; i < lc; i++)
        ctok[i] = i < 13 ? tok[i] : in->mask_id;
    for (int i = 0; i < 64; i++)
        cpos[i] = 13 + i;
    eng_ctx *c2 = eng_ctx_new(m, 1, lc, &err);
    eng_batch b2 = {1, lc, ctok, NULL};
    eng_step_req creq = {ENG_STEP_FULL, 0, 0, cpos, 64, smp};
    for (int r = 0; r <= (strchr(parts, 'l') ? reps : 0); r++) {
        double s = now_s(), cs = cpu_s();
        if (eng_step(c2, &b2, &creq, res) != BASE_OK)
            return 1;
        if (r > 0) {
            tc[r - 1] = now_s() - s;
            tcc[r - 1] = cpu_s() - cs;
        }
    }
    const double t_c = median(tc, reps);
    const double c_c = median(tcc, reps);

    /* FLOPs of (a): the linear layers over every position, attention, the head rows. */
    const double d = in->d_model, hd = in->head_dim, qd = in->n_head * hd, kvd = in->n_kv_head * hd,
                 ff = in->d_ff, T = len;
    const double lin = 2.0 * (qd * d + 2 * kvd * d + d * qd + 3 * d * ff);
    const double flops_a = in->n_layer * (T * lin + 4.0 * T * T * qd) + 2.0 * hole * (double)V * d;
    const double Wn = h1 - (in->shift_logits ? h0 - 1 : h0);
    const double flops_b =
        in->n_layer * (Wn * lin + 4.0 * Wn * T * qd) + 2.0 * hole * (double)V * d;
    /* Peak RSS of the engine's own work, before the sgemm buffers below. */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rss = (double)ru.ru_maxrss * 1024.0;
    /* The resident set by kind now (after the steps): file pages are the mapped
     * weights, anonymous pages the context (K/V cache, activations, scratch),
     * the tokenizer, the allocator and OpenBLAS. */
    double rss_file = 0, rss_anon = 0;
    FILE *st = fopen("/proc/self/status", "r");
    if (st) {
        char line[256];
        while (fgets(line, sizeof line, st)) {
            double kb;
            if (sscanf(line, "RssFile: %lf", &kb) == 1)
                rss_file = kb * 1024;
            else if (sscanf(line, "RssAnon: %lf", &kb) == 1)
                rss_anon = kb * 1024;
        }
        fclose(st);
    }
    /* What the CPU backend allocates for this context (cpu/backend_cpu.c,
     * eng__cpu_ctx_new), by the same formulas: K/V cache, and the scratch that a
     * quantised model touches (activations, logit chunk, int8 X, per-thread
     * score/vocabulary buffers; the f32 weight tiles only for non-block types). */
    const double Rr = len, dd = in->d_model, qdd = (double)in->n_head * in->head_dim,
                 kvdd = (double)in->n_kv_head * in->head_dim, ffd = in->d_ff,
                 kmx = dd > qdd ? (dd > ffd ? dd : ffd) : (qdd > ffd ? qdd : ffd);
    const int ntt = threads > 0 ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    const double kv_bytes = 2.0 * in->n_layer * Rr * kvdd * 4;
    /* the logit rows a step touches: its positions in equal chunks of <= 64 */
    const int lch = (hole + 63) / 64, lrows = (hole + lch - 1) / lch;
    const double scratch_bytes = 4.0 * Rr * (2 * dd + 2 * qdd + 2 * kvdd + 2 * ffd) +
                                 4.0 * lrows * V + Rr * 40.0 * ((kmx + 31) / 32) +
                                 ntt * (4.0 * 64 * len + 12.0 * V) + 4.0 * len * in->head_dim;
    const int nt = threads > 0 ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    double peak_cpu = 0;
    const double peak = sgemm_peak(nt, 3, &peak_cpu);

    printf("model: %s (%s, %d layers, d %d, %d/%d heads, head_dim %d, d_ff %d, vocab %d, %s)\n",
           model, in->arch, in->n_layer, in->d_model, in->n_head, in->n_kv_head, in->head_dim,
           in->d_ff, V,
           in->dtype == ENG_BF16  ? "BF16"
           : in->dtype == ENG_F16 ? "F16"
                                  : "F32");
    printf("device: %s; load %.2f s; reps %d (median)\n\n", eng_model_device_desc(m), t_load, reps);
    /* Wall clock, and CPU time per thread (what the wall clock would be on an
     * otherwise idle machine with perfect balance). */
    printf("| measurement | wall | GFLOP/s (wall) | CPU/thread | GFLOP/s (CPU) | note |\n"
           "|---|---|---|---|---|---|\n");
    printf("| (a) full forward, %d positions, %d head rows | %.0f ms | %.1f | %.0f ms | %.1f | "
           "%.0f%% (wall) / %.0f%% (CPU) of sgemm peak |\n",
           len, hole, t_a * 1e3, flops_a / t_a / 1e9, c_a / nt * 1e3, flops_a / (c_a / nt) / 1e9,
           peak > 0 ? 100 * flops_a / t_a / 1e9 / peak : 0,
           peak_cpu > 0 ? 100 * flops_a / (c_a / nt) / 1e9 / peak_cpu : 0);
    printf("| (b) hole-only step (%d rows, cached K/V) | %.0f ms | %.1f | %.0f ms | %.1f | %.1fx "
           "(wall) / %.1fx (CPU) faster than (a) |\n",
           (int)Wn, t_b * 1e3, flops_b / t_b / 1e9, c_b / nt * 1e3, flops_b / (c_b / nt) / 1e9,
           t_a / t_b, c_a / c_b);
    printf("| (c) OpenBLAS sgemm 2048^3 | | %.1f | | %.1f | %s kernels, %d threads |\n", peak,
           peak_cpu, eng__blas_get() ? eng__blas_get()->corename() : "no OpenBLAS", nt);
    printf("| (d) peak RSS | %.0f MiB | | | | %.2fx the weight file (%.0f MiB) |\n",
           rss / 1048576.0, rss / (double)in->weight_bytes, (double)in->weight_bytes / 1048576.0);
    printf("| (e) RSS now: file-mapped (weights) / anonymous | %.0f / %.0f MiB | | | | computed: "
           "K/V %.0f MiB, context scratch %.0f MiB; file + K/V + scratch = %.0f MiB, RSS %.2fx "
           "that |\n",
           rss_file / 1048576.0, rss_anon / 1048576.0, kv_bytes / 1048576.0,
           scratch_bytes / 1048576.0,
           ((double)in->weight_bytes + kv_bytes + scratch_bytes) / 1048576.0,
           (rss_file + rss_anon) / ((double)in->weight_bytes + kv_bytes + scratch_bytes));
    printf("| llama.cpp canvas: 13 + 64 masks, full step | %.0f ms | | %.0f ms | | llama.cpp "
           "~830 ms |\n",
           t_c * 1e3, c_c / nt * 1e3);
    if (limit_pairs > 0 && eng__blas_get()) {
        /* The hole step against the FLOP limit, a step and an sgemm 2048^3 at a
         * time, so that both see the machine in the same state. */
        double *ratio = calloc((size_t)limit_pairs, sizeof(double)), lo = 1e30, hi = 0;
        for (int r = 0; r < limit_pairs && ratio; r++) {
            double cpu_gf = 0;
            const double gf = sgemm_peak(nt, 2, &cpu_gf);
            /* An untimed step first: the sgemm's threads and data leave the
             * cores and caches to the engine again. */
            double s = 0;
            for (int k = 0; k < 2; k++) {
                s = now_s();
                if (eng_step(c, &b, &win, res) != BASE_OK)
                    return 1;
            }
            const double t = now_s() - s;
            ratio[r] = t / (flops_b / (gf * 1e9));
            lo = ratio[r] < lo ? ratio[r] : lo;
            hi = ratio[r] > hi ? ratio[r] : hi;
        }
        if (ratio)
            printf("| hole step / (FLOPs / sgemm rate), %d alternating pairs | %.2fx median "
                   "(%.2f-%.2f) "
                   "| | | | target <= 1.5x |\n",
                   limit_pairs, median(ratio, limit_pairs), lo, hi);
        free(ratio);
    }
    eng_ctx_free(c2);
    eng_ctx_free(c);
    eng_model_free(m);
    free(ta);
    free(tb);
    free(tc);
    free(tac);
    free(tbc);
    free(tcc);
    free(tok);
    free(pos);
    free(rows);
    free(logits);
    free(res);
    return 0;
}
