/* CUDA backend: fills eng_backend_i with the kernels of kernels/ (plain C API;
 * no CUDA header is included here).
 *
 * Weights are uploaded once at init: q/k/v are concatenated into one [q+2kv, d]
 * matrix (and their biases into one vector) and gate/up into one [2*d_ff, d]
 * matrix, so a layer runs four GEMMs. The residual adds are fused into the
 * o_proj and down_proj GEMMs (beta = 1). Activations are fp32 between ops and
 * rounded to the GEMM input type (BF16 for BF16/FP8 weights) only as GEMM
 * input, so RMSNorm, RoPE, softmax and the vocabulary reductions run in fp32.
 *
 * A step uploads its inputs from pinned buffers, recomputes the window rows of
 * every layer (writing their K/V into the device cache, attending to the whole
 * cached canvas), runs the final norm and LM head on the asked rows only, and
 * reduces each logit row on the device; the 16-byte results per row come back
 * in one copy followed by the step's single synchronisation. The whole launch
 * sequence of a step is captured as a CUDA graph per shape (eng__cuda_graph_key)
 * and replayed.
 *
 * Environment: INFILLD_CUDA_FP8=1 stores the matrices as FP8 E4M3 with per-row
 * scales; INFILLD_CUDA_GRAPHS=0 runs steps without graphs (debugging);
 * INFILLD_CUDA_QDIRECT=N sets the rows up to which quantised GEMMs take the
 * direct int8 kernel (default 40; 0: always dequantise + cuBLAS).
 * Synthetic weights: when every tensor's data is NULL (bench_cuda), the
 * matrices are filled with deterministic random values on the device.
 *
 * Device loss: after a sticky CUDA error (illegal address, ECC, launch
 * failure, ...) the failing request gets ERR_DEVICE and every later call runs
 * on a CPU backend this backend creates from the same (still mapped) weights,
 * so the daemon keeps serving. INFILLD_CUDA_FAIL_AFTER=N simulates the loss at
 * the N-th step (tests). */
#define _POSIX_C_SOURCE 200809L
#include "backend_cuda.h"
#include "engine_impl.h"
#include "flag.h"
#include "kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG__CU_MOD "cuda"
#define ENG__CU_HEAD_CHUNK 256 /* LM-head rows per GEMM (bounds the logits scratch) */
#define ENG__CU_MAX_BIAS 256   /* logit-bias entries per step */
#define ENG__CU_GRAPHS 16      /* cached step graphs per context */

typedef struct eng__cu_layer {
    kcu_weight wqkv;  /* (q + 2*kv, d) */
    float *bqkv;      /* dev (q + 2*kv), NULL without q/k/v bias */
    kcu_weight wo;    /* (d, q) */
    kcu_weight wgu;   /* (2*d_ff, d): gate rows then up rows */
    kcu_weight wdown; /* (d, d_ff) */
    float *attn_norm; /* dev (d) */
    float *ffn_norm;  /* dev (d) */
} eng__cu_layer;

struct eng_backend {
    eng_model_info info;
    kcu_ctx *k;
    kcu_dtype wdt;  /* matrix storage (BF16 for the non-block tensors of a quantised file) */
    bool quant;     /* a GGUF file with block-type matrices: stored as their blocks */
    int qdirect;    /* quant: rows up to which GEMMs take the direct int8 kernel */
    char qdesc[64]; /* quant: the storage types on the device, "Q4_K+Q6_K+BF16" */
    kcu_dtype adt;  /* GEMM input type */
    eng__cu_layer *layers;
    void *embed; /* dev (vocab, d) in embed_dt */
    kcu_dtype embed_dt;
    float *norm;     /* dev (d) */
    kcu_weight head; /* (vocab, d); data == embed when tied and not FP8 */
    size_t dq_bytes; /* FP8 / quant: per-context scratch (largest dequantised part, BF16) */
    uint64_t weight_bytes;
    size_t stage_bytes; /* conversion stage size (load time only) */
    bool synthetic;
    atomic_bool lost; /* a sticky CUDA error: later calls run on the CPU fallback */
    const eng_weights *w;
    eng_load_opts opts;
    pthread_mutex_t mu; /* guards the CPU fallback's creation and desc */
    eng_backend *cpu;   /* CPU fallback after a device loss, created on first need */
    bool cpu_failed;
    atomic_int steps; /* for INFILLD_CUDA_FAIL_AFTER */
    int fail_after;
    char desc[448]; /* fits di.name (128) and qdesc (64) */
};

typedef struct eng__cu_graph {
    eng__cuda_graph_key key;
    kcu_graph *g;
    uint64_t used; /* LRU stamp */
} eng__cu_graph;

/* Pinned host staging of one step's inputs and outputs. */
typedef struct eng__cu_host {
    int32_t *tokens;    /* [R] window tokens, b * n_q + i */
    uint8_t *valid;     /* [R] whole canvas, b * len + i */
    int32_t *head_rows; /* [R] */
    uint32_t *noise_pos;
    kcu_sample_params *params;
    kcu_bias *bias;      /* [ENG__CU_MAX_BIAS] */
    kcu_row_result *res; /* [R] */
} eng__cu_host;

struct eng_bctx {
    eng_backend *be;
    eng_bctx *cpu;   /* CPU fallback context after a device loss */
    kcu_ctx *k;      /* own stream and cuBLAS handle: contexts may run on different threads */
    void *dq;        /* dev FP8 / quant scratch (be->dq_bytes), NULL without them */
    float *att_part; /* dev split-key attention partials for short windows */
    int max_batch, max_len;
    float *kc, *vc; /* dev [n_layer][max_batch][max_len][n_kv*hd] */
    float *x;       /* dev [R, d] residual stream */
    void *xn;       /* dev [R, max(d, q, d_ff)] GEMM input (adt) */
    float *qkv;     /* dev [R, q + 2*kv] */
    float *gu;      /* dev [R, 2*d_ff] */
    int32_t *tokens, *pos, *head_rows;
    uint8_t *valid;
    uint32_t *noise_pos;
    kcu_sample_params *params;
    kcu_bias *bias;
    kcu_row_result *res;
    float *hrows;  /* dev [HC, d] */
    void *hn;      /* dev [HC, d] adt */
    float *logits; /* dev [HC, vocab] */
    eng__cu_host h;
    eng__cu_graph graphs[ENG__CU_GRAPHS];
    uint64_t stamp;
    bool use_graphs;
    int full_n_seq, full_len; /* layout of the last FULL step/forward; 0 = none */
    uint8_t *full_valid;      /* host [R]: its valid mask (WINDOW steps must match) */
    const volatile int *cancel;
};

static size_t eng__cu_R(const eng_bctx *c) { return (size_t)c->max_batch * (size_t)c->max_len; }

/* Logs the kernel module's error text and maps the status for the caller. */
static base_status eng__cu_fail(eng_bctx *c, base_status st, const char *what) {
    eng_backend *be = c->be;
    BASE_LOGE(ENG__CU_MOD, "%s failed: %s (%s)", what, kcu_ctx_error(c->k), base_status_str(st));
    if (kcu_ctx_lost(c->k)) {
        atomic_store(&be->lost, true);
        BASE_LOGE(ENG__CU_MOD, "the CUDA device is lost; later requests run on the CPU");
    }
    return st;
}

/* ---- weights ----------------------------------------------------------------- */

static bool eng__cu_env_on(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* Allocates a matrix of `rows` x `cols` in be->wdt. */
static base_status eng__cu_weight_alloc(eng_backend *be, int64_t rows, int64_t cols,
                                        kcu_weight *w) {
    memset(w, 0, sizeof *w);
    w->dtype = be->wdt;
    w->rows = rows;
    w->cols = cols;
    base_status st = kcu_malloc(be->k, (size_t)rows * cols * kcu_dtype_size(be->wdt), &w->data);
    if (!st && be->wdt == KCU_FP8)
        st = kcu_malloc(be->k, (size_t)rows * sizeof(float), (void **)&w->scale);
    return st;
}

static void eng__cu_weight_free(eng_backend *be, kcu_weight *w) {
    for (int i = 0; i < w->n_parts; i++)
        if (w->part[i].data != be->embed) /* a tied head shares the embedding's blocks */
            kcu_free(be->k, w->part[i].data);
    w->n_parts = 0;
    kcu_free(be->k, w->data);
    kcu_free(be->k, w->scale);
    w->data = NULL;
    w->scale = NULL;
}

/* Copies source tensors (stacked by rows) into the matrix w. Host data goes
 * through the stage (dev, the biggest matrix in F32 plus its BF16 image,
 * allocated on first need in *stagep) when a conversion or quantisation is
 * needed. Synthetic (NULL data) fills randomly. */
static base_status eng__cu_weight_fill(eng_backend *be, kcu_weight *w, const eng_tensor *const *src,
                                       int n_src, void **stagep, uint64_t seed, eng_error *err) {
    kcu_ctx *k = be->k;
    void *stage = *stagep;
    int64_t r0 = 0;
    base_status st = BASE_OK;
    if (be->synthetic)
        n_src = 1; /* one random fill of the whole matrix */
    for (int i = 0; i < n_src && !st; i++) {
        const eng_tensor *t = src[i];
        int64_t rows = be->synthetic ? w->rows : t->rows;
        if (!be->synthetic && (t->cols != w->cols || r0 + rows > w->rows))
            return eng__err(err, BASE_ERR_MODEL, "%s: shape (%lld, %lld) does not fit (%lld, %lld)",
                            t->name ? t->name : "tensor", (long long)t->rows, (long long)t->cols,
                            (long long)w->rows, (long long)w->cols);
        size_t n = (size_t)rows * w->cols;
        if (be->wdt != KCU_FP8) {
            char *dst = (char *)w->data + (size_t)r0 * w->cols * kcu_dtype_size(be->wdt);
            if (be->synthetic) {
                st = kcu_fill_random(k, dst, be->wdt, n, 0.03f, seed + (uint64_t)i);
            } else if ((int)t->dtype == (int)be->wdt) {
                st = kcu_upload(k, dst, t->data, n * kcu_dtype_size(be->wdt));
            } else {
                if (!stage && !(st = kcu_malloc(k, be->stage_bytes, stagep)))
                    stage = *stagep;
                if (st)
                    break;
                st = kcu_upload(k, stage, t->data, n * kcu_dtype_size((kcu_dtype)t->dtype));
                if (!st)
                    st = kcu_convert(k, stage, (kcu_dtype)t->dtype, dst, be->wdt, n);
            }
        }
        r0 += rows;
    }
    if (st)
        return st;
    if (r0 != w->rows)
        return eng__err(err, BASE_ERR_MODEL, "%s: %lld rows where %lld are needed",
                        src[0]->name ? src[0]->name : "tensor", (long long)r0, (long long)w->rows);
    if (be->wdt == KCU_FP8) {
        /* Stack the sources in BF16 in the stage, then quantise per row. */
        if (!stage && (st = kcu_malloc(k, be->stage_bytes, stagep)))
            return st;
        stage = *stagep;
        r0 = 0;
        for (int i = 0; i < n_src && !st; i++) {
            const eng_tensor *t = src[i];
            int64_t rows = be->synthetic ? w->rows : t->rows;
            size_t n = (size_t)rows * w->cols;
            char *dst = (char *)stage + (size_t)r0 * w->cols * 2;
            if (be->synthetic) {
                st = kcu_fill_random(k, dst, KCU_BF16, n, 0.03f, seed + (uint64_t)i);
            } else if (t->dtype == ENG_BF16) {
                st = kcu_upload(k, dst, t->data, n * 2);
            } else {
                /* Convert through the tail of the stage: the BF16 image of the
                 * remaining rows never reaches it while this tensor is read. */
                size_t tail_off = (size_t)w->rows * w->cols * 2;
                char *tmp = (char *)stage + tail_off;
                st = kcu_upload(k, tmp, t->data, n * kcu_dtype_size((kcu_dtype)t->dtype));
                if (!st)
                    st = kcu_convert(k, tmp, (kcu_dtype)t->dtype, dst, KCU_BF16, n);
            }
            r0 += rows;
        }
        if (!st)
            st = kcu_quantize_fp8(k, stage, KCU_BF16, w->rows, w->cols, w);
        if (!st)
            st = kcu_sync(k);
    }
    return st;
}

/* ---- quantised files: matrices as their GGUF blocks ---------------------------- */

/* Device storage type of a tensor of a quantised file: its block type, else
 * BF16 (a tensor llama.cpp left in F16/F32 because its width is not a whole
 * number of blocks). */
static kcu_dtype eng__cu_qstore(eng_dtype t) {
    return eng__dtype_is_block(t) ? kcu_dtype_of_eng((int)t) : KCU_BF16;
}

static const char *eng__cu_qname(kcu_dtype t) {
    static const char *const n[] = {"F32",  "F16",  "BF16", "FP8", "Q8_0",
                                    "Q4_0", "Q4_K", "Q5_K", "Q6_K"};
    return (unsigned)t < BASE_ARRAY_LEN(n) ? n[t] : "?";
}

/* Builds the stacked matrix w (rows = sum of rows[i], cols) from n_src tensors:
 * consecutive sources of one storage type become one part (their blocks are
 * contiguous rows), block sources are uploaded as they are, the others are
 * converted to BF16 through the stage. Synthetic: random blocks / values. */
static base_status eng__cu_qweight(eng_backend *be, kcu_weight *w, const eng_tensor *const *src,
                                   const int64_t *rows, int n_src, int64_t cols, void **stagep,
                                   uint64_t seed, eng_error *err) {
    kcu_ctx *k = be->k;
    memset(w, 0, sizeof *w);
    w->cols = cols;
    for (int i = 0; i < n_src; i++) {
        const eng_tensor *t = src[i];
        const char *name = t->name ? t->name : "tensor";
        if (!be->synthetic && (t->rows != rows[i] || t->cols != cols || !t->data))
            return eng__err(
                err, BASE_ERR_MODEL, "cuda: %s: shape (%lld, %lld) where (%lld, %lld) is needed",
                name, (long long)t->rows, (long long)t->cols, (long long)rows[i], (long long)cols);
        const kcu_dtype st = eng__cu_qstore(t->dtype);
        if (kcu_row_bytes(st, cols) == 0)
            return eng__err(err, BASE_ERR_MODEL, "cuda: %s: %lld columns are not whole %s blocks",
                            name, (long long)cols, eng__cu_qname(st));
        if (w->n_parts == 0 || w->part[w->n_parts - 1].dtype != st) {
            if (w->n_parts == KCU_MAX_PARTS)
                return eng__err(err, BASE_ERR_MODEL, "cuda: %s: too many storage types", name);
            w->part[w->n_parts].dtype = st;
            w->n_parts++;
        }
        w->part[w->n_parts - 1].rows += rows[i];
        w->rows += rows[i];
    }
    w->dtype = w->part[0].dtype;
    for (int p = 0; p < w->n_parts; p++) {
        size_t bytes = (size_t)w->part[p].rows * kcu_row_bytes(w->part[p].dtype, cols);
        base_status st = kcu_malloc(k, bytes, &w->part[p].data);
        if (st)
            return st;
        be->weight_bytes += bytes;
    }
    /* fill, source by source */
    int p = 0;
    int64_t prow = 0; /* rows of part p filled so far */
    for (int i = 0; i < n_src; i++) {
        const eng_tensor *t = src[i];
        const kcu_dtype st = eng__cu_qstore(t->dtype);
        if (prow == w->part[p].rows)
            p++, prow = 0;
        const size_t rb = kcu_row_bytes(st, cols), n = (size_t)rows[i] * (size_t)cols;
        char *dst = (char *)w->part[p].data + (size_t)prow * rb;
        base_status s2;
        if (be->synthetic) {
            s2 = kcu_dtype_is_block(st) ? kcu_fill_random_blocks(k, dst, st, n, seed + (uint64_t)i)
                                        : kcu_fill_random(k, dst, st, n, 0.03f, seed + (uint64_t)i);
        } else if (kcu_dtype_is_block(st) || t->dtype == ENG_BF16) {
            s2 = kcu_upload(k, dst, t->data, (size_t)rows[i] * rb);
        } else {
            if (!*stagep && (s2 = kcu_malloc(k, be->stage_bytes, stagep)))
                return s2;
            const kcu_dtype sd = kcu_dtype_of_eng((int)t->dtype);
            s2 = kcu_upload(k, *stagep, t->data, n * kcu_dtype_size(sd));
            if (!s2)
                s2 = kcu_convert(k, *stagep, sd, dst, KCU_BF16, n);
            if (!s2) /* the stage is reused by the next source */
                s2 = kcu_sync(k);
        }
        if (s2)
            return s2;
        prow += rows[i];
    }
    return BASE_OK;
}

/* Device bytes of the quantised weights (matrices in their storage types,
 * embedding in its stored type, head unless it shares the embedding, norms
 * and biases in f32), from the dimensions and the tensors' types. */
static uint64_t eng__cu_qbytes(const eng_model_info *I, const eng_weights *w, bool synthetic) {
    const int64_t d = I->d_model, hd = I->head_dim, q = (int64_t)I->n_head * hd;
    const int64_t kv = (int64_t)I->n_kv_head * hd, ff = I->d_ff, V = I->vocab_size;
    uint64_t total = 0;
#define ENG__QB(t, r, c) ((uint64_t)(r)*kcu_row_bytes(eng__cu_qstore((t).dtype), (c)))
    for (int l = 0; l < I->n_layer; l++) {
        const eng_layer_w *L = &w->layers[l];
        total += ENG__QB(L->wq, q, d) + ENG__QB(L->wk, kv, d) + ENG__QB(L->wv, kv, d) +
                 ENG__QB(L->wo, d, q) + ENG__QB(L->w_gate, ff, d) + ENG__QB(L->w_up, ff, d) +
                 ENG__QB(L->w_down, d, ff);
        total += (uint64_t)(2 * d + (I->qkv_bias ? q + 2 * kv : 0)) * 4;
    }
    const kcu_dtype et = eng__dtype_is_block(w->embed.dtype) || synthetic
                             ? eng__cu_qstore(w->embed.dtype)
                             : kcu_dtype_of_eng((int)w->embed.dtype);
    total += (uint64_t)V * kcu_row_bytes(et, d) + (uint64_t)d * 4;
    bool tied = synthetic ? I->tied_head : w->lm_head.data == w->embed.data;
    if (!tied || !(kcu_dtype_is_block(et) || et == KCU_BF16))
        total += ENG__QB(tied ? w->embed : w->lm_head, V, d);
#undef ENG__QB
    return total;
}

/* Whether any matrix or the embedding of w is a block type. */
static bool eng__cu_has_blocks(const eng_model_info *I, const eng_weights *w) {
    bool b = eng__dtype_is_block(w->embed.dtype) || eng__dtype_is_block(w->lm_head.dtype);
    for (int l = 0; l < I->n_layer && !b; l++) {
        const eng_layer_w *L = &w->layers[l];
        const eng_tensor *m[] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->w_gate, &L->w_up, &L->w_down};
        for (size_t i = 0; i < BASE_ARRAY_LEN(m); i++)
            b = b || eng__dtype_is_block(m[i]->dtype);
    }
    return b;
}

/* "Q4_K+Q6_K+BF16": the storage types of the device matrices and embedding. */
static void eng__cu_qsummary(eng_backend *be) {
    bool seen[KCU_Q6_K + 1] = {0};
    seen[be->embed_dt] = true;
    for (int l = 0; l < be->info.n_layer; l++) {
        const kcu_weight *m[] = {&be->layers[l].wqkv, &be->layers[l].wo, &be->layers[l].wgu,
                                 &be->layers[l].wdown};
        for (size_t i = 0; i < BASE_ARRAY_LEN(m); i++)
            for (int p = 0; p < m[i]->n_parts; p++)
                seen[m[i]->part[p].dtype] = true;
    }
    for (int p = 0; p < be->head.n_parts; p++)
        seen[be->head.part[p].dtype] = true;
    char *o = be->qdesc;
    size_t left = sizeof be->qdesc;
    o[0] = '\0';
    for (int t = KCU_Q6_K; t >= 0; t--)
        if (seen[t]) {
            int n = snprintf(o, left, "%s%s", o == be->qdesc ? "" : "+", eng__cu_qname(t));
            if (n < 0 || (size_t)n >= left)
                break;
            o += n, left -= (size_t)n;
        }
}

/* Uploads a 1-D tensor (or n zeros/ones when synthetic) as f32. */
static base_status eng__cu_vec_f32(eng_backend *be, const eng_tensor *const *src, int n_src,
                                   int64_t n, float fill, float **out) {
    *out = NULL;
    float *h = malloc((size_t)n * sizeof(float));
    if (!h)
        return BASE_ERR_NOMEM;
    int64_t o = 0;
    if (be->synthetic)
        n_src = 1;
    for (int i = 0; i < n_src; i++) {
        int64_t m = be->synthetic ? n : src[i]->cols * src[i]->rows;
        if (o + m > n) {
            free(h);
            return BASE_ERR_MODEL;
        }
        if (be->synthetic || !src[i]->data) {
            for (int64_t j = 0; j < m; j++)
                h[o + j] = fill;
        } else {
            eng__tensor_row_f32(src[i], 0, 0, m, h + o);
        }
        o += m;
    }
    base_status st = kcu_malloc(be->k, (size_t)n * sizeof(float), (void **)out);
    if (!st)
        st = kcu_upload(be->k, *out, h, (size_t)n * sizeof(float));
    free(h);
    return st;
}

static void eng__cu_free(eng_backend *be);

static base_status eng__cu_upload_all(eng_backend *be, const eng_weights *w, eng_error *err) {
    const eng_model_info *I = &be->info;
    const int64_t d = I->d_model, hd = I->head_dim, q = (int64_t)I->n_head * hd;
    const int64_t kv = (int64_t)I->n_kv_head * hd, ff = I->d_ff, V = I->vocab_size;
    kcu_ctx *k = be->k;
    base_status st;

    /* Stage: the largest matrix in F32 (conversions) plus its BF16 image (FP8). */
    int64_t big = (q + 2 * kv) * d;
    if (2 * ff * d > big)
        big = 2 * ff * d;
    if (V * d > big)
        big = V * d;
    be->stage_bytes = (size_t)big * 4 + (size_t)big * 2;
    void *stage = NULL;
    /* FP8 GEMMs of more than 16 rows dequantise into a per-context scratch. */
    be->dq_bytes = be->wdt == KCU_FP8 ? (size_t)big * 2 : 0;

    be->layers = calloc((size_t)I->n_layer, sizeof *be->layers);
    if (!be->layers) {
        st = BASE_ERR_NOMEM;
        goto fail;
    }
    for (int l = 0; l < I->n_layer; l++) {
        const eng_layer_w *lw = &w->layers[l];
        eng__cu_layer *L = &be->layers[l];
        uint64_t seed = 0x1000u * (uint64_t)(l + 1);
        const eng_tensor *qkv[3] = {&lw->wq, &lw->wk, &lw->wv};
        const eng_tensor *gu[2] = {&lw->w_gate, &lw->w_up};
        const eng_tensor *o1[1] = {&lw->wo}, *dn[1] = {&lw->w_down};
        if (be->quant) {
            const int64_t rq[3] = {q, kv, kv}, rgu[2] = {ff, ff}, rd[1] = {d};
            if ((st = eng__cu_qweight(be, &L->wqkv, qkv, rq, 3, d, &stage, seed + 1, err)) ||
                (st = eng__cu_qweight(be, &L->wo, o1, rd, 1, q, &stage, seed + 2, err)) ||
                (st = eng__cu_qweight(be, &L->wgu, gu, rgu, 2, d, &stage, seed + 3, err)) ||
                (st = eng__cu_qweight(be, &L->wdown, dn, rd, 1, ff, &stage, seed + 4, err)))
                goto fail;
        } else if ((st = eng__cu_weight_alloc(be, q + 2 * kv, d, &L->wqkv)) ||
                   (st = eng__cu_weight_fill(be, &L->wqkv, qkv, 3, &stage, seed + 1, err)) ||
                   (st = eng__cu_weight_alloc(be, d, q, &L->wo)) ||
                   (st = eng__cu_weight_fill(be, &L->wo, o1, 1, &stage, seed + 2, err)) ||
                   (st = eng__cu_weight_alloc(be, 2 * ff, d, &L->wgu)) ||
                   (st = eng__cu_weight_fill(be, &L->wgu, gu, 2, &stage, seed + 3, err)) ||
                   (st = eng__cu_weight_alloc(be, d, ff, &L->wdown)) ||
                   (st = eng__cu_weight_fill(be, &L->wdown, dn, 1, &stage, seed + 4, err)))
            goto fail;
        const eng_tensor *an[1] = {&lw->attn_norm}, *fn[1] = {&lw->ffn_norm};
        if ((st = eng__cu_vec_f32(be, an, 1, d, 1.0f, &L->attn_norm)) ||
            (st = eng__cu_vec_f32(be, fn, 1, d, 1.0f, &L->ffn_norm)))
            goto fail;
        if (I->qkv_bias) {
            const eng_tensor *b3[3] = {&lw->bq, &lw->bk, &lw->bv};
            if (!be->synthetic && (!lw->bq.data || !lw->bk.data || !lw->bv.data)) {
                st = eng__err(err, BASE_ERR_MODEL, "cuda: layer %d: q/k/v bias missing", l);
                goto fail;
            }
            if ((st = eng__cu_vec_f32(be, b3, 3, q + 2 * kv, 0.0f, &L->bqkv)))
                goto fail;
        }
    }
    const eng_tensor *nm[1] = {&w->norm};
    if ((st = eng__cu_vec_f32(be, nm, 1, d, 1.0f, &be->norm)))
        goto fail;

    /* Embedding: kept in its stored type (F32/F16/BF16, or its blocks in a
     * quantised file, decoded row by row) for the gather. */
    if (be->quant)
        be->embed_dt =
            be->synthetic ? eng__cu_qstore(w->embed.dtype) : kcu_dtype_of_eng((int)w->embed.dtype);
    else
        be->embed_dt =
            be->synthetic ? (be->wdt == KCU_F32 ? KCU_F32 : KCU_BF16) : (kcu_dtype)w->embed.dtype;
    size_t emb_bytes = (size_t)V * kcu_row_bytes(be->embed_dt, d);
    if (emb_bytes == 0) {
        st = eng__err(err, BASE_ERR_MODEL, "cuda: embedding rows of %lld are not whole blocks",
                      (long long)d);
        goto fail;
    }
    if ((st = kcu_malloc(k, emb_bytes, &be->embed)))
        goto fail;
    if (be->quant)
        be->weight_bytes += emb_bytes;
    if (be->synthetic && kcu_dtype_is_block(be->embed_dt))
        st = kcu_fill_random_blocks(k, be->embed, be->embed_dt, (size_t)V * d, 0x5eedu);
    else if (be->synthetic)
        st = kcu_fill_random(k, be->embed, be->embed_dt, (size_t)V * d, 0.03f, 0x5eedu);
    else if (w->embed.rows != V || w->embed.cols != d)
        st = eng__err(err, BASE_ERR_MODEL, "cuda: embedding shape mismatch");
    else
        st = kcu_upload(k, be->embed, w->embed.data, emb_bytes);
    if (st)
        goto fail;

    /* LM head: shares the embedding when tied and the types agree. */
    bool tied = be->synthetic ? I->tied_head : (w->lm_head.data == w->embed.data);
    if (be->quant) {
        if (tied && (kcu_dtype_is_block(be->embed_dt) || be->embed_dt == KCU_BF16)) {
            memset(&be->head, 0, sizeof be->head);
            be->head.dtype = be->embed_dt;
            be->head.rows = V;
            be->head.cols = d;
            be->head.n_parts = 1;
            be->head.part[0] = (kcu_part){be->embed_dt, V, be->embed};
        } else {
            const eng_tensor *hs[1] = {tied ? &w->embed : &w->lm_head};
            const int64_t rv[1] = {V};
            if ((st = eng__cu_qweight(be, &be->head, hs, rv, 1, d, &stage, tied ? 0x5eedu : 0x4eadu,
                                      err)))
                goto fail;
        }
        /* scratch: the largest dequantised block part, or the int8 x blocks */
        be->dq_bytes = kcu_gemm_scratch_bytes(&be->head);
        for (int l = 0; l < I->n_layer; l++) {
            const kcu_weight *m[] = {&be->layers[l].wqkv, &be->layers[l].wo, &be->layers[l].wgu,
                                     &be->layers[l].wdown};
            for (size_t i = 0; i < BASE_ARRAY_LEN(m); i++) {
                size_t b = kcu_gemm_scratch_bytes(m[i]);
                be->dq_bytes = b > be->dq_bytes ? b : be->dq_bytes;
            }
        }
        be->weight_bytes +=
            (uint64_t)I->n_layer * (2 * d + (I->qkv_bias ? q + 2 * kv : 0)) * 4 + (uint64_t)d * 4;
    } else if (tied && be->wdt != KCU_FP8 && be->embed_dt == be->wdt) {
        be->head.dtype = be->wdt;
        be->head.rows = V;
        be->head.cols = d;
        be->head.data = be->embed;
    } else {
        const eng_tensor *hs[1] = {tied ? &w->embed : &w->lm_head};
        if ((st = eng__cu_weight_alloc(be, V, d, &be->head)) ||
            (st = eng__cu_weight_fill(be, &be->head, hs, 1, &stage, tied ? 0x5eedu : 0x4eadu, err)))
            goto fail;
    }
    if ((st = kcu_sync(k)))
        goto fail;
    kcu_free(k, stage);
    return BASE_OK;
fail:
    kcu_free(k, stage);
    if (!err->status)
        eng__err(err, st, "cuda: uploading weights: %s", kcu_ctx_error(k));
    return err->status;
}

/* Why kcu_device_query failed, in words for a user. Without a driver the CUDA
 * runtime says "driver version is insufficient", which sends people to upgrade
 * a driver they do not have; cudaDriverGetVersion reports 0 then. */
static const char *eng__cu_why(const kcu_device_info *di, const char *msg) {
    if (di->driver_version == 0)
        return "no NVIDIA driver found (libcuda.so.1 is not installed)";
    return msg[0] ? msg : "no usable CUDA device";
}

static eng_backend *eng__cu_init(const eng_weights *w, const eng_load_opts *opts, eng_error *err) {
    (void)opts;
    kcu_device_info di;
    char msg[256] = "";
    if (kcu_device_query(&di, msg, sizeof msg) != BASE_OK) {
        eng__err(err, BASE_ERR_DEVICE, "cuda: %s", eng__cu_why(&di, msg));
        return NULL;
    }
    const eng_model_info *I = w->info;
    if (I->head_dim > 128 || I->head_dim % 2 || I->n_kv_head <= 0 || I->n_head % I->n_kv_head) {
        eng__err(err, BASE_ERR_UNSUPPORTED, "cuda: head_dim %d / heads %d/%d not supported",
                 I->head_dim, I->n_head, I->n_kv_head);
        return NULL;
    }
    eng_backend *be = calloc(1, sizeof *be);
    if (!be) {
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    be->info = *I;
    be->w = w;
    if (opts)
        be->opts = *opts;
    else
        eng_load_opts_default(&be->opts);
    pthread_mutex_init(&be->mu, NULL);
    atomic_init(&be->lost, false);
    atomic_init(&be->steps, 0);
    const char *fa = getenv("INFILLD_CUDA_FAIL_AFTER");
    be->fail_after = fa ? atoi(fa) : 0;
    be->synthetic = w->embed.data == NULL;
    eng_dtype src = I->dtype;
    /* A quantised file keeps its blocks (the rest in BF16); FP8 does not apply. */
    be->quant = eng__cu_has_blocks(I, w);
    /* INFILLD_CUDA_QDIRECT=N: the direct int8 kernel up to N rows (0: always
     * dequantise + cuBLAS), to find the crossover on a given GPU. */
    const char *qd = getenv("INFILLD_CUDA_QDIRECT");
    be->qdirect = qd && *qd ? atoi(qd) : KCU_Q_MAXN;
    if (be->qdirect < 0)
        be->qdirect = 0;
    if (be->quant)
        be->wdt = KCU_BF16;
    else if (eng__cu_env_on("INFILLD_CUDA_FP8"))
        be->wdt = KCU_FP8;
    else
        be->wdt = (kcu_dtype)src;
    be->adt = kcu_act_dtype(be->wdt);

    /* Budget: weights + a small context + 512 MiB for cuBLAS and the runtime. */
    uint64_t need = (be->quant ? eng__cu_qbytes(I, w, be->synthetic)
                               : eng__cuda_weight_bytes(I, (int)be->wdt)) +
                    eng__cuda_ctx_bytes(I, 1, 256, ENG__CU_HEAD_CHUNK) + (512ull << 20);
    if (be->wdt == KCU_FP8 || be->quant) /* dequantisation scratch, about the LM head in BF16 */
        need += (uint64_t)I->vocab_size * (uint64_t)I->d_model * 2;
    if (need > di.free_bytes) {
        eng__err(err, BASE_ERR_NOMEM,
                 "cuda: the model needs %.2f GiB of device memory, %.2f GiB free on %s",
                 (double)need / 1073741824.0, (double)di.free_bytes / 1073741824.0, di.name);
        free(be);
        return NULL;
    }
    be->k = kcu_ctx_new(0, msg, sizeof msg);
    if (!be->k) {
        eng__err(err, BASE_ERR_DEVICE, "cuda: %s", msg);
        free(be);
        return NULL;
    }
    if (eng__cu_upload_all(be, w, err)) {
        eng__cu_free(be);
        return NULL;
    }
    static const char *const dtn[] = {"F32", "F16", "BF16", "FP8-E4M3"};
    if (be->quant) {
        /* weight_bytes was counted while uploading */
        eng__cu_qsummary(be);
        snprintf(be->desc, sizeof be->desc,
                 "cuda (%s, sm_%d%d, %.1f GiB, GGUF blocks %s on the device: int8 dp4a for <= %d "
                 "rows, BF16 dequant + cuBLAS above%s)",
                 di.name, di.major, di.minor, (double)di.total_bytes / 1073741824.0, be->qdesc,
                 be->qdirect, be->synthetic ? ", synthetic" : "");
    } else {
        be->weight_bytes = eng__cuda_weight_bytes(I, (int)be->wdt);
        snprintf(be->desc, sizeof be->desc, "cuda (%s, sm_%d%d, %.1f GiB, %s weights%s)", di.name,
                 di.major, di.minor, (double)di.total_bytes / 1073741824.0, dtn[be->wdt],
                 be->synthetic ? ", synthetic" : "");
    }
    BASE_LOGI(ENG__CU_MOD, "%s: %.2f GiB of weights on the device", be->desc,
              (double)be->weight_bytes / 1073741824.0);
    return be;
}

static void eng__cu_free(eng_backend *be) {
    if (!be)
        return;
    if (be->layers) {
        for (int l = 0; l < be->info.n_layer; l++) {
            eng__cu_layer *L = &be->layers[l];
            eng__cu_weight_free(be, &L->wqkv);
            eng__cu_weight_free(be, &L->wo);
            eng__cu_weight_free(be, &L->wgu);
            eng__cu_weight_free(be, &L->wdown);
            kcu_free(be->k, L->bqkv);
            kcu_free(be->k, L->attn_norm);
            kcu_free(be->k, L->ffn_norm);
        }
        free(be->layers);
    }
    if (be->head.data != be->embed)
        eng__cu_weight_free(be, &be->head);
    kcu_free(be->k, be->embed);
    kcu_free(be->k, be->norm);
    kcu_ctx_free(be->k);
    if (be->cpu)
        eng_backend_cpu.free(be->cpu);
    pthread_mutex_destroy(&be->mu);
    free(be);
}

static const char *eng__cu_desc(eng_backend *be) { return be->desc; }

/* The context's CPU fallback after a device loss, creating the CPU backend on
 * first need (from the weights the engine keeps mapped). NULL if that fails. */
static eng_bctx *eng__cu_cpu_ctx(eng_bctx *c) {
    eng_backend *be = c->be;
    if (c->cpu)
        return c->cpu;
    pthread_mutex_lock(&be->mu);
    if (!be->cpu && !be->cpu_failed) {
        eng_error err = {0};
        be->cpu = be->synthetic ? NULL : eng_backend_cpu.init(be->w, &be->opts, &err);
        if (!be->cpu) {
            be->cpu_failed = true;
            BASE_LOGE(ENG__CU_MOD, "no CPU fallback after the device loss: %s",
                      be->synthetic ? "synthetic weights" : err.msg);
        } else {
            char d[sizeof be->desc];
            snprintf(d, sizeof d, "cuda device lost; running on %s",
                     eng_backend_cpu.device_desc(be->cpu));
            memcpy(be->desc, d, sizeof d);
            BASE_LOGW(ENG__CU_MOD, "%s", d);
        }
    }
    eng_backend *cpu = be->cpu;
    pthread_mutex_unlock(&be->mu);
    if (!cpu)
        return NULL;
    eng_error err = {0};
    c->cpu = eng_backend_cpu.ctx_new(cpu, c->max_batch, c->max_len, &err);
    if (!c->cpu)
        BASE_LOGE(ENG__CU_MOD, "CPU fallback context: %s", err.msg);
    else if (c->cancel && eng_backend_cpu.set_cancel)
        eng_backend_cpu.set_cancel(c->cpu, c->cancel);
    return c->cpu;
}

/* ---- context --------------------------------------------------------------------- */

static void eng__cu_ctx_free(eng_bctx *c);

/* Largest split-key attention scratch (floats) any window of the context needs:
 * splits grow with the canvas length and only windows of up to 64 rows split. */
static size_t eng__cu_att_scratch(const eng_backend *be, int max_batch, int max_len) {
    const eng_model_info *I = &be->info;
    size_t best = 0;
    for (int n_q = 1; n_q <= 64 && n_q <= max_len; n_q *= 2) {
        kcu_attn_shape s = {max_batch, max_len,      max_len,    0, n_q == 64 ? 64 : n_q,
                            I->n_head, I->n_kv_head, I->head_dim};
        size_t f = kcu_attention_scratch(&s);
        best = f > best ? f : best;
    }
    kcu_attn_shape s = {max_batch, max_len,      max_len,    0, max_len < 64 ? max_len : 64,
                        I->n_head, I->n_kv_head, I->head_dim};
    size_t f = kcu_attention_scratch(&s);
    return f > best ? f : best;
}

static eng_bctx *eng__cu_ctx_new(eng_backend *be, int max_batch, int max_len, eng_error *err) {
    if (atomic_load(&be->lost)) { /* a shell around a CPU context */
        eng_bctx *c = calloc(1, sizeof *c);
        if (!c) {
            eng__err(err, BASE_ERR_NOMEM, "out of memory");
            return NULL;
        }
        c->be = be;
        c->max_batch = max_batch;
        c->max_len = max_len;
        if (!eng__cu_cpu_ctx(c)) {
            free(c);
            eng__err(err, BASE_ERR_DEVICE, "cuda: the device was lost and the CPU fallback failed");
            return NULL;
        }
        return c;
    }
    const eng_model_info *I = &be->info;
    kcu_device_info di;
    char msg[256];
    uint64_t need = eng__cuda_ctx_bytes(I, max_batch, max_len, ENG__CU_HEAD_CHUNK);
    if (kcu_device_query(&di, msg, sizeof msg) == BASE_OK && need > di.free_bytes) {
        eng__err(err, BASE_ERR_NOMEM,
                 "cuda: a %d x %d context needs %.2f GiB of device memory, %.2f GiB free",
                 max_batch, max_len, (double)need / 1073741824.0,
                 (double)di.free_bytes / 1073741824.0);
        return NULL;
    }
    eng_bctx *c = calloc(1, sizeof *c);
    if (!c) {
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    c->be = be;
    c->max_batch = max_batch;
    c->max_len = max_len;
    c->k = kcu_ctx_new(0, msg, sizeof msg);
    if (!c->k) {
        eng__err(err, BASE_ERR_DEVICE, "cuda: context stream: %s", msg);
        free(c);
        return NULL;
    }
    c->use_graphs = !getenv("INFILLD_CUDA_GRAPHS") || eng__cu_env_on("INFILLD_CUDA_GRAPHS");
    kcu_ctx_set_qdirect(c->k, be->qdirect);
    const size_t R = eng__cu_R(c);
    const size_t d = (size_t)I->d_model, hd = (size_t)I->head_dim;
    const size_t q = (size_t)I->n_head * hd, kv = (size_t)I->n_kv_head * hd;
    const size_t ff = (size_t)I->d_ff, V = (size_t)I->vocab_size, HC = ENG__CU_HEAD_CHUNK;
    size_t wide = d > q ? d : q;
    if (ff > wide)
        wide = ff;
    const size_t as = kcu_dtype_size(be->adt);
    kcu_ctx *k = c->k;
    base_status st;
    if ((st = kcu_malloc(k, (size_t)I->n_layer * R * kv * 4, (void **)&c->kc)) ||
        (st = kcu_malloc(k, (size_t)I->n_layer * R * kv * 4, (void **)&c->vc)) ||
        (st = kcu_memset(k, c->kc, 0, (size_t)I->n_layer * R * kv * 4)) ||
        (st = kcu_memset(k, c->vc, 0, (size_t)I->n_layer * R * kv * 4)) ||
        (st = kcu_malloc(k, R * d * 4, (void **)&c->x)) ||
        (st = kcu_malloc(k, R * wide * as, &c->xn)) ||
        (st = kcu_malloc(k, R * (q + 2 * kv) * 4, (void **)&c->qkv)) ||
        (st = kcu_malloc(k, R * 2 * ff * 4, (void **)&c->gu)) ||
        (st = kcu_malloc(k, R * 4, (void **)&c->tokens)) ||
        (st = kcu_malloc(k, R * 4, (void **)&c->pos)) ||
        (st = kcu_malloc(k, R * 4, (void **)&c->head_rows)) ||
        (st = kcu_malloc(k, R, (void **)&c->valid)) ||
        (st = kcu_malloc(k, R * 4, (void **)&c->noise_pos)) ||
        (st = kcu_malloc(k, sizeof(kcu_sample_params), (void **)&c->params)) ||
        (st = kcu_malloc(k, ENG__CU_MAX_BIAS * sizeof(kcu_bias), (void **)&c->bias)) ||
        (st = kcu_malloc(k, R * sizeof(kcu_row_result), (void **)&c->res)) ||
        (st = kcu_malloc(k, HC * d * 4, (void **)&c->hrows)) ||
        (st = kcu_malloc(k, HC * d * as, &c->hn)) ||
        (st = kcu_malloc(k, HC * V * 4, (void **)&c->logits)) ||
        (be->dq_bytes && (st = kcu_malloc(k, be->dq_bytes, &c->dq))) ||
        (st = kcu_malloc(k, eng__cu_att_scratch(be, max_batch, max_len) * 4,
                         (void **)&c->att_part)) ||
        (st = kcu_host_alloc(k, R * 4, (void **)&c->h.tokens)) ||
        (st = kcu_host_alloc(k, R, (void **)&c->h.valid)) ||
        (st = kcu_host_alloc(k, R * 4, (void **)&c->h.head_rows)) ||
        (st = kcu_host_alloc(k, R * 4, (void **)&c->h.noise_pos)) ||
        (st = kcu_host_alloc(k, sizeof(kcu_sample_params), (void **)&c->h.params)) ||
        (st = kcu_host_alloc(k, ENG__CU_MAX_BIAS * sizeof(kcu_bias), (void **)&c->h.bias)) ||
        (st = kcu_host_alloc(k, R * sizeof(kcu_row_result), (void **)&c->h.res)) ||
        (!(c->full_valid = malloc(R)) && (st = BASE_ERR_NOMEM)) || (st = kcu_sync(k))) {
        eng__err(err, st, "cuda: context of %d x %d: %s", max_batch, max_len, kcu_ctx_error(k));
        eng__cu_ctx_free(c);
        return NULL;
    }
    return c;
}

static void eng__cu_ctx_free(eng_bctx *c) {
    if (!c)
        return;
    kcu_ctx *k = c->k;
    for (int i = 0; i < ENG__CU_GRAPHS; i++)
        kcu_graph_free(c->graphs[i].g);
    void *dev[] = {c->kc,    c->vc,        c->x,      c->xn,        c->qkv,     c->gu,   c->tokens,
                   c->pos,   c->head_rows, c->valid,  c->noise_pos, c->params,  c->bias, c->res,
                   c->hrows, c->hn,        c->logits, c->dq,        c->att_part};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        kcu_free(k, dev[i]);
    void *pin[] = {c->h.tokens, c->h.valid, c->h.head_rows, c->h.noise_pos,
                   c->h.params, c->h.bias,  c->h.res};
    for (size_t i = 0; i < sizeof pin / sizeof pin[0]; i++)
        kcu_host_free(k, pin[i]);
    free(c->full_valid);
    kcu_ctx_free(k);
    if (c->cpu)
        eng_backend_cpu.ctx_free(c->cpu);
    free(c);
}

static void eng__cu_set_cancel(eng_bctx *c, const volatile int *flag) {
    c->cancel = flag;
    if (c->cpu && eng_backend_cpu.set_cancel)
        eng_backend_cpu.set_cancel(c->cpu, flag);
}

static bool eng__cu_cancelled(const eng_bctx *c) { return base_flag_get(c->cancel) != 0; }

/* ---- the layer program ------------------------------------------------------------- */

/* Fills the pinned inputs for a window of the batch. */
static void eng__cu_pack(eng_bctx *c, const eng_batch *batch, int win_start, int n_q) {
    const int len = batch->len;
    for (int b = 0; b < batch->n_seq; b++) {
        memcpy(c->h.tokens + (size_t)b * n_q, batch->tokens + (size_t)b * len + win_start,
               (size_t)n_q * sizeof(int32_t));
        if (batch->valid)
            memcpy(c->h.valid + (size_t)b * len, batch->valid + (size_t)b * len, (size_t)len);
        else
            memset(c->h.valid + (size_t)b * len, 1, (size_t)len);
    }
}

/* Issues the uploads and every layer for the window rows. With `check_cancel`
 * (eager runs only) stops between layers when the flag is set. */
static base_status eng__cu_layers(eng_bctx *c, int n_seq, int len, int win_start, int n_q,
                                  bool check_cancel) {
    eng_backend *be = c->be;
    const eng_model_info *I = &be->info;
    kcu_ctx *k = c->k;
    const int d = I->d_model, hd = I->head_dim, q = I->n_head * hd, kv = I->n_kv_head * hd;
    const int qkvw = q + 2 * kv, ff = I->d_ff;
    const int rows = n_seq * n_q;
    const size_t cache_layer = eng__cu_R(c) * (size_t)kv;
    base_status st;
    if ((st = kcu_upload_async(k, c->tokens, c->h.tokens, (size_t)rows * 4)) ||
        (st = kcu_upload_async(k, c->valid, c->h.valid, (size_t)n_seq * len)) ||
        (st = kcu_positions(k, c->valid, n_seq, len, win_start, n_q, c->pos)) ||
        (st = kcu_embed(k, be->embed, be->embed_dt, I->vocab_size, d, c->tokens, rows, c->x)))
        return st;
    kcu_attn_shape s = {n_seq, len, c->max_len, win_start, n_q, I->n_head, I->n_kv_head, hd};
    for (int l = 0; l < I->n_layer; l++) {
        if (check_cancel && eng__cu_cancelled(c))
            return BASE_ERR_CANCELLED;
        eng__cu_layer *L = &be->layers[l];
        float *kc = c->kc + (size_t)l * cache_layer, *vc = c->vc + (size_t)l * cache_layer;
        if ((st = kcu_rmsnorm(k, c->x, L->attn_norm, rows, d, I->rms_eps, c->xn, be->adt)) ||
            (st = kcu_gemm(k, &L->wqkv, c->xn, rows, c->qkv, 0.0f, c->dq)) ||
            (L->bqkv && (st = kcu_bias_add(k, c->qkv, L->bqkv, rows, qkvw))) ||
            (st = kcu_rope(k, c->qkv, qkvw, c->pos, rows, I->n_head, hd, I->rope_theta)) ||
            (st = kcu_rope(k, c->qkv + q, qkvw, c->pos, rows, I->n_kv_head, hd, I->rope_theta)) ||
            (st = kcu_kv_store(k, &s, c->qkv, qkvw, q, q + kv, kc, vc)) ||
            (st = kcu_attention(k, &s, c->qkv, qkvw, kc, vc, c->valid, c->att_part, c->xn,
                                be->adt)) ||
            (st = kcu_gemm(k, &L->wo, c->xn, rows, c->x, 1.0f, c->dq)) ||
            (st = kcu_rmsnorm(k, c->x, L->ffn_norm, rows, d, I->rms_eps, c->xn, be->adt)) ||
            (st = kcu_gemm(k, &L->wgu, c->xn, rows, c->gu, 0.0f, c->dq)) ||
            (st = kcu_swiglu(k, c->gu, rows, ff, c->xn, be->adt)) ||
            (st = kcu_gemm(k, &L->wdown, c->xn, rows, c->x, 1.0f, c->dq)))
            return st;
    }
    return BASE_OK;
}

/* Final norm + LM head for rows [r0, r0 + n) of head_rows into c->logits. */
static base_status eng__cu_head(eng_bctx *c, int r0, int n) {
    eng_backend *be = c->be;
    const eng_model_info *I = &be->info;
    kcu_ctx *k = c->k;
    base_status st;
    if ((st = kcu_gather_rows(k, c->x, c->head_rows + r0, n, I->d_model, c->hrows)) ||
        (st = kcu_rmsnorm(k, c->hrows, be->norm, n, I->d_model, I->rms_eps, c->hn, be->adt)) ||
        (st = kcu_gemm(k, &be->head, c->hn, n, c->logits, 0.0f, c->dq)))
        return st;
    return BASE_OK;
}

/* Everything a step issues after its inputs are packed: capturable. */
static base_status eng__cu_step_program(eng_bctx *c, const eng__cuda_plan *p) {
    eng_backend *be = c->be;
    kcu_ctx *k = c->k;
    base_status st;
    if ((st = kcu_upload_async(k, c->head_rows, c->h.head_rows, (size_t)p->n_head_rows * 4)) ||
        (st = kcu_upload_async(k, c->noise_pos, c->h.noise_pos, (size_t)p->n_head_rows * 4)) ||
        (st = kcu_upload_async(k, c->params, c->h.params, sizeof(kcu_sample_params))) ||
        (st = kcu_upload_async(k, c->bias, c->h.bias, ENG__CU_MAX_BIAS * sizeof(kcu_bias))))
        return st;
    if ((st = eng__cu_layers(c, p->n_seq, p->len, p->win_start, p->n_q, false)))
        return st;
    for (int r0 = 0; r0 < p->n_head_rows; r0 += ENG__CU_HEAD_CHUNK) {
        int n = p->n_head_rows - r0 < ENG__CU_HEAD_CHUNK ? p->n_head_rows - r0 : ENG__CU_HEAD_CHUNK;
        if ((st = eng__cu_head(c, r0, n)) ||
            (st = kcu_vocab_reduce(k, c->logits, n, be->info.vocab_size, c->params, c->bias,
                                   c->noise_pos + r0, c->res + r0)))
            return st;
    }
    if (p->n_head_rows > 0 &&
        (st = kcu_download_async(k, c->h.res, c->res,
                                 (size_t)p->n_head_rows * sizeof(kcu_row_result))))
        return st;
    return BASE_OK;
}

static eng__cu_graph *eng__cu_graph_find(eng_bctx *c, const eng__cuda_graph_key *key) {
    for (int i = 0; i < ENG__CU_GRAPHS; i++)
        if (c->graphs[i].g && memcmp(&c->graphs[i].key, key, sizeof *key) == 0)
            return &c->graphs[i];
    return NULL;
}

static eng__cu_graph *eng__cu_graph_slot(eng_bctx *c) {
    eng__cu_graph *best = &c->graphs[0];
    for (int i = 0; i < ENG__CU_GRAPHS; i++) {
        if (!c->graphs[i].g)
            return &c->graphs[i];
        if (c->graphs[i].used < best->used)
            best = &c->graphs[i];
    }
    kcu_graph_free(best->g);
    best->g = NULL;
    return best;
}

static base_status eng__cu_check_batch(eng_bctx *c, const eng_batch *batch) {
    if (batch->n_seq > c->max_batch || batch->len > c->max_len)
        return BASE_ERR_TOO_LARGE;
    return BASE_OK;
}

/* Whether the batch has the canvas layout (shape and valid mask) of the last
 * FULL pass, which a WINDOW step requires. */
static bool eng__cu_same_layout(const eng_bctx *c, const eng_batch *batch) {
    if (c->full_n_seq != batch->n_seq || c->full_len != batch->len)
        return false;
    size_t n = (size_t)batch->n_seq * batch->len;
    for (size_t i = 0; i < n; i++)
        if (c->full_valid[i] != (batch->valid ? batch->valid[i] != 0 : 1))
            return false;
    return true;
}

static void eng__cu_remember_layout(eng_bctx *c, const eng_batch *batch) {
    c->full_n_seq = batch->n_seq;
    c->full_len = batch->len;
    size_t n = (size_t)batch->n_seq * batch->len;
    for (size_t i = 0; i < n; i++)
        c->full_valid[i] = batch->valid ? batch->valid[i] != 0 : 1;
}

static base_status eng__cu_step(eng_bctx *c, const eng_batch *batch, const eng_step_req *req,
                                eng_row_result *out) {
    eng_backend *be = c->be;
    if (atomic_load(&be->lost)) {
        eng_bctx *cc = eng__cu_cpu_ctx(c);
        return cc ? eng_backend_cpu.step(cc, batch, req, out) : BASE_ERR_DEVICE;
    }
    if (be->fail_after > 0 && atomic_fetch_add(&be->steps, 1) + 1 >= be->fail_after) {
        BASE_LOGE(ENG__CU_MOD, "simulated device loss (INFILLD_CUDA_FAIL_AFTER=%d)",
                  be->fail_after);
        atomic_store(&be->lost, true);
        return BASE_ERR_DEVICE;
    }
    base_status st = eng__cu_check_batch(c, batch);
    if (st)
        return st;
    if (req->n_pos > batch->n_seq * batch->len || req->sampling.n_bias > ENG__CU_MAX_BIAS)
        return BASE_ERR_RANGE;
    if (req->mode == ENG_STEP_WINDOW && !eng__cu_same_layout(c, batch))
        return BASE_ERR_STATE;
    if (req->mode == ENG_STEP_FULL)
        c->full_n_seq = 0; /* the cache is being rewritten */
    eng__cuda_plan p;
    if ((st = eng__cuda_plan_step(&be->info, batch, req, &p, c->h.head_rows, c->h.noise_pos)))
        return st;
    /* The number of LM-head rows shrinks as a hole fills; rounding it up to a
     * power of two (padding with zero rows whose results are dropped) keeps
     * the number of distinct graphs small. */
    int nb = eng__cuda_row_bucket(p.n_head_rows, (int)eng__cu_R(c));
    for (int j = p.n_head_rows; j < nb; j++) {
        c->h.head_rows[j] = -1;
        c->h.noise_pos[j] = 0;
    }
    p.n_head_rows = nb;
    if (eng__cu_cancelled(c))
        return BASE_ERR_CANCELLED;

    eng__cu_pack(c, batch, p.win_start, p.n_q);
    const eng_sampling *s = &req->sampling;
    kcu_sample_params *hp = c->h.params;
    hp->pick = s->pick == ENG_PICK_GUMBEL ? KCU_PICK_GUMBEL : KCU_PICK_DREAM;
    hp->temperature = s->temperature;
    hp->top_p = s->top_p;
    hp->top_k = s->top_k;
    hp->seed = s->seed;
    hp->step = s->step;
    hp->n_bias = s->n_bias;
    for (int i = 0; i < s->n_bias; i++) {
        c->h.bias[i].id = s->bias[i].id;
        c->h.bias[i].bias = s->bias[i].bias;
    }

    kcu_ctx *k = c->k;
    eng__cu_graph *g = NULL;
    if (c->use_graphs) {
        eng__cuda_graph_key key;
        memset(&key, 0, sizeof key);
        key.n_seq = p.n_seq;
        key.len = p.len;
        key.win_start = p.win_start;
        key.n_q = p.n_q;
        key.n_head_rows = p.n_head_rows;
        g = eng__cu_graph_find(c, &key);
        if (!g) {
            g = eng__cu_graph_slot(c);
            base_status pst = kcu_graph_begin(k);
            if (!pst)
                pst = eng__cu_step_program(c, &p);
            kcu_graph *ng = NULL;
            st = kcu_graph_end(k, &ng);
            if (pst || st) {
                kcu_graph_free(ng);
                g = NULL;
                if (kcu_ctx_lost(k))
                    return eng__cu_fail(c, pst ? pst : st, "step capture");
                /* A launch sequence that cannot be captured still runs eagerly. */
                BASE_LOGW(ENG__CU_MOD, "step graph capture failed (%s); running without graphs",
                          kcu_ctx_error(k));
                c->use_graphs = false;
            } else {
                g->g = ng;
                g->key = key;
            }
        }
    }
    if (g) {
        g->used = ++c->stamp;
        if ((st = kcu_graph_launch(k, g->g)))
            return eng__cu_fail(c, st, "step");
    } else if ((st = eng__cu_step_program(c, &p))) {
        return eng__cu_fail(c, st, "step");
    }
    if ((st = kcu_sync(k)))
        return eng__cu_fail(c, st, "step");
    if (req->mode == ENG_STEP_FULL)
        eng__cu_remember_layout(c, batch);
    for (int j = 0; j < req->n_pos; j++) {
        const kcu_row_result *r = &c->h.res[j];
        out[j].token = r->token;
        out[j].prob = r->prob;
        out[j].margin = r->margin;
        out[j].neg_entropy = r->neg_entropy;
    }
    return BASE_OK;
}

static base_status eng__cu_forward(eng_bctx *c, const eng_batch *batch, const int32_t *rows,
                                   int n_rows, float *logits) {
    eng_backend *be = c->be;
    if (atomic_load(&be->lost)) {
        eng_bctx *cc = eng__cu_cpu_ctx(c);
        return cc ? eng_backend_cpu.forward(cc, batch, rows, n_rows, logits) : BASE_ERR_DEVICE;
    }
    base_status st = eng__cu_check_batch(c, batch);
    if (st)
        return st;
    const int len = batch->len, V = be->info.vocab_size;
    if (n_rows > batch->n_seq * len)
        return BASE_ERR_RANGE;
    kcu_ctx *k = c->k;
    eng__cu_pack(c, batch, 0, len);
    for (int i = 0; i < n_rows; i++) /* full window: window row == canvas row */
        c->h.head_rows[i] = batch->valid && !batch->valid[rows[i]] ? -1 : rows[i];
    c->full_n_seq = 0;
    if ((st = eng__cu_layers(c, batch->n_seq, len, 0, len, true)) ||
        (n_rows > 0 &&
         (st = kcu_upload_async(k, c->head_rows, c->h.head_rows, (size_t)n_rows * 4)))) {
        if (st == BASE_ERR_CANCELLED) {
            kcu_sync(k);
            return st;
        }
        return eng__cu_fail(c, st, "forward");
    }
    for (int r0 = 0; r0 < n_rows; r0 += ENG__CU_HEAD_CHUNK) {
        int n = n_rows - r0 < ENG__CU_HEAD_CHUNK ? n_rows - r0 : ENG__CU_HEAD_CHUNK;
        if ((st = eng__cu_head(c, r0, n)) ||
            (st = kcu_download(k, logits + (size_t)r0 * V, c->logits, (size_t)n * V * 4)))
            return eng__cu_fail(c, st, "forward");
    }
    if ((st = kcu_sync(k)))
        return eng__cu_fail(c, st, "forward");
    eng__cu_remember_layout(c, batch);
    return BASE_OK;
}

static const eng_backend_i eng__backend_cuda = {
    .name = "cuda",
    .init = eng__cu_init,
    .free = eng__cu_free,
    .device_desc = eng__cu_desc,
    .ctx_new = eng__cu_ctx_new,
    .ctx_free = eng__cu_ctx_free,
    .forward = eng__cu_forward,
    .step = eng__cu_step,
    .set_cancel = eng__cu_set_cancel,
};

const eng_backend_i *eng_backend_cuda_get(void) { return &eng__backend_cuda; }

bool eng_cuda_describe(char *buf, size_t len) {
    kcu_device_info di;
    char why[256] = "";
    if (kcu_device_query(&di, why, sizeof why) != BASE_OK || di.count == 0) {
        snprintf(buf, len, "built in; %s", eng__cu_why(&di, why));
        return false;
    }
    snprintf(buf, len,
             "%d device(s); 0: %s, sm_%d%d, %.1f of %.1f GiB free, driver %d.%d, runtime %d.%d",
             di.count, di.name, di.major, di.minor, (double)di.free_bytes / (1 << 30),
             (double)di.total_bytes / (1 << 30), di.driver_version / 1000,
             (di.driver_version % 1000) / 10, di.runtime_version / 1000,
             (di.runtime_version % 1000) / 10);
    return true;
}
