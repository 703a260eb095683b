/* Diffusion samplers: prompt layout, transfer schedules, commit rules and the
 * denoising loop (MODELS.md §2–§3; every formula is restated in
 * docs/SAMPLERS.md, which the Python reference in tests/sampler/ follows).
 *
 * The loop asks a stepper for per-position (token, prob, margin, neg_entropy)
 * and commits some of the proposed tokens. Everything it touches lives in the
 * eng_diffuser allocated up front. */
#include "diffusion.h"
#include "flag.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counter-based host noise (the v index keeps it apart from the engine's
 * per-vocabulary noise, which uses v < vocab size). */
#define ENG__NOISE_V_ORIGIN 0xFFFFFFFFu
#define ENG__NOISE_V_ALGTEMP 0xFFFFFFFEu

static const char *const eng__alg_names[ENG_ALG_COUNT_] = {
    "origin", "maskgit_plus", "topk_margin", "entropy", "low_confidence",
    "p2",     "threshold",    "factor",      "dreamon",
};

const char *eng_alg_name(eng_alg a) {
    if ((int)a < 0 || a >= ENG_ALG_COUNT_)
        return "?";
    return eng__alg_names[a];
}

bool eng_alg_parse(const char *s, eng_alg *out) {
    if (!s)
        return false;
    for (int i = 0; i < ENG_ALG_COUNT_; i++) {
        if (strcmp(s, eng__alg_names[i]) == 0) {
            *out = (eng_alg)i;
            return true;
        }
    }
    if (strcmp(s, "default") == 0) {
        *out = ENG_ALG_DEFAULT;
        return true;
    }
    return false;
}

eng_alg eng_alg_default(const eng_model_info *info) {
    if (info->family == ENG_FAMILY_LLADA)
        return ENG_ALG_LOW_CONFIDENCE;
    if (info->family == ENG_FAMILY_OPEN_DCODER)
        return ENG_ALG_P2;
    if (info->expand_id >= 0)
        return ENG_ALG_DREAMON;
    return ENG_ALG_THRESHOLD;
}

void eng_diff_params_default(eng_diff_params *p) {
    memset(p, 0, sizeof *p);
    p->alg = ENG_ALG_DEFAULT;
    p->n_hole = 32;
    p->top_p = 1.0f;
    p->eps = 1e-3f;
    p->threshold = 0.9f;
    p->factor = 1.0f;
    p->candidates = 1;
    p->mode = ENG_CACHE_EXACT;
}

/* ---- layout ------------------------------------------------------------------ */

int eng_diff_layout(const eng_model_info *info, const eng_diff_prompt *p, int n_hole, int32_t *out,
                    int cap, int *hole_start) {
    int32_t lead = -1, tail = -1;
    switch (info->family) {
    case ENG_FAMILY_DREAM:
        lead = info->bos_id >= 0 ? info->bos_id : info->eos_id;
        tail = info->eos_id;
        break;
    case ENG_FAMILY_OPEN_DCODER:
        /* No special tokens; position 0 must not be a mask for a shifted model. */
        if (p->n_prefix == 0)
            lead = info->bos_id >= 0 ? info->bos_id : info->eos_id;
        break;
    case ENG_FAMILY_LLADA:
        lead = info->bos_id >= 0 ? info->bos_id : -1;
        if (lead < 0 && p->n_prefix == 0 && info->shift_logits)
            lead = info->eos_id;
        break;
    case ENG_FAMILY_DIFFUSION_GEMMA: /* no mask canvas: engine/dgemma.h */
        return -1;
    }
    int len = (lead >= 0) + p->n_prefix + n_hole + p->n_suffix + (tail >= 0);
    if (len > cap || n_hole < 0)
        return -1;
    int k = 0;
    if (lead >= 0)
        out[k++] = lead;
    for (int i = 0; i < p->n_prefix; i++)
        out[k++] = p->prefix[i];
    *hole_start = k;
    for (int i = 0; i < n_hole; i++)
        out[k++] = info->mask_id;
    for (int i = 0; i < p->n_suffix; i++)
        out[k++] = p->suffix[i];
    if (tail >= 0)
        out[k++] = tail;
    return k;
}

/* ---- schedules ----------------------------------------------------------------- */

float eng_diff_timestep(int j, int steps, float eps) {
    /* torch.linspace(1, eps, steps + 1) in float32: the first half counts up
     * from the start, the second half down from the end. volatile keeps the
     * compiler from fusing the multiply-add (torch rounds the product). */
    int n = steps + 1;
    if (n <= 1)
        return 1.0f;
    volatile float step = (eps - 1.0f) / (float)(n - 1);
    int halfway = n / 2;
    volatile float prod;
    if (j < halfway) {
        prod = step * (float)j;
        return 1.0f + prod;
    }
    prod = step * (float)(n - j - 1);
    return eps - prod;
}

int eng_diff_transfer_count(int n_masked, int j, int steps, float eps) {
    if (j >= steps - 1)
        return n_masked;
    float t = eng_diff_timestep(j, steps, eps);
    float s = eng_diff_timestep(j + 1, steps, eps);
    volatile float ratio = s / t;
    volatile float frac = 1.0f - ratio;
    volatile float k = (float)n_masked * frac;
    return (int)k;
}

/* ---- diffuser ---------------------------------------------------------------- */

typedef struct eng__seq {
    int blk;      /* current block index */
    int blk_step; /* steps taken inside the block */
    int blk_m0;   /* masks in the block when it started (LLaDA schedule) */
    int r0, r1;   /* this step's rows in the result array */
    int k;        /* planned commits this step (-1 = every requested row) */
    bool done;
    int n_gen;  /* DreamOn: current hole length */
    int budget; /* DreamOn: expansions left */
    double conf_sum;
    int n_conf;
} eng__seq;

struct eng_diffuser {
    eng_model_info info;
    int max_batch, max_len;
    int32_t *canvas;      /* [max_batch * max_len] */
    uint8_t *valid;       /* [max_batch * max_len] */
    int32_t *positions;   /* [max_batch * max_len] */
    eng_row_result *rows; /* [max_batch * max_len] */
    float *commit_prob;   /* [max_batch * max_len] probability at commit time */
    int32_t *text_ids;    /* [max_batch * max_len] */
    uint8_t *was_mask;    /* [max_len] DreamOn: masked when the step began */
    int *order;           /* [max_len] selection scratch */
    float *key;           /* [max_len] selection keys */
    int32_t *layout;      /* [max_len] */
    eng__seq *seq;        /* [max_batch] */
    eng_logit_bias bias[4];
    int32_t *strip; /* sorted extra ids never written to text_ids (added tokens) */
    int n_strip;
};

eng_diffuser *eng_diffuser_new(const eng_model_info *info, int max_batch, int max_len,
                               eng_error *err) {
    if (max_batch < 1 || max_len < 2 || max_batch > ENG_DIFF_MAX_CANDIDATES) {
        if (err) {
            err->status = BASE_ERR_INVALID;
            snprintf(err->msg, sizeof err->msg, "diffuser: bad sizes batch=%d len=%d", max_batch,
                     max_len);
        }
        return NULL;
    }
    eng_diffuser *d = calloc(1, sizeof *d);
    if (!d)
        goto fail;
    d->info = *info;
    d->max_batch = max_batch;
    d->max_len = max_len;
    size_t bl = (size_t)max_batch * (size_t)max_len;
    d->canvas = malloc(bl * sizeof *d->canvas);
    d->valid = malloc(bl);
    d->positions = malloc(bl * sizeof *d->positions);
    d->rows = malloc(bl * sizeof *d->rows);
    d->commit_prob = malloc(bl * sizeof *d->commit_prob);
    d->text_ids = malloc(bl * sizeof *d->text_ids);
    d->was_mask = calloc((size_t)max_len, 1);
    d->order = malloc((size_t)max_len * sizeof *d->order);
    d->key = malloc((size_t)max_len * sizeof *d->key);
    d->layout = malloc((size_t)max_len * sizeof *d->layout);
    d->seq = calloc((size_t)max_batch, sizeof *d->seq);
    if (!d->canvas || !d->valid || !d->positions || !d->rows || !d->commit_prob || !d->text_ids ||
        !d->was_mask || !d->order || !d->key || !d->layout || !d->seq)
        goto fail;
    return d;
fail:
    eng_diffuser_free(d);
    if (err) {
        err->status = BASE_ERR_NOMEM;
        snprintf(err->msg, sizeof err->msg, "diffuser: out of memory");
    }
    return NULL;
}

void eng_diffuser_free(eng_diffuser *d) {
    if (!d)
        return;
    free(d->canvas);
    free(d->valid);
    free(d->positions);
    free(d->rows);
    free(d->commit_prob);
    free(d->text_ids);
    free(d->was_mask);
    free(d->order);
    free(d->key);
    free(d->layout);
    free(d->seq);
    free(d->strip);
    free(d);
}

static int eng__cmp_id(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

base_status eng_diffuser_set_strip(eng_diffuser *d, const int32_t *ids, int n) {
    if (!d || n < 0 || (n > 0 && !ids))
        return BASE_ERR_INVALID;
    int32_t *v = NULL;
    if (n > 0) {
        v = malloc(sizeof(int32_t) * (size_t)n);
        if (!v)
            return BASE_ERR_NOMEM;
        memcpy(v, ids, sizeof(int32_t) * (size_t)n);
        qsort(v, (size_t)n, sizeof *v, eng__cmp_id);
    }
    free(d->strip);
    d->strip = v;
    d->n_strip = n;
    return BASE_OK;
}

static int eng__dreamon_max_hole(const eng_diff_params *p) {
    if (p->dreamon_max_hole > 0)
        return BASE_MAX(p->dreamon_max_hole, p->n_hole);
    return BASE_MAX(64, p->n_hole);
}

static eng_alg eng__resolve_alg(const eng_model_info *info, const eng_diff_params *p) {
    eng_alg a = p->alg == ENG_ALG_DEFAULT ? eng_alg_default(info) : p->alg;
    /* DreamOn needs the expand token; without it, its closest fixed-length form. */
    if (a == ENG_ALG_DREAMON && info->expand_id < 0)
        a = ENG_ALG_ENTROPY;
    return a;
}

int eng_diff_canvas_len(const eng_model_info *info, const eng_diff_prompt *p,
                        const eng_diff_params *params) {
    int extra = 0;
    if (eng__resolve_alg(info, params) == ENG_ALG_DREAMON)
        extra = eng__dreamon_max_hole(params) - params->n_hole;
    int base = (info->bos_id >= 0 || info->family == ENG_FAMILY_DREAM || p->n_prefix == 0) + 1;
    return base + p->n_prefix + params->n_hole + p->n_suffix + extra;
}

/* Orders idx[0..n) by key descending; ties keep the lower position first.
 * Insertion sort: n is a hole (tens to hundreds) and nothing may allocate. */
static void eng__sort_desc(int *idx, float *key, int n) {
    for (int i = 1; i < n; i++) {
        int v = idx[i];
        float kv = key[i];
        int j = i - 1;
        while (j >= 0 && (key[j] < kv || (key[j] == kv && idx[j] > v))) {
            idx[j + 1] = idx[j];
            key[j + 1] = key[j];
            j--;
        }
        idx[j + 1] = v;
        key[j + 1] = kv;
    }
}

static float eng__row_conf(eng_alg a, const eng_row_result *r) {
    switch (a) {
    case ENG_ALG_TOPK_MARGIN:
        return r->margin;
    case ENG_ALG_ENTROPY:
    case ENG_ALG_DREAMON:
        return r->neg_entropy;
    default:
        return r->prob;
    }
}

static bool eng__is_dream_sched(eng_alg a) {
    return a == ENG_ALG_ORIGIN || a == ENG_ALG_MASKGIT_PLUS || a == ENG_ALG_TOPK_MARGIN ||
           a == ENG_ALG_ENTROPY;
}

typedef struct eng__run {
    eng_diffuser *d;
    const eng_stepper *st;
    const eng_diff_params *p;
    eng_diff_result *res;
    eng_alg alg;
    int L, hs, N; /* canvas length, hole start, hole size */
    int L0;       /* layout length before DreamOn's padding */
    int n_seq;
    int S;              /* total steps (schedule) */
    int B, nb;          /* block length, number of blocks */
    int shift;          /* 1 for shifted families */
    int n_bias;         /* fixed biases (mask id, expand id) */
    int win_lo, win_hi; /* this step's eligible span over all rows (WINDOW forwards) */
    /* eng_diffuse_multi: each row's own canvas (n_seq * L) and its valid
     * mask; NULL: every row is d->layout, all valid. */
    const int32_t *rows;
    const uint8_t *valid;
} eng__run;

static int eng__block_steps(const eng__run *r, int blk) {
    int sb = r->S / r->nb + (blk < r->S % r->nb);
    return sb < 1 ? 1 : sb;
}

static void eng__set_penalty(eng__run *r, eng_sampling *smp, int step, int n_fixed) {
    int n = n_fixed;
    const eng_model_info *info = &r->d->info;
    if (r->p->eos_penalty > 0.0f && r->S > 0) {
        /* Annealed EOS/pad penalty: -lambda * (1 - step/S), clamped at 0. */
        float frac = 1.0f - (float)step / (float)r->S;
        if (frac < 0.0f)
            frac = 0.0f;
        float b = -r->p->eos_penalty * frac;
        if (b != 0.0f) {
            r->d->bias[n].id = info->eos_id;
            r->d->bias[n++].bias = b;
            if (info->pad_id >= 0 && info->pad_id != info->eos_id) {
                r->d->bias[n].id = info->pad_id;
                r->d->bias[n++].bias = b;
            }
        }
    }
    smp->bias = r->d->bias;
    smp->n_bias = n;
}

static base_status eng__call(eng__run *r, const eng_batch *batch, eng_step_req *req, bool full) {
    req->mode = full ? ENG_STEP_FULL : ENG_STEP_WINDOW;
    /* Dual cache: recompute only the current blocks (plus the token whose row
     * predicts a shifted block's first slot); the rest is read from the cache. */
    req->win_start = r->win_lo - r->shift;
    if (req->win_start < 0)
        req->win_start = 0;
    req->win_end = r->win_hi;
    if (full && r->p->mode == ENG_CACHE_CACHED && r->p->warm_hi > r->p->warm_lo) {
        /* Context K/V kept from an earlier request: re-encode only the warm
         * window and the hole. */
        req->mode = ENG_STEP_WINDOW;
        req->win_start = BASE_MAX(0, BASE_MIN(r->p->warm_lo, r->hs - r->shift));
        req->win_end = BASE_MIN(batch->len, BASE_MAX(r->p->warm_hi, r->hs + r->N));
        full = false;
    }
    int rows = batch->n_seq * (full ? batch->len : req->win_end - req->win_start);
    r->res->rows_computed += rows;
    if (r->p->step_cost)
        r->res->ms_predicted += r->p->step_cost(r->p->step_cost_ud, rows, batch->len, req->n_pos);
    uint64_t t0 = base_now_ns();
    base_status st = r->st->step(r->st->ud, batch, req, r->d->rows);
    r->res->ms_step += base_ms_since(t0);
    if (full)
        r->res->n_forward_full++;
    else
        r->res->n_forward_window++;
    return st;
}

/* Plans one sequence's step: which positions to ask for and how many to commit. */
static void eng__plan_seq(eng__run *r, int b, int step, bool final, int *n_pos) {
    eng_diffuser *d = r->d;
    eng__seq *s = &d->seq[b];
    const int32_t mask = d->info.mask_id;
    int32_t *row = d->canvas + (size_t)b * r->L;
    s->r0 = s->r1 = *n_pos;
    s->k = 0;
    if (s->done)
        return;
    int bs = r->hs + s->blk * r->B, be = BASE_MIN(bs + r->B, r->hs + r->N);
    if (final || r->alg == ENG_ALG_P2) {
        bs = r->hs;
        be = r->hs + r->N;
    }
    r->win_lo = BASE_MIN(r->win_lo, bs);
    r->win_hi = BASE_MAX(r->win_hi, be);
    int sb = eng__block_steps(r, s->blk), j = s->blk_step;
    if (r->alg == ENG_ALG_P2) {
        for (int i = bs; i < be; i++)
            d->positions[(*n_pos)++] = b * r->L + i;
        s->k = -1;
    } else if (r->alg == ENG_ALG_ORIGIN && !final) {
        float p = 1.0f;
        if (j < sb - 1) {
            float t = eng_diff_timestep(j, sb, r->p->eps);
            float sn = eng_diff_timestep(j + 1, sb, r->p->eps);
            volatile float ratio = sn / t;
            p = 1.0f - ratio;
        }
        for (int i = bs; i < be; i++) {
            if (row[i] != mask)
                continue;
            double u = eng_noise_uniform(r->p->seed, (uint32_t)step, (uint32_t)(b * r->L + i),
                                         ENG__NOISE_V_ORIGIN);
            if (u < (double)p)
                d->positions[(*n_pos)++] = b * r->L + i;
        }
        s->k = -1;
    } else {
        int m = 0;
        for (int i = bs; i < be; i++)
            if (row[i] == mask) {
                d->positions[(*n_pos)++] = b * r->L + i;
                m++;
            }
        if (final)
            s->k = -1;
        else if (eng__is_dream_sched(r->alg))
            s->k = eng_diff_transfer_count(m, j, sb, r->p->eps);
        else if (r->alg == ENG_ALG_LOW_CONFIDENCE)
            s->k = r->S <= 0 ? m : s->blk_m0 / sb + (j < s->blk_m0 % sb);
        else
            s->k = 1; /* threshold / factor: at least the top-1 */
        if (s->k == 0)
            *n_pos = s->r0; /* nothing to commit: no rows needed */
    }
    s->r1 = *n_pos;
}

/* Writes the proposal of result row pos_idx into the canvas. */
static void eng__commit(eng__run *r, int pos_idx) {
    eng_diffuser *d = r->d;
    int flat = d->positions[pos_idx];
    d->canvas[flat] = d->rows[pos_idx].token;
    d->commit_prob[flat] = d->rows[pos_idx].prob;
}

/* Selection key of a row: the algorithm's confidence, or with alg_temp > 0 the
 * Gumbel-perturbed c / alg_temp (top-k of it = k draws without replacement
 * from softmax(c / alg_temp)). */
static float eng__key(eng__run *r, int pos_idx, int step) {
    float c = eng__row_conf(r->alg, &r->d->rows[pos_idx]);
    if (r->p->alg_temp > 0.0f && (eng__is_dream_sched(r->alg) || r->alg == ENG_ALG_DREAMON)) {
        double u = eng_noise_uniform(r->p->seed, (uint32_t)step, (uint32_t)r->d->positions[pos_idx],
                                     ENG__NOISE_V_ALGTEMP);
        return (float)((double)c / (double)r->p->alg_temp - log(-log(u)));
    }
    return c;
}

/* Applies one sequence's step results. */
static void eng__commit_seq(eng__run *r, int b, int step, bool final) {
    eng_diffuser *d = r->d;
    eng__seq *s = &d->seq[b];
    int n = s->r1 - s->r0;
    if (s->done || n <= 0)
        return;
    if (r->alg == ENG_ALG_P2 && !final) {
        /* Remask the floor((1 - (step+1)/S) * N) least confident hole positions
         * (exact integer form ((S - step - 1) * N) / S); fill the other masks. */
        int S = r->S, i = step < S ? step : S - 1;
        int n_remask = (int)(((int64_t)(S - i - 1) * r->N) / S);
        for (int q = 0; q < n; q++) {
            d->order[q] = s->r0 + q;
            d->key[q] = -d->rows[s->r0 + q].prob; /* least confident first */
        }
        eng__sort_desc(d->order, d->key, n);
        for (int q = 0; q < n; q++) {
            int pi = d->order[q];
            int flat = d->positions[pi];
            if (q < n_remask)
                d->canvas[flat] = d->info.mask_id;
            else if (d->canvas[flat] == d->info.mask_id)
                eng__commit(r, pi);
        }
        return;
    }
    if (s->k < 0) {
        for (int q = s->r0; q < s->r1; q++)
            eng__commit(r, q);
        return;
    }
    for (int q = 0; q < n; q++) {
        d->order[q] = s->r0 + q;
        d->key[q] = eng__key(r, s->r0 + q, step);
    }
    eng__sort_desc(d->order, d->key, n);
    int k = s->k;
    if (r->alg == ENG_ALG_THRESHOLD) {
        /* The top-1 always, then every other confidence >= tau. */
        k = 1;
        for (int q = 1; q < n; q++)
            if (d->rows[d->order[q]].prob >= r->p->threshold)
                k++;
        for (int q = 0, kk = 0; q < n && kk < k; q++) {
            if (q == 0 || d->rows[d->order[q]].prob >= r->p->threshold) {
                eng__commit(r, d->order[q]);
                kk++;
            }
        }
        return;
    }
    if (r->alg == ENG_ALG_FACTOR) {
        /* Longest prefix of the sorted confidences with c_(j) >= 1 - f/(j+1), j >= 2. */
        k = 1;
        while (k < n && d->key[k] >= 1.0f - r->p->factor / (float)(k + 2))
            k++;
    }
    if (k > n)
        k = n;
    for (int q = 0; q < k; q++)
        eng__commit(r, d->order[q]);
}

static int eng__count_masks(const eng__run *r, int b, int from, int to) {
    const int32_t *row = r->d->canvas + (size_t)b * r->L;
    int m = 0;
    for (int i = from; i < to; i++)
        m += row[i] == r->d->info.mask_id;
    return m;
}

/* Moves a sequence to its next block when the current one is finished; returns
 * true when a new block started. */
static bool eng__advance(eng__run *r, int b) {
    eng__seq *s = &r->d->seq[b];
    if (s->done)
        return false;
    if (eng__count_masks(r, b, r->hs, r->hs + r->N) == 0) {
        s->done = true;
        return false;
    }
    if (r->alg == ENG_ALG_P2)
        return false;
    int bs = r->hs + s->blk * r->B, be = BASE_MIN(bs + r->B, r->hs + r->N);
    bool sched = eng__is_dream_sched(r->alg) || r->alg == ENG_ALG_LOW_CONFIDENCE;
    bool started = false;
    while (s->blk < r->nb && (eng__count_masks(r, b, bs, be) == 0 ||
                              (sched && s->blk_step >= eng__block_steps(r, s->blk)))) {
        s->blk++;
        s->blk_step = 0;
        started = true;
        bs = r->hs + s->blk * r->B;
        be = BASE_MIN(bs + r->B, r->hs + r->N);
        s->blk_m0 = s->blk < r->nb ? eng__count_masks(r, b, bs, be) : 0;
    }
    if (s->blk >= r->nb) {
        /* Schedule exhausted with masks left (a step budget cut it short): keep
         * committing from the last block's rules over the whole hole. */
        s->blk = r->nb - 1;
        s->blk_step = eng__block_steps(r, s->blk) - 1;
    }
    return started;
}

static void eng__progress(eng__run *r, int step, int planned) {
    if (!r->p->progress)
        return;
    eng_diff_progress pr;
    pr.step = step;
    pr.steps = planned;
    pr.hole = r->d->canvas + r->hs;
    pr.n_hole = r->N;
    pr.masks_left = eng__count_masks(r, 0, r->hs, r->hs + r->N);
    r->p->progress(r->p->progress_ud, &pr);
}

static bool eng__cancelled(const eng_diff_params *p) { return base_flag_get(p->cancel) != 0; }

/* The step about to run must be the final one: the step budget is spent, or
 * the deadline leaves less than ahead_ms (the predicted cost of this step as
 * a normal one plus the final step after it). */
static bool eng__out_of_time(const eng_diff_params *p, int step, double ahead_ms) {
    if (p->max_steps > 0 && step >= p->max_steps - 1)
        return true;
    if (!p->deadline_ns)
        return false;
    uint64_t now = base_now_ns();
    return now >= p->deadline_ns || (double)(p->deadline_ns - now) / 1e6 <= ahead_ms;
}

static double eng__cost(const eng_diff_params *p, int rows, int keys, int n_pos) {
    return p->step_cost ? p->step_cost(p->step_cost_ud, rows, keys, n_pos) : 0.0;
}

static void eng__init_sampling(eng__run *r, eng_sampling *smp, uint64_t seed) {
    memset(smp, 0, sizeof *smp);
    const eng_model_info *info = &r->d->info;
    smp->pick = (r->alg == ENG_ALG_LOW_CONFIDENCE || info->family == ENG_FAMILY_LLADA)
                    ? ENG_PICK_GUMBEL
                    : ENG_PICK_DREAM;
    smp->temperature = r->p->temperature;
    smp->top_p = r->p->top_p > 0.0f ? r->p->top_p : 1.0f;
    smp->top_k = r->p->top_k;
    smp->seed = seed;
    /* Never emit the mask id; outside DreamOn never the expand id either. */
    int n = 0;
    r->d->bias[n].id = info->mask_id;
    r->d->bias[n++].bias = -INFINITY;
    if (info->expand_id >= 0 && r->alg != ENG_ALG_DREAMON) {
        r->d->bias[n].id = info->expand_id;
        r->d->bias[n++].bias = -INFINITY;
    }
    r->n_bias = n;
}

/* Fixed-length canvas: every algorithm except DreamOn, all candidates in one batch. */
/* Step count and block split of a fixed-canvas run: threshold and factor
 * unmask 32-token blocks left to right by default, the others the whole hole. */
static void eng__run_blocks(eng__run *r, const eng_diff_params *params) {
    r->S = params->steps > 0 ? params->steps : r->N;
    int B = params->block;
    if (B <= 0)
        B = (r->alg == ENG_ALG_THRESHOLD || r->alg == ENG_ALG_FACTOR) ? 32 : r->N;
    if (B > r->N || r->alg == ENG_ALG_P2)
        B = r->N;
    r->B = B;
    r->nb = (r->N + B - 1) / B;
}

static base_status eng__run_fixed(eng__run *r) {
    eng_diffuser *d = r->d;
    const eng_diff_params *p = r->p;
    for (int b = 0; b < r->n_seq; b++) {
        memcpy(d->canvas + (size_t)b * r->L, r->rows ? r->rows + (size_t)b * r->L : d->layout,
               (size_t)r->L * sizeof(int32_t));
        eng__seq *s = &d->seq[b];
        memset(s, 0, sizeof *s);
        s->blk_m0 = BASE_MIN(r->B, r->N);
    }
    for (int i = 0; i < r->n_seq * r->L; i++)
        d->commit_prob[i] = 0.0f;
    int n_init = p->hole_init ? BASE_MIN(p->n_hole_init, r->N) : 0;
    for (int b = 0; b < r->n_seq; b++)
        for (int i = 0; i < n_init; i++) {
            d->canvas[(size_t)b * r->L + r->hs + i] = p->hole_init[i];
            d->commit_prob[(size_t)b * r->L + r->hs + i] = p->hole_init_prob;
        }
    /* Blocks the kept tokens fill are done before the first step. */
    for (int b = 0; b < r->n_seq && n_init > 0; b++) {
        eng__advance(r, b);
        int bs = r->hs + d->seq[b].blk * r->B;
        d->seq[b].blk_m0 = eng__count_masks(r, b, bs, BASE_MIN(bs + r->B, r->hs + r->N));
    }
    eng_batch batch = {r->n_seq, r->L, d->canvas, r->valid};
    eng_step_req req;
    memset(&req, 0, sizeof req);
    req.positions = d->positions;
    eng__init_sampling(r, &req.sampling, p->seed);
    bool need_full = true;
    int since_full = 0;
    int planned = r->alg == ENG_ALG_THRESHOLD || r->alg == ENG_ALG_FACTOR ? r->N : r->S;
    for (int step = 0;; step++) {
        bool any = false;
        for (int b = 0; b < r->n_seq; b++) {
            if (d->seq[b].done)
                continue;
            if (eng__count_masks(r, b, r->hs, r->hs + r->N) == 0)
                d->seq[b].done = true;
            else
                any = true;
        }
        if (!any)
            break;
        if (eng__cancelled(p))
            return BASE_ERR_CANCELLED;
        /* This step as a normal one (a full forward, or a window over one
         * block) and the final step after it (a window over the whole hole). */
        bool full_next =
            p->mode == ENG_CACHE_EXACT || need_full || (p->refresh > 0 && since_full >= p->refresh);
        int nb = BASE_MIN(r->B, r->N);
        double ahead = 0.0;
        if (p->step_cost && p->deadline_ns)
            ahead = (step == 0 && p->first_free
                         ? 0.0
                         : eng__cost(p, r->n_seq * (full_next ? r->L : nb + r->shift), r->L,
                                     r->n_seq * nb)) +
                    eng__cost(p, r->n_seq * (p->mode == ENG_CACHE_EXACT ? r->L : r->N + r->shift),
                              r->L, r->n_seq * r->N);
        bool final = eng__out_of_time(p, step, ahead);
        int n_pos = 0;
        r->win_lo = r->hs + r->N;
        r->win_hi = r->hs;
        for (int b = 0; b < r->n_seq; b++)
            eng__plan_seq(r, b, step, final, &n_pos);
        r->res->steps_run++;
        if (n_pos > 0) {
            bool full = p->mode == ENG_CACHE_EXACT || need_full ||
                        (p->refresh > 0 && since_full >= p->refresh);
            req.n_pos = n_pos;
            req.sampling.step = (uint32_t)step;
            eng__set_penalty(r, &req.sampling, step, r->n_bias);
            base_status st = eng__call(r, &batch, &req, full);
            if (st != BASE_OK)
                return st;
            if (full) {
                need_full = false;
                since_full = 0;
            }
            since_full++;
            for (int b = 0; b < r->n_seq; b++)
                eng__commit_seq(r, b, step, final);
        }
        for (int b = 0; b < r->n_seq; b++) {
            if (d->seq[b].done)
                continue;
            d->seq[b].blk_step++;
            if (eng__advance(r, b))
                need_full = true;
        }
        eng__progress(r, step + 1, planned);
        if (final) {
            for (int b = 0; b < r->n_seq; b++)
                d->seq[b].done = true;
            break;
        }
    }
    for (int b = 0; b < r->n_seq; b++) {
        eng__seq *s = &d->seq[b];
        s->conf_sum = 0.0;
        s->n_conf = r->N;
        for (int i = r->hs; i < r->hs + r->N; i++)
            s->conf_sum += d->commit_prob[(size_t)b * r->L + i];
    }
    return BASE_OK;
}

/* DreamOn (MODELS §2.3) for candidate c in canvas row c, batch of one. The
 * window [0, W) holds the real sequence; slots past it are masks outside
 * attention (valid = 0). */
static base_status eng__run_dreamon(eng__run *r, int c) {
    eng_diffuser *d = r->d;
    const eng_diff_params *p = r->p;
    const eng_model_info *info = &d->info;
    const int32_t mask = info->mask_id;
    int32_t *x = d->canvas + (size_t)c * r->L;
    uint8_t *valid = d->valid + (size_t)c * r->L;
    int len0 = r->L0;
    int max_tokens = r->L;
    memcpy(x, d->layout, (size_t)len0 * sizeof(int32_t));
    for (int i = len0; i < max_tokens; i++)
        x[i] = mask;
    eng__seq *s = &d->seq[c];
    memset(s, 0, sizeof *s);
    s->n_gen = r->N;
    s->budget = p->dreamon_budget > 0 ? p->dreamon_budget : eng__dreamon_max_hole(p);
    eng_batch batch = {1, max_tokens, x, valid};
    eng_step_req req;
    memset(&req, 0, sizeof req);
    req.positions = d->positions;
    uint64_t seed = p->seed + (uint64_t)c;
    eng__init_sampling(r, &req.sampling, seed);
    int max_steps = p->steps > 0 ? p->steps : 4 * eng__dreamon_max_hole(p);
    for (int step = 0;; step++) {
        int W = len0 - r->N + s->n_gen;
        int hs = r->hs, he = r->hs + s->n_gen;
        int n_pos = 0;
        for (int i = hs; i < he; i++)
            if (x[i] == mask)
                d->positions[n_pos++] = i;
        if (n_pos == 0)
            break;
        if (eng__cancelled(p))
            return BASE_ERR_CANCELLED;
        double ahead = p->step_cost && p->deadline_ns
                           ? 2.0 * eng__cost(p, max_tokens, max_tokens, n_pos)
                           : 0.0;
        bool final = eng__out_of_time(p, step, ahead) || step >= max_steps - 1;
        for (int i = 0; i < max_tokens; i++)
            valid[i] = i < W;
        int nb = r->n_bias;
        bool suppress = final || W >= max_tokens || s->budget <= 0;
        if (suppress) {
            d->bias[nb].id = info->expand_id;
            d->bias[nb++].bias = -1e9f;
        }
        req.n_pos = n_pos;
        req.sampling.step = (uint32_t)step;
        eng__set_penalty(r, &req.sampling, step, nb);
        r->res->steps_run++;
        base_status st = eng__call(r, &batch, &req, true);
        if (st != BASE_OK)
            return st;
        for (int i = hs; i < he; i++)
            d->was_mask[i] = x[i] == mask;
        if (final) {
            for (int q = 0; q < n_pos; q++) {
                x[d->positions[q]] = d->rows[q].token;
                s->conf_sum += d->rows[q].prob;
                s->n_conf++;
            }
        } else {
            /* Exactly one commit: the most confident (or Gumbel-sampled) row. */
            int best = 0;
            float bk = eng__key(r, 0, step);
            for (int q = 1; q < n_pos; q++) {
                float kq = eng__key(r, q, step);
                if (kq > bk) {
                    bk = kq;
                    best = q;
                }
            }
            x[d->positions[best]] = d->rows[best].token;
            s->conf_sum += d->rows[best].prob;
            s->n_conf++;
        }
        /* pad_eos_to_right: masks (as of this step's start) at or after the
         * first EOS of the hole become EOS. */
        int first_eos = -1;
        for (int i = hs; i < he; i++)
            if (x[i] == info->eos_id) {
                first_eos = i;
                break;
            }
        if (first_eos >= 0)
            for (int i = first_eos; i < he; i++)
                if (d->was_mask[i])
                    x[i] = info->eos_id;
        /* Expand, right to left: an expand token becomes two masks. */
        for (int i = he - 1; i >= hs; i--) {
            if (x[i] != info->expand_id)
                continue;
            memmove(x + i + 1, x + i, (size_t)(max_tokens - i - 1) * sizeof(int32_t));
            memmove(d->was_mask + i + 1, d->was_mask + i, (size_t)(max_tokens - i - 1));
            x[i] = mask;
            x[i + 1] = mask;
            d->was_mask[i + 1] = 0;
            s->n_gen++;
            s->budget--;
            he++;
        }
        /* Delete: every EOS generated this step leaves the sequence; a mask is
         * appended at the far end so the canvas keeps its length. */
        for (int i = he - 1; i >= hs; i--) {
            if (x[i] != info->eos_id || !d->was_mask[i])
                continue;
            memmove(x + i, x + i + 1, (size_t)(max_tokens - i - 1) * sizeof(int32_t));
            memmove(d->was_mask + i, d->was_mask + i + 1, (size_t)(max_tokens - i - 1));
            x[max_tokens - 1] = mask;
            s->n_gen--;
            he--;
        }
        if (c == 0 && p->progress) {
            eng_diff_progress pr = {step + 1, max_steps, x + hs, s->n_gen, 0};
            for (int i = hs; i < hs + s->n_gen; i++)
                pr.masks_left += x[i] == mask;
            p->progress(p->progress_ud, &pr);
        }
        if (final)
            break;
    }
    return BASE_OK;
}

/* Ids that never reach the text: EOS/pad surplus, masks, expand, BOS, and the
 * diffuser's strip list (docs/SAMPLERS.md, "Special tokens in the hole"). */
static bool eng__strip_id(const eng_diffuser *d, int32_t id) {
    const eng_model_info *info = &d->info;
    if (id == info->eos_id || id == info->pad_id || id == info->mask_id ||
        (info->expand_id >= 0 && id == info->expand_id) ||
        (info->bos_id >= 0 && id == info->bos_id))
        return true;
    return d->n_strip > 0 && bsearch(&id, d->strip, (size_t)d->n_strip, sizeof id, eng__cmp_id);
}

base_status eng_diffuse(eng_diffuser *d, const eng_stepper *st, const eng_diff_prompt *prompt,
                        const eng_diff_params *params, eng_diff_result *res) {
    if (!d || !st || !st->step || !prompt || !params || !res)
        return BASE_ERR_INVALID;
    memset(res, 0, sizeof *res);
    if (params->n_hole < 1 || params->candidates < 1 || params->candidates > d->max_batch ||
        params->steps < 0 || params->block < 0)
        return BASE_ERR_INVALID;
    if (prompt->n_prefix < 0 || prompt->n_suffix < 0 || (prompt->n_prefix > 0 && !prompt->prefix) ||
        (prompt->n_suffix > 0 && !prompt->suffix))
        return BASE_ERR_INVALID;
    uint64_t t0 = base_now_ns();
    eng__run r;
    memset(&r, 0, sizeof r);
    r.d = d;
    r.st = st;
    r.p = params;
    r.res = res;
    r.alg = eng__resolve_alg(&d->info, params);
    r.N = params->n_hole;
    r.n_seq = params->candidates;
    r.shift = d->info.shift_logits ? 1 : 0;
    int len = eng_diff_layout(&d->info, prompt, r.N, d->layout, d->max_len, &r.hs);
    if (len < 0)
        return BASE_ERR_TOO_LARGE;
    r.L0 = len;
    r.L = len;
    res->alg = r.alg;
    eng__run_blocks(&r, params);
    base_status stt = BASE_OK;
    if (r.alg == ENG_ALG_DREAMON) {
        int max_tokens = len + eng__dreamon_max_hole(params) - r.N;
        if (max_tokens > d->max_len)
            max_tokens = d->max_len;
        r.L = max_tokens;
        for (int c = 0; c < r.n_seq && stt == BASE_OK; c++)
            stt = eng__run_dreamon(&r, c);
    } else {
        stt = eng__run_fixed(&r);
    }
    if (stt != BASE_OK)
        return stt;
    res->n_candidates = r.n_seq;
    for (int b = 0; b < r.n_seq; b++) {
        eng__seq *s = &d->seq[b];
        eng_diff_candidate *c = &res->cand[b];
        int n = r.alg == ENG_ALG_DREAMON ? s->n_gen : r.N;
        c->tokens = d->canvas + (size_t)b * r.L + r.hs;
        c->n_tokens = n;
        int32_t *t = d->text_ids + (size_t)b * d->max_len;
        int k = 0;
        for (int i = 0; i < n; i++)
            if (!eng__strip_id(d, c->tokens[i]))
                t[k++] = c->tokens[i];
        c->text_ids = t;
        c->n_text_ids = k;
        c->mean_conf = s->n_conf > 0 ? s->conf_sum / s->n_conf : 0.0;
        c->index = b;
    }
    /* Rank by mean confidence, best first; stable for ties. */
    for (int i = 1; i < res->n_candidates; i++) {
        eng_diff_candidate v = res->cand[i];
        int j = i - 1;
        while (j >= 0 && res->cand[j].mean_conf < v.mean_conf) {
            res->cand[j + 1] = res->cand[j];
            j--;
        }
        res->cand[j + 1] = v;
    }
    res->ms_total = base_ms_since(t0);
    return BASE_OK;
}

base_status eng_diffuse_multi(eng_diffuser *d, const eng_stepper *st,
                              const eng_diff_prompt *prompts, int n, const eng_diff_params *params,
                              eng_diff_result *res) {
    if (!d || !st || !st->step || !prompts || !params || !res || n < 1 || n > d->max_batch)
        return BASE_ERR_INVALID;
    memset(res, 0, sizeof *res);
    if (params->n_hole < 1 || params->steps < 0 || params->block < 0)
        return BASE_ERR_INVALID;
    for (int b = 0; b < n; b++)
        if (prompts[b].n_prefix < 0 || prompts[b].n_suffix < 0 ||
            (prompts[b].n_prefix > 0 && !prompts[b].prefix) ||
            (prompts[b].n_suffix > 0 && !prompts[b].suffix))
            return BASE_ERR_INVALID;
    eng__run r;
    memset(&r, 0, sizeof r);
    r.d = d;
    r.st = st;
    r.p = params;
    r.res = res;
    r.alg = eng__resolve_alg(&d->info, params);
    if (r.alg == ENG_ALG_DREAMON)
        return BASE_ERR_UNSUPPORTED; /* its canvas grows per row */
    uint64_t t0 = base_now_ns();
    r.N = params->n_hole;
    r.n_seq = n;
    r.shift = d->info.shift_logits ? 1 : 0;
    /* Each prompt's layout; the holes are aligned at the largest hole start by
     * padding on the left, the rows evened out on the right. Padding is
     * invalid (no key, no position), so each row computes what it would
     * alone. */
    int *hs = malloc(sizeof(int) * (size_t)n), *len = malloc(sizeof(int) * (size_t)n);
    int32_t *lay = malloc(sizeof(int32_t) * (size_t)n * (size_t)d->max_len);
    int32_t *rows = NULL;
    uint8_t *valid = NULL;
    base_status stt = BASE_OK;
    if (!hs || !len || !lay) {
        stt = BASE_ERR_NOMEM;
        goto out;
    }
    int hmax = 0, tmax = 0;
    for (int b = 0; b < n; b++) {
        len[b] = eng_diff_layout(&d->info, &prompts[b], r.N, lay + (size_t)b * d->max_len,
                                 d->max_len, &hs[b]);
        if (len[b] < 0) {
            stt = BASE_ERR_TOO_LARGE;
            goto out;
        }
        hmax = BASE_MAX(hmax, hs[b]);
        tmax = BASE_MAX(tmax, len[b] - hs[b]);
    }
    int L = hmax + tmax;
    if (L > d->max_len) {
        stt = BASE_ERR_TOO_LARGE;
        goto out;
    }
    rows = malloc(sizeof(int32_t) * (size_t)n * (size_t)L);
    valid = malloc((size_t)n * (size_t)L);
    if (!rows || !valid) {
        stt = BASE_ERR_NOMEM;
        goto out;
    }
    for (int b = 0; b < n; b++) {
        const int32_t *lb = lay + (size_t)b * d->max_len;
        int32_t *rb = rows + (size_t)b * L;
        uint8_t *vb = valid + (size_t)b * L;
        int off = hmax - hs[b];
        for (int i = 0; i < L; i++) {
            bool in = i >= off && i < off + len[b];
            rb[i] = in ? lb[i - off] : lb[0]; /* any real id: padding is never attended */
            vb[i] = in;
        }
    }
    r.rows = rows;
    r.valid = valid;
    r.L0 = L;
    r.L = L;
    r.hs = hmax;
    res->alg = r.alg;
    eng__run_blocks(&r, params);
    stt = eng__run_fixed(&r);
    if (stt != BASE_OK)
        goto out;
    /* Row b's result is cand[b]: not ranked, the rows are different requests. */
    res->n_candidates = n;
    for (int b = 0; b < n; b++) {
        eng__seq *s = &d->seq[b];
        eng_diff_candidate *c = &res->cand[b];
        c->tokens = d->canvas + (size_t)b * r.L + r.hs;
        c->n_tokens = r.N;
        int32_t *t = d->text_ids + (size_t)b * d->max_len;
        int k = 0;
        for (int i = 0; i < r.N; i++)
            if (!eng__strip_id(d, c->tokens[i]))
                t[k++] = c->tokens[i];
        c->text_ids = t;
        c->n_text_ids = k;
        c->mean_conf = s->n_conf > 0 ? s->conf_sum / s->n_conf : 0.0;
        c->index = b;
    }
    res->ms_total = base_ms_since(t0);
out:
    free(hs);
    free(len);
    free(lay);
    free(rows);
    free(valid);
    return stt;
}
