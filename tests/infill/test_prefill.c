/* Idle prefill (infill/prefill.c, the worker's idle job; issue 19 item 3) on
 * the embedded tiny model:
 *   - a prefilled-then-requested completion is bit-identical to one without
 *     prefill (cached and exact mode, one and two candidates), and the first
 *     step came from the prefill (hit counter); a request at another cursor,
 *     or one after another job used the ctx, does not use it and still
 *     equals its reference;
 *   - with contextCache on, a prefilled canvas replaces the kept rows'
 *     approximation by the exact full forward ("prefilled");
 *   - on the worker, with a scripted slow stepper whose full forward takes
 *     SLOW_LAYERS x SLOW_LAYER_MS and polls for preemption between its
 *     simulated layers (as the engine checks its cancel flag between
 *     layers): a job arriving mid-prefill starts within one layer plus
 *     SLACK_MS (the stated bound; without preemption it would wait the rest
 *     of the forward, > 700 ms); a job for the same text and cursor joins
 *     the prefill and gets its step; an edit (prefill_cancel) or a newer
 *     prefill aborts the running one, and the next one completes;
 *   - the worker's idle re-measurement of a cost model that refuses every
 *     request: a request arriving during it stops it the first time (the
 *     model stays, the request is refused) and waits it out the next (the
 *     request runs under the measured model), so a user who never pauses
 *     still gets a usable model. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "flag.h"
#include "infill.h"
#include "kvstore.h"
#include "tiny_model.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *TEXT = "import os\n"
                          "\n"
                          "def total(xs):\n"
                          "    s = 0\n"
                          "    for x in xs:\n"
                          "        s += x\n"
                          "    return s\n"
                          "\n"
                          "def mean(xs):\n"
                          "    \n"
                          "\n"
                          "class Stats:\n"
                          "    def __init__(self, xs):\n"
                          "        self.xs = list(xs)\n"
                          "\n"
                          "    def spread(self):\n"
                          "        return max(self.xs) - min(self.xs)\n";

static size_t cursor_at(const char *text, const char *mark, size_t add) {
    const char *p = strstr(text, mark);
    return p ? (size_t)(p - text) + add : 0;
}

static void req_init(ifl_doc_req *r, const char *text, size_t cursor) {
    ifl_doc_req_default(r);
    r->text = text;
    r->len = strlen(text);
    r->language = "python";
    r->cursor = r->sel_start = r->sel_end = cursor;
    r->has_seed = true;
    r->seed = 3;
    r->max_hole = 16;
}

/* Bit for bit: the raw tokens, every candidate's text and confidence. */
static bool same_res(const ifl_doc_res *a, const ifl_doc_res *b) {
    if (a->runs != b->runs || a->raw.n_tokens != b->raw.n_tokens ||
        a->raw.n_cand != b->raw.n_cand || a->raw.steps_run != b->raw.steps_run)
        return false;
    if (a->raw.n_tokens > 0 &&
        memcmp(a->raw.tokens, b->raw.tokens, sizeof(int32_t) * (size_t)a->raw.n_tokens) != 0)
        return false;
    for (int c = 0; c < a->raw.n_cand; c++) {
        const ifl_text_cand *x = &a->raw.cand[c], *y = &b->raw.cand[c];
        if (x->len != y->len || memcmp(x->text, y->text, x->len) != 0 ||
            memcmp(&x->mean_conf, &y->mean_conf, sizeof(double)) != 0)
            return false;
    }
    return true;
}

static void test_exact(ifl_model *m) {
    const size_t c1 = cursor_at(TEXT, "def mean(xs):\n    ", 18);
    const size_t c2 = cursor_at(TEXT, "        return max", 8);
    const eng_cache_mode modes[] = {ENG_CACHE_CACHED, ENG_CACHE_EXACT};
    for (int mi = 0; mi < 2; mi++)
        for (int cands = 1; cands <= 2 - mi; cands++) { /* exact mode: one candidate */
            ifl_doc_req r, r2;
            ifl_doc_res ref, ref2, got;
            req_init(&r, TEXT, c1);
            r.mode = modes[mi];
            r.candidates = cands;
            if (mi == 1 || cands == 2)
                r.n_hole = 8; /* no growth: each run is a few steps on this checkpoint */
            r2 = r;
            r2.cursor = r2.sel_start = r2.sel_end = c2;
            ifl_model_prefill_clear(m);
            CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &ref), BASE_OK);
            CHECK_EQ_I(ifl_complete_doc(m, &r2, NULL, &ref2), BASE_OK);
            CHECK(ref.raw.n_tokens > 0);
            /* prefilled, then asked */
            long long h0 = ifl_model_prefill_hits(m);
            ifl_doc_req p = r;
            p.prefill = true;
            CHECK_EQ_I(ifl_complete_doc(m, &p, NULL, &got), BASE_ERR_CANCELLED);
            ifl_doc_res_free(&got);
            CHECK(ifl_model_prefilled(m));
            CHECK(ifl_model_prefill_chunk_ms(m) >= 0.0);
            CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &got), BASE_OK);
            CHECK(same_res(&ref, &got));
            CHECK_EQ_I((int)(ifl_model_prefill_hits(m) - h0), 1);
            if (got.runs == 1)
                CHECK(got.raw.prefill_hit);
            CHECK(!ifl_model_prefilled(m));
            ifl_doc_res_free(&got);
            /* prefilled at c1, asked at c2: not used */
            CHECK_EQ_I(ifl_complete_doc(m, &p, NULL, &got), BASE_ERR_CANCELLED);
            ifl_doc_res_free(&got);
            CHECK_EQ_I(ifl_complete_doc(m, &r2, NULL, &got), BASE_OK);
            CHECK(same_res(&ref2, &got));
            CHECK(!got.raw.prefill_hit);
            ifl_doc_res_free(&got);
            /* ... and the c1 request after that: the ctx changed, not used */
            CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &got), BASE_OK);
            CHECK(same_res(&ref, &got));
            CHECK_EQ_I((int)(ifl_model_prefill_hits(m) - h0), 1);
            ifl_doc_res_free(&got);
            ifl_doc_res_free(&ref);
            ifl_doc_res_free(&ref2);
        }
}

/* contextCache on: the request after an edit finds the prefilled canvas and
 * takes it instead of the kept rows (exact, and equal to a cold run). */
static void test_kv(ifl_model *m) {
    /* a longer document (the store re-encodes a window around the edit and
     * the hole, which must be a small part of the canvas); the edit is at the
     * end, after the hole */
    size_t cap = strlen(TEXT) + 4096;
    char *t1 = malloc(cap), *t2 = malloc(cap);
    t1[0] = 0;
    for (int i = 0; i < 30; i++) {
        char line[96];
        snprintf(line, sizeof line, "def f%d(a, b):\n    return a * %d + b\n\n", i, i + 2);
        strcat(t1, line);
    }
    strcat(t1, TEXT);
    const size_t at = cursor_at(t1, "class Stats", 0);
    memcpy(t2, t1, at);
    strcpy(t2 + at, "# note\n");
    strcat(t2, t1 + at);
    const char *TEXT_ = t1;
    const size_t c1 = cursor_at(TEXT_, "def mean(xs):\n    ", 18);
    const size_t c2 = cursor_at(t2, "def mean(xs):\n    ", 18);
    ifl_doc_req r1, r2;
    ifl_doc_res a, ref, got;
    req_init(&r1, TEXT_, c1);
    r1.n_hole = 8;
    r1.doc_key = "doc";
    req_init(&r2, t2, c2);
    r2.n_hole = 8;
    r2.doc_key = "doc";
    ifl_kv_clear(ifl_model_kv(m));
    CHECK_EQ_I(ifl_complete_doc(m, &r2, NULL, &ref), BASE_OK); /* cold: the reference */
    CHECK_STR(ref.raw.kv_why, "cold");
    ifl_kv_clear(ifl_model_kv(m));
    CHECK_EQ_I(ifl_complete_doc(m, &r1, NULL, &a), BASE_OK);
    ifl_doc_res_free(&a);
    /* without a prefill the edit's request reuses kept rows */
    CHECK_EQ_I(ifl_complete_doc(m, &r2, NULL, &got), BASE_OK);
    CHECK_STR(got.raw.kv_why, "warm");
    CHECK(got.raw.kv_reused > 0);
    ifl_doc_res_free(&got);
    ifl_kv_clear(ifl_model_kv(m));
    CHECK_EQ_I(ifl_complete_doc(m, &r1, NULL, &a), BASE_OK);
    ifl_doc_res_free(&a);
    ifl_doc_req p = r2;
    p.prefill = true;
    CHECK_EQ_I(ifl_complete_doc(m, &p, NULL, &got), BASE_ERR_CANCELLED);
    ifl_doc_res_free(&got);
    CHECK(ifl_model_prefilled(m));
    CHECK_EQ_I(ifl_complete_doc(m, &r2, NULL, &got), BASE_OK);
    CHECK_STR(got.raw.kv_why, "prefilled");
    CHECK(got.raw.prefill_hit);
    CHECK(same_res(&ref, &got));
    ifl_doc_res_free(&got);
    /* the prefilled run was kept: the next request there is warm again */
    CHECK_EQ_I(ifl_complete_doc(m, &r2, NULL, &got), BASE_OK);
    CHECK_STR(got.raw.kv_why, "warm");
    ifl_doc_res_free(&got);
    /* a prefill of a document with nothing kept is kept as its context: the
     * request after one more edit is warm from it, not cold */
    ifl_kv_clear(ifl_model_kv(m));
    ifl_model_prefill_clear(m);
    p = r1;
    p.prefill = true;
    CHECK_EQ_I(ifl_complete_doc(m, &p, NULL, &got), BASE_ERR_CANCELLED);
    ifl_doc_res_free(&got);
    CHECK(ifl_model_prefilled(m));
    ifl_kv_anchor an;
    CHECK(ifl_kv_anchor_get(ifl_model_kv(m), "doc", &an));
    CHECK_EQ_I(an.window_extra, -1);
    CHECK_EQ_I(ifl_complete_doc(m, &r2, NULL, &got), BASE_OK);
    CHECK_STR(got.raw.kv_why, "warm");
    CHECK(got.raw.kv_reused > 0);
    CHECK(!got.raw.prefill_hit);
    ifl_doc_res_free(&got);
    ifl_doc_res_free(&ref);
    ifl_kv_clear(ifl_model_kv(m));
    free(t1);
    free(t2);
}

/* ---- the worker ------------------------------------------------------------------- */

#define SLOW_LAYERS 40
#define SLOW_LAYER_MS 25
#define SLACK_MS 250 /* thread wake-ups and the job's own start on a loaded 2-core machine */

typedef struct wstate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ifl_job *done[16];
    int n_done;
    bool ready;
    int pf_started;
    ifl_worker *w;
} wstate;

static wstate WS = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, false, 0, NULL};

static void on_done(void *ud, ifl_job *j) {
    wstate *s = ud;
    pthread_mutex_lock(&s->mu);
    if (s->n_done < 16)
        s->done[s->n_done++] = j;
    else
        ifl_job_free(j);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void on_state(void *ud, const char *state, const char *msg, uint64_t d, uint64_t t) {
    (void)msg;
    (void)d;
    (void)t;
    wstate *s = ud;
    pthread_mutex_lock(&s->mu);
    if (strcmp(state, "ready") == 0)
        s->ready = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void on_prefill(void *ud, uint64_t group) {
    (void)group;
    wstate *s = ud;
    pthread_mutex_lock(&s->mu);
    s->pf_started++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The scripted slow stepper: a full forward of SLOW_LAYERS layers, each
 * SLOW_LAYER_MS, stopping between them when a prefill is asked to stop. */
static base_status slow_step(void *ud, const eng_stepper *inner, const eng_batch *batch,
                             const eng_step_req *req, eng_row_result *out) {
    wstate *s = ud;
    if (req->mode == ENG_STEP_FULL)
        for (int l = 0; l < SLOW_LAYERS; l++) {
            if (ifl_worker_prefill_stopping(s->w))
                return BASE_ERR_CANCELLED;
            sleep_ms(SLOW_LAYER_MS);
        }
    return inner->step(inner->ud, batch, req, out);
}

static bool wait_for(bool (*pred)(void), int ms) {
    uint64_t t0 = base_now_ns();
    pthread_mutex_lock(&WS.mu);
    while (!pred() && base_ms_since(t0) < ms) {
        pthread_mutex_unlock(&WS.mu);
        sleep_ms(5);
        pthread_mutex_lock(&WS.mu);
    }
    bool ok = pred();
    pthread_mutex_unlock(&WS.mu);
    return ok;
}

static int WANT;
static bool p_ready(void) { return WS.ready; }
static bool p_done(void) { return WS.n_done >= WANT; }
static bool p_started(void) { return WS.pf_started >= WANT; }

static ifl_job *take_job(void) {
    pthread_mutex_lock(&WS.mu);
    ifl_job *j = WS.n_done > 0 ? WS.done[--WS.n_done] : NULL;
    pthread_mutex_unlock(&WS.mu);
    return j;
}

static ifl_prefill_stats stats(void) {
    ifl_prefill_stats st;
    ifl_worker_prefill_stats(WS.w, &st);
    return st;
}

static long long STAT_WANT;
static bool p_aborted(void) { return stats().aborted >= STAT_WANT; }
static bool p_completed(void) { return stats().completed >= STAT_WANT; }

/* A worker reporting to WS, with WS's readiness and prefill count reset. */
static ifl_worker *ws_worker_new(const ifl_model_opts *mo) {
    ifl_worker_cbs cbs = {on_done, NULL, on_state, &WS};
    WS.ready = false;
    WS.pf_started = 0;
    ifl_worker *w = ifl_worker_new(&cbs, mo);
    CHECK(w != NULL);
    WS.w = w;
    return w;
}

static void test_worker(const char *dir, const ifl_model_opts *mo, ifl_model *ref_model) {
    ifl_worker *w = ws_worker_new(mo);
    if (!w)
        return;
    ifl_worker_set_step_wrap(w, slow_step, &WS);
    ifl_worker_set_prefill_hook(w, on_prefill, &WS);
    ifl_worker_load(w, dir);
    CHECK(wait_for(p_ready, 60000));
    const size_t c1 = cursor_at(TEXT, "def mean(xs):\n    ", 18);
    const size_t c2 = cursor_at(TEXT, "        return max", 8);
    ifl_doc_req ra, rb;
    req_init(&ra, TEXT, c1);
    ra.n_hole = 8;
    req_init(&rb, TEXT, c2);
    rb.n_hole = 8;

    /* 1. preempted: a job for another place arrives 100 ms into the prefill */
    CHECK(ifl_worker_prefill(w, 1, &ra));
    WANT = 1;
    CHECK(wait_for(p_started, 10000));
    sleep_ms(100);
    WANT = 1;
    CHECK(ifl_worker_submit(w, 2, NULL, &rb) != 0);
    CHECK(wait_for(p_done, 60000));
    ifl_job *j = take_job();
    CHECK(j != NULL);
    if (j) {
        CHECK_EQ_I(j->status, BASE_OK);
        printf("job arriving mid-prefill waited %.1f ms (bound: one layer %d ms + %d ms)\n",
               j->wait_ms, SLOW_LAYER_MS, SLACK_MS);
        CHECK(j->wait_ms <= SLOW_LAYER_MS + SLACK_MS);
        ifl_job_free(j);
    }
    ifl_prefill_stats st = stats();
    CHECK_EQ_I((int)st.preempted, 1);
    CHECK_EQ_I((int)st.waits, 1);
    CHECK_EQ_I((int)st.completed, 0);
    CHECK(st.max_wait_ms <= SLOW_LAYER_MS + SLACK_MS);

    /* 2. joined: the same request arrives mid-prefill, waits for it and gets
     * its first step; the answer equals one computed without prefill */
    CHECK(ifl_worker_prefill(w, 1, &ra));
    WANT = 2;
    CHECK(wait_for(p_started, 10000));
    WANT = 1;
    CHECK(ifl_worker_submit(w, 1, NULL, &ra) != 0);
    CHECK(wait_for(p_done, 60000));
    j = take_job();
    CHECK(j != NULL);
    st = stats();
    CHECK_EQ_I((int)st.joined, 1);
    CHECK_EQ_I((int)st.completed, 1);
    CHECK_EQ_I((int)st.hits, 1);
    if (j && ref_model) {
        ifl_doc_res ref;
        ifl_model_prefill_clear(ref_model);
        CHECK_EQ_I(ifl_complete_doc(ref_model, &ra, NULL, &ref), BASE_OK);
        CHECK_EQ_I(j->status, BASE_OK);
        CHECK(same_res(&ref, &j->res));
        CHECK(j->res.raw.prefill_hit);
        ifl_doc_res_free(&ref);
    }
    ifl_job_free(j);

    /* 3. an edit aborts the running prefill; the next one (the new text)
     * completes and the request there uses it */
    CHECK(ifl_worker_prefill(w, 1, &ra));
    WANT = 3;
    CHECK(wait_for(p_started, 10000));
    ifl_worker_prefill_cancel(w, 1);
    STAT_WANT = 1;
    CHECK(wait_for(p_aborted, 10000));
    char *t2 = malloc(strlen(TEXT) + 8);
    strcpy(t2, "#\n");
    strcat(t2, TEXT);
    ifl_doc_req ra2 = ra;
    ra2.text = t2;
    ra2.len = strlen(t2);
    ra2.cursor = ra2.sel_start = ra2.sel_end = c1 + 2;
    /* a newer prefill aborts a running older one too */
    CHECK(ifl_worker_prefill(w, 1, &ra));
    WANT = 4;
    CHECK(wait_for(p_started, 10000));
    CHECK(ifl_worker_prefill(w, 1, &ra2));
    STAT_WANT = 2;
    CHECK(wait_for(p_aborted, 10000));
    CHECK(wait_for(p_completed, 30000));
    st = stats();
    CHECK_EQ_I((int)st.aborted, 2);
    CHECK_EQ_I((int)st.completed, 2);
    CHECK(st.last_run_ms >= SLOW_LAYERS * SLOW_LAYER_MS * 0.9);
    WANT = 1;
    CHECK(ifl_worker_submit(w, 1, NULL, &ra2) != 0);
    CHECK(wait_for(p_done, 60000));
    j = take_job();
    CHECK(j && j->status == BASE_OK && j->res.raw.prefill_hit);
    CHECK_EQ_I((int)stats().hits, 2);
    ifl_job_free(j);
    printf("prefill stats: queued %lld runs %lld completed %lld preempted %lld aborted %lld "
           "joined %lld hits %lld, chunk bound %.3f ms (cost model, per layer)\n",
           stats().queued, stats().runs, stats().completed, stats().preempted, stats().aborted,
           stats().joined, stats().hits, stats().chunk_ms);
    ifl_worker_free(w);
    free(t2);
    while ((j = take_job()))
        ifl_job_free(j);
}

/* ---- the phases before the first layer (ifl_phase) -------------------------------
 * A scripted hook makes every phase PHASE_MS slow. A full run records the
 * phase sequence (the count's tokens are reused: no TOKENIZE; a long text:
 * CUT rounds). Then, for every position k of that sequence, a job for
 * another document is submitted halfway through phase k: the prefill must
 * stop at the check that ends phase k (no later phase, no layer) and the
 * job waits at most half a phase plus SLACK_MS. */
#define PHASE_MS 40
#define MAX_SEQ 64

typedef struct phstate {
    int seq[MAX_SEQ];
    int n;
    int submit_at;  /* -1: never */
    int after;      /* hook calls after the submit */
    bool submitted; /* the hook's submit was taken (checked on the main thread) */
    ifl_worker *w;
    ifl_doc_req *other;
} phstate;

static phstate PH;

static void on_phase(void *ud, int ph) {
    phstate *s = ud;
    if (s->submit_at >= 0 && s->n > s->submit_at)
        s->after++;
    if (s->n < MAX_SEQ)
        s->seq[s->n] = ph;
    bool submit = s->n == s->submit_at;
    s->n++;
    sleep_ms(PHASE_MS / 2);
    if (submit) /* no CHECK here: its counters belong to the main thread */
        s->submitted = ifl_worker_submit(s->w, 2, NULL, s->other) != 0;
    sleep_ms(PHASE_MS - PHASE_MS / 2);
}

static void test_phases(const char *dir, const ifl_model_opts *mo) {
    ifl_worker *w = ws_worker_new(mo);
    if (!w)
        return;
    PH.w = w;
    PH.submit_at = -1;
    ifl_worker_set_phase_hook(w, on_phase, &PH);
    ifl_worker_set_prefill_hook(w, on_prefill, &WS);
    ifl_worker_load(w, dir);
    CHECK(wait_for(p_ready, 60000));
    /* a long document: the context is cut to the canvas */
    size_t one = strlen(TEXT);
    char *big = malloc(one * 40 + 1);
    for (int i = 0; i < 40; i++)
        memcpy(big + one * (size_t)i, TEXT, one);
    big[one * 40] = 0;
    ifl_doc_req ra, rb;
    req_init(&ra, big, one * 20 + cursor_at(TEXT, "def mean(xs):\n    ", 18));
    ra.n_hole = 8;
    ra.time_budget_ms = 600000; /* a deadline: the planner counts the context */
    ra.received_ns = base_now_ns();
    req_init(&rb, TEXT, cursor_at(TEXT, "        return max", 8));
    rb.n_hole = 8;
    PH.other = &rb;

    /* the whole sequence, uninterrupted */
    PH.n = 0;
    CHECK(ifl_worker_prefill(w, 1, &ra));
    STAT_WANT = 1;
    CHECK(wait_for(p_completed, 60000));
    int n = PH.n < MAX_SEQ ? PH.n : MAX_SEQ;
    int seq[MAX_SEQ];
    memcpy(seq, PH.seq, sizeof(int) * (size_t)n);
    int count[IFL_PH_N] = {0};
    printf("phases:");
    for (int i = 0; i < n; i++) {
        count[seq[i]]++;
        printf(" %s", ifl_phase_name(seq[i]));
        CHECK(i == 0 || seq[i] >= seq[i - 1]); /* in order */
    }
    printf("\n");
    CHECK_EQ_I(count[IFL_PH_PREPARE], 1);
    CHECK_EQ_I(count[IFL_PH_COUNT], 2);
    CHECK_EQ_I(count[IFL_PH_TOKENIZE], 0); /* the count's tokens were reused */
    CHECK(count[IFL_PH_CUT] >= 1);
    CHECK_EQ_I(count[IFL_PH_SETUP], 1);
    ifl_prefill_stats st = stats();
    /* every stretch holds its scripted phase */
    for (int i = 0; i < IFL_PH_N; i++)
        if (count[i])
            CHECK(st.slice_ms[i] >= PHASE_MS * 0.9);
    CHECK(st.max_slice_ms >= PHASE_MS * 0.9);
    printf("longest stretch %.1f ms (%s), chunk bound %.3f ms\n", st.max_slice_ms,
           ifl_phase_name(st.max_slice_phase), st.chunk_ms);

    /* a job arriving in phase k stops the prefill at the end of phase k */
    long long pre0 = st.preempted;
    for (int k = 0; k < n; k++) {
        PH.n = 0;
        PH.after = 0;
        PH.submit_at = k;
        PH.submitted = false;
        WANT = 1;
        CHECK(ifl_worker_prefill(w, 1, &ra));
        CHECK(wait_for(p_done, 60000));
        CHECK(PH.submitted);
        ifl_job *j = take_job();
        CHECK(j != NULL);
        CHECK_EQ_I(PH.after, 0);
        CHECK_EQ_I(PH.n, k + 1);
        if (j) {
            CHECK_EQ_I(j->status, BASE_OK);
            CHECK(j->wait_ms <= PHASE_MS / 2 + SLACK_MS);
            printf("job arriving in phase %d (%s) waited %.1f ms (bound %d + %d ms)\n", k,
                   ifl_phase_name(seq[k]), j->wait_ms, PHASE_MS / 2, SLACK_MS);
            ifl_job_free(j);
        }
        st = stats();
        CHECK_EQ_I((int)(st.preempted - pre0), k + 1);
        CHECK_EQ_I((int)st.completed, 1);
    }
    PH.submit_at = -1;
    ifl_worker_free(w);
    free(big);
    ifl_job *j;
    while ((j = take_job()))
        ifl_job_free(j);
}

/* ---- resume: a prefill stopped between layers goes on from that layer ----------
 * On the model: a prefill stopped before layer RS_AT (a layer hook sets its
 * cancel flag there) leaves the ctx resumable at RS_AT; run again with
 * nothing in between, its forward starts at RS_AT (the hook sees no lower
 * layer) and the request that takes its step answers bit for bit what one
 * without any prefill answers. A request in between (a step on the ctx)
 * makes it start over, still exact. On the worker: a job that runs no step
 * (a bad range) preempts a prefill at layer 1; the prefill is queued again,
 * resumed from layer 1, and the request gets its step. */
static volatile int RS_FLAG;
static int RS_AT = -1, RS_FIRST = -1, RS_SEEN;

static void rs_hook(void *ud, int layer) {
    (void)ud;
    if (RS_FIRST < 0)
        RS_FIRST = layer;
    RS_SEEN++;
    if (layer == RS_AT)
        base_flag_set(&RS_FLAG, 3);
}

/* Runs prefill rp from scratch until rs_hook stops its pass before layer at. */
static void prefill_stopped_at(ifl_model *m, const ifl_doc_req *rp, int at) {
    ifl_doc_res res;
    ifl_model_prefill_clear(m);
    RS_AT = at;
    RS_FIRST = -1;
    base_flag_set(&RS_FLAG, 0);
    CHECK_EQ_I(ifl_complete_doc(m, rp, &RS_FLAG, &res), BASE_ERR_CANCELLED);
    ifl_doc_res_free(&res);
}

static void test_resume(ifl_model *m) {
    eng_ctx *ctx = ifl_model_ctx(m);
    const size_t c1 = cursor_at(TEXT, "def mean(xs):\n    ", 18);
    const size_t c2 = cursor_at(TEXT, "        return max", 8);
    for (int mode = 0; mode < 2; mode++) {
        ifl_doc_req r, rp, other;
        req_init(&r, TEXT, c1);
        r.n_hole = 8;
        if (mode == 1)
            r.mode = ENG_CACHE_EXACT;
        rp = r;
        rp.prefill = true;
        req_init(&other, TEXT, c2);
        other.n_hole = 8;
        ifl_doc_res ref, res, got;
        ifl_model_prefill_clear(m);
        CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &ref), BASE_OK);
        eng_ctx_set_layer_hook(ctx, rs_hook, NULL);
        for (int between = 0; between < 2; between++) {
            prefill_stopped_at(m, &rp, 1);
            CHECK(!ifl_model_prefilled(m));
            CHECK_EQ_I(ifl_model_prefill_resumable(m), 1);
            if (between) {
                /* a step on the ctx: nothing to resume */
                RS_AT = -1;
                CHECK_EQ_I(ifl_complete_doc(m, &other, NULL, &res), BASE_OK);
                ifl_doc_res_free(&res);
                CHECK_EQ_I(ifl_model_prefill_resumable(m), 0);
            }
            /* again, uninterrupted */
            RS_AT = -1;
            RS_FIRST = -1;
            RS_SEEN = 0;
            base_flag_set(&RS_FLAG, 0);
            CHECK_EQ_I(ifl_complete_doc(m, &rp, &RS_FLAG, &res), BASE_ERR_CANCELLED);
            ifl_doc_res_free(&res);
            CHECK(ifl_model_prefilled(m));
            CHECK_EQ_I(RS_FIRST, between ? 0 : 1); /* went on from layer 1 / started over */
            CHECK_EQ_I(ifl_model_prefill_resumable(m), 0);
            CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &got), BASE_OK);
            CHECK(got.raw.prefill_hit);
            CHECK(same_res(&ref, &got));
            ifl_doc_res_free(&got);
        }
        eng_ctx_set_layer_hook(ctx, NULL, NULL);
        ifl_doc_res_free(&ref);
    }
}

/* ---- the cost model learns from a prefill's pass -----------------------------------
 * A whole pass (from layer 0) is one observation of a full step; a stopped
 * or resumed pass is not (its time is a part of one), and neither is a cost
 * model set by hand. The hand-set model predicts 1 s per row, so the tiny
 * model's real pass pulls the scale down. */
static void test_observe(ifl_model *m) {
    eng_ctx *ctx = ifl_model_ctx(m);
    ifl_cost saved = *ifl_model_cost(m);
    ifl_cost c;
    memset(&c, 0, sizeof c);
    c.row_ms = 1000.0;
    c.scale = 1.0;
    c.measured = true;
    ifl_doc_req rp;
    req_init(&rp, TEXT, cursor_at(TEXT, "def mean(xs):\n    ", 18));
    rp.n_hole = 8;
    rp.prefill = true;
    ifl_doc_res res;
    eng_ctx_set_layer_hook(ctx, rs_hook, NULL);
    /* stopped before layer 1, then resumed: no observation */
    ifl_model_set_cost(m, &c);
    prefill_stopped_at(m, &rp, 1);
    CHECK_EQ_I(ifl_model_prefill_resumable(m), 1);
    CHECK_EQ_I(ifl_model_cost(m)->n_obs, 0);
    RS_AT = -1;
    RS_FIRST = -1;
    base_flag_set(&RS_FLAG, 0);
    CHECK_EQ_I(ifl_complete_doc(m, &rp, &RS_FLAG, &res), BASE_ERR_CANCELLED);
    ifl_doc_res_free(&res);
    CHECK(ifl_model_prefilled(m));
    CHECK_EQ_I(RS_FIRST, 1);
    CHECK_EQ_I(ifl_model_cost(m)->n_obs, 0);
    CHECK(ifl_model_cost(m)->scale == 1.0);
    /* a whole pass: one observation, far faster than predicted */
    ifl_model_prefill_clear(m);
    RS_FIRST = -1;
    CHECK_EQ_I(ifl_complete_doc(m, &rp, NULL, &res), BASE_ERR_CANCELLED);
    ifl_doc_res_free(&res);
    CHECK(ifl_model_prefilled(m));
    CHECK_EQ_I(RS_FIRST, 0);
    CHECK_EQ_I(ifl_model_cost(m)->n_obs, 1);
    CHECK(ifl_model_cost(m)->scale < 1.0);
    CHECK(ifl_model_cost(m)->scale >= 0.25);
    /* set by hand (not measured): left as it is */
    c.measured = false;
    ifl_model_set_cost(m, &c);
    ifl_model_prefill_clear(m);
    CHECK_EQ_I(ifl_complete_doc(m, &rp, NULL, &res), BASE_ERR_CANCELLED);
    ifl_doc_res_free(&res);
    CHECK(ifl_model_prefilled(m));
    CHECK_EQ_I(ifl_model_cost(m)->n_obs, 0);
    CHECK(ifl_model_cost(m)->scale == 1.0);
    eng_ctx_set_layer_hook(ctx, NULL, NULL);
    ifl_model_prefill_clear(m);
    ifl_model_set_cost(m, &saved);
}

/* ---- planning around a prefill ---------------------------------------------------
 * A cost model (set by hand) under which a full step never fits the 3 s
 * budget but window steps do: without prefill the request is refused ("no
 * step fits"); the prefill plans for the steps after its first (first_free)
 * and keeps that step; the request then plans around it ("prefilled"),
 * takes it, and answers exactly what the same run without any prefill
 * (its step count, no budget) answers. */
static void test_prefilled_plan(ifl_model *m) {
    ifl_cost saved = *ifl_model_cost(m);
    ifl_cost c;
    memset(&c, 0, sizeof c);
    c.row_ms = 40.0; /* a full step of ~80 rows > 3 s, a window step of 9 rows 360 ms */
    c.scale = 1.0;
    ifl_doc_req r, rp;
    req_init(&r, TEXT, cursor_at(TEXT, "def mean(xs):\n    ", 18));
    r.n_hole = 8;
    r.time_budget_ms = 3000;
    ifl_doc_res res, got, ref;
    ifl_model_set_cost(m, &c);
    ifl_model_prefill_clear(m);
    r.received_ns = base_now_ns();
    CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &res), BASE_OK);
    CHECK(res.plan.planned && !res.plan.run);
    CHECK_STR(res.plan.why, "no step fits");
    CHECK_EQ_I(res.raw.steps_run, 0);
    ifl_doc_res_free(&res);
    rp = r;
    rp.prefill = true;
    rp.received_ns = base_now_ns();
    ifl_model_set_cost(m, &c);
    CHECK_EQ_I(ifl_complete_doc(m, &rp, NULL, &res), BASE_ERR_CANCELLED);
    ifl_doc_res_free(&res);
    CHECK(ifl_model_prefilled(m));
    ifl_model_set_cost(m, &c);
    r.received_ns = base_now_ns();
    CHECK_EQ_I(ifl_complete_doc(m, &r, NULL, &got), BASE_OK);
    CHECK(got.plan.run);
    CHECK_STR(got.plan.why, "prefilled");
    CHECK(got.raw.prefill_hit);
    CHECK(got.raw.steps_run >= 2);
    printf("planned around the prefill: %d steps (cap %d), context %d\n", got.raw.steps_run,
           got.plan.max_steps, got.plan.ctx_tokens);
    ifl_doc_req r0 = r;
    r0.time_budget_ms = 0;
    r0.received_ns = 0;
    /* the deadline may have made an earlier step the final one (a slow,
     * sanitized build): the same step count without any deadline */
    r0.max_steps = got.raw.steps_run;
    ifl_model_set_cost(m, &saved);
    ifl_model_prefill_clear(m);
    CHECK_EQ_I(ifl_complete_doc(m, &r0, NULL, &ref), BASE_OK);
    CHECK_EQ_I(ref.raw.steps_run, got.raw.steps_run);
    CHECK(same_res(&ref, &got));
    ifl_doc_res_free(&ref);
    ifl_doc_res_free(&got);
    ifl_model_set_cost(m, &saved);
}

/* The worker: the layer hook submits a job that runs no step. */
static ifl_doc_req RW_BAD;
static int RW_FULL_AT = -1; /* submit at this layer of the first forward seen */
static bool RW_DONE, RW_SUBMITTED;

static void rw_hook(void *ud, int layer) {
    ifl_worker *w = ud;
    if (!RW_DONE && layer == RW_FULL_AT) {
        RW_DONE = true;
        /* no CHECK here: its counters belong to the main thread */
        RW_SUBMITTED = ifl_worker_submit(w, 2, NULL, &RW_BAD) != 0;
    }
}

static void test_resume_worker(const char *dir, const ifl_model_opts *mo, ifl_model *ref_model) {
    ifl_worker *w = ws_worker_new(mo);
    if (!w)
        return;
    ifl_worker_set_layer_hook(w, rw_hook, w);
    ifl_worker_set_prefill_hook(w, on_prefill, &WS);
    ifl_worker_load(w, dir);
    CHECK(wait_for(p_ready, 60000));
    ifl_doc_req ra;
    req_init(&ra, TEXT, cursor_at(TEXT, "def mean(xs):\n    ", 18));
    ra.n_hole = 8;
    req_init(&RW_BAD, TEXT, strlen(TEXT) + 5); /* out of range: answered before any step */
    RW_DONE = false;
    RW_SUBMITTED = false;
    RW_FULL_AT = 1;
    CHECK(ifl_worker_prefill(w, 1, &ra));
    WANT = 1;
    CHECK(wait_for(p_done, 60000));
    CHECK(RW_SUBMITTED);
    ifl_job *j = take_job();
    CHECK(j && j->status == BASE_ERR_RANGE);
    ifl_job_free(j);
    STAT_WANT = 1;
    CHECK(wait_for(p_completed, 30000));
    ifl_prefill_stats st = stats();
    CHECK_EQ_I((int)st.preempted, 1);
    CHECK_EQ_I((int)st.resumed, 1);
    CHECK_EQ_I((int)st.resumed_layers, 1);
    CHECK_EQ_I((int)st.completed, 1);
    CHECK_EQ_I((int)st.resume_dropped, 0);
    WANT = 1;
    CHECK(ifl_worker_submit(w, 1, NULL, &ra) != 0);
    CHECK(wait_for(p_done, 60000));
    j = take_job();
    CHECK(j && j->status == BASE_OK && j->res.raw.prefill_hit);
    if (j && ref_model) {
        ifl_doc_res ref;
        ifl_model_prefill_clear(ref_model);
        CHECK_EQ_I(ifl_complete_doc(ref_model, &ra, NULL, &ref), BASE_OK);
        CHECK(same_res(&ref, &j->res));
        ifl_doc_res_free(&ref);
    }
    ifl_job_free(j);
    printf("resume: preempted %lld resumed %lld (%lld layers kept) dropped %lld\n", st.preempted,
           st.resumed, st.resumed_layers, st.resume_dropped);
    ifl_worker_free(w);
    while ((j = take_job()))
        ifl_job_free(j);
}

/* The worker's idle re-measurement of a cost model that refuses every
 * request: a request arriving during it stops it at the next layer, every
 * other time. Measured with the ctx's layer hook: the hook, armed before the
 * refusal that makes the model starved, submits a request at the first layer
 * it sees after it (the re-measurement's first forward) and counts the
 * layers that follow until that request is answered. */
static pthread_mutex_t RM_MU = PTHREAD_MUTEX_INITIALIZER;
static bool RM_ARMED, RM_SUBMITTED;
static int RM_LAYERS; /* layers seen after the submit */
static ifl_doc_req RM_REQ;

static void rm_hook(void *ud, int layer) {
    (void)layer;
    ifl_worker *w = ud;
    pthread_mutex_lock(&RM_MU);
    bool fire = RM_ARMED && !RM_SUBMITTED;
    if (RM_SUBMITTED)
        RM_LAYERS++;
    if (fire)
        RM_SUBMITTED = true;
    pthread_mutex_unlock(&RM_MU);
    /* no CHECK here: its counters belong to the main thread */
    if (fire)
        ifl_worker_submit(w, 2, NULL, &RM_REQ);
}

/* A request the refusing model answered null. */
static void rm_check_refused(ifl_job *j) {
    CHECK(j && j->status == BASE_OK && j->res.n_items == 0);
    CHECK(j && j->res.plan.planned && !j->res.plan.run);
    if (j)
        CHECK_STR(j->res.plan.why ? j->res.plan.why : "", "no step fits");
}

/* `before` refusals, then one with the hook armed that makes the model
 * starved; returns the request (group 2) the hook submitted during the
 * re-measurement, once answered. Both answers of the last round are awaited
 * together: the hook's request may be answered before the refusal's
 * callback has returned. */
static ifl_job *rm_round(ifl_worker *w, const ifl_doc_req *r, int before) {
    pthread_mutex_lock(&RM_MU);
    RM_ARMED = false;
    RM_SUBMITTED = false;
    RM_LAYERS = 0;
    pthread_mutex_unlock(&RM_MU);
    for (int i = 0; i < before; i++) {
        WANT = WS.n_done + 1;
        CHECK(ifl_worker_submit(w, 1, NULL, r) != 0);
        CHECK(wait_for(p_done, 30000));
        ifl_job *j = take_job();
        rm_check_refused(j);
        ifl_job_free(j);
    }
    pthread_mutex_lock(&RM_MU);
    RM_ARMED = true;
    pthread_mutex_unlock(&RM_MU);
    /* the model is starved after this one: the worker measures it when idle */
    WANT = WS.n_done + 2;
    CHECK(ifl_worker_submit(w, 1, NULL, r) != 0);
    CHECK(wait_for(p_done, 60000));
    pthread_mutex_lock(&RM_MU);
    CHECK(RM_SUBMITTED);
    RM_ARMED = false;
    pthread_mutex_unlock(&RM_MU);
    ifl_job *a = take_job(), *b = take_job(), *hooked = NULL;
    if (a && a->group == 2) {
        hooked = a;
        a = b;
    } else if (b && b->group == 2) {
        hooked = b;
    }
    rm_check_refused(a);
    ifl_job_free(a);
    CHECK(hooked != NULL);
    return hooked;
}

static void test_remeasure_worker(const char *dir, const ifl_model_opts *mo) {
    ifl_worker *w = ws_worker_new(mo);
    if (!w)
        return;
    ifl_worker_set_layer_hook(w, rm_hook, w);
    ifl_worker_load(w, dir);
    CHECK(wait_for(p_ready, 60000));
    ifl_cost huge;
    memset(&huge, 0, sizeof huge);
    huge.call_ms = 1e7; /* refuses even the hook's 600 s budget */
    huge.scale = 1.0;
    ifl_worker_set_cost(w, &huge);
    ifl_doc_req r;
    req_init(&r, TEXT, cursor_at(TEXT, "def mean(xs):\n    ", 18));
    r.n_hole = 8;
    r.time_budget_ms = 2000;
    RM_REQ = r;
    RM_REQ.time_budget_ms = 600000; /* the second one waits out a whole measurement */

    /* First time: the request stops the re-measurement; the model stays the
     * refusing one, so the request is refused too. */
    ifl_job *j = rm_round(w, &r, IFL_COST_REPROBE - 1);
    CHECK(j && j->status == BASE_OK);
    if (j) {
        CHECK(j->res.plan.planned && !j->res.plan.run);
        CHECK(j->res.plan.cost.call_ms == huge.call_ms && !j->res.plan.cost.measured);
        CHECK_STR(j->res.plan.why ? j->res.plan.why : "", "no step fits");
        CHECK(j->wait_ms < 5000.0);
    }
    pthread_mutex_lock(&RM_MU);
    const int stopped_layers = RM_LAYERS;
    pthread_mutex_unlock(&RM_MU);
    /* at most the layer it was in when the flag was set, and the next one */
    CHECK(stopped_layers <= 2);
    ifl_job_free(j);

    /* Second time: the re-measurement is not stopped; the request waits for
     * it and runs under the measured model. */
    j = rm_round(w, &r, IFL_COST_REPROBE - 2); /* the first round's request was refusal 1 */
    CHECK(j && j->status == BASE_OK);
    if (j) {
        CHECK(j->res.plan.planned && j->res.plan.run);
        CHECK(j->res.plan.cost.measured && j->res.plan.cost.call_ms < huge.call_ms);
        CHECK(j->res.runs >= 1);
    }
    pthread_mutex_lock(&RM_MU);
    const int measured_layers = RM_LAYERS;
    pthread_mutex_unlock(&RM_MU);
    /* the rest of several measurement forwards (and the request's own steps) */
    CHECK(measured_layers > 8);
    printf("re-measurement: stopped after %d layer(s) the first time, ran on %d more the second "
           "(the request waited %.0f ms)\n",
           stopped_layers, measured_layers, j ? j->wait_ms : -1.0);
    ifl_job_free(j);
    ifl_worker_free(w);
    while ((j = take_job()))
        ifl_job_free(j);
}

int main(void) {
    int rc;
    if (tiny_model_missing(TINY_MODEL_DIR, "test_prefill", &rc))
        return rc;
    ifl_model_opts o;
    ifl_model *m = tiny_model_open(TINY_MODEL_DIR, &o);
    uint64_t t0 = base_now_ns();
    if (m) {
        test_exact(m);
        printf("exact: %.0f ms\n", base_ms_since(t0));
        test_kv(m);
        printf("kv: %.0f ms\n", base_ms_since(t0));
        test_resume(m);
        printf("resume: %.0f ms\n", base_ms_since(t0));
        test_prefilled_plan(m);
        printf("prefilled plan: %.0f ms\n", base_ms_since(t0));
        test_observe(m);
        printf("cost observed: %.0f ms\n", base_ms_since(t0));
    }
    test_worker(TINY_MODEL_DIR, &o, m);
    printf("worker: %.0f ms\n", base_ms_since(t0));
    test_phases(TINY_MODEL_DIR, &o);
    printf("phases: %.0f ms\n", base_ms_since(t0));
    test_resume_worker(TINY_MODEL_DIR, &o, m);
    printf("resume on the worker: %.0f ms\n", base_ms_since(t0));
    test_remeasure_worker(TINY_MODEL_DIR, &o);
    printf("re-measurement on the worker: %.0f ms\n", base_ms_since(t0));
    ifl_model_close(m);
    return check_finish("test_prefill");
}
