/* infill: the request pipeline — context around the cursor, span (tree-sitter,
 * infill/syntax.h), prompt, the diffusion run on the engine, post-processing,
 * the typing-through cache and the engine worker thread.
 *
 * Independent of the transport: no libuv, no JSON-RPC. The daemon wires the
 * worker's callbacks (called on the worker thread) to uv_async_send. */
#ifndef INFILLD_INFILL_H
#define INFILLD_INFILL_H

#include "base.h"
#include "diffusion.h"
#include "engine.h"
#include "syntax.h"

/* ---- latency: cost model and plan (infill/plan.c) -------------------------- */

/* Predicted step time: scale · (call + row·rows + pair·rows·keys + pos·n_pos) ms. */
typedef struct ifl_cost {
    double call_ms;    /* per step call */
    double row_ms;     /* per recomputed canvas row (every layer's matmuls) */
    double pair_ms;    /* per (recomputed row, attended position) pair */
    double pos_ms;     /* per predicted position (LM head + vocabulary reductions) */
    double scale;      /* observed / predicted over the runs so far (1 at load) */
    int n_obs;         /* runs observed */
    double measure_ms; /* what measuring took */
    bool measured;     /* false: set by hand (tests) or not measured */
} ifl_cost;

double ifl_cost_step_ms(const ifl_cost *c, int rows, int keys, int n_pos);
/* Measures c on st (full forwards of 32 and 128 tokens, window steps of 16
 * rows; needs max_len >= 8). */
base_status ifl_cost_measure(const eng_stepper *st, const eng_model_info *info, int max_len,
                             ifl_cost *c);
/* A run predicted to cost predicted_ms (with the current scale) took
 * observed_ms: moves scale towards the ratio (clamped to 0.25..8). */
void ifl_cost_observe(ifl_cost *c, double predicted_ms, double observed_ms);

#define IFL_PLAN_MIN_CTX 128 /* the planner never cuts the context below this */

typedef struct ifl_plan_in {
    double budget_ms;  /* the request's whole budget */
    double left_ms;    /* what is left of it now (<= 0: passed) */
    int ctx_tokens;    /* prefix + suffix tokens the context may hold */
    int n_hole, n_cap; /* first hole, the most it may grow to */
    int candidates;
    int block;  /* rows a window step recomputes (0 = the hole) */
    int extra;  /* canvas tokens beyond context and hole (specials) */
    int shift;  /* 1 for families whose row i - 1 predicts token i */
    bool exact; /* every step is a full forward */
    /* > 0: the document's context K/V is kept (kvstore.h), so a "full" step
     * recomputes about this many rows instead of the whole canvas */
    int warm_rows;
    /* > 0: an idle prefill already computed this request's first full step
     * with this context and prefilled_cands candidates (infill/prefill.c):
     * the plan keeps both, so that the step matches, and does not count
     * that step's cost. */
    int prefilled_ctx, prefilled_cands;
    /* The plan of an idle prefill: its first full step runs while the user
     * is idle, so only the steps after it must fit the request's budget
     * (the context is sized for those). */
    bool first_free;
    /* first_free: the most that first step may cost (0: no bound). A
     * prefill helps only if it ends within a pause the user makes, so its
     * context is cut to this too. */
    double first_max_ms;
} ifl_plan_in;

typedef struct ifl_plan {
    bool planned; /* a budget applied */
    bool run;     /* false: nothing fits (budget passed): answer null at once */
    double budget_ms, left_ms;
    int ctx_tokens;            /* context budget after the plan (<= the input's) */
    int candidates;            /* after the plan */
    int n_hole, n_cap;         /* first hole, cap */
    int max_steps;             /* step cap of the first run (0 = none needed) */
    bool grow;                 /* a grown run is predicted to fit after the first */
    double full_ms, window_ms; /* one full / window step at the plan's sizes */
    double run_ms;             /* predicted first run (worst case: one commit per step) */
    const char *why;           /* "fits", "fewer candidates", "context cut", "step cap", ... */
    ifl_cost cost;             /* the cost model the plan used */
} ifl_plan;

/* Time kept back for post-processing and the answer. */
double ifl_plan_reserve_ms(double budget_ms);
void ifl_plan_make(const ifl_cost *c, const ifl_plan_in *in, ifl_plan *out);
/* Does a run of hole n_next (its block fulls and a quarter of its tokens as
 * steps) fit in avail_ms with p's context and candidates? */
bool ifl_plan_grow(const ifl_cost *c, const ifl_plan_in *in, const ifl_plan *p, double avail_ms,
                   int n_next);

/* ---- a loaded model, used by one thread at a time ------------------------ */

typedef struct ifl_model ifl_model;

typedef struct ifl_model_opts {
    eng_load_opts load;
    int max_candidates; /* batch rows of the context (1..16; 0 → 4) */
    int max_len;        /* canvas tokens (0 → the model's usable context, at most 2048) */
    bool no_cost;       /* skip measuring the cost model at load (a default one is used) */
} ifl_model_opts;

void ifl_model_opts_default(ifl_model_opts *o);
struct ifl_kv_opts;
struct ifl_kvstore;
/* The model's store of context K/V kept between requests (kvstore.h);
 * NULL for DiffusionGemma. Options change through ifl_kv_set_opts. */
struct ifl_kvstore *ifl_model_kv(ifl_model *m);
/* The engine context (tests read its cache through eng_ctx_kv_row). */
eng_ctx *ifl_model_ctx(ifl_model *m);
/* NULL with err filled on failure. */
ifl_model *ifl_model_open(const char *dir, const ifl_model_opts *o, eng_error *err);
void ifl_model_close(ifl_model *m); /* NULL-safe */
const eng_model_info *ifl_model_info(const ifl_model *m);
const eng_tokenizer *ifl_model_tokenizer(const ifl_model *m);
const char *ifl_model_dir(const ifl_model *m);
const char *ifl_model_device(const ifl_model *m); /* "cpu" / "cuda" */
/* The backend's description: device, weight storage (the quant types on the device). */
const char *ifl_model_device_desc(const ifl_model *m);
/* NULL while the weight files are intact, else the path of one truncated
 * while mapped (eng_model_files_damaged): unload the model. */
const char *ifl_model_damaged(const ifl_model *m);
int ifl_model_max_len(const ifl_model *m);
/* The cost model measured at load (updated by every run); set replaces it
 * (tests, benchmarks). */
const ifl_cost *ifl_model_cost(const ifl_model *m);
void ifl_model_set_cost(ifl_model *m, const ifl_cost *c);
/* Consecutive requests refused with "no step fits" after which the cost
 * model is measured again: one that over-predicts (measured while the machine
 * was busy) refuses every request and so never observes a run to correct it. */
#define IFL_COST_REPROBE 8
/* True once IFL_COST_REPROBE requests in a row were refused that way. */
bool ifl_model_cost_starved(const ifl_model *m);
/* Measures the cost model again through the pipeline's stepper (the worker
 * calls it when idle and the model is starved); resets the count. cancel
 * (may be NULL) set non-zero stops it at the next layer: BASE_ERR_CANCELLED,
 * the model as it was (a request that arrives meanwhile does not wait). */
base_status ifl_model_remeasure(ifl_model *m, const volatile int *cancel);
/* Tests: every step of the pipeline goes through wrap, which calls inner
 * (the engine) itself, e.g. to make steps slower. NULL restores. */
typedef base_status (*ifl_step_wrap_fn)(void *ud, const eng_stepper *inner, const eng_batch *batch,
                                        const eng_step_req *req, eng_row_result *out);
void ifl_model_set_step_wrap(ifl_model *m, ifl_step_wrap_fn fn, void *ud);

/* Default embedded model: the trained <exe dir>/models/infilld-tiny-code or
 * <exe dir>/../share/infilld/models/infilld-tiny-code, else the random
 * <exe dir>/models/tiny-dream or <exe dir>/../share/infilld/models/tiny-dream.
 * Writes the path to out and returns true when one exists. */
bool ifl_default_model_dir(char *out, size_t cap);

/* ---- one infill from text (no syntax) --------------------------------------- */

/* DiffusionGemma's infill mode (shared/design/DIFFUSIONGEMMA.md §4.1): (a)
 * prompt-level FIM in the chat template (the default), or (b) the prefix as
 * plain text in the encoder and the suffix tokens pinned on the canvas after a
 * fixed number of hole slots (the span's token budget). The mask-model
 * families ignore it. */
typedef enum ifl_dg_infill {
    IFL_DG_INFILL_PROMPT = 0,
    IFL_DG_INFILL_PIN,
} ifl_dg_infill;

/* "prompt" / "pin" -> mode; false for another name. */
bool ifl_dg_infill_parse(const char *s, ifl_dg_infill *out);
const char *ifl_dg_infill_name(ifl_dg_infill m);

typedef struct ifl_text_req {
    const char *prefix;
    size_t prefix_len;
    const char *suffix;
    size_t suffix_len;
    /* Token ids instead of text (--prefix-ids / --suffix-ids); used when non-NULL. */
    const int32_t *prefix_ids;
    int n_prefix_ids;
    const int32_t *suffix_ids;
    int n_suffix_ids;
    int ctx_budget; /* prefix + suffix tokens; 0 = the model's usable context minus the hole */
    eng_diff_params params;
    ifl_dg_infill dg_infill; /* DiffusionGemma only; pin mode: params.n_hole hole slots */
    /* Document key (LSP uri) under which the context K/V is kept for the
     * next request (cached mode; NULL = none). The context is cut as
     * without it (only the rows recomputed differ), unless that cut could
     * not be reused and a full forward would pass the deadline: then the
     * kept canvas's edges are held where the text there is unchanged. */
    const char *kv_key;
    /* Partial text after each step (masks shown as IFL_MASK_PLACEHOLDER). */
    void (*partial)(void *ud, const char *text, size_t len, int step, int steps);
    void *partial_ud;
    /* Idle prefill (infill/prefill.c): run only the first step, keep its
     * results for the next run whose first step is the same, and return
     * BASE_ERR_CANCELLED (nothing else is computed). */
    bool prefill;
    /* The whole prefix and suffix already tokenized (the planner's count):
     * used instead of tokenizing them again (NULL: tokenize). */
    const int32_t *tok_prefix, *tok_suffix;
    int n_tok_prefix, n_tok_suffix;
} ifl_text_req;

#define IFL_MASK_PLACEHOLDER "\xe2\x80\xa6" /* U+2026 per run of masks */

typedef struct ifl_text_cand {
    char *text; /* malloc'ed, NUL-terminated, EOS/pad stripped */
    size_t len;
    double mean_conf;
    int index; /* batch row */
} ifl_text_cand;

typedef struct ifl_timings {
    double tokenize_ms, diffuse_ms, step_ms, detok_ms, span_ms, post_ms, total_ms;
} ifl_timings;

typedef struct ifl_text_res {
    int n_cand;
    ifl_text_cand cand[ENG_DIFF_MAX_CANDIDATES]; /* ranked by mean confidence */
    int32_t *tokens; /* best candidate's hole ids before stripping (malloc'ed) */
    int n_tokens;
    int n_prefix_tokens, n_suffix_tokens; /* after the context cut */
    size_t prefix_cut, suffix_cut;        /* bytes dropped from the far ends */
    int steps_run, n_forward_full, n_forward_window;
    long long rows_computed;  /* canvas rows recomputed by the forwards (eng_diff_result) */
    double predicted_step_ms; /* the cost model's prediction of t.step_ms (0 without one) */
    eng_alg alg;
    /* Context K/V kept between requests (kv_key): the store's decision for
     * the last run ("warm", "cold", "jump", "window", "stale", "off"; NULL
     * without a key) and its rows: reused outside the window, of those
     * shifted (re-rotated), and re-encoded by the first step. */
    const char *kv_why;
    int kv_reused, kv_shifted, kv_reencoded;
    /* The plan counted on the kept context, the store could not reuse it
     * (jump, window), and a full forward alone would pass the deadline:
     * nothing ran, no candidate, the document forgotten. (Stale rows are
     * reused once more instead: kv_why "stale kept".) */
    bool kv_refused;
    /* The first step came from an idle prefill of the same canvas (bit for
     * bit what it would have computed; infill/prefill.c). */
    bool prefill_hit;
    /* DiffusionGemma: the entropy-bound sampler's settings of this run (for
     * --explain; eb.used is false for the mask-model families, which use alg) */
    struct {
        bool used, self_cond;
        int max_steps, stability;
        float t_min, t_max, entropy_bound, confidence;
        ifl_dg_infill infill;
        int n_hole_slots, n_pinned; /* pin mode: the canvas layout */
    } eb;
    ifl_timings t;
} ifl_text_res;

base_status ifl_infill_text(ifl_model *m, const ifl_text_req *r, const volatile int *cancel,
                            ifl_text_res *out);
void ifl_text_res_free(ifl_text_res *r); /* NULL-safe, frees the members */
/* Several text requests in one padded batch of the engine (eng_diffuse_multi),
 * one candidate each, for servers (infilld serve-http). Every request must
 * share reqs[0]'s sampler params (n_hole, alg, steps, ...); no ids, partials,
 * deadlines. n <= the model's max_candidates. outs[i] as ifl_infill_text's. */
base_status ifl_infill_text_multi(ifl_model *m, const ifl_text_req *reqs, int n,
                                  const volatile int *cancel, ifl_text_res *outs);

/* Context budget split (documented in docs/SAMPLERS.md): the prefix gets 3/4 of
 * the budget and the suffix 1/4, either side's unused share going to the
 * other; cuts happen at line starts (prefix: oldest lines go first; suffix:
 * the last lines go first). */
void ifl_budget_split(int budget, int n_prefix, int n_suffix, int *keep_prefix, int *keep_suffix);

/* ---- the pipeline on a document ------------------------------------------------ */

typedef struct ifl_doc_req {
    const char *text; /* the whole document */
    size_t len;
    const char *language; /* canonical (ifl_syntax_language) or NULL */
    size_t cursor;
    size_t sel_start, sel_end; /* a selection to regenerate when sel_end > sel_start */
    int candidates;            /* 0 → the model's default (generation_config.json), else 1 */
    int validate;              /* -1 default (on), 0 off, 1 on */
    bool has_seed;
    uint64_t seed;
    int steps;    /* 0 = default */
    eng_alg alg;  /* ENG_ALG_DEFAULT = per model */
    int max_hole; /* cap on the span's token budget and its growth (0 = none) */
    int n_hole;   /* > 0: hole size in tokens instead of the span's budget; never grows */
    eng_cache_mode mode;
    int max_steps;           /* step budget (0 = none); the last step commits every mask */
    float eos_penalty;       /* annealed EOS/pad penalty; < 0 = the model's default */
    ifl_dg_infill dg_infill; /* DiffusionGemma: the infill mode (prompt by default) */
    /* Hole growth keeps the last run's tokens and adds masks after them
     * instead of starting the larger hole from masks (cached mode only; an
     * approximation, off until measured: docs/SAMPLERS.md §7). */
    bool grow_extend;
    uint64_t deadline_ns; /* base_now_ns() deadline (0 = none) */
    /* Latency budget: deadline = received_ns + this (the earlier of it and
     * deadline_ns); the planner sizes the request to it (0 = none). */
    int time_budget_ms;
    /* Document key for the context K/V kept between requests (cached mode;
     * NULL = none, e.g. the CLI). Worker jobs copy it. The budgets (MiB; 0 =
     * 64 per document, 256 in all) apply to the model's whole store. */
    const char *doc_key;
    int kv_doc_mib, kv_total_mib;
    int kv_margin;        /* rows re-encoded either side of the edit and the hole (0 = 16) */
    uint64_t received_ns; /* base_now_ns() when the daemon received the request (0 = at start) */
    void (*partial)(void *ud, const char *text, size_t len, int step, int steps);
    void *partial_ud;
    bool want_partial; /* worker jobs: send partials through ifl_worker_cbs.partial */
    /* A span the caller located (the LSP path: ifl_syntax_locate on the
     * document's tree, on the loop thread) with that call's status; when
     * !has_span the pipeline calls ifl_syntax_locate_text on text. */
    bool has_span;
    ifl_span span;
    base_status span_status;
    /* Leave res.items empty: the caller runs ifl_doc_post on its own thread
     * (the LSP path post-processes with the document's tree). */
    bool defer_post;
    /* Other files' chunks for a remote llama-infill source, as the JSON text
     * of /infill's "input_extra" ([{"filename", "text"}], already filtered
     * by the exclusion rules and bounded by source.extraContextChars);
     * NULL = none. Worker jobs copy it. */
    const char *input_extra;
    /* Idle prefill: plan and run the first run's first step only, kept for
     * the request that follows (ifl_worker_prefill; infill/prefill.c). */
    bool prefill;
} ifl_doc_req;

void ifl_doc_req_default(ifl_doc_req *r);

typedef struct ifl_doc_item {
    char *text; /* malloc'ed; replaces [start, end) */
    size_t len;
    size_t start, end;
    double confidence;
    bool valid; /* passed the syntax check (or none was made); rejected ones are dropped */
} ifl_doc_item;

typedef struct ifl_doc_res {
    ifl_span span;
    bool syntax; /* the span came from the syntax module (post-processing applies) */
    int n_items;
    ifl_doc_item items[ENG_DIFF_MAX_CANDIDATES]; /* valid ones only, by confidence */
    int n_rejected;                              /* candidates the syntax check rejected */
    ifl_plan plan;    /* the first run's plan (plan.planned when a budget applied) */
    int grow_refused; /* growths the budget did not allow */
    /* The last diffusion run; steps, forwards and the tokenize, diffuse,
     * step and detokenize times add up over all runs. */
    ifl_text_res raw;
    /* Hole growth (docs/SAMPLERS.md): runs made (1 + times the hole grew), the
     * first and the last run's hole size, and the most it could grow to. */
    int runs;
    int n_hole_first, n_hole, n_hole_cap;
    bool prefill_hit; /* the first run's first step came from an idle prefill */
    /* Why the source failed, one line, when it says more than the status
     * (a remote server's HTTP status, ...); empty otherwise. */
    char error[256];
} ifl_doc_res;

/* Span → diffusion → post-processing. The hole starts at the span's budget and
 * doubles, up to span.n_max (and max_hole), while the model fills it without
 * EOS or pad; the result is the last run's. */
base_status ifl_complete_doc(ifl_model *m, const ifl_doc_req *r, const volatile int *cancel,
                             ifl_doc_res *out);

/* The span stage shared by every path: sp as located when located is OK,
 * else the line rule (or the selection). Returns located == BASE_OK. */
bool ifl_doc_span(const ifl_doc_req *r, base_status located, ifl_span *sp);

/* Post-processes one raw candidate for the span (ifl_syntax_postprocess or
 * its _text form); ERR_PARSE rejects it. */
typedef base_status (*ifl_post_fn)(void *ud, const ifl_span *span, const char *cand, size_t len,
                                   const ifl_post_opts *o, char **out, size_t *out_len);

/* The post stage shared by every path: res->raw's candidates become
 * res->items (post-processed with post when res->syntax, else cut to the
 * span's lines), the ones the syntax check rejects dropped (counted in n_rejected). r is the
 * request res was computed for. */
base_status ifl_doc_post(const ifl_doc_req *r, ifl_doc_res *res, ifl_post_fn post, void *ud);
void ifl_doc_res_free(ifl_doc_res *r);

/* ---- typing-through cache --------------------------------------------------------
 * Remembers the completion last shown for a document. While the user types
 * characters that match it, the next request is answered from it. */
typedef struct ifl_tcache ifl_tcache;

ifl_tcache *ifl_tcache_new(void);
void ifl_tcache_free(ifl_tcache *c);
/* Records that `completion` was shown at cursor of text (for key, e.g. a uri). */
base_status ifl_tcache_put(ifl_tcache *c, const char *key, const char *text, size_t len,
                           size_t cursor, const char *completion, size_t comp_len);
/* When text/cursor is the shown state plus typed characters that the
 * completion starts with, returns true and the rest of the completion
 * (borrowed until the next put/forget). */
bool ifl_tcache_get(ifl_tcache *c, const char *key, const char *text, size_t len, size_t cursor,
                    const char **rest, size_t *rest_len);
void ifl_tcache_forget(ifl_tcache *c, const char *key);

/* ---- the engine worker ---------------------------------------------------------------
 * One thread per loaded model. Jobs queue newest first; a job whose `group`
 * (e.g. session + uri) gets a newer job is superseded: dropped if queued,
 * cancelled at the next step if running. Callbacks run on the worker thread,
 * except `done` for a queued job dropped by submit/cancel, which runs on the
 * caller's thread: receivers hand results over with a thread-safe queue. */
typedef struct ifl_worker ifl_worker;

typedef struct ifl_job {
    uint64_t id;
    uint64_t group;
    void *owner;     /* the caller's, returned as is */
    ifl_doc_req req; /* req.text is owned by the job */
    base_status status;
    ifl_doc_res res;
    double latency_ms;
    double wait_ms; /* from submit to the worker taking it (a prefill's stop included) */
    /* private */
    uint64_t submit_ns;
    bool pf_seen;    /* a prefill was running when it was submitted */
    int pf_resume;   /* a preempted prefill queued again: the layer it stopped before */
    bool pf_preempt; /* it stopped a running prefill (not joined it) */
    volatile int cancel;
    struct ifl_job *next;
    void *handoff; /* worker.c: a remote job whose transfer runs on the loop */
} ifl_job;

typedef struct ifl_worker_cbs {
    /* A job finished (any status); the receiver owns it (ifl_job_free). */
    void (*done)(void *ud, ifl_job *job);
    /* Partial text of a running job. text borrowed. */
    void (*partial)(void *ud, uint64_t job_id, const char *text, size_t len, int step, int steps);
    /* Model state: "loading" (msg = the folder; later ticks carry done/total
     * bytes), "ready" (msg = the backend, "cpu" / "cuda"), "error" (msg = why),
     * "none" (unloaded), "busy" (a job starts running; "ready" again, with the
     * backend, once it is done and no other job waits). */
    void (*state)(void *ud, const char *state, const char *msg, uint64_t done, uint64_t total);
    void *ud;
} ifl_worker_cbs;

ifl_worker *ifl_worker_new(const ifl_worker_cbs *cbs, const ifl_model_opts *o);
/* Stops the thread (cancelling the running job; queued jobs are freed
 * without a callback) and frees everything. NULL-safe. */
void ifl_worker_free(ifl_worker *w);
/* (Re)loads a model on the worker thread; NULL unloads. */
void ifl_worker_load(ifl_worker *w, const char *dir);
/* Copies req (and its text); returns the job id (never 0) or 0 on OOM. */
uint64_t ifl_worker_submit(ifl_worker *w, uint64_t group, void *owner, const ifl_doc_req *req);
/* Cancels job id (queued or running). */
void ifl_worker_cancel(ifl_worker *w, uint64_t id);
void ifl_job_free(ifl_job *j);

/* ---- idle prefill (issue 19 item 3; infill/prefill.c, docs/PROTOCOL.md) -----------
 * While the user is idle the worker runs, at the lowest priority, the first
 * full forward of the request that would come next (the planned canvas:
 * context + hole masks at the cursor) and keeps its step results; the ctx
 * keeps its K/V. A request whose first step is the same batch and step
 * request gets them bit for bit (exact mode too) and pays only the steps
 * after. Any other job preempts a running prefill at the engine's next layer
 * boundary (its cancel check): the wait is at most one layer of the
 * prefill's forward, chunk_ms below (predicted from the cost model), or one
 * of the phases before it (ifl_phase, measured: max_slice_ms). A job
 * for the same document, text, cursor and settings lets it finish instead
 * (it would compute the same step itself). */
/* What a prefill does before its first layer, in order, each ended by a
 * preemption check (a job waiting stops the prefill there): PREPARE the job
 * and its span (the span comes from the document's tree, located on the LSP
 * thread), COUNT the context's tokens for the planner, TOKENIZE it (only
 * when COUNT did not: the planner's ids are reused), CUT it to the planned
 * size (one check per re-tokenizing round), SETUP the canvas up to the
 * first step. After SETUP the engine checks before every layer. */
typedef enum ifl_phase {
    IFL_PH_PREPARE,
    IFL_PH_COUNT,
    IFL_PH_TOKENIZE,
    IFL_PH_CUT,
    IFL_PH_SETUP,
    IFL_PH_N
} ifl_phase;
const char *ifl_phase_name(int ph);
typedef void (*ifl_phase_fn)(void *ud, int phase);

typedef struct ifl_prefill_stats {
    long long queued;    /* prefills asked for */
    long long runs;      /* started */
    long long completed; /* first step computed and kept */
    long long preempted; /* stopped for another job */
    long long aborted;   /* stopped by an edit, a newer prefill or a load */
    long long joined;    /* jobs that waited for a matching prefill to finish */
    long long hits;      /* jobs whose first step came from a prefill */
    long long waits;     /* jobs that found a prefill running */
    double max_wait_ms;  /* the longest such a job waited for the worker */
    double last_wait_ms;
    double chunk_ms;    /* predicted ms of the longest stretch of the forward without a check:
                           one layer, plus the LM head after the last (cost model) */
    double last_run_ms; /* the last completed prefill's time */
    /* The stretches before the first layer (ifl_phase): the last run's
     * longest per phase, the longest seen and its phase. What a job arriving
     * mid-prefill waits for is bounded by chunk_ms + max_slice_ms. */
    double slice_ms[IFL_PH_N];
    double max_slice_ms;
    int max_slice_phase;
    /* Preempted between layers by a job that then ran no step on the
     * context: queued again, and when nothing else used the context before
     * it ran, continued from that layer (eng_ctx_resumable) instead of
     * starting over; else dropped. */
    long long resumed, resume_dropped;
    long long resumed_layers; /* layers not recomputed thanks to it */
    /* The longest wait of a job that stopped a prefill (max_wait_ms also
     * counts jobs that joined one, which wait for it to finish): what
     * chunk_ms + max_slice_ms bounds, up to thread scheduling. */
    double max_preempt_wait_ms;
} ifl_prefill_stats;

/* Queues a prefill of req (copied) for group; replaces a queued one and
 * aborts a running one. It runs only while no job waits. */
bool ifl_worker_prefill(ifl_worker *w, uint64_t group, const ifl_doc_req *req);
/* Drops a queued and aborts a running prefill (group 0: any group): the
 * document changed. */
void ifl_worker_prefill_cancel(ifl_worker *w, uint64_t group);
void ifl_worker_prefill_stats(ifl_worker *w, ifl_prefill_stats *out);
/* Tests: called on the worker thread when a prefill starts (NULL = none). */
void ifl_worker_set_prefill_hook(ifl_worker *w, void (*fn)(void *ud, uint64_t group), void *ud);
/* Tests: the step wrap (ifl_model_set_step_wrap) of every model it loads
 * from now on, and whether the running prefill has been asked to stop (a
 * scripted slow stepper polls it between its simulated layers). */
void ifl_worker_set_step_wrap(ifl_worker *w, ifl_step_wrap_fn fn, void *ud);
bool ifl_worker_prefill_stopping(ifl_worker *w);

/* Tests: called on the worker thread at every preemption check of a
 * prefill before its first layer, with the phase that just ended (a
 * scripted hook makes phases slow or submits a job there). */
void ifl_worker_set_phase_hook(ifl_worker *w, ifl_phase_fn fn, void *ud);
/* Tests: eng_ctx_set_layer_hook on the ctx of every model it loads. */
void ifl_worker_set_layer_hook(ifl_worker *w, void (*fn)(void *ud, int layer), void *ud);
/* Tests: ifl_model_set_cost on the loaded model; call only while the worker
 * is idle (no job, prefill or re-measurement running). */
void ifl_worker_set_cost(ifl_worker *w, const ifl_cost *c);

/* The model's prefill slot: does a kept first step apply, and its stated
 * per-layer bound. Cleared by anything else that uses the model's ctx. */
bool ifl_model_prefilled(const ifl_model *m);
double ifl_model_prefill_chunk_ms(const ifl_model *m);
long long ifl_model_prefill_hits(const ifl_model *m); /* first steps served so far */
void ifl_model_prefill_clear(ifl_model *m);
/* A prefill starts now: its phase clock (ifl_phase) restarts. Read its
 * longest stretch per phase afterwards. */
void ifl_model_prefill_begin(ifl_model *m);
/* The running prefill's predicted forward in ms (0: not planned yet); any thread. */
int ifl_model_prefill_predicted_ms(const ifl_model *m);
/* The layer the ctx's stopped pass can go on from (eng_ctx_resumable), 0: none. */
int ifl_model_prefill_resumable(const ifl_model *m);
void ifl_model_prefill_slices(const ifl_model *m, double ms[IFL_PH_N]);
void ifl_model_set_phase_hook(ifl_model *m, ifl_phase_fn fn, void *ud);

#endif
