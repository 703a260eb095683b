/* The entropy-bound ("EB") sampler of DiffusionGemma (shared/design/
 * DIFFUSIONGEMMA.md §3), with its block-autoregressive driver:
 *
 *   encode(prompt)
 *   for each canvas: x = uniform ids over the ids with a token (n_token_ids)
 *     for s = N .. 1:  t = t_min + (t_max - t_min) s / N
 *       z = decode(x, sc) / t;  p = softmax(z);  H = entropy(p)
 *       y_samp ~ p (inverse CDF), y_amax = argmax z (lowest id on ties)
 *       sort H ascending (stable); accept position order[k] when the sum of
 *       the entropies before it is <= entropy_bound (so the lowest always is)
 *       x = accept ? y_samp : fresh uniform id      (re-noised every step)
 *       stop when y_amax was unchanged for `stability` consecutive steps
 *       (0: no check) and mean(H) < confidence;  sc = z
 *     commit y_amax; pad after the first stop id and finish; else encode it.
 * Pinned positions (eng_eb_params.pin) keep their ids throughout and are
 * left out of the acceptance, stop and stop-id rules (dgemma.h).
 *
 * Noise: eng_noise_uniform with the counters documented in dgemma.h, so a
 * reference (tests/ref/dgemma_ref.py) or another backend draws the same
 * numbers. Every buffer is allocated before the loops. Embedding rows above
 * the tokenizer's ids (n_token_ids) are never drawn, chosen or counted in the
 * entropy: they have no text. */
#include "arch/dgemma_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The step-counter bit of the vocabulary-id draws (initial noise, re-noising). */
#define ENG__EB_ID_STREAM 0x80000000u

void eng_eb_params_default(const eng_model *m, eng_eb_params *p) {
    memset(p, 0, sizeof *p);
    const eng_dg_info *in = eng_dg_get_info(m);
    p->max_steps = in ? in->eb_max_steps : 48;
    p->t_min = in ? in->eb_t_min : 0.4f;
    p->t_max = in ? in->eb_t_max : 0.8f;
    p->entropy_bound = in ? in->eb_entropy_bound : 0.1f;
    p->stability = in ? in->eb_stability : 1;
    p->confidence = in ? in->eb_confidence : 0.005f;
    p->max_new_tokens = in ? in->canvas_len : 256;
    p->self_cond = in ? in->self_cond : false;
}

void eng_eb_result_free(eng_eb_result *r) {
    if (r) {
        free(r->tokens);
        r->tokens = NULL;
    }
}

static int32_t eb_uniform_id(uint64_t seed, uint32_t step, uint32_t pos, int V) {
    double u = eng_noise_uniform(seed, step | ENG__EB_ID_STREAM, pos, 0);
    int32_t id = (int32_t)(u * V);
    return id >= V ? V - 1 : id;
}

/* Per position of z (already temperature-scaled): argmax, entropy and a
 * draw from softmax(z) by Gumbel-max, argmax_v z_v - log(-log u_v). Gumbel-max
 * rather than an inverse CDF: a draw then changes only when two perturbed
 * logits nearly tie, not whenever a rounding moves one of V CDF steps past u,
 * so backends that differ in the last bits (f32 here, f64 in the reference,
 * CUDA) still draw the same token. */
static void eb_row(const float *z, int V, uint64_t seed, uint32_t step, uint32_t pos, int32_t *amax,
                   double *H, int32_t *samp) {
    int best = 0, pick = 0;
    double pk = -INFINITY;
    for (int v = 0; v < V; v++) {
        if (z[v] > z[best])
            best = v;
        double key = (double)z[v] - log(-log(eng_noise_uniform(seed, step, pos, (uint32_t)v)));
        if (key > pk) {
            pk = key;
            pick = v;
        }
    }
    *amax = best;
    *samp = pick;
    const double mx = z[best];
    double Z = 0, S = 0;
    for (int v = 0; v < V; v++) {
        const double t = (double)z[v] - mx, e = exp(t);
        Z += e;
        S += e * t;
    }
    /* H = -sum p log p with p = e / Z: log Z - S / Z */
    *H = log(Z) - S / Z;
}

/* One canvas row of a step: temperature scaling in place, then eb_row. */
typedef struct eb_rows_job {
    float *logits;
    int V, Vt; /* row stride; ids with a token */
    double t;
    uint64_t seed;
    uint32_t step;
    int32_t *amax, *samp;
    double *H;
} eb_rows_job;

static void eb_rows_task(void *arg, int i, int tid) {
    (void)tid;
    const eb_rows_job *j = arg;
    float *z = j->logits + (int64_t)i * j->V;
    for (int v = 0; v < j->V; v++)
        z[v] = (float)((double)z[v] / j->t);
    eb_row(z, j->Vt, j->seed, j->step, (uint32_t)i, &j->amax[i], &j->H[i], &j->samp[i]);
}

/* Stable insertion-free merge sort of indices by H ascending. */
static void eb_sort(int32_t *ix, int32_t *tmp, const double *H, int n) {
    for (int w = 1; w < n; w *= 2)
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = BASE_MIN(lo + w, n), hi = BASE_MIN(lo + 2 * w, n), a = lo, b = mid, k = lo;
            while (a < mid || b < hi)
                tmp[k++] = (b >= hi || (a < mid && H[ix[a]] <= H[ix[b]])) ? ix[a++] : ix[b++];
            memcpy(ix + lo, tmp + lo, (size_t)(hi - lo) * sizeof *ix);
        }
}

base_status eng_eb_generate(eng_dg_ctx *c, const int32_t *prompt, int n_prompt,
                            const eng_eb_params *p, eng_eb_result *res) {
    if (!c || !p || !res || n_prompt < 0 || (n_prompt > 0 && !prompt) || p->max_steps <= 0 ||
        !(p->t_min > 0) || !(p->t_max > 0) || !(p->entropy_bound >= 0) || p->stability < 0 ||
        p->max_new_tokens <= 0)
        return BASE_ERR_INVALID;
    memset(res, 0, sizeof *res);
    const eng_dg_info *in = &eng__dg_ctx_model(c)->info;
    const int V = in->vocab_size, n = p->canvas_len > 0 ? p->canvas_len : in->canvas_len;
    if (n > eng__dg_ctx_max_rows(c))
        return BASE_ERR_INVALID;
    const int32_t *stop = p->stop_ids ? p->stop_ids : in->stop_ids;
    const int n_stop = p->stop_ids ? p->n_stop : in->n_stop;
    const int n_canvas = (p->max_new_tokens + n - 1) / n;
    if (eng_dg_cache_len(c) + n_prompt + (int64_t)(n_canvas - 1) * n >
        (int64_t)eng__dg_ctx_max_cache(c))
        return BASE_ERR_TOO_LARGE;
    const bool sc_on = p->self_cond && in->self_cond;
    if (p->n_pin < 0 || (p->n_pin > 0 && !p->pin))
        return BASE_ERR_INVALID;
    for (int k = 0; k < p->n_pin; k++)
        if (p->pin[k] >= V)
            return BASE_ERR_RANGE;
    const int Vt = in->n_token_ids > 0 && in->n_token_ids < V ? in->n_token_ids : V;

    float *logits = malloc((size_t)n * V * sizeof *logits);
    double *H = malloc((size_t)n * sizeof *H);
    int32_t *x = malloc((size_t)n * sizeof *x), *amax = malloc((size_t)n * sizeof *amax),
            *hist = malloc((size_t)n * sizeof *hist), *samp = malloc((size_t)n * sizeof *samp),
            *ord = malloc((size_t)n * sizeof *ord), *tmp = malloc((size_t)n * sizeof *tmp),
            *pin = malloc((size_t)n * sizeof *pin);
    res->tokens = malloc((size_t)n_canvas * n * sizeof *res->tokens);
    base_status st = BASE_OK;
    if (!logits || !H || !x || !amax || !hist || !samp || !ord || !tmp || !pin || !res->tokens) {
        st = BASE_ERR_NOMEM;
        goto done;
    }
    uint64_t t0 = base_now_ns();
    if (n_prompt > 0 && (st = eng_dg_encode(c, prompt, n_prompt, NULL)))
        goto done;
    res->ms_encode += base_ms_since(t0);
    const int N = p->max_steps;
    for (int b = 0; b < n_canvas; b++) {
        const uint32_t g0 = (uint32_t)b * (uint32_t)(N + 1);
        /* this canvas's pins: pin[i] >= 0, else -1 */
        int n_free = 0;
        for (int i = 0; i < n; i++) {
            const int64_t k = (int64_t)b * n + i;
            pin[i] = k < p->n_pin && p->pin[k] >= 0 ? p->pin[k] : -1;
            n_free += pin[i] < 0;
        }
        for (int i = 0; i < n; i++) {
            x[i] = pin[i] >= 0 ? pin[i] : eb_uniform_id(p->seed, g0, (uint32_t)i, Vt);
            hist[i] = -1;
        }
        int stable = 0;
        bool have_sc = false;
        res->last_stop = ENG_EB_STOP_STEPS;
        for (int s = N; s >= 1; s--) {
            if (p->cancel && *p->cancel) {
                st = BASE_ERR_CANCELLED;
                goto done;
            }
            const uint32_t g = g0 + (uint32_t)(N - s + 1);
            const double t = (double)p->t_min + ((double)p->t_max - p->t_min) * s / N;
            if (p->canvas_cb)
                p->canvas_cb(p->progress_ud, b, N - s + 1, x, n);
            t0 = base_now_ns();
            if ((st = eng_dg_decode(c, x, n, have_sc ? logits : NULL, logits)))
                goto done;
            res->ms_decode += base_ms_since(t0);
            res->steps_run++;
            t0 = base_now_ns();
            /* rows in parallel: each is a function of its own logits and counters */
            eb_rows_job rj = {logits, V, Vt, t, p->seed, g, amax, samp, H};
            eng__dg_ctx_parallel(c, eb_rows_task, &rj, n);
            double hsum = 0;
            int nf = 0;
            for (int i = 0; i < n; i++) {
                if (pin[i] >= 0) {
                    amax[i] = pin[i];
                    continue;
                }
                hsum += H[i];
                ord[nf++] = i;
            }
            eb_sort(ord, tmp, H, nf);
            double cum = 0;
            for (int k = 0; k < nf; k++) {
                const int i = ord[k];
                const bool acc = cum <= p->entropy_bound;
                cum += H[i];
                x[i] = acc ? samp[i] : eb_uniform_id(p->seed, g, (uint32_t)i, Vt);
            }
            bool same = true;
            for (int i = 0; i < n; i++)
                same &= amax[i] == hist[i];
            stable = same ? stable + 1 : 0;
            memcpy(hist, amax, (size_t)n * sizeof *hist);
            have_sc = sc_on; /* logits now hold z: the next step's self-conditioning */
            res->ms_sample += base_ms_since(t0);
            if (p->progress)
                p->progress(p->progress_ud, b, N - s + 1, amax, n);
            if ((p->stability == 0 || stable >= p->stability) &&
                (n_free > 0 ? hsum / n_free : 0.0) < p->confidence) {
                res->last_stop = ENG_EB_STOP_CONFIDENT;
                break;
            }
        }
        int32_t *out = res->tokens + (int64_t)b * n;
        memcpy(out, hist, (size_t)n * sizeof *out);
        res->n_canvases = b + 1;
        res->n_tokens = (b + 1) * n;
        int first = -1;
        for (int i = 0; i < n && first < 0; i++)
            for (int k = 0; k < n_stop && pin[i] < 0; k++)
                if (out[i] == stop[k]) {
                    first = i;
                    break;
                }
        if (first >= 0) {
            for (int i = first + 1; i < n; i++)
                if (pin[i] < 0)
                    out[i] = in->pad_id;
            res->hit_stop = true;
            res->n_text = b * n + first;
            goto done;
        }
        res->n_text = (b + 1) * n;
        if (b + 1 < n_canvas) {
            t0 = base_now_ns();
            if ((st = eng_dg_encode(c, out, n, NULL)))
                goto done;
            res->ms_encode += base_ms_since(t0);
        }
    }
done:
    free(logits);
    free(H);
    free(x);
    free(amax);
    free(hist);
    free(samp);
    free(ord);
    free(tmp);
    free(pin);
    if (st)
        eng_eb_result_free(res);
    return st;
}
