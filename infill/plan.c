/* infill plan: the latency budget (docs/PERFORMANCE.md, "Latency budget").
 *
 * A cost model measured on this machine at model load predicts the wall time
 * of one step from its sizes:
 *
 *   t(rows, keys, n_pos) = scale · (call + row·rows + pair·rows·keys + pos·n_pos)
 *
 * rows: canvas rows recomputed (every layer's matmuls), keys: positions each
 * row attends to, n_pos: positions whose LM head row and vocabulary
 * reductions are computed. `scale` follows what the runs really cost (the
 * machine is shared, clocks change). The planner sizes a request from it:
 * candidates first, then the context (only when otherwise not even a short
 * run fits), then the step cap; the sampler's deadline check uses the same
 * predictions step by step (eng_diff_params.step_cost). */
#include "infill.h"

#include <math.h>
#include <string.h>

double ifl_cost_step_ms(const ifl_cost *c, int rows, int keys, int n_pos) {
    double t = c->call_ms + c->row_ms * rows + c->pair_ms * (double)rows * keys + c->pos_ms * n_pos;
    return t * (c->scale > 0.0 ? c->scale : 1.0);
}

#define IFL__COST_MAX_RATIO 50.0

void ifl_cost_observe(ifl_cost *c, double predicted_ms, double observed_ms) {
    if (predicted_ms <= 0.0 || observed_ms <= 0.0)
        return;
    double s = c->scale > 0.0 ? c->scale : 1.0;
    /* predicted_ms already carries the scale; the ratio corrects it. */
    double ratio = observed_ms / predicted_ms;
    /* A step far slower than any load makes it is the clock jumping (a
     * suspend or a paused VM during the run): learning from it would push
     * the scale to its cap and refuse requests after the resume. */
    if (ratio > IFL__COST_MAX_RATIO)
        return;
    s = 0.7 * s + 0.3 * s * ratio;
    c->scale = fmin(fmax(s, 0.25), 8.0);
    c->n_obs++;
}

/* One timed step; the fastest of `reps`. */
static base_status ifl__time_step(const eng_stepper *st, const eng_batch *b, const eng_step_req *q,
                                  eng_row_result *out, int reps, double *ms) {
    *ms = INFINITY;
    for (int i = 0; i < reps; i++) {
        uint64_t t0 = base_now_ns();
        base_status s = st->step(st->ud, b, q, out);
        if (s != BASE_OK)
            return s;
        *ms = fmin(*ms, base_ms_since(t0));
    }
    return BASE_OK;
}

/* Solves the 3x3 system a·x = y by Cramer's rule; false when singular. */
static bool ifl__solve3(const double a[3][3], const double y[3], double x[3]) {
#define IFL__DET(m)                                                                                \
    ((m)[0][0] * ((m)[1][1] * (m)[2][2] - (m)[1][2] * (m)[2][1]) -                                 \
     (m)[0][1] * ((m)[1][0] * (m)[2][2] - (m)[1][2] * (m)[2][0]) +                                 \
     (m)[0][2] * ((m)[1][0] * (m)[2][1] - (m)[1][1] * (m)[2][0]))
    double d = IFL__DET(a);
    if (fabs(d) < 1e-12)
        return false;
    for (int k = 0; k < 3; k++) {
        double m[3][3];
        memcpy(m, a, sizeof m);
        for (int i = 0; i < 3; i++)
            m[i][k] = y[i];
        x[k] = IFL__DET(m) / d;
    }
#undef IFL__DET
    return true;
}

base_status ifl_cost_measure(const eng_stepper *st, const eng_model_info *info, int max_len,
                             ifl_cost *c) {
    memset(c, 0, sizeof *c);
    c->scale = 1.0;
    uint64_t t_begin = base_now_ns();
    /* Two full forwards (a, b tokens) and two window steps of w rows over b
     * with 1 and w predicted positions: four equations, four unknowns. Small
     * sizes keep a 0.5B model's measurement near two seconds on two cores. */
    const int b = BASE_MIN(128, max_len), a = BASE_MIN(32, b / 2), w = BASE_MIN(16, b / 4);
    if (a < 2 || w < 2)
        return BASE_ERR_TOO_LARGE;
    int32_t tokens[128];
    eng_row_result out[16];
    int32_t pos[16];
    for (int i = 0; i < b; i++)
        tokens[i] = i % 2 ? info->mask_id : (info->eos_id >= 0 ? info->eos_id : 0);
    eng_step_req q;
    memset(&q, 0, sizeof q);
    q.positions = pos;
    q.sampling.pick = ENG_PICK_DREAM;
    q.sampling.top_p = 1.0f;
    pos[0] = 1;
    q.n_pos = 1;
    eng_batch ba = {1, a, tokens, NULL}, bb = {1, b, tokens, NULL};
    double m1, m2, m3, m4, warm;
    q.mode = ENG_STEP_FULL;
    base_status s = ifl__time_step(st, &ba, &q, out, 1, &warm); /* pages the weights in */
    if (s == BASE_OK)
        s = ifl__time_step(st, &ba, &q, out, 2, &m1);
    if (s == BASE_OK)
        s = ifl__time_step(st, &bb, &q, out, 1, &m2);
    if (s != BASE_OK)
        return s;
    q.mode = ENG_STEP_WINDOW;
    q.win_start = 0;
    q.win_end = w;
    s = ifl__time_step(st, &bb, &q, out, 2, &m3);
    for (int i = 0; i < w; i++)
        pos[i] = i; /* shifted families read row i - 1, still inside [0, w) */
    q.n_pos = w;
    if (s == BASE_OK)
        s = ifl__time_step(st, &bb, &q, out, 2, &m4);
    if (s != BASE_OK)
        return s;
    c->pos_ms = fmax(0.0, (m4 - m3) / (w - 1));
    const double A[3][3] = {{1, a, (double)a * a}, {1, b, (double)b * b}, {1, w, (double)w * b}};
    const double y[3] = {m1 - c->pos_ms, m2 - c->pos_ms, m3 - c->pos_ms};
    double x[3];
    if (ifl__solve3(A, y, x) && x[0] >= 0 && x[1] >= 0 && x[2] >= 0) {
        c->call_ms = x[0];
        c->row_ms = x[1];
        c->pair_ms = x[2];
    } else {
        /* Noise (or no attention cost worth measuring) made a coefficient
         * negative: no attention term, a least-squares line over the rows. */
        const double xs[3] = {a, b, w};
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int i = 0; i < 3; i++) {
            sx += xs[i];
            sy += y[i];
            sxx += xs[i] * xs[i];
            sxy += xs[i] * y[i];
        }
        double row = (3 * sxy - sx * sy) / (3 * sxx - sx * sx);
        double call = (sy - row * sx) / 3;
        if (call < 0 || row < 0) {
            call = 0;
            row = fmax(0.0, sxy / sxx);
        }
        c->call_ms = call;
        c->row_ms = row;
        c->pair_ms = 0.0;
    }
    c->measured = true;
    c->measure_ms = base_ms_since(t_begin);
    return BASE_OK;
}

/* ---- the plan ------------------------------------------------------------------------ */

/* Steps a run of hole n is given at least before the planner shrinks it
 * further: a quarter of its tokens (four commits per step on average) and
 * every block's full forward. */
static int ifl__min_steps(const ifl_plan_in *in, int n) {
    int blk = in->block > 0 ? BASE_MIN(in->block, n) : n;
    int fulls = (n + blk - 1) / blk;
    return BASE_MAX(fulls, (n + 3) / 4);
}

/* Predicted ms of one full step and one window step for context ctx, hole n,
 * c candidates. */
static void ifl__step_costs(const ifl_cost *cm, const ifl_plan_in *in, int ctx, int n, int c,
                            double *full, double *win) {
    int L = ctx + n + in->extra;
    int blk = in->block > 0 ? BASE_MIN(in->block, n) : n;
    *full = ifl_cost_step_ms(
        cm, c * (in->warm_rows > 0 && !in->exact ? BASE_MIN(L, in->warm_rows) : L), L, c * blk);
    *win = in->exact ? *full : ifl_cost_step_ms(cm, c * (blk + in->shift), L, c * blk);
}

/* Predicted ms of a run of hole n with at most `steps` steps. */
static double ifl__run_ms(const ifl_cost *cm, const ifl_plan_in *in, int ctx, int n, int c,
                          int steps) {
    double full, win;
    ifl__step_costs(cm, in, ctx, n, c, &full, &win);
    int blk = in->block > 0 ? BASE_MIN(in->block, n) : n;
    int fulls = in->exact ? steps : BASE_MIN(steps, (n + blk - 1) / blk);
    return fulls * full + (steps - fulls) * win;
}

/* What of that run the budget pays: all of it, or for an idle prefill's
 * plan (first_free) the steps after its first full one. */
static double ifl__plan_ms(const ifl_cost *cm, const ifl_plan_in *in, int ctx, int n, int c,
                           int steps) {
    double t = ifl__run_ms(cm, in, ctx, n, c, steps);
    if (in->first_free && steps > 0) {
        double full, win;
        ifl__step_costs(cm, in, ctx, n, c, &full, &win);
        t -= full;
    }
    return t;
}

double ifl_plan_reserve_ms(double budget_ms) {
    /* Post-processing, detokenising and the answer after the last step. */
    return fmin(20.0, 0.1 * budget_ms);
}

void ifl_plan_make(const ifl_cost *cm, const ifl_plan_in *in, ifl_plan *out) {
    memset(out, 0, sizeof *out);
    out->planned = true;
    out->budget_ms = in->budget_ms;
    out->left_ms = in->left_ms;
    out->ctx_tokens = in->ctx_tokens;
    out->candidates = BASE_MAX(1, in->candidates);
    out->n_hole = in->n_hole;
    out->n_cap = BASE_MAX(in->n_cap, in->n_hole);
    out->cost = *cm;
    out->why = "fits";
    double avail = in->left_ms - ifl_plan_reserve_ms(in->budget_ms);
    int n = in->n_hole;
    if (avail <= 0.0 || n < 1) {
        out->why = "budget passed";
        return;
    }
    int want = ifl__min_steps(in, n);
    if (in->prefilled_ctx > 0 && in->prefilled_cands > 0) {
        /* The first full step is there already: its context and candidates
         * stay, the steps after it are what must fit. */
        out->ctx_tokens = BASE_MIN(in->ctx_tokens, in->prefilled_ctx);
        out->candidates = in->prefilled_cands;
        ifl__step_costs(cm, in, out->ctx_tokens, n, out->candidates, &out->full_ms,
                        &out->window_ms);
        const double done = out->full_ms;
        int steps = 1;
        while (steps < n &&
               ifl__run_ms(cm, in, out->ctx_tokens, n, out->candidates, steps + 1) - done <= avail)
            steps++;
        out->run = true;
        out->why = "prefilled";
        if (steps < n)
            out->max_steps = steps;
        out->run_ms = ifl__run_ms(cm, in, out->ctx_tokens, n, out->candidates, steps) - done;
        out->grow = ifl_plan_grow(cm, in, out, avail - out->run_ms, BASE_MIN(2 * n, out->n_cap));
        return;
    }
    /* 1. Candidates beyond the first go when a short run of them does not fit. */
    while (out->candidates > 1 &&
           ifl__plan_ms(cm, in, out->ctx_tokens, n, out->candidates, want) > avail) {
        out->candidates = BASE_MAX(1, out->candidates / 2);
        out->why = "fewer candidates";
    }
    /* 2. The context is cut (at line starts, by the pipeline) only when even
     * that short run would not fit: halved down to IFL_PLAN_MIN_CTX tokens. */
    while (out->ctx_tokens > IFL_PLAN_MIN_CTX &&
           ifl__plan_ms(cm, in, out->ctx_tokens, n, out->candidates, want) > avail) {
        out->ctx_tokens = BASE_MAX(IFL_PLAN_MIN_CTX, out->ctx_tokens / 2);
        out->why = "context cut";
    }
    ifl__step_costs(cm, in, out->ctx_tokens, n, out->candidates, &out->full_ms, &out->window_ms);
    /* 2b. An idle prefill's free first step is bounded too. */
    while (in->first_free && in->first_max_ms > 0.0 && out->full_ms > in->first_max_ms &&
           out->ctx_tokens > IFL_PLAN_MIN_CTX) {
        out->ctx_tokens = BASE_MAX(IFL_PLAN_MIN_CTX, out->ctx_tokens / 2);
        out->why = "context cut";
        ifl__step_costs(cm, in, out->ctx_tokens, n, out->candidates, &out->full_ms,
                        &out->window_ms);
    }
    /* 3. The steps that fit; the last one commits every mask left. */
    int steps = 0;
    while (steps < n &&
           ifl__plan_ms(cm, in, out->ctx_tokens, n, out->candidates, steps + 1) <= avail)
        steps++;
    if (steps == 0) {
        out->why = "no step fits";
        return;
    }
    out->run = true;
    if (steps < n) {
        out->max_steps = steps;
        if (strcmp(out->why, "fits") == 0)
            out->why = "step cap";
    }
    out->run_ms = ifl__plan_ms(cm, in, out->ctx_tokens, n, out->candidates, steps);
    out->grow = ifl_plan_grow(cm, in, out, avail - out->run_ms, BASE_MIN(2 * n, out->n_cap));
}

bool ifl_plan_grow(const ifl_cost *cm, const ifl_plan_in *in, const ifl_plan *p, double avail_ms,
                   int n_next) {
    return ifl__run_ms(cm, in, p->ctx_tokens, n_next, p->candidates, ifl__min_steps(in, n_next)) <=
           avail_ms;
}
