/* CPU backend: the bidirectional transformer forward pass and the fused step.
 *
 * One pass, read top to bottom in eng__run():
 *   x = embed[tokens]                                      (f32 activations)
 *   per layer:  a = RMSNorm(x) * w_attn_norm
 *               q, k, v = a Wq^T + bq, a Wk^T + bk, a Wv^T + bv
 *               RoPE (rotate-half, angles in double from theta) on q and k
 *               k, v -> context cache (post-RoPE K)
 *               o = softmax(q K^T / sqrt(hd), padded keys masked) V   (GQA)
 *               x += o Wo^T
 *               m = RMSNorm(x) * w_ffn_norm
 *               x += (silu(m Wg^T) * (m Wu^T)) Wd^T
 *   head rows:  logits = (RMSNorm(x) * w_norm) Wlm^T, only for the asked rows.
 * RMSNorm is computed in fp32 as x * rsqrt(mean(x^2) + eps) (the mean summed
 * in double), then multiplied by the weight; activations stay f32, so the
 * "cast to the activation dtype" of the reference is the identity here.
 * Padded slots (valid = 0) are masked as keys; as query rows their attention
 * output is zero and their logits are written as zeros, never NaN.
 *
 * Paths (chosen at init; INFILLD_CPU_REFERENCE=1 forces the reference,
 * INFILLD_CPU_KERNEL=reference|portable|avx2|blas picks one for benchmarks):
 *   reference - plain scalar loops with double accumulators; the test oracle.
 *   avx2      - our SIMD kernels (AVX-512 where the CPU has it, else AVX2+FMA;
 *               INFILLD_CPU_ISA=avx2 caps them): weight tiles converted to f32
 *               and register-tiled FMA dot-product kernels (8x3 / 3x4).
 *   portable  - same structure in plain C.
 *   blas      - the default when OpenBLAS loads: weight tiles converted to f32
 *               and one single-threaded sgemm per tile on our own thread pool
 *               for matmuls of >= INFILLD_CPU_BLAS_MIN_ROWS rows (64), our
 *               kernels below that; attention as two sgemms per (sequence,
 *               head, query block).
 * Weights stay in their file dtype (mmap); every buffer a pass needs is
 * allocated in ctx_new, nothing in forward or step. */
#define _GNU_SOURCE
#include "cpu_impl.h"
#include "flag.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlfcn.h>
#include <pthread.h>

typedef enum eng__path { ENG__PATH_REF = 0, ENG__PATH_SIMD, ENG__PATH_BLAS } eng__path;

enum {
    ENG__NB = 128, /* most weight rows per matmul task (scratch size) */
    ENG__QC = 64,  /* query rows per attention task */
    /* Most LM-head rows per step chunk. A step's rows are cut into equal
     * chunks (33 rows: one chunk, not 32 + 1, which read the whole head twice);
     * the logits pages are touched only for the rows a step uses. */
    ENG__LCH = 64,
    ENG__WT_FLOATS = 1 << 19, /* f32 weight-tile scratch per thread on the BLAS path */
    /* Most X rows packed for AMX at a time (a matmul of more rows runs in
     * slices): 15 blocks of 16, three of the kernel's passes of five. */
    ENG__AMX_ROWS = 240,
};

struct eng_backend {
    const eng_weights *w;
    const eng_model_info *in;
    eng__pool *pool;
    int nt;
    int blas_min_rows; /* matmuls with fewer rows use our kernel on the BLAS path */
    eng__path path;
    const eng__kernels *k;
    /* Block-type weights go through the int8 kernels (k->qgemm) on X rows
     * quantised once per matmul; false: dequantised tiles (the reference path,
     * or INFILLD_CPU_QUANT=dequant for comparisons). */
    bool qact;
    bool has_block; /* some matmul weight is a block type */
    /* BF16 matmuls on the AMX tile unit (cpu/amx.c): the AVX-512 kernels are
     * in use and the CPU and OS allow it. */
    bool amx;
    /* BF16 matmuls of few rows through the outer-product panel kernels
     * (k->gemm_panels); INFILLD_CPU_PANELS=0 keeps the dot-product kernels. */
    bool panels;
    /* Q8_0 matmuls on the int8 tile unit (AMX-INT8) on the quantised X rows. */
    bool amx_q8;
    float *small;                  /* owns every f32 copy below */
    float **attn_norm, **ffn_norm; /* [n_layer] -> (d) */
    float **bq, **bk, **bv;        /* [n_layer] -> (qd) / (kvd); NULL without biases */
    float *norm;                   /* (d) */
    double *inv_freq;              /* (hd / 2): theta^(-2j / hd) */
    char desc[160];
};

struct eng_bctx {
    eng_backend *be;
    int B, L;             /* capacity: sequences x tokens */
    int kmax;             /* widest matmul input: max(d, qd, d_ff) */
    float *x;             /* (B*L, d) residual stream, compact window rows */
    float *xn;            /* (B*L, d) normed rows; head input rows */
    float *q;             /* (B*L, qd) */
    float *kt, *vt;       /* (B*L, kvd) fresh K, V of the window rows */
    float *att;           /* (B*L, qd) attention output */
    float *gate, *up;     /* (B*L, d_ff) */
    float *kc, *vc;       /* (n_layer, B, L, kvd) context cache, post-RoPE K */
    float *cos_t, *sin_t; /* (L, hd/2) */
    int32_t *pos;         /* (B*L) positions of the current batch, stride len */
    uint8_t *valid;       /* (B*L) */
    int32_t *hrow;        /* (B*L) compact rows gathered for the head */
    bool cached;          /* the cache holds a full pass of (c_nseq, c_len, c_valid) */
    int c_nseq, c_len;
    uint8_t *c_valid;   /* (B*L) */
    eng__q8a *xq;       /* (B*L, kmax / 32) quantised matmul input (has_block only) */
    uint16_t *xamx;     /* (ENG__AMX_ROWS, kmax) matmul input packed for AMX (amx only) */
    int8_t *xq_amx;     /* (B*L rounded up to 16, kmax) c->xq's quants in AMX's B layout */
    float **wtile;      /* [nt] (ENG__NB, kmax) converted weight tile */
    float **scores;     /* [nt] (ENG__QC, L) */
    float **qgrp;       /* [nt] (ENG__QC, head_dim) a task's gathered Q rows, then its O rows */
    float *logits;      /* (ENG__LCH, V) step logits */
    float **vb0, **vb1; /* [nt] (V) step scratch */
    int32_t **ib;       /* [nt] (V) */
    const volatile int *cancel;
    void (*layer_hook)(void *ud, int layer); /* tests */
    void *layer_ud;
    /* A pass its cancel flag stopped before layer r_layer > 0: its batch
     * (tokens, valid mask) and window; x and the cache hold layers below. */
    int r_layer, r_nseq, r_len, r_ws, r_we;
    int32_t *r_tokens; /* (B*L) */
    uint8_t *r_valid;  /* (B*L) */
    bool prof;         /* INFILLD_CPU_PROFILE: parallel loops timed per op (cpu/cpuprof.c) */
    eng__prof_op pop;  /* the op the next parallel loops belong to */
    /* the pass in progress */
    int n_seq, len, ws, W, nr;
    int layer;
};

/* ---- OpenBLAS, loaded at run time -------------------------------------------------
 * Debian's OpenBLAS picks its kernels at load time from the CPU model; on
 * CPUs it does not know (virtual machines report a generic "Intel Xeon
 * Processor") it falls back to the SSE3 "Prescott" kernels, several times
 * slower than its AVX-512 ones. So the library is dlopen'ed on first use, and
 * OPENBLAS_CORETYPE is set from the CPU's features before (when the user has
 * not set it). Without the library the backend uses its own kernels. */

static eng__blas eng__blas_fns;
static bool eng__blas_ok;
static pthread_once_t eng__blas_once = PTHREAD_ONCE_INIT;

static void eng__blas_load(void) {
    if (getenv("INFILLD_NO_BLAS"))
        return;
#if defined(__x86_64__)
    if (!getenv("OPENBLAS_CORETYPE")) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
            setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
        else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            setenv("OPENBLAS_CORETYPE", "Haswell", 0);
    }
#endif
    void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    *(void **)&eng__blas_fns.sgemm = dlsym(h, "cblas_sgemm");
    *(void **)&eng__blas_fns.set_threads = dlsym(h, "openblas_set_num_threads");
    *(void **)&eng__blas_fns.corename = dlsym(h, "openblas_get_corename");
    eng__blas_ok = eng__blas_fns.sgemm && eng__blas_fns.set_threads && eng__blas_fns.corename;
    /* The handle stays open for the life of the process. */
}

const eng__blas *eng__blas_get(void) {
    pthread_once(&eng__blas_once, eng__blas_load);
    return eng__blas_ok ? &eng__blas_fns : NULL;
}

/* ---- init ----------------------------------------------------------------------- */

static int eng__ncores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)BASE_MIN(n, 256) : 1;
}

static void eng__cpu_free(eng_backend *be) {
    if (!be)
        return;
    eng__pool_free(be->pool);
    free(be->small);
    free(be->attn_norm);
    free(be->inv_freq);
    free(be);
}

static eng_backend *eng__cpu_init(const eng_weights *w, const eng_load_opts *opts, eng_error *err) {
    const eng_model_info *in = w->info;
    eng_backend *be = calloc(1, sizeof *be);
    if (!be) {
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    be->w = w;
    be->in = in;
    be->nt = opts && opts->n_threads > 0 ? BASE_MIN(opts->n_threads, 256) : eng__ncores();

    const char *ref = getenv("INFILLD_CPU_REFERENCE");
    const char *kern = getenv("INFILLD_CPU_KERNEL");
    be->k = eng__kernels_get(true);
    const eng__blas *blas = eng__blas_get();
    be->path = blas ? ENG__PATH_BLAS : ENG__PATH_SIMD;
    if (kern && strcmp(kern, "portable") == 0) {
        be->path = ENG__PATH_SIMD;
        be->k = eng__kernels_get(false);
    } else if (kern && strcmp(kern, "avx2") == 0) {
        be->path = ENG__PATH_SIMD;
    } else if (kern && strcmp(kern, "reference") == 0) {
        be->path = ENG__PATH_REF;
    }
    if (ref && ref[0] && strcmp(ref, "0") != 0)
        be->path = ENG__PATH_REF;
    const char *qm = getenv("INFILLD_CPU_QUANT");
    be->qact = be->path != ENG__PATH_REF && !(qm && strcmp(qm, "dequant") == 0);
    /* The weight types of the matmuls: block types, and those with AMX kernels. */
    be->has_block = eng__dtype_is_block(w->lm_head.dtype);
    bool has_bf16 = w->lm_head.dtype == ENG_BF16, has_q8 = w->lm_head.dtype == ENG_Q8_0;
    for (int l = 0; l < in->n_layer; l++) {
        const eng_layer_w *lw = &w->layers[l];
        const eng_tensor *ts[] = {&lw->wq,     &lw->wk,   &lw->wv,    &lw->wo,
                                  &lw->w_gate, &lw->w_up, &lw->w_down};
        for (size_t i = 0; i < BASE_ARRAY_LEN(ts); i++) {
            be->has_block = be->has_block || eng__dtype_is_block(ts[i]->dtype);
            has_bf16 = has_bf16 || ts[i]->dtype == ENG_BF16;
            has_q8 = has_q8 || ts[i]->dtype == ENG_Q8_0;
        }
    }
    if (be->path == ENG__PATH_BLAS)
        blas->set_threads(1); /* parallelism comes from our pool, one sgemm per tile */
    /* The tile unit goes with the AVX-512 kernel set (not the reference path). */
    const bool tiles = be->path != ENG__PATH_REF && strcmp(be->k->name, "AVX-512") == 0;
    be->amx = has_bf16 && tiles && eng__amx_available();
    be->amx_q8 = has_q8 && be->qact && tiles && eng__amx_int8_available();
    const char *pe = getenv("INFILLD_CPU_PANELS");
    be->panels = be->path != ENG__PATH_REF && be->k->gemm_panels && !(pe && strcmp(pe, "0") == 0);
    const char *mr = getenv("INFILLD_CPU_BLAS_MIN_ROWS");
    be->blas_min_rows = mr ? atoi(mr) : 64;

    const int L = in->n_layer, d = in->d_model, qd = in->n_head * in->head_dim,
              kvd = in->n_kv_head * in->head_dim;
    size_t n_small = (size_t)d + (size_t)L * (2 * (size_t)d + (in->qkv_bias ? qd + 2 * kvd : 0));
    be->small = malloc(n_small * sizeof(float));
    be->attn_norm = calloc((size_t)L * 5, sizeof(float *));
    be->inv_freq = malloc((size_t)(in->head_dim / 2) * sizeof(double));
    be->pool = eng__pool_new(be->nt);
    if (!be->small || !be->attn_norm || !be->inv_freq || !be->pool) {
        eng__cpu_free(be);
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    be->nt = eng__pool_threads(be->pool);
    be->ffn_norm = be->attn_norm + L;
    be->bq = be->attn_norm + 2 * L;
    be->bk = be->attn_norm + 3 * L;
    be->bv = be->attn_norm + 4 * L;
    float *p = be->small;
    be->norm = p;
    eng__tensor_row_f32(&w->norm, 0, 0, d, p);
    p += d;
    for (int l = 0; l < L; l++) {
        const eng_layer_w *lw = &w->layers[l];
        be->attn_norm[l] = p;
        eng__tensor_row_f32(&lw->attn_norm, 0, 0, d, p);
        p += d;
        be->ffn_norm[l] = p;
        eng__tensor_row_f32(&lw->ffn_norm, 0, 0, d, p);
        p += d;
        if (in->qkv_bias && lw->bq.data) {
            be->bq[l] = p;
            eng__tensor_row_f32(&lw->bq, 0, 0, qd, p);
            p += qd;
            be->bk[l] = p;
            eng__tensor_row_f32(&lw->bk, 0, 0, kvd, p);
            p += kvd;
            be->bv[l] = p;
            eng__tensor_row_f32(&lw->bv, 0, 0, kvd, p);
            p += kvd;
        }
    }
    for (int j = 0; j < in->head_dim / 2; j++)
        be->inv_freq[j] = pow((double)in->rope_theta, -2.0 * j / in->head_dim);
    const char *pname = be->path == ENG__PATH_REF    ? "reference"
                        : be->path == ENG__PATH_BLAS ? "OpenBLAS sgemm"
                                                     : be->k->name;
    const bool bl = be->path == ENG__PATH_BLAS;
    snprintf(be->desc, sizeof be->desc, "cpu (%s%s%s%s%s%s%s, %d thread%s)", pname, bl ? " " : "",
             bl ? blas->corename() : "", bl ? " + " : "", bl ? be->k->name : "",
             be->amx      ? ", BF16 on AMX"
             : be->amx_q8 ? ", Q8_0 on AMX"
                          : "",
             be->has_block && be->qact ? ", int8 activations" : "", be->nt, be->nt == 1 ? "" : "s");
    return be;
}

static const char *eng__cpu_desc(eng_backend *be) { return be->desc; }

/* ---- context ------------------------------------------------------------------------ */

static void eng__cpu_ctx_free(eng_bctx *c) {
    if (!c)
        return;
    float *bufs[] = {c->x,  c->xn, c->q,  c->kt,    c->vt,    c->att,   c->gate,
                     c->up, c->kc, c->vc, c->cos_t, c->sin_t, c->logits};
    for (size_t i = 0; i < BASE_ARRAY_LEN(bufs); i++)
        free(bufs[i]);
    free(c->pos);
    free(c->valid);
    free(c->hrow);
    free(c->c_valid);
    free(c->r_tokens);
    free(c->r_valid);
    free(c->xq);
    free(c->xamx);
    free(c->xq_amx);
    if (c->wtile)
        for (int t = 0; t < c->be->nt; t++) {
            free(c->wtile[t]);
            free(c->scores[t]);
            free(c->qgrp[t]);
            free(c->vb0[t]);
            free(c->vb1[t]);
            free(c->ib[t]);
        }
    free(c->wtile);
    free(c);
}

/* Scratch on 64-byte lines: the AVX-512 kernels' full-width loads of an
 * activation row or a weight tile then never split a cache line (the
 * hole step's matmuls ran ~25 % slower on malloc's 16-byte alignment).
 * Freed with free(). */
static void *eng__alloc64(size_t bytes) {
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 64) == 0 ? p : NULL;
}

static eng_bctx *eng__cpu_ctx_new(eng_backend *be, int max_batch, int max_len, eng_error *err) {
    const eng_model_info *in = be->in;
    eng_bctx *c = calloc(1, sizeof *c);
    if (!c) {
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    c->be = be;
    c->B = max_batch;
    c->L = max_len;
    c->prof = eng__prof_enabled();
    const size_t R = (size_t)max_batch * max_len, d = (size_t)in->d_model,
                 qd = (size_t)in->n_head * in->head_dim, kvd = (size_t)in->n_kv_head * in->head_dim,
                 ff = (size_t)in->d_ff, V = (size_t)in->vocab_size, h2 = (size_t)in->head_dim / 2;
    c->kmax = (int)BASE_MAX(BASE_MAX(d, qd), ff);
    bool ok = true;
#define ENG__ALLOC(ptr, n) ok = ok && ((ptr) = eng__alloc64((n) * sizeof *(ptr))) != NULL
    ENG__ALLOC(c->x, R * d);
    ENG__ALLOC(c->xn, R * d);
    ENG__ALLOC(c->q, R * qd);
    ENG__ALLOC(c->kt, R * kvd);
    ENG__ALLOC(c->vt, R * kvd);
    ENG__ALLOC(c->att, R * qd);
    ENG__ALLOC(c->gate, R * ff);
    ENG__ALLOC(c->up, R * ff);
    ENG__ALLOC(c->kc, (size_t)in->n_layer * R * kvd);
    ENG__ALLOC(c->vc, (size_t)in->n_layer * R * kvd);
    ENG__ALLOC(c->cos_t, (size_t)max_len * h2);
    ENG__ALLOC(c->sin_t, (size_t)max_len * h2);
    ENG__ALLOC(c->logits, (size_t)ENG__LCH * V);
    ENG__ALLOC(c->pos, R);
    ENG__ALLOC(c->valid, R);
    ENG__ALLOC(c->hrow, R);
    ENG__ALLOC(c->c_valid, R);
    ENG__ALLOC(c->r_tokens, R);
    ENG__ALLOC(c->r_valid, R);
    if (be->has_block && be->qact)
        ENG__ALLOC(c->xq, R * (size_t)((c->kmax + 31) / 32));
    if (be->amx_q8)
        ENG__ALLOC(c->xq_amx, (R + 15) / 16 * 16 * (size_t)((c->kmax + 31) / 32 * 32));
    if (be->amx)
        ENG__ALLOC(c->xamx, eng__amx_xpack_elems(ENG__AMX_ROWS, (c->kmax + 31) / 32 * 32));
    c->wtile = calloc((size_t)be->nt * 6, sizeof(void *));
    ok = ok && c->wtile;
    if (ok) {
        c->scores = c->wtile + be->nt;
        c->vb0 = c->wtile + 2 * be->nt;
        c->vb1 = c->wtile + 3 * be->nt;
        c->ib = (int32_t **)(c->wtile + 4 * be->nt);
        c->qgrp = c->wtile + 5 * be->nt;
        for (int t = 0; t < be->nt; t++) {
            ENG__ALLOC(c->wtile[t], BASE_MAX((size_t)ENG__NB * c->kmax, (size_t)ENG__WT_FLOATS));
            ENG__ALLOC(c->scores[t], (size_t)ENG__QC * max_len);
            ENG__ALLOC(c->qgrp[t], (size_t)ENG__QC * be->in->head_dim);
            ENG__ALLOC(c->vb0[t], V);
            ENG__ALLOC(c->vb1[t], V);
            ENG__ALLOC(c->ib[t], V);
        }
    }
#undef ENG__ALLOC
    if (!ok) {
        eng__cpu_ctx_free(c);
        eng__err(err, BASE_ERR_NOMEM, "out of memory for a %d x %d context", max_batch, max_len);
        return NULL;
    }
    for (int p = 0; p < max_len; p++)
        for (size_t j = 0; j < h2; j++) {
            double a = (double)p * be->inv_freq[j];
            c->cos_t[(size_t)p * h2 + j] = (float)cos(a);
            c->sin_t[(size_t)p * h2 + j] = (float)sin(a);
        }
    return c;
}

static void eng__cpu_set_cancel(eng_bctx *c, const volatile int *flag) { c->cancel = flag; }
static int eng__cpu_resumable(eng_bctx *c) { return c->r_layer; }
static void eng__cpu_set_layer_hook(eng_bctx *c, void (*fn)(void *ud, int layer), void *ud) {
    c->layer_hook = fn;
    c->layer_ud = ud;
}

/* ---- parallel loops, labelled for the profile --------------------------------------------- */

typedef struct eng__prof_job {
    eng__task_fn fn;
    void *arg;
    eng__prof_op op;
    atomic_llong cpu; /* the loop's task CPU time */
} eng__prof_job;

static void eng__prof_task(void *arg, int task, int tid) {
    eng__prof_job *j = arg;
    const int64_t t0 = eng__prof_thread_ns();
    j->fn(j->arg, task, tid);
    atomic_fetch_add(&j->cpu, eng__prof_thread_ns() - t0);
}

/* eng__pool_run for the op c->pop; with the profile on, each task's thread
 * CPU time and the loop's wall time are added to that op's counters. */
static void eng__prun(eng_bctx *c, eng__task_fn fn, void *arg, int n_tasks) {
    if (!c->prof || n_tasks <= 0) {
        eng__pool_run(c->be->pool, fn, arg, n_tasks);
        return;
    }
    eng__prof_job j = {fn, arg, c->pop, 0};
    const int64_t w0 = eng__prof_wall_ns();
    eng__pool_run(c->be->pool, eng__prof_task, &j, n_tasks);
    const int64_t wall = eng__prof_wall_ns() - w0, cpu = atomic_load(&j.cpu);
    eng__prof_add_cpu(j.op, cpu);
    eng__prof_add_loop(j.op, wall, (int64_t)eng__pool_threads(c->be->pool) * wall - cpu);
}

/* ---- matmul ------------------------------------------------------------------------------ */

typedef struct eng__mm_job {
    eng_bctx *c;
    const float *X;
    int ldx, M;
    const eng_tensor *W;
    const float *bias;
    float *Y;
    int ldy;
    bool acc;
    int nb, mb, n_nt;
    bool q;   /* int8 kernel on c->xq */
    bool amx; /* AMX kernel on c->xamx (rows of X packed from row 0 of this job) */
} eng__mm_job;

/* Rows [row0, row0 + n) of W as f32: block types through their dequantiser
 * (cpu/quant.c), the others through the kernel table's converter. */
static void eng__convert_rows(const eng_backend *be, const eng_tensor *W, int64_t row0, int n,
                              float *out) {
    if (eng__dtype_is_block(W->dtype))
        eng__dequant(W->dtype, W->data, row0 * W->cols, (int64_t)n * W->cols, out);
    else
        be->k->convert(W, row0, n, out);
}

/* Y[m, n] += bias[n] for the M x N block at Y (ldy apart). */
static void eng__add_bias(float *Y, int ldy, int M, int N, const float *bias) {
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++)
            Y[(int64_t)m * ldy + n] += bias[n];
}

/* Whether a matmul with W runs on AMX: BF16 rows, K a multiple of 32 and
 * at least one block of 16 rows. */
static bool eng__mm_amx(const eng_bctx *c, const eng_tensor *W) {
    return c->be->amx && W->dtype == ENG_BF16 && W->cols % 32 == 0 && W->rows >= 16;
}

/* Whether a matmul of M rows with W runs on the panel kernels: BF16
 * weights, few rows, not on AMX. */
static bool eng__mm_panels(const eng_bctx *c, const eng_tensor *W, int M) {
    const eng_backend *be = c->be;
    return be->panels && W->dtype == ENG_BF16 && !eng__mm_amx(c, W) &&
           (be->path == ENG__PATH_SIMD || (be->path == ENG__PATH_BLAS && M < be->blas_min_rows));
}

/* K in chunks of at most ENG__PKC columns on the panel path: the next
 * chunk's weights are prefetched while the kernels run on this one. Weight
 * rows in groups of ENG__PNB (three panels of 16), one group's chunk of f32
 * panels in the scratch: at 128 columns that is 24 KiB, which stays in L1
 * while it is written and read (packing 512 columns, 96 KiB, was bound by
 * the stores' trips to L2). Paired hole steps on a Xeon: 128 was 4-5 %
 * faster than 512; 64, 96 and 256 in between. */
enum { ENG__PKC = 128, ENG__PNB = 48 };

static void eng__mm_task(void *arg, int task, int tid) {
    const eng__mm_job *j = arg;
    eng_backend *be = j->c->be;
    const int N = (int)j->W->rows, K = (int)j->W->cols;
    const int n0 = (task % j->n_nt) * j->nb, n1 = BASE_MIN(N, n0 + j->nb);
    const int m0 = (task / j->n_nt) * j->mb, m1 = BASE_MIN(j->M, m0 + j->mb);
    if (n0 >= n1 || m0 >= m1)
        return;
    const float *X = j->X + (int64_t)m0 * j->ldx;
    float *Y = j->Y + (int64_t)m0 * j->ldy + n0;
    if (j->amx) {
        /* Whole blocks of 16 weight rows on the tile unit; a tail of fewer
         * rows (N not a multiple of 16) through the FMA kernel. */
        const int M = m1 - m0, N1 = n1 - n0, Na = N1 / 16 * 16;
        eng__amx_gemm((const uint16_t *)j->W->data + (size_t)n0 * K, K,
                      j->c->xamx + (size_t)(m0 / 16) * eng__amx_xpack_elems(16, K), M, Y, j->ldy,
                      Na, j->acc);
        if (Na < N1) {
            float *t = j->c->wtile[tid];
            be->k->convert(j->W, n0 + Na, N1 - Na, t);
            be->k->gemm(X, j->ldx, t, K, Y + Na, j->ldy, M, N1 - Na, K, j->acc);
        }
        if (j->bias)
            eng__add_bias(Y, j->ldy, M, N1, j->bias + n0);
        return;
    }
    if (j->q) {
        const size_t rb = eng__dtype_bytes(j->W->dtype, K);
        const int ldxb = (j->c->kmax + 31) / 32;
        const uint8_t *w = (const uint8_t *)j->W->data + (size_t)n0 * rb;
        int na = 0; /* rows done on the tile unit: whole blocks of 16 */
        if (be->amx_q8 && j->W->dtype == ENG_Q8_0 && K % 32 == 0 && m0 % 16 == 0) {
            na = (n1 - n0) / 16 * 16;
            eng__amx_q8_gemm(w, rb, j->c->xq_amx + (size_t)m0 * (size_t)K,
                             j->c->xq + (int64_t)m0 * ldxb, ldxb, m1 - m0, Y, j->ldy, na, K,
                             j->acc);
        }
        if (na < n1 - n0)
            be->k->qgemm(j->W->dtype, w + (size_t)na * rb, rb, j->c->xq + (int64_t)m0 * ldxb, ldxb,
                         Y + na, j->ldy, m1 - m0, n1 - n0 - na, K, j->acc);
        if (j->bias)
            eng__add_bias(Y, j->ldy, m1 - m0, n1 - n0, j->bias + n0);
        return;
    }
    if (eng__mm_panels(j->c, j->W, j->M)) {
        /* The task's rows in groups of 48 (three panels), K in chunks: while
         * the kernels run on one chunk, the next chunk's weights (the next
         * group's first one after a group's last) are prefetched into L2, so
         * that only a task's first chunk waits on memory. */
        const int M = m1 - m0;
        const int nkc = (K + ENG__PKC - 1) / ENG__PKC, kc = ((K + nkc - 1) / nkc + 31) & ~31;
        float *t = j->c->wtile[tid];
        const char *w = (const char *)j->W->data;
        be->k->panels(j->W, n0, BASE_MIN(ENG__PNB, n1 - n0), 0, BASE_MIN(kc, K), t);
        for (int g0 = n0; g0 < n1; g0 += ENG__PNB) {
            const int rows = BASE_MIN(ENG__PNB, n1 - g0);
            for (int k0 = 0; k0 < K; k0 += kc) {
                const bool same = k0 + kc < K, more = same || g0 + ENG__PNB < n1;
                const int ng = same ? g0 : g0 + ENG__PNB, nk = same ? k0 + kc : 0;
                const int nrows = BASE_MIN(ENG__PNB, n1 - ng), nkw = BASE_MIN(kc, K - nk);
                if (more && be->k->prefetch_rows)
                    be->k->prefetch_rows(w + ((size_t)ng * (size_t)K + (size_t)nk) * 2,
                                         (size_t)K * 2, nrows, (size_t)nkw * 2);
                be->k->gemm_panels(X + k0, j->ldx, t, BASE_MIN(kc, K - k0), Y + (g0 - n0), j->ldy,
                                   M, rows, j->acc || k0 > 0);
                if (be->k->prefetch_rows)
                    be->k->prefetch_rows(NULL, 0, 0, 0);
                if (more)
                    be->k->panels(j->W, ng, nrows, nk, nkw, t);
            }
        }
        if (j->bias)
            eng__add_bias(Y, j->ldy, M, n1 - n0, j->bias + n0);
        return;
    }
    const float *wt;
    const bool few =
        be->path == ENG__PATH_SIMD || (be->path == ENG__PATH_BLAS && j->M < be->blas_min_rows);
    if (j->W->dtype != ENG_F32 && !eng__dtype_is_block(j->W->dtype) && few &&
        be->k->prefetch_rows && n1 - n0 >= 24) {
        /* Few rows (a hole step): the tile is converted in three parts, each
         * part's weights prefetched into L2 while the kernel computes on the
         * part before, so that reading the weights overlaps the arithmetic. */
        const int N1 = n1 - n0, M = m1 - m0;
        const int p1 = (N1 / 3 + 2) / 3 * 3, p2 = BASE_MIN(N1, 2 * p1);
        const int cut[4] = {0, p1, p2, N1};
        const size_t esz = j->W->dtype == ENG_BF16 || j->W->dtype == ENG_F16 ? 2 : 4;
        float *t = j->c->wtile[tid];
        be->k->convert(j->W, n0, p1, t);
        for (int p = 0; p < 3; p++) {
            if (cut[p] >= cut[p + 1])
                continue;
            if (p < 2 && cut[p + 1] < cut[p + 2]) {
                const size_t bytes = (size_t)(cut[p + 2] - cut[p + 1]) * (size_t)K * esz;
                be->k->prefetch_rows((const char *)j->W->data +
                                         (size_t)(n0 + cut[p + 1]) * (size_t)K * esz,
                                     bytes, 1, bytes);
            }
            be->k->gemm(X, j->ldx, t + (int64_t)cut[p] * K, K, Y + cut[p], j->ldy, M,
                        cut[p + 1] - cut[p], K, j->acc);
            be->k->prefetch_rows(NULL, 0, 0, 0);
            if (p < 2 && cut[p + 1] < cut[p + 2])
                be->k->convert(j->W, n0 + cut[p + 1], cut[p + 2] - cut[p + 1],
                               t + (int64_t)cut[p + 1] * K);
        }
        if (j->bias)
            eng__add_bias(Y, j->ldy, M, N1, j->bias + n0);
        return;
    }
    if (j->W->dtype == ENG_F32) {
        wt = (const float *)j->W->data + (int64_t)n0 * K;
    } else {
        eng__convert_rows(be, j->W, n0, n1 - n0, j->c->wtile[tid]);
        wt = j->c->wtile[tid];
    }
    const int M = m1 - m0, N1 = n1 - n0;
    switch (be->path) {
    case ENG__PATH_REF:
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N1; n++) {
                double s = 0;
                for (int k = 0; k < K; k++)
                    s += (double)X[(int64_t)m * j->ldx + k] * wt[(int64_t)n * K + k];
                float *y = &Y[(int64_t)m * j->ldy + n];
                *y = j->acc ? (float)(*y + s) : (float)s;
            }
        break;
    case ENG__PATH_BLAS:
        /* sgemm wins on many rows; few rows (a hole-only step) go faster
         * through our kernel, which needs no packing. */
        if (j->M >= be->blas_min_rows) {
            eng__blas_get()->sgemm(ENG__ROW_MAJOR, ENG__NO_TRANS, ENG__TRANS, M, N1, K, 1.0f, X,
                                   j->ldx, wt, K, j->acc ? 1.0f : 0.0f, Y, j->ldy);
            break;
        }
        be->k->gemm(X, j->ldx, wt, K, Y, j->ldy, M, N1, K, j->acc);
        break;
    case ENG__PATH_SIMD:
        be->k->gemm(X, j->ldx, wt, K, Y, j->ldy, M, N1, K, j->acc);
        break;
    }
    if (j->bias)
        eng__add_bias(Y, j->ldy, M, N1, j->bias + n0);
}

/* Plans Y (+)= X W^T + bias for X (M, W->cols) with row stride ldx, Y row
 * stride ldy, as tasks of (weight rows x X rows); returns the task count. */
static int eng__mm_plan(eng_bctx *c, eng__mm_job *j, const float *X, int ldx, int M,
                        const eng_tensor *W, const float *bias, float *Y, int ldy, bool acc) {
    const int nt = c->be->nt, N = (int)W->rows;
    /* Weight rows per task: a multiple of 12 (the kernels' 3- and 4-row tiles)
     * whose f32 tile stays within ~128 KiB, so that it and the X rows of a hole
     * step (34 x 896 floats, 122 KiB) are reused from L2 by every block of X
     * rows. A 256 KiB tile left too little of a 512 KiB L2 for both: paired
     * hole steps on Zen 3 were 3-5 % slower (docs/PERFORMANCE.md). */
    const int K = (int)W->cols;
    int nb = (32768 / K) / 12 * 12;
    nb = nb < 24 ? 24 : nb > 120 ? 120 : nb;
    /* sgemm re-packs X on every call: give it up to ENG__WT_FLOATS of weights
     * per call so that the packing is amortised over many weight rows. */
    const bool blas = c->be->path == ENG__PATH_BLAS && M >= c->be->blas_min_rows;
    if (blas) {
        nb = (ENG__WT_FLOATS / K) / 12 * 12;
        nb = nb < 24 ? 24 : nb > 512 ? 512 : nb;
    }
    const int want = (blas ? 2 : 4) * nt; /* tasks for a fair share per thread */
    const bool q = c->be->qact && eng__dtype_is_block(W->dtype);
    if (q) {
        /* The int8 kernels split over output columns only (every task reads
         * all of the quantised X, which is small): 4 tasks a thread, a
         * multiple of 8 rows (the tiled kernels' group), at most 64 rows so
         * that a task's weights stay in L2 for the next group of X rows. */
        nb = (N + want - 1) / want;
        const int g = c->be->amx_q8 && W->dtype == ENG_Q8_0 ? 16 : 8; /* AMX: blocks of 16 */
        nb = (nb + g - 1) / g * g;
        nb = nb < g ? g : nb > 64 ? 64 : nb;
    }
    const bool amx = eng__mm_amx(c, W);
    if (eng__mm_panels(c, W, M)) {
        /* Groups of three panels (the kernels' widest), several to a task
         * so that the prefetch runs on from group to group; 8 tasks a
         * thread, or one group a task where there are fewer groups. */
        const int groups = (N + ENG__PNB - 1) / ENG__PNB;
        nb = BASE_MAX(1, groups / (8 * nt)) * ENG__PNB;
    }
    if (amx) {
        /* Blocks of 16 rows (the tile unit's); 4 tasks a thread, at most
         * ENG__NB rows (the scratch of a tail's conversion is not needed for
         * more than 15). */
        nb = (N + 4 * nt - 1) / (4 * nt);
        nb = (nb + 15) / 16 * 16;
        nb = nb < 16 ? 16 : nb > ENG__NB ? ENG__NB : nb;
    }
    *j = (eng__mm_job){c, X, ldx, M, W, bias, Y, ldy, acc, nb, M, 0, q, amx};
    j->n_nt = (N + j->nb - 1) / j->nb;
    if (q)
        return M > 0 ? j->n_nt : 0;
    int n_mt = 1;
    if (j->n_nt < want && M >= 32) {
        n_mt = BASE_MIN((want + j->n_nt - 1) / j->n_nt, (M + 15) / 16);
        j->mb = (M + n_mt - 1) / n_mt;
        if (amx)
            j->mb = (j->mb + 15) / 16 * 16; /* whole packed blocks */
        n_mt = (M + j->mb - 1) / j->mb;
    }
    return M > 0 ? j->n_nt * n_mt : 0;
}

/* Quantises rows [0, M) of X (K columns) into c->xq for the int8 kernels;
 * amx: also packs their quants for the int8 tile unit (c->xq_amx), which
 * only Q8_0 weights use. */
typedef struct eng__qa_job {
    eng_bctx *c;
    const float *X;
    int ldx, M, K, chunk;
    bool amx;
} eng__qa_job;

static void eng__qa_task(void *arg, int task, int tid) {
    (void)tid;
    const eng__qa_job *j = arg;
    const int ldxb = (j->c->kmax + 31) / 32;
    for (int m = task * j->chunk; m < BASE_MIN(j->M, (task + 1) * j->chunk); m++) {
        eng__quantize_act(j->X + (int64_t)m * j->ldx, j->K, j->c->xq + (int64_t)m * ldxb);
        if (j->amx)
            eng__amx_q8_pack_row(j->c->xq + (int64_t)m * ldxb, m, j->K / 32, j->c->xq_amx);
    }
}

static void eng__quant_x(eng_bctx *c, const float *X, int ldx, int M, int K, bool q8_0) {
    const int chunk = BASE_MAX(1, (M + 2 * c->be->nt - 1) / (2 * c->be->nt));
    eng__qa_job j = {c, X, ldx, M, K, chunk, q8_0 && c->be->amx_q8 && K % 32 == 0};
    const eng__prof_op op = c->pop;
    c->pop = ENG__P_QUANT;
    eng__prun(c, eng__qa_task, &j, (M + j.chunk - 1) / j.chunk);
    c->pop = op;
}

/* Packs rows [0, M) of X (M <= ENG__AMX_ROWS, K columns) into c->xamx: a
 * task per block of 16 rows, each cut into `split` column ranges so that a
 * hole step's three blocks still give every thread its share. */
typedef struct eng__ap_job {
    eng_bctx *c;
    const float *X;
    int ldx, M, K, split;
} eng__ap_job;

static void eng__ap_task(void *arg, int task, int tid) {
    (void)tid;
    const eng__ap_job *j = arg;
    const int nc = j->K / 32, part = task % j->split;
    eng__amx_pack_x(j->X, j->ldx, j->M, j->K, task / j->split, nc * part / j->split,
                    nc * (part + 1) / j->split, j->c->xamx);
}

static void eng__amx_pack(eng_bctx *c, const float *X, int ldx, int M, int K) {
    const int nblk = (M + 15) / 16;
    const int split = BASE_MAX(1, BASE_MIN(K / 32, (4 * c->be->nt + nblk - 1) / nblk));
    eng__ap_job j = {c, X, ldx, M, K, split};
    const eng__prof_op op = c->pop;
    c->pop = ENG__P_QUANT;
    eng__prun(c, eng__ap_task, &j, nblk * split);
    c->pop = op;
}

static void eng__mm(eng_bctx *c, const float *X, int ldx, int M, const eng_tensor *W,
                    const float *bias, float *Y, int ldy, bool acc) {
    if (eng__mm_amx(c, W)) {
        /* In slices of ENG__AMX_ROWS rows, each packed once for all its tasks. */
        for (int r0 = 0; r0 < M; r0 += ENG__AMX_ROWS) {
            const int mr = BASE_MIN(ENG__AMX_ROWS, M - r0);
            eng__amx_pack(c, X + (int64_t)r0 * ldx, ldx, mr, (int)W->cols);
            eng__mm_job j;
            int n = eng__mm_plan(c, &j, X + (int64_t)r0 * ldx, ldx, mr, W, bias,
                                 Y + (int64_t)r0 * ldy, ldy, acc);
            eng__prun(c, eng__mm_task, &j, n);
        }
        return;
    }
    if (c->be->qact && eng__dtype_is_block(W->dtype))
        eng__quant_x(c, X, ldx, M, (int)W->cols, W->dtype == ENG_Q8_0);
    eng__mm_job j;
    int n = eng__mm_plan(c, &j, X, ldx, M, W, bias, Y, ldy, acc);
    eng__prun(c, eng__mm_task, &j, n);
}

/* Several matmuls of the same X in one parallel loop (q/k/v, gate/up): one
 * synchronisation instead of several, and the small ones fill idle threads. */
typedef struct eng__mm_set {
    eng__mm_job j[3];
    int first[4]; /* task offsets */
} eng__mm_set;

static void eng__mm_set_task(void *arg, int task, int tid) {
    eng__mm_set *s = arg;
    int i = 0;
    while (task >= s->first[i + 1])
        i++;
    eng__mm_task(&s->j[i], task - s->first[i], tid);
}

static void eng__mm_multi(eng_bctx *c, const float *X, int ldx, int M, int n,
                          const eng_tensor *const *W, float *const *bias, float *const *Y,
                          const int *ldy) {
    bool all_amx = true;
    for (int i = 0; i < n; i++)
        all_amx = all_amx && eng__mm_amx(c, W[i]);
    if (all_amx) {
        /* One packing of each slice of X for every W (the same K). */
        for (int r0 = 0; r0 < M; r0 += ENG__AMX_ROWS) {
            const int mr = BASE_MIN(ENG__AMX_ROWS, M - r0);
            eng__amx_pack(c, X + (int64_t)r0 * ldx, ldx, mr, (int)W[0]->cols);
            eng__mm_set s;
            s.first[0] = 0;
            for (int i = 0; i < n; i++)
                s.first[i + 1] =
                    s.first[i] + eng__mm_plan(c, &s.j[i], X + (int64_t)r0 * ldx, ldx, mr, W[i],
                                              bias[i], Y[i] + (int64_t)r0 * ldy[i], ldy[i], false);
            eng__prun(c, eng__mm_set_task, &s, s.first[n]);
        }
        return;
    }
    eng__mm_set s;
    s.first[0] = 0;
    bool block = false, q8_0 = false;
    for (int i = 0; i < n; i++) {
        block = block || eng__dtype_is_block(W[i]->dtype);
        q8_0 = q8_0 || W[i]->dtype == ENG_Q8_0;
    }
    if (c->be->qact && block) /* the same X (and K) for every W */
        eng__quant_x(c, X, ldx, M, (int)W[0]->cols, q8_0);
    for (int i = 0; i < n; i++)
        s.first[i + 1] =
            s.first[i] + eng__mm_plan(c, &s.j[i], X, ldx, M, W[i], bias[i], Y[i], ldy[i], false);
    eng__prun(c, eng__mm_set_task, &s, s.first[n]);
}

/* ---- row-wise ops ------------------------------------------------------------------------- */

typedef enum eng__rowop { ENG__OP_EMBED, ENG__OP_NORM, ENG__OP_ROPE, ENG__OP_SWIGLU } eng__rowop;

typedef struct eng__row_job {
    eng_bctx *c;
    eng__rowop op;
    const int32_t *tokens;
    const float *src;    /* NORM: input rows */
    float *dst;          /* NORM: output rows */
    const float *w;      /* NORM: weight */
    const int32_t *rows; /* NORM: optional compact row list (head rows) */
    int n, chunk;
} eng__row_job;

static void eng__rmsnorm(const float *x, const float *w, float *y, int d, float eps) {
    double ss = 0;
    for (int i = 0; i < d; i++)
        ss += (double)x[i] * x[i];
    float r = (float)(1.0 / sqrt(ss / d + eps));
    for (int i = 0; i < d; i++)
        y[i] = (x[i] * r) * w[i];
}

static inline void eng__rope_vec(float *v, const float *cs, const float *sn, int h2) {
    for (int j = 0; j < h2; j++) {
        float a = v[j], b = v[j + h2];
        v[j] = a * cs[j] - b * sn[j];
        v[j + h2] = b * cs[j] + a * sn[j];
    }
}

/* g <- silu(g) u for n <= 256 entries, silu(g) = g / (1 + exp(-g)) through
 * the vector exp. The loops run in blocks of 8, which gcc -O2 vectorizes
 * (the same operations per element, so the same bits as scalar code). */
static void eng__swiglu(const eng__kernels *k, float *restrict g, const float *restrict u, int n) {
    float t[256];
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int e = 0; e < 8; e++)
            t[i + e] = -g[i + e];
    for (; i < n; i++)
        t[i] = -g[i];
    k->exp(t, n);
    for (i = 0; i + 8 <= n; i += 8)
        for (int e = 0; e < 8; e++)
            g[i + e] = g[i + e] / (1.0f + t[i + e]) * u[i + e];
    for (; i < n; i++)
        g[i] = g[i] / (1.0f + t[i]) * u[i];
}

static void eng__row_task(void *arg, int task, int tid) {
    (void)tid;
    const eng__row_job *j = arg;
    eng_bctx *c = j->c;
    const eng_model_info *in = c->be->in;
    const int d = in->d_model, hd = in->head_dim, h2 = hd / 2, qd = in->n_head * hd,
              kvd = in->n_kv_head * hd;
    const int r0 = task * j->chunk, r1 = BASE_MIN(j->n, r0 + j->chunk);
    for (int r = r0; r < r1; r++) {
        const int b = r / c->W, i = c->ws + r % c->W; /* compact row -> canvas slot */
        switch (j->op) {
        case ENG__OP_EMBED:
            eng__tensor_row_f32(&c->be->w->embed, j->tokens[b * c->len + i], 0, d,
                                c->x + (int64_t)r * d);
            break;
        case ENG__OP_NORM: {
            int src = j->rows ? j->rows[r] : r;
            eng__rmsnorm(j->src + (int64_t)src * d, j->w, j->dst + (int64_t)r * d, d, in->rms_eps);
            break;
        }
        case ENG__OP_ROPE: {
            const int p = c->pos[b * c->len + i];
            const float *cs = c->cos_t + (int64_t)p * h2, *sn = c->sin_t + (int64_t)p * h2;
            for (int h = 0; h < in->n_head; h++)
                eng__rope_vec(c->q + (int64_t)r * qd + h * hd, cs, sn, h2);
            float *kr = c->kt + (int64_t)r * kvd;
            for (int h = 0; h < in->n_kv_head; h++)
                eng__rope_vec(kr + h * hd, cs, sn, h2);
            const int64_t co = (((int64_t)c->layer * c->B + b) * c->L + i) * kvd;
            memcpy(c->kc + co, kr, (size_t)kvd * sizeof(float));
            memcpy(c->vc + co, c->vt + (int64_t)r * kvd, (size_t)kvd * sizeof(float));
            break;
        }
        case ENG__OP_SWIGLU: {
            float *g = c->gate + (int64_t)r * in->d_ff;
            const float *u = c->up + (int64_t)r * in->d_ff;
            if (c->be->path == ENG__PATH_REF) {
                for (int k = 0; k < in->d_ff; k++)
                    g[k] = (float)(g[k] / (1.0 + exp(-(double)g[k]))) * u[k];
                break;
            }
            for (int k0 = 0; k0 < in->d_ff; k0 += 256)
                eng__swiglu(c->be->k, g + k0, u + k0, BASE_MIN(256, in->d_ff - k0));
            break;
        }
        }
    }
}

static void eng__rows(eng_bctx *c, eng__row_job *j) {
    j->c = c;
    j->chunk = BASE_MAX(1, (j->n + 4 * c->be->nt - 1) / (4 * c->be->nt));
    static const eng__prof_op ops[] = {[ENG__OP_EMBED] = ENG__P_EMBED,
                                       [ENG__OP_NORM] = ENG__P_NORM,
                                       [ENG__OP_ROPE] = ENG__P_ROPE,
                                       [ENG__OP_SWIGLU] = ENG__P_SWIGLU};
    c->pop = ops[j->op];
    eng__prun(c, eng__row_task, j, (j->n + j->chunk - 1) / j->chunk);
}

/* ---- attention ----------------------------------------------------------------------------- */

/* The largest of l[a, b) (-inf when empty), in 8 independent lanes (which
 * gcc -O2 vectorizes; a scalar chain of compares waits on each one). */
static float eng__vmax(const float *l, int a, int b) {
    float m8[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                   -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    int v = a;
    for (; v + 8 <= b; v += 8)
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            m8[j] = l[v + j] > m8[j] ? l[v + j] : m8[j];
    for (; v < b; v++)
        m8[0] = l[v] > m8[0] ? l[v] : m8[0];
    float mx = m8[0];
    for (int j = 1; j < 8; j++)
        mx = m8[j] > mx ? m8[j] : mx;
    return mx;
}

/* s <- the softmax of scale s over the valid entries (the others 0;
 * all_valid: every entry is). Every pass is vectorized: these rows are
 * short (the context) and many (every query row of every head and layer),
 * and their scalar loops were a third of a 0.5B hole step's attention. */
static void eng__attn_softmax(const eng__kernels *k, float *s, const uint8_t *valid, int len,
                              float scale, bool all_valid) {
    /* Loops in blocks of 8 with a scalar tail: gcc -O2 vectorizes those
     * (its cost model leaves a loop of unknown length scalar). */
    int j = 0;
    if (all_valid) {
        for (; j + 8 <= len; j += 8)
            for (int t = 0; t < 8; t++)
                s[j + t] *= scale;
    }
    for (; j < len; j++)
        s[j] = valid[j] ? s[j] * scale : -INFINITY;
    const float mx = eng__vmax(s, 0, len);
    double sums[2] = {0, 0};
    k->softmax_sums(s, s, len, mx, sums); /* in place: each entry is read before it is written */
    const float z = (float)sums[0];
    const float iz = 1.0f / z;
    for (j = 0; j + 8 <= len; j += 8)
        for (int t = 0; t < 8; t++)
            s[j + t] *= iz;
    for (; j < len; j++)
        s[j] *= iz;
}

/* Query rows per attention task: ENG__QC rows of scores in all, shared by
 * the query heads of one K/V head (grouped-query attention). */
static int eng__attn_rows(const eng_model_info *in) {
    return BASE_MAX(1, ENG__QC / (in->n_head / in->n_kv_head));
}

/* One task: the query heads that share K/V head kvh, for a chunk of query
 * rows. Their Q rows are gathered into one matrix so that S = Q K^T and O =
 * S V are one gemm each over K and V instead of one per head (a 0.5B hole
 * step: 7 heads of 34 rows against 545 keys). */
static void eng__attn_task(void *arg, int task, int tid) {
    eng_bctx *c = arg;
    eng_backend *be = c->be;
    const eng_model_info *in = be->in;
    const int hd = in->head_dim, qd = in->n_head * hd, kvd = in->n_kv_head * hd;
    const int g = in->n_head / in->n_kv_head, rq = eng__attn_rows(in);
    const int n_qc = (c->W + rq - 1) / rq;
    const int b = task / (in->n_kv_head * n_qc), kvh = (task / n_qc) % in->n_kv_head,
              qc = task % n_qc;
    const int q0 = qc * rq, nq = BASE_MIN(rq, c->W - q0), len = c->len, h0 = kvh * g;
    const float scale = 1.0f / sqrtf((float)hd);
    const uint8_t *valid = c->valid + (int64_t)b * len;
    const float *K = c->kc + (((int64_t)c->layer * c->B + b) * c->L) * kvd + kvh * hd;
    const float *Vv = c->vc + (((int64_t)c->layer * c->B + b) * c->L) * kvd + kvh * hd;
    const int64_t r0 = (int64_t)b * c->W + q0;
    float *S = c->scores[tid];

    if (be->path == ENG__PATH_REF) {
        for (int hh = 0; hh < g; hh++)
            for (int qi = 0; qi < nq; qi++) {
                float *o = c->att + (r0 + qi) * qd + (h0 + hh) * hd;
                if (!valid[c->ws + q0 + qi]) {
                    memset(o, 0, (size_t)hd * sizeof(float));
                    continue;
                }
                const float *qv = c->q + (r0 + qi) * qd + (h0 + hh) * hd;
                double mx = -INFINITY;
                for (int j = 0; j < len; j++) {
                    if (!valid[j]) {
                        S[j] = -INFINITY;
                        continue;
                    }
                    double s = 0;
                    for (int k = 0; k < hd; k++)
                        s += (double)qv[k] * K[(int64_t)j * kvd + k];
                    S[j] = (float)(s / sqrt((double)hd));
                    mx = fmax(mx, S[j]);
                }
                double z = 0;
                for (int j = 0; j < len; j++)
                    z += valid[j] ? exp(S[j] - mx) : 0.0;
                for (int k = 0; k < hd; k++) {
                    double s = 0;
                    for (int j = 0; j < len; j++)
                        if (valid[j])
                            s += exp(S[j] - mx) * Vv[(int64_t)j * kvd + k];
                    o[k] = (float)(s / z);
                }
            }
        return;
    }

    /* Qg: row hh nq + qi is head h0 + hh of query row qi; after S it holds O. */
    float *Qg = c->qgrp[tid];
    const int n = g * nq;
    for (int hh = 0; hh < g; hh++)
        for (int qi = 0; qi < nq; qi++)
            memcpy(Qg + ((int64_t)hh * nq + qi) * hd, c->q + (r0 + qi) * qd + (h0 + hh) * hd,
                   (size_t)hd * sizeof(float));
    /* S = Q K^T (scaled below), then a masked softmax per row, then O = S V. */
    if (be->path == ENG__PATH_BLAS)
        eng__blas_get()->sgemm(ENG__ROW_MAJOR, ENG__NO_TRANS, ENG__TRANS, n, len, hd, 1.0f, Qg, hd,
                               K, kvd, 0.0f, S, len);
    else
        be->k->gemm(Qg, hd, K, kvd, S, len, n, len, hd, false);
    const bool all_valid = memchr(valid, 0, (size_t)len) == NULL;
    for (int r = 0; r < n; r++) {
        float *s = S + (int64_t)r * len;
        if (!valid[c->ws + q0 + r % nq])
            memset(s, 0, (size_t)len * sizeof(float));
        else
            eng__attn_softmax(be->k, s, valid, len, scale, all_valid);
    }
    if (be->path == ENG__PATH_BLAS)
        eng__blas_get()->sgemm(ENG__ROW_MAJOR, ENG__NO_TRANS, ENG__NO_TRANS, n, hd, len, 1.0f, S,
                               len, Vv, kvd, 0.0f, Qg, hd);
    else
        be->k->pv(S, len, n, len, Vv, kvd, Qg, hd, hd);
    for (int hh = 0; hh < g; hh++)
        for (int qi = 0; qi < nq; qi++)
            memcpy(c->att + (r0 + qi) * qd + (h0 + hh) * hd, Qg + ((int64_t)hh * nq + qi) * hd,
                   (size_t)hd * sizeof(float));
}

/* ---- the pass ---------------------------------------------------------------------------------
 */

/* Runs every layer for the window [ws, we) of each sequence; K/V of the window
 * rows are written to the cache, attention reads the whole cached canvas. */
static base_status eng__run(eng_bctx *c, const eng_batch *bt, int ws, int we) {
    eng_backend *be = c->be;
    const eng_model_info *in = be->in;
    const eng_weights *w = be->w;
    const int d = in->d_model, qd = in->n_head * in->head_dim, kvd = in->n_kv_head * in->head_dim,
              ff = in->d_ff;
    c->n_seq = bt->n_seq;
    c->len = bt->len;
    c->ws = ws;
    c->W = we - ws;
    c->nr = bt->n_seq * c->W;
    const int nr = c->nr;
    const size_t nb = (size_t)bt->n_seq * (size_t)bt->len;

    /* The same pass as one stopped at r_layer: go on from there (x and the
     * cache rows of the layers below are that pass's, nothing ran since). */
    int l0 = 0;
    if (c->r_layer > 0 && c->r_nseq == bt->n_seq && c->r_len == bt->len && c->r_ws == ws &&
        c->r_we == we && memcmp(c->r_tokens, bt->tokens, nb * sizeof(int32_t)) == 0 &&
        memcmp(c->r_valid, c->valid, nb) == 0)
        l0 = c->r_layer;
    c->r_layer = 0;
    eng__row_job rj = {.op = ENG__OP_EMBED, .tokens = bt->tokens, .n = nr};
    if (l0 == 0)
        eng__rows(c, &rj);
    for (int l = l0; l < in->n_layer; l++) {
        if (c->layer_hook)
            c->layer_hook(c->layer_ud, l);
        if (base_flag_get(c->cancel)) {
            c->cached = false;
            if (l > 0) {
                c->r_layer = l;
                c->r_nseq = bt->n_seq;
                c->r_len = bt->len;
                c->r_ws = ws;
                c->r_we = we;
                memcpy(c->r_tokens, bt->tokens, nb * sizeof(int32_t));
                memcpy(c->r_valid, c->valid, nb);
            }
            return BASE_ERR_CANCELLED;
        }
        const eng_layer_w *lw = &w->layers[l];
        c->layer = l;
        rj = (eng__row_job){
            .op = ENG__OP_NORM, .src = c->x, .dst = c->xn, .w = be->attn_norm[l], .n = nr};
        eng__rows(c, &rj);
        {
            const eng_tensor *wm[3] = {&lw->wq, &lw->wk, &lw->wv};
            float *bs[3] = {be->bq[l], be->bk[l], be->bv[l]};
            float *ys[3] = {c->q, c->kt, c->vt};
            const int ld[3] = {qd, kvd, kvd};
            c->pop = ENG__P_QKV;
            eng__mm_multi(c, c->xn, d, nr, 3, wm, bs, ys, ld);
        }
        rj = (eng__row_job){.op = ENG__OP_ROPE, .n = nr};
        eng__rows(c, &rj);
        const int rq = eng__attn_rows(in), n_qc = (c->W + rq - 1) / rq;
        c->pop = ENG__P_ATTN;
        eng__prun(c, eng__attn_task, c, bt->n_seq * in->n_kv_head * n_qc);
        c->pop = ENG__P_O;
        eng__mm(c, c->att, qd, nr, &lw->wo, NULL, c->x, d, true);
        rj = (eng__row_job){
            .op = ENG__OP_NORM, .src = c->x, .dst = c->xn, .w = be->ffn_norm[l], .n = nr};
        eng__rows(c, &rj);
        {
            const eng_tensor *wm[2] = {&lw->w_gate, &lw->w_up};
            float *bs[2] = {NULL, NULL};
            float *ys[2] = {c->gate, c->up};
            const int ld[2] = {ff, ff};
            c->pop = ENG__P_GATEUP;
            eng__mm_multi(c, c->xn, d, nr, 2, wm, bs, ys, ld);
        }
        rj = (eng__row_job){.op = ENG__OP_SWIGLU, .n = nr};
        eng__rows(c, &rj);
        c->pop = ENG__P_DOWN;
        eng__mm(c, c->gate, ff, nr, &lw->w_down, NULL, c->x, d, true);
    }
    return BASE_OK;
}

/* Positions (cumsum(valid) - 1; padding gets 1 as in the reference) and the
 * valid mask of the batch. */
static base_status eng__prepare(eng_bctx *c, const eng_batch *bt) {
    if (bt->n_seq > c->B || bt->len > c->L)
        return BASE_ERR_TOO_LARGE;
    for (int b = 0; b < bt->n_seq; b++) {
        int cum = 0;
        for (int i = 0; i < bt->len; i++) {
            const int k = b * bt->len + i;
            const uint8_t v = bt->valid ? (bt->valid[k] != 0) : 1;
            cum += v;
            c->valid[k] = v;
            c->pos[k] = v ? cum - 1 : 1;
        }
    }
    return BASE_OK;
}

/* Final norm of the gathered compact rows c->hrow[0..n) into xn, then the LM
 * head into out (n, V); padded rows are zeroed. */
static void eng__head(eng_bctx *c, int n, const int32_t *canvas, float *out) {
    eng_backend *be = c->be;
    const int V = be->in->vocab_size;
    eng__row_job rj = {
        .op = ENG__OP_NORM, .src = c->x, .dst = c->xn, .w = be->norm, .rows = c->hrow, .n = n};
    eng__rows(c, &rj);
    c->pop = ENG__P_HEAD;
    eng__mm(c, c->xn, be->in->d_model, n, &be->w->lm_head, NULL, out, V, false);
    for (int i = 0; i < n; i++)
        if (!c->valid[canvas[i]])
            memset(out + (int64_t)i * V, 0, (size_t)V * sizeof(float));
}

static base_status eng__cpu_forward(eng_bctx *c, const eng_batch *bt, const int32_t *rows,
                                    int n_rows, float *logits) {
    base_status st = eng__prepare(c, bt);
    if (st)
        return st;
    c->cached = false;
    if ((st = eng__run(c, bt, 0, bt->len)))
        return st;
    c->cached = true;
    c->c_nseq = bt->n_seq;
    c->c_len = bt->len;
    memcpy(c->c_valid, c->valid, (size_t)bt->n_seq * bt->len);
    /* The canvas index of a full pass is its compact row. */
    const int V = c->be->in->vocab_size;
    for (int i0 = 0; i0 < n_rows; i0 += c->B * c->L) {
        int n = BASE_MIN(n_rows - i0, c->B * c->L);
        memcpy(c->hrow, rows + i0, (size_t)n * sizeof(int32_t));
        eng__head(c, n, rows + i0, logits + (int64_t)i0 * V);
    }
    return BASE_OK;
}

/* ---- step: vocabulary reductions ---------------------------------------------------------------
 *
 * Exact semantics (the CUDA backend and the Python reference reproduce them):
 * l_v = raw logit + logit bias (bias entries added in order; -inf forbids v).
 *
 * ENG_PICK_DREAM (Dream sample_tokens):
 *   1. if T > 0: l_v /= T.
 *   2. top-p (if top_p < 1): sort by (l desc, index asc); with p = softmax(l),
 *      keep the shortest prefix whose cumulative probability exceeds top_p
 *      (the item that crosses is kept, as is item 0); drop the rest (-inf).
 *      Sums in double.
 *   3. top-k (if 0 < top_k < V): keep every v with l_v >= the k-th largest l
 *      (ties kept); drop the rest.
 *   4. p = softmax(l) over the kept set (double sums).
 *   5. T > 0: u = eng_noise_uniform(seed, step, position, 0) with position
 *      the canvas index from positions[]; token = the first v in vocabulary
 *      order whose cumulative p (double) exceeds u (inverse CDF).
 *      T == 0: token = argmax p (lowest index on ties).
 *   prob = p[token]; margin = p(top1) - p(top2); neg_entropy = sum p log(p + 1e-10),
 *   all from this filtered, tempered distribution.
 *
 * ENG_PICK_GUMBEL (LLaDA): top-p / top-k are ignored.
 *   T > 0: token = argmax_v (l_v + T g_v), g_v = -log(-log(u_v)),
 *          u_v = eng_noise_uniform(seed, step, position, v), in double.
 *   T == 0: token = argmax l_v (lowest index on ties).
 *   p = softmax(l) untempered, unfiltered; prob = p[token]; margin and
 *   neg_entropy from that p. */

typedef struct eng__red_job {
    eng_bctx *c;
    const eng_sampling *s;
    const int32_t *positions; /* the chunk's canvas positions */
    eng_row_result *out;
} eng__red_job;

/* Order of top-p: logit descending, then index ascending. */
static inline bool eng__before(const float *l, int32_t x, int32_t y) {
    return l[x] > l[y] || (l[x] == l[y] && x < y);
}

/* Heap with the element that comes last at the root. */
static void eng__sift(int32_t *ix, int root, int end, const float *l) {
    for (;;) {
        int child = 2 * root + 1;
        if (child >= end)
            return;
        if (child + 1 < end && eng__before(l, ix[child], ix[child + 1]))
            child++;
        if (!eng__before(l, ix[root], ix[child]))
            return;
        int32_t t = ix[root];
        ix[root] = ix[child];
        ix[child] = t;
        root = child;
    }
}

/* In-place heapsort of ix[0..n) into eng__before order; no allocation (glibc's
 * qsort may malloc, and nothing is allocated inside a step). */
static void eng__sort_desc(int32_t *ix, int n, const float *l) {
    for (int i = n / 2 - 1; i >= 0; i--)
        eng__sift(ix, i, n, l);
    for (int end = n - 1; end > 0; end--) {
        int32_t t = ix[0];
        ix[0] = ix[end];
        ix[end] = t;
        eng__sift(ix, 0, end, l);
    }
}

/* k-th largest of l[0..V) via a size-k min-heap in h. */
static float eng__kth_largest(const float *l, int V, int k, float *h) {
    int n = 0;
    for (int v = 0; v < V; v++) {
        float x = l[v];
        if (n < k) {
            int i = n++;
            while (i > 0 && h[(i - 1) / 2] > x) {
                h[i] = h[(i - 1) / 2];
                i = (i - 1) / 2;
            }
            h[i] = x;
        } else if (x > h[0]) {
            int i = 0;
            for (;;) {
                int a = 2 * i + 1, b = a + 1, m = i;
                float mv = x;
                if (a < n && h[a] < mv)
                    m = a, mv = h[a];
                if (b < n && h[b] < mv)
                    m = b, mv = h[b];
                if (m == i)
                    break;
                h[i] = h[m];
                i = m;
            }
            h[i] = x;
        }
    }
    return h[0];
}

/* Softmax of a vocabulary row l (V logits, -inf allowed): p_v = exp(l_v - max)
 * (vector exp, float; p may not alias l), and what a row result needs of it:
 * z = sum p in double, the first index of the largest logit, the two largest
 * p (1, and exp of the second largest logit: equal maxima give both 1), and
 * sum p (l - max), from which the entropy follows without a log per entry:
 * ln p_v = l_v - max up to the exp's rounding (~2e-7). The max, a scan to
 * the argmax, the second max, then one pass of the kernels' softmax_sums.
 * It was eight scalar passes, 7.7 % of a 0.5B hole step. */
typedef struct eng__sm {
    double z, pl;   /* sum p, sum p (l - max) over p > 0 */
    float p1, p2;   /* largest p (1 unless every l is -inf) and second largest */
    int32_t argmax; /* first index of the largest logit */
} eng__sm;

static void eng__softmax_stats(const eng__kernels *k, const float *l, float *p, int V,
                               eng__sm *st) {
    const float mx = eng__vmax(l, 0, V);
    if (mx == -INFINITY) { /* every id forbidden by the bias */
        memset(p, 0, (size_t)V * sizeof(float));
        *st = (eng__sm){0, 0, 0, 0, 0};
        return;
    }
    int am = 0;
    while (l[am] != mx)
        am++;
    const float l2 = BASE_MAX(eng__vmax(l, 0, am), eng__vmax(l, am + 1, V));
    float e2 = l2 - mx;
    k->exp(&e2, 1);
    double sums[2] = {0, 0};
    k->softmax_sums(l, p, V, mx, sums);
    st->z = sums[0];
    st->pl = sums[1];
    st->p1 = p[am];
    st->p2 = l2 == -INFINITY ? 0.0f : e2;
    st->argmax = am;
}

/* Fills r from the unnormalised probabilities e and their statistics. */
static void eng__finish_row(const float *e, const eng__sm *st, int32_t token, eng_row_result *r) {
    if (!(st->z > 0)) { /* every id forbidden by the bias */
        *r = (eng_row_result){token, 0.0f, 0.0f, 0.0f};
        return;
    }
    const double iz = 1.0 / st->z;
    r->token = token;
    r->prob = (float)(e[token] * iz);
    r->margin = (float)(((double)st->p1 - st->p2) * iz);
    /* sum p ln p with p = e / z and ln e = l - max */
    r->neg_entropy = (float)(st->pl * iz - log(st->z));
}

static void eng__red_task(void *arg, int task, int tid) {
    const eng__red_job *j = arg;
    eng_bctx *c = j->c;
    const eng_sampling *s = j->s;
    const int V = c->be->in->vocab_size;
    const float *raw = c->logits + (int64_t)task * V;
    const uint32_t position = (uint32_t)j->positions[task];
    float *lb = c->vb0[tid], *e = c->vb1[tid];
    int32_t *ix = c->ib[tid];
    const eng__kernels *kern = c->be->k;
    /* The logits are copied only when something below changes them. */
    const bool changes =
        s->n_bias > 0 || (s->pick != ENG_PICK_GUMBEL && (s->temperature > 0 || s->top_p < 1.0f ||
                                                         (s->top_k > 0 && s->top_k < V)));
    const float *l = raw;
    if (changes) {
        memcpy(lb, raw, (size_t)V * sizeof(float));
        for (int i = 0; i < s->n_bias; i++)
            lb[s->bias[i].id] += s->bias[i].bias;
        l = lb;
    }
    eng_row_result *r = &j->out[task];
    eng__sm st;

    if (s->pick == ENG_PICK_GUMBEL) {
        int32_t best = 0;
        double bv = -INFINITY;
        for (int v = 0; v < V; v++) {
            if (l[v] == -INFINITY)
                continue;
            double x = l[v];
            if (s->temperature > 0) {
                double u = eng_noise_uniform(s->seed, s->step, position, (uint32_t)v);
                x += s->temperature * -log(-log(u));
            }
            if (x > bv) {
                bv = x;
                best = v;
            }
        }
        eng__softmax_stats(kern, l, e, V, &st);
        eng__finish_row(e, &st, best, r);
        return;
    }

    if (s->temperature > 0)
        for (int v = 0; v < V; v++)
            lb[v] /= s->temperature;
    if (s->top_p < 1.0f) {
        eng__softmax_stats(kern, l, e, V, &st);
        /* Candidates: every v with e_v >= tau, tau lowered until their mass
         * exceeds top_p; only those need sorting. */
        const double target = (double)s->top_p * st.z;
        double tau = 0.5;
        int n = 0;
        for (;;) {
            double mass = 0;
            n = 0;
            for (int v = 0; v < V; v++)
                if (e[v] >= tau) {
                    mass += e[v];
                    ix[n++] = v;
                }
            if (mass > target || tau < 1e-300 || n == V)
                break;
            tau *= 0.125;
        }
        eng__sort_desc(ix, n, l);
        double cum = 0;
        int keep = n;
        for (int k = 0; k < n; k++) {
            cum += e[ix[k]];
            if (cum > target) {
                keep = k + 1;
                break;
            }
        }
        /* Mark kept ids with a sentinel in e, drop everything else. */
        for (int k = 0; k < keep; k++)
            e[ix[k]] = -1.0f;
        for (int v = 0; v < V; v++)
            if (e[v] != -1.0f)
                lb[v] = -INFINITY;
    }
    if (s->top_k > 0 && s->top_k < V) {
        float kth = eng__kth_largest(l, V, s->top_k, e);
        for (int v = 0; v < V; v++)
            if (l[v] < kth)
                lb[v] = -INFINITY;
    }
    eng__softmax_stats(kern, l, e, V, &st);
    int32_t token = st.argmax;
    if (s->temperature > 0) {
        const double target = eng_noise_uniform(s->seed, s->step, position, 0) * st.z;
        double cum = 0;
        token = -1;
        for (int v = 0; v < V; v++) {
            if (e[v] <= 0)
                continue;
            cum += e[v];
            token = v;
            if (cum > target)
                break;
        }
        if (token < 0)
            token = 0;
    }
    eng__finish_row(e, &st, token, r);
}

static base_status eng__cpu_step(eng_bctx *c, const eng_batch *bt, const eng_step_req *req,
                                 eng_row_result *out) {
    base_status st = eng__prepare(c, bt);
    if (st)
        return st;
    int ws = 0, we = bt->len;
    if (req->mode == ENG_STEP_WINDOW) {
        if (!c->cached || c->c_nseq != bt->n_seq || c->c_len != bt->len ||
            memcmp(c->c_valid, c->valid, (size_t)bt->n_seq * bt->len) != 0)
            return BASE_ERR_STATE;
        ws = req->win_start;
        we = req->win_end;
    } else {
        c->cached = false;
    }
    if ((st = eng__run(c, bt, ws, we)))
        return st;
    if (req->mode == ENG_STEP_FULL) {
        c->cached = true;
        c->c_nseq = bt->n_seq;
        c->c_len = bt->len;
        memcpy(c->c_valid, c->valid, (size_t)bt->n_seq * bt->len);
    }
    const bool shift = c->be->in->shift_logits;
    const int len = bt->len, W = we - ws;
    int32_t canvas[ENG__LCH];
    const int n_ch = (req->n_pos + ENG__LCH - 1) / ENG__LCH,
              ch = n_ch > 0 ? (req->n_pos + n_ch - 1) / n_ch : 1;
    for (int i0 = 0; i0 < req->n_pos; i0 += ch) {
        const int n = BASE_MIN(ch, req->n_pos - i0);
        for (int k = 0; k < n; k++) {
            const int p = req->positions[i0 + k], b = p / len, i = p % len;
            const int row = shift && i > 0 ? i - 1 : i;
            c->hrow[k] = b * W + (row - ws);
            canvas[k] = b * len + row;
        }
        eng__head(c, n, canvas, c->logits);
        eng__red_job rj = {c, &req->sampling, req->positions + i0, out + i0};
        c->pop = ENG__P_SAMPLE;
        eng__prun(c, eng__red_task, &rj, n);
    }
    return BASE_OK;
}

/* ---- context K/V kept between requests -------------------------------------------- */

static base_status eng__cpu_kv_export(eng_bctx *c, int n, float *out) {
    const eng_model_info *in = c->be->in;
    const size_t kvd = (size_t)in->n_kv_head * in->head_dim;
    if (!c->cached || n > c->c_len)
        return BASE_ERR_STATE;
    for (int i = 0; i < n; i++)
        for (int l = 0; l < in->n_layer; l++) {
            const size_t co = (((size_t)l * c->B) * c->L + i) * kvd;
            float *o = out + ((size_t)i * in->n_layer + l) * 2 * kvd;
            memcpy(o, c->kc + co, kvd * sizeof(float));
            memcpy(o + kvd, c->vc + co, kvd * sizeof(float));
        }
    return BASE_OK;
}

/* K was rotated for position p_old; R(p_new) = R(p_new - p_old) R(p_old), so
 * rotating by the difference gives the new position's K (RoPE is a
 * rotation per pair (j, j + hd/2)). */
static base_status eng__cpu_kv_import(eng_bctx *c, const eng_batch *bt, const float *saved,
                                      const int32_t *src, int n_saved) {
    (void)n_saved;
    c->r_layer = 0; /* the cache no longer holds a stopped pass's rows */
    const eng_model_info *in = c->be->in;
    const int hd = in->head_dim, h2 = hd / 2;
    const size_t kvd = (size_t)in->n_kv_head * hd;
    if (bt->n_seq > c->B || bt->len > c->L)
        return BASE_ERR_TOO_LARGE;
    float *cs = malloc(sizeof(float) * 2 * (size_t)h2);
    if (!cs)
        return BASE_ERR_NOMEM;
    float *sn = cs + h2;
    for (int i = 0; i < bt->len; i++) {
        if (src[i] < 0)
            continue;
        const int delta = i - src[i];
        for (int j = 0; j < h2; j++) {
            double a = (double)delta * c->be->inv_freq[j];
            cs[j] = (float)cos(a);
            sn[j] = (float)sin(a);
        }
        for (int l = 0; l < in->n_layer; l++) {
            const float *row = saved + ((size_t)src[i] * in->n_layer + l) * 2 * kvd;
            for (int b = 0; b < bt->n_seq; b++) {
                const size_t co = (((size_t)l * c->B + b) * c->L + i) * kvd;
                float *k = c->kc + co;
                memcpy(k, row, kvd * sizeof(float));
                if (delta != 0)
                    for (int h = 0; h < in->n_kv_head; h++)
                        eng__rope_vec(k + h * hd, cs, sn, h2);
                memcpy(c->vc + co, row + kvd, kvd * sizeof(float));
            }
        }
    }
    free(cs);
    c->cached = true;
    c->c_nseq = bt->n_seq;
    c->c_len = bt->len;
    memset(c->c_valid, 1, (size_t)bt->n_seq * bt->len);
    return BASE_OK;
}

static base_status eng__cpu_kv_row(eng_bctx *c, int layer, int b, int i, float *k, float *v) {
    const eng_model_info *in = c->be->in;
    const size_t kvd = (size_t)in->n_kv_head * in->head_dim;
    if (b < 0 || b >= c->B || i < 0 || i >= c->L)
        return BASE_ERR_RANGE;
    const size_t co = (((size_t)layer * c->B + b) * c->L + i) * kvd;
    memcpy(k, c->kc + co, kvd * sizeof(float));
    memcpy(v, c->vc + co, kvd * sizeof(float));
    return BASE_OK;
}

const eng_backend_i eng_backend_cpu = {
    .name = "cpu",
    .init = eng__cpu_init,
    .free = eng__cpu_free,
    .device_desc = eng__cpu_desc,
    .ctx_new = eng__cpu_ctx_new,
    .ctx_free = eng__cpu_ctx_free,
    .forward = eng__cpu_forward,
    .step = eng__cpu_step,
    .set_cancel = eng__cpu_set_cancel,
    .kv_export = eng__cpu_kv_export,
    .kv_import = eng__cpu_kv_import,
    .kv_row = eng__cpu_kv_row,
    .resumable = eng__cpu_resumable,
    .set_layer_hook = eng__cpu_set_layer_hook,
};
