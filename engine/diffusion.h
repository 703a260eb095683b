/* engine diffusion: prompt layouts and the denoising samplers (MODELS.md §2–§3,
 * formulas in docs/SAMPLERS.md).
 *
 * A sampler turns a prompt (prefix ids, suffix ids, hole size N) into hole
 * tokens by calling a stepper repeatedly: each step predicts (token, prob,
 * margin, neg_entropy) for a list of canvas positions, and the sampler decides
 * which of them to commit. The stepper is normally eng_step on an eng_ctx; tests
 * plug in a scripted one. All memory is allocated by eng_diffuser_new; nothing is
 * malloc'ed inside the denoising loop. Not thread-safe: one diffuser per worker. */
#ifndef INFILLD_ENGINE_DIFFUSION_H
#define INFILLD_ENGINE_DIFFUSION_H

#include "engine.h"

typedef enum eng_alg {
    ENG_ALG_ORIGIN = 0,     /* Dream: ancestral sampling, per-position Bernoulli */
    ENG_ALG_MASKGIT_PLUS,   /* Dream: confidence = P[x0] */
    ENG_ALG_TOPK_MARGIN,    /* Dream: confidence = P(1) - P(2) */
    ENG_ALG_ENTROPY,        /* Dream: confidence = -H(P) */
    ENG_ALG_LOW_CONFIDENCE, /* LLaDA: blocks, Gumbel-max, uniform transfer count */
    ENG_ALG_P2,             /* Open-dCoder: path planning, remasks committed tokens */
    ENG_ALG_THRESHOLD,      /* Fast-dLLM: top-1 plus every confidence >= tau */
    ENG_ALG_FACTOR,         /* Fast-dLLM/dInfer: longest prefix with c_(j) >= 1 - f/(j+1) */
    ENG_ALG_DREAMON,        /* DreamOn: one commit per step, expand / delete */
    ENG_ALG_COUNT_,
    ENG_ALG_DEFAULT = -1, /* eng_alg_default() for the model */
} eng_alg;

const char *eng_alg_name(eng_alg a); /* "entropy"; "?" when out of range */
bool eng_alg_parse(const char *s, eng_alg *out);
/* Per-model default: DreamOn (has expand) → dreamon, LLaDA → low_confidence,
 * Open-dCoder → p2, other Dream family → threshold. */
eng_alg eng_alg_default(const eng_model_info *info);

typedef enum eng_cache_mode {
    ENG_CACHE_EXACT = 0, /* FULL forward every step (the reference) */
    ENG_CACHE_CACHED,    /* FULL at block starts (and every `refresh` steps), else a WINDOW
                            step over the hole only, attending to cached prefix/suffix K/V */
} eng_cache_mode;

/* The stepper: eng_step or a test double with the same contract. */
typedef struct eng_stepper {
    base_status (*step)(void *ud, const eng_batch *batch, const eng_step_req *req,
                        eng_row_result *out);
    void *ud;
} eng_stepper;

/* A stepper running eng_step on ctx (ctx borrowed). */
eng_stepper eng_stepper_ctx(eng_ctx *ctx);

/* Progress after each step (candidate 0): the hole's current tokens, masks
 * still as mask_id. Called on the thread running eng_diffuse; borrowed data. */
typedef struct eng_diff_progress {
    int step;  /* 1-based number of steps run so far */
    int steps; /* planned steps (an estimate for threshold/factor/dreamon) */
    const int32_t *hole;
    int n_hole;
    int masks_left;
} eng_diff_progress;

typedef void (*eng_diff_progress_fn)(void *ud, const eng_diff_progress *p);

typedef struct eng_diff_params {
    eng_alg alg;       /* ENG_ALG_DEFAULT: per model */
    int n_hole;        /* N mask slots (DreamOn: the initial size) */
    int steps;         /* S; 0 = N. Cap for threshold/factor */
    int block;         /* block length; 0 = the whole hole (threshold/factor: 32) */
    float temperature; /* 0 = argmax */
    float top_p;       /* 1 = off (Dream pick only) */
    int top_k;         /* 0 = off (Dream pick only) */
    float alg_temp;    /* Dream: > 0 samples positions without replacement */
    float eps;         /* Dream timestep floor (1e-3) */
    float threshold;   /* tau (0.9) */
    float factor;      /* f (1.0) */
    float eos_penalty; /* lambda >= 0; see docs/SAMPLERS.md; 0 = off */
    int candidates;    /* sequences in the batch (different noise), >= 1 */
    eng_cache_mode mode;
    int refresh;   /* cached: also a FULL step every `refresh` steps; 0 = block starts only */
    uint64_t seed; /* noise seed; batch rows differ through the noise position (b * len + i);
                      DreamOn row c: seed + c */
    int max_steps; /* hard step budget (0 = none); the last step commits every mask */
    /* The first n_hole_init hole slots of every candidate start as these ids
     * instead of masks, committed with probability hole_init_prob (a grown
     * hole that keeps what the last run wrote). Not with DreamOn. */
    const int32_t *hole_init;
    int n_hole_init;
    float hole_init_prob;
    uint64_t deadline_ns; /* base_now_ns() deadline (0 = none); then one final commit step */
    /* The first step costs the deadline nothing (an idle prefill computes it
     * ahead, infill/prefill.c): it is not made the final one for its own
     * predicted cost. */
    bool first_free;
    int dreamon_max_hole;       /* DreamOn: largest hole (0 = max(64, N)) */
    int dreamon_budget;         /* DreamOn: expansions allowed (0 = dreamon_max_hole) */
    const volatile int *cancel; /* checked between steps; non-zero → ERR_CANCELLED */
    /* Predicted wall time (ms) of one step that recomputes `rows` canvas rows
     * attending to `keys` positions and predicts n_pos positions (the
     * planner's cost model, infill/plan.c). With a deadline, a step that
     * would leave no time for the final commit step becomes that final step,
     * so a run ends inside the deadline when the predictions hold. NULL: the
     * deadline is compared with the clock only. */
    double (*step_cost)(void *ud, int rows, int keys, int n_pos);
    /* Cached mode, fixed canvas: when warm_hi > warm_lo the stepper's cache
     * already holds this canvas's K/V (eng_ctx_kv_import) except possibly
     * rows inside [warm_lo, warm_hi); every FULL step becomes a WINDOW step
     * over that range joined with the hole (issue 19 item 2). */
    int warm_lo, warm_hi;
    void *step_cost_ud;
    eng_diff_progress_fn progress;
    void *progress_ud;
} eng_diff_params;

void eng_diff_params_default(eng_diff_params *p);

/* Prompt pieces as token ids (tokenised separately, no special tokens). */
typedef struct eng_diff_prompt {
    const int32_t *prefix;
    int n_prefix;
    const int32_t *suffix;
    int n_suffix;
} eng_diff_prompt;

/* Canvas layout for a family (MODELS §2.1): Dream `[BOS] prefix [MASK]×N suffix
 * [EOS]`; Open-dCoder `prefix [MASK]×N suffix` (an empty prefix gets BOS, or EOS
 * when there is none, so that position 0 is never a mask); LLaDA `[BOS] prefix
 * [MASK]×N suffix`. Writes at most cap ids; returns the length, or -1 when cap
 * is too small. *hole_start receives the first mask position. */
int eng_diff_layout(const eng_model_info *info, const eng_diff_prompt *p, int n_hole, int32_t *out,
                    int cap, int *hole_start);

typedef struct eng_diff_candidate {
    const int32_t *tokens; /* the hole after the last step, before stripping (borrowed) */
    int n_tokens;
    const int32_t *text_ids; /* tokens without EOS/pad/mask/expand/BOS/strip ids (borrowed) */
    int n_text_ids;
    double mean_conf; /* mean probability of the committed tokens */
    int index;        /* batch row of this candidate */
} eng_diff_candidate;

typedef struct eng_diff_result {
    int steps_run; /* denoising steps (forward passes requested) */
    int n_forward_full, n_forward_window;
    long long rows_computed;  /* canvas rows the forwards recomputed (all batch rows) */
    double ms_total, ms_step; /* wall time of the loop and of the stepper calls */
    double ms_predicted;      /* step_cost summed over the steps run (0 without step_cost) */
    int n_candidates;
    eng_diff_candidate cand[ENG_DIFF_MAX_CANDIDATES]; /* ranked: best mean confidence first */
    eng_alg alg;                                      /* the algorithm actually run */
} eng_diff_result;

typedef struct eng_diffuser eng_diffuser;

/* Scratch for up to max_batch sequences of up to max_len canvas tokens. */
eng_diffuser *eng_diffuser_new(const eng_model_info *info, int max_batch, int max_len,
                               eng_error *err);
void eng_diffuser_free(eng_diffuser *d);
/* Extra ids stripped from every candidate's text_ids, like EOS/pad surplus:
 * the tokenizer's added tokens (eng_token_is_added), so that control text such
 * as <|fim_suffix|> proposed inside the hole never reaches a completion. The
 * hole tokens (eng_diff_candidate.tokens) keep them. Copies ids; n = 0 clears. */
base_status eng_diffuser_set_strip(eng_diffuser *d, const int32_t *ids, int n);

/* Runs one infill. The result borrows the diffuser's buffers until the next
 * call. Returns ERR_CANCELLED when the cancel flag was raised (no result),
 * ERR_TOO_LARGE when the prompt does not fit max_len, or a stepper error. */
base_status eng_diffuse(eng_diffuser *d, const eng_stepper *st, const eng_diff_prompt *prompt,
                        const eng_diff_params *params, eng_diff_result *res);

/* Several prompts in one padded batch (one candidate each): every step is one
 * batched step over all of them. The rows' holes are aligned by padding on
 * the left with invalid slots (valid = 0: no key, no position), so each row
 * computes what it would alone. res->cand[b] is prompts[b]'s result (not
 * ranked). params->candidates is ignored; n <= the diffuser's max_batch.
 * ERR_UNSUPPORTED for DreamOn (its canvas grows per row). */
base_status eng_diffuse_multi(eng_diffuser *d, const eng_stepper *st,
                              const eng_diff_prompt *prompts, int n, const eng_diff_params *params,
                              eng_diff_result *res);

/* Canvas length eng_diffuse needs for this prompt and params. */
int eng_diff_canvas_len(const eng_model_info *info, const eng_diff_prompt *p,
                        const eng_diff_params *params);

/* Linear timestep t_j of Dream's schedule, bit-exact with
 * torch.linspace(1, eps, S + 1, dtype=float32). */
float eng_diff_timestep(int j, int steps, float eps);
/* Dream's transfer count for a confidence algorithm: floor(n·(1 − t_{j+1}/t_j))
 * in fp32 for j < S−1, n at the last step. */
int eng_diff_transfer_count(int n_masked, int j, int steps, float eps);

#endif
