/* engine-private: DiffusionGemma weights and the helpers shared by
 * arch/dgemma.c (config, binding), cpu/dgemma_cpu.c (passes) and
 * sample/entropy_bound.c. */
#ifndef INFILLD_ENGINE_DGEMMA_IMPL_H
#define INFILLD_ENGINE_DGEMMA_IMPL_H

#include "dgemma.h"
#include "engine_impl.h"

typedef struct eng__dg_layer {
    bool global;
    int n_kv, hd;
    eng_tensor in_norm, wq, wk, wv; /* wv.data NULL: V is the raw K projection */
    eng_tensor wo, q_norm, k_norm, post_attn_norm;
    eng_tensor pre_ffn_norm, w_gate, w_up, w_down;
    eng_tensor post_ffn_norm1; /* MoE models: norm of the dense branch */
    eng_tensor router_w, router_scale, per_expert_scale;
    eng_tensor pre_ffn_norm2, post_ffn_norm2;
    eng_tensor exp_gate_up; /* [n_expert * 2 * d_expert, d]: per expert gate rows then up rows;
                             * with exp_up bound (GGUF split ffn_gate_exps / ffn_up_exps):
                             * [n_expert * d_expert, d] of gate rows only */
    eng_tensor exp_up;      /* [n_expert * d_expert, d] or data NULL */
    eng_tensor exp_down;    /* [n_expert * d, d_expert] */
    eng_tensor post_ffn_norm;
    float enc_scalar, dec_scalar;
    uint64_t expert_bytes; /* one expert of this layer (gate, up and down) */
} eng__dg_layer;

typedef struct eng__dg_model {
    eng_dg_info info;
    uint8_t *is_global;
    eng__dg_layer *layers;
    eng_tensor embed, final_norm, lm_head;
    eng_tensor sc_pre_norm, sc_gate, sc_up, sc_down;
    uint64_t expert_bytes_all; /* every expert of every layer */
} eng__dg_model;

/* arch/dgemma.c */
bool eng__dg_is_config(void *cfg /* json_t */);
base_status eng__dg_load_hf(eng_model *m, void *cfg /* json_t */, const char *path, eng_error *err);
/* The same from a GGUF file (general.architecture diffusion-gemma) already
 * mapped into m (m->gg[0], sorted tensors). */
base_status eng__dg_load_gguf(eng_model *m, eng_error *err);
void eng__dg_free(eng__dg_model *dg);
/* arch/model.c: the tokenizer of tokenizer.ggml.* */
eng_tokenizer *eng__gg_tok_new(const eng__gg_file *g, const char *path, int vocab_size,
                               eng_error *err);

/* cpu/dgemma_cpu.c: the backend table a DiffusionGemma model gets (its
 * eng_ctx_new refuses: the passes run through engine/dgemma.h). */
extern const eng_backend_i eng__dg_backend;
eng_backend *eng__dg_backend_new(eng_model *m, eng_error *err);

/* The context's model and sizes (cpu/dgemma_cpu.c). */
const eng__dg_model *eng__dg_ctx_model(const eng_dg_ctx *c);
int eng__dg_ctx_max_rows(const eng_dg_ctx *c);
int eng__dg_ctx_max_cache(const eng_dg_ctx *c);
/* Runs fn over n tasks on the context's compute pool (the sampler's rows). */
void eng__dg_ctx_parallel(eng_dg_ctx *c, eng__task_fn fn, void *arg, int n);

/* The routed experts of one layer alone, for the quantised-expert tests: x
 * [n, d] residual rows -> m [n, d] = Σ_k w_k expert_k(RMSNorm_w(x)) (before
 * post_feedforward_layernorm_2), and the routing: idx, w [n, top_k]. */
base_status eng__dg_moe_run(eng_dg_ctx *c, int layer, const float *x, int n, float *m, int32_t *idx,
                            float *w);

/* One of the model's 2-D matrices alone, as the passes run it: Y[n, W->rows]
 * = X[n, W->cols] W^T with X rows ldx floats apart (the int8 kernels for a
 * block type unless INFILLD_CPU_QUANT=dequant), for the quantised-matrix tests.
 * W must be a tensor of c's model (eng__dg_ctx_model) with W->cols within the
 * context's widest matmul input. */
base_status eng__dg_mm_run(eng_dg_ctx *c, const eng_tensor *W, const float *X, int ldx, int n,
                           float *Y);

/* Key ranges of the three attention regimes (DIFFUSIONGEMMA.md §2.3), for
 * query row q of a pass whose first row sits at cache position L:
 *   encoder: keys [lo, L + q] of the cache (which then holds the pass's rows);
 *   decoder: cached keys [lo, L) plus every canvas row.
 * Sliding layers: encoder lo = max(0, L + q - window + 1); decoder
 * lo = max(0, L - (window - 1)), the same for every canvas query. Global
 * layers: lo = 0. */
int eng__dg_key_lo(bool decoder, bool global, int window, int L, int q);

/* RoPE inverse frequencies of a layer kind: inv[i] for i < hd / 2
 * (rotate-half pairs (i, i + hd/2)); proportional: inv[i] = theta^(-2i/hd) for
 * i < int(partial * hd / 2), 0 after. */
void eng__dg_inv_freq(int hd, float theta, float partial, double *inv);
/* Rotates x (one head of hd) at position pos in place. */
void eng__dg_rope(float *x, int hd, const double *inv, int pos);

#endif
