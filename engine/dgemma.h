/* engine DiffusionGemma: the block-diffusion Gemma-4 family (shared/design/
 * DIFFUSIONGEMMA.md). Not a mask-token model: a causal *encoder* pass writes a
 * K/V cache, a bidirectional *decoder* pass denoises a canvas of uniform-noise
 * tokens against that cache, and the entropy-bound sampler decides what to
 * keep. The model is loaded by eng_model_load like every family
 * (info->family == ENG_FAMILY_DIFFUSION_GEMMA); eng_ctx_new/eng_step do not
 * apply to it, its passes and sampler are here. Independent of the tokenizer
 * kind: ids in, ids out. Not thread-safe: one eng_dg_ctx per worker. */
#ifndef INFILLD_ENGINE_DGEMMA_H
#define INFILLD_ENGINE_DGEMMA_H

#include "engine.h"

#define ENG_DG_MAX_STOP 8

/* Hyper-parameters as read from config.json (text_config) and
 * generation_config.json. */
typedef struct eng_dg_info {
    int n_layer, d_model, n_head, vocab_size;
    /* Ids [0, n_token_ids) have a token; real checkpoints pad the embedding
     * with rows above the tokenizer's last id. The sampler never draws those. */
    int n_token_ids;
    int n_kv_sliding, n_kv_global; /* K/V heads per layer kind */
    int hd_sliding, hd_global;     /* head dims per layer kind */
    int d_ff;                      /* dense GeGLU width */
    bool moe;                      /* enable_moe_block */
    int n_expert, top_k, d_expert; /* MoE: experts, used per token, expert GeGLU width */
    bool k_eq_v;                   /* attention_k_eq_v: global layers use raw K as V */
    int sliding_window;
    float theta_sliding, theta_global;
    float partial_rotary; /* global layers: fraction of head_dim rotated (proportional) */
    float rms_eps;
    float softcap; /* final logit softcap; 0 = none */
    float embed_scale;
    bool self_cond; /* the decoder's self-conditioning MLP is present */
    int canvas_len;
    const uint8_t *is_global; /* [n_layer] */
    int32_t bos_id, eos_id, pad_id;
    int32_t stop_ids[ENG_DG_MAX_STOP];
    int n_stop;
    /* sampler defaults (generation_config.json, else the published defaults) */
    int eb_max_steps;
    float eb_t_min, eb_t_max, eb_entropy_bound;
    int eb_stability;
    float eb_confidence;
} eng_dg_info;

/* NULL when the model is not a DiffusionGemma model. */
const eng_dg_info *eng_dg_get_info(const eng_model *m);

/* What the weights and a context cost (infilld doctor). The K/V cache is F32,
 * K and V per layer and position, every position kept on the sliding layers
 * too, and V stored even where it equals K (attention_k_eq_v). */
typedef struct eng_dg_memory {
    uint64_t expert_bytes_all;   /* every expert of every layer (0 without MoE) */
    uint64_t expert_bytes_token; /* top_k experts of every layer: one token's expert reads */
    uint64_t expert_bytes_one;   /* one expert (gate, up, down), the largest layer's */
    uint64_t dense_bytes;        /* the other weights (weight_bytes - expert_bytes_all) */
    char expert_types[64];       /* the expert tensors' types, e.g. "Q4_K, Q6_K" */
    int n_sliding, n_global;     /* layers of each kind */
    uint64_t kv_token_sliding;   /* K + V bytes per token of one sliding layer */
    uint64_t kv_token_global;    /* ... of one global layer */
    uint64_t kv_token;           /* per token over every layer */
} eng_dg_memory;
/* false when m is not a DiffusionGemma model. */
bool eng_dg_memory_info(const eng_model *m, eng_dg_memory *out);

typedef struct eng_dg_ctx eng_dg_ctx;

/* The bytes eng_dg_ctx_new(m, max_cache, max_rows) allocates: the K/V cache
 * and the scratch of its passes (what its memory check compares). */
void eng_dg_ctx_bytes(const eng_model *m, int max_cache, int max_rows, uint64_t *kv,
                      uint64_t *scratch);

/* A K/V cache of up to max_cache positions (prompt + committed canvases) and
 * scratch for passes of up to max_rows tokens (the canvas; longer encoder
 * inputs are run in pieces). Refuses with BASE_ERR_NOMEM and a message with
 * the sizes when the cache and scratch do not fit the memory available. */
eng_dg_ctx *eng_dg_ctx_new(eng_model *m, int max_cache, int max_rows, eng_error *err);
void eng_dg_ctx_free(eng_dg_ctx *c);
int eng_dg_cache_len(const eng_dg_ctx *c);
/* Forgets cached positions >= len (len <= current length). */
void eng_dg_cache_truncate(eng_dg_ctx *c, int len);
void eng_dg_set_cancel(eng_dg_ctx *c, const volatile int *flag);

/* Encoder pass: ids at positions [cache_len, cache_len + n), causal (sliding
 * layers: the last sliding_window positions), encoder layer scalars; appends
 * their K/V to the cache. logits (optional, n * vocab) receives the head's
 * softcapped logits of every row. */
base_status eng_dg_encode(eng_dg_ctx *c, const int32_t *ids, int n, float *logits);

/* Decoder pass over a canvas of n <= max_rows ids at positions
 * [cache_len, cache_len + n): bidirectional over the canvas, reading (never
 * writing) the cache; sliding layers see only the last sliding_window - 1
 * cached positions. sc (optional, n * vocab) are the previous step's
 * temperature-scaled logits for self-conditioning. Writes n * vocab
 * softcapped, unshifted logits. */
base_status eng_dg_decode(eng_dg_ctx *c, const int32_t *canvas, int n, const float *sc,
                          float *logits);

/* Counters of the MoE expert grouping since the context was made. */
typedef struct eng_dg_stats {
    uint64_t expert_calls;      /* (layer, expert) groups run */
    uint64_t expert_rows;       /* token rows through experts */
    uint64_t expert_bytes_read; /* expert weight bytes read */
    uint64_t expert_bytes_used; /* bytes of the experts used (each once per pass) */
    uint64_t expert_bytes_all;  /* bytes of every expert (what an ungrouped pass reads) */
} eng_dg_stats;
void eng_dg_get_stats(const eng_dg_ctx *c, eng_dg_stats *s);

/* ---- the entropy-bound sampler (DIFFUSIONGEMMA.md §3) ---------------------------
 * Noise: all draws are eng_noise_uniform(seed, step, position, v) with
 *   step = canvas * (max_steps + 1) + k, k = 0 for the canvas's initial noise,
 *   k = s (1..max_steps) for denoising step s; position = canvas slot.
 *   The draw from softmax(z) is Gumbel-max: argmax_v z_v - log(-log u(step, pos, v)).
 *   A uniform vocabulary id (initial noise, re-noising) is
 *   floor(u(step | 0x80000000, pos, 0) * n_token_ids), and the argmax, the
 *   draw and the entropy range over ids [0, n_token_ids) only (the rows without
 *   a token have no text: they would fail to detokenize). */

typedef enum eng_eb_stop {
    ENG_EB_STOP_STEPS = 0, /* the step cap ran out */
    ENG_EB_STOP_CONFIDENT, /* argmax stable and mean entropy below the threshold */
} eng_eb_stop;

typedef struct eng_eb_params {
    int max_steps;       /* N: step cap, also the temperature schedule length */
    float t_min, t_max;  /* temperature at the last and first step */
    float entropy_bound; /* joint-entropy budget (nats) */
    int stability;       /* argmax unchanged this many consecutive steps; 0 = off */
    float confidence;    /* mean entropy threshold of the adaptive stop */
    int max_new_tokens;  /* rounded up to whole canvases */
    int canvas_len;      /* 0 = the model's */
    uint64_t seed;
    const int32_t *stop_ids; /* NULL = the model's */
    int n_stop;
    bool self_cond;             /* feed the previous step's scaled logits back */
    const volatile int *cancel; /* checked between steps */
    /* Optional: called after each step with the argmax canvas (pinned ids at
     * pinned positions). */
    void (*progress)(void *ud, int canvas, int step, const int32_t *argmax, int n);
    void *progress_ud;
    /* Optional: called before each decoder pass with the canvas it reads. */
    void (*canvas_cb)(void *ud, int canvas, int step, const int32_t *x, int n);
    /* Pinned positions (the suffix-pinning infill mode, DIFFUSIONGEMMA.md §4.1 (b)):
     * pin[k] >= 0 fixes output position k (canvas k / canvas_len, slot
     * k % canvas_len) to that id, -1 leaves it free; positions >= n_pin are
     * free. A pinned position holds its id in the initial canvas and after
     * every step (never drawn, never re-noised) and in the committed canvas; it
     * spends none of the entropy bound and is left out of the stability check,
     * the mean entropy of the confident stop (over the free positions; none
     * free: 0) and the stop-id search (a stop id at a free position pads the
     * free positions after it; pinned ones keep their ids). */
    const int32_t *pin;
    int n_pin;
} eng_eb_params;

/* The model's defaults. */
void eng_eb_params_default(const eng_model *m, eng_eb_params *p);

typedef struct eng_eb_result {
    int32_t *tokens; /* malloc'ed, n_tokens = n_canvases * canvas_len (pad after EOS) */
    int n_tokens;
    int n_text; /* tokens before the first stop id */
    int n_canvases;
    int steps_run; /* decoder passes */
    bool hit_stop; /* a stop id ended generation */
    eng_eb_stop last_stop;
    double ms_encode, ms_decode, ms_sample;
} eng_eb_result;

/* Encodes the prompt into c's cache (which must be empty or hold earlier
 * context to continue), then denoises canvas after canvas, committing the
 * argmax canvas and re-encoding it, until a stop id or max_new_tokens. */
base_status eng_eb_generate(eng_dg_ctx *c, const int32_t *prompt, int n_prompt,
                            const eng_eb_params *p, eng_eb_result *res);
void eng_eb_result_free(eng_eb_result *r);

#endif
