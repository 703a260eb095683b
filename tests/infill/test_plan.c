/* The latency budget (infill/plan.c, docs/PERFORMANCE.md "Latency budget"):
 *   - a fake cost model drives the planner's choices (candidates, context
 *     cut, step cap, growth, nothing fits, budget passed);
 *   - the cost model measured on a scripted stepper of known cost predicts it;
 *   - on the tiny model with a scripted slow stepper (every step takes what
 *     the fake cost model predicts), a budget is never overrun by more than
 *     one predicted step, and a budget that has passed answers at once with
 *     no run. The last part needs the embedded tiny model (77 without it,
 *     a failure under CI=true);
 *   - a cost model that refuses every request is measured again (starved). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "clockjump.h"
#include "infill.h"
#include "tiny_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ifl_cost fake_cost(double call, double row, double pair, double pos) {
    ifl_cost c;
    memset(&c, 0, sizeof c);
    c.call_ms = call;
    c.row_ms = row;
    c.pair_ms = pair;
    c.pos_ms = pos;
    c.scale = 1.0;
    return c;
}

/* An IDE-shaped request: 1,900 context tokens, a statement hole 16 → 128,
 * threshold's 32-row blocks, a Dream canvas (BOS + EOS), 3 candidates. */
static ifl_plan_in req_in(double budget) {
    ifl_plan_in in;
    memset(&in, 0, sizeof in);
    in.budget_ms = budget;
    in.left_ms = budget;
    in.ctx_tokens = 1900;
    in.n_hole = 16;
    in.n_cap = 128;
    in.candidates = 3;
    in.block = 32;
    in.extra = 2;
    in.shift = 1;
    return in;
}

static void test_planner(void) {
    ifl_plan p;
    /* A fast device: everything as asked, growth predicted to fit. */
    ifl_cost fast = fake_cost(0.1, 0.0005, 0.0, 0.01);
    ifl_plan_in in = req_in(2000);
    ifl_plan_make(&fast, &in, &p);
    CHECK(p.planned && p.run);
    CHECK_STR(p.why, "fits");
    CHECK_EQ_I(p.ctx_tokens, 1900);
    CHECK_EQ_I(p.candidates, 3);
    CHECK_EQ_I(p.max_steps, 0);
    CHECK(p.grow);
    CHECK(p.run_ms <= 2000 - ifl_plan_reserve_ms(2000));

    /* A slow device (0.5 ms a row): candidates go first, then the context
     * is cut until a short run fits; never below IFL_PLAN_MIN_CTX. */
    ifl_cost slow = fake_cost(1.0, 0.5, 0.0, 0.5);
    in = req_in(400);
    ifl_plan_make(&slow, &in, &p);
    CHECK(p.run);
    CHECK_EQ_I(p.candidates, 1);
    CHECK(p.ctx_tokens < 1900 && p.ctx_tokens >= IFL_PLAN_MIN_CTX);
    CHECK_STR(p.why, "context cut");
    CHECK(p.run_ms <= 400 - ifl_plan_reserve_ms(400) + 1e-9);
    /* The full step at the cut context fits the budget; at the whole one it would not. */
    CHECK(p.full_ms < 380);
    CHECK(ifl_cost_step_ms(&slow, 1918, 1918, 16) > 380);

    /* The context fits but not a step per token: a step cap, the last step
     * committing every mask. */
    ifl_cost mid = fake_cost(0.0, 0.5, 0.0, 0.0);
    in = req_in(400);
    in.candidates = 1;
    in.ctx_tokens = 500;
    ifl_plan_make(&mid, &in, &p);
    CHECK(p.run);
    CHECK_EQ_I(p.ctx_tokens, 500);
    CHECK(p.max_steps > 0 && p.max_steps < 16);
    CHECK_STR(p.why, "step cap");
    CHECK(!p.grow);

    /* Exact mode: every step is a full forward, so fewer steps fit. */
    in.exact = true;
    ifl_plan q;
    ifl_plan_make(&mid, &in, &q);
    CHECK(q.run && q.max_steps > 0 && q.max_steps <= p.max_steps);
    CHECK(q.window_ms == q.full_ms);

    /* Nothing fits even at the smallest context: no run, answered null. */
    ifl_cost hopeless = fake_cost(10.0, 10.0, 0.0, 0.0);
    in = req_in(400);
    ifl_plan_make(&hopeless, &in, &p);
    CHECK(p.planned && !p.run);
    CHECK_STR(p.why, "no step fits");

    /* Idle prefill (issue 19): a full step of at least 128 + 16 rows costs
     * > 1.4 s here, a window step 17 rows = 170 ms, the budget 400 ms. The
     * prefill's plan (first_free) sizes the context for the steps after its
     * first: it runs. The request that finds the step kept plans around it:
     * the prefill's context and candidates, the first step not counted. */
    ifl_cost winonly = fake_cost(0.0, 10.0, 0.0, 0.0);
    in = req_in(400);
    in.candidates = 1;
    ifl_plan_make(&winonly, &in, &p);
    CHECK(!p.run); /* without a prefill: nothing fits */
    in.first_free = true;
    ifl_plan_make(&winonly, &in, &p);
    CHECK(p.run);
    CHECK(p.max_steps >= 2);
    CHECK(p.run_ms <= 400 - ifl_plan_reserve_ms(400) + 1e-9);
    CHECK(p.full_ms > 400); /* the step the idle time pays */
    ifl_plan_in rq = req_in(400);
    rq.candidates = 3;
    rq.prefilled_ctx = p.ctx_tokens;
    rq.prefilled_cands = p.candidates;
    ifl_plan q2;
    ifl_plan_make(&winonly, &rq, &q2);
    CHECK(q2.run);
    CHECK_STR(q2.why, "prefilled");
    CHECK_EQ_I(q2.ctx_tokens, p.ctx_tokens);
    CHECK_EQ_I(q2.candidates, 1);
    CHECK_EQ_I(q2.max_steps, p.max_steps);
    CHECK(q2.run_ms <= 400 - ifl_plan_reserve_ms(400) + 1e-9);
    /* A prefill that would not end in a pause is no help: its first step
     * is bounded too (first_max_ms), the context halved until it fits, and
     * never below the smallest context. */
    ifl_plan_in pin = req_in(2000); /* the window steps fit at any context */
    pin.candidates = 1;
    pin.first_free = true;
    ifl_plan up, cp;
    ifl_plan_make(&winonly, &pin, &up);
    CHECK(up.run);
    CHECK_EQ_I(up.ctx_tokens, 1900);
    pin.first_max_ms = 3000;
    ifl_plan_make(&winonly, &pin, &cp);
    CHECK(cp.run);
    CHECK_STR(cp.why, "context cut");
    CHECK(cp.full_ms <= 3000);
    CHECK(cp.full_ms > 1500); /* halved no further than needed */
    CHECK(cp.ctx_tokens < up.ctx_tokens);
    CHECK(cp.ctx_tokens > IFL_PLAN_MIN_CTX);
    CHECK(cp.run_ms <= 2000 - ifl_plan_reserve_ms(2000) + 1e-9);
    pin.first_max_ms = 100; /* below the smallest context's step: that one */
    ifl_plan_make(&winonly, &pin, &cp);
    CHECK(cp.run);
    CHECK_EQ_I(cp.ctx_tokens, IFL_PLAN_MIN_CTX);
    /* a budget where everything fits: the same plan with or without */
    ifl_plan a, b;
    in = req_in(2000);
    ifl_plan_make(&fast, &in, &a);
    in.first_free = true;
    ifl_plan_make(&fast, &in, &b);
    CHECK_EQ_I(a.ctx_tokens, b.ctx_tokens);
    CHECK_EQ_I(a.candidates, b.candidates);
    CHECK_EQ_I(a.max_steps, b.max_steps);

    /* A kept context (warm_rows): the first step recomputes about 64 rows,
     * not 1,920, so a run that cut the context keeps all of it. */
    ifl_cost slowish = fake_cost(1.0, 0.25, 0.0, 0.5);
    in = req_in(400);
    in.candidates = 1;
    ifl_plan_make(&slowish, &in, &p);
    CHECK(p.run && p.ctx_tokens < 1900);
    in.warm_rows = 64;
    ifl_plan_make(&slowish, &in, &p);
    CHECK(p.run);
    CHECK_EQ_I(p.ctx_tokens, 1900);
    CHECK(p.full_ms < 0.25 * 200); /* not the 1,920-row forward (480 ms) */
    in.exact = true;               /* exact mode never reuses it */
    ifl_plan_make(&slowish, &in, &p);
    CHECK(p.ctx_tokens < 1900 || !p.run);

    /* A budget that has passed: no run. */
    in = req_in(400);
    in.left_ms = -3.0;
    ifl_plan_make(&fast, &in, &p);
    CHECK(!p.run);
    CHECK_STR(p.why, "budget passed");

    /* Growth: a run of the doubled hole must fit what is left. */
    in = req_in(2000);
    ifl_plan_make(&fast, &in, &p);
    CHECK(ifl_plan_grow(&fast, &in, &p, 1000.0, 32));
    CHECK(!ifl_plan_grow(&fast, &in, &p, 0.5, 32));
    CHECK(!ifl_plan_grow(&slow, &in, &p, 100.0, 128));

    /* The scale follows observed / predicted, clamped. */
    ifl_cost c = fake_cost(1, 0, 0, 0);
    ifl_cost_observe(&c, 10.0, 20.0);
    CHECK(c.scale > 1.2 && c.scale < 1.4);
    CHECK(fabs(ifl_cost_step_ms(&c, 0, 0, 0) - c.scale) < 1e-12);
    /* A step 1000x slower than predicted is a clock jump (suspend), not
     * load: ignored. */
    double before = c.scale;
    ifl_cost_observe(&c, 1.0, 1000.0);
    CHECK(c.scale == before);
    for (int i = 0; i < 100; i++)
        ifl_cost_observe(&c, 1.0, 40.0);
    CHECK(c.scale == 8.0);
    ifl_cost_observe(&c, 0.0, 5.0); /* nothing predicted: ignored */
    CHECK(c.scale == 8.0);
}

/* ---- the cost model measured on a stepper of known cost ----------------------- */

static void sleep_ms(double ms) {
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000.0), (long)(fmod(ms, 1000.0) * 1e6)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* The known stepper takes no time: it moves the clock the planner reads
 * forward by its cost (virtual time), so the fit is exact on any machine
 * (a sleeping stepper overshot by seconds at load average 16). */
static const ifl_cost KNOWN = {20.0, 0.5, 0.0, 5.0, 1.0, 0, 0, false};

static base_status known_step(void *ud, const eng_batch *b, const eng_step_req *q,
                              eng_row_result *out) {
    (void)ud;
    int rows = b->n_seq * (q->mode == ENG_STEP_FULL ? b->len : q->win_end - q->win_start);
    base_clock_advance_ns((uint64_t)(ifl_cost_step_ms(&KNOWN, rows, b->len, q->n_pos) * 1e6));
    for (int i = 0; i < q->n_pos; i++)
        out[i] = (eng_row_result){0, 1.0f, 1.0f, 0.0f};
    return BASE_OK;
}

static void test_measure(void) {
    eng_model_info info;
    memset(&info, 0, sizeof info);
    info.mask_id = 5;
    info.eos_id = 1;
    eng_stepper st = {known_step, NULL};
    ifl_cost c;
    CHECK_EQ_I(ifl_cost_measure(&st, &info, 2048, &c), BASE_OK);
    printf("measured on the scripted stepper: %.3f ms/call + %.4f ms/row + %.3g ms/row/key + "
           "%.3f ms/position (true: 20 + 0.5 + 0 + 5)\n",
           c.call_ms, c.row_ms, c.pair_ms, c.pos_ms);
    CHECK(c.measured && c.scale == 1.0);
    CHECK(c.call_ms >= 0 && c.row_ms >= 0 && c.pair_ms >= 0 && c.pos_ms >= 0);
    /* Only the real time around each virtual step adds noise: within 10 %. */
    const int sizes[][3] = {{512, 512, 1}, {48, 1024, 32}, {2048, 2048, 16}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double want = ifl_cost_step_ms(&KNOWN, sizes[i][0], sizes[i][1], sizes[i][2]);
        double got = ifl_cost_step_ms(&c, sizes[i][0], sizes[i][1], sizes[i][2]);
        if (!(got > 0.9 * want && got < 1.1 * want))
            fprintf(stderr, "measured %.2f ms for %.2f ms\n", got, want);
        CHECK(got > 0.9 * want && got < 1.1 * want);
    }
    CHECK(ifl_cost_measure(&st, &info, 4, &c) == BASE_ERR_TOO_LARGE);
}

/* ---- the pipeline on the tiny model with a scripted slow stepper ----------------- */

/* What the fake cost model predicts for every step: at least 40 ms, and
 * more than the engine alone takes on this machine (measured first). */
static double STEP_MS = 40.0;

typedef struct slow {
    int steps;
    double max_ms; /* the slowest step, in case the engine alone overran STEP_MS */
} slow;

/* Runs the engine, then waits until the step has taken STEP_MS. */
static base_status slow_step(void *ud, const eng_stepper *inner, const eng_batch *b,
                             const eng_step_req *q, eng_row_result *out) {
    slow *s = ud;
    uint64_t t0 = base_now_ns();
    base_status st = inner->step(inner->ud, b, q, out);
    sleep_ms(STEP_MS - base_ms_since(t0));
    double ms = base_ms_since(t0);
    s->max_ms = ms > s->max_ms ? ms : s->max_ms;
    s->steps++;
    return st;
}

/* An empty line between two statements: a statement span (16, up to 128). */
static const char TEXT[] = "def area(w, h):\n    r = w * h\n\n    return r\n";

static void req_init(ifl_doc_req *r) {
    ifl_doc_req_default(r);
    r->text = TEXT;
    r->len = strlen(TEXT);
    r->language = "python";
    r->cursor = r->sel_start = r->sel_end = 30;
    r->has_seed = true;
    r->seed = 3;
}

static void test_pipeline(ifl_model *m) {
    slow s = {0, 0.0};
    ifl_model_set_step_wrap(m, slow_step, &s);
    /* Warm up (pages the weights in) and time the engine's own steps. */
    STEP_MS = 0.0;
    ifl_doc_req r;
    ifl_doc_res res;
    req_init(&r);
    r.max_steps = 3;
    r.max_hole = 16;
    for (int i = 0; i < 2; i++) {
        s.max_ms = 0.0;
        CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &res), BASE_OK);
        ifl_doc_res_free(&res);
    }
    STEP_MS = fmax(40.0, 1.5 * s.max_ms);
    s.max_ms = 0.0;
    ifl_cost c = fake_cost(STEP_MS, 0.0, 0.0, 0.0);
    const double budgets[] = {4 * STEP_MS, 10 * STEP_MS, 22 * STEP_MS};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        ifl_model_set_cost(m, &c); /* the same predictions for every budget */
        s.steps = 0;
        req_init(&r);
        r.time_budget_ms = (int)budgets[i];
        r.received_ns = base_now_ns();
        CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &res), BASE_OK);
        double took = base_ms_since(r.received_ns);
        double step = STEP_MS > s.max_ms ? STEP_MS : s.max_ms;
        printf("budget %.0f ms (steps of %.0f ms): %.1f ms, %d steps in %d run(s), hole %d, plan "
               "%s (step cap %d), "
               "slowest step %.1f ms\n",
               budgets[i], STEP_MS, took, res.raw.steps_run, res.runs, res.n_hole, res.plan.why,
               res.plan.max_steps, s.max_ms);
        CHECK(res.plan.planned && res.plan.run);
        CHECK(res.runs >= 1);
        /* The budget was used, not thrown away: at least a step per 2.5 predicted. */
        CHECK(s.steps >= (int)(budgets[i] / STEP_MS / 2.5));
        CHECK(took <= budgets[i] + step);
        ifl_doc_res_free(&res);
    }

    /* A budget that passed while the request waited: no step at all. */
    s.steps = 0;
    req_init(&r);
    r.time_budget_ms = 400;
    r.received_ns = base_now_ns() - 1000000000ull;
    uint64_t t0 = base_now_ns();
    CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &res), BASE_OK);
    CHECK(base_ms_since(t0) < STEP_MS);
    CHECK_EQ_I(s.steps, 0);
    CHECK_EQ_I(res.runs, 0);
    CHECK_EQ_I(res.n_items, 0);
    CHECK(res.plan.planned && !res.plan.run);
    CHECK_STR(res.plan.why, "budget passed");
    ifl_doc_res_free(&res);

    /* No budget: no plan; the step cap alone bounds each run. */
    req_init(&r);
    r.max_steps = 6;
    s.steps = 0;
    CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &res), BASE_OK);
    CHECK(!res.plan.planned);
    CHECK(s.steps >= 6);
    ifl_doc_res_free(&res);
    ifl_model_set_step_wrap(m, NULL, NULL);
}

/* A cost model that over-predicts (measured while the machine was busy)
 * refuses every request and never observes a run: after IFL_COST_REPROBE
 * refusals in a row the model says it is starved, and measuring it again
 * (what the worker does when idle) gives a model under which requests run. */
static void test_starved(ifl_model *m) {
    ifl_cost huge = fake_cost(100000.0, 0.0, 0.0, 0.0);
    ifl_model_set_cost(m, &huge);
    ifl_doc_req r;
    ifl_doc_res res;
    for (int i = 0; i < IFL_COST_REPROBE; i++) {
        CHECK(!ifl_model_cost_starved(m));
        req_init(&r);
        r.time_budget_ms = 2000;
        r.received_ns = base_now_ns();
        CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &res), BASE_OK);
        CHECK(res.plan.planned && !res.plan.run);
        CHECK_STR(res.plan.why, "no step fits");
        ifl_doc_res_free(&res);
    }
    CHECK(ifl_model_cost_starved(m));
    CHECK_EQ_I(ifl_model_remeasure(m, NULL), BASE_OK);
    CHECK(!ifl_model_cost_starved(m));
    const ifl_cost *c = ifl_model_cost(m);
    CHECK(c->measured);
    /* stopped by a request (its flag set): the model stays as it was */
    const ifl_cost was = *c;
    volatile int stop = 1;
    CHECK_EQ_I(ifl_model_remeasure(m, &stop), BASE_ERR_CANCELLED);
    CHECK(c->call_ms == was.call_ms && c->row_ms == was.row_ms && c->pos_ms == was.pos_ms);
    /* What the machine costs now, far below the refusing model; a budget
     * that holds a few of its steps (ASan on a loaded machine is slow). */
    double full = ifl_cost_step_ms(c, 128, 128, 16);
    CHECK(full < 10000.0);
    req_init(&r);
    r.time_budget_ms = (int)(2000.0 + 20.0 * full);
    r.received_ns = base_now_ns();
    CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &res), BASE_OK);
    CHECK(res.plan.planned && res.plan.run);
    CHECK(res.runs >= 1);
    ifl_doc_res_free(&res);
    /* Refusals for a budget that had passed leave the count alone. */
    for (int i = 0; i < IFL_COST_REPROBE; i++) {
        req_init(&r);
        r.time_budget_ms = 400;
        r.received_ns = base_now_ns() - 1000000000ull;
        CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &res), BASE_OK);
        CHECK_STR(res.plan.why, "budget passed");
        ifl_doc_res_free(&res);
    }
    CHECK(!ifl_model_cost_starved(m));
}

int main(void) {
    test_planner();
    test_measure();
    int rc;
    if (tiny_model_missing(TINY_MODEL_DIR, "test_plan", &rc))
        return rc;
    ifl_model_opts o;
    ifl_model *m = tiny_model_open(TINY_MODEL_DIR, &o);
    if (m) {
        test_pipeline(m);
        test_starved(m);
    }
    ifl_model_close(m);
    return check_finish("test_plan");
}
