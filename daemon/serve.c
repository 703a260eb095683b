/* daemon serve: the libuv loop. One lsp_server per session (stdio, one per
 * TCP connection, or both: --listen with --stdio), one provider shared by
 * all. The stdio session owns the process: its end ends the daemon. The loop thread owns every
 * session; the provider's worker talks to it only through uv_async (inside
 * the provider). Nothing here blocks. */
#define _POSIX_C_SOURCE 200809L
#include "daemon.h"
#include "memtrim.h"
#include "provider.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DMN__MAX_PROGRESS 16
/* How often the processId watchdog looks at the editor process. */
#define DMN__PID_POLL_MS 500
/* Bytes queued for a client before its session is ended. */
#define DMN__MAX_WRITE_QUEUE (256 << 20)
/* Log lines waiting for the loop thread before the oldest are dropped. */
#define DMN__LOG_QUEUE 256

typedef struct dmn_daemon dmn_daemon;

typedef struct dmn_session {
    struct dmn_session *next;
    dmn_daemon *d;
    lsp_server *srv;
    bool tcp;
    bool closing;
    uv_stream_t *in;  /* read side (the TCP socket, or stdin) */
    uv_stream_t *out; /* write side (the TCP socket, or stdout); NULL: blocking write(1) */
    uv_fs_t fs_read;  /* stdin when it is a regular file */
    bool in_is_file;
    char file_buf[65536];
    int handles_open; /* libuv handles (and reads) not yet closed */
    /* Keeps the session alive until a close callback frees it, so that it is
     * never freed inside one of its own callbacks. */
    uv_idle_t *keeper;
    bool overflow;   /* the client stopped reading; the session is ending */
    json_t *overlay; /* initializationOptions + didChangeConfiguration */
    struct {
        int daemon, session;
    } progress[DMN__MAX_PROGRESS];
} dmn_session;

struct dmn_host {
    dmn_daemon *d;
};

/* The last infilld/status, for sessions that start later. */
typedef struct dmn__status_copy {
    bool set;
    char *model, *device, *state;
    double last_latency_ms;
    json_t *plan;
} dmn__status_copy;

struct dmn_daemon {
    uv_loop_t *loop;
    dmn_config *cfg;
    lsp_provider_i *provider;
    dmn_host host;
    dmn_session *sessions;
    uv_signal_t sigterm, sigint;
    uv_timer_t pid_timer;
    uv_tcp_t listener;
    bool listening;
    bool stopping;
    int exit_code;
    int next_progress;
    dmn__status_copy status;
    /* Log lines from every thread to the sessions (lsp_logq_hook). */
    lsp_logq *logq;
    uv_async_t log_async;
    bool log_hooked;
    dmn_memtrim trim; /* freed heap back to the OS after a peak */
};

/* ---- log lines to sessions ------------------------------------------------ */

/* Runs on the logging thread with the log lock held. */
static void dmn__log_wake(void *ud) { uv_async_send(ud); }

static void dmn__log_forward(void *ud, const lsp_log_line *line) {
    dmn_daemon *d = ud;
    for (dmn_session *s = d->sessions; s; s = s->next)
        if (!s->closing)
            lsp_server_log_line(s->srv, line);
}

static void dmn__on_log(uv_async_t *a) {
    dmn_daemon *d = a->data;
    lsp_logq_drain(d->logq, dmn__log_forward, d);
}

/* Lines below every session's level are not even formatted: the hook level
 * follows the sessions' traces and "clientLogLevel" settings. */
static void dmn__log_gate(dmn_daemon *d) {
    if (!d->log_hooked)
        return;
    base_log_level lv = BASE_LOG_OFF;
    for (dmn_session *s = d->sessions; s; s = s->next)
        if (!s->closing)
            lv = BASE_MIN(lv, lsp_server_log_wants(s->srv));
    base_log_set_hook_level(lv);
}

/* After this no thread calls the hook, so the async handle may be closed. */
static void dmn__log_unhook(dmn_daemon *d) {
    if (!d->log_hooked)
        return;
    base_log_set_hook(NULL, NULL);
    base_log_set_hook_level(BASE_LOG_OFF);
    d->log_hooked = false;
    uv_close((uv_handle_t *)&d->log_async, NULL);
}

/* ---- writing ------------------------------------------------------------ */

static void dmn__session_close(dmn_session *s);
static void dmn__stop(dmn_daemon *d, int code);

static void dmn__on_overflow(uv_idle_t *h) {
    dmn_session *s = h->data;
    uv_idle_stop(h);
    if (s->tcp)
        dmn__session_close(s);
    else
        dmn__stop(s->d, 1);
}

typedef struct dmn_write {
    uv_write_t req;
    dmn_session *s;
    char data[];
} dmn_write;

/* The client closed its end (EPIPE: an editor that quit without exit, or a
 * closed stdout): nothing more can reach it, so its session ends, on the
 * next loop turn, as when it stops reading; on stdio that ends the daemon. */
static void dmn__write_failed(dmn_session *s, int err) {
    if (s->overflow || s->closing)
        return;
    BASE_LOGW("dmn", "cannot write to the client (%s): ending its session", uv_strerror(err));
    s->overflow = true;
    if (s->keeper)
        uv_idle_start(s->keeper, dmn__on_overflow);
}

/* A session outlives its pending writes: closing its stream cancels them
 * (UV_ECANCELED) before the close callback frees it. */
static void dmn__write_done(uv_write_t *req, int status) {
    dmn_write *w = (dmn_write *)req;
    if (status < 0 && status != UV_ECANCELED)
        dmn__write_failed(w->s, status);
    free(req);
}

static void dmn__hook_write(void *ud, const char *data, size_t len) {
    dmn_session *s = ud;
    if (s->closing)
        return;
    if (!s->out) {
        /* stdout is a file or a terminal we could not open with libuv. */
        while (len) {
            ssize_t n = write(STDOUT_FILENO, data, len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                dmn__write_failed(s, n < 0 ? uv_translate_sys_error(errno) : UV_EIO);
                return;
            }
            data += n;
            len -= (size_t)n;
        }
        return;
    }
    /* A client that stops reading must not make the daemon grow without
     * bound: past the cap its session ends. */
    if (s->overflow)
        return;
    if (uv_stream_get_write_queue_size(s->out) > DMN__MAX_WRITE_QUEUE) {
        BASE_LOGE("dmn", "client is not reading (over %d MiB queued): closing its session",
                  DMN__MAX_WRITE_QUEUE >> 20);
        /* Not from inside the server's own call: on the next loop turn. */
        s->overflow = true;
        if (s->keeper)
            uv_idle_start(s->keeper, dmn__on_overflow);
        return;
    }
    dmn_write *w = malloc(sizeof(*w) + len);
    if (!w)
        return;
    memcpy(w->data, data, len);
    w->s = s;
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    int rc = uv_write(&w->req, s->out, &b, 1, dmn__write_done);
    if (rc < 0) {
        free(w);
        dmn__write_failed(s, rc);
    }
}

/* ---- session life cycle -------------------------------------------------- */

static void dmn__maybe_finish(dmn_daemon *d);

static void dmn__session_unlink_free(dmn_session *s) {
    dmn_daemon *d = s->d;
    for (dmn_session **pp = &d->sessions; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    lsp_server_free(s->srv);
    json_decref(s->overlay);
    free(s);
    dmn__log_gate(d);
    dmn__maybe_finish(d);
}

static void dmn__handle_closed(uv_handle_t *h) {
    dmn_session *s = h->data;
    free(h);
    if (--s->handles_open == 0)
        dmn__session_unlink_free(s);
}

static void dmn__close_handle(uv_stream_t *h) {
    if (h && !uv_is_closing((uv_handle_t *)h))
        uv_close((uv_handle_t *)h, dmn__handle_closed);
}

static void dmn__shutdown_done(uv_shutdown_t *req, int status) {
    (void)status;
    dmn_session *s = req->data;
    free(req);
    dmn__close_handle(s->out);
    if (s->in != s->out)
        dmn__close_handle(s->in);
}

/* Ends a session: stops reading, lets queued writes drain, then closes. */
static void dmn__session_close(dmn_session *s) {
    if (s->closing)
        return;
    if (s->in && !s->in_is_file)
        uv_read_stop(s->in);
    /* Cancel the provider's work for this session now; the server is freed
     * once its handles are closed. */
    lsp_server_eof(s->srv);
    if (s->keeper) {
        uv_close((uv_handle_t *)s->keeper, dmn__handle_closed);
        s->keeper = NULL;
    }
    uv_shutdown_t *req = s->out ? malloc(sizeof(*req)) : NULL;
    if (req) {
        req->data = s;
        if (uv_shutdown(req, s->out, dmn__shutdown_done) == 0) {
            s->closing = true;
            return;
        }
        free(req);
    }
    s->closing = true;
    dmn__close_handle(s->out);
    if (s->in != s->out)
        dmn__close_handle(s->in);
}

static void dmn__hook_exit(void *ud, lsp_server *srv, int code) {
    (void)srv;
    dmn_session *s = ud;
    BASE_LOGI("dmn", "session ended by exit (code %d)", code);
    if (!s->tcp)
        dmn__stop(s->d, code);
    else
        dmn__session_close(s);
}

/* Applies a session's overlay: effective settings to the server and the
 * provider (which reloads a changed model). */
static void dmn__apply_settings(dmn_session *s) {
    json_t *e = dmn_config_effective(s->d->cfg, s->overlay);
    if (!e)
        return;
    lsp_server_set_settings(s->srv, e);
    if (s->d->provider && s->d->provider->configure) {
        base_status st = s->d->provider->configure(s->d->provider->ud, e);
        if (st != BASE_OK) {
            char msg[256];
            snprintf(msg, sizeof(msg), "infilld: settings not applied: %s", base_status_str(st));
            lsp_server_show_message(s->srv, LSP_MSG_ERROR, msg);
        }
    }
    json_decref(e);
    dmn__log_gate(s->d);
}

/* Constant-time comparison: the time depends on the length of the offered
 * token only, never on how much of the secret it matches nor on the secret's
 * length (the loop runs over the offered bytes, reading the secret
 * cyclically; tokens have at least 8 characters, so lb > 0). */
static bool dmn__token_eq(const char *offered, const char *secret) {
    size_t la = strlen(offered), lb = strlen(secret);
    if (lb == 0)
        return false;
    volatile unsigned char diff = la != lb;
    for (size_t i = 0; i < la; i++)
        diff |= (unsigned char)(offered[i] ^ secret[i % lb]);
    return diff == 0;
}

static base_status dmn__hook_initialize(void *ud, lsp_server *srv, const json_t *params, char *msg,
                                        size_t msg_len) {
    (void)srv;
    dmn_session *s = ud;
    json_t *io = json_object_get(params, "initializationOptions");
    if (s->d->cfg->token) {
        const char *t = json_string_value(json_object_get(io, "token"));
        if (!t || !dmn__token_eq(t, s->d->cfg->token)) {
            snprintf(msg, msg_len, "initializationOptions.token is missing or wrong");
            BASE_LOGW("dmn", "session refused: bad or missing token");
            return BASE_ERR_DENIED;
        }
    }
    if (json_is_object(io)) {
        json_decref(s->overlay);
        s->overlay = json_deep_copy(io);
        json_object_del(s->overlay, "token");
    }
    dmn__apply_settings(s);
    return BASE_OK;
}

static void dmn__hook_configuration(void *ud, lsp_server *srv, const json_t *settings) {
    (void)srv;
    dmn_session *s = ud;
    if (!json_is_object(settings))
        return;
    if (!s->overlay)
        s->overlay = json_object();
    const json_t *o = settings;
    if (json_is_object(json_object_get(settings, "infilld")))
        o = json_object_get(settings, "infilld");
    json_object_update(s->overlay, (json_t *)o);
    json_object_del(s->overlay, "token");
    dmn__apply_settings(s);
}

/* A new session learns the model's current state at once. */
static void dmn__hook_initialized(void *ud, lsp_server *srv) {
    dmn_session *s = ud;
    const dmn__status_copy *c = &s->d->status;
    if (!c->set)
        return;
    lsp_status st = {.model = c->model,
                     .device = c->device,
                     .state = c->state,
                     .last_latency_ms = c->last_latency_ms,
                     .plan = c->plan};
    lsp_server_status(srv, &st);
}

static bool dmn__hook_allow(void *ud, lsp_server *srv, const lsp_doc *doc) {
    (void)ud;
    return dmn_config_allows(lsp_server_settings(srv), lsp_doc_uri(doc), lsp_doc_language_id(doc));
}

static bool dmn__hook_inline_selector(void *ud, lsp_server *srv, json_t **selector) {
    (void)ud;
    return dmn_config_inline_selector(lsp_server_settings(srv), selector);
}

static dmn_session *dmn__session_new(dmn_daemon *d, bool tcp) {
    dmn_session *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->d = d;
    s->tcp = tcp;
    lsp_server_hooks hooks = {
        .write = dmn__hook_write,
        .exit = dmn__hook_exit,
        .initialize = dmn__hook_initialize,
        .configuration = dmn__hook_configuration,
        .allow = dmn__hook_allow,
        .initialized = dmn__hook_initialized,
        .inline_selector = dmn__hook_inline_selector,
        .ud = s,
    };
    lsp_server_opts opts = {.max_message = d->cfg->max_message, .version = INFILLD_VERSION};
    base_status st;
    s->srv = lsp_server_new(&hooks, d->provider, &opts, &st);
    if (!s->srv) {
        BASE_LOGE("dmn", "cannot start a session: %s", base_status_str(st));
        free(s);
        return NULL;
    }
    lsp_server_set_settings(s->srv, d->cfg->settings);
    s->keeper = malloc(sizeof(*s->keeper));
    if (!s->keeper || uv_idle_init(d->loop, s->keeper) != 0) {
        free(s->keeper);
        lsp_server_free(s->srv);
        free(s);
        return NULL;
    }
    s->keeper->data = s;
    s->handles_open = 1;
    s->next = d->sessions;
    d->sessions = s;
    return s;
}

/* ---- reading --------------------------------------------------------------- */

static void dmn__alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)h;
    buf->base = malloc(suggested);
    buf->len = buf->base ? suggested : 0;
}

static void dmn__on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    dmn_session *s = stream->data;
    if (nread > 0 && !s->closing) {
        base_status st = lsp_server_feed(s->srv, buf->base, (size_t)nread);
        if (st == BASE_ERR_NOMEM)
            BASE_LOGE("dmn", "out of memory reading a message");
        dmn__log_gate(s->d); /* $/setTrace, initialize or shutdown may change it */
    }
    free(buf->base);
    if (nread < 0 && !s->closing) {
        if (nread != UV_EOF)
            BASE_LOGW("dmn", "read failed: %s", uv_strerror((int)nread));
        int code = lsp_server_eof(s->srv);
        BASE_LOGI("dmn", "peer closed the connection");
        if (!s->tcp)
            dmn__stop(s->d, lsp_server_exited(s->srv) ? code : 1);
        else
            dmn__session_close(s);
    }
}

/* stdin as a regular file: one uv_fs_read at a time, counted as an open
 * handle so that the session outlives the pending read. */
static void dmn__on_file_read(uv_fs_t *req);

static bool dmn__file_read_next(dmn_session *s) {
    uv_buf_t b = uv_buf_init(s->file_buf, sizeof(s->file_buf));
    s->fs_read.data = s;
    if (uv_fs_read(s->d->loop, &s->fs_read, STDIN_FILENO, &b, 1, -1, dmn__on_file_read) != 0)
        return false;
    s->handles_open++;
    return true;
}

static void dmn__on_file_read(uv_fs_t *req) {
    dmn_session *s = req->data;
    ssize_t n = req->result;
    uv_fs_req_cleanup(req);
    s->handles_open--;
    if (s->closing) {
        if (s->handles_open == 0)
            dmn__session_unlink_free(s);
        return;
    }
    if (n > 0) {
        lsp_server_feed(s->srv, s->file_buf, (size_t)n);
        dmn__log_gate(s->d);
        if (s->closing) {
            if (s->handles_open == 0)
                dmn__session_unlink_free(s);
            return;
        }
        if (dmn__file_read_next(s))
            return;
    }
    int code = lsp_server_eof(s->srv);
    dmn__stop(s->d, lsp_server_exited(s->srv) ? code : 1);
}

/* ---- stdio ------------------------------------------------------------------ */

static uv_stream_t *dmn__open_fd(dmn_daemon *d, dmn_session *s, int fd, bool readable) {
    uv_handle_type t = uv_guess_handle(fd);
    if (t == UV_NAMED_PIPE) {
        uv_pipe_t *p = malloc(sizeof(*p));
        if (!p || uv_pipe_init(d->loop, p, 0) != 0 || uv_pipe_open(p, fd) != 0) {
            free(p);
            return NULL;
        }
        p->data = s;
        s->handles_open++;
        return (uv_stream_t *)p;
    }
    if (t == UV_TTY) {
        uv_tty_t *tty = malloc(sizeof(*tty));
        if (!tty || uv_tty_init(d->loop, tty, fd, readable) != 0) {
            free(tty);
            return NULL;
        }
        tty->data = s;
        s->handles_open++;
        return (uv_stream_t *)tty;
    }
    return NULL;
}

static int dmn__start_stdio(dmn_daemon *d) {
    dmn_session *s = dmn__session_new(d, false);
    if (!s)
        return -1;
    s->out = dmn__open_fd(d, s, STDOUT_FILENO, false);
    s->in = dmn__open_fd(d, s, STDIN_FILENO, true);
    if (s->in) {
        if (uv_read_start(s->in, dmn__alloc, dmn__on_read) != 0)
            return -1;
    } else {
        /* stdin is a regular file (or /dev/null): read it with uv_fs. */
        s->in_is_file = true;
        if (!dmn__file_read_next(s))
            return -1;
    }
    BASE_LOGI("dmn", "serving LSP on stdio");
    return 0;
}

/* ---- TCP -------------------------------------------------------------------- */

base_status dmn_parse_listen(const char *spec, void *out, bool *loopback) {
    if (!spec || !out || !loopback)
        return BASE_ERR_INVALID;
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host))
        return BASE_ERR_INVALID;
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || colon[1] == '\0' || port < 0 || port > 65535)
        return BASE_ERR_INVALID;
    size_t hl = strlen(host);
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof(host), "127.0.0.1");
    struct sockaddr_in *a4 = out;
    struct sockaddr_in6 *a6 = out;
    memset(out, 0, sizeof(struct sockaddr_storage));
    if (uv_ip4_addr(host, (int)port, a4) == 0) {
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        return BASE_OK;
    }
    if (uv_ip6_addr(host, (int)port, a6) == 0) {
        *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        return BASE_OK;
    }
    return BASE_ERR_INVALID;
}

static void dmn__on_connection(uv_stream_t *server, int status) {
    dmn_daemon *d = server->data;
    if (status < 0 || d->stopping) {
        BASE_LOGW("dmn", "accept failed: %s", uv_strerror(status));
        return;
    }
    dmn_session *s = dmn__session_new(d, true);
    uv_tcp_t *c = malloc(sizeof(*c));
    if (!s || !c || uv_tcp_init(d->loop, c) != 0) {
        free(c);
        if (s)
            dmn__session_close(s);
        return;
    }
    c->data = s;
    s->handles_open++;
    s->in = s->out = (uv_stream_t *)c;
    if (uv_accept(server, s->in) != 0 || uv_read_start(s->in, dmn__alloc, dmn__on_read) != 0) {
        dmn__session_close(s);
        return;
    }
    uv_tcp_nodelay(c, 1);
    BASE_LOGI("dmn", "session opened (TCP)");
}

static int dmn__start_tcp(dmn_daemon *d) {
    struct sockaddr_storage addr;
    bool loopback = false;
    if (dmn_parse_listen(d->cfg->listen, &addr, &loopback) != BASE_OK) {
        BASE_LOGE("dmn", "--listen %s: expected HOST:PORT with a numeric address", d->cfg->listen);
        return -1;
    }
    if (!loopback && !d->cfg->allow_remote) {
        BASE_LOGE("dmn",
                  "--listen %s is not a loopback address: refused (use --allow-remote with "
                  "--token-file to serve other machines)",
                  d->cfg->listen);
        return -1;
    }
    if (uv_tcp_init(d->loop, &d->listener) != 0)
        return -1;
    d->listener.data = d;
    d->listening = true;
    int rc = uv_tcp_bind(&d->listener, (const struct sockaddr *)&addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&d->listener, 16, dmn__on_connection);
    if (rc != 0) {
        BASE_LOGE("dmn", "cannot listen on %s: %s", d->cfg->listen, uv_strerror(rc));
        return -1;
    }
    struct sockaddr_storage bound;
    int blen = sizeof(bound);
    char ip[64] = "?";
    int port = 0;
    if (uv_tcp_getsockname(&d->listener, (struct sockaddr *)&bound, &blen) == 0) {
        if (bound.ss_family == AF_INET) {
            uv_ip4_name((struct sockaddr_in *)&bound, ip, sizeof(ip));
            port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
        } else {
            uv_ip6_name((struct sockaddr_in6 *)&bound, ip, sizeof(ip));
            port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
        }
    }
    /* Always on stderr (scripts and tests read the port from it). */
    fprintf(stderr, "infilld: listening on %s:%d\n", ip, port);
    fflush(stderr);
    return 0;
}

/* ---- watchdog, signals, shutdown -------------------------------------------- */

static void dmn__on_pid_timer(uv_timer_t *t) {
    dmn_daemon *d = t->data;
    for (dmn_session *s = d->sessions, *next; s; s = next) {
        next = s->next;
        int64_t pid = lsp_server_process_id(s->srv);
        if (pid <= 0 || s->closing)
            continue;
        if (kill((pid_t)pid, 0) == -1 && errno == ESRCH) {
            BASE_LOGI("dmn", "editor process %lld is gone: ending its session", (long long)pid);
            if (s->tcp)
                dmn__session_close(s);
            else
                dmn__stop(d, 1);
        }
    }
}

static void dmn__on_signal(uv_signal_t *h, int signum) {
    dmn_daemon *d = h->data;
    BASE_LOGI("dmn", "signal %d: shutting down", signum);
    dmn__stop(d, 0);
}

static void dmn__noop_close(uv_handle_t *h) { (void)h; }

/* Once stopping and every session is gone, close the daemon's own handles so
 * that uv_run returns. */
static void dmn__maybe_finish(dmn_daemon *d) {
    if (!d->stopping || d->sessions)
        return;
    dmn__log_unhook(d);
    if (!uv_is_closing((uv_handle_t *)&d->sigterm))
        uv_close((uv_handle_t *)&d->sigterm, dmn__noop_close);
    if (!uv_is_closing((uv_handle_t *)&d->sigint))
        uv_close((uv_handle_t *)&d->sigint, dmn__noop_close);
    if (!uv_is_closing((uv_handle_t *)&d->pid_timer))
        uv_close((uv_handle_t *)&d->pid_timer, dmn__noop_close);
    if (d->listening && !uv_is_closing((uv_handle_t *)&d->listener))
        uv_close((uv_handle_t *)&d->listener, dmn__noop_close);
    dmn_memtrim_stop(&d->trim);
}

static void dmn__stop(dmn_daemon *d, int code) {
    if (d->stopping)
        return;
    d->stopping = true;
    d->exit_code = code;
    for (dmn_session *s = d->sessions, *next; s; s = next) {
        next = s->next;
        dmn__session_close(s);
    }
    dmn__maybe_finish(d);
}

/* ---- host: provider → every session ----------------------------------------- */

static char *dmn__dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

void dmn_host_status(dmn_host *h, const lsp_status *st) {
    if (h && st) {
        dmn__status_copy *c = &h->d->status;
        free(c->model);
        free(c->device);
        free(c->state);
        c->model = dmn__dup_or_null(st->model);
        c->device = dmn__dup_or_null(st->device);
        c->state = dmn__dup_or_null(st->state);
        c->last_latency_ms = st->last_latency_ms;
        json_decref(c->plan);
        c->plan = st->plan ? json_deep_copy(st->plan) : NULL;
        c->set = true;
    }
    for (dmn_session *s = h ? h->d->sessions : NULL; s; s = s->next)
        if (!s->closing)
            lsp_server_status(s->srv, st);
}

void dmn_host_show_message(dmn_host *h, int type, const char *msg) {
    if (msg)
        BASE_LOGW("dmn", "%s", msg);
    for (dmn_session *s = h ? h->d->sessions : NULL; s; s = s->next)
        if (!s->closing && lsp_server_initialized(s->srv))
            lsp_server_show_message(s->srv, type, msg);
}

int dmn_host_progress_begin(dmn_host *h, const char *title, const char *message) {
    if (!h)
        return 0;
    int handle = ++h->d->next_progress;
    bool any = false;
    for (dmn_session *s = h->d->sessions; s; s = s->next) {
        if (s->closing)
            continue;
        int sh = lsp_server_progress_begin(s->srv, title, message);
        for (int i = 0; sh && i < DMN__MAX_PROGRESS; i++)
            if (!s->progress[i].daemon) {
                s->progress[i].daemon = handle;
                s->progress[i].session = sh;
                any = true;
                break;
            }
    }
    return any ? handle : 0;
}

static int dmn__progress_of(dmn_session *s, int handle, bool release) {
    for (int i = 0; i < DMN__MAX_PROGRESS; i++)
        if (s->progress[i].daemon == handle) {
            int sh = s->progress[i].session;
            if (release)
                s->progress[i].daemon = 0;
            return sh;
        }
    return 0;
}

void dmn_host_progress_report(dmn_host *h, int handle, int percent, const char *message) {
    for (dmn_session *s = h && handle ? h->d->sessions : NULL; s; s = s->next) {
        int sh = dmn__progress_of(s, handle, false);
        if (sh && !s->closing)
            lsp_server_progress_report(s->srv, sh, percent, message);
    }
}

void dmn_host_progress_end(dmn_host *h, int handle, const char *message) {
    for (dmn_session *s = h && handle ? h->d->sessions : NULL; s; s = s->next) {
        int sh = dmn__progress_of(s, handle, true);
        if (sh && !s->closing)
            lsp_server_progress_end(s->srv, sh, message);
    }
}

/* ---- entry ------------------------------------------------------------------- */

int dmn_serve(dmn_config *cfg) {
    dmn_daemon d;
    memset(&d, 0, sizeof(d));
    d.cfg = cfg;
    d.host.d = &d;
    d.exit_code = 1;
    signal(SIGPIPE, SIG_IGN);
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) {
        BASE_LOGE("dmn", "cannot start the event loop");
        return 2;
    }
    d.loop = &loop;
    base_status st;
    d.provider = dmn_provider_new(cfg, &loop, &d.host, &st);
    if (!d.provider) {
        BASE_LOGE("dmn", "cannot create the completion provider: %s", base_status_str(st));
        uv_loop_close(&loop);
        return 2;
    }
    d.logq = lsp_logq_new(DMN__LOG_QUEUE, dmn__log_wake, &d.log_async);
    if (d.logq && uv_async_init(&loop, &d.log_async, dmn__on_log) == 0) {
        d.log_async.data = &d;
        base_log_set_hook_level(BASE_LOG_OFF); /* until a session asks */
        base_log_set_hook(lsp_logq_hook, d.logq);
        d.log_hooked = true;
    } else {
        BASE_LOGW("dmn", "log lines will not be forwarded to clients");
    }
    uv_signal_init(&loop, &d.sigterm);
    uv_signal_init(&loop, &d.sigint);
    d.sigterm.data = d.sigint.data = &d;
    uv_signal_start(&d.sigterm, dmn__on_signal, SIGTERM);
    uv_signal_start(&d.sigint, dmn__on_signal, SIGINT);
    uv_timer_init(&loop, &d.pid_timer);
    d.pid_timer.data = &d;
    uv_timer_start(&d.pid_timer, dmn__on_pid_timer, DMN__PID_POLL_MS, DMN__PID_POLL_MS);
    dmn_memtrim_start(&d.trim, &loop);

    /* --listen with --stdio: the editor that started the daemon on stdio and
     * any number of TCP clients share the one provider (model and worker). */
    int rc = cfg->listen ? dmn__start_tcp(&d) : 0;
    if (rc == 0 && (!cfg->listen || cfg->stdio))
        rc = dmn__start_stdio(&d);
    if (rc != 0) {
        d.exit_code = 2;
        d.stopping = false;
        dmn__stop(&d, 2);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    /* The provider goes after every session has been closed. */
    dmn_provider_free(d.provider);
    uv_run(&loop, UV_RUN_DEFAULT); /* callbacks the provider's teardown queued */
    lsp_logq_free(d.logq);
    free(d.status.model);
    free(d.status.device);
    free(d.status.state);
    json_decref(d.status.plan);
    if (uv_loop_close(&loop) != 0)
        BASE_LOGW("dmn", "event loop closed with handles still open");
    return d.exit_code;
}
