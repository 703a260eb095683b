/* engine: diffusion language models — loading, tokenizer, forward pass, step.
 *
 * Knows tensors and tokens, not LSP or editors. One eng_model is shared
 * read-only; an eng_ctx (K/V cache + scratch on the backend) is owned by the
 * single worker thread that uses it. Nothing here is thread-safe unless said. */
#ifndef INFILLD_ENGINE_H
#define INFILLD_ENGINE_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

/* Errors from files and models carry a message naming the file and tensor. */
typedef struct eng_error {
    base_status status;
    char msg[512];
} eng_error;

/* ---- model ---------------------------------------------------------------- */

typedef enum eng_family {
    ENG_FAMILY_DREAM = 0,       /* DreamModel: Dream, Dream-Coder, DreamOn, DiffuCoder */
    ENG_FAMILY_OPEN_DCODER,     /* Qwen2ForCausalLM run bidirectionally, with a mask token */
    ENG_FAMILY_LLADA,           /* LLaDAModelLM, OLMo tensor names */
    ENG_FAMILY_DIFFUSION_GEMMA, /* DiffusionGemmaForBlockDiffusion: uniform-state block
                                   diffusion, no mask token; runs through dgemma.h */
} eng_family;

/* Storage types of weights. The block types (GGUF files only) follow ggml's
 * published layouts: Q8_0/Q4_0 blocks of 32, the K-quants super-blocks of 256. */
typedef enum eng_dtype {
    ENG_F32 = 0,
    ENG_F16,
    ENG_BF16,
    ENG_Q8_0,
    ENG_Q4_0,
    ENG_Q4_K,
    ENG_Q5_K,
    ENG_Q6_K,
} eng_dtype;

/* "F32", "BF16", "Q4_K", ... */
const char *eng_dtype_name(eng_dtype t);

/* The annealed EOS/pad penalty's range (docs/SAMPLERS.md §4), wherever one is given. */
#define ENG_EOS_PENALTY_MAX 100.0f
/* The engine's batch limit: the most candidates one request samples, and so
 * the most a model folder or the automaticCandidates setting may ask of an
 * automatic request. */
#define ENG_DIFF_MAX_CANDIDATES 16

typedef struct eng_model_info {
    eng_family family;
    const char *arch; /* config.json architectures[0], borrowed */
    int n_layer;
    int d_model; /* hidden size */
    int n_head;
    int n_kv_head;
    int head_dim;
    int d_ff;       /* intermediate size */
    int vocab_size; /* rows of the embedding / LM head */
    float rope_theta;
    float rms_eps;
    bool shift_logits; /* token i is predicted by output row i-1 (row 0 for i = 0) */
    bool tied_head;    /* LM head is the embedding matrix */
    bool qkv_bias;
    eng_dtype dtype;      /* dtype of the large matrices as stored in the file (the
                             embedding's; a quantised file may mix types per tensor) */
    bool gguf;            /* loaded from a GGUF file */
    char quant_types[64]; /* every storage type among the weights, "Q4_K+Q6_K+F32" */
    int32_t mask_id;
    int32_t bos_id; /* -1 when the model has none */
    int32_t eos_id;
    int32_t pad_id;
    int32_t expand_id; /* DreamOn <|expand|>; -1 when absent */
    float eos_penalty; /* generation_config.json "eos_penalty": the model's default annealed
                          EOS/pad penalty (docs/SAMPLERS.md §4); 0 when absent */
    int candidates;    /* generation_config.json "candidates": how many candidates an
                          automatic request samples by default (1..ENG_DIFF_MAX_CANDIDATES;
                          the planner halves them to fit its budget); 0 when absent */
    int max_context;   /* usable context in tokens (prompt + hole): 2048 for the Dream
                          family (its README's limit; less if max_position_embeddings is
                          smaller), else min(max_position_embeddings
                          or max_sequence_length, 4096) */
    uint64_t weight_bytes;
    uint64_t resident_bytes; /* mapped weight files + weights copied at load (LLaDA GGUF
                                Q/K rows): what the model keeps in memory, without the
                                backend's per-context K/V cache and scratch */
} eng_model_info;

typedef struct eng_model eng_model;

/* Load progress: bytes done of total; called from the loading thread. */
typedef void (*eng_progress_fn)(void *ud, uint64_t done, uint64_t total);

typedef enum eng_device { ENG_DEVICE_AUTO = 0, ENG_DEVICE_CPU, ENG_DEVICE_CUDA } eng_device;

typedef struct eng_load_opts {
    eng_device device;
    int n_threads;            /* CPU compute threads; 0 = number of cores */
    int32_t mask_token;       /* override: -1 = from the model's files */
    eng_progress_fn progress; /* optional */
    void *progress_ud;
} eng_load_opts;

void eng_load_opts_default(eng_load_opts *o);

/* Loads a model directory (config.json, *.safetensors or an index, tokenizer
 * files). Returns NULL and fills err on failure. */
eng_model *eng_model_load(const char *dir, const eng_load_opts *opts, eng_error *err);
void eng_model_free(eng_model *m); /* NULL-safe */
/* NULL while the model's weight files are as loaded; else the path of one
 * that was truncated or rewritten in place while mapped (reads of its lost
 * pages gave zeros, or its bytes changed, so results computed since are
 * garbage and the model must be unloaded).
 * Deleting or replacing a file keeps the mapped one and is not damage. */
const char *eng_model_files_damaged(const eng_model *m);
const eng_model_info *eng_model_get_info(const eng_model *m);
/* Name of the backend actually in use: "cpu" or "cuda". */
const char *eng_model_backend_name(const eng_model *m);
/* One line about the CUDA devices for `infilld doctor` (name, compute
 * capability, free/total memory, driver and runtime versions), or why none is
 * usable (also when built without CUDA). Returns true when a device is usable. */
bool eng_cuda_describe(char *buf, size_t len);
/* The CPU kernels chosen at run time for this machine ("AVX-512", "AVX2+FMA",
 * "portable"). */
const char *eng_cpu_kernels_name(void);
/* Whether BF16 weight matmuls run on the AMX tile unit here: the AVX-512
 * kernels are chosen, the CPU has AMX-BF16, the OS grants the tile state, and
 * INFILLD_CPU_AMX is not "0". */
bool eng_cpu_amx(void);
/* Human-readable description of the device ("cpu (AVX2+FMA, 2 threads)"). */
const char *eng_model_device_desc(const eng_model *m);

/* ---- tokenizer -------------------------------------------------------------- */

typedef struct eng_tokenizer eng_tokenizer;

/* The model's tokenizer, borrowed. */
const eng_tokenizer *eng_model_tokenizer(const eng_model *m);
/* Loads tokenizer.json, or vocab.json + merges.txt (+ added_tokens.json,
 * tokenizer_config.json), from dir. */
eng_tokenizer *eng_tokenizer_load(const char *dir, eng_error *err);
void eng_tokenizer_free(eng_tokenizer *t);

/* Encodes user text as plain text: strings that spell special tokens are NOT
 * turned into special ids (HF split_special_tokens=True). Invalid UTF-8 bytes
 * are encoded through their byte-level tokens. Writes ids into a malloc'ed
 * array owned by the caller. Thread-safe, like eng_detokenize: a loaded
 * tokenizer may be used from several threads at once. */
base_status eng_tokenize(const eng_tokenizer *t, const char *text, size_t len, int32_t **ids,
                         size_t *n_ids);
/* Decodes ids to bytes (exact byte-level decoding). Special tokens are written
 * as their text unless skip_special. Caller frees *out. */
base_status eng_detokenize(const eng_tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                           char **out, size_t *len);
/* Text of one token as bytes (not NUL-terminated); NULL for an unknown id. */
const char *eng_token_bytes(const eng_tokenizer *t, int32_t id, size_t *len);
/* Id of an added/special token by its content, or -1. */
int32_t eng_token_special_id(const eng_tokenizer *t, const char *content);
/* True for an added token (special or not, e.g. Qwen's <|fim_suffix|>): text
 * that the model's control vocabulary spells, never code. */
bool eng_token_is_added(const eng_tokenizer *t, int32_t id);
size_t eng_tokenizer_vocab_size(const eng_tokenizer *t);

/* ---- context: batch canvas + K/V cache --------------------------------------
 * A context holds up to max_batch sequences of up to max_len tokens each. The
 * canvas is row-major tokens[b * max_len + i]. `valid` marks real slots (1) vs
 * padding (0); positions are cumsum(valid) - 1 and padded query rows produce
 * zeros. Attention is fully bidirectional. */

typedef struct eng_ctx eng_ctx;

eng_ctx *eng_ctx_new(eng_model *m, int max_batch, int max_len, eng_error *err);
void eng_ctx_free(eng_ctx *c);

typedef struct eng_batch {
    int n_seq;             /* <= max_batch */
    int len;               /* canvas length used, <= max_len (same for every sequence) */
    const int32_t *tokens; /* [n_seq * len] */
    const uint8_t *valid;  /* [n_seq * len], NULL = all valid */
} eng_batch;

/* Full forward over every position of the batch. Refreshes the context's K/V
 * cache for all positions. Writes raw (unshifted) logits of the output rows
 * listed in rows[] (flattened b * len + i) into logits[n_rows * vocab_size].
 * n_rows may be 0 (cache fill only). */
base_status eng_forward(eng_ctx *c, const eng_batch *batch, const int32_t *rows, int n_rows,
                        float *logits);

/* ---- step: forward + vocabulary reductions -------------------------------- */

/* The exact semantics of both picks (order of bias, temperature, top-p, top-k,
 * the noise used, tie-breaking) are written out above eng__red_task in
 * engine/cpu/backend_cpu.c; every backend and the test references follow them. */
typedef enum eng_pick {
    ENG_PICK_DREAM = 0, /* T scaling → top-p → top-k → softmax; sample or argmax; stats from the
                           filtered, tempered distribution (Dream sample_tokens) */
    ENG_PICK_GUMBEL,    /* LLaDA: argmax(l + T·g), g ~ Gumbel(0,1); prob from the unfiltered,
                           untempered softmax */
} eng_pick;

typedef struct eng_logit_bias {
    int32_t id;
    float bias; /* added to the raw logit; -INFINITY forbids the id */
} eng_logit_bias;

typedef struct eng_sampling {
    eng_pick pick;
    float temperature; /* 0 = argmax */
    float top_p;       /* 1 = off */
    int top_k;         /* 0 = off */
    /* Counter-based noise: the uniform for (row, vocab index v) is
     * eng_noise_uniform(seed, step, position, v) so that every backend and the
     * test reference draw the same numbers. */
    uint64_t seed;
    uint32_t step;
    const eng_logit_bias *bias; /* applied before everything else */
    int n_bias;
} eng_sampling;

/* What leaves the device for each asked-for position. */
typedef struct eng_row_result {
    int32_t token;     /* argmax or sampled token */
    float prob;        /* probability of token (per the pick's distribution) */
    float margin;      /* p(top1) - p(top2) of that distribution */
    float neg_entropy; /* sum_v p_v log(p_v + 1e-10), <= 0; higher = more certain */
} eng_row_result;

/* Which part of the canvas a step recomputes. */
typedef enum eng_step_mode {
    ENG_STEP_FULL = 0, /* full forward; refreshes the whole cache */
    ENG_STEP_WINDOW,   /* recompute only [win_start, win_end) of every sequence, attending
                          to cached K/V elsewhere plus its own fresh K/V; the cache for the
                          window is overwritten. Requires an earlier FULL step on this
                          canvas layout. */
} eng_step_mode;

typedef struct eng_step_req {
    eng_step_mode mode;
    int win_start, win_end;   /* ENG_STEP_WINDOW only */
    const int32_t *positions; /* [n_pos] canvas positions (b * len + i) to predict; the engine
                                 applies the family's logit shift. In WINDOW mode the output
                                 row each position reads (i - 1 for shifted families, i for
                                 LLaDA; row 0 for i = 0) must lie inside the window, so a
                                 hole-only step of a shifted model uses
                                 win_start = hole_start - 1. Otherwise ERR_INVALID. */
    int n_pos;
    eng_sampling sampling;
} eng_step_req;

base_status eng_step(eng_ctx *c, const eng_batch *batch, const eng_step_req *req,
                     eng_row_result *out /* [n_pos] */);

/* ---- context K/V kept between requests (issue 19 item 2) ------------------------
 * A saved row holds, for every layer in order, K (after RoPE, at the row's
 * canvas position) then V: eng_ctx_kv_row_floats floats. Only canvases
 * without padding (every slot valid, position = slot). Backends without
 * these entries (CUDA today) answer BASE_ERR_UNSUPPORTED and the caller
 * runs a full forward as before. */
size_t eng_ctx_kv_row_floats(const eng_ctx *c);
/* Copies sequence 0's cached rows [0, n) of the last pass into out. */
base_status eng_ctx_kv_export(eng_ctx *c, int n, float *out);
/* Fills the cache of every sequence of batch: canvas slot i gets saved row
 * src[i] (of n_saved, saved at position src[i]) with K re-rotated to
 * position i, exact at layer 0 up to float rounding; src[i] < 0 leaves the
 * slot for the WINDOW step that must follow, whose window has to cover every
 * such slot. Marks the cache as holding batch's layout. */
base_status eng_ctx_kv_import(eng_ctx *c, const eng_batch *batch, const float *saved,
                              const int32_t *src, int n_saved);
/* The cached K and V (kv_head * head_dim floats each) of one slot (tests). */
base_status eng_ctx_kv_row(eng_ctx *c, int layer, int b, int i, float *k, float *v);

/* Cancellation flag checked between layers by long forwards (may be NULL). */
void eng_ctx_set_cancel(eng_ctx *c, const volatile int *flag);
/* A pass that its cancel flag stopped before layer l > 0 keeps its hidden
 * rows and the K/V of the layers below l: the next pass with the same batch
 * and window, with nothing else run on (or imported into) the context in
 * between, starts at layer l, bit for bit what the whole pass computes.
 * Returns l, or 0 when nothing can be resumed (CUDA: never). */
int eng_ctx_resumable(const eng_ctx *c);
/* Tests: fn(ud, l) runs before every layer's cancel check (NULL: none). */
void eng_ctx_set_layer_hook(eng_ctx *c, void (*fn)(void *ud, int layer), void *ud);

/* Counter-based uniform in (0, 1): splitmix64 over the four counters (see
 * engine/sample/noise.c for the exact definition shared with the test reference). */
double eng_noise_uniform(uint64_t seed, uint32_t step, uint32_t position, uint32_t v);

#endif
