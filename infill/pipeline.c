/* infill pipeline: model handle, context budget, one infill from text, and
 * the document pipeline (span → prompt → diffusion → post-process → rank). */
#define _POSIX_C_SOURCE 200809L
#include "dgemma_fim.h"
#include "flag.h"
#include "infill.h"
#include "kvstore.h"
#include "prefill.h"
#include "source.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ifl_model {
    eng_model *model;
    eng_ctx *ctx;
    eng_diffuser *diff;
    const eng_tokenizer *tok;
    eng_model_info info;
    int max_len, max_batch;
    char *dir;
    ifl_cost cost;
    ifl_step_wrap_fn wrap;
    void *wrap_ud;
    eng_dg_ctx *dg;  /* DiffusionGemma: its passes instead of ctx/diff (dgemma_fim.c) */
    int n_starved;   /* requests refused ("no step fits") since the last run */
    ifl_kvstore *kv; /* context K/V kept between requests */
    int32_t *kv_canvas;
    /* Idle prefill (prefill.h): the kept first step and the ctx generation,
     * bumped by everything that writes the ctx's cache. */
    ifl_pf_slot pf;
    uint64_t ctx_gen;
    double pf_chunk_ms; /* the last prefill's predicted ms per layer */
    long long pf_hits;
    /* The kept step's request (ifl__pf_key) and its plan's context and
     * candidates: a request with the same key plans around it. */
    uint64_t pf_key;
    int pf_ctx, pf_cands;
    volatile int pf_pred_ms; /* the running prefill's predicted forward (read by the worker) */
    /* The running prefill's phase clock (ifl_phase): when its last check
     * passed, and its longest stretch per phase. */
    uint64_t ph_mark;
    double ph_ms[IFL_PH_N];
    ifl_phase_fn phase_fn; /* tests */
    void *phase_ud;
};

const char *ifl_phase_name(int ph) {
    static const char *const names[IFL_PH_N] = {"prepare", "count", "tokenize", "cut", "setup"};
    return ph >= 0 && ph < IFL_PH_N ? names[ph] : "?";
}

int ifl_model_prefill_predicted_ms(const ifl_model *m) {
    return m ? base_flag_get(&m->pf_pred_ms) : 0;
}

void ifl_model_prefill_begin(ifl_model *m) {
    base_flag_set(&m->pf_pred_ms, 0);
    memset(m->ph_ms, 0, sizeof m->ph_ms);
    m->ph_mark = base_now_ns();
}

int ifl_model_prefill_resumable(const ifl_model *m) {
    return m && m->ctx && !m->dg ? eng_ctx_resumable(m->ctx) : 0;
}

void ifl_model_prefill_slices(const ifl_model *m, double ms[IFL_PH_N]) {
    memcpy(ms, m->ph_ms, sizeof m->ph_ms);
}

void ifl_model_set_phase_hook(ifl_model *m, ifl_phase_fn fn, void *ud) {
    m->phase_fn = fn;
    m->phase_ud = ud;
}

/* A preemption check ending phase ph: a prefill records the stretch since
 * its last check. True when the run must stop (its cancel flag is set). */
static bool ifl__yield(ifl_model *m, bool prefill, const volatile int *cancel, ifl_phase ph) {
    if (prefill) {
        if (m->phase_fn)
            m->phase_fn(m->phase_ud, (int)ph);
        uint64_t now = base_now_ns();
        double ms = m->ph_mark && now > m->ph_mark ? (double)(now - m->ph_mark) / 1e6 : 0;
        if (ms > m->ph_ms[ph])
            m->ph_ms[ph] = ms;
        m->ph_mark = now;
    }
    return base_flag_get(cancel) != 0;
}

ifl_kvstore *ifl_model_kv(ifl_model *m) { return m ? m->kv : NULL; }
eng_ctx *ifl_model_ctx(ifl_model *m) { return m ? m->ctx : NULL; }

void ifl_model_opts_default(ifl_model_opts *o) {
    memset(o, 0, sizeof *o);
    eng_load_opts_default(&o->load);
    o->max_candidates = 4;
}

/* Every added token of the tokenizer (FIM markers, chat markers, ...) is
 * stripped from the hole's text like EOS/pad surplus (docs/SAMPLERS.md). */
static base_status ifl__set_strip(ifl_model *m, eng_error *err) {
    size_t nv = eng_tokenizer_vocab_size(m->tok);
    int32_t *ids = NULL;
    int n = 0, cap = 0;
    base_status st = BASE_OK;
    for (size_t i = 0; i < nv && st == BASE_OK; i++) {
        if (!eng_token_is_added(m->tok, (int32_t)i))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            int32_t *v = realloc(ids, sizeof(int32_t) * (size_t)cap);
            if (!v) {
                st = BASE_ERR_NOMEM;
                break;
            }
            ids = v;
        }
        ids[n++] = (int32_t)i;
    }
    if (st == BASE_OK)
        st = eng_diffuser_set_strip(m->diff, ids, n);
    free(ids);
    if (st != BASE_OK) {
        err->status = st;
        snprintf(err->msg, sizeof err->msg, "out of memory");
    }
    return st;
}

ifl_model *ifl_model_open(const char *dir, const ifl_model_opts *o, eng_error *err) {
    ifl_model_opts def;
    if (!o) {
        ifl_model_opts_default(&def);
        o = &def;
    }
    ifl_model *m = calloc(1, sizeof *m);
    if (!m) {
        err->status = BASE_ERR_NOMEM;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    m->dir = strdup(dir);
    m->model = eng_model_load(dir, &o->load, err);
    if (!m->model)
        goto fail;
    m->info = *eng_model_get_info(m->model);
    m->tok = eng_model_tokenizer(m->model);
    m->max_batch = o->max_candidates > 0 ? BASE_MIN(o->max_candidates, ENG_DIFF_MAX_CANDIDATES) : 4;
    m->max_len = o->max_len > 0 ? o->max_len : m->info.max_context;
    if (m->max_len <= 0 || m->max_len > 2048)
        m->max_len = 2048;
    if (m->info.family == ENG_FAMILY_DIFFUSION_GEMMA) {
        /* prompt (template + context) and one committed canvas in the cache */
        const eng_dg_info *dgi = eng_dg_get_info(m->model);
        /* The Gemma-4 chat template needs these; a clear refusal at load, not a
         * bare "invalid model" on every request. */
        static const char *chat[] = {"<bos>", "<|turn>", "<turn|>"};
        for (size_t i = 0; i < BASE_ARRAY_LEN(chat); i++)
            if (eng_token_special_id(m->tok, chat[i]) < 0) {
                err->status = BASE_ERR_MODEL;
                snprintf(err->msg, sizeof err->msg,
                         "the tokenizer has no %s token, which the Gemma-4 chat template of "
                         "a DiffusionGemma model needs",
                         chat[i]);
                goto fail;
            }
        m->dg = eng_dg_ctx_new(m->model, m->max_len + 2 * dgi->canvas_len, dgi->canvas_len, err);
        if (!m->dg)
            goto fail;
        m->cost.scale = 1.0;
        m->cost.row_ms = (double)m->info.weight_bytes * 1e-8;
        return m;
    }
    m->ctx = eng_ctx_new(m->model, m->max_batch, m->max_len, err);
    if (!m->ctx)
        goto fail;
    m->diff = eng_diffuser_new(&m->info, m->max_batch, m->max_len, err);
    if (!m->diff || ifl__set_strip(m, err) != BASE_OK)
        goto fail;
    ifl_kv_opts kvo;
    ifl_kv_opts_default(&kvo);
    m->kv = ifl_kv_new(&kvo, eng_ctx_kv_row_floats(m->ctx));
    m->kv_canvas = malloc(sizeof(int32_t) * (size_t)m->max_len);
    if (!m->kv || !m->kv_canvas) {
        err->status = BASE_ERR_NOMEM;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        goto fail;
    }
    /* Until measured: about 10 ms per row per GB of weights, a CPU's order. */
    memset(&m->cost, 0, sizeof m->cost);
    m->cost.scale = 1.0;
    m->cost.row_ms = (double)m->info.weight_bytes * 1e-8;
    if (!o->no_cost) {
        eng_stepper stp = eng_stepper_ctx(m->ctx);
        ifl_cost c;
        base_status cs = ifl_cost_measure(&stp, &m->info, m->max_len, &c);
        if (cs == BASE_OK)
            m->cost = c;
        else
            BASE_LOGW("ifl", "cost model not measured (%s): using the default",
                      base_status_str(cs));
    }
    return m;
fail:
    ifl_model_close(m);
    return NULL;
}

void ifl_model_close(ifl_model *m) {
    if (!m)
        return;
    eng_diffuser_free(m->diff);
    ifl_pf_clear(&m->pf);
    ifl_kv_free(m->kv);
    free(m->kv_canvas);
    eng_ctx_free(m->ctx);
    eng_dg_ctx_free(m->dg);
    eng_model_free(m->model);
    free(m->dir);
    free(m);
}

const eng_model_info *ifl_model_info(const ifl_model *m) { return &m->info; }
const eng_tokenizer *ifl_model_tokenizer(const ifl_model *m) { return m->tok; }
const char *ifl_model_dir(const ifl_model *m) { return m->dir; }
const char *ifl_model_device(const ifl_model *m) { return eng_model_backend_name(m->model); }
const char *ifl_model_device_desc(const ifl_model *m) { return eng_model_device_desc(m->model); }
const char *ifl_model_damaged(const ifl_model *m) {
    return m ? eng_model_files_damaged(m->model) : NULL;
}
int ifl_model_max_len(const ifl_model *m) { return m->max_len; }
const ifl_cost *ifl_model_cost(const ifl_model *m) { return &m->cost; }
void ifl_model_set_cost(ifl_model *m, const ifl_cost *c) { m->cost = *c; }
void ifl_model_set_step_wrap(ifl_model *m, ifl_step_wrap_fn fn, void *ud) {
    m->wrap = fn;
    m->wrap_ud = ud;
}
bool ifl_model_prefilled(const ifl_model *m) { return m && m->pf.valid && m->pf.gen == m->ctx_gen; }
double ifl_model_prefill_chunk_ms(const ifl_model *m) { return m ? m->pf_chunk_ms : 0; }
long long ifl_model_prefill_hits(const ifl_model *m) { return m ? m->pf_hits : 0; }
void ifl_model_prefill_clear(ifl_model *m) {
    if (m)
        ifl_pf_clear(&m->pf);
}

/* Every step of a text run: the first may come from the prefill slot (a
 * request) or go into it (a prefill, which then stops the run). */
typedef struct ifl__pf_stepper {
    ifl_model *m;
    eng_stepper inner;
    bool prefill;
    int n;     /* steps asked for */
    bool hit;  /* the first came from the slot */
    bool kept; /* prefill: the first went into the slot */
    const volatile int *cancel;
} ifl__pf_stepper;

static base_status ifl__pf_step(void *ud, const eng_batch *batch, const eng_step_req *req,
                                eng_row_result *out) {
    ifl__pf_stepper *s = ud;
    ifl_model *m = s->m;
    if (s->n++ == 0 && !s->prefill && ifl_pf_match(&m->pf, m->ctx_gen, batch, req)) {
        if (req->n_pos > 0)
            memcpy(out, m->pf.out, sizeof(eng_row_result) * (size_t)req->n_pos);
        ifl_pf_clear(&m->pf); /* the next step writes the ctx */
        s->hit = true;
        m->pf_hits++;
        return BASE_OK;
    }
    if (s->prefill && s->n > 1)
        return BASE_ERR_CANCELLED; /* not reached: the first stops the run */
    /* The canvas is set up: from here the engine checks before every layer. */
    if (s->prefill && ifl__yield(m, true, s->cancel, IFL_PH_SETUP))
        return BASE_ERR_CANCELLED;
    /* A prefill's whole pass is a step the cost model did not see: when it
     * ran from layer 0 (not resumed), its time corrects the model's scale,
     * so that requests after a refused start are planned from real runs. */
    bool whole = s->prefill && m->cost.measured && eng_ctx_resumable(m->ctx) == 0;
    uint64_t t0 = base_now_ns();
    base_status st = s->inner.step(s->inner.ud, batch, req, out);
    m->ctx_gen++;
    if (s->prefill) {
        if (st != BASE_OK)
            return st;
        if (whole) {
            int rows = batch->n_seq *
                       (req->mode == ENG_STEP_FULL ? batch->len : req->win_end - req->win_start);
            ifl_cost_observe(&m->cost, ifl_cost_step_ms(&m->cost, rows, batch->len, req->n_pos),
                             base_ms_since(t0));
        }
        st = ifl_pf_keep(&m->pf, m->ctx_gen, batch, req, out);
        if (st != BASE_OK)
            return st;
        s->kept = true;
        return BASE_ERR_CANCELLED; /* the rest belongs to the request */
    }
    return st;
}

typedef struct ifl__wrapped {
    const ifl_model *m;
    eng_stepper inner;
} ifl__wrapped;

static base_status ifl__wrapped_step(void *ud, const eng_batch *batch, const eng_step_req *req,
                                     eng_row_result *out) {
    ifl__wrapped *w = ud;
    return w->m->wrap(w->m->wrap_ud, &w->inner, batch, req, out);
}

bool ifl_model_cost_starved(const ifl_model *m) { return m && m->n_starved >= IFL_COST_REPROBE; }

base_status ifl_model_remeasure(ifl_model *m, const volatile int *cancel) {
    ifl__wrapped wr = {m, eng_stepper_ctx(m->ctx)};
    eng_stepper stp = m->wrap ? (eng_stepper){ifl__wrapped_step, &wr} : wr.inner;
    ifl_cost c;
    m->ctx_gen++;
    eng_ctx_set_cancel(m->ctx, cancel);
    base_status st = ifl_cost_measure(&stp, &m->info, m->max_len, &c);
    eng_ctx_set_cancel(m->ctx, NULL);
    if (st != BASE_OK) {
        m->n_starved = 0; /* not again after every request */
        return st;
    }
    BASE_LOGI("ifl",
              "cost model re-measured after %d refused requests: full step of 128 tokens "
              "%.1f ms (was %.1f ms)",
              m->n_starved, ifl_cost_step_ms(&c, 128, 128, 16),
              ifl_cost_step_ms(&m->cost, 128, 128, 16));
    m->cost = c;
    m->n_starved = 0;
    return BASE_OK;
}

static double ifl__step_cost(void *ud, int rows, int keys, int n_pos) {
    return ifl_cost_step_ms(ud, rows, keys, n_pos);
}

bool ifl_default_model_dir(char *out, size_t cap) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = 0;
    /* The trained default first; the random tiny checkpoint where it is absent. */
    const char *rel[] = {"/models/infilld-tiny-code", "/../share/infilld/models/infilld-tiny-code",
                         "/models/tiny-dream", "/../share/infilld/models/tiny-dream"};
    for (size_t i = 0; i < BASE_ARRAY_LEN(rel); i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s%s/config.json", exe, rel[i]);
        if (access(path, R_OK) == 0) {
            snprintf(out, cap, "%s%s", exe, rel[i]);
            return true;
        }
    }
    return false;
}

/* ---- context budget ------------------------------------------------------------ */

void ifl_budget_split(int budget, int n_prefix, int n_suffix, int *keep_prefix, int *keep_suffix) {
    if (budget < 0)
        budget = 0;
    int kp = budget - budget / 4, ks = budget / 4;
    if (n_suffix < ks) {
        kp += ks - n_suffix;
        ks = n_suffix;
    }
    if (n_prefix < kp) {
        ks = BASE_MIN(n_suffix, ks + (kp - n_prefix));
        kp = n_prefix;
    }
    *keep_prefix = kp;
    *keep_suffix = ks;
}

static base_status ifl__tokenize(const eng_tokenizer *t, const char *s, size_t n, int32_t **ids,
                                 int *n_ids) {
    size_t k = 0;
    *ids = NULL;
    base_status st = eng_tokenize(t, s, n, ids, &k);
    if (st != BASE_OK)
        return st;
    *n_ids = (int)k;
    return BASE_OK;
}

/* Start of a UTF-8 code point at or after off. */
static size_t ifl__cp_start(const char *s, size_t n, size_t off) {
    while (off < n && ((unsigned char)s[off] & 0xC0) == 0x80)
        off++;
    return off;
}

/* A cut's re-tokenizing rounds are preemption checks of a prefill. */
typedef struct ifl__yq {
    ifl_model *m;
    bool prefill;
    const volatile int *cancel;
} ifl__yq;

/* Drops the oldest prefix lines until the prefix has at most keep tokens;
 * *ids / *n_ids come in as the whole prefix's tokens. */
static base_status ifl__cut_prefix(const eng_tokenizer *t, const char *s, size_t n, int keep,
                                   int32_t **ids, int *n_ids, size_t *cut, const ifl__yq *y) {
    size_t off = 0;
    base_status st = BASE_OK;
    for (int iter = 0; st == BASE_OK && *n_ids > keep && iter < 24; iter++) {
        if (ifl__yield(y->m, y->prefill, y->cancel, IFL_PH_CUT)) {
            st = BASE_ERR_CANCELLED;
            break;
        }
        size_t rest = n - off;
        size_t want = keep <= 0 ? 0 : (size_t)((double)rest * keep / *n_ids);
        size_t o = n - want;
        if (o <= off)
            o = off + 1;
        const char *nl = memchr(s + o, '\n', n - o);
        size_t next = nl ? (size_t)(nl - s) + 1 : ifl__cp_start(s, n, o);
        if (keep <= 0 || next >= n)
            next = n;
        off = next;
        free(*ids);
        st = ifl__tokenize(t, s + off, n - off, ids, n_ids);
    }
    *cut = off;
    return st;
}

/* Drops the last suffix lines until the suffix has at most keep tokens;
 * *ids / *n_ids come in as the whole suffix's tokens. */
static base_status ifl__cut_suffix(const eng_tokenizer *t, const char *s, size_t n, int keep,
                                   int32_t **ids, int *n_ids, size_t *cut, const ifl__yq *y) {
    size_t end = n;
    base_status st = BASE_OK;
    for (int iter = 0; st == BASE_OK && *n_ids > keep && iter < 24; iter++) {
        if (ifl__yield(y->m, y->prefill, y->cancel, IFL_PH_CUT)) {
            st = BASE_ERR_CANCELLED;
            break;
        }
        size_t want = keep <= 0 ? 0 : (size_t)((double)end * keep / *n_ids);
        if (want >= end)
            want = end - 1;
        size_t e = want;
        while (e > 0 && s[e - 1] != '\n')
            e--;
        if (e == 0)
            e = ifl__cp_start(s, n, want);
        if (keep <= 0)
            e = 0;
        end = e;
        free(*ids);
        st = ifl__tokenize(t, s, end, ids, n_ids);
    }
    *cut = n - end;
    return st;
}

/* ---- one infill from text ------------------------------------------------------- */

/* The cut's anchor: what follows the prefix cut and precedes the suffix cut. */
static void ifl__anchor_of(const ifl_text_req *r, const ifl_text_res *out, ifl_kv_anchor *an) {
    memset(an, 0, sizeof *an);
    an->prefix_cut = out->prefix_cut;
    an->suffix_cut = out->suffix_cut;
    an->ctx_tokens = out->n_prefix_tokens + out->n_suffix_tokens;
    if (r->prefix_ids || r->suffix_ids)
        return;
    size_t hp = r->prefix_len - BASE_MIN(out->prefix_cut, r->prefix_len);
    an->n_head = (int)BASE_MIN(hp, sizeof an->head);
    memcpy(an->head, r->prefix + out->prefix_cut, (size_t)an->n_head);
    size_t ts = r->suffix_len - BASE_MIN(out->suffix_cut, r->suffix_len);
    an->n_tail = (int)BASE_MIN(ts, sizeof an->tail);
    memcpy(an->tail, r->suffix + ts - (size_t)an->n_tail, (size_t)an->n_tail);
}

/* Keeps the canvas the ctx holds as key's context, with its anchor; pl is
 * the store's plan of the run (NULL: computed whole, e.g. a prefill's pass),
 * whose warm window predicts the next warm step's rows. */
static void ifl__kv_keep(ifl_model *m, const ifl_text_req *r, const ifl_text_res *out, int len,
                         int hs, int n_hole, const ifl_kv_plan *pl) {
    ifl_kv_anchor an;
    ifl__anchor_of(r, out, &an);
    an.window_extra = pl && pl->warm ? BASE_MAX(0, pl->reencoded - n_hole) : -1;
    base_status ks = ifl_kv_save(m->kv, r->kv_key, m->kv_canvas, len, hs, n_hole, pl, m->ctx, &an);
    if (ks != BASE_OK)
        BASE_LOGW("ifl", "context K/V not kept (%s)", base_status_str(ks));
}

/* One side of a held cut: its tokens become text's, cut at byte `at`, when
 * they keep at least `need` (else the fresh cut's stay). */
static base_status ifl__hold_side(ifl_model *m, const char *text, size_t len, int need, size_t at,
                                  int32_t **ids, int *n, size_t *cut, bool *held) {
    int32_t *t = NULL;
    int nt = 0;
    base_status st = ifl__tokenize(m->tok, text, len, &t, &nt);
    if (st != BASE_OK)
        return st;
    if (nt < need) {
        free(t);
        return BASE_OK;
    }
    free(*ids);
    *ids = t;
    *n = nt;
    *cut = at;
    *held = true;
    return BASE_OK;
}

/* The fallback of a request whose fresh cut the store cannot reuse (a jump,
 * or a window over half the canvas) and whose full forward would pass the
 * deadline: holds the cut inside the document's kept canvas. An edge the
 * fresh cut would move outward (the cursor moved up or down, text was
 * deleted, the planner allowed more context) stays where the kept canvas
 * has it, while the text there is unchanged and the cursor is still well
 * inside (each side at least half its share of the kept canvas); an edge
 * the fresh cut moves inward keeps the fresh cut. The answer then comes
 * from a little less context than the plan allowed, instead of none or a
 * late one; *held says whether an edge moved. */
static base_status ifl__hold_edges(ifl_model *m, const ifl_text_req *r, int budget, int32_t **pre,
                                   int *n_pre, int32_t **suf, int *n_suf, ifl_text_res *out,
                                   bool *held) {
    ifl_kv_anchor an;
    *held = false;
    if (!ifl_kv_anchor_get(m->kv, r->kv_key, &an) || !r->prefix || !r->suffix)
        return BASE_OK;
    /* The kept canvas's own shares, not the new budget's. */
    const int b0 = an.ctx_tokens > 0 ? BASE_MIN(an.ctx_tokens, budget) : budget;
    const int kp = b0 - b0 / 4, ks = b0 / 4;
    base_status st = BASE_OK;
    size_t a = an.prefix_cut, c = an.suffix_cut;
    if (a > out->prefix_cut && a <= r->prefix_len && r->prefix[a - 1] == '\n') {
        size_t hp = r->prefix_len - a;
        if ((size_t)an.n_head == BASE_MIN(hp, sizeof an.head) &&
            memcmp(r->prefix + a, an.head, (size_t)an.n_head) == 0) {
            st =
                ifl__hold_side(m, r->prefix + a, hp, kp / 2, a, pre, n_pre, &out->prefix_cut, held);
            if (st != BASE_OK)
                return st;
        }
    }
    if (c > out->suffix_cut && c <= r->suffix_len) {
        size_t ts = r->suffix_len - c;
        if ((size_t)an.n_tail == BASE_MIN(ts, sizeof an.tail) &&
            memcmp(r->suffix + ts - (size_t)an.n_tail, an.tail, (size_t)an.n_tail) == 0) {
            st = ifl__hold_side(m, r->suffix, ts, ks / 2, c, suf, n_suf, &out->suffix_cut, held);
            if (st != BASE_OK)
                return st;
        }
    }
    return BASE_OK;
}

/* Detokenizes ids, skipping ids the tokenizer has no text for (the embedding's
 * padding rows past the vocabulary, which a random or untrained model may
 * pick) and added tokens, special or not (partial texts show no
 * <|fim_suffix|> either). */
static base_status ifl__detok(const eng_tokenizer *t, const int32_t *ids, int n, char **out,
                              size_t *len) {
    int32_t *ok = malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!ok)
        return BASE_ERR_NOMEM;
    int k = 0;
    for (int i = 0; i < n; i++) {
        size_t bl;
        if (eng_token_bytes(t, ids[i], &bl) && !eng_token_is_added(t, ids[i]))
            ok[k++] = ids[i];
    }
    base_status st = eng_detokenize(t, ok, (size_t)k, true, out, len);
    free(ok);
    return st;
}

typedef struct ifl__partial_ctx {
    const ifl_text_req *req;
    const eng_tokenizer *tok;
    int32_t mask_id;
    const eng_model_info *info;
    base_buf buf;
    int32_t *run; /* scratch: ids of one unmasked run */
    int cap;
} ifl__partial_ctx;

/* Detokenizes a hole with masks as placeholders (one per run of masks). */
static void ifl__render(ifl__partial_ctx *pc, const int32_t *hole, int n) {
    pc->buf.len = 0;
    if (pc->buf.cap)
        pc->buf.data[0] = 0;
    int i = 0;
    while (i < n) {
        if (hole[i] == pc->mask_id) {
            base_buf_appends(&pc->buf, IFL_MASK_PLACEHOLDER);
            while (i < n && hole[i] == pc->mask_id)
                i++;
            continue;
        }
        int k = 0;
        while (i < n && hole[i] != pc->mask_id && k < pc->cap)
            pc->run[k++] = hole[i++];
        char *txt = NULL;
        size_t len = 0;
        if (ifl__detok(pc->tok, pc->run, k, &txt, &len) == BASE_OK)
            base_buf_append(&pc->buf, txt, len);
        free(txt);
    }
}

static void ifl__on_progress(void *ud, const eng_diff_progress *p) {
    ifl__partial_ctx *pc = ud;
    ifl__render(pc, p->hole, p->n_hole);
    pc->req->partial(pc->req->partial_ud, pc->buf.data ? pc->buf.data : "", pc->buf.len, p->step,
                     p->steps);
}

void ifl_text_res_free(ifl_text_res *r) {
    if (!r)
        return;
    for (int i = 0; i < r->n_cand; i++)
        free(r->cand[i].text);
    free(r->tokens);
    memset(r, 0, sizeof *r);
}

/* DiffusionGemma: the Gemma-4 chat prompt around the cut context, one run
 * of the entropy-bound sampler, the answer cleaned (dgemma_fim.h). */
static base_status ifl__dg_infill(ifl_model *m, const ifl_text_req *r, const volatile int *cancel,
                                  ifl_text_res *out) {
    uint64_t t0 = base_now_ns();
    if (r->prefix_ids || r->suffix_ids)
        return BASE_ERR_UNSUPPORTED; /* the template is text */
    const eng_dg_info *dgi = eng_dg_get_info(m->model);
    const char *pre = r->prefix ? r->prefix : "", *suf = r->suffix ? r->suffix : "";
    size_t np = r->prefix ? r->prefix_len : 0, ns = r->suffix ? r->suffix_len : 0;
    int32_t *ids = NULL, *cut = NULL, *pin = NULL;
    int n_ids = 0, n0 = 0, n1 = 0, n_cut = 0;
    char *user = NULL, *ans = NULL;
    size_t n_user = 0, n_ans = 0;
    eng_eb_result er = {0};
    const ifl__yq yq = {m, false, cancel};
    int32_t *tp = NULL, *ts = NULL;
    base_status st = ifl__tokenize(m->tok, pre, np, &tp, &n0);
    if (st == BASE_OK)
        st = ifl__tokenize(m->tok, suf, ns, &ts, &n1);
    int budget = (r->ctx_budget > 0 ? r->ctx_budget : m->max_len) - 96; /* the template */
    budget = BASE_MIN(budget, m->max_len - 96);
    if (st == BASE_OK && budget < 0)
        st = BASE_ERR_TOO_LARGE;
    int kp = 0, ks = 0;
    if (st == BASE_OK)
        ifl_budget_split(budget, n0, n1, &kp, &ks);
    if (st == BASE_OK && n0 > kp) {
        n_cut = n0;
        st = ifl__cut_prefix(m->tok, pre, np, kp, &tp, &n_cut, &out->prefix_cut, &yq);
    }
    if (st == BASE_OK && n1 > ks) {
        n_cut = n1;
        st = ifl__cut_suffix(m->tok, suf, ns, ks, &ts, &n_cut, &out->suffix_cut, &yq);
    }
    free(tp);
    free(ts);
    if (st != BASE_OK)
        goto done;
    pre += out->prefix_cut, np -= out->prefix_cut, ns -= out->suffix_cut;
    out->n_prefix_tokens = BASE_MIN(n0, kp);
    out->n_suffix_tokens = BASE_MIN(n1, ks);
    const bool pin_mode = r->dg_infill == IFL_DG_INFILL_PIN;
    const int cl = dgi->canvas_len;
    int slots = 0, n_pinned = 0;
    if (pin_mode) {
        /* (b): <bos> + the prefix as plain text in the encoder; the canvas is
         * [slots hole positions][the suffix's first tokens, pinned][free]. */
        slots = r->params.n_hole > 0 ? BASE_MIN(r->params.n_hole, cl) : BASE_MAX(1, cl / 4);
        int32_t *sid = NULL;
        int n_sid = 0;
        if ((st = ifl__tokenize(m->tok, pre, np, &cut, &n_cut)) ||
            (st = ifl__tokenize(m->tok, suf, ns, &sid, &n_sid))) {
            free(sid);
            goto done;
        }
        ids = malloc(sizeof(int32_t) * (size_t)(n_cut + 1));
        pin = malloc(sizeof(int32_t) * (size_t)cl);
        if (!ids || !pin) {
            free(sid);
            st = BASE_ERR_NOMEM;
            goto done;
        }
        ids[0] = dgi->bos_id;
        memcpy(ids + 1, cut, sizeof(int32_t) * (size_t)n_cut);
        n_ids = n_cut + 1;
        n_pinned = BASE_MIN(n_sid, cl - slots);
        for (int i = 0; i < cl; i++)
            pin[i] = i >= slots && i < slots + n_pinned ? sid[i - slots] : -1;
        free(sid);
    } else if ((st = ifl_dg_user_text(pre, np, suf, ns, NULL, &user, &n_user)) ||
               (st = ifl_dg_prompt_ids(m->tok, user, n_user, &ids, &n_ids))) {
        goto done;
    }
    out->t.tokenize_ms = base_ms_since(t0);
    eng_eb_params ep;
    eng_eb_params_default(m->model, &ep);
    if (pin_mode) {
        ep.pin = pin;
        ep.n_pin = cl;
        ep.max_new_tokens = cl;
    }
    out->eb.infill = r->dg_infill;
    out->eb.n_hole_slots = slots;
    out->eb.n_pinned = n_pinned;
    if (pin_mode)
        BASE_LOGD("ifl", "DiffusionGemma infill: suffix pinned, %d hole slots, %d suffix tokens",
                  slots, n_pinned);
    else
        BASE_LOGD("ifl", "DiffusionGemma infill: prompt-level FIM, %d prompt tokens", n_ids);
    ep.seed = r->params.seed;
    ep.cancel = cancel;
    if (r->params.max_steps > 0)
        ep.max_steps = r->params.max_steps;
    out->eb.used = true;
    out->eb.self_cond = ep.self_cond;
    out->eb.max_steps = ep.max_steps;
    out->eb.stability = ep.stability;
    out->eb.t_min = ep.t_min;
    out->eb.t_max = ep.t_max;
    out->eb.entropy_bound = ep.entropy_bound;
    out->eb.confidence = ep.confidence;
    eng_dg_cache_truncate(m->dg, 0);
    eng_dg_set_cancel(m->dg, cancel);
    uint64_t t1 = base_now_ns();
    st = eng_eb_generate(m->dg, ids, n_ids, &ep, &er);
    eng_dg_set_cancel(m->dg, NULL);
    out->t.diffuse_ms = base_ms_since(t1);
    if (st != BASE_OK)
        goto done;
    out->steps_run = er.steps_run;
    out->n_forward_full = er.steps_run;
    out->t.step_ms = er.ms_decode;
    /* the canvas ends with a stop id or pad: the hole never grows; pin mode:
     * the hole is its slots, up to a stop id in them */
    const int n_keep = pin_mode ? slots : er.n_tokens;
    const int n_text = pin_mode ? BASE_MIN(slots, er.n_text) : er.n_text;
    out->n_tokens = n_keep + 1;
    out->tokens = malloc(sizeof(int32_t) * (size_t)(out->n_tokens + 1));
    if (!out->tokens) {
        st = BASE_ERR_NOMEM;
        goto done;
    }
    memcpy(out->tokens, er.tokens, sizeof(int32_t) * (size_t)n_keep);
    out->tokens[n_keep] = dgi->pad_id;
    uint64_t t2 = base_now_ns();
    if ((st = eng_detokenize(m->tok, er.tokens, (size_t)n_text, true, &ans, &n_ans)))
        goto done;
    if (pin_mode) {
        /* plain continuation text: no chat framing to strip */
        out->cand[0].text = ans;
        out->cand[0].len = n_ans;
        ans = NULL;
    } else if ((st = ifl_dg_clean(ans, n_ans, pre, np, suf, ns, &out->cand[0].text,
                                  &out->cand[0].len))) {
        goto done;
    }
    out->cand[0].mean_conf = 1.0;
    out->n_cand = 1;
    out->t.detok_ms = base_ms_since(t2);
done:
    free(ids);
    free(cut);
    free(pin);
    free(user);
    free(ans);
    eng_eb_result_free(&er);
    out->t.total_ms = base_ms_since(t0);
    if (st != BASE_OK)
        ifl_text_res_free(out);
    return st;
}

base_status ifl_infill_text(ifl_model *m, const ifl_text_req *r, const volatile int *cancel,
                            ifl_text_res *out) {
    memset(out, 0, sizeof *out);
    if (m->dg)
        return r->prefill ? BASE_ERR_UNSUPPORTED : ifl__dg_infill(m, r, cancel, out);
    uint64_t t0 = base_now_ns();
    eng_diff_params p = r->params;
    if (p.candidates > m->max_batch)
        p.candidates = m->max_batch;
    if (p.candidates < 1)
        p.candidates = 1;
    p.cancel = cancel;
    int32_t *pre = NULL, *suf = NULL;
    int n_pre = 0, n_suf = 0;
    base_status st = BASE_OK;
    /* Budget: the canvas minus the hole, its growth (DreamOn) and specials. */
    eng_diff_prompt probe = {NULL, 0, NULL, 0};
    int fixed = eng_diff_canvas_len(&m->info, &probe, &p);
    int budget = r->ctx_budget > 0 ? r->ctx_budget : m->max_len;
    if (budget > m->max_len - fixed)
        budget = m->max_len - fixed;
    if (budget < 0) {
        st = BASE_ERR_TOO_LARGE;
        goto done;
    }
    const bool kv_on =
        r->kv_key && m->kv && ifl_kv_get_opts(m->kv)->enabled && p.mode == ENG_CACHE_CACHED &&
        (p.alg == ENG_ALG_DEFAULT ? eng_alg_default(&m->info) : p.alg) != ENG_ALG_DREAMON;
    if (r->prefix_ids || r->suffix_ids) {
        n_pre = r->prefix_ids ? r->n_prefix_ids : 0;
        n_suf = r->suffix_ids ? r->n_suffix_ids : 0;
        pre = malloc(sizeof(int32_t) * (size_t)(n_pre + 1));
        suf = malloc(sizeof(int32_t) * (size_t)(n_suf + 1));
        if (!pre || !suf) {
            st = BASE_ERR_NOMEM;
            goto done;
        }
        int kp, ks;
        ifl_budget_split(budget, n_pre, n_suf, &kp, &ks);
        memcpy(pre, r->prefix_ids + (n_pre - kp), sizeof(int32_t) * (size_t)kp);
        if (ks > 0)
            memcpy(suf, r->suffix_ids, sizeof(int32_t) * (size_t)ks);
        n_pre = kp;
        n_suf = ks;
    } else {
        int np0 = 0, ns0 = 0;
        const ifl__yq yq = {m, r->prefill, cancel};
        if (r->tok_prefix && r->tok_suffix) {
            /* The planner's count tokenized these very strings. */
            np0 = r->n_tok_prefix;
            ns0 = r->n_tok_suffix;
            pre = malloc(sizeof(int32_t) * (size_t)(np0 + 1));
            suf = malloc(sizeof(int32_t) * (size_t)(ns0 + 1));
            if (!pre || !suf) {
                st = BASE_ERR_NOMEM;
                goto done;
            }
            memcpy(pre, r->tok_prefix, sizeof(int32_t) * (size_t)np0);
            memcpy(suf, r->tok_suffix, sizeof(int32_t) * (size_t)ns0);
        } else {
            st = ifl__tokenize(m->tok, r->prefix ? r->prefix : "", r->prefix_len, &pre, &np0);
            if (st == BASE_OK && ifl__yield(m, r->prefill, cancel, IFL_PH_TOKENIZE))
                st = BASE_ERR_CANCELLED;
            if (st == BASE_OK)
                st = ifl__tokenize(m->tok, r->suffix ? r->suffix : "", r->suffix_len, &suf, &ns0);
            if (st == BASE_OK && ifl__yield(m, r->prefill, cancel, IFL_PH_TOKENIZE))
                st = BASE_ERR_CANCELLED;
        }
        if (st != BASE_OK)
            goto done;
        int kp, ks;
        ifl_budget_split(budget, np0, ns0, &kp, &ks);
        n_pre = np0;
        n_suf = ns0;
        if (np0 > kp)
            st = ifl__cut_prefix(m->tok, r->prefix, r->prefix_len, kp, &pre, &n_pre,
                                 &out->prefix_cut, &yq);
        if (st == BASE_OK && ns0 > ks)
            st = ifl__cut_suffix(m->tok, r->suffix, r->suffix_len, ks, &suf, &n_suf,
                                 &out->suffix_cut, &yq);
        /* The cut is the same with a kept context as without: contextCache
         * changes which rows are recomputed, not the canvas, except where
         * the store cannot reuse this cut in time (ifl__hold_edges, below). */
        if (st != BASE_OK)
            goto done;
    }
    out->n_prefix_tokens = n_pre;
    out->n_suffix_tokens = n_suf;
    out->t.tokenize_ms = base_ms_since(t0);

    ifl__partial_ctx pc = {r, m->tok, m->info.mask_id, &m->info, {0}, NULL, 0};
    if (r->partial) {
        pc.cap = m->max_len;
        pc.run = malloc(sizeof(int32_t) * (size_t)pc.cap);
        base_buf_init(&pc.buf);
        if (!pc.run || base_buf_reserve(&pc.buf, 256) != BASE_OK) {
            free(pc.run);
            st = BASE_ERR_NOMEM;
            goto done;
        }
        p.progress = ifl__on_progress;
        p.progress_ud = &pc;
    }
    eng_stepper stp = eng_stepper_ctx(m->ctx);
    ifl__wrapped wrapped = {m, stp};
    if (m->wrap) {
        stp.step = ifl__wrapped_step;
        stp.ud = &wrapped;
    }
    ifl__pf_stepper pfs = {m, stp, r->prefill, 0, false, false, cancel};
    stp = (eng_stepper){ifl__pf_step, &pfs};
    if (p.deadline_ns) {
        p.step_cost = ifl__step_cost;
        p.step_cost_ud = &m->cost;
    }
    eng_diff_prompt prompt = {pre, n_pre, suf, n_suf};
    if (r->prefill) {
        /* The longest stretch of this forward without a check: one layer,
         * or the last one with the LM head and sampler after it. */
        int len = eng_diff_canvas_len(&m->info, &prompt, &p);
        int npos = p.n_hole * p.candidates;
        double full = ifl_cost_step_ms(&m->cost, len * p.candidates, len, npos);
        double head = ifl_cost_step_ms(&m->cost, 0, 0, npos) - ifl_cost_step_ms(&m->cost, 0, 0, 0);
        if (head < 0 || head > full)
            head = 0;
        m->pf_chunk_ms = (full - head) / (m->info.n_layer > 0 ? m->info.n_layer : 1) + head;
        base_flag_set(&m->pf_pred_ms, (int)BASE_MIN(full + 1.0, 1e9));
    }
    eng_diff_result dr;
    eng_ctx_set_cancel(m->ctx, cancel);
    uint64_t t1 = base_now_ns();
    /* Context K/V kept from the document's last run: import the rows the
     * store matched and re-encode one window (kvstore.h). */
    ifl_kv_plan kvp;
    int kv_len = 0, kv_hs = 0;
    bool kv_use = false, full_fits = true, held = false;
    /* A prefill leaves the store alone: the request that follows plans it. */
    if (kv_on && !r->prefill) {
    plan:
        kv_len = eng_diff_layout(&m->info, &prompt, p.n_hole, m->kv_canvas, m->max_len, &kv_hs);
        /* Whether a full forward of this canvas fits what is left of the
         * budget: if not, stale rows are reused once more, and a canvas the
         * store cannot reuse at all is answered at once (below). */
        if (p.deadline_ns && kv_len > 0) {
            double need =
                ifl_cost_step_ms(&m->cost, kv_len * p.candidates, kv_len, p.n_hole * p.candidates);
            uint64_t now = base_now_ns();
            full_fits = now < p.deadline_ns && need <= (double)(p.deadline_ns - now) / 1e6;
        }
        if (kv_len > 0 && ifl_kv_plan_canvas(m->kv, r->kv_key, m->kv_canvas, kv_len, kv_hs,
                                             p.n_hole, full_fits, &kvp) == BASE_OK) {
            kv_use = true;
            if (!kvp.warm && !full_fits && !held && kvp.why &&
                (strcmp(kvp.why, "jump") == 0 || strcmp(kvp.why, "window") == 0)) {
                /* The fresh cut would be refused below: try the kept
                 * canvas's edges (a canvas as the store has it, so the
                 * refusal stays for a real jump). */
                bool moved = false;
                st = ifl__hold_edges(m, r, budget, &pre, &n_pre, &suf, &n_suf, out, &moved);
                if (st != BASE_OK)
                    goto ran;
                held = true;
                if (moved) {
                    ifl_kv_plan_discard(m->kv, &kvp);
                    prompt = (eng_diff_prompt){pre, n_pre, suf, n_suf};
                    out->n_prefix_tokens = n_pre;
                    out->n_suffix_tokens = n_suf;
                    goto plan;
                }
            }
            if (kvp.warm && ifl_pf_covers(&m->pf, m->ctx_gen, m->kv_canvas, kv_len, p.candidates)) {
                /* A prefill computed this canvas's full forward: exact and
                 * free, better than the kept rows' approximation. */
                kvp.warm = false;
                kvp.why = "prefilled";
                kvp.reused = kvp.shifted = 0;
                kvp.reencoded = kv_len;
            }
            if (kvp.warm) {
                int n_saved = 0;
                const float *saved = ifl_kv_rows(m->kv, r->kv_key, &n_saved);
                eng_batch kb = {p.candidates, kv_len, NULL, NULL};
                /* every candidate row starts as the layout */
                int32_t *kt = malloc(sizeof(int32_t) * (size_t)p.candidates * (size_t)kv_len);
                base_status ks = kt ? BASE_OK : BASE_ERR_NOMEM;
                if (kt) {
                    for (int b = 0; b < p.candidates; b++)
                        memcpy(kt + (size_t)b * kv_len, m->kv_canvas,
                               sizeof(int32_t) * (size_t)kv_len);
                    kb.tokens = kt;
                    ks = eng_ctx_kv_import(m->ctx, &kb, saved, kvp.src, n_saved);
                    m->ctx_gen++;
                }
                free(kt);
                if (ks == BASE_OK) {
                    p.warm_lo = kvp.lo;
                    p.warm_hi = kvp.hi;
                } else {
                    kvp.warm = false;
                    kvp.why = ks == BASE_ERR_UNSUPPORTED ? "off" : "cold";
                    kvp.reused = kvp.shifted = 0;
                    kvp.reencoded = kv_len;
                }
            }
            out->kv_why = kvp.why;
            out->kv_reused = kvp.reused;
            out->kv_shifted = kvp.shifted;
            out->kv_reencoded = kvp.warm ? kvp.reencoded : kv_len;
        }
    }
    if (kv_use && !kvp.warm && !full_fits && kvp.why &&
        (strcmp(kvp.why, "jump") == 0 || strcmp(kvp.why, "window") == 0)) {
        /* The plan priced a warm first step; a full forward that alone
         * passes the deadline would answer late. Answer nothing now: the
         * next request plans a cold canvas that fits, and the idle prefill
         * rebuilds the document's context meanwhile. */
        ifl_kv_forget(m->kv, r->kv_key);
        out->kv_refused = true;
        goto ran;
    }
    st = eng_diffuse(m->diff, &stp, &prompt, &p, &dr);
    if (kv_on && r->prefill && pfs.kept) {
        /* A prefill's pass is whole and exact: from now on the document's
         * kept context, so that the next request is warm from it even when
         * the user typed in between (the slot then no longer matches). */
        kv_len = eng_diff_layout(&m->info, &prompt, p.n_hole, m->kv_canvas, m->max_len, &kv_hs);
        if (kv_len > 0)
            ifl__kv_keep(m, r, out, kv_len, kv_hs, p.n_hole, NULL);
    }
    if (kv_use) {
        /* Only a run that stepped leaves this canvas's K/V in the cache (a
         * hole filled by hole_init runs no step). */
        if (st == BASE_OK && dr.n_forward_full + dr.n_forward_window > 0) {
            ifl__kv_keep(m, r, out, kv_len, kv_hs, p.n_hole, &kvp);
        } else {
            ifl_kv_forget(m->kv, r->kv_key); /* the cache holds a partial pass */
        }
    }
ran:
    out->t.diffuse_ms = base_ms_since(t1);
    eng_ctx_set_cancel(m->ctx, NULL);
    if (r->partial) {
        free(pc.run);
        base_buf_deinit(&pc.buf);
    }
    if (st != BASE_OK)
        goto done;
    if (out->kv_refused) { /* nothing ran: no candidate */
        out->tokens = malloc(sizeof(int32_t));
        st = out->tokens ? BASE_OK : BASE_ERR_NOMEM;
        goto done;
    }
    out->t.step_ms = dr.ms_step;
    out->predicted_step_ms = dr.ms_predicted;
    out->prefill_hit = pfs.hit;
    /* A step served from the prefill took no time: not an observation. */
    if (p.step_cost && !pfs.hit)
        ifl_cost_observe(&m->cost, dr.ms_predicted, dr.ms_step);
    out->steps_run = dr.steps_run;
    out->n_forward_full = dr.n_forward_full;
    out->n_forward_window = dr.n_forward_window;
    out->rows_computed = dr.rows_computed;
    out->alg = dr.alg;
    uint64_t t2 = base_now_ns();
    out->n_tokens = dr.cand[0].n_tokens;
    out->tokens = malloc(sizeof(int32_t) * (size_t)(out->n_tokens + 1));
    if (!out->tokens) {
        st = BASE_ERR_NOMEM;
        goto done;
    }
    memcpy(out->tokens, dr.cand[0].tokens, sizeof(int32_t) * (size_t)out->n_tokens);
    for (int c = 0; c < dr.n_candidates; c++) {
        ifl_text_cand *tc = &out->cand[c];
        st = ifl__detok(m->tok, dr.cand[c].text_ids, dr.cand[c].n_text_ids, &tc->text, &tc->len);
        if (st != BASE_OK)
            goto done;
        tc->mean_conf = dr.cand[c].mean_conf;
        tc->index = dr.cand[c].index;
        out->n_cand++;
    }
    out->t.detok_ms = base_ms_since(t2);
done:
    free(pre);
    free(suf);
    out->t.total_ms = base_ms_since(t0);
    if (st != BASE_OK)
        ifl_text_res_free(out);
    return st;
}

/* Several text requests in one padded batch (eng_diffuse_multi): the same
 * budget and context cut per request as ifl_infill_text, one candidate
 * each; every request's params must equal reqs[0]'s n_hole, alg, steps,
 * block, mode and temperature (the caller groups them). No ids, partials,
 * deadlines or hole growth. outs[i] as ifl_infill_text's out. */
base_status ifl_infill_text_multi(ifl_model *m, const ifl_text_req *reqs, int n,
                                  const volatile int *cancel, ifl_text_res *outs) {
    if (n < 1 || n > m->max_batch || n > ENG_DIFF_MAX_CANDIDATES)
        return BASE_ERR_INVALID;
    uint64_t t0 = base_now_ns();
    for (int i = 0; i < n; i++)
        memset(&outs[i], 0, sizeof outs[i]);
    eng_diff_params p = reqs[0].params;
    p.candidates = 1;
    p.cancel = cancel;
    p.deadline_ns = 0;
    p.hole_init = NULL;
    p.n_hole_init = 0;
    p.progress = NULL;
    int32_t *pre[ENG_DIFF_MAX_CANDIDATES] = {0}, *suf[ENG_DIFF_MAX_CANDIDATES] = {0};
    eng_diff_prompt prompts[ENG_DIFF_MAX_CANDIDATES];
    base_status st = BASE_OK;
    eng_diff_prompt probe = {NULL, 0, NULL, 0};
    int fixed = eng_diff_canvas_len(&m->info, &probe, &p);
    for (int i = 0; i < n && st == BASE_OK; i++) {
        const ifl_text_req *r = &reqs[i];
        ifl_text_res *out = &outs[i];
        int budget = r->ctx_budget > 0 ? r->ctx_budget : m->max_len;
        if (budget > m->max_len - fixed)
            budget = m->max_len - fixed;
        if (budget < 0) {
            st = BASE_ERR_TOO_LARGE;
            break;
        }
        int np0 = 0, ns0 = 0, n_pre, n_suf;
        st = ifl__tokenize(m->tok, r->prefix ? r->prefix : "", r->prefix_len, &pre[i], &np0);
        if (st == BASE_OK)
            st = ifl__tokenize(m->tok, r->suffix ? r->suffix : "", r->suffix_len, &suf[i], &ns0);
        if (st != BASE_OK)
            break;
        int kp, ks;
        ifl_budget_split(budget, np0, ns0, &kp, &ks);
        n_pre = np0;
        n_suf = ns0;
        const ifl__yq yq = {m, false, cancel};
        if (np0 > kp)
            st = ifl__cut_prefix(m->tok, r->prefix, r->prefix_len, kp, &pre[i], &n_pre,
                                 &out->prefix_cut, &yq);
        if (st == BASE_OK && ns0 > ks)
            st = ifl__cut_suffix(m->tok, r->suffix, r->suffix_len, ks, &suf[i], &n_suf,
                                 &out->suffix_cut, &yq);
        out->n_prefix_tokens = n_pre;
        out->n_suffix_tokens = n_suf;
        prompts[i] = (eng_diff_prompt){pre[i], n_pre, suf[i], n_suf};
    }
    double tok_ms = base_ms_since(t0);
    eng_diff_result dr;
    if (st == BASE_OK) {
        eng_stepper stp = eng_stepper_ctx(m->ctx);
        ifl__wrapped wrapped = {m, stp};
        if (m->wrap) {
            stp.step = ifl__wrapped_step;
            stp.ud = &wrapped;
        }
        m->ctx_gen++; /* its steps do not go through the prefill slot */
        eng_ctx_set_cancel(m->ctx, cancel);
        uint64_t t1 = base_now_ns();
        st = eng_diffuse_multi(m->diff, &stp, prompts, n, &p, &dr);
        double dms = base_ms_since(t1);
        eng_ctx_set_cancel(m->ctx, NULL);
        for (int i = 0; i < n; i++) {
            outs[i].t.tokenize_ms = tok_ms;
            outs[i].t.diffuse_ms = dms;
        }
    }
    for (int i = 0; i < n && st == BASE_OK; i++) {
        ifl_text_res *out = &outs[i];
        const eng_diff_candidate *c = &dr.cand[i];
        out->steps_run = dr.steps_run;
        out->n_forward_full = dr.n_forward_full;
        out->n_forward_window = dr.n_forward_window;
        out->t.step_ms = dr.ms_step;
        out->alg = dr.alg;
        out->n_tokens = c->n_tokens;
        out->tokens = malloc(sizeof(int32_t) * (size_t)(c->n_tokens + 1));
        if (!out->tokens) {
            st = BASE_ERR_NOMEM;
            break;
        }
        memcpy(out->tokens, c->tokens, sizeof(int32_t) * (size_t)c->n_tokens);
        st = ifl__detok(m->tok, c->text_ids, c->n_text_ids, &out->cand[0].text, &out->cand[0].len);
        if (st != BASE_OK)
            break;
        out->cand[0].mean_conf = c->mean_conf;
        out->cand[0].index = i;
        out->n_cand = 1;
        out->t.total_ms = base_ms_since(t0);
    }
    for (int i = 0; i < n; i++) {
        free(pre[i]);
        free(suf[i]);
        if (st != BASE_OK)
            ifl_text_res_free(&outs[i]);
    }
    return st;
}

/* ---- the pipeline on a document ---------------------------------------------------- */

bool ifl_dg_infill_parse(const char *s, ifl_dg_infill *out) {
    if (s && strcmp(s, "prompt") == 0)
        *out = IFL_DG_INFILL_PROMPT;
    else if (s && strcmp(s, "pin") == 0)
        *out = IFL_DG_INFILL_PIN;
    else
        return false;
    return true;
}

const char *ifl_dg_infill_name(ifl_dg_infill m) {
    return m == IFL_DG_INFILL_PIN ? "pin" : "prompt";
}

void ifl_doc_req_default(ifl_doc_req *r) {
    memset(r, 0, sizeof *r);
    r->validate = -1;
    r->alg = ENG_ALG_DEFAULT;
    r->candidates = 1;
    r->mode = ENG_CACHE_CACHED;
    r->eos_penalty = -1.0f;
}

void ifl_doc_res_free(ifl_doc_res *r) {
    if (!r)
        return;
    for (int i = 0; i < r->n_items; i++)
        free(r->items[i].text);
    ifl_text_res_free(&r->raw);
    memset(r, 0, sizeof *r);
}

/* Plain line rule when the syntax module cannot help: finish the current line
 * (or write one line on an empty one). */
static void ifl__line_span(const ifl_doc_req *r, ifl_span *sp) {
    memset(sp, 0, sizeof *sp);
    size_t c = r->cursor;
    bool at_eol = c >= r->len || r->text[c] == '\n' || r->text[c] == '\r';
    sp->kind = at_eol ? IFL_SPAN_LINE_END : IFL_SPAN_LINE_REST;
    sp->hole_start = sp->hole_end = c;
    sp->n_tokens = 16;
    sp->n_max = at_eol ? 64 : 48;
    sp->max_lines = 1;
    sp->reason = "line rule (no syntax span)";
}

/* First line of s (without the newline). */
static size_t ifl__first_line(const char *s, size_t n) {
    const char *nl = memchr(s, '\n', n);
    return nl ? (size_t)(nl - s) : n;
}

bool ifl_doc_span(const ifl_doc_req *r, base_status located, ifl_span *sp) {
    if (located == BASE_OK)
        return true;
    bool sel = r->sel_end > r->sel_start;
    ifl__line_span(r, sp);
    if (sel) {
        sp->kind = IFL_SPAN_SELECTION;
        sp->hole_start = r->sel_start;
        sp->hole_end = r->sel_end;
        sp->multiline = true;
        sp->max_lines = 64;
        sp->n_tokens = 64;
        sp->n_max = 128;
    }
    return false;
}

/* ifl_post_fn on the request's own text (the one-shot CLI, worker jobs that
 * post-process in place). */
static base_status ifl__post_text(void *ud, const ifl_span *span, const char *cand, size_t len,
                                  const ifl_post_opts *o, char **out, size_t *out_len) {
    const ifl_doc_req *r = ud;
    return ifl_syntax_postprocess_text(r->language, r->text, r->len, span, cand, len, o, out,
                                       out_len);
}

/* Hole growth (MODELS §2.2, docs/SAMPLERS.md §7): a fixed-canvas model cannot
 * end the code past the hole, so a hole filled to the last slot with no EOS
 * or pad most likely cut the code short; a larger hole is worth another run.
 * DreamOn sizes its hole itself, and a fixed size, a cancelled request or a
 * passed deadline leave no room for one. */
static bool ifl__should_grow(const ifl_model *m, const ifl_doc_req *r, const volatile int *cancel,
                             const ifl_text_res *raw, int n, int cap, uint64_t deadline) {
    if (r->n_hole > 0 || n >= cap || raw->alg == ENG_ALG_DREAMON || raw->n_tokens <= 0)
        return false;
    if (base_flag_get(cancel) || (deadline && base_now_ns() >= deadline))
        return false;
    for (int i = 0; i < raw->n_tokens; i++)
        if (raw->tokens[i] == m->info.eos_id || raw->tokens[i] == m->info.pad_id)
            return false;
    return true;
}

static double ifl__left_ms(uint64_t deadline) {
    uint64_t now = base_now_ns();
    return now >= deadline ? -(double)(now - deadline) / 1e6 : (double)(deadline - now) / 1e6;
}

/* The planner's view of a request: the context the canvas leaves after the
 * cap-sized hole, the sampler's block, the family's specials and shift. */
static void ifl__plan_in(const ifl_model *m, const ifl_text_req *tr, int n, int cap, int n_ctx,
                         double budget_ms, uint64_t deadline, ifl_plan_in *in) {
    memset(in, 0, sizeof *in);
    in->budget_ms = budget_ms;
    in->left_ms = ifl__left_ms(deadline);
    eng_diff_prompt probe = {NULL, 0, NULL, 0};
    eng_diff_params p = tr->params;
    p.n_hole = cap;
    int fixed = eng_diff_canvas_len(&m->info, &probe, &p);
    in->extra = fixed - cap;
    in->ctx_tokens = BASE_MIN(n_ctx, BASE_MAX(0, m->max_len - fixed));
    in->n_hole = n;
    in->n_cap = cap;
    in->candidates = tr->params.candidates;
    eng_alg a = tr->params.alg == ENG_ALG_DEFAULT ? eng_alg_default(&m->info) : tr->params.alg;
    in->block = tr->params.block > 0                              ? tr->params.block
                : (a == ENG_ALG_THRESHOLD || a == ENG_ALG_FACTOR) ? 32
                                                                  : 0;
    if (a == ENG_ALG_P2)
        in->block = 0;
    in->shift = m->info.shift_logits ? 1 : 0;
    in->exact = tr->params.mode == ENG_CACHE_EXACT || a == ENG_ALG_DREAMON;
    /* A kept context: the first step re-encodes the hole, a margin and the
     * edit (estimated; the store decides in ifl_infill_text). */
    ifl_kv_anchor an;
    if (!in->exact && tr->kv_key && m->kv && ifl_kv_get_opts(m->kv)->enabled &&
        ifl_kv_anchor_get(m->kv, tr->kv_key, &an)) {
        /* The last warm window predicts the next while the user types (a
         * few tokens changed next to the hole); after a cold run, a guess. */
        int margins = 2 * ifl_kv_get_opts(m->kv)->margin;
        in->warm_rows =
            cap + (an.window_extra >= 0 ? BASE_MAX(an.window_extra, margins) : margins + 32);
    }
}

/* What makes a request's first step: its text, span and settings (the
 * budget aside, which only the plan reads). A prefill and the request that
 * follows it have the same key. */
static uint64_t ifl__mix(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t ifl__pf_key(const ifl_doc_req *r, const ifl_source_req *sr) {
    uint64_t h = 1469598103934665603ull;
    h = ifl__mix(h, r->text, r->len);
    int64_t v[] = {(int64_t)r->len,
                   (int64_t)sr->prefix_len,
                   (int64_t)sr->suffix_len,
                   sr->n_hole,
                   sr->n_hole_cap,
                   r->candidates,
                   r->has_seed,
                   (int64_t)r->seed,
                   r->steps,
                   (int64_t)r->alg,
                   r->max_hole,
                   r->n_hole,
                   (int64_t)r->mode,
                   r->max_steps,
                   r->time_budget_ms,
                   r->grow_extend};
    h = ifl__mix(h, v, sizeof v);
    if (r->doc_key)
        h = ifl__mix(h, r->doc_key, strlen(r->doc_key) + 1);
    if (r->language)
        h = ifl__mix(h, r->language, strlen(r->language) + 1);
    return h;
}

/* The local source: main's engine run, planned from the cost model when the
 * request has a deadline, with hole growth. */
static base_status ifl__local_produce(void *self, const ifl_source_req *sr,
                                      const volatile int *cancel, ifl_doc_res *out) {
    ifl_model *m = self;
    const ifl_doc_req *r = sr->doc;
    uint64_t deadline = sr->deadline_ns;
    double budget_ms = sr->budget_ms;
    int n = sr->n_hole, cap = sr->n_hole_cap;
    ifl_text_req tr;
    memset(&tr, 0, sizeof tr);
    tr.prefix = sr->prefix;
    tr.prefix_len = sr->prefix_len;
    tr.suffix = sr->suffix;
    tr.suffix_len = sr->suffix_len;
    eng_diff_params_default(&tr.params);
    tr.params.alg = r->alg;
    tr.params.steps = r->steps;
    /* 0: the model folder's default (generation_config.json "candidates"). */
    tr.params.candidates = r->candidates > 0        ? r->candidates
                           : m->info.candidates > 0 ? m->info.candidates
                                                    : 1;
    if (tr.params.candidates > m->max_batch)
        tr.params.candidates = m->max_batch;
    tr.params.mode = r->mode;
    tr.params.seed = r->has_seed ? r->seed : 0;
    tr.params.deadline_ns = deadline;
    tr.params.max_steps = r->max_steps;
    tr.params.eos_penalty = r->eos_penalty >= 0.0f ? r->eos_penalty : m->info.eos_penalty;
    tr.dg_infill = r->dg_infill;
    if (tr.params.candidates > 1 && tr.params.temperature <= 0.0f)
        tr.params.temperature = 0.6f; /* distinct candidates need noise */
    tr.partial = r->partial;
    tr.partial_ud = r->partial_ud;
    tr.kv_key = r->doc_key;
    tr.prefill = r->prefill;
    if (r->doc_key && m->kv) {
        ifl_kv_opts ko = *ifl_kv_get_opts(m->kv);
        ifl_kv_opts def;
        ifl_kv_opts_default(&def);
        ko.enabled = true;
        ko.doc_bytes = r->kv_doc_mib > 0 ? (size_t)r->kv_doc_mib << 20 : def.doc_bytes;
        ko.total_bytes = r->kv_total_mib > 0 ? (size_t)r->kv_total_mib << 20 : def.total_bytes;
        ko.margin = r->kv_margin > 0 ? r->kv_margin : def.margin;
        ifl_kv_set_opts(m->kv, &ko);
    }
    ifl_plan_in pin;
    base_status st = BASE_OK;
    int n_ctx = 0; /* prefix + suffix tokens before any cut: what the planner sizes */
    /* Every phase before the first layer ends in a preemption check (ifl_phase). */
    if (ifl__yield(m, r->prefill, cancel, IFL_PH_PREPARE))
        return BASE_ERR_CANCELLED;
    int32_t *tp = NULL, *ts = NULL; /* the count's tokens, reused by every run */
    if (deadline) {
        int k = 0;
        st = ifl__tokenize(m->tok, tr.prefix, tr.prefix_len, &tp, &k);
        tr.n_tok_prefix = k;
        if (st == BASE_OK && ifl__yield(m, r->prefill, cancel, IFL_PH_COUNT))
            st = BASE_ERR_CANCELLED;
        if (st == BASE_OK)
            st = ifl__tokenize(m->tok, tr.suffix, tr.suffix_len, &ts, &k);
        tr.n_tok_suffix = k;
        if (st == BASE_OK && ifl__yield(m, r->prefill, cancel, IFL_PH_COUNT))
            st = BASE_ERR_CANCELLED;
        if (st != BASE_OK) {
            free(tp);
            free(ts);
            return st;
        }
        n_ctx = tr.n_tok_prefix + tr.n_tok_suffix;
        tr.tok_prefix = tp;
        tr.tok_suffix = ts;
    }
    /* A prefill of this very request kept its first step: plan around it. */
    const uint64_t key = deadline ? ifl__pf_key(r, sr) : 0;
    const bool pf_mine = deadline && !r->prefill && ifl_model_prefilled(m) && m->pf_key == key;
    int pf_ctx = 0, pf_cands = 0; /* a prefill's plan */
    for (;;) {
        tr.params.n_hole = n;
        if (deadline) {
            /* Plan this run from what is left of the budget. */
            ifl_plan pl;
            ifl__plan_in(m, &tr, n, cap, n_ctx, budget_ms, deadline, &pin);
            if (out->runs == 0 && pf_mine) {
                pin.prefilled_ctx = m->pf_ctx;
                pin.prefilled_cands = m->pf_cands;
            }
            pin.first_free = r->prefill;
            /* A pause the user makes: twice the budget, at least 1 s. */
            pin.first_max_ms = r->prefill ? fmax(2.0 * budget_ms, 1000.0) : 0.0;
            ifl_plan_make(&m->cost, &pin, &pl);
            if (r->prefill) {
                pf_ctx = pl.ctx_tokens;
                pf_cands = pl.candidates;
            }
            if (out->runs == 0)
                out->plan = pl;
            /* A cost model that refuses every request never observes a run to
             * correct it (e.g. measured while the machine was busy): count the
             * refusals so that the worker measures it again when idle. */
            if (!pl.run && out->runs == 0 && !r->prefill && pl.why &&
                strcmp(pl.why, "no step fits") == 0)
                m->n_starved++;
            else if (pl.run)
                m->n_starved = 0;
            if (!pl.run)
                break; /* nothing fits: the last run's answer, or none */
            tr.ctx_budget = pl.ctx_tokens < pin.ctx_tokens ? pl.ctx_tokens : 0;
            tr.params.candidates = pl.candidates;
            if (pl.max_steps > 0)
                tr.params.max_steps =
                    r->max_steps > 0 ? BASE_MIN(r->max_steps, pl.max_steps) : pl.max_steps;
        }
        /* A grown hole may start from what the last run wrote. */
        tr.params.hole_init = NULL;
        tr.params.n_hole_init = 0;
        if (out->runs > 0 && r->grow_extend && r->mode == ENG_CACHE_CACHED &&
            out->raw.alg != ENG_ALG_DREAMON && out->raw.n_tokens < n) {
            tr.params.hole_init = out->raw.tokens;
            tr.params.n_hole_init = out->raw.n_tokens;
            tr.params.hole_init_prob = out->raw.n_cand > 0 ? (float)out->raw.cand[0].mean_conf : 0;
        }
        if (base_flag_get(cancel)) {
            st = BASE_ERR_CANCELLED;
            break;
        }
        /* A prefill's first step, and the request's that takes it, run ahead
         * of the deadline: neither is cut to a final step for its own cost. */
        tr.params.first_free = deadline && out->runs == 0 && (r->prefill || pf_mine);
        ifl_text_res run;
        st = ifl_infill_text(m, &tr, cancel, &run);
        if (r->prefill && deadline && ifl_model_prefilled(m)) {
            m->pf_key = key;
            m->pf_ctx = pf_ctx;
            m->pf_cands = pf_cands;
        }
        if (st == BASE_ERR_TOO_LARGE && out->runs > 0) {
            st = BASE_OK; /* the canvas holds no larger hole: keep the last run */
            break;
        }
        if (st != BASE_OK)
            break; /* the caller frees out->raw */
        if (run.kv_refused && out->runs == 0) {
            out->plan.run = false;
            out->plan.why = "kept context lost";
            ifl_text_res_free(&out->raw);
            out->raw = run;
            break;
        }
        if (run.kv_refused) {
            ifl_text_res_free(&run); /* a grown run: the last run's answer stays */
            break;
        }
        if (out->runs == 0)
            out->prefill_hit = run.prefill_hit;
        /* Work adds up over the runs; the rest describes the last one. */
        run.steps_run += out->raw.steps_run;
        run.n_forward_full += out->raw.n_forward_full;
        run.n_forward_window += out->raw.n_forward_window;
        run.rows_computed += out->raw.rows_computed;
        run.predicted_step_ms += out->raw.predicted_step_ms;
        run.t.tokenize_ms += out->raw.t.tokenize_ms;
        run.t.diffuse_ms += out->raw.t.diffuse_ms;
        run.t.step_ms += out->raw.t.step_ms;
        run.t.detok_ms += out->raw.t.detok_ms;
        ifl_text_res_free(&out->raw);
        out->raw = run;
        out->runs++;
        out->n_hole = n;
        if (!ifl__should_grow(m, r, cancel, &out->raw, n, cap, deadline))
            break;
        int next = n > cap / 2 ? cap : 2 * n;
        if (deadline) {
            /* Grow only when a run of the larger hole is predicted to fit. */
            ifl_plan cur = out->plan;
            cur.ctx_tokens = tr.ctx_budget > 0 ? tr.ctx_budget : pin.ctx_tokens;
            cur.candidates = tr.params.candidates;
            if (!ifl_plan_grow(&m->cost, &pin, &cur,
                               ifl__left_ms(deadline) - ifl_plan_reserve_ms(budget_ms), next)) {
                out->grow_refused++;
                break;
            }
        }
        n = next;
    }
    free(tp);
    free(ts);
    return st;
}

ifl_source_i ifl_source_local(ifl_model *m) {
    ifl_source_i s = {"local", ifl__local_produce, m};
    return s;
}

base_status ifl_complete_doc(ifl_model *m, const ifl_doc_req *r, const volatile int *cancel,
                             ifl_doc_res *out) {
    ifl_source_i src = ifl_source_local(m);
    return ifl_complete_doc_src(&src, r, cancel, out);
}

base_status ifl_doc_prepare(const ifl_doc_req *r, ifl_doc_res *out, ifl_source_req *sr) {
    memset(out, 0, sizeof *out);
    memset(sr, 0, sizeof *sr);
    if (!r->text || r->cursor > r->len || r->sel_end > r->len || r->sel_start > r->sel_end)
        return BASE_ERR_RANGE;
    uint64_t t0 = base_now_ns();
    /* The budget counts from when the daemon received the request. */
    uint64_t deadline = r->deadline_ns;
    if (r->time_budget_ms > 0) {
        uint64_t d =
            (r->received_ns ? r->received_ns : t0) + (uint64_t)r->time_budget_ms * 1000000u;
        if (!deadline || d < deadline)
            deadline = d;
    }
    bool sel = r->sel_end > r->sel_start;
    base_status located = r->span_status;
    if (r->has_span)
        out->span = r->span;
    else
        located = ifl_syntax_locate_text(r->language, r->text, r->len, r->cursor,
                                         sel ? r->sel_start : r->cursor,
                                         sel ? r->sel_end : r->cursor, &out->span);
    out->syntax = ifl_doc_span(r, located, &out->span);
    double span_ms = base_ms_since(t0);
    ifl_span *sp = &out->span;
    if (sp->hole_start > sp->hole_end || sp->hole_end > r->len)
        return BASE_ERR_RANGE;
    /* The first run's hole and the largest it may grow to; a size the
     * request fixes never changes. */
    int n = sp->n_tokens > 0 ? sp->n_tokens : 16;
    int cap = BASE_MAX(sp->n_max, n);
    if (r->max_hole > 0) {
        n = BASE_MIN(n, r->max_hole);
        cap = BASE_MIN(cap, r->max_hole);
    }
    if (r->n_hole > 0)
        n = cap = r->n_hole;
    out->n_hole_first = n;
    out->n_hole_cap = cap;
    double budget_ms = deadline ? (double)(deadline - BASE_MIN(deadline, t0)) / 1e6 : 0.0;
    if (r->time_budget_ms > 0)
        budget_ms = r->time_budget_ms;
    ifl_source_req s = {r->text,
                        sp->hole_start,
                        r->text + sp->hole_end,
                        r->len - sp->hole_end,
                        n,
                        cap,
                        !sp->multiline,
                        deadline,
                        budget_ms,
                        r,
                        t0,
                        span_ms};
    *sr = s;
    return BASE_OK;
}

base_status ifl_doc_finish(const ifl_doc_req *r, ifl_doc_res *out, const ifl_source_req *sr,
                           base_status st) {
    if (st != BASE_OK) {
        ifl_text_res_free(&out->raw);
        return st;
    }
    out->raw.t.span_ms = sr->span_ms;
    if (!r->defer_post)
        st = ifl_doc_post(r, out, ifl__post_text, (void *)r);
    out->raw.t.total_ms = base_ms_since(sr->t0);
    return st;
}

base_status ifl_complete_doc_src(const ifl_source_i *src, const ifl_doc_req *r,
                                 const volatile int *cancel, ifl_doc_res *out) {
    ifl_source_req sr;
    base_status st = ifl_doc_prepare(r, out, &sr);
    if (st != BASE_OK)
        return st;
    st = src->produce(src->self, &sr, cancel, out);
    return ifl_doc_finish(r, out, &sr, st);
}

base_status ifl_doc_post(const ifl_doc_req *r, ifl_doc_res *out, ifl_post_fn post, void *ud) {
    uint64_t t1 = base_now_ns();
    const ifl_span *sp = &out->span;
    ifl_post_opts po = {r->validate != 0};
    for (int i = 0; i < out->n_items; i++)
        free(out->items[i].text);
    out->n_items = 0;
    out->n_rejected = 0;
    for (int c = 0; c < out->raw.n_cand; c++) {
        const ifl_text_cand *tc = &out->raw.cand[c];
        char *text = NULL;
        size_t text_len = 0;
        base_status ps = BASE_ERR_UNSUPPORTED;
        if (out->syntax && post)
            ps = post(ud, sp, tc->text, tc->len, &po, &text, &text_len);
        if (ps == BASE_ERR_PARSE) {
            /* Rejected by the syntax check: never answered (issue 19). */
            out->n_rejected++;
            continue;
        }
        if (!text) {
            size_t l = tc->len;
            if (!sp->multiline)
                l = ifl__first_line(tc->text, tc->len);
            text = malloc(l + 1);
            if (!text)
                return BASE_ERR_NOMEM;
            memcpy(text, tc->text, l);
            text[l] = 0;
            text_len = l;
        }
        ifl_doc_item *it = &out->items[out->n_items++];
        it->text = text;
        it->len = text_len;
        it->start = sp->hole_start;
        it->end = sp->hole_end;
        it->confidence = tc->mean_conf;
        it->valid = true;
    }
    out->raw.t.post_ms = base_ms_since(t1);
    return BASE_OK;
}
