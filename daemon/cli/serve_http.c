/* infilld serve-http: the local engine as an OpenAI-style FIM server, so a
 * team with one GPU box points every editor's remote source at it.
 *
 * GNU libmicrohttpd does HTTP (and TLS through GnuTLS); nothing here parses
 * HTTP. It runs a thread per connection; each request thread queues a job
 * for the one thread that owns the model (ifl_model is used by one thread at
 * a time) and waits for it, watching its socket: a client that hangs up
 * cancels its job, queued or running (the engine polls the cancel flag
 * between steps).
 *
 * Batching: waiting requests with the same sampler parameters run as one
 * padded batch (ifl_infill_text_multi → eng_diffuse_multi), up to
 * --batch-max, after a --batch-ms window; docs/PERFORMANCE.md has the cost.
 *
 * Endpoints: POST /v1/fim/completions (prompt, suffix, max_tokens, stop,
 * temperature, stream, seed), GET /health, GET /v1/models. Limits: a bounded
 * queue (503 when full), a per-client concurrency limit (429), a request
 * size limit (413), a bearer token (401). Off loopback it requires TLS and a
 * token or refuses to start. */
#define _GNU_SOURCE
#include "cli.h"

#include "base.h"
#include "engine.h"
#include "infill.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#define SH__MAX_CLIENTS 256
#define SH__MAX_STOPS 4
#define SH__MAX_BATCH 16

typedef struct sh__job {
    char *prefix, *suffix;
    size_t pl, sl;
    int max_tokens;
    float temperature;
    uint64_t seed;
    char *stops[SH__MAX_STOPS];
    int n_stops;
    volatile int cancel;
    bool done;
    base_status st;
    char *text;
    size_t len;
    int n_prompt, n_completion;
    double ms;
    uint64_t arrived_ns;
    char err[256];
    struct sh__job *next;
} sh__job;

typedef struct sh__client {
    char addr[INET6_ADDRSTRLEN];
    int active;
} sh__client;

typedef struct sh__server {
    ifl_model *model;
    const char *model_id;
    char *token;
    int queue_cap, per_client, max_tokens;
    int batch_ms, batch_max; /* batching window after the first waiting job; batch size */
    size_t max_body;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    sh__job *head, *tail;
    int queued;
    bool stopping;
    sh__job **running; /* the run in progress (model thread), under mu */
    int n_running;
    volatile int run_cancel;
    uint64_t n_batches, n_batched;
    sh__client clients[SH__MAX_CLIENTS];
    uint64_t next_id;
    /* Counters for the log at exit. */
    uint64_t n_ok, n_429, n_503, n_cancelled, n_err;
} sh__server;

typedef struct sh__req {
    base_buf body;
    bool too_large;
    char client[INET6_ADDRSTRLEN];
} sh__req;

static void sh__job_free(sh__job *j) {
    if (!j)
        return;
    free(j->prefix);
    free(j->suffix);
    for (int i = 0; i < j->n_stops; i++)
        free(j->stops[i]);
    free(j->text);
    free(j);
}

/* ---- the model thread ---------------------------------------------------------------- */

static void sh__req_of(const sh__job *j, ifl_text_req *tr) {
    memset(tr, 0, sizeof *tr);
    tr->prefix = j->prefix;
    tr->prefix_len = j->pl;
    tr->suffix = j->suffix;
    tr->suffix_len = j->sl;
    eng_diff_params_default(&tr->params);
    tr->params.n_hole = j->max_tokens;
    tr->params.candidates = 1;
    tr->params.temperature = j->temperature;
    tr->params.seed = j->seed;
}

/* text[0..n) with every byte that is not part of a valid UTF-8 sequence
 * replaced by U+FFFD (NUL-terminated, caller frees). A hole's tokens may end
 * inside a character, and an untrained model's often do; JSON needs valid
 * UTF-8 (jansson refuses the string, and the answer was lost), and replacing
 * is what detokenizers of other servers do (errors="replace"). */
static char *sh__utf8_clean(const char *text, size_t n, size_t *out_len) {
    base_buf b;
    base_buf_init(&b);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = base_utf8_decode(text + i, n - i, &cp);
        bool bad = cp == 0xFFFD && l == 1 && (unsigned char)text[i] >= 0x80;
        if (base_buf_append(&b, bad ? "\xEF\xBF\xBD" : text + i, bad ? 3 : l) != BASE_OK) {
            base_buf_deinit(&b);
            return NULL;
        }
        i += l;
    }
    if (base_buf_append(&b, "", 1) != BASE_OK) {
        base_buf_deinit(&b);
        return NULL;
    }
    *out_len = b.len - 1;
    return b.data;
}

/* The job's answer from its run: the text as valid UTF-8, cut at the first
 * stop sequence (a stop is valid UTF-8, so the cut falls between characters). */
static void sh__finish(sh__server *s, sh__job *j, base_status st, ifl_text_res *res, double ms) {
    j->st = st;
    j->ms = ms;
    if (j->st == BASE_OK && res->n_cand > 0) {
        j->text = sh__utf8_clean(res->cand[0].text, res->cand[0].len, &j->len);
        if (j->text) {
            for (int i = 0; i < j->n_stops; i++) {
                const char *hit = strstr(j->text, j->stops[i]);
                if (hit && (size_t)(hit - j->text) < j->len)
                    j->len = (size_t)(hit - j->text);
            }
            j->text[j->len] = 0;
        } else {
            j->st = BASE_ERR_NOMEM;
        }
        j->n_prompt = res->n_prefix_tokens + res->n_suffix_tokens;
        j->n_completion = res->n_tokens;
    } else if (j->st == BASE_OK) {
        j->st = BASE_ERR_STATE;
    }
    if (j->st == BASE_ERR_TOO_LARGE)
        snprintf(j->err, sizeof j->err,
                 "the prompt, suffix and max_tokens (%d) do not fit the model's %d-token context",
                 j->max_tokens, ifl_model_max_len(s->model));
    else if (j->st != BASE_OK && j->st != BASE_ERR_CANCELLED)
        snprintf(j->err, sizeof j->err, "%s", base_status_str(j->st));
}

/* Runs jobs[0..n) (n > 1: one padded batch of the engine). The run is
 * cancelled once every one of its clients has hung up (s->run_cancel). */
static void sh__run(sh__server *s, sh__job **jobs, int n) {
    ifl_text_req tr[SH__MAX_BATCH];
    ifl_text_res res[SH__MAX_BATCH];
    for (int i = 0; i < n; i++)
        sh__req_of(jobs[i], &tr[i]);
    uint64_t t0 = base_now_ns();
    base_status st = n == 1 ? ifl_infill_text(s->model, &tr[0], &s->run_cancel, &res[0])
                            : ifl_infill_text_multi(s->model, tr, n, &s->run_cancel, res);
    double ms = base_ms_since(t0);
    /* A job's flag is written under s->mu by its client's thread. */
    bool cancelled[SH__MAX_BATCH];
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < n; i++)
        cancelled[i] = jobs[i]->cancel;
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < n; i++) {
        if (st != BASE_OK)
            memset(&res[i], 0, sizeof res[i]);
        sh__finish(s, jobs[i], cancelled[i] ? BASE_ERR_CANCELLED : st, &res[i], ms);
        ifl_text_res_free(&res[i]);
    }
    s->n_batches++;
    s->n_batched += (uint64_t)n;
}

/* Can job j share a batch with first? (The engine runs one set of sampler
 * parameters per batch.) */
static bool sh__compatible(const sh__job *first, const sh__job *j) {
    return j->max_tokens == first->max_tokens && j->temperature == first->temperature &&
           j->seed == first->seed;
}

static void *sh__worker(void *ud) {
    sh__server *s = ud;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->stopping)
            pthread_cond_wait(&s->work, &s->mu);
        if (s->stopping && !s->head)
            break;
        /* Batching: wait up to batch_ms after the first job's arrival for
         * others, unless a full batch is already waiting. */
        if (s->batch_max > 1 && s->batch_ms > 0) {
            uint64_t until = s->head->arrived_ns + (uint64_t)s->batch_ms * 1000000u;
            while (s->queued < s->batch_max && !s->stopping) {
                uint64_t now = base_now_ns();
                if (now >= until)
                    break;
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                uint64_t wait = until - now;
                ts.tv_sec += (time_t)(wait / 1000000000u);
                ts.tv_nsec += (long)(wait % 1000000000u);
                if (ts.tv_nsec >= 1000000000L) {
                    ts.tv_sec++;
                    ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&s->work, &s->mu, &ts);
            }
        }
        /* Jobs whose clients left while they waited end here. */
        for (sh__job **pp = &s->head, *prev = NULL; *pp;) {
            sh__job *j = *pp;
            if (!j->cancel) {
                prev = j;
                pp = &j->next;
                continue;
            }
            *pp = j->next;
            if (s->tail == j)
                s->tail = prev;
            s->queued--;
            j->st = BASE_ERR_CANCELLED;
            j->done = true;
            pthread_cond_broadcast(&s->done);
        }
        /* The first job and the compatible ones behind it. */
        sh__job *jobs[SH__MAX_BATCH];
        int n = 0;
        const sh__job *first = s->head;
        for (sh__job **pp = &s->head, *prev = NULL; *pp && n < s->batch_max;) {
            sh__job *j = *pp;
            if (n > 0 && !sh__compatible(first, j)) {
                prev = j;
                pp = &j->next;
                continue;
            }
            *pp = j->next;
            if (s->tail == j)
                s->tail = prev;
            s->queued--;
            j->next = NULL;
            jobs[n++] = j;
        }
        if (n == 0)
            continue;
        s->running = jobs;
        s->n_running = n;
        s->run_cancel = 0;
        pthread_mutex_unlock(&s->mu);
        sh__run(s, jobs, n);
        pthread_mutex_lock(&s->mu);
        s->running = NULL;
        s->n_running = 0;
        for (int i = 0; i < n; i++)
            jobs[i]->done = true;
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- HTTP ------------------------------------------------------------------------------- */

static enum MHD_Result sh__send(struct MHD_Connection *c, unsigned code, json_t *body,
                                const char *retry_after) {
    char *s = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!s) {
        /* An answer that cannot be encoded is still answered (MHD_NO would
         * close the connection with nothing sent). */
        static const char SH__ENC[] =
            "{\"error\":{\"message\":\"the answer could not be encoded as JSON\","
            "\"type\":\"server_error\"}}";
        code = MHD_HTTP_INTERNAL_SERVER_ERROR;
        retry_after = NULL;
        s = strdup(SH__ENC);
        if (!s)
            return MHD_NO;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(s), s, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (retry_after)
        MHD_add_response_header(r, "Retry-After", retry_after);
    enum MHD_Result q = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return q;
}

static enum MHD_Result sh__error(struct MHD_Connection *c, unsigned code, const char *type,
                                 const char *msg, const char *retry_after) {
    return sh__send(c, code, json_pack("{s:{s:s,s:s}}", "error", "message", msg, "type", type),
                    retry_after);
}

static bool sh__token_ok(const sh__server *s, struct MHD_Connection *c) {
    if (!s->token)
        return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!h || strncmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    size_t a = strlen(h), b = strlen(s->token);
    /* Constant time in the token's length. */
    unsigned char diff = (unsigned char)(a != b);
    for (size_t i = 0; i < b; i++)
        diff |= (unsigned char)(s->token[i] ^ (i < a ? h[i] : 0));
    return diff == 0;
}

static sh__client *sh__client_get(sh__server *s, const char *addr) {
    sh__client *free_slot = NULL;
    for (int i = 0; i < SH__MAX_CLIENTS; i++) {
        if (s->clients[i].active > 0 && strcmp(s->clients[i].addr, addr) == 0)
            return &s->clients[i];
        if (!free_slot && s->clients[i].active == 0)
            free_slot = &s->clients[i];
    }
    if (free_slot)
        snprintf(free_slot->addr, sizeof free_slot->addr, "%s", addr);
    return free_slot;
}

/* Has the client closed its end? (A peek at the socket; no HTTP is read.) */
static bool sh__hung_up(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return false;
    struct pollfd p = {ci->connect_fd, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) <= 0)
        return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR))
        return true;
    char b;
    ssize_t n = recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0;
}

static enum MHD_Result sh__fim(sh__server *s, struct MHD_Connection *c, sh__req *rq) {
    json_error_t je;
    json_t *o = json_loadb(rq->body.data ? rq->body.data : "", rq->body.len, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return sh__error(c, MHD_HTTP_BAD_REQUEST, "invalid_request_error",
                         "the body must be a JSON object", NULL);
    }
    json_t *prompt = json_object_get(o, "prompt"), *suffix = json_object_get(o, "suffix");
    json_t *mt = json_object_get(o, "max_tokens"), *stop = json_object_get(o, "stop");
    json_t *temp = json_object_get(o, "temperature"), *n = json_object_get(o, "n");
    const char *bad = NULL;
    if (!json_is_string(prompt))
        bad = "prompt must be a string";
    else if (suffix && !json_is_string(suffix) && !json_is_null(suffix))
        bad = "suffix must be a string";
    else if (mt && !json_is_null(mt) && (!json_is_integer(mt) || json_integer_value(mt) < 1))
        bad = "max_tokens must be a positive integer";
    else if (stop && !json_is_null(stop) && !json_is_string(stop) &&
             !(json_is_array(stop) && json_array_size(stop) <= SH__MAX_STOPS))
        bad = "stop must be a string or an array of at most 4 strings";
    else if (temp && !json_is_null(temp) && !json_is_number(temp))
        bad = "temperature must be a number";
    else if (n && !json_is_null(n) && !(json_is_integer(n) && json_integer_value(n) == 1))
        bad = "only n = 1 is served";
    if (bad) {
        json_decref(o);
        return sh__error(c, MHD_HTTP_BAD_REQUEST, "invalid_request_error", bad, NULL);
    }
    sh__job *j = calloc(1, sizeof *j);
    if (!j) {
        json_decref(o);
        return MHD_NO;
    }
    j->pl = json_string_length(prompt);
    j->prefix = malloc(j->pl + 1);
    j->sl = json_is_string(suffix) ? json_string_length(suffix) : 0;
    j->suffix = malloc(j->sl + 1);
    if (j->prefix)
        memcpy(j->prefix, json_string_value(prompt), j->pl + 1);
    if (j->suffix)
        memcpy(j->suffix, j->sl ? json_string_value(suffix) : "", j->sl + 1);
    /* A larger hole than the limit is served at the limit (as a server's
     * context limit would). */
    j->max_tokens = json_is_integer(mt) ? (int)BASE_MIN(json_integer_value(mt), s->max_tokens)
                                        : BASE_MIN(16, s->max_tokens);
    j->temperature = json_is_number(temp) ? (float)json_number_value(temp) : 0.0f;
    json_t *seed = json_object_get(o, "seed");
    j->seed = json_is_integer(seed) ? (uint64_t)json_integer_value(seed) : 0;
    if (json_is_string(stop)) {
        j->stops[j->n_stops++] = strdup(json_string_value(stop));
    } else if (json_is_array(stop)) {
        size_t i;
        json_t *v;
        json_array_foreach(stop, i, v) if (json_is_string(v) && json_string_length(v) > 0)
            j->stops[j->n_stops++] = strdup(json_string_value(v));
    }
    bool stream = json_is_true(json_object_get(o, "stream"));
    json_decref(o);
    for (int i = 0; i < j->n_stops; i++)
        if (!j->stops[i]) {
            sh__job_free(j);
            return MHD_NO;
        }
    if (!j->prefix || !j->suffix) {
        sh__job_free(j);
        return MHD_NO;
    }

    /* Admission: the client's own limit, then the queue's. */
    pthread_mutex_lock(&s->mu);
    sh__client *cl = sh__client_get(s, rq->client);
    if (!cl || cl->active >= s->per_client) {
        s->n_429++;
        pthread_mutex_unlock(&s->mu);
        sh__job_free(j);
        return sh__error(c, MHD_HTTP_TOO_MANY_REQUESTS, "rate_limit_error",
                         "too many concurrent requests from this client", "1");
    }
    if (s->queued >= s->queue_cap || s->stopping) {
        s->n_503++;
        pthread_mutex_unlock(&s->mu);
        sh__job_free(j);
        return sh__error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded_error",
                         "the server's queue is full", "1");
    }
    cl->active++;
    uint64_t id = ++s->next_id;
    j->arrived_ns = base_now_ns();
    if (s->tail)
        s->tail->next = j;
    else
        s->head = j;
    s->tail = j;
    s->queued++;
    pthread_cond_signal(&s->work);
    /* Wait, watching the socket every 20 ms. */
    while (!j->done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->done, &s->mu, &ts);
        if (!j->done && !j->cancel && sh__hung_up(c)) {
            j->cancel = 1;
            bool all = s->n_running > 0;
            for (int i = 0; i < s->n_running; i++)
                all = all && s->running[i]->cancel;
            if (all)
                s->run_cancel = 1;
        }
    }
    cl->active--;
    if (j->st == BASE_ERR_CANCELLED)
        s->n_cancelled++;
    pthread_mutex_unlock(&s->mu);

    enum MHD_Result q;
    bool answered = false; /* a 200 queued: what the exit log counts as answered */
    if (j->st == BASE_ERR_CANCELLED) {
        BASE_LOGI("serve-http", "request %llu: the client hung up; cancelled",
                  (unsigned long long)id);
        q = MHD_NO; /* closes the connection */
    } else if (j->st != BASE_OK) {
        q = sh__error(c,
                      j->st == BASE_ERR_TOO_LARGE ? MHD_HTTP_CONTENT_TOO_LARGE
                                                  : MHD_HTTP_INTERNAL_SERVER_ERROR,
                      "server_error", j->err, NULL);
    } else {
        char rid[40];
        snprintf(rid, sizeof rid, "fim-%llu", (unsigned long long)id);
        json_t *choice = json_pack("{s:i,s:s%,s:s}", "index", 0, "text", j->text, j->len,
                                   "finish_reason", "stop");
        json_t *usage =
            json_pack("{s:i,s:i,s:i}", "prompt_tokens", j->n_prompt, "completion_tokens",
                      j->n_completion, "total_tokens", j->n_prompt + j->n_completion);
        json_t *ans = json_pack("{s:s,s:s,s:I,s:s,s:[o],s:o}", "id", rid, "object",
                                stream ? "fim.completion.chunk" : "fim.completion", "created",
                                (json_int_t)time(NULL), "model", s->model_id, "choices", choice,
                                "usage", usage);
        struct MHD_Response *r = NULL;
        if (ans && !stream) {
            char *body = json_dumps(ans, JSON_COMPACT);
            r = body ? MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE)
                     : NULL;
            if (r)
                MHD_add_response_header(r, "Content-Type", "application/json");
            else
                free(body);
        } else if (ans) {
            /* The whole answer as one event (a diffusion model commits the
             * hole at once), then [DONE]. */
            char *evs = json_dumps(ans, JSON_COMPACT);
            base_buf b;
            base_buf_init(&b);
            if (evs && base_buf_printf(&b, "data: %s\n\ndata: [DONE]\n\n", evs) == BASE_OK)
                r = MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_COPY);
            if (r) {
                MHD_add_response_header(r, "Content-Type", "text/event-stream");
                MHD_add_response_header(r, "Cache-Control", "no-cache");
            }
            free(evs);
            base_buf_deinit(&b);
        }
        json_decref(ans);
        if (r) {
            q = MHD_queue_response(c, MHD_HTTP_OK, r);
            MHD_destroy_response(r);
            answered = q == MHD_YES;
        } else {
            q = sh__send(c, MHD_HTTP_OK, NULL, NULL); /* sh__send's 500 */
        }
        BASE_LOGD("serve-http", "request %llu: %zu bytes in %.1f ms", (unsigned long long)id,
                  j->len, j->ms);
    }
    if (j->st != BASE_ERR_CANCELLED) {
        pthread_mutex_lock(&s->mu);
        if (answered)
            s->n_ok++;
        else
            s->n_err++;
        pthread_mutex_unlock(&s->mu);
    }
    sh__job_free(j);
    return q;
}

static enum MHD_Result sh__handle(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls) {
    (void)version;
    sh__server *s = cls;
    sh__req *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        base_buf_init(&rq->body);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ci ? ci->client_addr : NULL;
        if (sa && sa->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, rq->client,
                      sizeof rq->client);
        else if (sa && sa->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, rq->client,
                      sizeof rq->client);
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (rq->body.len + *upload_size > s->max_body)
            rq->too_large = true; /* keep reading (and dropping) to answer 413 */
        else if (base_buf_append(&rq->body, upload, *upload_size) != BASE_OK)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    if (!sh__token_ok(s, c))
        return sh__error(c, MHD_HTTP_UNAUTHORIZED, "authentication_error",
                         "a valid bearer token is required", NULL);
    if (strcmp(url, "/health") == 0 && strcmp(method, "GET") == 0)
        return sh__send(c, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"), NULL);
    if (strcmp(url, "/v1/models") == 0 && strcmp(method, "GET") == 0)
        return sh__send(c, MHD_HTTP_OK,
                        json_pack("{s:s,s:[{s:s,s:s,s:s}]}", "object", "list", "data", "id",
                                  s->model_id, "object", "model", "owned_by", "infilld"),
                        NULL);
    if (strcmp(url, "/v1/fim/completions") == 0) {
        if (strcmp(method, "POST") != 0)
            return sh__error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "invalid_request_error", "use POST",
                             NULL);
        if (rq->too_large) {
            char m[96];
            snprintf(m, sizeof m, "the request is larger than %zu bytes", s->max_body);
            return sh__error(c, MHD_HTTP_CONTENT_TOO_LARGE, "invalid_request_error", m, NULL);
        }
        return sh__fim(s, c, rq);
    }
    return sh__error(c, MHD_HTTP_NOT_FOUND, "invalid_request_error", "no such endpoint", NULL);
}

static void sh__completed(void *cls, struct MHD_Connection *c, void **con_cls,
                          enum MHD_RequestTerminationCode toe) {
    (void)cls;
    (void)c;
    (void)toe;
    sh__req *rq = *con_cls;
    if (rq) {
        base_buf_deinit(&rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

/* Answers are small and written in pieces: without TCP_NODELAY a kept-alive
 * connection waits for the client's delayed ACK (~200 ms) on each one. */
static void sh__connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                           enum MHD_ConnectionNotificationCode code) {
    (void)cls;
    (void)socket_ctx;
    if (code != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int one = 1;
    if (ci)
        setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ---- the command ------------------------------------------------------------------------ */

static char *sh__read_file(const char *path, bool secret, char *err, size_t cap) {
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (secret && (st.st_mode & 077)) {
        snprintf(err, cap, "%s has mode %04o: others can read it; run chmod 600 on it", path,
                 (unsigned)(st.st_mode & 07777));
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return NULL;
    }
    base_buf b;
    base_buf_init(&b);
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        if (base_buf_append(&b, tmp, n) != BASE_OK)
            break;
    fclose(f);
    if (base_buf_append(&b, "", 1) != BASE_OK) {
        base_buf_deinit(&b);
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    return b.data;
}

static bool sh__loopback(const char *host) {
    return strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
           strncmp(host, "127.", 4) == 0;
}

static const char SH__USAGE[] =
    "usage: infilld serve-http --listen HOST:PORT [--model DIR] [--device auto|cpu|cuda]\n"
    "                          [--tls-cert FILE --tls-key FILE] [--token-file FILE]\n"
    "                          [--queue N] [--per-client N] [--max-body BYTES]\n"
    "                          [--max-tokens N] [--max-connections N] [--log-level L]\n"
    "                          [--batch-ms MS] [--batch-max N]\n"
    "Serves the local engine as POST /v1/fim/completions (+ GET /health, /v1/models).\n"
    "Off loopback it needs both TLS (--tls-cert, --tls-key) and --token-file.\n"
    "Waiting requests with the same max_tokens, temperature and seed run as one\n"
    "padded batch of up to --batch-max (default 8; 1 turns batching off) through the\n"
    "engine; the model thread waits up to --batch-ms (default 5; 0: no wait) after\n"
    "the first one for others to arrive.\n"
    "Prints \"listening on HOST:PORT\" once it accepts connections (PORT 0: any).\n";

static int sh__int(const char *v, int lo, int hi, int *out) {
    char *e;
    long x = v ? strtol(v, &e, 10) : 0;
    if (!v || *e || x < lo || x > hi)
        return -1;
    *out = (int)x;
    return 0;
}

int dmn_cli_serve_http(int argc, char **argv) {
    const char *listen = NULL, *model = NULL, *device = NULL, *cert = NULL, *key = NULL,
               *token_file = NULL, *level = NULL;
    int queue = 16, per_client = 4, max_body = 1 << 20, max_tokens = 256, max_conn = 128;
    int batch_ms = 5, batch_max = 8;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(SH__USAGE, stdout);
            return 0;
        } else if (strcmp(a, "--listen") == 0 && v) {
            listen = v;
        } else if (strcmp(a, "--model") == 0 && v) {
            model = v;
        } else if (strcmp(a, "--device") == 0 && v) {
            device = v;
        } else if (strcmp(a, "--tls-cert") == 0 && v) {
            cert = v;
        } else if (strcmp(a, "--tls-key") == 0 && v) {
            key = v;
        } else if (strcmp(a, "--token-file") == 0 && v) {
            token_file = v;
        } else if (strcmp(a, "--log-level") == 0 && v) {
            level = v;
        } else if (strcmp(a, "--queue") == 0) {
            bad = sh__int(v, 0, 100000, &queue);
        } else if (strcmp(a, "--per-client") == 0) {
            bad = sh__int(v, 1, 100000, &per_client);
        } else if (strcmp(a, "--max-body") == 0) {
            bad = sh__int(v, 64, 1 << 30, &max_body);
        } else if (strcmp(a, "--max-tokens") == 0) {
            bad = sh__int(v, 1, 4096, &max_tokens);
        } else if (strcmp(a, "--batch-ms") == 0) {
            bad = sh__int(v, 0, 1000, &batch_ms);
        } else if (strcmp(a, "--batch-max") == 0) {
            bad = sh__int(v, 1, SH__MAX_BATCH, &batch_max);
        } else if (strcmp(a, "--max-connections") == 0) {
            bad = sh__int(v, 1, 100000, &max_conn);
        } else {
            fprintf(stderr, "infilld serve-http: unknown or incomplete option '%s'\n%s", a,
                    SH__USAGE);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "infilld serve-http: %s needs a number in range\n", a);
            return 2;
        }
        i++;
    }
    if (level) {
        base_log_level lv;
        if (!base_log_level_parse(level, &lv)) {
            fprintf(stderr, "infilld serve-http: unknown log level '%s'\n", level);
            return 2;
        }
        base_log_set_level(lv);
    }
    if (!listen) {
        fprintf(stderr, "infilld serve-http: --listen HOST:PORT is required\n%s", SH__USAGE);
        return 2;
    }
    /* HOST:PORT, [v6]:PORT. */
    char host[256];
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof host) {
        fprintf(stderr, "infilld serve-http: --listen wants HOST:PORT, not '%s'\n", listen);
        return 2;
    }
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = 0;
    if (host[0] == '[') {
        size_t hl = strlen(host);
        if (hl < 3 || host[hl - 1] != ']') {
            fprintf(stderr, "infilld serve-http: bad address '%s'\n", listen);
            return 2;
        }
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = 0;
    }
    int port;
    if (sh__int(colon + 1, 0, 65535, &port) != 0) {
        fprintf(stderr, "infilld serve-http: bad port in '%s'\n", listen);
        return 2;
    }
    bool tls = cert || key;
    if (tls && !(cert && key)) {
        fprintf(stderr, "infilld serve-http: TLS needs both --tls-cert and --tls-key\n");
        return 2;
    }
    if (!sh__loopback(host) && !(tls && token_file)) {
        fprintf(stderr,
                "infilld serve-http: %s is not a loopback address: serving it needs TLS "
                "(--tls-cert and --tls-key) and a bearer token (--token-file); refusing to "
                "start\n",
                host);
        return 2;
    }
    if (tls && !MHD_is_feature_supported(MHD_FEATURE_TLS)) {
        fprintf(stderr, "infilld serve-http: this libmicrohttpd was built without TLS\n");
        return 2;
    }
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    char ports[8];
    snprintf(ports, sizeof ports, "%d", port);
    int gai = getaddrinfo(host, ports, &hints, &ai);
    if (gai != 0 || !ai) {
        fprintf(stderr, "infilld serve-http: %s: %s\n", host, gai_strerror(gai));
        return 2;
    }

    char err[512] = "";
    sh__server s;
    memset(&s, 0, sizeof s);
    char *cert_pem = NULL, *key_pem = NULL;
    int rc = 1;
    if (token_file) {
        s.token = sh__read_file(token_file, true, err, sizeof err);
        if (!s.token) {
            fprintf(stderr, "infilld serve-http: --token-file %s\n", err);
            goto out;
        }
        size_t tl = strlen(s.token);
        while (tl > 0 &&
               (s.token[tl - 1] == '\n' || s.token[tl - 1] == '\r' || s.token[tl - 1] == ' '))
            s.token[--tl] = 0;
        if (tl == 0) {
            fprintf(stderr, "infilld serve-http: --token-file %s is empty\n", token_file);
            goto out;
        }
    }
    if (tls) {
        cert_pem = sh__read_file(cert, false, err, sizeof err);
        key_pem = cert_pem ? sh__read_file(key, true, err, sizeof err) : NULL;
        if (!cert_pem || !key_pem) {
            fprintf(stderr, "infilld serve-http: TLS: %s\n", err);
            goto out;
        }
    }
    char def[4096];
    if (!model) {
        if (!ifl_default_model_dir(def, sizeof def)) {
            fprintf(stderr, "infilld serve-http: no --model given and no embedded tiny model "
                            "found next to the binary\n");
            goto out;
        }
        model = def;
    }
    ifl_model_opts mo;
    ifl_model_opts_default(&mo);
    if (device && strcmp(device, "cpu") == 0)
        mo.load.device = ENG_DEVICE_CPU;
    else if (device && strcmp(device, "cuda") == 0)
        mo.load.device = ENG_DEVICE_CUDA;
    mo.max_candidates = batch_max; /* the engine's batch rows: one per batched request */
    mo.no_cost = true;             /* the cost model plans to deadlines; requests here have none */
    eng_error eerr = {0};
    s.model = ifl_model_open(model, &mo, &eerr);
    if (!s.model) {
        fprintf(stderr, "infilld serve-http: %s: %s\n", model,
                eerr.msg[0] ? eerr.msg : "cannot load the model");
        goto out;
    }
    const char *slash = strrchr(model, '/');
    s.model_id = slash && slash[1] ? slash + 1 : model;
    s.queue_cap = queue;
    s.per_client = per_client;
    s.max_body = (size_t)max_body;
    s.max_tokens = max_tokens;
    s.batch_ms = batch_ms;
    s.batch_max = batch_max;
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.work, NULL);
    pthread_cond_init(&s.done, NULL);

    /* SIGINT/SIGTERM end the server; blocked here so every thread inherits it. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    pthread_t worker;
    if (pthread_create(&worker, NULL, sh__worker, &s) != 0) {
        fprintf(stderr, "infilld serve-http: cannot start the model thread\n");
        goto out_model;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
                     (tls ? MHD_USE_TLS : 0);
    struct MHD_Daemon *d;
    if (tls)
        d = MHD_start_daemon(flags, 0, NULL, NULL, sh__handle, &s, MHD_OPTION_SOCK_ADDR,
                             ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)max_conn,
                             MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_NOTIFY_COMPLETED,
                             sh__completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, sh__connection,
                             NULL, MHD_OPTION_HTTPS_MEM_CERT, cert_pem, MHD_OPTION_HTTPS_MEM_KEY,
                             key_pem, MHD_OPTION_END);
    else
        d = MHD_start_daemon(flags, 0, NULL, NULL, sh__handle, &s, MHD_OPTION_SOCK_ADDR,
                             ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)max_conn,
                             MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_NOTIFY_COMPLETED,
                             sh__completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, sh__connection,
                             NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "infilld serve-http: cannot listen on %s: %s\n", listen,
                errno ? strerror(errno) : "libmicrohttpd refused the options");
    } else {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        printf("listening on %s%s%s:%u (%s, model %s, %s, queue %d, per client %d, batch %d "
               "within %d ms)\n",
               strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
               di ? (unsigned)di->port : (unsigned)port, tls ? "https" : "http", s.model_id,
               s.token ? "bearer token" : "no token", queue, per_client, batch_max, batch_ms);
        fflush(stdout);
        int sig = 0;
        sigwait(&sigs, &sig);
        MHD_stop_daemon(d);
        rc = 0;
        BASE_LOGI("serve-http",
                  "stopped: %llu answered, %llu cancelled, %llu errors, %llu 429, %llu 503; "
                  "%llu runs for %llu requests",
                  (unsigned long long)s.n_ok, (unsigned long long)s.n_cancelled,
                  (unsigned long long)s.n_err, (unsigned long long)s.n_429,
                  (unsigned long long)s.n_503, (unsigned long long)s.n_batches,
                  (unsigned long long)s.n_batched);
    }
    pthread_mutex_lock(&s.mu);
    s.stopping = true;
    pthread_cond_broadcast(&s.work);
    pthread_mutex_unlock(&s.mu);
    pthread_join(worker, NULL);
out_model:
    pthread_cond_destroy(&s.work);
    pthread_cond_destroy(&s.done);
    pthread_mutex_destroy(&s.mu);
    ifl_model_close(s.model);
out:
    freeaddrinfo(ai);
    free(cert_pem);
    if (key_pem) {
        memset(key_pem, 0, strlen(key_pem));
        free(key_pem);
    }
    if (s.token) {
        memset(s.token, 0, strlen(s.token));
        free(s.token);
    }
    return rc;
}
