/* daemon provider_infill: the real completion provider. Requests become jobs
 * on the infill worker thread (one per loaded model); results, partial texts
 * and model state come back through one uv_async_t, whose callback drains the
 * whole event queue on the loop thread. Typing-through answers come from the
 * infill typing cache without touching the model. Spans are located and
 * candidates post-processed on the loop thread with each session's
 * per-document syntax trees (ifl_syntax on lsp_server_docs); the worker only
 * runs the model. */
/* Context K/V kept between requests ("contextCache"): on, as measured
 * against cached and exact mode (docs/PERFORMANCE.md, 2026-12-07: the same
 * answer in 499 of 500 held-out tasks and 180 of 181 session requests of
 * the trained default, every one on a peaked checkpoint). */
#define DMN_CONTEXT_CACHE_DEFAULT true
#include "config.h"
#include "dgemma.h"
#include "infill.h"
#include "provider.h"
#include "source.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Defaults of the "maxDocumentBytes" and "maxLineBytes" settings
 * (docs/PROTOCOL.md): past them a document is not completed. */
#define DMN__MAX_DOCUMENT ((size_t)4 << 20)
#define DMN__MAX_LINE ((size_t)16 << 10)
/* Default "parseBudgetMs": the most CPU time one parse may hold the loop. */
#define DMN__PARSE_BUDGET_MS 1000

/* One request waiting for the worker (loop thread only). */
typedef struct dmn__pending {
    lsp_server *srv;
    lsp_token token;
    uint64_t job_id;
    lsp_req_kind kind;
    bool invoked;
    bool dead; /* cancelled or its session closed: drop the result */
    size_t cursor;
    char *key; /* typing-cache key: session pointer + uri */
    char *uri;
    struct dmn__pending *next;
} dmn__pending;

/* A session's syntax trees, subscribed to its document store. */
typedef struct dmn__sess {
    lsp_server *srv;
    ifl_syntax *sx;
    struct dmn__prov *p;
    bool gone; /* session closed: its store may still call the listener */
    struct dmn__sess *next;
} dmn__sess;

typedef enum dmn__ev_kind { DMN_EV_DONE, DMN_EV_PARTIAL, DMN_EV_STATE } dmn__ev_kind;

/* An event from the worker thread. */
typedef struct dmn__event {
    dmn__ev_kind kind;
    ifl_job *job;    /* DONE */
    uint64_t job_id; /* PARTIAL */
    char *text;      /* PARTIAL text / STATE message */
    size_t len;
    int step, steps; /* PARTIAL */
    char state[16];  /* STATE */
    uint64_t done, total;
    struct dmn__event *next;
} dmn__event;

typedef struct dmn__prov {
    lsp_provider_i iface;
    uv_loop_t *loop;
    dmn_host *host;
    uv_async_t async;
    pthread_mutex_t mu;
    dmn__event *ev_head, *ev_tail; /* guarded by mu */
    ifl_worker *worker;
    ifl_remote_loop *rloop; /* a remote source's HTTP transfers, on this loop */
    ifl_tcache *tcache;
    dmn__pending *pending;
    dmn__sess *sessions;
    /* Trees of closed sessions: their store still calls them while it is
     * freed, right after session_close; freed on the next loop callback. */
    dmn__sess *closed;
    char *model_dir;
    char *device;
    char *source_sig;   /* the remote "source" setting in use (JSON), NULL: local */
    char *source_error; /* why that setting is unusable: every request's error */
    char state[16];
    char backend[16]; /* device actually in use, from the worker */
    double last_latency_ms;
    json_t *last_plan; /* the last answered request's plan (infilld/status) */
    int progress;      /* work-done progress handle while loading */
    int last_percent;
    char refused[1200]; /* the last refusal logged: session, uri, reason */
    /* Idle prefill (docs/PROTOCOL.md "idlePrefill"): the last edited
     * document and its cursor, prefilled when the timer fires. */
    uv_timer_t *pf_timer;
    lsp_server *pf_srv;
    char *pf_uri;
    size_t pf_cursor;
    bool pf_enabled;                     /* the last edit's session had it on */
    double pf_sched_ms, pf_sched_max_ms; /* the loop's work to queue one */
    int64_t pf_version;                  /* the document's version at pf_cursor */
} dmn__prov;

static void dmn__push(dmn__prov *p, dmn__event *e) {
    pthread_mutex_lock(&p->mu);
    if (p->ev_tail)
        p->ev_tail->next = e;
    else
        p->ev_head = e;
    p->ev_tail = e;
    pthread_mutex_unlock(&p->mu);
    uv_async_send(&p->async);
}

/* ---- worker callbacks (worker thread, or the loop thread for dropped jobs) ---- */

static void dmn__on_done(void *ud, ifl_job *job) {
    dmn__event *e = calloc(1, sizeof *e);
    if (!e) {
        ifl_job_free(job); /* the pending entry stays until its session closes */
        return;
    }
    e->kind = DMN_EV_DONE;
    e->job = job;
    dmn__push(ud, e);
}

static void dmn__on_partial(void *ud, uint64_t job_id, const char *text, size_t len, int step,
                            int steps) {
    dmn__event *e = calloc(1, sizeof *e);
    char *t = malloc(len + 1);
    if (!e || !t) {
        free(e);
        free(t);
        return;
    }
    memcpy(t, text, len);
    t[len] = 0;
    e->kind = DMN_EV_PARTIAL;
    e->job_id = job_id;
    e->text = t;
    e->len = len;
    e->step = step;
    e->steps = steps;
    dmn__push(ud, e);
}

static void dmn__on_state(void *ud, const char *state, const char *msg, uint64_t done,
                          uint64_t total) {
    dmn__event *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->kind = DMN_EV_STATE;
    snprintf(e->state, sizeof e->state, "%s", state);
    e->text = msg ? strdup(msg) : NULL;
    e->done = done;
    e->total = total;
    dmn__push(ud, e);
}

/* ---- loop thread ---------------------------------------------------------------- */

static void dmn__send_status(dmn__prov *p) {
    const char *dev = p->backend[0] ? p->backend : (p->device ? p->device : "auto");
    ifl_prefill_stats ps;
    ifl_worker_prefill_stats(p->worker, &ps);
    json_t *pf = json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f}", "enabled",
                           p->pf_enabled, "queued", (json_int_t)ps.queued, "runs",
                           (json_int_t)ps.runs, "completed", (json_int_t)ps.completed, "preempted",
                           (json_int_t)ps.preempted, "aborted", (json_int_t)ps.aborted, "joined",
                           (json_int_t)ps.joined, "hits", (json_int_t)ps.hits, "waits",
                           (json_int_t)ps.waits, "maxWaitMs", ps.max_wait_ms, "lastWaitMs",
                           ps.last_wait_ms, "chunkMs", ps.chunk_ms, "lastRunMs", ps.last_run_ms);
    /* Where the time before the first layer goes (the last prefill's longest
     * stretch per phase), the longest stretch seen, and the bound a waiting
     * job is held to: that stretch or one layer (+ head), whichever is
     * longer; boundMs states their sum. scheduleMs: the LSP thread's own
     * work to queue a prefill (span on the document's tree, request copy). */
    json_t *sl = json_object();
    for (int i = 0; pf && sl && i < IFL_PH_N; i++)
        json_object_set_new(sl, ifl_phase_name(i), json_real(ps.slice_ms[i]));
    if (pf && sl) {
        json_object_set_new(pf, "slicesMs", sl);
        json_object_set_new(pf, "maxSliceMs", json_real(ps.max_slice_ms));
        json_object_set_new(pf, "maxSlicePhase", json_string(ifl_phase_name(ps.max_slice_phase)));
        json_object_set_new(pf, "boundMs", json_real(ps.chunk_ms + ps.max_slice_ms));
        json_object_set_new(pf, "scheduleMs", json_real(p->pf_sched_ms));
        json_object_set_new(pf, "maxScheduleMs", json_real(p->pf_sched_max_ms));
        json_object_set_new(pf, "maxPreemptWaitMs", json_real(ps.max_preempt_wait_ms));
        json_object_set_new(pf, "resumed", json_integer(ps.resumed));
        json_object_set_new(pf, "resumedLayers", json_integer(ps.resumed_layers));
        json_object_set_new(pf, "resumeDropped", json_integer(ps.resume_dropped));
    } else {
        json_decref(sl);
    }
    lsp_status st = {p->model_dir, dev,
                     p->state,     p->last_latency_ms > 0 ? p->last_latency_ms : -1.0,
                     p->last_plan, pf};
    dmn_host_status(p->host, &st);
    json_decref(pf);
}

static dmn__pending *dmn__find_job(dmn__prov *p, uint64_t id, dmn__pending ***link) {
    for (dmn__pending **pp = &p->pending; *pp; pp = &(*pp)->next)
        if ((*pp)->job_id == id) {
            if (link)
                *link = pp;
            return *pp;
        }
    return NULL;
}

static void dmn__pending_free(dmn__pending *e) {
    if (!e)
        return;
    free(e->key);
    free(e->uri);
    free(e);
}

static void dmn__sess_free_list(dmn__sess **list) {
    while (*list) {
        dmn__sess *s = *list;
        *list = s->next;
        ifl_syntax_free(s->sx);
        free(s);
    }
}

static void dmn__pf_edited(void *ud, const lsp_doc *doc, const lsp_edit_event *ev);
static void dmn__pf_closed(void *ud, const lsp_doc *doc);

/* The session's trees, created when it opens (or on its first request); NULL
 * on OOM (the pipeline then uses the line rule). */
static ifl_syntax *dmn__syntax(dmn__prov *p, lsp_server *srv) {
    for (dmn__sess *s = p->sessions; s; s = s->next)
        if (s->srv == srv)
            return s->sx;
    dmn__sess *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->sx = ifl_syntax_new(lsp_server_docs(srv));
    if (!s->sx) {
        free(s);
        return NULL;
    }
    s->srv = srv;
    s->p = p;
    /* Edits schedule the idle prefill (after the trees' listener: the
     * prefill locates its span on an updated tree). */
    lsp_doc_listener l = {NULL, dmn__pf_edited, dmn__pf_closed, s};
    if (lsp_doc_store_listen(lsp_server_docs(srv), &l) != BASE_OK)
        BASE_LOGW("dmn", "no idle prefill for this session: too many document listeners");
    s->next = p->sessions;
    p->sessions = s;
    return s->sx;
}

typedef struct dmn__post_ctx {
    ifl_syntax *sx;
    const lsp_doc *doc; /* NULL: the document changed or closed since the request */
    const ifl_doc_req *req;
} dmn__post_ctx;

static base_status dmn__post(void *ud, const ifl_span *span, const char *cand, size_t len,
                             const ifl_post_opts *o, char **out, size_t *out_len) {
    dmn__post_ctx *c = ud;
    if (c->doc)
        return ifl_syntax_postprocess(c->sx, c->doc, span, cand, len, o, out, out_len);
    return ifl_syntax_postprocess_text(c->req->language, c->req->text, c->req->len, span, cand, len,
                                       o, out, out_len);
}

/* Post-processes a finished job on the loop thread: with the document's tree
 * when the document still has the text the job ran on, else by parsing that
 * text. */
static base_status dmn__post_job(dmn__prov *p, const dmn__pending *e, ifl_job *job) {
    dmn__post_ctx c = {NULL, NULL, &job->req};
    ifl_syntax *sx = NULL;
    for (dmn__sess *s = p->sessions; s; s = s->next)
        if (s->srv == e->srv)
            sx = s->sx;
    const lsp_doc *doc = sx && e->uri ? lsp_doc_get(lsp_server_docs(e->srv), e->uri) : NULL;
    size_t len = 0;
    const char *text = doc ? lsp_doc_text(doc, &len) : NULL;
    if (text && len == job->req.len && memcmp(text, job->req.text, len) == 0) {
        c.sx = sx;
        c.doc = doc;
    }
    return ifl_doc_post(&job->req, &job->res, dmn__post, &c);
}

static void dmn__handle_done(dmn__prov *p, ifl_job *job) {
    dmn__pending **link = NULL;
    dmn__pending *e = dmn__find_job(p, job->id, &link);
    if (!e) {
        ifl_job_free(job);
        return;
    }
    *link = e->next;
    if (!e->dead && job->status == BASE_OK)
        job->status = dmn__post_job(p, e, job);
    if (!e->dead && job->status == BASE_OK && job->res.plan.planned) {
        json_decref(p->last_plan);
        p->last_plan = dmn_plan_json(&job->res, job->latency_ms);
    }
    if (!e->dead) {
        if (job->status == BASE_OK && job->res.n_items > 0) {
            int n = e->invoked ? job->res.n_items : 1;
            lsp_completion_item items[ENG_DIFF_MAX_CANDIDATES];
            int k = 0;
            for (int i = 0; i < n; i++) {
                const ifl_doc_item *it = &job->res.items[i];
                if (it->len == 0 && e->kind != LSP_REQ_REGENERATE && e->kind != LSP_REQ_CODE_ACTION)
                    continue;
                items[k].text = it->text;
                items[k].len = it->len;
                items[k].start = it->start;
                items[k].end = it->end;
                items[k].confidence = it->confidence;
                k++;
            }
            lsp_server_complete(e->srv, e->token, items, (size_t)k, BASE_OK, NULL);
            if (k > 0 && e->kind == LSP_REQ_INLINE && items[0].start == items[0].end)
                ifl_tcache_put(p->tcache, e->key, job->req.text, job->req.len, e->cursor,
                               items[0].text, items[0].len);
            /* Sent with the worker's "ready" that follows. */
            p->last_latency_ms = job->latency_ms;
        } else if (job->status == BASE_OK) {
            lsp_server_complete(e->srv, e->token, NULL, 0, BASE_OK, NULL);
        } else if (job->status == BASE_ERR_STATE) {
            /* No model loaded: an empty answer, not an error. */
            lsp_server_complete(e->srv, e->token, NULL, 0, BASE_OK, NULL);
        } else {
            /* A remote source says why (HTTP status, ...; never the key). */
            lsp_server_complete(e->srv, e->token, NULL, 0, job->status,
                                job->res.error[0] ? job->res.error : NULL);
        }
    }
    dmn__pending_free(e);
    ifl_job_free(job);
}

static void dmn__handle_partial(dmn__prov *p, dmn__event *ev) {
    dmn__pending *e = dmn__find_job(p, ev->job_id, NULL);
    if (!e || e->dead)
        return;
    lsp_server_partial(e->srv, e->token, ev->text, ev->len, e->cursor, e->cursor, ev->step,
                       ev->steps);
}

static void dmn__pf_fire(uv_timer_t *t);
static uint64_t dmn__pf_delay(const json_t *set);

static void dmn__handle_state(dmn__prov *p, dmn__event *ev) {
    if (strcmp(ev->state, "loading") == 0) {
        if (ev->total == 0)
            p->backend[0] = 0; /* a new load starts */
        if (!p->progress) {
            p->progress = dmn_host_progress_begin(p->host, "Loading model", ev->text);
            p->last_percent = -1;
        }
        if (ev->total > 0 && p->progress) {
            int pct = (int)(100.0 * (double)ev->done / (double)ev->total);
            if (pct != p->last_percent) {
                dmn_host_progress_report(p->host, p->progress, pct, NULL);
                p->last_percent = pct;
            }
        }
        if (ev->total > 0)
            return; /* a progress tick, not a state change */
    } else {
        bool was_loading = p->progress != 0 || strcmp(p->state, "loading") == 0;
        if (p->progress)
            dmn_host_progress_end(p->host, p->progress,
                                  strcmp(ev->state, "ready") == 0 ? "Model ready" : "Failed");
        p->progress = 0;
        if (strcmp(ev->state, "error") == 0) {
            /* A load that failed, or a loaded model lost (its files truncated). */
            char msg[768];
            snprintf(msg, sizeof msg, "infilld: %s %s: %s",
                     was_loading ? "cannot load model" : "model lost:",
                     p->model_dir ? p->model_dir : "", ev->text ? ev->text : "unknown error");
            dmn_host_show_message(p->host, LSP_MSG_ERROR, msg);
            BASE_LOGE("dmn", "%s", msg);
        }
    }
    bool loaded = strcmp(ev->state, "ready") == 0 && strcmp(p->state, "loading") == 0;
    if (strcmp(ev->state, "ready") == 0 && ev->text)
        snprintf(p->backend, sizeof p->backend, "%s", ev->text);
    snprintf(p->state, sizeof p->state, "%s", ev->state);
    dmn__send_status(p);
    /* A prefill that came due while the model loaded (a file opened at
     * startup, its cursor reported) runs now. */
    if (loaded && p->pf_srv && p->pf_uri && p->pf_timer && p->pf_enabled)
        uv_timer_start(p->pf_timer, dmn__pf_fire, dmn__pf_delay(lsp_server_settings(p->pf_srv)), 0);
}

static void dmn__drain(uv_async_t *a) {
    dmn__prov *p = a->data;
    dmn__sess_free_list(&p->closed);
    pthread_mutex_lock(&p->mu);
    dmn__event *ev = p->ev_head;
    p->ev_head = p->ev_tail = NULL;
    pthread_mutex_unlock(&p->mu);
    while (ev) {
        dmn__event *next = ev->next;
        switch (ev->kind) {
        case DMN_EV_DONE:
            dmn__handle_done(p, ev->job);
            break;
        case DMN_EV_PARTIAL:
            dmn__handle_partial(p, ev);
            break;
        case DMN_EV_STATE:
            dmn__handle_state(p, ev);
            break;
        }
        free(ev->text);
        free(ev);
        ev = next;
    }
}

/* FNV-1a over the session pointer and the uri: jobs of one document in one
 * session supersede each other. */
static uint64_t dmn__group(const lsp_server *srv, const char *uri) {
    uint64_t h = 1469598103934665603ull;
    uintptr_t sp = (uintptr_t)srv;
    for (size_t i = 0; i < sizeof sp; i++) {
        h ^= (sp >> (8 * i)) & 0xFF;
        h *= 1099511628211ull;
    }
    for (const char *c = uri; c && *c; c++) {
        h ^= (unsigned char)*c;
        h *= 1099511628211ull;
    }
    return h;
}

/* A size setting: a positive integer, else the default. */
static size_t dmn__limit(const json_t *settings, const char *key, size_t def) {
    json_t *v = json_object_get(settings, key);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (size_t)json_integer_value(v) : def;
}

/* Documents that would hold the loop thread (tree-sitter builds the whole
 * tree on the first request) or the worker too long are stored and edited
 * as usual but not completed: the answer is empty and the reason is logged,
 * once while the same document keeps being refused for the same reason (not
 * at every keystroke). */
static bool dmn__refuse(dmn__prov *p, lsp_server *srv, const lsp_completion_req *req,
                        const char *text, size_t len) {
    const json_t *set = lsp_server_settings(srv);
    size_t max_doc = dmn__limit(set, "maxDocumentBytes", DMN__MAX_DOCUMENT);
    size_t max_line = dmn__limit(set, "maxLineBytes", DMN__MAX_LINE);
    const char *uri = req->uri ? req->uri : "";
    char why[160] = "";
    if (len > max_doc) {
        snprintf(why, sizeof why, "%zu bytes exceed maxDocumentBytes (%zu)", len, max_doc);
    } else {
        size_t a = req->cursor < len ? req->cursor : len, b = a;
        while (a > 0 && text[a - 1] != '\n')
            a--;
        const char *nl = memchr(text + b, '\n', len - b);
        b = nl ? (size_t)(nl - text) : len;
        if (b - a > max_line)
            snprintf(why, sizeof why, "the cursor line has %zu bytes, over maxLineBytes (%zu)",
                     b - a, max_line);
    }
    if (!why[0])
        return false;
    char key[sizeof p->refused];
    snprintf(key, sizeof key, "%p %s %.20s", (void *)srv, uri, why);
    if (strcmp(key, p->refused) != 0) {
        snprintf(p->refused, sizeof p->refused, "%s", key);
        BASE_LOGW("dmn", "completion refused for %s: %s", uri, why);
    }
    return true;
}

/* llama-infill's "input_extra": the session's other open documents, most
 * recently touched first, each one's head cut at a line end, until
 * source.extraContextChars bytes of text (default 4096, 0 = off) are used.
 * The exclusion rules that keep the current file from a model apply to each
 * of them. NULL when there is nothing to send (or another source is in use). */
#define DMN__EXTRA_DEFAULT 4096
static char *dmn__input_extra(lsp_server *srv, const char *cur_uri) {
    const json_t *set = lsp_server_settings(srv);
    const json_t *src = json_object_get(set, "source");
    if (!json_is_object(src) || !json_is_string(json_object_get(src, "kind")) ||
        strcmp(json_string_value(json_object_get(src, "kind")), "remote") != 0)
        return NULL;
    const char *api = json_string_value(json_object_get(src, "api"));
    if (!api || strcmp(api, "llama-infill") != 0)
        return NULL;
    json_t *lim = json_object_get(src, "extraContextChars");
    size_t left = json_is_integer(lim)
                      ? (json_integer_value(lim) > 0 ? (size_t)json_integer_value(lim) : 0)
                      : DMN__EXTRA_DEFAULT;
    lsp_doc_store *docs = lsp_server_docs(srv);
    size_t n = lsp_doc_count(docs);
    if (left == 0 || n < 2)
        return NULL;
    const lsp_doc **order = malloc(n * sizeof *order);
    if (!order)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const lsp_doc *d = lsp_doc_at(docs, i);
        const char *u = lsp_doc_uri(d);
        if (!d || !u || (cur_uri && strcmp(u, cur_uri) == 0) ||
            !dmn_config_allows(set, u, lsp_doc_language_id(d)))
            continue;
        /* Insertion by recency: a session holds a handful of documents. */
        size_t j = k++;
        while (j > 0 && lsp_doc_touched(order[j - 1]) < lsp_doc_touched(d)) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = d;
    }
    json_t *arr = k ? json_array() : NULL;
    for (size_t i = 0; arr && i < k && left > 0; i++) {
        size_t len = 0;
        const char *t = lsp_doc_text(order[i], &len);
        size_t take = len;
        if (take > left) {
            /* Whole lines only: the last line end within the bound. */
            take = left;
            while (take > 0 && t[take - 1] != '\n')
                take--;
        }
        if (take == 0)
            continue;
        const char *u = lsp_doc_uri(order[i]);
        const char *name = strncmp(u, "file://", 7) == 0 ? u + 7 : u;
        json_t *txt = json_stringn(t, take);
        if (!txt) /* not UTF-8: not sent */
            continue;
        json_array_append_new(arr, json_pack("{s:s,s:o}", "filename", name, "text", txt));
        left -= take;
    }
    free(order);
    char *out = arr && json_array_size(arr) ? json_dumps(arr, JSON_COMPACT) : NULL;
    json_decref(arr);
    return out;
}

/* The pipeline request for req (key: the document's, for the context K/V);
 * shared by requests and the idle prefill, which must build the same one. */
static void dmn__fill_req(dmn__prov *p, lsp_server *srv, const lsp_completion_req *req,
                          const char *key, const char *text, size_t len, ifl_doc_req *r) {
    bool sel = req->kind == LSP_REQ_REGENERATE || req->kind == LSP_REQ_CODE_ACTION;
    ifl_doc_req_default(r);
    r->text = text;
    r->len = len;
    r->language = ifl_syntax_language(req->language_id, req->uri);
    r->cursor = req->cursor;
    r->sel_start = sel ? req->sel_start : req->cursor;
    r->sel_end = sel ? req->sel_end : req->cursor;
    const lsp_req_options *o = req->opts;
    /* Automatic: the "automaticCandidates" setting, else the model's default
     * (0: generation_config.json "candidates", else 1); invoked: 3. */
    r->candidates = 0;
    if (o) {
        json_t *ac = json_object_get(o->all, "automaticCandidates");
        if (json_is_integer(ac) && json_integer_value(ac) >= 1 &&
            json_integer_value(ac) <= ENG_DIFF_MAX_CANDIDATES)
            r->candidates = (int)json_integer_value(ac);
    }
    if (req->invoked && o)
        r->candidates = o->candidates > 0 ? o->candidates : 3;
    if (r->candidates > ENG_DIFF_MAX_CANDIDATES)
        r->candidates = ENG_DIFF_MAX_CANDIDATES;
    if (o) {
        r->has_seed = o->has_seed;
        r->seed = o->seed;
        r->validate = o->validate;
        r->steps = o->steps;
        if (o->alg && !eng_alg_parse(o->alg, &r->alg))
            r->alg = ENG_ALG_DEFAULT;
        /* Per-request budgets: "maxSteps" (denoising steps) and the latency
         * budget (wall time from when the daemon received the request:
         * "latencyBudgetMs" per trigger, "timeBudgetMs" overriding both). */
        /* "maxHole": cap on the span's token budget and its growth (the
         * benchmark's fixed hole, to match an AR server's n_predict). */
        json_t *mh = json_object_get(o->all, "maxHole");
        if (json_is_integer(mh) && json_integer_value(mh) > 0 && json_integer_value(mh) <= 4096)
            r->max_hole = (int)json_integer_value(mh);
        /* "eosPenalty": the annealed EOS/pad penalty (model default otherwise). */
        json_t *ep = json_object_get(o->all, "eosPenalty");
        if (json_is_number(ep) && json_number_value(ep) >= 0 &&
            json_number_value(ep) <= ENG_EOS_PENALTY_MAX)
            r->eos_penalty = (float)json_number_value(ep);
        json_t *ms = json_object_get(o->all, "maxSteps");
        json_t *tb = json_object_get(o->all, "timeBudgetMs");
        if (json_is_integer(ms) && json_integer_value(ms) > 0)
            r->max_steps = (int)json_integer_value(ms);
        r->time_budget_ms = dmn_latency_budget_ms(o->all, req->invoked || sel);
        if (json_is_number(tb) && json_number_value(tb) > 0)
            r->time_budget_ms = (int)json_number_value(tb);
    } else {
        r->time_budget_ms = dmn_latency_budget_ms(NULL, req->invoked || sel);
    }
    r->received_ns = req->received_ns;
    /* "mode": "exact" recomputes the whole canvas at every step (the
     * reference every approximation is measured against). */
    const char *mode = o ? json_string_value(json_object_get(o->all, "mode")) : NULL;
    if (mode && strcmp(mode, "exact") == 0)
        r->mode = ENG_CACHE_EXACT;
    /* "dgemmaInfill": "prompt" | "pin" (DiffusionGemma's infill mode; others ignore it) */
    const char *dgi = o ? json_string_value(json_object_get(o->all, "dgemmaInfill")) : NULL;
    if (dgi && !ifl_dg_infill_parse(dgi, &r->dg_infill))
        r->dg_infill = IFL_DG_INFILL_PROMPT;
    /* "contextCache": keep the document's context K/V for its next request
     * (infill/kvstore.h; budgets "contextCacheMiB" / "contextCacheDocMiB"). */
    json_t *cc = o ? json_object_get(o->all, "contextCache") : NULL;
    if (json_is_boolean(cc) ? json_is_true(cc) : DMN_CONTEXT_CACHE_DEFAULT)
        r->doc_key = key;
    json_t *ccm = o ? json_object_get(o->all, "contextCacheMiB") : NULL;
    json_t *ccd = o ? json_object_get(o->all, "contextCacheDocMiB") : NULL;
    if (json_is_integer(ccm) && json_integer_value(ccm) > 0 && json_integer_value(ccm) < 1 << 20)
        r->kv_total_mib = (int)json_integer_value(ccm);
    if (json_is_integer(ccd) && json_integer_value(ccd) > 0 && json_integer_value(ccd) < 1 << 20)
        r->kv_doc_mib = (int)json_integer_value(ccd);
    json_t *ccw = o ? json_object_get(o->all, "contextCacheMargin") : NULL;
    if (json_is_integer(ccw) && json_integer_value(ccw) > 0 && json_integer_value(ccw) <= 4096)
        r->kv_margin = (int)json_integer_value(ccw);
    const char *growth = o ? json_string_value(json_object_get(o->all, "holeGrowth")) : NULL;
    r->grow_extend = growth && strcmp(growth, "extend") == 0;
    r->want_partial = req->want_partial && !sel;
    ifl_syntax *sx = dmn__syntax(p, srv);
    r->has_span = true;
    r->span_status =
        sx ? ifl_syntax_locate(sx, req->doc, r->cursor, r->sel_start, r->sel_end, &r->span)
           : BASE_ERR_NOMEM;
    r->defer_post = true;
}

static void dmn__complete(void *ud, lsp_server *srv, const lsp_completion_req *req) {
    dmn__prov *p = ud;
    if (p->source_error) {
        /* Shown at configuration time too, but a session that configured it
         * in initialize had no window yet: the answer says it as well. */
        lsp_server_complete(srv, req->token, NULL, 0, BASE_ERR_INVALID, p->source_error);
        return;
    }
    if (!p->worker || strcmp(p->state, "none") == 0) {
        lsp_server_complete(srv, req->token, NULL, 0, BASE_OK, NULL);
        return;
    }
    size_t len = 0;
    const char *text = lsp_doc_text(req->doc, &len);
    if (dmn__refuse(p, srv, req, text, len)) {
        lsp_server_complete(srv, req->token, NULL, 0, BASE_OK, NULL);
        return;
    }
    char key[64 + 1024];
    snprintf(key, sizeof key, "%p %s", (void *)srv, req->uri ? req->uri : "");
    bool sel = req->kind == LSP_REQ_REGENERATE || req->kind == LSP_REQ_CODE_ACTION;
    if (req->kind == LSP_REQ_INLINE && !req->invoked && !req->has_selected) {
        const char *rest;
        size_t rest_len;
        if (ifl_tcache_get(p->tcache, key, text, len, req->cursor, &rest, &rest_len)) {
            lsp_completion_item it = {rest, rest_len, req->cursor, req->cursor, -1.0};
            lsp_server_complete(srv, req->token, &it, 1, BASE_OK, NULL);
            return;
        }
    }
    ifl_tcache_forget(p->tcache, key);
    ifl_doc_req r;
    dmn__fill_req(p, srv, req, key, text, len, &r);
    dmn__pending *e = calloc(1, sizeof *e);
    if (!e || !(e->key = strdup(key)) || !(e->uri = strdup(req->uri ? req->uri : ""))) {
        dmn__pending_free(e);
        lsp_server_complete(srv, req->token, NULL, 0, BASE_ERR_NOMEM, NULL);
        return;
    }
    e->srv = srv;
    e->token = req->token;
    e->kind = req->kind;
    e->invoked = req->invoked || sel;
    e->cursor = req->cursor;
    e->next = p->pending;
    p->pending = e;
    char *extra = dmn__input_extra(srv, req->uri);
    r.input_extra = extra;
    e->job_id = ifl_worker_submit(p->worker, dmn__group(srv, req->uri), e, &r);
    free(extra);
    if (e->job_id == 0) {
        p->pending = e->next;
        dmn__pending_free(e);
        lsp_server_complete(srv, req->token, NULL, 0, BASE_ERR_NOMEM, NULL);
    }
}

static void dmn__cancel(void *ud, lsp_server *srv, lsp_token token) {
    dmn__prov *p = ud;
    for (dmn__pending *e = p->pending; e; e = e->next)
        if (e->srv == srv && e->token == token && !e->dead) {
            e->dead = true;
            ifl_worker_cancel(p->worker, e->job_id);
            return;
        }
}

/* ---- idle prefill (docs/PROTOCOL.md "idlePrefill") -------------------------------
 * After an edit, once the document has been quiet for idlePrefillDelayMs, the
 * worker computes the first full forward of the automatic request that would
 * come at the edit's end (the cursor, as far as the server can tell: LSP
 * sends no cursor moves) — built exactly as dmn__complete builds it, so that
 * the request finds it. Every edit aborts a running prefill of its document.
 * A newly opened document is not prefilled: where its cursor is, the server
 * cannot know, and a guess would burn the CPU for nothing. */
#define DMN__PF_DELAY_MS 250

static bool dmn__pf_on(const json_t *set) {
    const json_t *v = json_object_get(set, "idlePrefill");
    return json_is_boolean(v) ? json_is_true(v) : true;
}

static uint64_t dmn__pf_delay(const json_t *set) {
    const json_t *v = json_object_get(set, "idlePrefillDelayMs");
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 60000)
        return (uint64_t)json_integer_value(v);
    return DMN__PF_DELAY_MS;
}

static void dmn__pf_forget(dmn__prov *p) {
    free(p->pf_uri);
    p->pf_uri = NULL;
    p->pf_srv = NULL;
    if (p->pf_timer)
        uv_timer_stop(p->pf_timer);
}

static void dmn__pf_queue(dmn__prov *p);

static void dmn__pf_fire(uv_timer_t *t) {
    dmn__prov *p = t->data;
    uint64_t t0 = base_now_ns();
    dmn__pf_queue(p);
    p->pf_sched_ms = base_ms_since(t0);
    if (p->pf_sched_ms > p->pf_sched_max_ms)
        p->pf_sched_max_ms = p->pf_sched_ms;
}

/* Builds the automatic request at pf_cursor exactly as dmn__complete would
 * and queues its prefill. */
static void dmn__pf_queue(dmn__prov *p) {
    lsp_server *srv = p->pf_srv;
    if (!srv || !p->pf_uri || !p->worker || p->source_error ||
        (strcmp(p->state, "ready") != 0 && strcmp(p->state, "busy") != 0))
        return;
    bool alive = false;
    for (dmn__sess *s = p->sessions; s; s = s->next)
        alive |= s->srv == srv && !s->gone;
    const json_t *set = alive ? lsp_server_settings(srv) : NULL;
    lsp_doc *doc = alive ? lsp_doc_get(lsp_server_docs(srv), p->pf_uri) : NULL;
    if (!doc || !dmn__pf_on(set) ||
        !dmn_config_allows(set, lsp_doc_uri(doc), lsp_doc_language_id(doc)))
        return;
    size_t len = 0;
    const char *text = lsp_doc_text(doc, &len);
    lsp_req_options o;
    lsp_server_req_options(srv, &o);
    lsp_completion_req req;
    memset(&req, 0, sizeof req);
    req.kind = LSP_REQ_INLINE;
    req.doc = doc;
    req.uri = lsp_doc_uri(doc);
    req.language_id = lsp_doc_language_id(doc);
    req.version = lsp_doc_version(doc);
    req.cursor = p->pf_cursor < len ? p->pf_cursor : len;
    req.sel_start = req.sel_end = req.cursor;
    req.opts = &o;
    if (dmn__refuse(p, srv, &req, text, len))
        return;
    char key[64 + 1024];
    snprintf(key, sizeof key, "%p %s", (void *)srv, req.uri);
    const char *rest;
    size_t rest_len;
    if (ifl_tcache_get(p->tcache, key, text, len, req.cursor, &rest, &rest_len))
        return; /* the typing-through cache answers the next request */
    ifl_doc_req r;
    dmn__fill_req(p, srv, &req, key, text, len, &r);
    if (!ifl_worker_prefill(p->worker, dmn__group(srv, req.uri), &r))
        BASE_LOGW("dmn", "idle prefill not queued: out of memory");
}

/* Schedules the idle prefill of doc at cursor after the quiet delay. */
static void dmn__pf_schedule(dmn__sess *s, const lsp_doc *doc, size_t cursor) {
    dmn__prov *p = s->p;
    const char *uri = lsp_doc_uri(doc);
    ifl_worker_prefill_cancel(p->worker, dmn__group(s->srv, uri));
    const json_t *set = lsp_server_settings(s->srv);
    p->pf_enabled = dmn__pf_on(set);
    if (!p->pf_enabled) {
        if (p->pf_srv == s->srv)
            dmn__pf_forget(p);
        return;
    }
    char *u = strdup(uri);
    if (!u)
        return;
    free(p->pf_uri);
    p->pf_uri = u;
    p->pf_srv = s->srv;
    p->pf_cursor = cursor;
    p->pf_version = lsp_doc_version(doc);
    uv_timer_start(p->pf_timer, dmn__pf_fire, dmn__pf_delay(set), 0);
}

static void dmn__pf_edited(void *ud, const lsp_doc *doc, const lsp_edit_event *ev) {
    dmn__sess *s = ud;
    if (s->gone || !s->p->worker || !s->p->pf_timer)
        return;
    dmn__pf_schedule(s, doc, ev->new_end_byte);
}

/* infilld/didChangeCursor: the editor says where its cursor is (the only way
 * to know it for a newly opened document, or after a move without an edit).
 * The same place of the same text as the last scheduled prefill (e.g. the
 * cursor notification that follows a keystroke) changes nothing. */
static void dmn__pf_cursor(void *ud, lsp_server *srv, const lsp_doc *doc, size_t offset) {
    dmn__prov *p = ud;
    if (!p->worker || !p->pf_timer)
        return;
    (void)dmn__syntax(p, srv); /* the session's trees (and its edit listener) */
    dmn__sess *s = NULL;
    for (dmn__sess *x = p->sessions; x; x = x->next)
        if (x->srv == srv && !x->gone)
            s = x;
    if (!s)
        return;
    const char *uri = lsp_doc_uri(doc);
    if (p->pf_srv == srv && p->pf_uri && uri && strcmp(p->pf_uri, uri) == 0 &&
        p->pf_cursor == offset && p->pf_version == lsp_doc_version(doc))
        return;
    dmn__pf_schedule(s, doc, offset);
}

static void dmn__pf_closed(void *ud, const lsp_doc *doc) {
    dmn__sess *s = ud;
    dmn__prov *p = s->p;
    if (!p->worker)
        return;
    const char *uri = lsp_doc_uri(doc);
    ifl_worker_prefill_cancel(p->worker, dmn__group(s->srv, uri));
    if (p->pf_srv == s->srv && p->pf_uri && uri && strcmp(p->pf_uri, uri) == 0)
        dmn__pf_forget(p);
}

static void dmn__session_open(void *ud, lsp_server *srv) { (void)dmn__syntax(ud, srv); }

static void dmn__session_close(void *ud, lsp_server *srv) {
    dmn__prov *p = ud;
    dmn__sess_free_list(&p->closed);
    for (dmn__sess **pp = &p->sessions; *pp; pp = &(*pp)->next)
        if ((*pp)->srv == srv) {
            dmn__sess *s = *pp;
            *pp = s->next;
            s->gone = true;
            if (p->pf_srv == srv) {
                dmn__pf_forget(p);
                ifl_worker_prefill_cancel(p->worker, 0);
            }
            s->next = p->closed;
            p->closed = s;
            break;
        }
    for (dmn__pending *e = p->pending; e; e = e->next)
        if (e->srv == srv && !e->dead) {
            e->dead = true;
            ifl_worker_cancel(p->worker, e->job_id);
        }
}

static void dmn__set_model(dmn__prov *p, const char *dir, const char *device) {
    if (p->source_sig) {
        /* Back from a remote source to a local model: always reload. */
        free(p->source_sig);
        p->source_sig = NULL;
        free(p->source_error);
        p->source_error = NULL;
        free(p->model_dir);
        p->model_dir = NULL;
        free(p->device);
        p->device = NULL;
        if (!dir) {
            ifl_worker_load(p->worker, NULL);
            snprintf(p->state, sizeof p->state, "none");
            dmn__send_status(p);
            return;
        }
    }
    bool same_dir = (!dir && !p->model_dir) || (dir && p->model_dir && !strcmp(dir, p->model_dir));
    bool same_dev = (!device && !p->device) || (device && p->device && !strcmp(device, p->device));
    if (same_dir && same_dev)
        return;
    free(p->model_dir);
    free(p->device);
    p->model_dir = dir ? strdup(dir) : NULL;
    p->device = device ? strdup(device) : NULL;
    ifl_worker_load(p->worker, p->model_dir);
    /* Requests from now on wait for the load on the worker's queue. */
    snprintf(p->state, sizeof p->state, "%s", p->model_dir ? "loading" : "none");
    dmn__send_status(p);
}

const char *dmn_provider_model_dir(const json_t *settings, char *buf, size_t cap) {
    const char *dir = dmn_config_model(settings);
    if (dir)
        return dir;
    return buf && ifl_default_model_dir(buf, cap) ? buf : NULL;
}

static const char *dmn__family_name(eng_family f) {
    switch (f) {
    case ENG_FAMILY_DREAM:
        return "dream";
    case ENG_FAMILY_OPEN_DCODER:
        return "open-dcoder";
    case ENG_FAMILY_LLADA:
        return "llada";
    case ENG_FAMILY_DIFFUSION_GEMMA:
        return "diffusion-gemma";
    }
    return "unknown";
}

/* DiffusionGemma's memory figures: experts (all, per token, one), the other
 * weights, K/V per token of each layer kind and a context of the daemon's
 * shape (a prompt of up to 2048 tokens and one canvas). */
static void dmn__doctor_dgemma(FILE *f, const eng_model *m, const eng_dg_memory *d) {
    const eng_dg_info *di = eng_dg_get_info(m);
    const double MiB = 1024.0 * 1024.0;
    if (di->moe)
        fprintf(f,
                "experts: %d per layer, %d used per token, %d wide, types %s; one expert %.1f "
                "KiB, all experts %.1f MiB (%.1f %% of the weights), read per token %.2f MiB "
                "(top-%d of every layer); other weights %.1f MiB\n",
                di->n_expert, di->top_k, di->d_expert, d->expert_types,
                (double)d->expert_bytes_one / 1024.0, (double)d->expert_bytes_all / MiB,
                100.0 * (double)d->expert_bytes_all /
                    (double)BASE_MAX(1, d->expert_bytes_all + d->dense_bytes),
                (double)d->expert_bytes_token / MiB, di->top_k, (double)d->dense_bytes / MiB);
    else
        fprintf(f, "experts: none (dense MLP only); weights %.1f MiB\n",
                (double)d->dense_bytes / MiB);
    fprintf(f,
            "context K/V: %llu bytes per token (F32): %d sliding layers x %llu (%d K/V heads of "
            "%d), %d global layers x %llu (%d K/V heads of %d%s); every position is kept on "
            "the sliding layers too\n",
            (unsigned long long)d->kv_token, d->n_sliding, (unsigned long long)d->kv_token_sliding,
            di->n_kv_sliding, di->hd_sliding, d->n_global, (unsigned long long)d->kv_token_global,
            di->n_kv_global, di->hd_global, di->k_eq_v ? ", V = K stored twice" : "");
    const int cache = 2048 + di->canvas_len;
    uint64_t kv = 0, scratch = 0;
    eng_dg_ctx_bytes(m, cache, di->canvas_len, &kv, &scratch);
    fprintf(f,
            "context: %.1f MiB for %d cached positions and a %d-token canvas (K/V %.1f MiB, "
            "scratch %.1f MiB)\n",
            (double)(kv + scratch) / MiB, cache, di->canvas_len, (double)kv / MiB,
            (double)scratch / MiB);
}

void dmn_provider_doctor(const json_t *settings, FILE *f) {
    ifl_remote_cfg rc;
    char rerr[512];
    base_status rs =
        ifl_remote_cfg_parse(json_object_get(settings, "source"), &rc, rerr, sizeof rerr);
    if (rs != BASE_ERR_NOT_FOUND) {
        if (rs != BASE_OK) {
            fprintf(f, "source: remote (invalid: %s)\nbackend: none\n", rerr);
            return;
        }
        fprintf(f, "source: remote, api %s, url %s, model %s, key from %s\n",
                ifl_remote_api_name(rc.api), rc.url, rc.model ? rc.model : "(none)", rc.key_from);
        ifl_remote *r = ifl_remote_new(&rc);
        if (!r) {
            fprintf(f, "remote: out of memory\n");
            return;
        }
        char msg[512];
        base_status st = ifl_remote_probe(r, msg, sizeof msg);
        fprintf(f, "remote: %s%s\nbackend: %s\n", st == BASE_OK ? "ok: " : "FAILED: ", msg,
                st == BASE_OK ? "remote" : "none");
        ifl_remote_free(r);
        return;
    }
    char def[4096];
    const char *dir = dmn_provider_model_dir(settings, def, sizeof def);
    if (!dir) {
        fprintf(f, "model: (none: no --model, no config, no embedded tiny model next to the "
                   "binary; build the tiny_model target)\nbackend: none\n");
        return;
    }
    eng_load_opts o;
    eng_load_opts_default(&o);
    const char *dev = json_string_value(json_object_get(settings, "device"));
    if (dev && strcmp(dev, "cpu") == 0)
        o.device = ENG_DEVICE_CPU;
    else if (dev && strcmp(dev, "cuda") == 0)
        o.device = ENG_DEVICE_CUDA;
    eng_error err = {0};
    eng_model *m = eng_model_load(dir, &o, &err);
    if (!m) {
        fprintf(f, "model: %s%s (cannot load: %s)\nbackend: none\n", dir,
                dir == def ? " (embedded default)" : "", err.msg);
        return;
    }
    const eng_model_info *in = eng_model_get_info(m);
    fprintf(f,
            "model: %s%s\n"
            "model family: %s (%s), %d layers, hidden %d, vocab %d, weights %.1f MiB\n"
            "model weights: %s, types %s, resident %.1f MiB (mapped files%s)\n"
            "backend: %s\n",
            dir, dir == def ? " (embedded default)" : "", dmn__family_name(in->family),
            in->arch ? in->arch : "?", in->n_layer, in->d_model, in->vocab_size,
            (double)in->weight_bytes / (1024.0 * 1024.0), in->gguf ? "GGUF" : "safetensors",
            in->quant_types, (double)in->resident_bytes / (1024.0 * 1024.0),
            in->gguf && in->family == ENG_FAMILY_LLADA ? " + Q/K rows un-permuted" : "",
            eng_model_device_desc(m));
    eng_dg_memory dm;
    if (eng_dg_memory_info(m, &dm)) {
        dmn__doctor_dgemma(f, m, &dm);
        eng_model_free(m);
        return;
    }
    /* What a context's K/V costs (both backends keep it in F32): the figure
     * per-document K/V budgets are sized by (issue 19). */
    uint64_t kv_tok = 2ull * (uint64_t)in->n_layer * (uint64_t)in->n_kv_head *
                      (uint64_t)in->head_dim * sizeof(float);
    int ctx_max = in->max_context > 0 && in->max_context < 2048 ? in->max_context : 2048;
    fprintf(f, "context K/V: %llu bytes per token (F32), %.1f MiB for %d tokens\n",
            (unsigned long long)kv_tok, (double)kv_tok * ctx_max / (1024.0 * 1024.0), ctx_max);
    /* The store of contexts kept between requests (setting contextCache). */
    const double per_doc = (double)kv_tok * ctx_max / (1024.0 * 1024.0);
    const int doc_mib = 64, total_mib = 256; /* ifl_kv_opts_default */
    fprintf(f,
            "context K/V kept between requests (contextCache %s): budgets %d MiB per "
            "document, %d MiB in all: ",
            DMN_CONTEXT_CACHE_DEFAULT ? "on" : "off", doc_mib, total_mib);
    if (per_doc > doc_mib)
        fprintf(f, "a full context exceeds one document's budget (not kept)\n");
    else
        fprintf(f, "%d documents with full contexts\n",
                per_doc > 0 ? (int)(total_mib / per_doc) : 0);
    eng_model_free(m);
}

/* A "source": {"kind": "remote", ...} setting replaces the model. Returns
 * true when it does (or is invalid: then nothing is loaded and the error is
 * shown). The setting is compared as JSON so an unchanged one reconnects
 * nothing. */
static bool dmn__configure_remote(dmn__prov *p, const json_t *settings) {
    const json_t *src = json_object_get(settings, "source");
    ifl_remote_cfg rc;
    char err[512];
    base_status st = ifl_remote_cfg_parse(src, &rc, err, sizeof err);
    if (st == BASE_ERR_NOT_FOUND)
        return false;
    char *sig = json_dumps(src, JSON_COMPACT | JSON_SORT_KEYS);
    if (sig && p->source_sig && strcmp(sig, p->source_sig) == 0) {
        free(sig);
        ifl_remote_cfg_free(&rc);
        return true;
    }
    free(p->source_sig);
    p->source_sig = sig;
    free(p->source_error);
    p->source_error = NULL;
    free(p->model_dir);
    free(p->device);
    p->device = NULL;
    p->model_dir = NULL;
    if (st != BASE_OK) {
        char msg[640];
        snprintf(msg, sizeof msg, "infilld: remote source: %s", err);
        p->source_error = strdup(msg);
        dmn_host_show_message(p->host, LSP_MSG_ERROR, msg);
        BASE_LOGE("dmn", "%s", msg);
        ifl_worker_load(p->worker, NULL);
        snprintf(p->state, sizeof p->state, "error");
        dmn__send_status(p);
        return true;
    }
    /* The status names the server, never the key. */
    size_t n = strlen(rc.url) + (rc.model ? strlen(rc.model) : 0) + 4;
    p->model_dir = malloc(n);
    if (p->model_dir)
        snprintf(p->model_dir, n, "%s%s%s", rc.model ? rc.model : "", rc.model ? " @ " : "",
                 rc.url);
    BASE_LOGI("dmn", "remote source: %s %s (key from %s)", ifl_remote_api_name(rc.api), rc.url,
              rc.key_from);
    ifl_worker_load_remote(p->worker, &rc);
    snprintf(p->state, sizeof p->state, "loading");
    dmn__send_status(p);
    return true;
}

int dmn_latency_budget_ms(const json_t *settings, bool invoked) {
    int ms = invoked ? DMN_BUDGET_INVOKED_MS : DMN_BUDGET_AUTOMATIC_MS;
    const json_t *v = json_object_get(settings, "latencyBudgetMs");
    if (json_is_object(v))
        v = json_object_get(v, invoked ? "invoked" : "automatic");
    if (json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) <= 600000)
        ms = (int)json_number_value(v);
    return ms;
}

json_t *dmn_plan_json(const ifl_doc_res *res, double latency_ms) {
    const ifl_plan *pl = &res->plan;
    if (!pl->planned)
        return json_null();
    const ifl_cost *c = &pl->cost;
    json_t *cost = json_pack("{s:f, s:f, s:f, s:f, s:f, s:b, s:i}", "callMs", c->call_ms, "rowMs",
                             c->row_ms, "pairMs", c->pair_ms, "posMs", c->pos_ms, "scale", c->scale,
                             "measured", c->measured, "runsObserved", c->n_obs);
    json_t *j =
        json_pack("{s:f, s:f, s:b, s:s, s:i, s:i, s:i, s:i, s:i, s:b, s:f, s:f, s:f, s:i, "
                  "s:i, s:i, s:o}",
                  "budgetMs", pl->budget_ms, "leftMs", pl->left_ms, "run", pl->run, "why",
                  pl->why ? pl->why : "", "contextTokens", pl->ctx_tokens, "candidates",
                  pl->candidates, "hole", pl->n_hole, "holeCap", pl->n_cap, "maxSteps",
                  pl->max_steps, "grow", pl->grow, "fullStepMs", pl->full_ms, "windowStepMs",
                  pl->window_ms, "predictedRunMs", pl->run_ms, "growRefused", res->grow_refused,
                  "rejected", res->n_rejected, "runs", res->runs, "cost", cost);
    if (j) {
        /* Work done over every run (bench_session reads these from infilld/status). */
        json_object_set_new(j, "steps", json_integer(res->raw.steps_run));
        json_object_set_new(j, "fullForwards", json_integer(res->raw.n_forward_full));
        json_object_set_new(j, "windowForwards", json_integer(res->raw.n_forward_window));
        json_object_set_new(j, "rowsComputed", json_integer(res->raw.rows_computed));
        json_object_set_new(j, "prefillHit", json_boolean(res->prefill_hit));
        if (res->raw.kv_why) {
            /* the context K/V kept between requests: the last run's decision */
            json_object_set_new(j, "contextCache", json_string(res->raw.kv_why));
            json_object_set_new(j, "rowsReused", json_integer(res->raw.kv_reused));
            json_object_set_new(j, "rowsShifted", json_integer(res->raw.kv_shifted));
            json_object_set_new(j, "rowsReencoded", json_integer(res->raw.kv_reencoded));
        }
    }
    if (j && latency_ms >= 0) {
        json_object_set_new(j, "latencyMs", json_real(latency_ms));
        json_object_set_new(j, "inBudget", json_boolean(latency_ms <= pl->budget_ms));
    }
    return j;
}

/* Without a configured model the embedded default is loaded, as by
 * `infilld complete`. */
static base_status dmn__configure(void *ud, const json_t *settings) {
    dmn__prov *p = ud;
    p->pf_enabled = dmn__pf_on(settings);
    if (dmn__configure_remote(p, settings))
        return BASE_OK;
    char def[4096];
    const char *dir = dmn_provider_model_dir(settings, def, sizeof def);
    const char *dev = json_string_value(json_object_get(settings, "device"));
    dmn__set_model(p, dir, dev);
    /* One budget for every session's parses: the last settings applied win. */
    ifl_syntax_set_parse_budget(
        (unsigned)dmn__limit(settings, "parseBudgetMs", DMN__PARSE_BUDGET_MS));
    return BASE_OK;
}

lsp_provider_i *dmn_provider_new(const dmn_config *cfg, uv_loop_t *loop, dmn_host *host,
                                 base_status *err) {
    dmn__prov *p = calloc(1, sizeof *p);
    if (!p) {
        if (err)
            *err = BASE_ERR_NOMEM;
        return NULL;
    }
    p->loop = loop;
    p->host = host;
    snprintf(p->state, sizeof p->state, "none");
    pthread_mutex_init(&p->mu, NULL);
    p->tcache = ifl_tcache_new();
    if (!p->tcache || uv_async_init(loop, &p->async, dmn__drain) != 0) {
        ifl_tcache_free(p->tcache);
        pthread_mutex_destroy(&p->mu);
        free(p);
        if (err)
            *err = BASE_ERR_NOMEM;
        return NULL;
    }
    p->async.data = p;
    /* The doorbell must not keep the loop alive once every session is gone. */
    uv_unref((uv_handle_t *)&p->async);
    ifl_worker_cbs cbs = {dmn__on_done, dmn__on_partial, dmn__on_state, p};
    ifl_model_opts mo;
    ifl_model_opts_default(&mo);
    const char *dev = cfg ? json_string_value(json_object_get(cfg->settings, "device")) : NULL;
    if (dev && strcmp(dev, "cpu") == 0)
        mo.load.device = ENG_DEVICE_CPU;
    else if (dev && strcmp(dev, "cuda") == 0)
        mo.load.device = ENG_DEVICE_CUDA;
    p->worker = ifl_worker_new(&cbs, &mo);
    if (!p->worker) {
        BASE_LOGE("dmn", "cannot start the engine worker thread");
        if (err)
            *err = BASE_ERR_NOMEM;
        uv_close((uv_handle_t *)&p->async, NULL);
        ifl_tcache_free(p->tcache);
        p->tcache = NULL;
        return NULL; /* p is leaked deliberately: the async handle closes later */
    }
    p->iface.complete = dmn__complete;
    p->iface.cancel = dmn__cancel;
    p->iface.configure = dmn__configure;
    p->iface.session_close = dmn__session_close;
    p->iface.session_open = dmn__session_open;
    p->iface.cursor = dmn__pf_cursor;
    p->pf_enabled = true; /* the setting's default until an edit says otherwise */
    p->pf_timer = malloc(sizeof *p->pf_timer);
    if (p->pf_timer && uv_timer_init(loop, p->pf_timer) == 0) {
        p->pf_timer->data = p;
        uv_unref((uv_handle_t *)p->pf_timer);
    } else {
        free(p->pf_timer);
        p->pf_timer = NULL; /* no idle prefill */
    }
    p->iface.ud = p;
    /* Without it (out of memory) remote jobs transfer on the worker thread. */
    p->rloop = ifl_remote_loop_new(loop);
    if (p->rloop)
        ifl_worker_set_loop(p->worker, p->rloop);
    if (cfg)
        dmn__configure(p, cfg->settings);
    if (err)
        *err = BASE_OK;
    return &p->iface;
}

static void dmn__closed(uv_handle_t *h) {
    dmn__prov *p = h->data;
    /* Events queued after the last drain (the worker is gone by now). */
    dmn__event *ev = p->ev_head;
    while (ev) {
        dmn__event *next = ev->next;
        if (ev->kind == DMN_EV_DONE)
            ifl_job_free(ev->job);
        free(ev->text);
        free(ev);
        ev = next;
    }
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static void dmn__pf_timer_closed(uv_handle_t *h) { free(h); }

void dmn_provider_free(lsp_provider_i *iface) {
    if (!iface)
        return;
    dmn__prov *p = iface->ud;
    /* The loop's transfers first: their jobs come back to the worker, which
     * frees them. */
    dmn__pf_forget(p);
    if (p->pf_timer)
        uv_close((uv_handle_t *)p->pf_timer, dmn__pf_timer_closed);
    p->pf_timer = NULL;
    ifl_worker_set_loop(p->worker, NULL);
    ifl_remote_loop_close(p->rloop);
    p->rloop = NULL;
    ifl_worker_free(p->worker);
    p->worker = NULL;
    while (p->pending) {
        dmn__pending *e = p->pending;
        p->pending = e->next;
        dmn__pending_free(e);
    }
    dmn__sess_free_list(&p->sessions);
    dmn__sess_free_list(&p->closed);
    ifl_tcache_free(p->tcache);
    p->tcache = NULL;
    free(p->model_dir);
    free(p->device);
    free(p->source_sig);
    free(p->source_error);
    p->source_sig = p->source_error = NULL;
    p->model_dir = p->device = NULL;
    json_decref(p->last_plan);
    p->last_plan = NULL;
    uv_close((uv_handle_t *)&p->async, dmn__closed);
}
