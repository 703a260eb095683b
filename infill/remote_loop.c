/* The remote source's transfers on the daemon's libuv loop.
 *
 * libcurl's multi-socket interface: libcurl says which sockets to watch
 * (CURLMOPT_SOCKETFUNCTION: a uv_poll_t each) and when to call it back
 * (CURLMOPT_TIMERFUNCTION: one uv_timer_t), and the loop hands it socket
 * events through curl_multi_socket_action. Any number of requests so run at
 * once on the loop thread with no thread blocked on a socket; the multi
 * handle keeps the connections alive between requests. A retry (a
 * connection that failed before the request was sent) waits for its backoff
 * on a second timer. A call whose cancel flag is set is dropped within the
 * loop iteration that set it (a uv_check_t looks every iteration; other
 * threads kick the uv_async_t): its transfers are removed and their
 * connections closed, which the server sees at once. */
#define _POSIX_C_SOURCE 200809L
#include "flag.h"
#include "remote_call.h"
#include "source.h"

#include <pthread.h>
#include <stdlib.h>
#include <uv.h>

typedef struct ifl__lcall {
    ifl_remote_call *c;
    ifl_remote_done_fn done;
    void *ud;
    int n, left; /* transfers, and those not finished */
    bool running[ENG_DIFF_MAX_CANDIDATES], waiting[ENG_DIFF_MAX_CANDIDATES];
    struct ifl__lcall *next;
} ifl__lcall;

struct ifl_remote_loop {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer; /* libcurl's timeout */
    uv_timer_t retry; /* the first retry's backoff */
    uv_check_t check; /* cancel flags, every iteration */
    uv_async_t async; /* submissions and kicks from other threads */
    pthread_mutex_t mu;
    ifl__lcall *incoming; /* under mu */
    bool closed;          /* under mu */
    ifl__lcall *active;   /* loop thread only */
    int open_handles;     /* closing: handles whose close callback is due */
    struct ifl__sock *socks;
};

typedef struct ifl__sock {
    uv_poll_t poll;
    ifl_remote_loop *rl;
    curl_socket_t fd;
    struct ifl__sock *next;
} ifl__sock;

static void ifl__sock_closed(uv_handle_t *h) { free(h->data); }

static void ifl__sock_close(ifl_remote_loop *rl, ifl__sock *s) {
    for (ifl__sock **pp = &rl->socks; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    /* libcurl forgets it: a later REMOVE for fd finds no poll to close. */
    curl_multi_assign(rl->multi, s->fd, NULL);
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, ifl__sock_closed);
}

/* Transfer i of lc starts (or, out of budget, finishes at once). */
static void ifl__start(ifl_remote_loop *rl, ifl__lcall *lc, int i) {
    lc->waiting[i] = false;
    if (!ifl_remote_call_arm(lc->c, i)) {
        lc->left--;
        return;
    }
    if (curl_multi_add_handle(rl->multi, ifl_remote_call_easy(lc->c, i)) != CURLM_OK) {
        ifl_remote_call_fail(lc->c, i, "cannot start the transfer");
        lc->left--;
        return;
    }
    lc->running[i] = true;
}

static void ifl__on_retry(uv_timer_t *t);

/* The retry timer, set to the first waiting transfer's time. */
static void ifl__arm_retry(ifl_remote_loop *rl) {
    uint64_t first = 0;
    for (ifl__lcall *lc = rl->active; lc; lc = lc->next)
        for (int i = 0; i < lc->n; i++)
            if (lc->waiting[i]) {
                uint64_t t = ifl_remote_call_start_at(lc->c, i);
                first = first && first < t ? first : t;
            }
    if (!first) {
        uv_timer_stop(&rl->retry);
        return;
    }
    uint64_t now = base_now_ns();
    uint64_t ms = first > now ? (first - now + 999999u) / 1000000u : 0;
    uv_timer_start(&rl->retry, ifl__on_retry, ms, 0);
}

/* Hands back every call whose transfers have all ended. */
static void ifl__reap(ifl_remote_loop *rl) {
    ifl__lcall **pp = &rl->active;
    while (*pp) {
        ifl__lcall *lc = *pp;
        if (lc->left > 0) {
            pp = &lc->next;
            continue;
        }
        *pp = lc->next;
        lc->done(lc->ud, lc->c);
        free(lc);
    }
}

/* Finished transfers: settled, or queued for their retry. */
static void ifl__info(ifl_remote_loop *rl) {
    CURLMsg *m;
    int left;
    bool retry = false;
    while ((m = curl_multi_info_read(rl->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        CURL *e = m->easy_handle;
        CURLcode res = m->data.result;
        ifl_remote_call *c = NULL;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&c);
        curl_multi_remove_handle(rl->multi, e);
        for (ifl__lcall *lc = rl->active; lc; lc = lc->next) {
            if (lc->c != c)
                continue;
            for (int i = 0; i < lc->n; i++) {
                if (!lc->running[i] || ifl_remote_call_easy(c, i) != e)
                    continue;
                lc->running[i] = false;
                if (ifl_remote_call_settle(c, i, res)) {
                    lc->waiting[i] = true;
                    retry = true;
                } else {
                    lc->left--;
                }
            }
            break;
        }
    }
    if (retry)
        ifl__arm_retry(rl);
    ifl__reap(rl);
}

static void ifl__on_poll(uv_poll_t *p, int status, int events) {
    ifl__sock *s = p->data;
    int flags = status < 0 ? CURL_CSELECT_ERR : 0;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    int running = 0;
    curl_multi_socket_action(s->rl->multi, s->fd, flags, &running);
    ifl__info(s->rl);
}

static void ifl__on_timer(uv_timer_t *t) {
    ifl_remote_loop *rl = t->data;
    int running = 0;
    curl_multi_socket_action(rl->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    ifl__info(rl);
}

static void ifl__on_retry(uv_timer_t *t) {
    ifl_remote_loop *rl = t->data;
    uint64_t now = base_now_ns();
    for (ifl__lcall *lc = rl->active; lc; lc = lc->next)
        for (int i = 0; i < lc->n; i++)
            if (lc->waiting[i] && ifl_remote_call_start_at(lc->c, i) <= now)
                ifl__start(rl, lc, i);
    ifl__arm_retry(rl);
    ifl__reap(rl);
}

/* CURLMOPT_SOCKETFUNCTION: watch s for what libcurl waits on. */
static int ifl__sockfn(CURL *e, curl_socket_t fd, int what, void *ud, void *sockp) {
    (void)e;
    ifl_remote_loop *rl = ud;
    ifl__sock *s = sockp;
    if (what == CURL_POLL_REMOVE) {
        if (s) {
            /* Before libcurl closes fd. */
            ifl__sock_close(rl, s);
        }
        return 0;
    }
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return -1;
        s->rl = rl;
        s->fd = fd;
        if (uv_poll_init_socket(rl->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->poll.data = s;
        s->next = rl->socks;
        rl->socks = s;
        curl_multi_assign(rl->multi, fd, s);
    }
    int ev = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
    uv_poll_start(&s->poll, ev, ifl__on_poll);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: call back in ms (-1: no timer). */
static int ifl__timerfn(CURLM *m, long ms, void *ud) {
    (void)m;
    ifl_remote_loop *rl = ud;
    if (ms < 0)
        uv_timer_stop(&rl->timer);
    else
        uv_timer_start(&rl->timer, ifl__on_timer, (uint64_t)ms, 0);
    return 0;
}

/* Drops lc's transfers: removing an unfinished one closes its HTTP/1.1
 * connection; an HTTP/2 one would stay open with the stream's reset queued
 * until its next use, the server still working meanwhile, so the connection
 * is closed (FORBID_REUSE) either way. */
static void ifl__drop(ifl_remote_loop *rl, ifl__lcall *lc) {
    for (int i = 0; i < lc->n; i++) {
        if (lc->running[i]) {
            CURL *e = ifl_remote_call_easy(lc->c, i);
            curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
            curl_multi_remove_handle(rl->multi, e);
            lc->running[i] = false;
        }
        lc->waiting[i] = false;
    }
    lc->left = 0;
    ifl_remote_call_cancelled(lc->c);
}

static void ifl__cancels(ifl_remote_loop *rl) {
    bool any = false;
    for (ifl__lcall *lc = rl->active; lc; lc = lc->next)
        if (lc->left > 0 && base_flag_get(ifl_remote_call_cancel(lc->c))) {
            ifl__drop(rl, lc);
            any = true;
        }
    if (any) {
        ifl__arm_retry(rl);
        ifl__reap(rl);
    }
}

static void ifl__on_check(uv_check_t *h) {
    ifl_remote_loop *rl = h->data;
    if (rl->active)
        ifl__cancels(rl);
}

static void ifl__on_async(uv_async_t *a) {
    ifl_remote_loop *rl = a->data;
    pthread_mutex_lock(&rl->mu);
    ifl__lcall *in = rl->incoming;
    rl->incoming = NULL;
    pthread_mutex_unlock(&rl->mu);
    /* Oldest first, as they were submitted. */
    ifl__lcall *rev = NULL;
    while (in) {
        ifl__lcall *n = in->next;
        in->next = rev;
        rev = in;
        in = n;
    }
    while (rev) {
        ifl__lcall *lc = rev;
        rev = lc->next;
        lc->next = rl->active;
        rl->active = lc;
        for (int i = 0; i < lc->n; i++)
            ifl__start(rl, lc, i);
    }
    ifl__cancels(rl);
    ifl__reap(rl);
}

ifl_remote_loop *ifl_remote_loop_new(uv_loop_t *loop) {
    ifl_remote_loop *rl = calloc(1, sizeof *rl);
    if (!rl)
        return NULL;
    rl->loop = loop;
    rl->multi = curl_multi_init();
    if (!rl->multi || uv_async_init(loop, &rl->async, ifl__on_async) != 0) {
        if (rl->multi)
            curl_multi_cleanup(rl->multi);
        free(rl);
        return NULL;
    }
    uv_timer_init(loop, &rl->timer);
    uv_timer_init(loop, &rl->retry);
    uv_check_init(loop, &rl->check);
    rl->timer.data = rl->retry.data = rl->check.data = rl->async.data = rl;
    uv_check_start(&rl->check, ifl__on_check);
    /* None of these keeps the loop alive: the daemon's own handles do. */
    uv_unref((uv_handle_t *)&rl->async);
    uv_unref((uv_handle_t *)&rl->timer);
    uv_unref((uv_handle_t *)&rl->retry);
    uv_unref((uv_handle_t *)&rl->check);
    pthread_mutex_init(&rl->mu, NULL);
    curl_multi_setopt(rl->multi, CURLMOPT_SOCKETFUNCTION, ifl__sockfn);
    curl_multi_setopt(rl->multi, CURLMOPT_SOCKETDATA, rl);
    curl_multi_setopt(rl->multi, CURLMOPT_TIMERFUNCTION, ifl__timerfn);
    curl_multi_setopt(rl->multi, CURLMOPT_TIMERDATA, rl);
    /* Kept-alive connections for the parallel candidates of a few requests. */
    curl_multi_setopt(rl->multi, CURLMOPT_MAXCONNECTS, (long)(4 * ENG_DIFF_MAX_CANDIDATES));
    return rl;
}

bool ifl_remote_loop_submit(ifl_remote_loop *rl, ifl_remote_call *c, ifl_remote_done_fn done,
                            void *ud) {
    ifl__lcall *lc = calloc(1, sizeof *lc);
    if (!lc)
        return false;
    lc->c = c;
    lc->done = done;
    lc->ud = ud;
    lc->n = lc->left = ifl_remote_call_xfers(c);
    pthread_mutex_lock(&rl->mu);
    bool ok = !rl->closed;
    if (ok) {
        lc->next = rl->incoming;
        rl->incoming = lc;
        uv_async_send(&rl->async);
    }
    pthread_mutex_unlock(&rl->mu);
    if (!ok)
        free(lc);
    return ok;
}

void ifl_remote_loop_kick(ifl_remote_loop *rl) {
    pthread_mutex_lock(&rl->mu);
    if (!rl->closed)
        uv_async_send(&rl->async);
    pthread_mutex_unlock(&rl->mu);
}

static void ifl__closed(uv_handle_t *h) {
    ifl_remote_loop *rl = h->data;
    if (--rl->open_handles > 0)
        return;
    pthread_mutex_destroy(&rl->mu);
    free(rl);
}

void ifl_remote_loop_close(ifl_remote_loop *rl) {
    if (!rl)
        return;
    pthread_mutex_lock(&rl->mu);
    rl->closed = true;
    ifl__lcall *in = rl->incoming;
    rl->incoming = NULL;
    pthread_mutex_unlock(&rl->mu);
    while (in) {
        ifl__lcall *n = in->next;
        in->next = rl->active;
        rl->active = in;
        in = n;
    }
    for (ifl__lcall *lc = rl->active; lc; lc = lc->next)
        ifl__drop(rl, lc);
    ifl__reap(rl);
    /* The polls of the sockets libcurl still keeps, then the sockets. */
    while (rl->socks)
        ifl__sock_close(rl, rl->socks);
    curl_multi_cleanup(rl->multi);
    rl->multi = NULL;
    rl->open_handles = 4;
    uv_close((uv_handle_t *)&rl->timer, ifl__closed);
    uv_close((uv_handle_t *)&rl->retry, ifl__closed);
    uv_close((uv_handle_t *)&rl->check, ifl__closed);
    uv_close((uv_handle_t *)&rl->async, ifl__closed);
}
