/* bench_cuda: speed of the CUDA backend on synthetic weights of a named shape,
 * generated directly in device memory (no checkpoint file).
 *
 *   bench_cuda [--shape dream-7b|open-dcoder-0.5b|tiny] [--fp8] [--quant q8_0|q4_k_m]
 *              [--reps N] [--json FILE]
 *   bench_cuda --probe     exit 0 when a GPU is usable, 77 when not
 *
 * Measures, in one run: device-to-device copy bandwidth; one hole-only step
 * (context 1024, hole 32) against weight bytes / bandwidth; end-to-end infill
 * p50 at a fixed 8 tokens per step (with and without a cached context);
 * tokens/s of a 256-token generation at 8 tokens per step with the context
 * cache; a batch of 8 candidates against 1; and with --fp8 the FP8 step time
 * and the logit error of FP8 against BF16 weights; with --quant the hole step
 * (33 rows: the direct int8 kernel) and a FULL step (1025 rows: dequantise +
 * cuBLAS) on synthetic GGUF blocks of that type (q4_k_m: llama.cpp's mix, Q6_K
 * for attn_v, ffn_down and the output matrix; a width that is not whole blocks
 * stays 16-bit, as infilld convert writes it), against quantised bytes / copy
 * bandwidth, and the hole step again with INFILLD_CUDA_QDIRECT=0 (dequantise +
 * cuBLAS). Exits 77 without a GPU. */
#define _POSIX_C_SOURCE 200809L
#include "backend_cuda.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTX 1024
#define HOLE 32
#define GEN 256
#define PER_STEP 8

typedef struct bench {
    const eng_backend_i *bi;
    eng_backend *be;
    eng_bctx *c;
    eng_model_info info;
    eng_weights w;
    eng_layer_w *layers;
    int32_t *tokens;
    int32_t *pos;
    eng_row_result *res;
    int max_batch, max_len;
} bench;

static bool shape_info(const char *name, eng_model_info *in) {
    memset(in, 0, sizeof *in);
    in->family = ENG_FAMILY_DREAM;
    in->rope_theta = 1e6f;
    in->rms_eps = 1e-6f;
    in->shift_logits = true;
    in->qkv_bias = true;
    in->dtype = ENG_BF16;
    in->mask_id = 151666;
    in->bos_id = 151665;
    in->eos_id = 151643;
    in->pad_id = 151643;
    in->expand_id = -1;
    in->max_context = 4096;
    if (strcmp(name, "dream-7b") == 0) {
        in->n_layer = 28;
        in->d_model = 3584;
        in->n_head = 28;
        in->n_kv_head = 4;
        in->head_dim = 128;
        in->d_ff = 18944;
        in->vocab_size = 152064;
    } else if (strcmp(name, "open-dcoder-0.5b") == 0) {
        in->family = ENG_FAMILY_OPEN_DCODER;
        in->n_layer = 24;
        in->d_model = 896;
        in->n_head = 14;
        in->n_kv_head = 2;
        in->head_dim = 64;
        in->d_ff = 4864;
        in->vocab_size = 151936;
        in->tied_head = true;
        in->mask_id = 151665;
    } else if (strcmp(name, "tiny") == 0) {
        in->n_layer = 2;
        in->d_model = 128;
        in->n_head = 4;
        in->n_kv_head = 2;
        in->head_dim = 32;
        in->d_ff = 256;
        in->vocab_size = 1000;
        in->mask_id = 999;
        in->bos_id = 998;
        in->eos_id = 997;
    } else {
        return false;
    }
    return true;
}

/* Storage type of a (rows, cols) matrix for --quant q, or BF16 when cols is not a
 * whole number of its blocks. */
static eng_dtype quant_type(const char *q, bool six, int64_t cols) {
    eng_dtype t = !strcmp(q, "q8_0") ? ENG_Q8_0 : six ? ENG_Q6_K : ENG_Q4_K;
    int qk = t == ENG_Q8_0 ? 32 : 256;
    return cols % qk ? ENG_BF16 : t;
}

/* Sets the tensor types of a synthetic model for --quant and returns the bytes a
 * hole step reads (every matrix and the LM head; the embedding rows are few). */
static double quant_setup(bench *b, const char *q) {
    const eng_model_info *in = &b->info;
    const int64_t d = in->d_model, hd = in->head_dim, qd = (int64_t)in->n_head * hd;
    const int64_t kv = (int64_t)in->n_kv_head * hd, ff = in->d_ff, V = in->vocab_size;
    double bytes = 0;
#define QB(t, r, c) ((double)(r) * (double)kcu_row_bytes(kcu_dtype_of_eng((int)(t)), (c)))
    for (int l = 0; l < in->n_layer; l++) {
        eng_layer_w *L = &b->layers[l];
        L->wq.dtype = quant_type(q, false, d);
        L->wk.dtype = quant_type(q, false, d);
        L->wv.dtype = quant_type(q, true, d);
        L->wo.dtype = quant_type(q, false, qd);
        L->w_gate.dtype = quant_type(q, false, d);
        L->w_up.dtype = quant_type(q, false, d);
        L->w_down.dtype = quant_type(q, true, ff);
        bytes += QB(L->wq.dtype, qd, d) + QB(L->wk.dtype, kv, d) + QB(L->wv.dtype, kv, d) +
                 QB(L->wo.dtype, d, qd) + QB(L->w_gate.dtype, ff, d) + QB(L->w_up.dtype, ff, d) +
                 QB(L->w_down.dtype, d, ff);
    }
    b->w.embed.dtype = quant_type(q, false, d);
    b->w.lm_head.dtype = quant_type(q, true, d);
    bytes += QB(in->tied_head ? b->w.embed.dtype : b->w.lm_head.dtype, V, d);
#undef QB
    return bytes;
}

static int bench_open(bench *b, const eng_model_info *in, bool fp8, int max_batch, int max_len,
                      const char *quant, double *quant_bytes) {
    memset(b, 0, sizeof *b);
    b->info = *in;
    b->bi = eng_backend_cuda_get();
    b->layers = calloc((size_t)in->n_layer, sizeof *b->layers);
    b->w.info = &b->info;
    b->w.layers = b->layers; /* every data pointer NULL: synthetic weights */
    if (quant) {
        double qb = quant_setup(b, quant);
        if (quant_bytes)
            *quant_bytes = qb;
    }
    if (fp8)
        setenv("INFILLD_CUDA_FP8", "1", 1);
    else
        unsetenv("INFILLD_CUDA_FP8");
    eng_load_opts o;
    eng_load_opts_default(&o);
    eng_error err = {0};
    b->be = b->bi->init(&b->w, &o, &err);
    if (!b->be) {
        fprintf(stderr, "bench_cuda: init: %s\n", err.msg);
        return 1;
    }
    b->c = b->bi->ctx_new(b->be, max_batch, max_len, &err);
    if (!b->c) {
        fprintf(stderr, "bench_cuda: ctx: %s\n", err.msg);
        return 1;
    }
    b->max_batch = max_batch;
    b->max_len = max_len;
    b->tokens = malloc((size_t)max_batch * max_len * sizeof(int32_t));
    b->pos = malloc((size_t)max_batch * max_len * sizeof(int32_t));
    b->res = malloc((size_t)max_batch * max_len * sizeof(eng_row_result));
    return 0;
}

static void bench_close(bench *b) {
    if (b->c)
        b->bi->ctx_free(b->c);
    if (b->be)
        b->bi->free(b->be);
    free(b->layers);
    free(b->tokens);
    free(b->pos);
    free(b->res);
}

/* Canvas: BOS, ctx/2 prefix, hole masks, ctx/2 suffix; every sequence alike. */
static int make_canvas(bench *b, int n_seq, int hole, int *hole_start) {
    const eng_model_info *in = &b->info;
    int half = CTX / 2, len = 1 + half + hole + half;
    uint64_t s = 99;
    for (int q = 0; q < n_seq; q++) {
        int32_t *t = b->tokens + (size_t)q * len;
        t[0] = in->bos_id;
        for (int i = 1; i < len; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            t[i] = (int32_t)((s >> 33) % (uint64_t)(in->vocab_size - 8));
        }
        for (int i = 0; i < hole; i++)
            t[1 + half + i] = in->mask_id;
    }
    *hole_start = 1 + half;
    return len;
}

static double median(double *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

static eng_step_req req_for(const bench *b, eng_step_mode mode, int win_start, int win_end,
                            int n_pos) {
    eng_step_req r;
    memset(&r, 0, sizeof r);
    r.mode = mode;
    r.win_start = win_start;
    r.win_end = win_end;
    r.positions = b->pos;
    r.n_pos = n_pos;
    r.sampling.pick = ENG_PICK_DREAM;
    r.sampling.top_p = 1.0f;
    r.sampling.seed = 1;
    return r;
}

/* Runs one infill of `hole` masks at PER_STEP commits per step; the first step
 * is FULL unless `cached` (then the context K/V from an earlier FULL step is
 * reused and every step is a hole-only WINDOW step). Returns ms, or -1. */
static double run_infill(bench *b, int n_seq, int hole, bool cached, int *steps_out) {
    int hs;
    int len = make_canvas(b, n_seq, hole, &hs);
    eng_batch batch = {n_seq, len, b->tokens, NULL};
    int masked = hole, steps = 0;
    uint64_t t0 = base_now_ns();
    while (masked > 0) {
        int n = 0;
        for (int q = 0; q < n_seq; q++)
            for (int i = hs; i < hs + hole; i++)
                if (b->tokens[(size_t)q * len + i] == b->info.mask_id)
                    b->pos[n++] = q * len + i;
        bool full = steps == 0 && !cached;
        eng_step_req r = req_for(b, full ? ENG_STEP_FULL : ENG_STEP_WINDOW, hs - 1, hs + hole, n);
        r.sampling.step = (uint32_t)steps;
        if (b->bi->step(b->c, &batch, &r, b->res) != BASE_OK)
            return -1;
        steps++;
        /* commit the PER_STEP most probable rows of each sequence */
        for (int q = 0; q < n_seq; q++) {
            for (int k = 0; k < PER_STEP; k++) {
                int best = -1;
                for (int j = 0; j < n; j++)
                    if (b->pos[j] / len == q && b->pos[j] >= 0 &&
                        (best < 0 || b->res[j].prob > b->res[best].prob))
                        best = j;
                if (best < 0)
                    break;
                int32_t tok = b->res[best].token;
                b->tokens[b->pos[best]] = tok == b->info.mask_id ? 0 : tok;
                b->pos[best] = -1;
                if (q == 0)
                    masked--;
            }
        }
    }
    if (steps_out)
        *steps_out = steps;
    return base_ms_since(t0);
}

static double time_hole_step(bench *b, int n_seq, int reps) {
    int hs;
    int len = make_canvas(b, n_seq, HOLE, &hs);
    eng_batch batch = {n_seq, len, b->tokens, NULL};
    int n = 0;
    for (int q = 0; q < n_seq; q++)
        for (int i = hs; i < hs + HOLE; i++)
            b->pos[n++] = q * len + i;
    eng_step_req r = req_for(b, ENG_STEP_FULL, 0, 0, n);
    if (b->bi->step(b->c, &batch, &r, b->res) != BASE_OK)
        return -1;
    r = req_for(b, ENG_STEP_WINDOW, hs - 1, hs + HOLE, n);
    double *t = malloc((size_t)reps * sizeof(double));
    for (int i = 0; i < reps + 2; i++) {
        uint64_t t0 = base_now_ns();
        if (b->bi->step(b->c, &batch, &r, b->res) != BASE_OK) {
            free(t);
            return -1;
        }
        if (i >= 2) /* the first replays capture and warm the graph */
            t[i - 2] = base_ms_since(t0);
    }
    double m = median(t, reps);
    free(t);
    return m;
}

/* A FULL step over the whole canvas (every row through every layer). */
static double time_full_step(bench *b, int reps) {
    int hs;
    int len = make_canvas(b, 1, HOLE, &hs);
    eng_batch batch = {1, len, b->tokens, NULL};
    for (int i = 0; i < HOLE; i++)
        b->pos[i] = hs + i;
    eng_step_req r = req_for(b, ENG_STEP_FULL, 0, 0, HOLE);
    double *t = malloc((size_t)reps * sizeof(double));
    for (int i = 0; i < reps + 1; i++) {
        uint64_t t0 = base_now_ns();
        if (b->bi->step(b->c, &batch, &r, b->res) != BASE_OK) {
            free(t);
            return -1;
        }
        if (i >= 1)
            t[i - 1] = base_ms_since(t0);
    }
    double m = median(t, reps);
    free(t);
    return m;
}

int main(int argc, char **argv) {
    const char *shape = "dream-7b", *json = NULL, *quant = NULL;
    bool fp8 = false, probe = false;
    int reps = 15;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc)
            shape = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fp8"))
            fp8 = true;
        else if (!strcmp(argv[i], "--quant") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "q8_0") || !strcmp(argv[i + 1], "q4_k_m")))
            quant = argv[++i];
        else if (!strcmp(argv[i], "--probe"))
            probe = true;
        else {
            fprintf(stderr, "usage: bench_cuda [--shape dream-7b|open-dcoder-0.5b|tiny] [--fp8] "
                            "[--quant q8_0|q4_k_m] [--reps N] [--json FILE] | --probe\n");
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    eng_model_info in;
    if (!shape_info(shape, &in)) {
        fprintf(stderr, "bench_cuda: unknown shape %s\n", shape);
        return 2;
    }
    kcu_device_info di;
    char msg[256];
    if (kcu_device_query(&di, msg, sizeof msg) != BASE_OK) {
        fprintf(stderr, "bench_cuda: skipped: %s\n", msg);
        return 77;
    }
    if (probe) { /* run.sh: does this binary reach the GPU? */
        printf("bench_cuda: %s, driver %d, runtime %d\n", msg, di.driver_version,
               di.runtime_version);
        return 0;
    }
    printf("bench_cuda: %s, shape %s\n", msg, shape);

    /* copy bandwidth, measured in this run */
    double bw = 0;
    kcu_ctx *k = kcu_ctx_new(0, msg, sizeof msg);
    if (!k || kcu_measure_d2d_bandwidth(k, (size_t)1 << 30, 20, &bw) != BASE_OK) {
        fprintf(stderr, "bench_cuda: bandwidth: %s\n", k ? kcu_ctx_error(k) : msg);
        kcu_ctx_free(k);
        return 1;
    }
    kcu_ctx_free(k);

    bench b;
    int max_len = 1 + CTX + GEN + 8;
    if (bench_open(&b, &in, false, 8, max_len, NULL, NULL)) {
        bench_close(&b);
        return 1;
    }
    double wbytes = (double)eng__cuda_weight_bytes(&in, ENG_BF16);
    double bound_ms = wbytes / bw * 1e3;
    double step1 = time_hole_step(&b, 1, reps);
    double step8 = time_hole_step(&b, 8, reps);

    double *t = malloc((size_t)reps * sizeof(double)), *tc = malloc((size_t)reps * sizeof(double));
    int steps_e2e = 0, ok = step1 > 0 && step8 > 0;
    for (int i = 0; ok && i < reps; i++) {
        t[i] = run_infill(&b, 1, HOLE, false, &steps_e2e);
        tc[i] = run_infill(&b, 1, HOLE, true, NULL); /* reuses the FULL step's context K/V */
        ok = t[i] > 0 && tc[i] > 0;
    }
    double e2e = ok ? median(t, reps) : -1, e2e_cached = ok ? median(tc, reps) : -1;
    int steps_gen = 0;
    double gen_ms = ok ? run_infill(&b, 1, GEN, false, &steps_gen) : -1;
    double gen_cached_ms = ok ? run_infill(&b, 1, GEN, true, NULL) : -1;
    free(t);
    free(tc);
    if (!ok || gen_ms < 0) {
        fprintf(stderr, "bench_cuda: a step failed (see the log)\n");
        bench_close(&b);
        return 1;
    }

    printf("  weights            %.2f GB (BF16), copy bandwidth %.0f GB/s -> bound %.2f ms\n",
           wbytes / 1e9, bw / 1e9, bound_ms);
    printf("  hole-only step     %.2f ms (ctx %d, hole %d) = %.2f x bound\n", step1, CTX, HOLE,
           step1 / bound_ms);
    printf("  batch 8 vs 1       %.2f ms vs %.2f ms = %.2f x\n", step8, step1, step8 / step1);
    printf("  infill p50         %.2f ms (%d steps of %d tokens, first FULL); %.2f ms with the "
           "context cached\n",
           e2e, steps_e2e, PER_STEP, e2e_cached);
    printf("  256-token gen      %.1f ms = %.0f tokens/s (%d steps); %.0f tokens/s with the "
           "context cached\n",
           gen_ms, GEN / (gen_ms * 1e-3), steps_gen, GEN / (gen_cached_ms * 1e-3));

    /* FP8: speed, and logit error against BF16 on the same synthetic weights */
    double fp8_step = -1, fp8_nmse = -1;
    int fp8_agree = -1;
    if (fp8) {
        int hs;
        int len = make_canvas(&b, 1, HOLE, &hs);
        int32_t rows[HOLE];
        for (int i = 0; i < HOLE; i++)
            rows[i] = hs - 1 + i;
        size_t nl = (size_t)HOLE * in.vocab_size;
        float *lb = malloc(nl * 4), *lf = malloc(nl * 4);
        eng_batch batch = {1, len, b.tokens, NULL};
        base_status st = b.bi->forward(b.c, &batch, rows, HOLE, lb);
        bench_close(&b);
        bench f;
        if (st == BASE_OK && bench_open(&f, &in, true, 1, max_len, NULL, NULL) == 0) {
            fp8_step = time_hole_step(&f, 1, reps);
            make_canvas(&f, 1, HOLE, &hs);
            batch.tokens = f.tokens;
            if (f.bi->forward(f.c, &batch, rows, HOLE, lf) == BASE_OK) {
                double num = 0, den = 0;
                fp8_agree = 0;
                for (int r = 0; r < HOLE; r++) {
                    int ab = 0, af = 0;
                    for (int v = 0; v < in.vocab_size; v++) {
                        size_t i = (size_t)r * in.vocab_size + v;
                        num += ((double)lf[i] - lb[i]) * ((double)lf[i] - lb[i]);
                        den += (double)lb[i] * lb[i];
                        ab = lb[i] > lb[(size_t)r * in.vocab_size + ab] ? v : ab;
                        af = lf[i] > lf[(size_t)r * in.vocab_size + af] ? v : af;
                    }
                    fp8_agree += ab == af;
                }
                fp8_nmse = den > 0 ? num / den : num;
            }
        }
        bench_close(&f);
        free(lb);
        free(lf);
        printf("  fp8 hole-only step %.2f ms (%.2f x BF16); logits nmse vs BF16 %.3e, argmax "
               "equal %d/%d\n",
               fp8_step, fp8_step / step1, fp8_nmse, fp8_agree, HOLE);
    } else {
        bench_close(&b);
    }

    /* Quantised GGUF blocks: the hole step and a FULL step against their bytes */
    double q_bytes = -1, q_bound = -1, q_step = -1, q_full = -1, q_step_dq = -1;
    if (quant) {
        bench qb;
        if (bench_open(&qb, &in, false, 1, max_len, quant, &q_bytes) == 0) {
            q_bound = q_bytes / bw * 1e3;
            q_step = time_hole_step(&qb, 1, reps);
            q_full = time_full_step(&qb, reps);
            printf("  %s hole step  %.2f ms (%.2f x BF16) against %.2f GB / %.0f GB/s = %.2f ms "
                   "(%.2f x bound); FULL step of %d rows %.2f ms\n",
                   quant, q_step, q_step / step1, q_bytes / 1e9, bw / 1e9, q_bound,
                   q_step / q_bound, 1 + CTX + HOLE, q_full);
        }
        bench_close(&qb);
        memset(&qb, 0, sizeof qb);
        /* the same hole step with every quantised GEMM dequantised + cuBLAS, for
         * the crossover of INFILLD_CUDA_QDIRECT */
        setenv("INFILLD_CUDA_QDIRECT", "0", 1);
        if (q_step > 0 && bench_open(&qb, &in, false, 1, max_len, quant, NULL) == 0)
            q_step_dq = time_hole_step(&qb, 1, reps);
        bench_close(&qb);
        unsetenv("INFILLD_CUDA_QDIRECT");
        printf("  %s hole step, dequantise + cuBLAS instead of the int8 kernel: %.2f ms\n", quant,
               q_step_dq);
        if (q_step < 0 || q_full < 0 || q_step_dq < 0) {
            fprintf(stderr, "bench_cuda: the %s run failed\n", quant);
            return 1;
        }
    }

    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "bench_cuda: cannot write %s\n", json);
            return 1;
        }
        fprintf(f,
                "{\"shape\": \"%s\", \"device\": \"%s\", \"weight_bytes\": %.0f, "
                "\"copy_bandwidth_gbs\": %.1f, \"bound_ms\": %.3f, \"hole_step_ms\": %.3f, "
                "\"hole_step_over_bound\": %.3f, \"batch8_step_ms\": %.3f, \"batch8_over_1\": "
                "%.3f, \"infill_p50_ms\": %.3f, \"infill_p50_cached_ms\": %.3f, "
                "\"gen256_ms\": %.3f, \"gen256_tokens_per_s\": %.1f, "
                "\"gen256_cached_tokens_per_s\": %.1f, \"fp8_hole_step_ms\": %.3f, "
                "\"fp8_logit_nmse\": %.4e, \"fp8_argmax_agree\": %d, \"quant\": \"%s\", "
                "\"quant_weight_bytes\": %.0f, \"quant_bound_ms\": %.3f, "
                "\"quant_hole_step_ms\": %.3f, \"quant_full_step_ms\": %.3f, "
                "\"quant_hole_step_dequant_ms\": %.3f}\n",
                shape, di.name, wbytes, bw / 1e9, bound_ms, step1, step1 / bound_ms, step8,
                step8 / step1, e2e, e2e_cached, gen_ms, GEN / (gen_ms * 1e-3),
                GEN / (gen_cached_ms * 1e-3), fp8_step, fp8_nmse, fp8_agree, quant ? quant : "",
                q_bytes, q_bound, q_step, q_full, q_step_dq);
        fclose(f);
    }
    return 0;
}
