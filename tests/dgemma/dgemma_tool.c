/* dgemma_tool: drives the DiffusionGemma passes and sampler for the tests.
 *
 *   dgemma_tool info --model DIR
 *       JSON of eng_dg_info (and the family) on stdout.
 *   dgemma_tool encode --model DIR --tokens IDS [--tokens2 IDS] --out FILE
 *       Encoder pass over IDS (then, with --tokens2, a second pass continuing the
 *       cache); writes the logits of every row of both as little-endian f32.
 *   dgemma_tool decode --model DIR [--prompt IDS] --canvas IDS [--sc FILE] --out FILE
 *                      [--rows R]
 *       Encodes the prompt (in pieces of R rows when given), then one decoder pass
 *       over the canvas, with self-conditioning logits read from FILE (f32 rows).
 *   dgemma_tool generate --model DIR [--prompt IDS] [--seed S] [--steps N]
 *                        [--t-min T] [--t-max T] [--bound B] [--stability K]
 *                        [--confidence C] [--max-new M] [--stop IDS] [--no-sc]
 *                        [--pin IDS] [--trace] [--trace-x]
 *       The entropy-bound sampler; JSON result on stdout. --pin: one id per output
 *       position (-1 free). --trace: the argmax canvas after every step, --trace-x:
 *       the canvas each decoder pass reads, on stderr.
 *   dgemma_tool kat
 *       Known-answer checks of the attention rectangle and the proportional RoPE.
 *   dgemma_tool bench --model DIR [--prompt-len P] [--steps K] [--threads T]
 *       Encodes P random ids, then K decoder passes over a canvas of the model's
 *       length (self-conditioning from the second on); prints the encoder time,
 *       the time per decoder step (wall, and process CPU: all threads) and the
 *       expert-grouping counters.
 *   dgemma_tool moe --model DIR --layer L --x FILE --out FILE [--repeat N]
 *       The routed experts of layer L alone on the f32 rows of FILE (n x d): writes
 *       m (n x d f32) to FILE, then the routing (n x top_k int32 ids, n x top_k f32
 *       weights) to FILE.route. --repeat runs it N times and prints the mean
 *       wall and process CPU milliseconds per run (the expert benchmark).
 *   dgemma_tool mm --model DIR --x FILE --width K --out PREFIX [--repeat N]
 *       Every 2-D matrix of the model alone (attention, dense MLP, router,
 *       self-conditioning MLP, LM head) on the f32 rows of FILE (n x K; a matrix
 *       of C columns reads the first C of each row): writes Y (n x rows f32) to
 *       PREFIX.NAME for each and prints "NAME DTYPE ROWS COLS" a line (NAME: the
 *       file's tensor name). --repeat: N more runs of each, then the process CPU
 *       milliseconds per run of all of them.
 *   dgemma_tool ctx --model DIR --cache N --rows R
 *       Makes a context; prints "ok" or the error (the memory-budget refusal).
 *
 * Exit status 0 on success, 1 on any failure. */
#include "arch/dgemma_impl.h"
#include "dgemma.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int32_t *parse_ids(const char *s, int *n) {
    int cap = 16, k = 0;
    int32_t *v = malloc((size_t)cap * sizeof *v);
    while (v && s && *s) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s) {
            free(v);
            return NULL;
        }
        if (k == cap)
            v = realloc(v, (size_t)(cap *= 2) * sizeof *v);
        if (!v)
            return NULL;
        v[k++] = (int32_t)x;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') {
            free(v);
            return NULL;
        }
    }
    *n = k;
    return v;
}

static const char *arg(int argc, char **argv, const char *name) {
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return NULL;
}

static bool flag(int argc, char **argv, const char *name) {
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return true;
    return false;
}

static int fail(const char *what, const eng_error *e) {
    fprintf(stderr, "dgemma_tool: %s%s%s\n", what, e ? ": " : "", e ? e->msg : "");
    return 1;
}

static eng_model *load(int argc, char **argv) {
    const char *dir = arg(argc, argv, "--model");
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.device = ENG_DEVICE_CPU;
    const char *t = arg(argc, argv, "--threads");
    o.n_threads = t ? atoi(t) : 2;
    eng_error e = {0};
    eng_model *m = eng_model_load(dir, &o, &e);
    if (!m)
        fail("load", &e);
    return m;
}

static int write_f32(const char *path, const float *x, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(x, sizeof *x, n, f) != n) {
        if (f)
            fclose(f);
        return fail("cannot write the output", NULL);
    }
    fclose(f);
    return 0;
}

/* --trace: the argmax canvas after every step, on stderr. */
static void trace_fn(void *ud, int canvas, int step, const int32_t *amax, int n) {
    (void)ud;
    fprintf(stderr, "trace %d %d", canvas, step);
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %d", amax[i]);
    fprintf(stderr, "\n");
}

/* --trace-x: the canvas each decoder pass reads, on stderr. */
static void trace_x_fn(void *ud, int canvas, int step, const int32_t *x, int n) {
    (void)ud;
    fprintf(stderr, "canvas %d %d", canvas, step);
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %d", x[i]);
    fprintf(stderr, "\n");
}

static int kat(void) {
    int bad = 0;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "kat: %s failed (line %d)\n", #c, __LINE__);                           \
            bad = 1;                                                                               \
        }                                                                                          \
    } while (0)
    /* The released geometry: window 1024. Decoder sliding layers see the last
     * 1023 cached positions whatever the canvas query; global layers see all. */
    CHECK(eng__dg_key_lo(true, false, 1024, 2000, 0) == 977);
    CHECK(eng__dg_key_lo(true, false, 1024, 2000, 255) == 977);
    CHECK(eng__dg_key_lo(true, false, 1024, 500, 3) == 0);
    CHECK(eng__dg_key_lo(true, true, 1024, 2000, 7) == 0);
    /* Encoder (causal) sliding: the query at position P sees [P - 1023, P]. */
    CHECK(eng__dg_key_lo(false, false, 1024, 1000, 500) == 477);
    CHECK(eng__dg_key_lo(false, false, 1024, 0, 1023) == 0);
    CHECK(eng__dg_key_lo(false, false, 1024, 0, 1024) == 1);
    CHECK(eng__dg_key_lo(false, true, 1024, 1000, 500) == 0);
    /* Proportional RoPE, head_dim 512, partial 0.25, theta 1e6: 64 rotated
     * pairs with inv[i] = 1e6^(-2i/512), the other 192 zero. */
    double inv[256];
    eng__dg_inv_freq(512, 1e6f, 0.25f, inv);
    CHECK(inv[0] == 1.0);
    CHECK(fabs(inv[1] - pow(1e6, -2.0 / 512)) < 1e-15);
    CHECK(fabs(inv[63] - pow(1e6, -126.0 / 512)) < 1e-15);
    for (int i = 64; i < 256; i++)
        CHECK(inv[i] == 0.0);
    /* Pair (0, 256) at position 3 turns by 3 rad; pair (100, 356) does not move. */
    static float x[512];
    x[0] = 1.0f;
    x[100] = 0.5f;
    x[356] = -2.0f;
    eng__dg_rope(x, 512, inv, 3);
    CHECK(fabsf(x[0] - (float)cos(3.0)) < 1e-7f && fabsf(x[256] - (float)sin(3.0)) < 1e-7f);
    CHECK(x[100] == 0.5f && x[356] == -2.0f);
    /* Sliding layers: full rotation, head_dim 256, theta 1e4. */
    double inv_s[128];
    eng__dg_inv_freq(256, 1e4f, 1.0f, inv_s);
    CHECK(fabs(inv_s[127] - pow(1e4, -254.0 / 256)) < 1e-15);
    for (int i = 0; i < 128; i++)
        CHECK(inv_s[i] > 0);
#undef CHECK
    if (!bad)
        printf("kat ok\n");
    return bad;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return fail("usage: dgemma_tool info|encode|decode|generate|kat|ctx ...", NULL);
    const char *cmd = argv[1];
    if (strcmp(cmd, "kat") == 0)
        return kat();
    eng_model *m = load(argc, argv);
    if (!m)
        return 1;
    const eng_dg_info *in = eng_dg_get_info(m);
    int rc = 0;
    eng_error e = {0};
    if (!in) {
        eng_model_free(m);
        return fail("not a DiffusionGemma model", NULL);
    }
    const int V = in->vocab_size;
    if (strcmp(cmd, "info") == 0) {
        const eng_model_info *mi = eng_model_get_info(m);
        printf("{\"family\": %d, \"arch\": \"%s\", \"n_layer\": %d, \"d_model\": %d, "
               "\"vocab\": %d, \"token_ids\": %d, \"moe\": %s, \"n_expert\": %d, \"top_k\": %d, "
               "\"canvas\": %d, "
               "\"window\": %d, \"self_cond\": %s, \"bos\": %d, \"eos\": %d, \"pad\": %d, "
               "\"mask\": %d, \"n_global\": %d, \"stop\": [",
               (int)mi->family, mi->arch, in->n_layer, in->d_model, in->vocab_size, in->n_token_ids,
               in->moe ? "true" : "false", in->n_expert, in->top_k, in->canvas_len,
               in->sliding_window, in->self_cond ? "true" : "false", in->bos_id, in->eos_id,
               in->pad_id, mi->mask_id, 0);
        for (int i = 0; i < in->n_stop; i++)
            printf("%s%d", i ? ", " : "", in->stop_ids[i]);
        printf("], \"eb\": [%d, %g, %g, %g, %d, %g], \"global\": [", in->eb_max_steps, in->eb_t_min,
               in->eb_t_max, in->eb_entropy_bound, in->eb_stability, in->eb_confidence);
        for (int i = 0; i < in->n_layer; i++)
            printf("%s%d", i ? ", " : "", in->is_global[i]);
        /* the mask-model context refuses clearly */
        eng_ctx *mc = eng_ctx_new(m, 1, 16, &e);
        printf("], \"ctx_new\": \"%s\"}\n", mc ? "accepted" : e.msg);
        eng_ctx_free(mc);
    } else if (strcmp(cmd, "bench") == 0) {
        const char *v;
        int P = (v = arg(argc, argv, "--prompt-len")) ? atoi(v) : 512;
        int K = (v = arg(argc, argv, "--steps")) ? atoi(v) : 4;
        const int n = in->canvas_len;
        eng_dg_ctx *c = eng_dg_ctx_new(m, P + n, n, &e);
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)(P + n));
        float *lg = malloc(sizeof(float) * (size_t)n * V);
        if (!c || !ids || !lg) {
            rc = fail("bench setup", c ? NULL : &e);
        } else {
            for (int i = 0; i < P + n; i++)
                ids[i] = (int32_t)(eng_noise_uniform(1, 0, (uint32_t)i, 0) * V);
            uint64_t t0 = base_now_ns();
            clock_t c0 = clock();
            base_status st = eng_dg_encode(c, ids, P, NULL);
            double enc = base_ms_since(t0);
            const double enc_cpu = 1000.0 * (double)(clock() - c0) / CLOCKS_PER_SEC;
            eng_dg_stats s0;
            eng_dg_get_stats(c, &s0);
            double dec = 0;
            c0 = clock();
            for (int k = 0; st == BASE_OK && k < K; k++) {
                t0 = base_now_ns();
                st = eng_dg_decode(c, ids + P, n, k && in->self_cond ? lg : NULL, lg);
                dec += base_ms_since(t0);
            }
            const double dec_cpu = 1000.0 * (double)(clock() - c0) / CLOCKS_PER_SEC;
            eng_dg_stats s;
            eng_dg_get_stats(c, &s);
            if (st)
                rc = fail(base_status_str(st), NULL);
            else
                printf("{\"device\": \"%s\", \"weight_bytes\": %llu, \"prompt\": %d, "
                       "\"encode_ms\": %.1f, \"encode_cpu_ms\": %.1f, \"canvas\": %d, "
                       "\"steps\": %d, \"decode_ms_per_step\": %.1f, "
                       "\"decode_cpu_ms_per_step\": %.1f, \"expert_rows\": %llu, "
                       "\"expert_calls\": %llu, \"expert_bytes_read\": %llu, "
                       "\"expert_bytes_used\": %llu, \"expert_bytes_all\": %llu}\n",
                       eng_model_device_desc(m),
                       (unsigned long long)eng_model_get_info(m)->weight_bytes, P, enc, enc_cpu, n,
                       K, dec / K, dec_cpu / K,
                       (unsigned long long)(s.expert_rows - s0.expert_rows),
                       (unsigned long long)(s.expert_calls - s0.expert_calls),
                       (unsigned long long)(s.expert_bytes_read - s0.expert_bytes_read),
                       (unsigned long long)(s.expert_bytes_used - s0.expert_bytes_used),
                       (unsigned long long)(s.expert_bytes_all - s0.expert_bytes_all));
        }
        free(ids);
        free(lg);
        eng_dg_ctx_free(c);
    } else if (strcmp(cmd, "moe") == 0) {
        const char *xp = arg(argc, argv, "--x"), *op = arg(argc, argv, "--out");
        const char *ls = arg(argc, argv, "--layer");
        const int d = in->d_model, K = in->top_k;
        FILE *f = xp ? fopen(xp, "rb") : NULL;
        long sz = 0;
        if (f && fseek(f, 0, SEEK_END) == 0)
            sz = ftell(f);
        const int n = (int)(sz / (long)(sizeof(float) * (size_t)d));
        float *x = n > 0 ? malloc((size_t)n * d * sizeof *x) : NULL;
        float *mo = n > 0 ? malloc((size_t)n * d * sizeof *mo) : NULL;
        float *w = n > 0 ? malloc((size_t)n * K * sizeof *w) : NULL;
        int32_t *ix = n > 0 ? malloc((size_t)n * K * sizeof *ix) : NULL;
        eng_dg_ctx *c = n > 0 ? eng_dg_ctx_new(m, 8, n, &e) : NULL;
        if (!f || !op || !ls || !x || !mo || !w || !ix || !c || !in->moe || fseek(f, 0, SEEK_SET) ||
            fread(x, sizeof *x, (size_t)n * d, f) != (size_t)n * d) {
            rc = fail("moe setup", c ? NULL : &e);
        } else if (eng__dg_moe_run(c, atoi(ls), x, n, mo, ix, w) != BASE_OK) {
            rc = fail("moe run", NULL);
        } else if (arg(argc, argv, "--repeat")) {
            const int N = atoi(arg(argc, argv, "--repeat"));
            const clock_t c0 = clock();
            const uint64_t t0 = base_now_ns();
            for (int r = 0; r < N; r++)
                eng__dg_moe_run(c, atoi(ls), x, n, mo, ix, w);
            printf("{\"rows\": %d, \"repeat\": %d, \"ms_per_run\": %.2f, \"cpu_ms_per_run\": "
                   "%.2f}\n",
                   n, N, base_ms_since(t0) / N,
                   1000.0 * (double)(clock() - c0) / CLOCKS_PER_SEC / N);
            rc = write_f32(op, mo, (size_t)n * d);
        } else if (!(rc = write_f32(op, mo, (size_t)n * d))) {
            char rp[4096];
            snprintf(rp, sizeof rp, "%s.route", op);
            FILE *g = fopen(rp, "wb");
            if (!g || fwrite(ix, sizeof *ix, (size_t)n * K, g) != (size_t)n * K ||
                fwrite(w, sizeof *w, (size_t)n * K, g) != (size_t)n * K)
                rc = fail("cannot write the routing", NULL);
            if (g)
                fclose(g);
        }
        if (f)
            fclose(f);
        free(x);
        free(mo);
        free(w);
        free(ix);
        eng_dg_ctx_free(c);
    } else if (strcmp(cmd, "mm") == 0) {
        const char *xp = arg(argc, argv, "--x"), *op = arg(argc, argv, "--out");
        const char *ws = arg(argc, argv, "--width"), *rp = arg(argc, argv, "--repeat");
        const int Kx = ws ? atoi(ws) : 0, N = rp ? atoi(rp) : 0;
        FILE *f = xp ? fopen(xp, "rb") : NULL;
        long sz = 0;
        if (f && fseek(f, 0, SEEK_END) == 0)
            sz = ftell(f);
        const int n = Kx > 0 ? (int)(sz / (long)(sizeof(float) * (size_t)Kx)) : 0;
        float *x = n > 0 ? malloc((size_t)n * Kx * sizeof *x) : NULL;
        eng_dg_ctx *c = n > 0 ? eng_dg_ctx_new(m, 8, n, &e) : NULL;
        const eng__dg_model *dg = c ? eng__dg_ctx_model(c) : NULL;
        /* the 2-D matrices: per layer, then the self-conditioning MLP and the head */
        int nw = 0;
        const eng_tensor *ws_[16 * 64 + 8];
        for (int l = 0; dg && l < in->n_layer && l < 64; l++) {
            const eng__dg_layer *L = &dg->layers[l];
            const eng_tensor *lw[] = {&L->wq,     &L->wk,   &L->wv,     &L->wo,
                                      &L->w_gate, &L->w_up, &L->w_down, &L->router_w};
            for (size_t i = 0; i < sizeof lw / sizeof lw[0]; i++)
                if (lw[i]->data)
                    ws_[nw++] = lw[i];
        }
        if (dg) {
            const eng_tensor *gw[] = {&dg->sc_gate, &dg->sc_up, &dg->sc_down, &dg->lm_head};
            for (size_t i = 0; i < sizeof gw / sizeof gw[0]; i++)
                if (gw[i]->data)
                    ws_[nw++] = gw[i];
        }
        int64_t maxr = 0;
        for (int i = 0; i < nw; i++)
            maxr = ws_[i]->rows > maxr ? ws_[i]->rows : maxr;
        float *y = n > 0 ? malloc((size_t)n * (size_t)maxr * sizeof *y) : NULL;
        if (!f || !op || !x || !c || !y || in->n_layer > 64 || fseek(f, 0, SEEK_SET) ||
            fread(x, sizeof *x, (size_t)n * Kx, f) != (size_t)n * Kx) {
            rc = fail("mm setup", c ? NULL : &e);
        } else {
            for (int i = 0; i < nw && !rc; i++) {
                const eng_tensor *W = ws_[i];
                char path[4096];
                snprintf(path, sizeof path, "%s.%s", op, W->name ? W->name : "?");
                if (eng__dg_mm_run(c, W, x, Kx, n, y) != BASE_OK) {
                    rc = fail("mm run", NULL);
                    break;
                }
                rc = write_f32(path, y, (size_t)n * (size_t)W->rows);
                printf("%s %s %lld %lld\n", W->name ? W->name : "?", eng_dtype_name(W->dtype),
                       (long long)W->rows, (long long)W->cols);
            }
            if (!rc && N > 0) {
                const clock_t c0 = clock();
                for (int r = 0; r < N; r++)
                    for (int i = 0; i < nw; i++)
                        eng__dg_mm_run(c, ws_[i], x, Kx, n, y);
                printf("cpu_ms_per_run %.2f\n",
                       1000.0 * (double)(clock() - c0) / CLOCKS_PER_SEC / N);
            }
        }
        if (f)
            fclose(f);
        free(x);
        free(y);
        eng_dg_ctx_free(c);
    } else if (strcmp(cmd, "ctx") == 0) {
        const char *cs = arg(argc, argv, "--cache"), *rs = arg(argc, argv, "--rows");
        eng_dg_ctx *c = eng_dg_ctx_new(m, cs ? atoi(cs) : 64, rs ? atoi(rs) : 16, &e);
        if (c)
            printf("ok\n");
        else
            printf("refused: %s\n", e.msg);
        rc = c ? 0 : 2;
        eng_dg_ctx_free(c);
    } else if (strcmp(cmd, "encode") == 0 || strcmp(cmd, "decode") == 0) {
        const bool dec = cmd[0] == 'd';
        int n1 = 0, n2 = 0, nc = 0;
        int32_t *t1 = parse_ids(arg(argc, argv, dec ? "--prompt" : "--tokens"), &n1);
        int32_t *t2 = parse_ids(arg(argc, argv, "--tokens2"), &n2);
        int32_t *cv = parse_ids(arg(argc, argv, "--canvas"), &nc);
        const char *rows_s = arg(argc, argv, "--rows");
        int rows = rows_s ? atoi(rows_s) : 64;
        if (dec && nc > rows)
            rows = nc;
        eng_dg_ctx *c = eng_dg_ctx_new(m, n1 + n2 + 8, rows, &e);
        float *lg = malloc((size_t)(n1 + n2 + nc + 1) * (size_t)V * sizeof *lg);
        float *sc = NULL;
        base_status st = BASE_OK;
        if (!c || !lg || (dec && (!cv || nc == 0))) {
            rc = fail("setup", c ? NULL : &e);
        } else {
            st = eng_dg_encode(c, t1, n1, dec ? NULL : lg);
            if (!st && n2)
                st = eng_dg_encode(c, t2, n2, lg + (size_t)n1 * V);
            const char *scp = arg(argc, argv, "--sc");
            if (!st && dec && scp) {
                sc = malloc((size_t)nc * V * sizeof *sc);
                FILE *f = fopen(scp, "rb");
                if (!sc || !f || fread(sc, sizeof *sc, (size_t)nc * V, f) != (size_t)nc * V)
                    st = BASE_ERR_IO;
                if (f)
                    fclose(f);
            }
            if (!st && dec)
                st = eng_dg_decode(c, cv, nc, sc, lg);
            if (st)
                rc = fail(base_status_str(st), NULL);
            else
                rc = write_f32(arg(argc, argv, "--out"), lg, (size_t)(dec ? nc : n1 + n2) * V);
            if (!rc && in->moe) {
                eng_dg_stats s;
                eng_dg_get_stats(c, &s);
                fprintf(stderr, "experts: calls %llu rows %llu read %llu used %llu all %llu\n",
                        (unsigned long long)s.expert_calls, (unsigned long long)s.expert_rows,
                        (unsigned long long)s.expert_bytes_read,
                        (unsigned long long)s.expert_bytes_used,
                        (unsigned long long)s.expert_bytes_all);
            }
        }
        free(sc);
        free(lg);
        free(t1);
        free(t2);
        free(cv);
        eng_dg_ctx_free(c);
    } else if (strcmp(cmd, "generate") == 0) {
        eng_eb_params p;
        eng_eb_params_default(m, &p);
        const char *v;
        if ((v = arg(argc, argv, "--seed")))
            p.seed = strtoull(v, NULL, 10);
        if ((v = arg(argc, argv, "--steps")))
            p.max_steps = atoi(v);
        if ((v = arg(argc, argv, "--t-min")))
            p.t_min = strtof(v, NULL);
        if ((v = arg(argc, argv, "--t-max")))
            p.t_max = strtof(v, NULL);
        if ((v = arg(argc, argv, "--bound")))
            p.entropy_bound = strtof(v, NULL);
        if ((v = arg(argc, argv, "--stability")))
            p.stability = atoi(v);
        if ((v = arg(argc, argv, "--confidence")))
            p.confidence = strtof(v, NULL);
        if ((v = arg(argc, argv, "--max-new")))
            p.max_new_tokens = atoi(v);
        p.self_cond = !flag(argc, argv, "--no-sc") && in->self_cond;
        if (flag(argc, argv, "--trace"))
            p.progress = trace_fn;
        if (flag(argc, argv, "--trace-x"))
            p.canvas_cb = trace_x_fn;
        int npin = 0;
        int32_t *pin = arg(argc, argv, "--pin") ? parse_ids(arg(argc, argv, "--pin"), &npin) : NULL;
        p.pin = pin;
        p.n_pin = npin;
        int np = 0, ns = 0;
        int32_t *pr = parse_ids(arg(argc, argv, "--prompt"), &np);
        int32_t *stop =
            arg(argc, argv, "--stop") ? parse_ids(arg(argc, argv, "--stop"), &ns) : NULL;
        if (stop) {
            p.stop_ids = stop;
            p.n_stop = ns;
        }
        const int n_canvas = (p.max_new_tokens + in->canvas_len - 1) / in->canvas_len;
        eng_dg_ctx *c = eng_dg_ctx_new(m, np + n_canvas * in->canvas_len + 1, in->canvas_len, &e);
        eng_eb_result r;
        base_status st = c ? eng_eb_generate(c, pr, np, &p, &r) : BASE_ERR_NOMEM;
        if (!c)
            rc = fail("context", &e);
        else if (st)
            rc = fail(base_status_str(st), NULL);
        else {
            printf("{\"tokens\": [");
            for (int i = 0; i < r.n_tokens; i++)
                printf("%s%d", i ? ", " : "", r.tokens[i]);
            printf("], \"n_text\": %d, \"steps\": %d, \"hit_stop\": %s, \"last_stop\": \"%s\", "
                   "\"ms_decode\": %.3f, \"ms_sample\": %.3f}\n",
                   r.n_text, r.steps_run, r.hit_stop ? "true" : "false",
                   r.last_stop == ENG_EB_STOP_CONFIDENT ? "confident" : "steps", r.ms_decode,
                   r.ms_sample);
            eng_eb_result_free(&r);
        }
        free(pr);
        free(stop);
        free(pin);
        eng_dg_ctx_free(c);
    } else {
        rc = fail("unknown command", NULL);
    }
    eng_model_free(m);
    return rc;
}
