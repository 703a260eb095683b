/* The CUDA backend against the CPU backend on real checkpoints (tiny and
 * 0.5B-shaped, written by tests/gen/mkcheckpoint.py):
 *   - full forward: logits NMSE over every valid row, padded rows all zeros;
 *   - infills run in lockstep: the CPU's results drive the sampler and every
 *     step is also run on the CUDA context with the same batch and request, so
 *     both see the same canvases. A differing token is accepted only as a
 *     near-tie (the CPU's top-2 margin below tie * p1), and is reported.
 * Usage: test_gpu_parity [--cpu-vs-cpu] MODEL_DIR... ; exits 77 without a
 * usable GPU. --cpu-vs-cpu runs the same harness with the CPU backend on both
 * sides (no GPU needed): it checks the harness itself, and must find exact
 * agreement. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "diffusion.h"
#include "engine.h"
#include "kernels.h"
#include "qblock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lockstep {
    eng_ctx *cpu, *cuda;
    eng_row_result *tmp;
    int cap;
    float tie; /* accepted relative margin for a flipped token */
    float stat_tol;
    int rows, flips, unexplained, steps;
    double worst_prob;
    bool sampling;
} lockstep;

static base_status lockstep_step(void *ud, const eng_batch *batch, const eng_step_req *req,
                                 eng_row_result *out) {
    lockstep *ls = ud;
    base_status st = eng_step(ls->cpu, batch, req, out);
    if (st)
        return st;
    if (req->n_pos > ls->cap)
        return BASE_ERR_TOO_LARGE;
    base_status st2 = eng_step(ls->cuda, batch, req, ls->tmp);
    CHECK_EQ_I(st2, BASE_OK);
    if (st2)
        return st2;
    ls->steps++;
    for (int j = 0; j < req->n_pos; j++) {
        const eng_row_result *a = &out[j], *b = &ls->tmp[j];
        ls->rows++;
        if (a->token != b->token) {
            ls->flips++;
            /* Greedy: a flip is a near-tie when the CPU's top-2 margin is small
             * relative to p1. Sampled rows (inverse CDF, Gumbel) flip when the
             * noise lands within rounding of a boundary, which the results
             * cannot show: those are only counted (at most 10 % of rows). */
            bool near = ls->sampling || a->margin <= ls->tie * a->prob;
            if (!near) {
                ls->unexplained++;
                fprintf(stderr,
                        "    step %d pos %d: cpu token %d (p %.6f, margin %.6f) vs cuda %d "
                        "(p %.6f)\n",
                        ls->steps, req->positions[j], a->token, a->prob, a->margin, b->token,
                        b->prob);
            }
            continue;
        }
        double dp = fabs((double)a->prob - b->prob);
        if (dp > ls->worst_prob)
            ls->worst_prob = dp;
    }
    return BASE_OK;
}

static uint64_t lcg = 12345;
static uint32_t next_u32(void) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(lcg >> 33);
}

static bool cpu_vs_cpu;

/* Logit bound (NMSE) for a quantised file, derived as tests/golden/gguf_golden.py
 * derives its int8 bound. The CPU multiplies block weights with int8 activations
 * quantised from fp32; the GPU quantises the BF16 rounding of the same values (rows
 * <= KCU_Q_MAXN) or multiplies BF16-dequantised weights with BF16 activations (more
 * rows). Per matmul the outputs then differ by independent roundings: the BF16
 * rounding of activations and weights, relative rms eps_b <= 2^-8 / sqrt(3) each
 * (round to nearest at 8 significant bits: an error uniform within half an ulp,
 * the ulp 2^-7..2^-8 of the value), and the two sides' int8 roundings, eps_a each
 * (relative rms of kq_quantize32 on normal data, measured here). Independent
 * errors add in variance along the 7 matmuls per layer and the LM head, so the
 * rms relative logit error is about sqrt(7 L + 1) sqrt(2 eps_b^2 + 2 eps_a^2);
 * twice that allows second-order terms, and the NMSE bound is its square. */
static double quant_nmse_bound(int n_layer, double *rel_out) {
    uint64_t s = 99;
    double num = 0, den = 0;
    for (int b = 0; b < 4096; b++) {
        float x[32];
        for (int i = 0; i < 32; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double u1 = ((s >> 11) + 0.5) * 0x1.0p-53;
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double u2 = (s >> 11) * 0x1.0p-53;
            x[i] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
        }
        kq_q8a q;
        kq_quantize32(x, &q);
        for (int i = 0; i < 32; i++) {
            double e = (double)x[i] - (double)q.d * q.q[i];
            num += e * e;
            den += (double)x[i] * x[i];
        }
    }
    const double eps_a = sqrt(num / den), eps_b = 0x1.0p-8 / sqrt(3.0);
    const double rel = 2 * sqrt(7.0 * n_layer + 1) * sqrt(2 * eps_b * eps_b + 2 * eps_a * eps_a);
    if (rel_out)
        *rel_out = rel;
    fprintf(stderr, "  quant bound: eps_a %.4f, eps_b %.4f -> rms relative %.4f, nmse %.3e\n",
            eps_a, eps_b, rel, rel * rel);
    return rel * rel;
}

static void check_forward(eng_model *mc, eng_model *mg, bool f32, double qbound, int n_seq,
                          int len) {
    const eng_model_info *in = eng_model_get_info(mc);
    const int V = in->vocab_size;
    int32_t tokens[2 * 48];
    uint8_t valid[2 * 48];
    int lim = V < 151000 ? V : 151000;
    for (int i = 0; i < n_seq * len; i++) {
        tokens[i] = (int32_t)(next_u32() % (uint32_t)lim);
        valid[i] = !(i >= len && (i >= 2 * len - 6 || i == len + 20)); /* padding in seq 1 */
    }
    eng_error err = {0};
    eng_ctx *cc = eng_ctx_new(mc, n_seq, len, &err), *cg = eng_ctx_new(mg, n_seq, len, &err);
    CHECK(cc && cg);
    if (!cc || !cg) {
        fprintf(stderr, "  ctx: %s\n", err.msg);
        eng_ctx_free(cc);
        eng_ctx_free(cg);
        return;
    }
    int32_t rows[2 * 48];
    for (int i = 0; i < n_seq * len; i++)
        rows[i] = i;
    float *la = malloc((size_t)n_seq * len * V * 4), *lb = malloc((size_t)n_seq * len * V * 4);
    eng_batch b = {n_seq, len, tokens, valid};
    CHECK_EQ_I(eng_forward(cc, &b, rows, n_seq * len, la), BASE_OK);
    CHECK_EQ_I(eng_forward(cg, &b, rows, n_seq * len, lb), BASE_OK);
    double num = 0, den = 0;
    int pad_nonzero = 0, argmax_same = 0, n_valid = 0, nan = 0;
    for (int r = 0; r < n_seq * len; r++) {
        const float *x = la + (size_t)r * V, *y = lb + (size_t)r * V;
        if (!valid[r]) {
            for (int v = 0; v < V; v++)
                pad_nonzero += (x[v] != 0.0f) + (y[v] != 0.0f);
            continue;
        }
        n_valid++;
        int ax = 0, ay = 0;
        for (int v = 0; v < V; v++) {
            double e = (double)y[v] - x[v];
            num += e * e;
            den += (double)x[v] * x[v];
            nan += isnan(y[v]);
            ax = x[v] > x[ax] ? v : ax;
            ay = y[v] > y[ay] ? v : ay;
        }
        argmax_same += ax == ay;
    }
    double nm = den > 0 ? num / den : num;
    double bound = cpu_vs_cpu ? 0.0 : qbound > 0 ? qbound : f32 ? 1e-8 : 2e-3;
    fprintf(stderr, "  forward %dx%d: logits nmse %.3e (bound %.1e), argmax equal %d/%d rows\n",
            n_seq, len, nm, bound, argmax_same, n_valid);
    CHECK(nm <= bound);
    CHECK_EQ_I(nan, 0);
    CHECK_EQ_I(pad_nonzero, 0);
    /* quantised: the NMSE bound decides; on a random model the top two logits of
     * 152k are often closer than the bound's relative error, so argmax is reported */
    if (qbound <= 0)
        CHECK(argmax_same >= n_valid * 9 / 10);
    free(la);
    free(lb);
    eng_ctx_free(cc);
    eng_ctx_free(cg);
}

static void run_infill(eng_model *mc, eng_model *mg, const char *what, eng_alg alg,
                       eng_cache_mode mode, float temperature, int candidates, bool f32,
                       double qrel) {
    const eng_model_info *in = eng_model_get_info(mc);
    const eng_tokenizer *tok = eng_model_tokenizer(mc);
    const char *pre = "def add(a, b):\n    ", *suf = "\n\nprint(add(1, 2))\n";
    int32_t *p = NULL, *s = NULL;
    size_t np = 0, ns = 0;
    CHECK_EQ_I(eng_tokenize(tok, pre, strlen(pre), &p, &np), BASE_OK);
    CHECK_EQ_I(eng_tokenize(tok, suf, strlen(suf), &s, &ns), BASE_OK);
    eng_diff_prompt prompt = {p, (int)np, s, (int)ns};
    eng_diff_params prm;
    eng_diff_params_default(&prm);
    prm.alg = alg;
    prm.n_hole = 16;
    prm.steps = 16;
    prm.temperature = temperature;
    prm.candidates = candidates;
    prm.mode = mode;
    prm.seed = 7;
    int L = eng_diff_canvas_len(in, &prompt, &prm);
    eng_error err = {0};
    eng_diffuser *d = eng_diffuser_new(in, candidates, L + 64, &err);
    eng_ctx *cc = eng_ctx_new(mc, candidates, L + 64, &err);
    eng_ctx *cg = eng_ctx_new(mg, candidates, L + 64, &err);
    CHECK(d && cc && cg);
    if (d && cc && cg) {
        lockstep ls = {0};
        ls.cpu = cc;
        ls.cuda = cg;
        ls.cap = candidates * (L + 64);
        ls.tmp = calloc((size_t)ls.cap, sizeof *ls.tmp);
        ls.sampling = temperature > 0;
        /* quantised: a flip within twice the relative logit bound is a near-tie */
        ls.tie = f32 ? 1e-3f : qrel > 0.025 ? (float)(2 * qrel) : 0.05f;
        eng_stepper st = {lockstep_step, &ls};
        eng_diff_result res;
        base_status rs = eng_diffuse(d, &st, &prompt, &prm, &res);
        CHECK_EQ_I(rs, BASE_OK);
        fprintf(stderr,
                "  infill %-28s steps %d, rows %d, token flips %d (unexplained %d), "
                "worst |dp| %.2e\n",
                what, ls.steps, ls.rows, ls.flips, ls.unexplained, ls.worst_prob);
        CHECK(ls.steps > 0);
        CHECK_EQ_I(ls.unexplained, 0);
        if (cpu_vs_cpu) {
            CHECK_EQ_I(ls.flips, 0);
            CHECK(ls.worst_prob == 0.0);
        }
        CHECK(ls.flips * 10 <= ls.rows);
        CHECK(ls.worst_prob < (f32 ? 1e-4 : qrel > 0.025 ? 2 * qrel : 0.05));
        free(ls.tmp);
    } else {
        fprintf(stderr, "  infill setup: %s\n", err.msg);
    }
    eng_ctx_free(cc);
    eng_ctx_free(cg);
    eng_diffuser_free(d);
    free(p);
    free(s);
}

static void check_model(const char *dir) {
    eng_load_opts o;
    eng_load_opts_default(&o);
    eng_error err = {0};
    o.device = ENG_DEVICE_CPU;
    eng_model *mc = eng_model_load(dir, &o, &err);
    if (!mc) {
        fprintf(stderr, "%s: CPU load failed: %s\n", dir, err.msg);
        CHECK(mc != NULL);
        return;
    }
    o.device = cpu_vs_cpu ? ENG_DEVICE_CPU : ENG_DEVICE_CUDA;
    memset(&err, 0, sizeof err);
    eng_model *mg = eng_model_load(dir, &o, &err);
    if (!mg) {
        fprintf(stderr, "%s: second load failed: %s\n", dir, err.msg);
        CHECK(mg != NULL);
        eng_model_free(mc);
        return;
    }
    CHECK_STR(eng_model_backend_name(mg), cpu_vs_cpu ? "cpu" : "cuda");
    const eng_model_info *in = eng_model_get_info(mc);
    /* a GGUF file with block types (quant_types names Q8_0, Q4_K, ...) */
    const bool quant = in->gguf && strchr(in->quant_types, 'Q') != NULL;
    bool f32 = in->dtype == ENG_F32;
    fprintf(stderr, "%s: %d layers, d %d, heads %d/%d, vocab %d, %s; %s\n", dir, in->n_layer,
            in->d_model, in->n_head, in->n_kv_head, in->vocab_size,
            quant ? in->quant_types
            : f32 ? "F32"
                  : "16-bit",
            eng_model_device_desc(mg));
    double qrel = 0, qb = quant ? quant_nmse_bound(in->n_layer, &qrel) : 0;
    check_forward(mc, mg, f32, qb, 2, 48); /* 96 rows: dequantise + cuBLAS when quantised */
    if (quant)
        check_forward(mc, mg, f32, qb, 1, 24); /* 24 rows: the direct int8 kernel */
    run_infill(mc, mg, "entropy greedy exact", ENG_ALG_ENTROPY, ENG_CACHE_EXACT, 0.0f, 1, f32,
               qrel);
    run_infill(mc, mg, "entropy greedy cached", ENG_ALG_ENTROPY, ENG_CACHE_CACHED, 0.0f, 1, f32,
               qrel);
    run_infill(mc, mg, "default alg T=0.5 x2", ENG_ALG_DEFAULT, ENG_CACHE_CACHED, 0.5f, 2, f32,
               qrel);
    eng_model_free(mg);
    eng_model_free(mc);
}

/* A sticky device error (simulated at the third step) fails that request with
 * ERR_DEVICE; later steps run on the CPU fallback and equal the CPU backend. */
static void check_device_loss(const char *dir) {
    eng_load_opts o;
    eng_load_opts_default(&o);
    eng_error err = {0};
    o.device = ENG_DEVICE_CPU;
    eng_model *mc = eng_model_load(dir, &o, &err);
    setenv("INFILLD_CUDA_FAIL_AFTER", "3", 1);
    o.device = ENG_DEVICE_CUDA;
    eng_model *mg = eng_model_load(dir, &o, &err);
    unsetenv("INFILLD_CUDA_FAIL_AFTER");
    CHECK(mc && mg);
    if (!mc || !mg) {
        eng_model_free(mc);
        eng_model_free(mg);
        return;
    }
    const int len = 24;
    int32_t tokens[24], pos[4] = {5, 9, 13, 20};
    for (int i = 0; i < len; i++)
        tokens[i] = (int32_t)(next_u32() % 150000u);
    eng_ctx *cc = eng_ctx_new(mc, 1, len, &err), *cg = eng_ctx_new(mg, 1, len, &err);
    CHECK(cc && cg);
    if (cc && cg) {
        eng_batch b = {1, len, tokens, NULL};
        eng_step_req req;
        memset(&req, 0, sizeof req);
        req.mode = ENG_STEP_FULL;
        req.positions = pos;
        req.n_pos = 4;
        req.sampling.top_p = 1.0f;
        eng_row_result rc[4], rg[4];
        CHECK_EQ_I(eng_step(cc, &b, &req, rc), BASE_OK);
        CHECK_EQ_I(eng_step(cg, &b, &req, rg), BASE_OK);
        CHECK_EQ_I(eng_step(cg, &b, &req, rg), BASE_OK);
        CHECK_EQ_I(eng_step(cg, &b, &req, rg), BASE_ERR_DEVICE); /* the lost request */
        for (int k = 0; k < 2; k++) {
            memset(rg, 0, sizeof rg);
            CHECK_EQ_I(eng_step(cg, &b, &req, rg), BASE_OK);
            CHECK(memcmp(rc, rg, sizeof rc) == 0); /* the CPU backend's exact results */
        }
        CHECK(strstr(eng_model_device_desc(mg), "lost") != NULL);
        fprintf(stderr, "  device loss: %s\n", eng_model_device_desc(mg));
    }
    eng_ctx_free(cc);
    eng_ctx_free(cg);
    /* a context made after the loss runs on the CPU from the start */
    eng_ctx *c2 = eng_ctx_new(mg, 1, len, &err);
    CHECK(c2 != NULL);
    eng_ctx_free(c2);
    eng_model_free(mg);
    eng_model_free(mc);
}

int main(int argc, char **argv) {
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--cpu-vs-cpu") == 0) {
        cpu_vs_cpu = true;
        first = 2;
    }
    if (argc <= first) {
        fprintf(stderr, "usage: test_gpu_parity [--cpu-vs-cpu] MODEL_DIR...\n");
        return 2;
    }
    kcu_device_info di;
    char msg[256];
    if (!cpu_vs_cpu) {
        if (kcu_device_query(&di, msg, sizeof msg) != BASE_OK) {
            fprintf(stderr, "test_gpu_parity: skipped: %s\n", msg);
            return 77;
        }
        fprintf(stderr, "test_gpu_parity: %s\n", msg);
    }
    for (int i = first; i < argc; i++)
        check_model(argv[i]);
    if (!cpu_vs_cpu)
        check_device_loss(argv[first]);
    return check_finish("test_gpu_parity");
}
