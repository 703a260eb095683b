/* bench_sampler: wall time and tokens/s of the samplers on a real checkpoint.
 *
 *   bench_sampler MODEL_DIR [--ctx 256,1024] [--holes 16,32,64] [--reps R]
 *
 * For each context length and hole size: exact mode with one token per step
 * (entropy, steps = N), cached mode with threshold tau = 0.9 (block 32), and
 * cached mode with a fixed 4 and 8 tokens per step (entropy, steps = N/4, N/8).
 * The prompt is deterministic token ids (3/4 prefix, 1/4 suffix). Prints a
 * Markdown table. Not a test: timings never decide pass/fail. */
#define _POSIX_C_SOURCE 200809L
#include "infill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Process CPU time in ms (all threads): steadier than wall time on a shared machine. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int parse_list(const char *s, int *out, int cap) {
    int n = 0;
    while (*s && n < cap) {
        char *e;
        out[n++] = (int)strtol(s, &e, 10);
        s = *e == ',' ? e + 1 : e;
        if (e == s && *s)
            break;
    }
    return n;
}

typedef struct cfg {
    const char *name;
    eng_alg alg;
    eng_cache_mode mode;
    int per_step; /* 0 = threshold */
} cfg;

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_sampler MODEL_DIR [--ctx 256,1024] [--holes 16,32,64] "
                        "[--reps R] [--threads N]\n");
        return 2;
    }
    int ctxs[8] = {256, 1024}, n_ctx = 2, holes[8] = {16, 32, 64}, n_holes = 3, reps = 1;
    int threads = 0, exact_steps = 0, cfg_on[4] = {1, 1, 1, 1};
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--ctx") == 0)
            n_ctx = parse_list(argv[i + 1], ctxs, 8);
        else if (strcmp(argv[i], "--holes") == 0)
            n_holes = parse_list(argv[i + 1], holes, 8);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--exact-steps") == 0)
            exact_steps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--configs") == 0) {
            int sel[4], n = parse_list(argv[i + 1], sel, 4);
            for (int k = 0; k < 4; k++)
                cfg_on[k] = 0;
            for (int k = 0; k < n; k++)
                if (sel[k] >= 0 && sel[k] < 4)
                    cfg_on[sel[k]] = 1;
        }
    }
    ifl_model_opts mo;
    ifl_model_opts_default(&mo);
    mo.max_candidates = 1;
    mo.load.n_threads = threads;
    eng_error err = {0};
    uint64_t t0 = base_now_ns();
    ifl_model *m = ifl_model_open(argv[1], &mo, &err);
    if (!m) {
        fprintf(stderr, "bench_sampler: %s\n", err.msg);
        return 1;
    }
    printf("model %s (%s), load %.0f ms\n\n", argv[1], ifl_model_device(m), base_ms_since(t0));
    const cfg cfgs[] = {
        {"exact, 1 token/step (entropy)", ENG_ALG_ENTROPY, ENG_CACHE_EXACT, 1},
        {"cached, threshold tau=0.9", ENG_ALG_THRESHOLD, ENG_CACHE_CACHED, 0},
        {"cached, 4 tokens/step (entropy)", ENG_ALG_ENTROPY, ENG_CACHE_CACHED, 4},
        {"cached, 8 tokens/step (entropy)", ENG_ALG_ENTROPY, ENG_CACHE_CACHED, 8},
    };
    /* Warm-up: map the weights and fill the caches before anything is timed. */
    {
        ifl_text_req w;
        memset(&w, 0, sizeof w);
        int32_t pre[2] = {1000, 1001}, suf[1] = {1002};
        w.prefix_ids = pre;
        w.n_prefix_ids = 2;
        w.suffix_ids = suf;
        w.n_suffix_ids = 1;
        eng_diff_params_default(&w.params);
        w.params.n_hole = 2;
        w.params.alg = ENG_ALG_ENTROPY;
        ifl_text_res wr;
        if (ifl_infill_text(m, &w, NULL, &wr) == BASE_OK)
            ifl_text_res_free(&wr);
    }
    printf(
        "| context | hole | configuration | steps | full+window fwd | latency ms | tokens/s | "
        "speed-up vs exact | CPU ms | CPU speed-up |\n|---|---|---|---|---|---|---|---|---|---|\n");
    int32_t *ids = malloc(sizeof(int32_t) * 4096);
    if (!ids)
        return 1;
    for (int i = 0; i < 4096; i++)
        ids[i] = (int32_t)(1000 + (i * 7919) % 50000);
    for (int ci = 0; ci < n_ctx; ci++) {
        for (int hi = 0; hi < n_holes; hi++) {
            int N = holes[hi], ctx = ctxs[ci];
            if (ctx + N + 2 > ifl_model_max_len(m)) {
                printf("| %d | %d | (does not fit the %d-token canvas) |||||\n", ctx, N,
                       ifl_model_max_len(m));
                continue;
            }
            double exact_ms = 0, exact_cpu = 0;
            for (size_t k = 0; k < BASE_ARRAY_LEN(cfgs); k++) {
                if (!cfg_on[k])
                    continue;
                ifl_text_req r;
                memset(&r, 0, sizeof r);
                r.prefix_ids = ids;
                r.n_prefix_ids = ctx - ctx / 4;
                r.suffix_ids = ids + 2048;
                r.n_suffix_ids = ctx / 4;
                r.ctx_budget = ctx;
                eng_diff_params_default(&r.params);
                r.params.alg = cfgs[k].alg;
                r.params.mode = cfgs[k].mode;
                r.params.n_hole = N;
                r.params.threshold = 0.9f;
                r.params.block = cfgs[k].per_step ? 0 : 32;
                r.params.steps = cfgs[k].per_step ? N / cfgs[k].per_step : 0;
                /* --exact-steps K: time K exact steps and extrapolate to the N
                 * forwards of the full run (marked in the table). */
                bool extrapolate = k == 0 && exact_steps > 0 && exact_steps < N;
                if (extrapolate)
                    r.params.max_steps = exact_steps;
                double best = 1e30, best_cpu = 1e30;
                ifl_text_res res;
                memset(&res, 0, sizeof res);
                for (int rep = 0; rep < reps; rep++) {
                    ifl_text_res_free(&res);
                    double c0 = cpu_ms();
                    base_status st = ifl_infill_text(m, &r, NULL, &res);
                    double c1 = cpu_ms() - c0;
                    if (c1 < best_cpu)
                        best_cpu = c1;
                    if (st != BASE_OK) {
                        fprintf(stderr, "bench_sampler: %s\n", base_status_str(st));
                        return 1;
                    }
                    if (res.t.diffuse_ms < best)
                        best = res.t.diffuse_ms;
                }
                if (extrapolate) {
                    /* Dream's schedule with S = N runs N - 1 forwards (step 0
                     * commits nothing); every exact forward costs the same. */
                    int fw = res.n_forward_full > 0 ? res.n_forward_full : 1;
                    best = best / fw * (N - 1);
                    best_cpu = best_cpu / fw * (N - 1);
                }
                if (k == 0) {
                    exact_ms = best;
                    exact_cpu = best_cpu;
                }
                printf("| %d | %d | %s%s | %d | %d+%d | %.0f | %.2f | %s%.1fx | %.0f | %.1fx |\n",
                       ctx, N, cfgs[k].name, extrapolate ? " (extrapolated)" : "",
                       extrapolate ? N : res.steps_run, extrapolate ? N - 1 : res.n_forward_full,
                       res.n_forward_window, best, 1000.0 * N / best, exact_ms > 0 ? "" : "n/a ",
                       exact_ms > 0 ? exact_ms / best : 0.0, best_cpu,
                       exact_cpu > 0 ? exact_cpu / best_cpu : 0.0);
                fflush(stdout);
                ifl_text_res_free(&res);
            }
        }
    }
    free(ids);
    ifl_model_close(m);
    return 0;
}
