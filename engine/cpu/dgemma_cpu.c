/* DiffusionGemma on the CPU: the encoder and decoder passes (shared/design/
 * DIFFUSIONGEMMA.md §2). One layer, for the pass's rows x:
 *   a = RMSNorm_w(x); q, k = RMSNorm_w per head, then RoPE; v = RMSNorm(Wv a)
 *   (global layers with attention_k_eq_v: v from the raw K projection);
 *   attention with scale 1.0 over the pass's key range (eng__dg_key_lo);
 *   x = x + RMSNorm_w(Wo o);
 *   dense GeGLU (+ routed experts: router on RMSNorm(x)·scale/√d, softmax,
 *   top-k, renormalised, × per-expert scale);
 *   x = (x + RMSNorm_w(ffn)) · layer_scalar (encoder or decoder scalar).
 * MoE is expert-grouped: rows are sorted by expert and each used expert's
 * weights are read once per pass; unused experts are never touched.
 * Float matrices go through the kernel table's gemm on f32 tiles converted
 * from the stored type; block-type (GGUF-quantised) ones, the 2-D matrices
 * as well as the experts, through the int8 kernels (cpu/qdot.c) on the
 * pass's rows quantised once per matmul, as the Dream path does. Both are
 * spread over the compute pool by weight rows. */
#define _GNU_SOURCE
#include "arch/dgemma_impl.h"
#include "cpu_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DG_TILE_ROWS 48

typedef struct dg_be {
    eng_model *m;
    const eng__dg_model *dg;
    const eng__kernels *k;
    eng__pool *pool;
    int nt;
    /* Block-type matrices and experts through the int8 kernels (cpu/qdot.c);
     * false with INFILLD_CPU_QUANT=dequant: dequantised tiles and the f32 gemm. */
    bool qact;
    char desc[128];
} dg_be;

struct eng_dg_ctx {
    dg_be *be;
    const eng__dg_model *dg;
    int max_cache, max_rows, len;
    int colm;         /* the widest matmul input (the thread tiles hold DG_TILE_ROWS such rows) */
    float **kc, **vc; /* [n_layer][max_cache * kv_dim] */
    float *x, *a, *q, *kk, *vv, *att, *o, *g, *u, *t, *t2, *m;
    float *rl;                /* router logits [R, E] */
    int32_t *ridx;            /* [R * top_k] */
    float *rw;                /* [R * top_k] */
    int32_t *order;           /* [R * top_k] (row * top_k + slot) sorted by expert */
    int *ecount, *efirst;     /* [E], [E + 1] */
    float *xe, *ge, *he, *oe; /* grouped expert rows */
    float *prob;              /* self-conditioning softmax [R, V] */
    eng__q8a *xqa, *xqg;      /* int8 expert inputs: every row [R, d/32]; grouped [R, max/32] */
    eng__q8a *xqm;            /* int8 rows of a block-type 2-D matmul [R, colm/32 + 1] */
    float **wtile;            /* [nt][DG_TILE_ROWS * max_cols] */
    float **scores;           /* [nt][max_cache + R] */
    double *inv_s, *inv_g;
    eng_dg_stats stats;
    const volatile int *cancel;
};

/* ---- memory ------------------------------------------------------------------ */

/* Bytes the process may use: INFILLD_MEM_LIMIT (bytes) when set, else
 * /proc/meminfo's MemAvailable (MemTotal when total). 0 when unknown. */
static uint64_t dg_mem(bool total) {
    const char *e = getenv("INFILLD_MEM_LIMIT");
    if (e && *e)
        return strtoull(e, NULL, 10);
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    uint64_t kb = 0;
    const char *key = total ? "MemTotal:" : "MemAvailable:";
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0) {
            kb = strtoull(line + strlen(key), NULL, 10);
            break;
        }
    fclose(f);
    return kb * 1024;
}

static double gib(uint64_t b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

/* ---- backend table ------------------------------------------------------------- */

static void dg_be_free(eng_backend *b) {
    dg_be *be = (dg_be *)b;
    if (!be)
        return;
    eng__pool_free(be->pool);
    free(be);
}

static const char *dg_be_desc(eng_backend *b) { return ((dg_be *)b)->desc; }

static eng_bctx *dg_be_ctx_new(eng_backend *b, int max_batch, int max_len, eng_error *err) {
    (void)b, (void)max_batch, (void)max_len;
    eng__err(err, BASE_ERR_UNSUPPORTED,
             "DiffusionGemma is not a mask-token model: it runs through its encoder/decoder "
             "passes and entropy-bound sampler (engine/dgemma.h), not eng_ctx_new");
    return NULL;
}

static void dg_be_ctx_free(eng_bctx *c) { (void)c; }

static base_status dg_be_forward(eng_bctx *c, const eng_batch *b, const int32_t *rows, int n,
                                 float *l) {
    (void)c, (void)b, (void)rows, (void)n, (void)l;
    return BASE_ERR_UNSUPPORTED;
}

static base_status dg_be_step(eng_bctx *c, const eng_batch *b, const eng_step_req *r,
                              eng_row_result *o) {
    (void)c, (void)b, (void)r, (void)o;
    return BASE_ERR_UNSUPPORTED;
}

const eng_backend_i eng__dg_backend = {
    .name = "cpu",
    .free = dg_be_free,
    .device_desc = dg_be_desc,
    .ctx_new = dg_be_ctx_new,
    .ctx_free = dg_be_ctx_free,
    .forward = dg_be_forward,
    .step = dg_be_step,
};

eng_backend *eng__dg_backend_new(eng_model *m, eng_error *err) {
    uint64_t tot = dg_mem(true);
    if (tot && m->info.weight_bytes > tot) {
        eng__err(err, BASE_ERR_NOMEM,
                 "%s: the weights take %.2f GiB but this machine has %.2f GiB of memory; use a "
                 "quantised file or a larger machine",
                 m->dir, gib(m->info.weight_bytes), gib(tot));
        return NULL;
    }
    dg_be *be = calloc(1, sizeof *be);
    if (!be) {
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    be->m = m;
    be->dg = m->dg;
    be->k = eng__kernels_get(true);
    int nt = m->opts.n_threads;
    if (nt <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nt = n > 0 ? (int)n : 1;
    }
    be->nt = nt;
    be->pool = eng__pool_new(nt);
    if (!be->pool) {
        free(be);
        eng__err(err, BASE_ERR_NOMEM, "out of memory (compute pool)");
        return NULL;
    }
    be->nt = eng__pool_threads(be->pool);
    const char *qm = getenv("INFILLD_CPU_QUANT");
    be->qact = !(qm && strcmp(qm, "dequant") == 0);
    bool block = eng__dtype_is_block(be->dg->lm_head.dtype);
    for (int l = 0; l < be->dg->info.n_layer; l++) {
        const eng__dg_layer *L = &be->dg->layers[l];
        const eng_tensor *ts[] = {&L->wq, &L->wo, &L->w_gate, &L->exp_gate_up, &L->exp_down};
        for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
            block = block || (ts[i]->data && eng__dtype_is_block(ts[i]->dtype));
    }
    snprintf(be->desc, sizeof be->desc, "cpu (%s%s, %d threads)", be->k->name,
             block && be->qact ? ", int8 activations" : "", be->nt);
    return (eng_backend *)be;
}

/* ---- geometry helpers (also the known-answer tests' entry points) -------------- */

int eng__dg_key_lo(bool decoder, bool global, int window, int L, int q) {
    if (global)
        return 0;
    int lo = decoder ? L - (window - 1) : L + q - window + 1;
    return lo > 0 ? lo : 0;
}

void eng__dg_inv_freq(int hd, float theta, float partial, double *inv) {
    const int half = hd / 2;
    const int rot = partial >= 1.0f ? half : (int)((double)partial * hd / 2);
    for (int i = 0; i < half; i++)
        inv[i] = i < rot ? pow((double)theta, -2.0 * i / hd) : 0.0;
}

void eng__dg_rope(float *x, int hd, const double *inv, int pos) {
    const int half = hd / 2;
    for (int i = 0; i < half; i++) {
        if (inv[i] == 0.0)
            continue;
        double ang = (double)pos * inv[i];
        double c = cos(ang), s = sin(ang);
        double a = x[i], b = x[i + half];
        x[i] = (float)(a * c - b * s);
        x[i + half] = (float)(b * c + a * s);
    }
}

/* ---- context ----------------------------------------------------------------------- */

static int dg_kvdim(const eng__dg_layer *L) { return L->n_kv * L->hd; }

void eng_dg_ctx_free(eng_dg_ctx *c) {
    if (!c)
        return;
    for (int l = 0; c->kc && l < c->dg->info.n_layer; l++) {
        free(c->kc[l]);
        free(c->vc[l]);
    }
    free(c->kc);
    free(c->vc);
    float *bufs[] = {c->x,  c->a, c->q,  c->kk, c->vv, c->att, c->o,  c->g,  c->u,   c->t,
                     c->t2, c->m, c->rl, c->rw, c->xe, c->ge,  c->he, c->oe, c->prob};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    free(c->xqa);
    free(c->xqg);
    free(c->xqm);
    free(c->ridx);
    free(c->order);
    free(c->ecount);
    free(c->efirst);
    for (int i = 0; c->wtile && i < c->be->nt; i++)
        free(c->wtile[i]);
    free(c->wtile);
    for (int i = 0; c->scores && i < c->be->nt; i++)
        free(c->scores[i]);
    free(c->scores);
    free(c->inv_s);
    free(c->inv_g);
    free(c);
}

void eng_dg_ctx_bytes(const eng_model *m, int max_cache, int max_rows, uint64_t *kv_out,
                      uint64_t *scratch_out) {
    const eng__dg_model *dg = m->dg;
    const eng_dg_info *in = &dg->info;
    const dg_be *be = (const dg_be *)m->be;
    const int R = max_rows, d = in->d_model, V = in->vocab_size, nt = be ? be->nt : 1;
    const int hdm = BASE_MAX(in->hd_sliding, in->hd_global);
    const int kvm = BASE_MAX(in->n_kv_sliding * in->hd_sliding, in->n_kv_global * in->hd_global);
    const int qm = in->n_head * hdm;
    const int ffm = BASE_MAX(in->d_ff, 2 * in->d_expert);
    int colm = BASE_MAX(BASE_MAX(d, qm), BASE_MAX(in->d_ff, in->d_expert));
    uint64_t kv = 0;
    for (int l = 0; l < in->n_layer; l++)
        kv += 2ull * (uint64_t)max_cache * (uint64_t)dg_kvdim(&dg->layers[l]) * sizeof(float);
    const int K = in->moe ? in->top_k : 0, E = in->moe ? in->n_expert : 0;
    uint64_t rows = (uint64_t)R * (uint64_t)(8 * d + 2 * qm + 2 * kvm + 2 * ffm + E + 2 * K +
                                             (in->self_cond ? V : 0));
    if (in->moe)
        rows +=
            (uint64_t)R * (uint64_t)(2 * d + 3 * in->d_expert) +
            (uint64_t)R * (uint64_t)(2 * d + in->d_expert) / 32 * sizeof(eng__q8a) / sizeof(float);
    rows += (uint64_t)R * (uint64_t)(colm / 32 + 1) * sizeof(eng__q8a) / sizeof(float);
    *kv_out = kv;
    *scratch_out =
        rows * sizeof(float) +
        (uint64_t)nt * ((uint64_t)DG_TILE_ROWS * colm + (uint64_t)max_cache + R) * sizeof(float);
}

eng_dg_ctx *eng_dg_ctx_new(eng_model *m, int max_cache, int max_rows, eng_error *err) {
    if (!m || !m->dg || m->bi != &eng__dg_backend) {
        eng__err(err, BASE_ERR_INVALID, "not a DiffusionGemma model");
        return NULL;
    }
    const eng__dg_model *dg = m->dg;
    const eng_dg_info *in = &dg->info;
    if (max_cache <= 0 || max_rows <= 0 || max_rows > 65536 || max_cache > (1 << 24)) {
        eng__err(err, BASE_ERR_INVALID,
                 "DiffusionGemma context of %d cached + %d rows is out of "
                 "range",
                 max_cache, max_rows);
        return NULL;
    }
    dg_be *be = (dg_be *)m->be;
    const int R = max_rows, d = in->d_model, V = in->vocab_size, nt = be->nt;
    const int hdm = BASE_MAX(in->hd_sliding, in->hd_global);
    const int kvm = BASE_MAX(in->n_kv_sliding * in->hd_sliding, in->n_kv_global * in->hd_global);
    const int qm = in->n_head * hdm;
    const int ffm = BASE_MAX(in->d_ff, 2 * in->d_expert);
    int colm = BASE_MAX(BASE_MAX(d, qm), BASE_MAX(in->d_ff, in->d_expert));
    const int K = in->moe ? in->top_k : 0, E = in->moe ? in->n_expert : 0;
    /* The memory budget: K/V cache + scratch (+ the self-conditioning softmax). */
    uint64_t kv, scratch;
    eng_dg_ctx_bytes(m, max_cache, max_rows, &kv, &scratch);
    uint64_t avail = dg_mem(false);
    if (avail && kv + scratch > avail) {
        eng__err(err, BASE_ERR_NOMEM,
                 "DiffusionGemma context needs %.2f GiB (K/V cache for %d positions %.2f GiB, "
                 "scratch for %d-token passes %.2f GiB) but only %.2f GiB are available",
                 gib(kv + scratch), max_cache, gib(kv), R, gib(scratch), gib(avail));
        return NULL;
    }
    eng_dg_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    c->be = be;
    c->dg = dg;
    c->max_cache = max_cache;
    c->max_rows = R;
    c->colm = colm;
    bool ok = (c->kc = calloc((size_t)in->n_layer, sizeof *c->kc)) &&
              (c->vc = calloc((size_t)in->n_layer, sizeof *c->vc));
    for (int l = 0; ok && l < in->n_layer; l++) {
        size_t n = (size_t)max_cache * (size_t)dg_kvdim(&dg->layers[l]);
        ok = (c->kc[l] = malloc(n * sizeof(float))) && (c->vc[l] = malloc(n * sizeof(float)));
    }
#define DG_ALLOC(p, n) (ok = ok && ((p) = malloc((size_t)(n) * sizeof *(p) + 16)) != NULL)
    DG_ALLOC(c->x, R * d);
    DG_ALLOC(c->a, R * d);
    DG_ALLOC(c->q, R * qm);
    DG_ALLOC(c->kk, R * kvm);
    DG_ALLOC(c->vv, R * kvm);
    DG_ALLOC(c->att, R * qm);
    DG_ALLOC(c->o, R * d);
    DG_ALLOC(c->g, R * ffm);
    DG_ALLOC(c->u, R * ffm);
    DG_ALLOC(c->t, R * d);
    DG_ALLOC(c->t2, R * d);
    DG_ALLOC(c->m, R * d);
    if (in->moe) {
        DG_ALLOC(c->rl, R * E);
        DG_ALLOC(c->ridx, R * K);
        DG_ALLOC(c->rw, R * K);
        DG_ALLOC(c->order, R * K);
        DG_ALLOC(c->ecount, E);
        DG_ALLOC(c->efirst, E + 1);
        DG_ALLOC(c->xe, R * d);
        DG_ALLOC(c->ge, R * 2 * in->d_expert);
        DG_ALLOC(c->he, R * in->d_expert);
        DG_ALLOC(c->oe, R * d);
        DG_ALLOC(c->xqa, R * (d / 32 + 1));
        DG_ALLOC(c->xqg, R * (BASE_MAX(d, in->d_expert) / 32 + 1));
    }
    DG_ALLOC(c->xqm, R * (colm / 32 + 1));
    if (in->self_cond)
        DG_ALLOC(c->prob, (int64_t)R * V);
    ok = ok && (c->wtile = calloc((size_t)nt, sizeof *c->wtile)) &&
         (c->scores = calloc((size_t)nt, sizeof *c->scores));
    for (int i = 0; ok && i < nt; i++) {
        DG_ALLOC(c->wtile[i], DG_TILE_ROWS * colm);
        DG_ALLOC(c->scores[i], max_cache + R);
    }
    DG_ALLOC(c->inv_s, in->hd_sliding / 2);
    DG_ALLOC(c->inv_g, in->hd_global / 2);
#undef DG_ALLOC
    if (!ok) {
        eng_dg_ctx_free(c);
        eng__err(err, BASE_ERR_NOMEM, "out of memory (DiffusionGemma context)");
        return NULL;
    }
    eng__dg_inv_freq(in->hd_sliding, in->theta_sliding, 1.0f, c->inv_s);
    eng__dg_inv_freq(in->hd_global, in->theta_global, in->partial_rotary, c->inv_g);
    return c;
}

const eng__dg_model *eng__dg_ctx_model(const eng_dg_ctx *c) { return c->dg; }
int eng__dg_ctx_max_rows(const eng_dg_ctx *c) { return c->max_rows; }
int eng__dg_ctx_max_cache(const eng_dg_ctx *c) { return c->max_cache; }
void eng__dg_ctx_parallel(eng_dg_ctx *c, eng__task_fn fn, void *arg, int n) {
    eng__pool_run(c->be->pool, fn, arg, n);
}

int eng_dg_cache_len(const eng_dg_ctx *c) { return c ? c->len : 0; }

void eng_dg_cache_truncate(eng_dg_ctx *c, int len) {
    if (c && len >= 0 && len < c->len)
        c->len = len;
}

void eng_dg_set_cancel(eng_dg_ctx *c, const volatile int *flag) {
    if (c)
        c->cancel = flag;
}

void eng_dg_get_stats(const eng_dg_ctx *c, eng_dg_stats *s) { *s = c->stats; }

/* ---- matmul ------------------------------------------------------------------------- */

typedef struct dg_mm_job {
    eng_dg_ctx *c;
    const float *X;
    int ldx, M;
    const eng_tensor *W;
    float *Y;
    int ldy;
    bool acc;
} dg_mm_job;

static void dg_mm_task(void *arg, int task, int tid) {
    const dg_mm_job *j = arg;
    const int N = (int)j->W->rows, K = (int)j->W->cols;
    const int n0 = task * DG_TILE_ROWS, n = BASE_MIN(N - n0, DG_TILE_ROWS);
    const float *w;
    if (j->W->dtype == ENG_F32) {
        w = (const float *)j->W->data + (int64_t)n0 * K;
    } else {
        float *t = j->c->wtile[tid];
        if (eng__dtype_is_block(j->W->dtype))
            eng__dequant(j->W->dtype, j->W->data, (int64_t)n0 * K, (int64_t)n * K, t);
        else
            j->c->be->k->convert(j->W, n0, n, t);
        w = t;
    }
    j->c->be->k->gemm(j->X, j->ldx, w, K, j->Y + n0, j->ldy, j->M, n, K, j->acc);
}

static void dg_qmm(eng_dg_ctx *c, const eng__q8a *X, int ldxb, int M, const eng_tensor *W, float *Y,
                   int ldy, bool acc);
static void dg_quant_rows(eng_dg_ctx *c, const float *X, int ld, int n, int k, eng__q8a *out,
                          int ldxb);

/* Y[M, W->rows] (+)= X[M, W->cols] W^T. A block-type W: X quantised to int8
 * blocks once (every weight tile reads the same rows), then the int8 kernels. */
static void dg_mm(eng_dg_ctx *c, const float *X, int ldx, int M, const eng_tensor *W, float *Y,
                  int ldy, bool acc) {
    if (M <= 0)
        return;
    if (c->be->qact && eng__dtype_is_block(W->dtype)) {
        const int K = (int)W->cols;
        dg_quant_rows(c, X, ldx, M, K, c->xqm, K / 32);
        dg_qmm(c, c->xqm, K / 32, M, W, Y, ldy, acc);
        return;
    }
    dg_mm_job j = {c, X, ldx, M, W, Y, ldy, acc};
    eng__pool_run(c->be->pool, dg_mm_task, &j, (int)((W->rows + DG_TILE_ROWS - 1) / DG_TILE_ROWS));
}

/* Rows [r0, r0 + rows) of a stacked tensor as a tensor of their own. */
static eng_tensor dg_slice(const eng_tensor *t, int64_t r0, int64_t rows) {
    eng_tensor s = *t;
    s.data = (const uint8_t *)t->data + eng__dtype_bytes(t->dtype, r0 * t->cols);
    s.rows = rows;
    return s;
}

/* ---- row ops ----------------------------------------------------------------------------- */

/* y = x / sqrt(mean(x^2) + eps) * w (w NULL: no weight). */
static void dg_rms(const float *x, const eng_tensor *w, float *y, int n, float eps, float *wbuf) {
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (double)x[i] * x[i];
    const float r = (float)(1.0 / sqrt(ss / n + eps));
    if (w && w->data) {
        eng__tensor_row_f32(w, 0, 0, n, wbuf);
        for (int i = 0; i < n; i++)
            y[i] = x[i] * r * wbuf[i];
    } else {
        for (int i = 0; i < n; i++)
            y[i] = x[i] * r;
    }
}

static float dg_gelu(float x) {
    const double k = 0.7978845608028654; /* sqrt(2/pi) */
    double xd = x;
    return (float)(0.5 * xd * (1.0 + tanh(k * (xd + 0.044715 * xd * xd * xd))));
}

typedef struct dg_rows_job {
    eng_dg_ctx *c;
    int op, n, width, ld_src, ld_dst;
    const float *src;
    float *dst;
    const eng_tensor *w;
    float *aux;
} dg_rows_job;

enum { DG_OP_NORM, DG_OP_GEGLU };

static void dg_rows_task(void *arg, int task, int tid) {
    const dg_rows_job *j = arg;
    const float eps = j->c->dg->info.rms_eps;
    float *wbuf = j->c->wtile[tid];
    for (int r = task * 8; r < BASE_MIN(j->n, task * 8 + 8); r++) {
        const float *s = j->src + (int64_t)r * j->ld_src;
        float *y = j->dst + (int64_t)r * j->ld_dst;
        if (j->op == DG_OP_NORM) {
            dg_rms(s, j->w, y, j->width, eps, wbuf);
        } else {
            const float *up = j->aux + (int64_t)r * j->ld_src;
            for (int i = 0; i < j->width; i++)
                y[i] = dg_gelu(s[i]) * up[i];
        }
    }
}

static void dg_norm_rows(eng_dg_ctx *c, const float *src, int ld_src, float *dst, int ld_dst, int n,
                         int width, const eng_tensor *w) {
    dg_rows_job j = {c, DG_OP_NORM, n, width, ld_src, ld_dst, src, dst, w, NULL};
    eng__pool_run(c->be->pool, dg_rows_task, &j, (n + 7) / 8);
}

/* dst = gelu_tanh(gate) * up, rows of width (gate/up stride ld_src). */
static void dg_geglu_rows(eng_dg_ctx *c, const float *gate, const float *up, int ld_src, float *dst,
                          int ld_dst, int n, int width) {
    dg_rows_job j = {c, DG_OP_GEGLU, n, width, ld_src, ld_dst, gate, dst, NULL, (float *)up};
    eng__pool_run(c->be->pool, dg_rows_task, &j, (n + 7) / 8);
}

/* ---- attention ------------------------------------------------------------------------------ */

typedef struct dg_att_job {
    eng_dg_ctx *c;
    const eng__dg_layer *L;
    int layer, n, L0;
    bool decoder;
} dg_att_job;

static void dg_att_task(void *arg, int task, int tid) {
    const dg_att_job *j = arg;
    eng_dg_ctx *c = j->c;
    const eng__dg_layer *L = j->L;
    const int H = c->dg->info.n_head, hd = L->hd, kvd = dg_kvdim(L), grp = H / L->n_kv;
    const int i = task / H, h = task % H, g = h / grp;
    const int qd = H * hd;
    const float *q = c->q + (int64_t)i * qd + h * hd;
    float *out = c->att + (int64_t)i * qd + h * hd;
    float *s = c->scores[tid];
    const int lo = eng__dg_key_lo(j->decoder, L->global, c->dg->info.sliding_window, j->L0, i);
    const float *kc = c->kc[j->layer], *vc = c->vc[j->layer];
    /* keys: cached [lo, hi) then (decoder) the n canvas rows */
    const int hi = j->decoder ? j->L0 : j->L0 + i + 1;
    const int nc = hi - lo, nk = nc + (j->decoder ? j->n : 0);
    const eng__kernels *k = c->be->k;
    float mx = -INFINITY;
    for (int t = 0; t < nk; t++) {
        const float *kr = t < nc ? kc + (int64_t)(lo + t) * kvd + g * hd
                                 : c->kk + (int64_t)(t - nc) * kvd + g * hd;
        s[t] = k->dot(q, kr, hd);
        mx = s[t] > mx ? s[t] : mx;
    }
    double z = 0;
    for (int t = 0; t < nk; t++) {
        s[t] = expf(s[t] - mx);
        z += s[t];
    }
    memset(out, 0, (size_t)hd * sizeof *out);
    const float iz = (float)(1.0 / z);
    for (int t = 0; t < nk; t++) {
        const float *vr = t < nc ? vc + (int64_t)(lo + t) * kvd + g * hd
                                 : c->vv + (int64_t)(t - nc) * kvd + g * hd;
        k->axpy(out, s[t] * iz, vr, hd);
    }
}

/* q/k/v per-head norms and RoPE; rows at positions L0 + i. */
typedef struct dg_qkv_job {
    eng_dg_ctx *c;
    const eng__dg_layer *L;
    int n, L0;
} dg_qkv_job;

static void dg_qkv_task(void *arg, int i, int tid) {
    const dg_qkv_job *j = arg;
    eng_dg_ctx *c = j->c;
    const eng__dg_layer *L = j->L;
    const int H = c->dg->info.n_head, hd = L->hd, kvd = dg_kvdim(L);
    const float eps = c->dg->info.rms_eps;
    const double *inv = L->global ? c->inv_g : c->inv_s;
    float *wb = c->wtile[tid];
    const int pos = j->L0 + i;
    for (int h = 0; h < H; h++) {
        float *q = c->q + (int64_t)i * H * hd + h * hd;
        dg_rms(q, &L->q_norm, q, hd, eps, wb);
        eng__dg_rope(q, hd, inv, pos);
    }
    for (int h = 0; h < L->n_kv; h++) {
        float *kr = c->kk + (int64_t)i * kvd + h * hd;
        float *vr = c->vv + (int64_t)i * kvd + h * hd;
        if (!L->wv.data)
            memcpy(vr, kr, (size_t)hd * sizeof *vr); /* V = raw K projection */
        dg_rms(vr, NULL, vr, hd, eps, wb);
        dg_rms(kr, &L->k_norm, kr, hd, eps, wb);
        eng__dg_rope(kr, hd, inv, pos);
    }
}

/* ---- MoE ---------------------------------------------------------------------------------- */

/* Router for every row: softmax over experts, top-k (ties: lower index),
 * renormalised, times per_expert_scale. Then rows grouped by expert. */
static void dg_route(eng_dg_ctx *c, const eng__dg_layer *L, int n) {
    const eng_dg_info *in = &c->dg->info;
    const int d = in->d_model, E = in->n_expert, K = in->top_k;
    float *wb = c->wtile[0];
    /* r_in = RMSNorm(x) * scale / sqrt(d) into t2; o is free here and holds
     * the router scale, then the per-expert scales. */
    float *rs = c->o;
    eng__tensor_row_f32(&L->router_scale, 0, 0, d, rs);
    const float isd = (float)(1.0 / sqrt((double)d));
    for (int i = 0; i < n; i++) {
        float *r = c->t2 + (int64_t)i * d;
        dg_rms(c->x + (int64_t)i * d, NULL, r, d, in->rms_eps, wb);
        for (int k = 0; k < d; k++)
            r[k] = r[k] * rs[k] * isd;
    }
    dg_mm(c, c->t2, d, n, &L->router_w, c->rl, E, false);
    float *pes = c->o;
    eng__tensor_row_f32(&L->per_expert_scale, 0, 0, E, pes);
    memset(c->ecount, 0, (size_t)E * sizeof *c->ecount);
    for (int i = 0; i < n; i++) {
        const float *l = c->rl + (int64_t)i * E;
        float mx = -INFINITY;
        for (int e = 0; e < E; e++)
            mx = l[e] > mx ? l[e] : mx;
        double z = 0;
        for (int e = 0; e < E; e++)
            z += exp((double)l[e] - mx);
        int32_t *ix = c->ridx + (int64_t)i * K;
        float *w = c->rw + (int64_t)i * K;
        double sum = 0;
        for (int s = 0; s < K; s++) {
            int best = -1;
            for (int e = 0; e < E; e++) {
                bool taken = false;
                for (int t = 0; t < s; t++)
                    taken |= ix[t] == e;
                if (!taken && (best < 0 || l[e] > l[best]))
                    best = e;
            }
            ix[s] = best;
            w[s] = (float)(exp((double)l[best] - mx) / z);
            sum += w[s];
        }
        for (int s = 0; s < K; s++) {
            w[s] = (float)(w[s] / sum) * pes[ix[s]];
            c->ecount[ix[s]]++;
        }
    }
    c->efirst[0] = 0;
    for (int e = 0; e < E; e++)
        c->efirst[e + 1] = c->efirst[e] + c->ecount[e];
    memset(c->ecount, 0, (size_t)E * sizeof *c->ecount);
    for (int i = 0; i < n; i++)
        for (int s = 0; s < K; s++) {
            int e = c->ridx[(int64_t)i * K + s];
            c->order[c->efirst[e] + c->ecount[e]++] = i * K + s;
        }
}

/* Y[M, W->rows] = X W^T for a block-type W and X already quantised (ldxb
 * blocks a row), spread over the pool by weight-row tiles. */
typedef struct dg_qmm_job {
    eng_dg_ctx *c;
    const eng__q8a *X;
    int ldxb, M;
    const eng_tensor *W;
    float *Y;
    int ldy;
    bool acc;
} dg_qmm_job;

static void dg_qmm_task(void *arg, int task, int tid) {
    (void)tid;
    const dg_qmm_job *j = arg;
    const int N = (int)j->W->rows, K = (int)j->W->cols;
    const int n0 = task * DG_TILE_ROWS, n = BASE_MIN(N - n0, DG_TILE_ROWS);
    const size_t rb = eng__dtype_bytes(j->W->dtype, K);
    j->c->be->k->qgemm(j->W->dtype, (const uint8_t *)j->W->data + (size_t)n0 * rb, rb, j->X,
                       j->ldxb, j->Y + n0, j->ldy, j->M, n, K, j->acc);
}

static void dg_qmm(eng_dg_ctx *c, const eng__q8a *X, int ldxb, int M, const eng_tensor *W, float *Y,
                   int ldy, bool acc) {
    dg_qmm_job j = {c, X, ldxb, M, W, Y, ldy, acc};
    eng__pool_run(c->be->pool, dg_qmm_task, &j, (int)((W->rows + DG_TILE_ROWS - 1) / DG_TILE_ROWS));
}

/* Quantises n rows of width k (ld floats apart) to blocks ldxb apart. */
typedef struct dg_qa_job {
    const float *X;
    int ld, k, ldxb;
    eng__q8a *out;
} dg_qa_job;

static void dg_qa_task(void *arg, int r, int tid) {
    (void)tid;
    const dg_qa_job *j = arg;
    eng__quantize_act(j->X + (int64_t)r * j->ld, j->k, j->out + (int64_t)r * j->ldxb);
}

static void dg_quant_rows(eng_dg_ctx *c, const float *X, int ld, int n, int k, eng__q8a *out,
                          int ldxb) {
    dg_qa_job j = {X, ld, k, ldxb, out};
    eng__pool_run(c->be->pool, dg_qa_task, &j, n);
}

/* m[n, d] = Σ_slots w · expert(b2 row), expert by expert over the rows routed
 * to it. Block-type experts: b2 is quantised to int8 once per row (not once
 * per expert it goes to), the grouped rows gathered as blocks, the GeGLU
 * output quantised per expert; float experts: f32 tiles and gemm. */
static void dg_experts(eng_dg_ctx *c, const eng__dg_layer *L, const float *b2, int n) {
    const eng_dg_info *in = &c->dg->info;
    const int d = in->d_model, F = in->d_expert, K = in->top_k;
    const bool split = L->exp_up.data != NULL;
    const bool q1 = c->be->qact && eng__dtype_is_block(L->exp_gate_up.dtype) &&
                    (!split || eng__dtype_is_block(L->exp_up.dtype));
    const bool q2 = c->be->qact && eng__dtype_is_block(L->exp_down.dtype);
    const int db = d / 32, fb = F / 32, gb = BASE_MAX(d, F) / 32 + 1;
    memset(c->m, 0, (size_t)n * d * sizeof *c->m);
    if (q1)
        dg_quant_rows(c, b2, d, n, d, c->xqa, db);
    uint64_t used = 0;
    for (int e = 0; e < in->n_expert; e++) {
        const int ne = c->efirst[e + 1] - c->efirst[e];
        if (ne == 0)
            continue;
        const int32_t *ord = c->order + c->efirst[e];
        if (q1) {
            for (int r = 0; r < ne; r++)
                memcpy(c->xqg + (int64_t)r * gb, c->xqa + (int64_t)(ord[r] / K) * db,
                       (size_t)db * sizeof(eng__q8a));
        } else {
            for (int r = 0; r < ne; r++)
                memcpy(c->xe + (int64_t)r * d, b2 + (int64_t)(ord[r] / K) * d,
                       (size_t)d * sizeof(float));
        }
        eng_tensor gu = split ? dg_slice(&L->exp_gate_up, (int64_t)e * F, F)
                              : dg_slice(&L->exp_gate_up, (int64_t)e * 2 * F, 2 * F);
        eng_tensor up = split ? dg_slice(&L->exp_up, (int64_t)e * F, F) : gu;
        eng_tensor dn = dg_slice(&L->exp_down, (int64_t)e * d, d);
        if (q1) {
            dg_qmm(c, c->xqg, gb, ne, &gu, c->ge, 2 * F, false);
            if (split)
                dg_qmm(c, c->xqg, gb, ne, &up, c->ge + F, 2 * F, false);
        } else {
            dg_mm(c, c->xe, d, ne, &gu, c->ge, 2 * F, false);
            if (split)
                dg_mm(c, c->xe, d, ne, &up, c->ge + F, 2 * F, false);
        }
        dg_geglu_rows(c, c->ge, c->ge + F, 2 * F, c->he, F, ne, F);
        if (q2) {
            dg_quant_rows(c, c->he, F, ne, F, c->xqg, fb);
            dg_qmm(c, c->xqg, fb, ne, &dn, c->oe, d, false);
        } else {
            dg_mm(c, c->he, F, ne, &dn, c->oe, d, false);
        }
        for (int r = 0; r < ne; r++) {
            const int row = ord[r] / K;
            c->be->k->axpy(c->m + (int64_t)row * d, c->rw[ord[r]], c->oe + (int64_t)r * d, d);
        }
        c->stats.expert_calls++;
        c->stats.expert_rows += (uint64_t)ne;
        used += L->expert_bytes;
    }
    c->stats.expert_bytes_read += used;
    c->stats.expert_bytes_used += used;
    c->stats.expert_bytes_all += L->expert_bytes * (uint64_t)in->n_expert;
}

/* ---- one layer, one pass ----------------------------------------------------------------------
 */

static void dg_layer(eng_dg_ctx *c, int l, int n, int L0, bool decoder) {
    const eng__dg_model *dg = c->dg;
    const eng_dg_info *in = &dg->info;
    const eng__dg_layer *L = &dg->layers[l];
    const int d = in->d_model, H = in->n_head, hd = L->hd, qd = H * hd, kvd = dg_kvdim(L);
    const int ff = in->d_ff;
    dg_norm_rows(c, c->x, d, c->a, d, n, d, &L->in_norm);
    dg_mm(c, c->a, d, n, &L->wq, c->q, qd, false);
    dg_mm(c, c->a, d, n, &L->wk, c->kk, kvd, false);
    if (L->wv.data)
        dg_mm(c, c->a, d, n, &L->wv, c->vv, kvd, false);
    dg_qkv_job qj = {c, L, n, L0};
    eng__pool_run(c->be->pool, dg_qkv_task, &qj, n);
    if (!decoder) {
        memcpy(c->kc[l] + (int64_t)L0 * kvd, c->kk, (size_t)n * kvd * sizeof(float));
        memcpy(c->vc[l] + (int64_t)L0 * kvd, c->vv, (size_t)n * kvd * sizeof(float));
    }
    dg_att_job aj = {c, L, l, n, L0, decoder};
    eng__pool_run(c->be->pool, dg_att_task, &aj, n * H);
    dg_mm(c, c->att, qd, n, &L->wo, c->o, d, false);
    dg_norm_rows(c, c->o, d, c->o, d, n, d, &L->post_attn_norm);
    for (int64_t i = 0; i < (int64_t)n * d; i++)
        c->x[i] += c->o[i];
    /* dense GeGLU */
    dg_norm_rows(c, c->x, d, c->a, d, n, d, &L->pre_ffn_norm);
    dg_mm(c, c->a, d, n, &L->w_gate, c->g, ff, false);
    dg_mm(c, c->a, d, n, &L->w_up, c->u, ff, false);
    dg_geglu_rows(c, c->g, c->u, ff, c->g, ff, n, ff);
    dg_mm(c, c->g, ff, n, &L->w_down, c->t, d, false);
    if (in->moe) {
        dg_norm_rows(c, c->t, d, c->t, d, n, d, &L->post_ffn_norm1);
        dg_route(c, L, n);
        dg_norm_rows(c, c->x, d, c->a, d, n, d, &L->pre_ffn_norm2);
        dg_experts(c, L, c->a, n);
        dg_norm_rows(c, c->m, d, c->m, d, n, d, &L->post_ffn_norm2);
        for (int64_t i = 0; i < (int64_t)n * d; i++)
            c->t[i] += c->m[i];
    }
    dg_norm_rows(c, c->t, d, c->t, d, n, d, &L->post_ffn_norm);
    const float s = decoder ? L->dec_scalar : L->enc_scalar;
    for (int64_t i = 0; i < (int64_t)n * d; i++)
        c->x[i] = (c->x[i] + c->t[i]) * s;
}

static void dg_embed(eng_dg_ctx *c, const int32_t *ids, int n, float *out) {
    const eng__dg_model *dg = c->dg;
    const int d = dg->info.d_model;
    for (int i = 0; i < n; i++) {
        float *r = out + (int64_t)i * d;
        eng__tensor_row_f32(&dg->embed, ids[i], 0, d, r);
        for (int k = 0; k < d; k++)
            r[k] *= dg->info.embed_scale;
    }
}

static void dg_head(eng_dg_ctx *c, int n, float *logits) {
    const eng__dg_model *dg = c->dg;
    const int d = dg->info.d_model, V = dg->info.vocab_size;
    dg_norm_rows(c, c->x, d, c->a, d, n, d, &dg->final_norm);
    dg_mm(c, c->a, d, n, &dg->lm_head, logits, V, false);
    const float cap = dg->info.softcap;
    if (cap > 0)
        for (int64_t i = 0; i < (int64_t)n * V; i++)
            logits[i] = (float)(cap * tanh((double)logits[i] / cap));
}

static base_status dg_check_ids(const eng_dg_ctx *c, const int32_t *ids, int n) {
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->dg->info.vocab_size)
            return BASE_ERR_RANGE;
    return BASE_OK;
}

base_status eng_dg_encode(eng_dg_ctx *c, const int32_t *ids, int n, float *logits) {
    if (!c || n < 0 || (n > 0 && !ids))
        return BASE_ERR_INVALID;
    if (c->len + n > c->max_cache)
        return BASE_ERR_TOO_LARGE;
    base_status st = dg_check_ids(c, ids, n);
    if (st)
        return st;
    const int V = c->dg->info.vocab_size;
    for (int done = 0; done < n;) {
        const int k = BASE_MIN(c->max_rows, n - done);
        dg_embed(c, ids + done, k, c->x);
        for (int l = 0; l < c->dg->info.n_layer; l++) {
            if (c->cancel && *c->cancel)
                return BASE_ERR_CANCELLED;
            dg_layer(c, l, k, c->len, false);
        }
        if (logits)
            dg_head(c, k, logits + (int64_t)done * V);
        c->len += k;
        done += k;
    }
    return BASE_OK;
}

/* soft[r] = softmax(sc[r]) @ E * scale, over column blocks of d: 64 wide, or
 * one quantisation block (dg_soft_width) of a block-type E, of which each
 * task dequantises only its own columns of every row. The block's rows
 * v0..v0+nv are transposed into a tile T [w, nv], so that the kernel table's
 * register-tiled gemm computes out[:, block] += P[:, v0:v0+nv] T^T (an axpy
 * per row and id would re-read and re-write the output block each time). */
typedef struct dg_soft_job {
    eng_dg_ctx *c;
    int n, width, vchunk;
    float *out;
} dg_soft_job;

static int dg_soft_width(eng_dtype t) {
    if (!eng__dtype_is_block(t))
        return 64;
    return t == ENG_Q8_0 || t == ENG_Q4_0 ? 64 : 256; /* 2 blocks of 32, or one K-type block */
}

static void dg_soft_task(void *arg, int task, int tid) {
    const dg_soft_job *j = arg;
    eng_dg_ctx *c = j->c;
    const eng__dg_model *dg = c->dg;
    const int d = dg->info.d_model, V = dg->info.vocab_size;
    const int c0 = task * j->width, w = BASE_MIN(j->width, d - c0);
    float *row = c->wtile[tid], *T = row + j->width;
    const bool block = eng__dtype_is_block(dg->embed.dtype);
    for (int v0 = 0; v0 < V; v0 += j->vchunk) {
        const int nv = BASE_MIN(j->vchunk, V - v0);
        for (int i = 0; i < nv; i++) {
            if (block) /* c0 and w are whole blocks: d is, and so is the width */
                eng__dequant(dg->embed.dtype, dg->embed.data, (int64_t)(v0 + i) * d + c0, w, row);
            else
                eng__tensor_row_f32(&dg->embed, v0 + i, c0, w, row);
            for (int k = 0; k < w; k++)
                T[(int64_t)k * nv + i] = row[k];
        }
        c->be->k->gemm(c->prob + v0, V, T, nv, j->out + c0, d, j->n, w, nv, v0 > 0);
    }
    for (int r = 0; r < j->n; r++)
        for (int k = 0; k < w; k++)
            j->out[(int64_t)r * d + c0 + k] *= dg->info.embed_scale;
}

typedef struct dg_smax_job {
    eng_dg_ctx *c;
    const float *sc;
} dg_smax_job;

static void dg_smax_task(void *arg, int r, int tid) {
    (void)tid;
    const dg_smax_job *j = arg;
    const int V = j->c->dg->info.vocab_size;
    const float *l = j->sc + (int64_t)r * V;
    float *p = j->c->prob + (int64_t)r * V;
    float mx = -INFINITY;
    for (int v = 0; v < V; v++)
        mx = l[v] > mx ? l[v] : mx;
    double z = 0;
    for (int v = 0; v < V; v++) {
        p[v] = expf(l[v] - mx);
        z += p[v];
    }
    const float iz = (float)(1.0 / z);
    for (int v = 0; v < V; v++)
        p[v] *= iz;
}

base_status eng_dg_decode(eng_dg_ctx *c, const int32_t *canvas, int n, const float *sc,
                          float *logits) {
    if (!c || n <= 0 || !canvas || !logits || n > c->max_rows)
        return BASE_ERR_INVALID;
    if (sc && !c->dg->info.self_cond)
        return BASE_ERR_UNSUPPORTED;
    base_status st = dg_check_ids(c, canvas, n);
    if (st)
        return st;
    const eng__dg_model *dg = c->dg;
    const int d = dg->info.d_model, ff = dg->info.d_ff;
    dg_embed(c, canvas, n, c->x);
    if (sc) {
        /* self-conditioning: RMSNorm(emb + MLP(RMSNorm_w(softmax(sc) @ E · scale))) */
        dg_smax_job sj = {c, sc};
        eng__pool_run(c->be->pool, dg_smax_task, &sj, n);
        /* ids per tile: what fits in the thread's tile after one row, at most 256 */
        const int sw = dg_soft_width(dg->embed.dtype);
        const int vc = BASE_MAX(1, BASE_MIN(256, (DG_TILE_ROWS * c->colm - sw) / sw));
        dg_soft_job fj = {c, n, sw, vc, c->t};
        eng__pool_run(c->be->pool, dg_soft_task, &fj, (d + sw - 1) / sw);
        dg_norm_rows(c, c->t, d, c->a, d, n, d, &dg->sc_pre_norm);
        dg_mm(c, c->a, d, n, &dg->sc_gate, c->g, ff, false);
        dg_mm(c, c->a, d, n, &dg->sc_up, c->u, ff, false);
        dg_geglu_rows(c, c->g, c->u, ff, c->g, ff, n, ff);
        dg_mm(c, c->g, ff, n, &dg->sc_down, c->t, d, false);
        for (int64_t i = 0; i < (int64_t)n * d; i++)
            c->x[i] += c->t[i];
    }
    dg_norm_rows(c, c->x, d, c->x, d, n, d, NULL);
    for (int l = 0; l < dg->info.n_layer; l++) {
        if (c->cancel && *c->cancel)
            return BASE_ERR_CANCELLED;
        dg_layer(c, l, n, c->len, true);
    }
    dg_head(c, n, logits);
    return BASE_OK;
}

base_status eng__dg_moe_run(eng_dg_ctx *c, int layer, const float *x, int n, float *m, int32_t *idx,
                            float *w) {
    const eng_dg_info *in = &c->dg->info;
    if (!in->moe || layer < 0 || layer >= in->n_layer || n <= 0 || n > c->max_rows)
        return BASE_ERR_INVALID;
    const eng__dg_layer *L = &c->dg->layers[layer];
    const int d = in->d_model, K = in->top_k;
    memcpy(c->x, x, (size_t)n * d * sizeof *x);
    dg_route(c, L, n);
    dg_norm_rows(c, c->x, d, c->a, d, n, d, &L->pre_ffn_norm2);
    dg_experts(c, L, c->a, n);
    memcpy(m, c->m, (size_t)n * d * sizeof *m);
    memcpy(idx, c->ridx, (size_t)n * K * sizeof *idx);
    memcpy(w, c->rw, (size_t)n * K * sizeof *w);
    return BASE_OK;
}

base_status eng__dg_mm_run(eng_dg_ctx *c, const eng_tensor *W, const float *X, int ldx, int n,
                           float *Y) {
    const eng_dg_info *in = &c->dg->info;
    const int hdm = BASE_MAX(in->hd_sliding, in->hd_global);
    const int colm =
        BASE_MAX(BASE_MAX(in->d_model, in->n_head * hdm), BASE_MAX(in->d_ff, in->d_expert));
    if (!W || !W->data || W->cols > colm || ldx < W->cols || n <= 0 || n > c->max_rows)
        return BASE_ERR_INVALID;
    dg_mm(c, X, ldx, n, W, Y, (int)W->rows, false);
    return BASE_OK;
}
