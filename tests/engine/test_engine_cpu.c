/* CPU backend numerics on tiny random checkpoints written by tmodel.h:
 *  - reference (scalar, double accumulators) vs portable, AVX2 and BLAS paths;
 *  - a padded batch vs each sequence alone (padded rows are zeros, never NaN);
 *  - a cached-window step vs a full step;
 *  - eng_step's fused reductions vs the same reductions computed here from
 *    eng_forward logits;
 *  - argument errors and cancellation. */
#include "tmodel.h"

#include "check.h"
#include "engine.h"
#include "tforward.h"

#include <pthread.h>

static char *g_root;
static int g_case;

static char *write_model(tm_spec s) {
    static char p[8][4096];
    char *d = p[g_case % 8];
    snprintf(d, sizeof p[0], "%s/m%d", g_root, ++g_case);
    CHECK_EQ_I(tm_write(d, &s), 0);
    return d;
}

/* Loads with the CPU kernel path forced through INFILLD_CPU_KERNEL. */
static eng_model *load(const char *dir, const char *kernel, int threads) {
    if (kernel)
        setenv("INFILLD_CPU_KERNEL", kernel, 1);
    else
        unsetenv("INFILLD_CPU_KERNEL");
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.device = ENG_DEVICE_CPU;
    o.n_threads = threads;
    eng_error err = {0};
    eng_model *m = eng_model_load(dir, &o, &err);
    unsetenv("INFILLD_CPU_KERNEL");
    if (!m)
        fprintf(stderr, "load %s: %s\n", dir, err.msg);
    CHECK(m != NULL);
    return m;
}

static void canvas(int32_t *t, int n, int V, uint64_t seed) {
    base_rng r;
    base_rng_seed(&r, seed);
    for (int i = 0; i < n; i++)
        t[i] = (int32_t)(base_rng_next(&r) % (uint64_t)V);
}

/* ---- paths ------------------------------------------------------------------------ */

/* The kernel set the run-time dispatch must pick for a forced path, from the
 * CPU's own features: so on an AVX-512 machine "avx2-only" really runs the
 * AVX2 kernels and "avx2" the AVX-512 ones, and on an AVX2-only machine both
 * run AVX2 (the AVX-512 kernels need such a CPU to be tested at all). */
static const char *expected_kernels(const char *kernel) {
    if (kernel && strcmp(kernel, "portable") == 0)
        return "portable";
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl");
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx512 && !(kernel && strcmp(kernel, "avx2-only") == 0))
        return "AVX-512";
    if (avx2)
        return "AVX2+FMA";
#endif
    return "portable";
}

/* ff: the FFN width (0: the default); 1,100 gives the down projection a K
 * that the panel path cuts into nine chunks of 128, the last (76) not a
 * multiple of 32, and, on one thread, gate/up tasks of several groups of 48
 * weight rows (the prefetch and packing run on from group to group).
 * On a CPU with AMX the BF16 matmuls run there unless amx_off. */
static void test_paths(bool bf16, tm_family fam, int ff, bool amx_off) {
    tm_spec s = tm_default(fam);
    s.bf16 = bf16;
    s.seed = 7 + bf16;
    if (ff)
        s.ff = ff;
    if (amx_off)
        setenv("INFILLD_CPU_AMX", "0", 1);
    const char *d = write_model(s);
    enum { LEN = 37 };
    int32_t tok[LEN];
    canvas(tok, LEN, s.vocab, 3);
    eng_model *ref = load(d, "reference", 2);
    if (!ref)
        return;
    float *lr = tf_forward_all(ref, tok, NULL, 1, LEN);
    /* "avx2" = the backend's own SIMD kernels (AVX-512 where the CPU has it);
     * "avx2-only" caps them at AVX2 through INFILLD_CPU_ISA. */
    static const char *kernels[] = {"portable", "avx2", "avx2-only", "blas", NULL};
    for (int k = 0; k < 5; k++) {
        if (kernels[k] && strcmp(kernels[k], "avx2-only") == 0)
            setenv("INFILLD_CPU_ISA", "avx2", 1);
        eng_model *m =
            load(d, kernels[k] && strcmp(kernels[k], "avx2-only") == 0 ? "avx2" : kernels[k],
                 k == 1 ? 1 : 2);
        unsetenv("INFILLD_CPU_ISA");
        if (!m)
            continue;
        float *lk = tf_forward_all(m, tok, NULL, 1, LEN);
        double e = tf_row_err(lk, lr, LEN, s.vocab);
        fprintf(stderr, "path %s (%s, family %d, ff %d%s): rel err %.3g [%s]\n",
                kernels[k] ? kernels[k] : "default", bf16 ? "bf16" : "f32", fam, s.ff,
                amx_off ? ", AMX off" : "", e, eng_model_device_desc(m));
        CHECK(e <= 1e-5);
        /* BLAS-backed paths name their own kernels after the sgemm. */
        const char *want = expected_kernels(kernels[k]);
        if (!strstr(eng_model_device_desc(m), want))
            fprintf(stderr, "path %s: expected %s kernels, got %s\n",
                    kernels[k] ? kernels[k] : "default", want, eng_model_device_desc(m));
        CHECK(strstr(eng_model_device_desc(m), want) != NULL);
        free(lk);
        eng_model_free(m);
    }
    free(lr);
    eng_model_free(ref);
    unsetenv("INFILLD_CPU_AMX");
}

/* ---- padding ------------------------------------------------------------------------ */

static void test_padding(void) {
    tm_spec s = tm_default(TM_DREAM);
    const char *d = write_model(s);
    eng_model *m = load(d, NULL, 2);
    if (!m)
        return;
    const int V = s.vocab;
    enum { LA = 29, LB = 37, PAD = LB - LA };
    int32_t a[LA], b[LB], tok[3 * LB];
    uint8_t valid[3 * LB];
    canvas(a, LA, V, 11);
    canvas(b, LB, V, 12);
    /* seq 0: left-padded a; seq 1: b; seq 2: right-padded a. */
    for (int i = 0; i < LB; i++) {
        tok[i] = i < PAD ? 1 : a[i - PAD];
        valid[i] = i >= PAD;
        tok[LB + i] = b[i];
        valid[LB + i] = 1;
        tok[2 * LB + i] = i < LA ? a[i] : 1;
        valid[2 * LB + i] = i < LA;
    }
    float *la = tf_forward_all(m, a, NULL, 1, LA);
    float *lb = tf_forward_all(m, b, NULL, 1, LB);
    float *lt = tf_forward_all(m, tok, valid, 3, LB);
    bool finite = true, pad_zero = true;
    for (size_t i = 0; i < (size_t)3 * LB * V; i++)
        finite = finite && isfinite(lt[i]);
    for (int r = 0; r < 3 * LB; r++)
        if (!valid[r])
            for (int v = 0; v < V; v++)
                pad_zero = pad_zero && lt[(size_t)r * V + v] == 0.0f;
    CHECK(finite);
    CHECK(pad_zero);
    double e0 = tf_row_err(lt + (size_t)PAD * V, la, LA, V);
    double e1 = tf_row_err(lt + (size_t)LB * V, lb, LB, V);
    double e2 = tf_row_err(lt + (size_t)2 * LB * V, la, LA, V);
    fprintf(stderr, "padding: left %.3g, none %.3g, right %.3g\n", e0, e1, e2);
    CHECK(e0 <= 1e-5);
    CHECK(e1 <= 1e-5);
    CHECK(e2 <= 1e-5);
    free(la);
    free(lb);
    free(lt);
    eng_model_free(m);
}

/* ---- step reductions, computed independently here ------------------------------------- */

static const double *g_sort_l;
static int cmp_desc(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    if (g_sort_l[a] != g_sort_l[b])
        return g_sort_l[a] > g_sort_l[b] ? -1 : 1;
    return a - b;
}

static void ref_reduce(const float *raw, int V, const eng_sampling *s, uint32_t pos,
                       eng_row_result *r) {
    double *l = malloc((size_t)V * sizeof *l), *p = malloc((size_t)V * sizeof *p);
    int *ix = malloc((size_t)V * sizeof *ix);
    for (int v = 0; v < V; v++)
        l[v] = raw[v];
    for (int i = 0; i < s->n_bias; i++)
        l[s->bias[i].id] += s->bias[i].bias;
    int token = 0;
    if (s->pick == ENG_PICK_DREAM) {
        if (s->temperature > 0)
            for (int v = 0; v < V; v++)
                l[v] /= s->temperature;
        if (s->top_p < 1) {
            double mx = -INFINITY, z = 0;
            for (int v = 0; v < V; v++)
                mx = fmax(mx, l[v]);
            for (int v = 0; v < V; v++)
                z += exp(l[v] - mx);
            for (int v = 0; v < V; v++)
                ix[v] = v;
            g_sort_l = l;
            qsort(ix, (size_t)V, sizeof *ix, cmp_desc);
            double cum = 0;
            bool crossed = false;
            for (int k = 0; k < V; k++) {
                if (crossed)
                    l[ix[k]] = -INFINITY;
                else {
                    cum += exp(l[ix[k]] - mx) / z;
                    crossed = cum > s->top_p;
                }
            }
        }
        if (s->top_k > 0 && s->top_k < V) {
            for (int v = 0; v < V; v++)
                ix[v] = v;
            g_sort_l = l;
            qsort(ix, (size_t)V, sizeof *ix, cmp_desc);
            double kth = l[ix[s->top_k - 1]];
            for (int v = 0; v < V; v++)
                if (l[v] < kth)
                    l[v] = -INFINITY;
        }
    }
    double mx = -INFINITY, z = 0;
    for (int v = 0; v < V; v++)
        mx = fmax(mx, l[v]);
    for (int v = 0; v < V; v++)
        z += (p[v] = exp(l[v] - mx));
    for (int v = 0; v < V; v++)
        p[v] /= z;
    if (s->pick == ENG_PICK_DREAM && s->temperature > 0) {
        double u = eng_noise_uniform(s->seed, s->step, pos, 0), cum = 0;
        for (int v = 0; v < V; v++) {
            if (p[v] <= 0)
                continue;
            cum += p[v];
            token = v;
            if (cum > u)
                break;
        }
    } else if (s->pick == ENG_PICK_GUMBEL && s->temperature > 0) {
        double best = -INFINITY;
        for (int v = 0; v < V; v++) {
            double g = -log(-log(eng_noise_uniform(s->seed, s->step, pos, (uint32_t)v)));
            double x = l[v] + s->temperature * g;
            if (x > best) {
                best = x;
                token = v;
            }
        }
    } else {
        for (int v = 1; v < V; v++)
            if (p[v] > p[token])
                token = v;
    }
    double t1 = 0, t2 = 0, ent = 0;
    for (int v = 0; v < V; v++) {
        if (p[v] > t1) {
            t2 = t1;
            t1 = p[v];
        } else if (p[v] > t2) {
            t2 = p[v];
        }
        if (p[v] > 0)
            ent += p[v] * log(p[v] + 1e-10);
    }
    r->token = token;
    r->prob = (float)p[token];
    r->margin = (float)(t1 - t2);
    r->neg_entropy = (float)ent;
    free(l);
    free(p);
    free(ix);
}

static void test_step_reductions(tm_family fam) {
    tm_spec s = tm_default(fam);
    s.seed = 21;
    const char *d = write_model(s);
    eng_model *m = load(d, NULL, 2);
    if (!m)
        return;
    const eng_model_info *in = eng_model_get_info(m);
    const int V = s.vocab;
    enum { LEN = 31, NP = 12 };
    int32_t tok[2 * LEN], pos[NP];
    canvas(tok, 2 * LEN, V, 5);
    for (int i = 0; i < NP / 2; i++) {
        pos[i] = 8 + i;            /* seq 0 */
        pos[NP / 2 + i] = LEN + i; /* seq 1, including position 0 (row 0 for shifted) */
        tok[8 + i] = s.mask_id;
    }
    float *lg = tf_forward_all(m, tok, NULL, 2, LEN);
    eng_logit_bias bias[2] = {{7, -INFINITY}, {42, 2.5f}};
    eng_sampling cases[] = {
        {ENG_PICK_DREAM, 0.0f, 1.0f, 0, 1, 0, NULL, 0},
        {ENG_PICK_DREAM, 0.8f, 0.9f, 0, 99, 3, NULL, 0},
        {ENG_PICK_DREAM, 1.0f, 1.0f, 5, 5, 1, NULL, 0},
        {ENG_PICK_DREAM, 0.5f, 0.7f, 3, 1234, 9, bias, 2},
        {ENG_PICK_DREAM, 0.0f, 0.5f, 0, 1, 0, bias, 2},
        {ENG_PICK_GUMBEL, 0.0f, 1.0f, 0, 1, 0, NULL, 0},
        {ENG_PICK_GUMBEL, 1.0f, 1.0f, 0, 77, 2, bias, 2},
    };
    eng_error err = {0};
    eng_ctx *c = eng_ctx_new(m, 2, LEN, &err);
    for (size_t k = 0; k < BASE_ARRAY_LEN(cases); k++) {
        eng_step_req req = {ENG_STEP_FULL, 0, 0, pos, NP, cases[k]};
        eng_row_result got[NP], want;
        eng_batch b = {2, LEN, tok, NULL};
        CHECK_EQ_I(eng_step(c, &b, &req, got), BASE_OK);
        int bad = 0;
        for (int i = 0; i < NP; i++) {
            const int p = pos[i], sq = p / LEN, col = p % LEN;
            const int row = sq * LEN + (in->shift_logits && col > 0 ? col - 1 : col);
            ref_reduce(lg + (size_t)row * V, V, &cases[k], (uint32_t)p, &want);
            if (got[i].token != want.token || fabsf(got[i].prob - want.prob) > 1e-4f ||
                fabsf(got[i].margin - want.margin) > 1e-4f ||
                fabsf(got[i].neg_entropy - want.neg_entropy) >
                    1e-4f * (1 + fabsf(want.neg_entropy))) {
                bad++;
                fprintf(stderr,
                        "case %zu pos %d: got (%d %.6f %.6f %.6f) want (%d %.6f %.6f %.6f)\n", k, p,
                        got[i].token, got[i].prob, got[i].margin, got[i].neg_entropy, want.token,
                        want.prob, want.margin, want.neg_entropy);
            }
            CHECK(got[i].token != 7 || cases[k].n_bias == 0);
        }
        CHECK_EQ_I(bad, 0);
    }
    eng_ctx_free(c);
    free(lg);
    eng_model_free(m);
}

/* ---- window cache ------------------------------------------------------------------------- */

static void compare_results(const eng_row_result *a, const eng_row_result *b, int n,
                            const char *what) {
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (a[i].token != b[i].token || fabsf(a[i].prob - b[i].prob) > 1e-5f ||
            fabsf(a[i].margin - b[i].margin) > 1e-5f ||
            fabsf(a[i].neg_entropy - b[i].neg_entropy) > 1e-4f)
            bad++;
    if (bad)
        fprintf(stderr, "%s: %d of %d rows differ\n", what, bad, n);
    CHECK_EQ_I(bad, 0);
}

static void test_window(tm_family fam, int layers) {
    tm_spec s = tm_default(fam);
    s.layers = layers;
    s.seed = 31 + (uint64_t)layers;
    const char *d = write_model(s);
    eng_model *m = load(d, NULL, 2);
    if (!m)
        return;
    const bool shift = eng_model_get_info(m)->shift_logits;
    enum { LEN = 33, H0 = 10, H1 = 20, NP = 2 * (H1 - H0) };
    int32_t tok[2 * LEN], pos[NP];
    canvas(tok, 2 * LEN, s.vocab, 9);
    for (int sq = 0; sq < 2; sq++)
        for (int i = H0; i < H1; i++) {
            tok[sq * LEN + i] = s.mask_id;
            pos[sq * (H1 - H0) + i - H0] = sq * LEN + i;
        }
    const int ws = shift ? H0 - 1 : H0;
    eng_sampling smp = {ENG_PICK_DREAM, 0.0f, 1.0f, 0, 1, 0, NULL, 0};
    eng_batch b = {2, LEN, tok, NULL};
    eng_error err = {0};
    eng_ctx *c = eng_ctx_new(m, 2, LEN, &err);
    eng_row_result full[NP], win[NP];

    /* A window step needs an earlier full pass on this layout. */
    eng_step_req wreq = {ENG_STEP_WINDOW, ws, H1, pos, NP, smp};
    CHECK_EQ_I(eng_step(c, &b, &wreq, win), BASE_ERR_STATE);
    /* The rows read must lie in the window. */
    eng_step_req narrow = {ENG_STEP_WINDOW, H0 + 1, H1, pos, NP, smp};
    CHECK_EQ_I(eng_step(c, &b, &narrow, win), BASE_ERR_INVALID);

    eng_step_req freq = {ENG_STEP_FULL, 0, 0, pos, NP, smp};
    CHECK_EQ_I(eng_step(c, &b, &freq, full), BASE_OK);
    CHECK_EQ_I(eng_step(c, &b, &wreq, win), BASE_OK);
    compare_results(full, win, NP, "window step, same canvas");

    /* Commit some hole tokens and step the window again. With one layer the
     * cached K/V outside the window do not depend on the window's tokens,
     * so the window step equals a full step of the new canvas exactly. */
    tok[H0 + 2] = 5;
    tok[LEN + H0 + 4] = 6;
    CHECK_EQ_I(eng_step(c, &b, &wreq, win), BASE_OK);
    eng_ctx *c2 = eng_ctx_new(m, 2, LEN, &err);
    CHECK_EQ_I(eng_step(c2, &b, &freq, full), BASE_OK);
    if (layers == 1)
        compare_results(full, win, NP, "window step after commits, one layer");

    /* A different padding layout invalidates the cache. */
    uint8_t valid[2 * LEN];
    memset(valid, 1, sizeof valid);
    valid[0] = 0;
    eng_batch bp = {2, LEN, tok, valid};
    CHECK_EQ_I(eng_step(c, &bp, &wreq, win), BASE_ERR_STATE);
    eng_ctx_free(c2);
    eng_ctx_free(c);
    eng_model_free(m);
}

/* ---- two contexts of one model on two threads ------------------------------------------------ */

typedef struct conc_arg {
    eng_model *m;
    const int32_t *tok;
    int len;
    float *out;
} conc_arg;

/* No CHECK in here: the check counters are not thread-safe. */
static void *conc_main(void *p) {
    conc_arg *a = p;
    int32_t rows[64];
    for (int i = 0; i < a->len; i++)
        rows[i] = i;
    eng_batch b = {1, a->len, a->tok, NULL};
    for (int r = 0; r < 3; r++) {
        eng_ctx *c = eng_ctx_new(a->m, 1, a->len, NULL);
        if (!c || eng_forward(c, &b, rows, a->len, a->out) != BASE_OK)
            a->out[0] = NAN;
        eng_ctx_free(c);
    }
    return NULL;
}

static void test_concurrent_contexts(void) {
    tm_spec s = tm_default(TM_DREAM);
    const char *d = write_model(s);
    eng_model *m = load(d, NULL, 2);
    if (!m)
        return;
    enum { LEN = 23 };
    int32_t t1[LEN], t2[LEN];
    canvas(t1, LEN, s.vocab, 41);
    canvas(t2, LEN, s.vocab, 42);
    float *want1 = tf_forward_all(m, t1, NULL, 1, LEN),
          *want2 = tf_forward_all(m, t2, NULL, 1, LEN);
    conc_arg a1 = {m, t1, LEN, malloc((size_t)LEN * s.vocab * sizeof(float))};
    conc_arg a2 = {m, t2, LEN, malloc((size_t)LEN * s.vocab * sizeof(float))};
    pthread_t th;
    CHECK_EQ_I(pthread_create(&th, NULL, conc_main, &a1), 0);
    conc_main(&a2);
    pthread_join(th, NULL);
    CHECK(tf_row_err(a1.out, want1, LEN, s.vocab) == 0.0);
    CHECK(tf_row_err(a2.out, want2, LEN, s.vocab) == 0.0);
    free(a1.out);
    free(a2.out);
    free(want1);
    free(want2);
    eng_model_free(m);
}

/* ---- errors and cancellation ------------------------------------------------------------------
 */

static void test_errors(void) {
    tm_spec s = tm_default(TM_LLADA);
    const char *d = write_model(s);
    eng_model *m = load(d, NULL, 1);
    if (!m)
        return;
    eng_error err = {0};
    eng_ctx *c = eng_ctx_new(m, 1, 16, &err);
    int32_t tok[32] = {0}, rows[1] = {3};
    float *out = malloc((size_t)s.vocab * sizeof(float));
    eng_batch b = {1, 16, tok, NULL};
    tok[4] = s.vocab; /* out of the vocabulary */
    CHECK_EQ_I(eng_forward(c, &b, rows, 1, out), BASE_ERR_RANGE);
    tok[4] = 0;
    eng_batch big = {2, 16, tok, NULL};
    CHECK_EQ_I(eng_forward(c, &big, NULL, 0, NULL), BASE_ERR_TOO_LARGE);
    rows[0] = 16;
    CHECK_EQ_I(eng_forward(c, &b, rows, 1, out), BASE_ERR_RANGE);
    rows[0] = 3;
    volatile int cancel = 1;
    eng_ctx_set_cancel(c, &cancel);
    CHECK_EQ_I(eng_forward(c, &b, rows, 1, out), BASE_ERR_CANCELLED);
    int32_t pos[1] = {5};
    eng_step_req w = {ENG_STEP_WINDOW, 4, 8, pos, 1, {ENG_PICK_GUMBEL, 0, 1, 0, 0, 0, NULL, 0}};
    eng_row_result r;
    CHECK_EQ_I(eng_step(c, &b, &w, &r), BASE_ERR_STATE);
    cancel = 0;
    CHECK_EQ_I(eng_forward(c, &b, rows, 1, out), BASE_OK);
    CHECK_EQ_I(eng_step(c, &b, &w, &r), BASE_OK);
    CHECK(eng_ctx_new(m, 0, 16, &err) == NULL);
    free(out);
    eng_ctx_free(c);
    eng_model_free(m);
}

int main(void) {
    if (!tm_have_tokenizer()) {
        fprintf(stderr, "skipped: no Qwen tokenizer.json (run ./bootstrap.sh)\n");
        return 77;
    }
    g_root = tm_tmpdir();
    if (!g_root)
        return 1;
    base_log_set_level(BASE_LOG_WARN);
    test_paths(false, TM_DREAM, 0, false);
    test_paths(true, TM_DREAM, 0, false);
    test_paths(true, TM_DREAM, 1100, true);
    test_paths(false, TM_LLADA, 0, false);
    test_padding();
    test_step_reductions(TM_DREAM);
    test_step_reductions(TM_LLADA);
    test_window(TM_DREAM, 2);
    test_window(TM_DREAM, 1);
    test_window(TM_LLADA, 1);
    test_concurrent_contexts();
    test_errors();
    tm_rmrf(g_root);
    free(g_root);
    return check_finish("test_engine_cpu");
}
