/* The engine worker: one thread owns the model. Jobs are taken newest first;
 * a newer job of the same group supersedes older ones (dropped when queued,
 * cancelled at the next denoising step when running).
 *
 * With a remote source and a loop (ifl_worker_set_loop), a job is split:
 * the worker locates the span and builds the request, the daemon's libuv
 * loop runs the HTTP transfer (remote_loop.c), and the job comes back here
 * for post-processing and validation (tree-sitter stays off the loop). So
 * several remote jobs are in flight at once; a superseded or cancelled one
 * is dropped by the loop, its connection closed. */
#define _POSIX_C_SOURCE 200809L
#include "flag.h"
#include "infill.h"
#include "remote_call.h"
#include "source.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ifl_worker {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ifl_worker_cbs cbs;
    ifl_model_opts opts;
    ifl_job *queue; /* newest first */
    ifl_job *running;
    uint64_t next_id;
    bool stop;
    bool load_pending;
    char *load_dir;              /* NULL = unload */
    ifl_remote_cfg *load_remote; /* set: switch to this remote source instead */
    ifl_model *model;
    ifl_remote *remote; /* the remote source, when one replaces the model */
    ifl_remote_loop *rl;
    ifl_job *inflight;  /* transfers on the loop (linked by next) */
    ifl_job *finishing; /* back from the loop, to post-process */
    /* Idle prefill (infill.h): at most one queued and one running; cancel
     * flag 3 = preempted by another job, 1 = aborted (edit, newer, load). */
    ifl_job *pf_queued, *pf_running;
    uint64_t pf_t0; /* when pf_running started */
    /* The cost model's re-measurement while idle: a job arriving stops it,
     * once; the next one runs to its end (requests that keep arriving
     * would otherwise leave a refusing model in place for good). */
    bool measuring, measure_stopped;
    volatile int measure_cancel;
    ifl_prefill_stats pst;
    void (*pf_hook)(void *ud, uint64_t group);
    void *pf_hook_ud;
    ifl_step_wrap_fn wrap; /* tests: for every model loaded */
    void *wrap_ud;
    ifl_phase_fn phase_fn; /* tests: for every model loaded */
    void *phase_ud;
    void (*layer_fn)(void *ud, int layer); /* tests: for every model loaded */
    void *layer_ud;
};

typedef struct ifl__pctx {
    ifl_worker *w;
    ifl_job *job;
} ifl__pctx;

/* A remote job while its transfer runs on the loop. */
typedef struct ifl__handoff {
    ifl__pctx pc;
    ifl_source_req sr;
    ifl_remote_call *call;
    uint64_t t0;
} ifl__handoff;

static void ifl__free_remote_cfg(ifl_remote_cfg *c) {
    ifl_remote_cfg_free(c);
    free(c);
}

static const char *ifl__backend(const ifl_worker *w) {
    return w->remote ? "remote" : ifl_model_device(w->model);
}

void ifl_job_free(ifl_job *j) {
    if (!j)
        return;
    ifl_doc_res_free(&j->res);
    ifl__handoff *h = j->handoff;
    if (h) {
        ifl_remote_call_free(h->call);
        free(h);
    }
    free((char *)j->req.text);
    free((char *)j->req.input_extra);
    free((char *)j->req.doc_key);
    free(j);
}

static void ifl__progress(void *ud, uint64_t done, uint64_t total) {
    ifl_worker *w = ud;
    if (w->cbs.state)
        w->cbs.state(w->cbs.ud, "loading", NULL, done, total);
}

static void ifl__do_load(ifl_worker *w, char *dir, ifl_remote_cfg *rc) {
    ifl_model_close(w->model);
    w->model = NULL;
    ifl_remote_free(w->remote);
    w->remote = NULL;
    if (rc) {
        free(dir);
        w->remote = ifl_remote_new(rc);
        free(rc);
        if (w->cbs.state)
            w->cbs.state(w->cbs.ud, w->remote ? "ready" : "error",
                         w->remote ? "remote" : "out of memory", 0, 0);
        return;
    }
    if (!dir) {
        if (w->cbs.state)
            w->cbs.state(w->cbs.ud, "none", NULL, 0, 0);
        return;
    }
    if (w->cbs.state)
        w->cbs.state(w->cbs.ud, "loading", dir, 0, 0);
    ifl_model_opts o = w->opts;
    o.load.progress = ifl__progress;
    o.load.progress_ud = w;
    eng_error err = {0};
    w->model = ifl_model_open(dir, &o, &err);
    pthread_mutex_lock(&w->mu);
    if (w->model && w->wrap)
        ifl_model_set_step_wrap(w->model, w->wrap, w->wrap_ud);
    if (w->model && w->phase_fn)
        ifl_model_set_phase_hook(w->model, w->phase_fn, w->phase_ud);
    if (w->model && w->layer_fn && ifl_model_ctx(w->model))
        eng_ctx_set_layer_hook(ifl_model_ctx(w->model), w->layer_fn, w->layer_ud);
    pthread_mutex_unlock(&w->mu);
    if (w->model && ifl_model_damaged(w->model)) {
        snprintf(err.msg, sizeof err.msg, "%s was truncated while it was being loaded",
                 ifl_model_damaged(w->model));
        ifl_model_close(w->model);
        w->model = NULL;
    }
    if (w->cbs.state)
        w->cbs.state(w->cbs.ud, w->model ? "ready" : "error",
                     w->model ? ifl_model_device(w->model) : err.msg, 0, 0);
    free(dir);
}

static void ifl__job_partial(void *ud, const char *text, size_t len, int step, int steps) {
    ifl__pctx *pc = ud;
    if (pc->w->cbs.partial && !base_flag_get(&pc->job->cancel))
        pc->w->cbs.partial(pc->w->cbs.ud, pc->job->id, text, len, step, steps);
}

/* A weight file truncated under the model (format/mapguard.c): the job that
 * read it is failed and the model unloaded; requests then get empty answers
 * until the model setting changes or the model is loaded again. */
static bool ifl__model_lost(ifl_worker *w) {
    const char *path = w->model ? ifl_model_damaged(w->model) : NULL;
    if (!path)
        return false;
    char msg[sizeof(((eng_error *)0)->msg)];
    snprintf(msg, sizeof msg,
             "%s changed on disk while in use (truncated): the model is unloaded; change the "
             "\"model\" setting to load it again",
             path);
    BASE_LOGE("infill", "%s", msg);
    ifl_model_close(w->model);
    w->model = NULL;
    if (w->cbs.state)
        w->cbs.state(w->cbs.ud, "error", msg, 0, 0);
    return true;
}

/* Sets every in-flight job's cancel flag (a reload, shutdown) and has the
 * loop look. Under w->mu. */
static void ifl__cancel_inflight(ifl_worker *w) {
    for (ifl_job *j = w->inflight; j; j = j->next)
        base_flag_set(&j->cancel, 1);
    if (w->inflight && w->rl)
        ifl_remote_loop_kick(w->rl);
}

/* The loop's thread: a job's transfer is over; back to the worker. */
static void ifl__resumed(void *ud, ifl_remote_call *c) {
    ifl_job *j = ud;
    ifl__handoff *h = j->handoff;
    ifl_worker *w = h->pc.w;
    h->call = c;
    pthread_mutex_lock(&w->mu);
    for (ifl_job **pp = &w->inflight; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    j->next = w->finishing;
    w->finishing = j;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Starts j's transfer on the loop: true when handed off (j is then the
 * loop's until ifl__resumed); false with j->status set when it ended here,
 * or when there is no loop to take it (j->status BASE_ERR_UNSUPPORTED). */
static bool ifl__hand_off(ifl_worker *w, ifl_job *j) {
    pthread_mutex_lock(&w->mu);
    bool loop = w->rl != NULL;
    pthread_mutex_unlock(&w->mu);
    if (!loop) {
        j->status = BASE_ERR_UNSUPPORTED;
        return false;
    }
    ifl__handoff *h = calloc(1, sizeof *h);
    if (!h) {
        j->status = BASE_ERR_NOMEM;
        return false;
    }
    h->pc.w = w;
    h->pc.job = j;
    h->t0 = base_now_ns();
    j->req.partial = NULL;
    if (j->req.want_partial) {
        j->req.partial = ifl__job_partial;
        j->req.partial_ud = &h->pc;
    }
    base_status st = ifl_doc_prepare(&j->req, &j->res, &h->sr);
    ifl_remote_call *c = NULL;
    if (st == BASE_OK)
        st = ifl_remote_call_new(w->remote, &h->sr, &j->cancel, true, &c, &j->res);
    if (st != BASE_OK) {
        free(h);
        j->req.partial = NULL;
        j->status = st;
        return false;
    }
    j->handoff = h;
    pthread_mutex_lock(&w->mu);
    bool ok = w->rl && ifl_remote_loop_submit(w->rl, c, ifl__resumed, j);
    if (ok) {
        j->next = w->inflight;
        w->inflight = j;
    }
    pthread_mutex_unlock(&w->mu);
    if (!ok) {
        ifl_remote_call_free(c);
        j->handoff = NULL;
        free(h);
        j->req.partial = NULL;
        j->status = BASE_ERR_UNSUPPORTED;
    }
    return ok;
}

/* A job back from the loop: its candidates, post-processed here. */
static void ifl__finish(ifl_worker *w, ifl_job *j) {
    ifl__handoff *h = j->handoff;
    j->handoff = NULL;
    base_status st = ifl_remote_call_finish(h->call, &j->res);
    j->status = ifl_doc_finish(&j->req, &j->res, &h->sr, st);
    j->req.partial = NULL;
    if (j->status == BASE_ERR_CANCELLED && base_flag_get(&j->cancel) == 2)
        j->status = BASE_ERR_SUPERSEDED;
    j->latency_ms = base_ms_since(
        j->req.received_ns && j->req.received_ns < h->t0 ? j->req.received_ns : h->t0);
    free(h);
    if (w->cbs.done)
        w->cbs.done(w->cbs.ud, j);
    else
        ifl_job_free(j);
}

/* Runs prefill j (taken off pf_queued) under w->mu, which it drops while
 * the step runs and holds again on return. */
static bool ifl__run_prefill(ifl_worker *w, ifl_job *j) {
    ifl_model *m = w->model;
    if (!j)
        return false;
    /* A preempted one queued again runs only if its stopped pass can go on
     * (no job ran a step on the context since): else it is dropped. */
    bool stale = j && j->pf_resume > 0 && m && ifl_model_prefill_resumable(m) != j->pf_resume;
    if (!m || w->remote || ifl_model_damaged(m) || base_flag_get(&j->cancel) || stale) {
        if (stale)
            w->pst.resume_dropped++;
        pthread_mutex_unlock(&w->mu);
        ifl_job_free(j);
        pthread_mutex_lock(&w->mu);
        return false;
    }
    if (j->pf_resume > 0) {
        w->pst.resumed++;
        w->pst.resumed_layers += j->pf_resume;
    }
    w->pf_running = j;
    w->pf_t0 = base_now_ns();
    w->pst.runs++;
    void (*hook)(void *, uint64_t) = w->pf_hook;
    void *hook_ud = w->pf_hook_ud;
    pthread_mutex_unlock(&w->mu);
    if (hook)
        hook(hook_ud, j->group);
    uint64_t t0 = base_now_ns();
    /* Whatever the slot held is for an older text; this run refills it. */
    ifl_model_prefill_clear(m);
    j->req.partial = NULL;
    j->req.prefill = true;
    j->req.defer_post = true;
    ifl_model_prefill_begin(m);
    base_status st = ifl_complete_doc(m, &j->req, &j->cancel, &j->res);
    double ms = base_ms_since(t0);
    bool kept = ifl_model_prefilled(m);
    double sl[IFL_PH_N];
    ifl_model_prefill_slices(m, sl);
    pthread_mutex_lock(&w->mu);
    w->pf_running = NULL;
    int c = base_flag_get(&j->cancel);
    w->pst.chunk_ms = ifl_model_prefill_chunk_ms(m);
    for (int i = 0; i < IFL_PH_N; i++) {
        w->pst.slice_ms[i] = sl[i];
        if (sl[i] > w->pst.max_slice_ms) {
            w->pst.max_slice_ms = sl[i];
            w->pst.max_slice_phase = i;
        }
    }
    if (kept) {
        w->pst.completed++;
        w->pst.last_run_ms = ms;
    } else if (c == 3) {
        w->pst.preempted++;
        /* Stopped between layers: queued again (unless something newer is)
         * to go on from that layer once the jobs before it are done, if
         * none of them runs a step on the context. */
        int at = ifl_model_prefill_resumable(m);
        if (at > 0 && !w->pf_queued) {
            ifl_doc_res_free(&j->res);
            memset(&j->res, 0, sizeof j->res);
            j->pf_resume = at;
            base_flag_set(&j->cancel, 0);
            w->pf_queued = j;
            j = NULL;
        }
    } else if (c) {
        w->pst.aborted++;
    } else if (st != BASE_ERR_CANCELLED) {
        BASE_LOGD("infill", "idle prefill not run: %s", base_status_str(st));
    }
    pthread_mutex_unlock(&w->mu);
    (void)ifl__model_lost(w);
    ifl_job_free(j);
    pthread_mutex_lock(&w->mu);
    return true;
}

static void *ifl__worker_main(void *arg) {
    ifl_worker *w = arg;
    bool busy = false; /* "busy" reported, "ready" not yet */
    pthread_mutex_lock(&w->mu);
    for (;;) {
        /* A load waits for the transfers on the loop to come back (they
         * were cancelled): they use the source it replaces. */
        while (!w->stop && !w->finishing && !(w->load_pending && !w->inflight) &&
               !(w->queue && !w->load_pending) && !(w->pf_queued && !w->load_pending))
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->stop)
            break;
        if (w->finishing) {
            ifl_job *j = w->finishing;
            w->finishing = j->next;
            j->next = NULL;
            pthread_mutex_unlock(&w->mu);
            ifl__finish(w, j);
            pthread_mutex_lock(&w->mu);
        } else if (w->load_pending) {
            char *dir = w->load_dir;
            ifl_remote_cfg *rc = w->load_remote;
            w->load_dir = NULL;
            w->load_remote = NULL;
            w->load_pending = false;
            pthread_mutex_unlock(&w->mu);
            busy = false;
            ifl__do_load(w, dir, rc);
            pthread_mutex_lock(&w->mu);
            continue;
        } else if (!w->queue) {
            /* Nothing else waits: the idle prefill, at the lowest priority. */
            ifl_job *j = w->pf_queued;
            w->pf_queued = NULL;
            /* Its counters changed and no job may follow to carry them: the
             * state again (infilld/status), unless a job is about to run. */
            if (ifl__run_prefill(w, j) && !busy && !w->queue && !w->load_pending && w->model &&
                w->cbs.state) {
                pthread_mutex_unlock(&w->mu);
                w->cbs.state(w->cbs.ud, "ready", ifl__backend(w), 0, 0);
                pthread_mutex_lock(&w->mu);
            }
            continue;
        } else {
            ifl_job *j = w->queue;
            w->queue = j->next;
            j->next = NULL;
            w->running = j;
            uint64_t t0 = base_now_ns();
            j->wait_ms = j->submit_ns && j->submit_ns < t0 ? (double)(t0 - j->submit_ns) / 1e6 : 0;
            if (j->pf_seen) {
                w->pst.waits++;
                w->pst.last_wait_ms = j->wait_ms;
                if (j->wait_ms > w->pst.max_wait_ms)
                    w->pst.max_wait_ms = j->wait_ms;
                if (j->pf_preempt && j->wait_ms > w->pst.max_preempt_wait_ms)
                    w->pst.max_preempt_wait_ms = j->wait_ms;
            }
            long long hits0 = w->model ? ifl_model_prefill_hits(w->model) : 0;
            pthread_mutex_unlock(&w->mu);
            bool have = w->model || w->remote;
            bool run = !base_flag_get(&j->cancel) && have;
            if (run && !busy && w->cbs.state) {
                busy = true;
                w->cbs.state(w->cbs.ud, "busy", NULL, 0, 0);
            }
            int cancel = base_flag_get(&j->cancel);
            bool handed = false;
            if (cancel) {
                j->status = cancel == 2 ? BASE_ERR_SUPERSEDED : BASE_ERR_CANCELLED;
            } else if (!have) {
                j->status = BASE_ERR_STATE;
            } else if (w->remote &&
                       ((handed = ifl__hand_off(w, j)) || j->status != BASE_ERR_UNSUPPORTED)) {
                /* On the loop now, or it ended here (a bad range, out of memory). */
            } else {
                ifl__pctx pc = {w, j};
                j->req.partial = NULL;
                if (j->req.want_partial) {
                    j->req.partial = ifl__job_partial;
                    j->req.partial_ud = &pc;
                }
                if (w->remote) {
                    ifl_source_i src = ifl_source_remote(w->remote);
                    j->status = ifl_complete_doc_src(&src, &j->req, &j->cancel, &j->res);
                } else {
                    j->status = ifl_model_damaged(w->model)
                                    ? BASE_ERR_IO
                                    : ifl_complete_doc(w->model, &j->req, &j->cancel, &j->res);
                }
                j->req.partial = NULL;
                if (j->status == BASE_ERR_CANCELLED && base_flag_get(&j->cancel) == 2)
                    j->status = BASE_ERR_SUPERSEDED;
                if (ifl__model_lost(w)) {
                    j->status = BASE_ERR_IO;
                    ifl_doc_res_free(&j->res);
                    busy = false;
                }
            }
            pthread_mutex_lock(&w->mu);
            w->running = NULL;
            if (w->model)
                w->pst.hits += ifl_model_prefill_hits(w->model) - hits0;
            pthread_mutex_unlock(&w->mu);
            if (!handed) {
                /* From when the daemon received the request: what the user waits. */
                j->latency_ms = base_ms_since(
                    j->req.received_ns && j->req.received_ns < t0 ? j->req.received_ns : t0);
                if (w->cbs.done)
                    w->cbs.done(w->cbs.ud, j);
                else
                    ifl_job_free(j);
            }
            pthread_mutex_lock(&w->mu);
        }
        /* Idle with a cost model that refuses everything: measure it again
         * (a request arriving meanwhile stops it at the next layer, every
         * other time). */
        if (!w->queue && !w->load_pending && w->model && ifl_model_cost_starved(w->model)) {
            w->measuring = true;
            base_flag_set(&w->measure_cancel, 0);
            pthread_mutex_unlock(&w->mu);
            base_status ms =
                ifl_model_remeasure(w->model, w->measure_stopped ? NULL : &w->measure_cancel);
            if (ms == BASE_ERR_CANCELLED)
                BASE_LOGI("infill", "cost model re-measurement stopped for a request");
            else if (ms != BASE_OK)
                BASE_LOGW("infill", "cost model not re-measured: %s", base_status_str(ms));
            pthread_mutex_lock(&w->mu);
            w->measuring = false;
            w->measure_stopped = ms == BASE_ERR_CANCELLED;
        }
        /* Back to ready once nothing waits (a load reports its own state). */
        if (busy && !w->queue && !w->inflight && !w->finishing && !w->load_pending &&
            (w->model || w->remote)) {
            busy = false;
            pthread_mutex_unlock(&w->mu);
            if (w->cbs.state)
                w->cbs.state(w->cbs.ud, "ready", ifl__backend(w), 0, 0);
            pthread_mutex_lock(&w->mu);
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

void ifl_worker_set_loop(ifl_worker *w, ifl_remote_loop *rl) {
    pthread_mutex_lock(&w->mu);
    w->rl = rl;
    pthread_mutex_unlock(&w->mu);
}

ifl_worker *ifl_worker_new(const ifl_worker_cbs *cbs, const ifl_model_opts *o) {
    ifl_worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cbs = *cbs;
    if (o)
        w->opts = *o;
    else
        ifl_model_opts_default(&w->opts);
    w->next_id = 1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, ifl__worker_main, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w);
        return NULL;
    }
    return w;
}

void ifl_worker_free(ifl_worker *w) {
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    if (w->running)
        base_flag_set(&w->running->cancel, 1);
    if (w->pf_running)
        base_flag_set(&w->pf_running->cancel, 1);
    ifl__cancel_inflight(w);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    while (w->queue) {
        ifl_job *j = w->queue;
        w->queue = j->next;
        ifl_job_free(j);
    }
    ifl_job_free(w->pf_queued);
    /* The loop was closed first (ifl_remote_loop_close), so every job it
     * had came back here. */
    while (w->finishing) {
        ifl_job *j = w->finishing;
        w->finishing = j->next;
        ifl_job_free(j);
    }
    free(w->load_dir);
    ifl__free_remote_cfg(w->load_remote);
    ifl_model_close(w->model);
    ifl_remote_free(w->remote);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

void ifl_worker_load_remote(ifl_worker *w, ifl_remote_cfg *cfg) {
    ifl_remote_cfg *c = malloc(sizeof *c);
    if (c)
        *c = *cfg;
    else
        ifl_remote_cfg_free(cfg);
    memset(cfg, 0, sizeof *cfg);
    pthread_mutex_lock(&w->mu);
    free(w->load_dir);
    w->load_dir = NULL;
    ifl__free_remote_cfg(w->load_remote);
    w->load_remote = c;
    w->load_pending = true;
    if (w->running)
        base_flag_set(&w->running->cancel, 1);
    if (w->pf_running)
        base_flag_set(&w->pf_running->cancel, 1);
    ifl__cancel_inflight(w);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void ifl_worker_load(ifl_worker *w, const char *dir) {
    char *copy = dir ? strdup(dir) : NULL;
    pthread_mutex_lock(&w->mu);
    free(w->load_dir);
    w->load_dir = copy;
    ifl__free_remote_cfg(w->load_remote);
    w->load_remote = NULL;
    w->load_pending = true;
    if (w->running)
        base_flag_set(&w->running->cancel, 1);
    if (w->pf_running)
        base_flag_set(&w->pf_running->cancel, 1);
    ifl__cancel_inflight(w);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static ifl_job *ifl__job_new(const ifl_doc_req *req) {
    ifl_job *j = calloc(1, sizeof *j);
    char *text = malloc(req->len + 1);
    char *extra = req->input_extra ? strdup(req->input_extra) : NULL;
    char *dkey = req->doc_key ? strdup(req->doc_key) : NULL;
    if (!j || !text || (req->input_extra && !extra) || (req->doc_key && !dkey)) {
        free(j);
        free(text);
        free(extra);
        free(dkey);
        return NULL;
    }
    memcpy(text, req->text, req->len);
    text[req->len] = 0;
    j->req = *req;
    j->req.text = text;
    j->req.input_extra = extra;
    j->req.doc_key = dkey;
    j->submit_ns = base_now_ns();
    return j;
}

static bool ifl__streq(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Would job b compute the same first step as prefill a? (Only decides
 * whether b waits for a to finish; the step itself is matched exactly.) */
static bool ifl__same_req(const ifl_doc_req *a, const ifl_doc_req *b) {
    return a->len == b->len && memcmp(a->text, b->text, a->len) == 0 && a->cursor == b->cursor &&
           a->sel_start == b->sel_start && a->sel_end == b->sel_end &&
           a->candidates == b->candidates && a->has_seed == b->has_seed && a->seed == b->seed &&
           a->steps == b->steps && a->alg == b->alg && a->max_hole == b->max_hole &&
           a->n_hole == b->n_hole && a->mode == b->mode && a->max_steps == b->max_steps &&
           a->time_budget_ms == b->time_budget_ms && ifl__streq(a->doc_key, b->doc_key) &&
           ifl__streq(a->language, b->language) && a->has_span == b->has_span &&
           (!a->has_span ||
            (a->span.hole_start == b->span.hole_start && a->span.hole_end == b->span.hole_end &&
             a->span.n_tokens == b->span.n_tokens));
}

uint64_t ifl_worker_submit(ifl_worker *w, uint64_t group, void *owner, const ifl_doc_req *req) {
    ifl_job *j = ifl__job_new(req);
    if (!j)
        return 0;
    j->group = group;
    j->owner = owner;
    ifl_job *dropped = NULL, *pf_drop = NULL;
    pthread_mutex_lock(&w->mu);
    j->id = w->next_id++;
    if (w->measuring)
        base_flag_set(&w->measure_cancel, 1);
    /* A running prefill stops at its next layer for this job, unless this
     * job would compute the very step it is computing: then it finishes
     * and the job takes it over. A queued one of this group is stale. */
    if (w->pf_running) {
        j->pf_seen = true;
        /* Joining makes the job wait for the rest of the forward: only when
         * that is predicted to leave it a fifth of its budget for the steps
         * after. Else it preempts: the
         * prefill goes on after it if it runs no step, and if it does, it
         * computes that step itself. */
        bool fits = true;
        if (j->req.time_budget_ms > 0 && w->model) {
            double left = ifl_model_prefill_predicted_ms(w->model) - base_ms_since(w->pf_t0);
            fits = left < 0.8 * j->req.time_budget_ms;
        }
        if (w->pf_running->group == group && ifl__same_req(&w->pf_running->req, &j->req) && fits) {
            w->pst.joined++;
        } else {
            base_flag_set(&w->pf_running->cancel, 3);
            j->pf_preempt = true;
        }
    }
    if (w->pf_queued && w->pf_queued->group == group) {
        pf_drop = w->pf_queued;
        w->pf_queued = NULL;
    }
    /* Supersede older work of the same group. */
    ifl_job **pp = &w->queue;
    while (*pp) {
        ifl_job *q = *pp;
        if (q->group == group) {
            *pp = q->next;
            q->next = dropped;
            dropped = q;
        } else {
            pp = &q->next;
        }
    }
    if (w->running && w->running->group == group)
        base_flag_set(&w->running->cancel, 2);
    bool kick = false;
    for (ifl_job *q = w->inflight; q; q = q->next)
        if (q->group == group) {
            base_flag_set(&q->cancel, 2);
            kick = true;
        }
    if (kick && w->rl)
        ifl_remote_loop_kick(w->rl);
    j->next = w->queue;
    w->queue = j;
    /* The worker may finish and free j as soon as the lock is released. */
    uint64_t id = j->id;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    ifl_job_free(pf_drop);
    while (dropped) {
        ifl_job *q = dropped;
        dropped = q->next;
        q->next = NULL;
        q->status = BASE_ERR_SUPERSEDED;
        if (w->cbs.done)
            w->cbs.done(w->cbs.ud, q);
        else
            ifl_job_free(q);
    }
    return id;
}

void ifl_worker_cancel(ifl_worker *w, uint64_t id) {
    ifl_job *found = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->running && w->running->id == id)
        base_flag_set(&w->running->cancel, 1);
    for (ifl_job *q = w->inflight; q; q = q->next)
        if (q->id == id) {
            base_flag_set(&q->cancel, 1);
            if (w->rl)
                ifl_remote_loop_kick(w->rl);
        }
    for (ifl_job **pp = &w->queue; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            found = *pp;
            *pp = found->next;
            found->next = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&w->mu);
    if (found) {
        found->status = BASE_ERR_CANCELLED;
        if (w->cbs.done)
            w->cbs.done(w->cbs.ud, found);
        else
            ifl_job_free(found);
    }
}

bool ifl_worker_prefill(ifl_worker *w, uint64_t group, const ifl_doc_req *req) {
    ifl_job *j = ifl__job_new(req);
    if (!j)
        return false;
    j->group = group;
    j->req.prefill = true;
    j->req.want_partial = false;
    pthread_mutex_lock(&w->mu);
    ifl_job *old = w->pf_queued;
    w->pf_queued = j;
    w->pst.queued++;
    if (w->pf_running)
        base_flag_set(&w->pf_running->cancel, 1); /* for an older text */
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    ifl_job_free(old);
    return true;
}

void ifl_worker_prefill_cancel(ifl_worker *w, uint64_t group) {
    ifl_job *old = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->pf_queued && (group == 0 || w->pf_queued->group == group)) {
        old = w->pf_queued;
        w->pf_queued = NULL;
    }
    if (w->pf_running && (group == 0 || w->pf_running->group == group))
        base_flag_set(&w->pf_running->cancel, 1);
    pthread_mutex_unlock(&w->mu);
    ifl_job_free(old);
}

void ifl_worker_prefill_stats(ifl_worker *w, ifl_prefill_stats *out) {
    pthread_mutex_lock(&w->mu);
    *out = w->pst;
    pthread_mutex_unlock(&w->mu);
}

void ifl_worker_set_prefill_hook(ifl_worker *w, void (*fn)(void *ud, uint64_t group), void *ud) {
    pthread_mutex_lock(&w->mu);
    w->pf_hook = fn;
    w->pf_hook_ud = ud;
    pthread_mutex_unlock(&w->mu);
}

void ifl_worker_set_step_wrap(ifl_worker *w, ifl_step_wrap_fn fn, void *ud) {
    pthread_mutex_lock(&w->mu);
    w->wrap = fn;
    w->wrap_ud = ud;
    pthread_mutex_unlock(&w->mu);
}

void ifl_worker_set_layer_hook(ifl_worker *w, void (*fn)(void *ud, int layer), void *ud) {
    pthread_mutex_lock(&w->mu);
    w->layer_fn = fn;
    w->layer_ud = ud;
    pthread_mutex_unlock(&w->mu);
}

void ifl_worker_set_cost(ifl_worker *w, const ifl_cost *c) {
    pthread_mutex_lock(&w->mu);
    if (w->model)
        ifl_model_set_cost(w->model, c);
    pthread_mutex_unlock(&w->mu);
}

void ifl_worker_set_phase_hook(ifl_worker *w, ifl_phase_fn fn, void *ud) {
    pthread_mutex_lock(&w->mu);
    w->phase_fn = fn;
    w->phase_ud = ud;
    pthread_mutex_unlock(&w->mu);
}

bool ifl_worker_prefill_stopping(ifl_worker *w) {
    pthread_mutex_lock(&w->mu);
    bool s = w->pf_running && base_flag_get(&w->pf_running->cancel) != 0;
    pthread_mutex_unlock(&w->mu);
    return s;
}
