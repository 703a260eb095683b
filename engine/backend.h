/* Backend interface (engine-private). The CPU backend always exists; the CUDA
 * backend fills the same table from engine/cuda/backend_cuda.c and kernels/.
 * In the manner of ggml's struct ggml_backend_i: optional entries may be NULL. */
#ifndef INFILLD_ENGINE_BACKEND_H
#define INFILLD_ENGINE_BACKEND_H

#include "engine.h"

/* A weight tensor as mapped from the file: dtype as stored, row-major [rows, cols]
 * (nn.Linear orientation: rows = out features, cols = in features). */
typedef struct eng_tensor {
    const char *name; /* borrowed */
    eng_dtype dtype;
    int64_t rows, cols; /* 1-D tensors: rows = 1, cols = n */
    const void *data;   /* borrowed (mmap) */
} eng_tensor;

typedef struct eng_layer_w {
    eng_tensor attn_norm;            /* (d_model) */
    eng_tensor wq, wk, wv;           /* (n_head*head_dim, d), (n_kv*head_dim, d) x2 */
    eng_tensor bq, bk, bv;           /* biases; data == NULL when the family has none */
    eng_tensor wo;                   /* (d, n_head*head_dim) */
    eng_tensor ffn_norm;             /* (d_model) */
    eng_tensor w_gate, w_up, w_down; /* (d_ff, d), (d_ff, d), (d, d_ff) */
} eng_layer_w;

typedef struct eng_weights {
    const eng_model_info *info;
    eng_tensor embed;    /* (vocab, d) */
    eng_layer_w *layers; /* [n_layer] */
    eng_tensor norm;     /* final RMSNorm (d) */
    eng_tensor lm_head;  /* (vocab, d); same data as embed when tied */
} eng_weights;

typedef struct eng_backend eng_backend; /* backend-private model state */
typedef struct eng_bctx eng_bctx;       /* backend-private context (K/V cache, scratch) */

typedef struct eng_backend_i {
    const char *name;
    /* Prepares weights (upload, repack); w stays valid for the backend's life. */
    eng_backend *(*init)(const eng_weights *w, const eng_load_opts *opts, eng_error *err);
    void (*free)(eng_backend *be);
    const char *(*device_desc)(eng_backend *be);
    eng_bctx *(*ctx_new)(eng_backend *be, int max_batch, int max_len, eng_error *err);
    void (*ctx_free)(eng_bctx *c);
    base_status (*forward)(eng_bctx *c, const eng_batch *batch, const int32_t *rows, int n_rows,
                           float *logits);
    base_status (*step)(eng_bctx *c, const eng_batch *batch, const eng_step_req *req,
                        eng_row_result *out);
    void (*set_cancel)(eng_bctx *c, const volatile int *flag); /* optional */
    /* Context K/V kept between requests (engine.h eng_ctx_kv_*); optional. */
    base_status (*kv_export)(eng_bctx *c, int n, float *out);
    base_status (*kv_import)(eng_bctx *c, const eng_batch *batch, const float *saved,
                             const int32_t *src, int n_saved);
    base_status (*kv_row)(eng_bctx *c, int layer, int b, int i, float *k, float *v);
    /* A pass stopped by its cancel flag before layer l > 0 goes on from l when
     * the next pass has the same batch and window and nothing else used the
     * context since (engine.h eng_ctx_resumable); optional. */
    int (*resumable)(eng_bctx *c);
    void (*set_layer_hook)(eng_bctx *c, void (*fn)(void *ud, int layer), void *ud); /* tests */
} eng_backend_i;

extern const eng_backend_i eng_backend_cpu;
/* NULL when built without CUDA; its init fails cleanly without a usable GPU. */
const eng_backend_i *eng_backend_cuda_get(void);

#endif
