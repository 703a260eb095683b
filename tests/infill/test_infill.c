/* infill unit tests without a model: context budget split, typing-through
 * cache, and the worker's queue (supersession, cancellation, no model). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "infill.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void test_budget(void) {
    int kp, ks;
    ifl_budget_split(100, 1000, 1000, &kp, &ks);
    CHECK_EQ_I(kp, 75);
    CHECK_EQ_I(ks, 25);
    ifl_budget_split(100, 1000, 10, &kp, &ks); /* unused suffix share goes to the prefix */
    CHECK_EQ_I(kp, 90);
    CHECK_EQ_I(ks, 10);
    ifl_budget_split(100, 20, 1000, &kp, &ks); /* and the other way round */
    CHECK_EQ_I(kp, 20);
    CHECK_EQ_I(ks, 80);
    ifl_budget_split(100, 20, 30, &kp, &ks);
    CHECK_EQ_I(kp, 20);
    CHECK_EQ_I(ks, 30);
    ifl_budget_split(-5, 20, 30, &kp, &ks);
    CHECK_EQ_I(kp + ks, 0);
}

static void test_tcache(void) {
    ifl_tcache *c = ifl_tcache_new();
    const char *t0 = "x = \nprint(x)\n";
    CHECK_EQ_I(ifl_tcache_put(c, "a", t0, strlen(t0), 4, "foo(1)", 6), BASE_OK);
    const char *rest = NULL;
    size_t rl = 0;
    /* Nothing typed yet: the whole completion. */
    CHECK(ifl_tcache_get(c, "a", t0, strlen(t0), 4, &rest, &rl));
    CHECK_EQ_U(rl, 6);
    /* Typed "fo": the rest is "o(1)". */
    const char *t1 = "x = fo\nprint(x)\n";
    CHECK(ifl_tcache_get(c, "a", t1, strlen(t1), 6, &rest, &rl));
    CHECK_EQ_U(rl, 4);
    CHECK(memcmp(rest, "o(1)", 4) == 0);
    /* A different character: miss. */
    const char *t2 = "x = fa\nprint(x)\n";
    CHECK(!ifl_tcache_get(c, "a", t2, strlen(t2), 6, &rest, &rl));
    /* Text elsewhere changed: miss. */
    const char *t3 = "x = fo\nprint(y)\n";
    CHECK(!ifl_tcache_get(c, "a", t3, strlen(t3), 6, &rest, &rl));
    /* Typed all of it: nothing left to show. */
    const char *t4 = "x = foo(1)\nprint(x)\n";
    CHECK(!ifl_tcache_get(c, "a", t4, strlen(t4), 10, &rest, &rl));
    /* Other key, forget. */
    CHECK(!ifl_tcache_get(c, "b", t1, strlen(t1), 6, &rest, &rl));
    ifl_tcache_forget(c, "a");
    CHECK(!ifl_tcache_get(c, "a", t1, strlen(t1), 6, &rest, &rl));
    /* Eviction keeps working past the table size. */
    for (int i = 0; i < 20; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        CHECK_EQ_I(ifl_tcache_put(c, key, t0, strlen(t0), 4, "z", 1), BASE_OK);
    }
    CHECK(ifl_tcache_get(c, "k19", t0, strlen(t0), 4, &rest, &rl));
    ifl_tcache_free(c);
}

/* Worker without a model: every job finishes with ERR_STATE, superseded
 * jobs with ERR_SUPERSEDED, and each exactly once. */
typedef struct rec {
    pthread_mutex_t mu;
    int n, n_state, n_superseded, n_cancelled;
    int status[8], calls[8]; /* by job id */
    char last_state[16];
} rec;

static void on_done(void *ud, ifl_job *j) {
    rec *r = ud;
    pthread_mutex_lock(&r->mu);
    r->n++;
    if (j->id < 8) {
        r->status[j->id] = j->status;
        r->calls[j->id]++;
    }
    if (j->status == BASE_ERR_STATE)
        r->n_state++;
    else if (j->status == BASE_ERR_SUPERSEDED)
        r->n_superseded++;
    else if (j->status == BASE_ERR_CANCELLED)
        r->n_cancelled++;
    pthread_mutex_unlock(&r->mu);
    ifl_job_free(j);
}

static void on_state(void *ud, const char *state, const char *msg, uint64_t done, uint64_t total) {
    rec *r = ud;
    (void)msg;
    (void)done;
    (void)total;
    pthread_mutex_lock(&r->mu);
    snprintf(r->last_state, sizeof r->last_state, "%s", state);
    pthread_mutex_unlock(&r->mu);
}

static void test_worker(void) {
    rec r = {.n = 0};
    pthread_mutex_init(&r.mu, NULL);
    ifl_worker_cbs cbs = {on_done, NULL, on_state, &r};
    ifl_worker *w = ifl_worker_new(&cbs, NULL);
    CHECK(w != NULL);
    ifl_worker_load(w, "/nonexistent/model");
    ifl_doc_req q;
    ifl_doc_req_default(&q);
    q.text = "x = 1\n";
    q.len = 6;
    q.cursor = 5;
    uint64_t ids[6];
    for (int i = 0; i < 6; i++)
        ids[i] = ifl_worker_submit(w, (uint64_t)(i % 2), NULL, &q);
    for (int i = 0; i < 6; i++)
        CHECK(ids[i] != 0);
    ifl_worker_cancel(w, ids[5]);
    for (int spin = 0; spin < 2000; spin++) {
        pthread_mutex_lock(&r.mu);
        int n = r.n;
        pthread_mutex_unlock(&r.mu);
        if (n == 6)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    pthread_mutex_lock(&r.mu);
    CHECK_EQ_I(r.n, 6);
    CHECK_EQ_I(r.n_state + r.n_superseded + r.n_cancelled, 6);
    /* Each job is answered once. Older jobs of a group are superseded unless
     * the worker already finished them; the newest of group 0 runs and finds
     * no model; the cancelled one is cancelled unless it already ran. */
    for (int i = 0; i < 6; i++)
        CHECK_EQ_I(r.calls[ids[i]], 1);
    for (int i = 0; i < 4; i++)
        CHECK(r.status[ids[i]] == BASE_ERR_SUPERSEDED || r.status[ids[i]] == BASE_ERR_STATE);
    CHECK_EQ_I(r.status[ids[4]], BASE_ERR_STATE);
    CHECK(r.status[ids[5]] == BASE_ERR_CANCELLED || r.status[ids[5]] == BASE_ERR_STATE);
    CHECK(strcmp(r.last_state, "error") == 0);
    pthread_mutex_unlock(&r.mu);
    ifl_worker_free(w);
    pthread_mutex_destroy(&r.mu);
}

/* ---- the shared span and post stages -------------------------------------------- */

static char *dup_str(const char *t) {
    size_t n = strlen(t);
    char *s = malloc(n + 1);
    memcpy(s, t, n + 1);
    return s;
}

/* Rejects candidates starting with 'x'; wraps the others in []. */
static int post_calls;
static base_status fake_post(void *ud, const ifl_span *span, const char *cand, size_t len,
                             const ifl_post_opts *o, char **out, size_t *out_len) {
    (void)ud;
    (void)span;
    CHECK(o->validate);
    post_calls++;
    if (len > 0 && cand[0] == 'x') {
        *out = NULL;
        return BASE_ERR_PARSE;
    }
    *out = malloc(len + 3);
    (*out)[0] = '[';
    memcpy(*out + 1, cand, len);
    (*out)[len + 1] = ']';
    (*out)[len + 2] = 0;
    *out_len = len + 2;
    return BASE_OK;
}

static void test_doc_stages(void) {
    const char *text = "a = 1\nb = \n";
    ifl_doc_req r;
    ifl_doc_req_default(&r);
    r.text = text;
    r.len = strlen(text);
    r.cursor = 10; /* end of "b = " */
    ifl_span sp;
    memset(&sp, 0, sizeof sp);
    sp.kind = IFL_SPAN_BLOCK;
    CHECK(ifl_doc_span(&r, BASE_OK, &sp));
    CHECK_EQ_I(sp.kind, IFL_SPAN_BLOCK); /* a located span is kept */
    CHECK(!ifl_doc_span(&r, BASE_ERR_UNSUPPORTED, &sp));
    CHECK_EQ_I(sp.kind, IFL_SPAN_LINE_END);
    CHECK(!sp.multiline);
    CHECK_EQ_U(sp.hole_start, 10);
    r.sel_start = 0;
    r.sel_end = 5;
    CHECK(!ifl_doc_span(&r, BASE_ERR_UNSUPPORTED, &sp));
    CHECK_EQ_I(sp.kind, IFL_SPAN_SELECTION);
    CHECK_EQ_U(sp.hole_end, 5);
    r.sel_start = r.sel_end = 10;

    ifl_doc_res res;
    memset(&res, 0, sizeof res);
    CHECK(!ifl_doc_span(&r, BASE_ERR_UNSUPPORTED, &res.span));
    res.raw.n_cand = 3;
    const char *cands[] = {"x bad", "2\nc = 3", "good"};
    for (int i = 0; i < 3; i++) {
        res.raw.cand[i].text = dup_str(cands[i]);
        res.raw.cand[i].len = strlen(cands[i]);
        res.raw.cand[i].mean_conf = 0.9 - 0.1 * i;
    }
    /* Without syntax: no post function call, cut to the first line. */
    post_calls = 0;
    CHECK_EQ_I(ifl_doc_post(&r, &res, fake_post, NULL), BASE_OK);
    CHECK_EQ_I(post_calls, 0);
    CHECK_EQ_I(res.n_items, 3);
    CHECK_STR(res.items[1].text, "2");
    CHECK(res.items[0].valid);
    /* With syntax: post-processed; the rejected one is never answered. */
    res.syntax = true;
    CHECK_EQ_I(ifl_doc_post(&r, &res, fake_post, NULL), BASE_OK);
    CHECK_EQ_I(post_calls, 3);
    CHECK_EQ_I(res.n_items, 2);
    CHECK_EQ_I(res.n_rejected, 1);
    CHECK_STR(res.items[0].text, "[2\nc = 3]");
    CHECK_STR(res.items[1].text, "[good]");
    CHECK(res.items[0].valid && res.items[1].valid);
    CHECK_EQ_U(res.items[0].start, 10);
    ifl_doc_res_free(&res);
}

int main(void) {
    test_budget();
    test_doc_stages();
    test_tcache();
    test_worker();
    return check_finish("test_infill");
}
