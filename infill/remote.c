/* infill remote source: candidates from an HTTP inference server.
 *
 * libcurl (multi interface) does HTTP and TLS; it is a kept library with
 * keep-alive, HTTP/2 and certificate checks, so none of that is hand-written.
 * A request is a call (remote_call.h): built on the worker thread, its
 * transfers run by the daemon's libuv loop (remote_loop.c) or, without one
 * (doctor's probe), here on the calling thread over the source's own multi
 * handle, polling the job's cancel flag every IFL__POLL_MS; then collected
 * back on the worker. A superseded or cancelled request removes its
 * transfers and closes their connections. Several candidates are "n" where
 * the API takes it, else parallel transfers on one multi handle (sharing an
 * HTTP/2 connection where the server offers one). The multi handles live as
 * long as their owner, so the next request reuses the kept-alive
 * connections.
 *
 * The API key is only ever put into the Authorization header; every message
 * that leaves this file passes through ifl__redact first. */
#define _POSIX_C_SOURCE 200809L
#include "flag.h"
#include "remote_call.h"
#include "source.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define IFL__POLL_MS 10

/* Several candidates run as parallel transfers on the one multi handle
 * (APIs without "n"): easy[0] is configured at creation, the others are
 * copies made when first needed. */
#define IFL__MAX_XFER ENG_DIFF_MAX_CANDIDATES

struct ifl_remote {
    ifl_remote_cfg cfg;
    CURLM *multi;
    CURL *easy[IFL__MAX_XFER];
    struct curl_slist *hdrs;
    char *endpoint;
    long http_version; /* CURLINFO_HTTP_VERSION of the last finished transfer */
};

static pthread_once_t ifl__curl_once = PTHREAD_ONCE_INIT;
static void ifl__curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static const char *const ifl__api_names[] = {"openai-fim", "llama-infill",
                                             "openai-completions-suffix",
                                             "openai-completions-template", "openai-chat"};

const char *ifl_remote_api_name(ifl_remote_api a) {
    return (unsigned)a < sizeof ifl__api_names / sizeof ifl__api_names[0] ? ifl__api_names[a] : "?";
}

void ifl_remote_cfg_free(ifl_remote_cfg *c) {
    if (!c)
        return;
    free(c->url);
    free(c->model);
    if (c->api_key) {
        /* Do not leave the key in freed memory. */
        volatile char *k = c->api_key;
        while (*k)
            *k++ = 0;
        free(c->api_key);
    }
    free(c->key_from);
    free(c->ca_file);
    for (int i = 0; i < c->n_headers; i++)
        free(c->headers[i]);
    free(c->headers);
    memset(c, 0, sizeof *c);
}

static bool ifl__has_ctl(const char *s) {
    for (; *s; s++)
        if (*s == '\r' || *s == '\n' || *s == 0x7f)
            return true;
    return false;
}

static bool ifl__loopback(const char *host) {
    return strcmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
           strcmp(host, "::1") == 0 || strncmp(host, "127.", 4) == 0;
}

/* Reads the key file; refuses one that others may read. */
static base_status ifl__read_key_file(const char *path, char **key, char *err, size_t cap) {
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, cap, "source.apiKeyFile %s: %s", path, strerror(errno));
        return BASE_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, cap, "source.apiKeyFile %s is not a regular file", path);
        return BASE_ERR_INVALID;
    }
    if (st.st_mode & 077) {
        snprintf(err, cap,
                 "source.apiKeyFile %s has mode %04o: others can read the key; run chmod 600 on "
                 "it",
                 path, (unsigned)(st.st_mode & 07777));
        return BASE_ERR_DENIED;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, cap, "source.apiKeyFile %s: %s", path, strerror(errno));
        return BASE_ERR_IO;
    }
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = 0;
    *key = strdup(buf);
    memset(buf, 0, sizeof buf);
    return *key ? BASE_OK : BASE_ERR_NOMEM;
}

base_status ifl_remote_cfg_parse(const json_t *src, ifl_remote_cfg *out, char *err, size_t cap) {
    memset(out, 0, sizeof *out);
    err[0] = 0;
    if (!src || json_is_null(src))
        return BASE_ERR_NOT_FOUND;
    if (!json_is_object(src)) {
        snprintf(err, cap, "source must be an object");
        return BASE_ERR_INVALID;
    }
    pthread_once(&ifl__curl_once, ifl__curl_init);
    const char *kind = json_string_value(json_object_get(src, "kind"));
    if (!kind || strcmp(kind, "local") == 0)
        return BASE_ERR_NOT_FOUND;
    if (strcmp(kind, "remote") != 0) {
        snprintf(err, cap, "source.kind must be \"local\" or \"remote\", not \"%.40s\"", kind);
        return BASE_ERR_INVALID;
    }
    base_status st = BASE_ERR_INVALID;
    const char *api = json_string_value(json_object_get(src, "api"));
    int ai = -1;
    for (int i = 0; api && i < (int)(sizeof ifl__api_names / sizeof ifl__api_names[0]); i++)
        if (strcmp(api, ifl__api_names[i]) == 0)
            ai = i;
    if (ai < 0) {
        snprintf(err, cap,
                 "source.api must be one of openai-fim, openai-completions-suffix, "
                 "openai-completions-template, openai-chat, llama-infill%s%.40s%s",
                 api ? ", not \"" : "", api ? api : "", api ? "\"" : "");
        goto fail;
    }
    out->api = (ifl_remote_api)ai;
    json_t *stream = json_object_get(src, "stream");
    if (stream && !json_is_boolean(stream)) {
        snprintf(err, cap, "source.stream must be true or false");
        goto fail;
    }
    out->stream = json_is_true(stream);
    const char *url = json_string_value(json_object_get(src, "url"));
    if (!url || !*url) {
        snprintf(err, cap, "source.url is required for a remote source");
        goto fail;
    }
    out->allow_insecure = json_is_true(json_object_get(src, "allowInsecure"));
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        snprintf(err, cap, "source.url \"%.200s\" is not a valid URL", url);
        curl_free(scheme);
        curl_free(host);
        curl_url_cleanup(u);
        goto fail;
    }
    bool https = strcmp(scheme, "https") == 0, http = strcmp(scheme, "http") == 0;
    bool loop = ifl__loopback(host);
    /* The URL is logged and shown in infilld/status: no credentials in it. */
    char *user = NULL;
    bool userinfo = curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK;
    curl_free(user);
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    if (userinfo) {
        snprintf(err, cap,
                 "source.url must not carry credentials (user:password@): the URL is logged; put "
                 "the key in apiKeyEnv or apiKeyFile");
        goto fail;
    }
    if (!https && !http) {
        snprintf(err, cap, "source.url must start with https:// or http://");
        goto fail;
    }
    if (http && !loop && !out->allow_insecure) {
        snprintf(err, cap,
                 "source.url uses http:// to a host that is not loopback; the code and the key "
                 "would travel unencrypted: use https://, or set \"allowInsecure\": true");
        goto fail;
    }
    out->url = strdup(url);
    size_t ul = out->url ? strlen(out->url) : 0;
    while (ul > 0 && out->url[ul - 1] == '/')
        out->url[--ul] = 0;
    const char *model = json_string_value(json_object_get(src, "model"));
    out->model = model ? strdup(model) : NULL;
    if (out->api == IFL_API_COMPLETIONS_TEMPLATE) {
        const char *tn = json_string_value(json_object_get(src, "template"));
        out->tmpl = ifl_fim_template_find(tn, model);
        if (!out->tmpl) {
            if (tn)
                snprintf(err, cap, "source.template \"%.40s\" is not one of %s", tn,
                         ifl_fim_template_names());
            else
                snprintf(err, cap,
                         "source.model \"%.80s\" names no known FIM template: set "
                         "source.template to one of %s",
                         model, ifl_fim_template_names());
            goto fail;
        }
    }
    const char *kenv = json_string_value(json_object_get(src, "apiKeyEnv"));
    const char *kfile = json_string_value(json_object_get(src, "apiKeyFile"));
    if (kenv && kfile) {
        snprintf(err, cap, "set one of source.apiKeyEnv and source.apiKeyFile, not both");
        goto fail;
    }
    char from[512] = "";
    if (kenv) {
        const char *v = getenv(kenv);
        if (!v || !*v) {
            snprintf(err, cap, "source.apiKeyEnv: the environment variable %.100s is not set",
                     kenv);
            goto fail;
        }
        out->api_key = strdup(v);
        snprintf(from, sizeof from, "environment variable %.100s", kenv);
    } else if (kfile) {
        st = ifl__read_key_file(kfile, &out->api_key, err, cap);
        if (st != BASE_OK)
            goto fail;
        st = BASE_ERR_INVALID;
        snprintf(from, sizeof from, "file %.400s", kfile);
    } else if (json_object_get(src, "apiKey")) {
        snprintf(err, cap,
                 "source.apiKey is not accepted: settings travel through logs and traces; put "
                 "the key in an environment variable (apiKeyEnv) or a mode-0600 file "
                 "(apiKeyFile)");
        goto fail;
    }
    if (out->api_key && (!*out->api_key || ifl__has_ctl(out->api_key))) {
        snprintf(err, cap, "the API key from %s is empty or spans lines", from);
        goto fail;
    }
    out->key_from = strdup(from[0] ? from : "none");
    json_t *h = json_object_get(src, "headers");
    if (h && !json_is_object(h)) {
        snprintf(err, cap, "source.headers must be an object {name: value}");
        goto fail;
    }
    if (h && json_object_size(h) > 0) {
        out->headers = calloc(json_object_size(h), sizeof(char *));
        if (!out->headers) {
            st = BASE_ERR_NOMEM;
            goto fail;
        }
        const char *name;
        json_t *val;
        json_object_foreach(h, name, val) {
            const char *v = json_string_value(val);
            if (!v || !*name || ifl__has_ctl(name) || ifl__has_ctl(v) || strchr(name, ':')) {
                snprintf(err, cap, "source.headers[\"%.60s\"] must be a one-line string", name);
                goto fail;
            }
            size_t n = strlen(name) + strlen(v) + 3;
            char *line = malloc(n);
            if (!line) {
                st = BASE_ERR_NOMEM;
                goto fail;
            }
            snprintf(line, n, "%s: %s", name, v);
            out->headers[out->n_headers++] = line;
        }
    }
    json_t *ca = json_object_get(src, "caFile");
    if (ca && !json_is_string(ca)) {
        snprintf(err, cap, "source.caFile must be a path");
        goto fail;
    }
    if (ca) {
        out->ca_file = strdup(json_string_value(ca));
        if (!out->ca_file) {
            st = BASE_ERR_NOMEM;
            goto fail;
        }
    }
    json_t *t = json_object_get(src, "timeoutMs");
    out->timeout_ms = json_is_integer(t) && json_integer_value(t) > 0
                          ? (int)BASE_MIN(json_integer_value(t), 600000)
                          : 5000;
    json_t *mt = json_object_get(src, "maxTokens");
    out->max_tokens = json_is_integer(mt) && json_integer_value(mt) > 0
                          ? (int)BASE_MIN(json_integer_value(mt), 1 << 20)
                          : 0;
    json_t *temp = json_object_get(src, "temperature");
    if (json_is_number(temp)) {
        out->has_temperature = true;
        out->temperature = json_number_value(temp);
    }
    json_t *mb = json_object_get(src, "maxResponseBytes");
    out->max_body = json_is_integer(mb) && json_integer_value(mb) > 0
                        ? (size_t)json_integer_value(mb)
                        : (size_t)1 << 20;
    json_t *cb = json_object_get(src, "contextBytes");
    out->context_bytes =
        json_is_integer(cb) && json_integer_value(cb) > 0 ? (size_t)json_integer_value(cb) : 24576;
    if (!out->url || !out->key_from || (model && !out->model) || (kenv && !out->api_key)) {
        st = BASE_ERR_NOMEM;
        goto fail;
    }
    return BASE_OK;
fail:
    if (st == BASE_ERR_NOMEM && !err[0])
        snprintf(err, cap, "out of memory");
    ifl_remote_cfg_free(out);
    return st;
}

/* ---- the source ------------------------------------------------------------------- */

/* Replaces every occurrence of the key in s (NUL-terminated) by "***". */
static void ifl__redact(const ifl_remote *r, char *s) {
    const char *k = r->cfg.api_key;
    if (!k || !*k)
        return;
    size_t kl = strlen(k);
    char *p;
    while ((p = strstr(s, k)) != NULL) {
        size_t rest = strlen(p + kl);
        if (kl >= 3) {
            memcpy(p, "***", 3);
            memmove(p + 3, p + kl, rest + 1);
        } else {
            memmove(p, p + kl, rest + 1);
        }
    }
}

ifl_remote *ifl_remote_new(ifl_remote_cfg *cfg) {
    pthread_once(&ifl__curl_once, ifl__curl_init);
    ifl_remote *r = calloc(1, sizeof *r);
    if (!r) {
        ifl_remote_cfg_free(cfg);
        return NULL;
    }
    r->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    const char *path = r->cfg.api == IFL_API_LLAMA_INFILL ? "/infill"
                       : r->cfg.api == IFL_API_OPENAI_FIM ? "/v1/fim/completions"
                       : r->cfg.api == IFL_API_CHAT       ? "/v1/chat/completions"
                                                          : "/v1/completions";
    size_t ul = strlen(r->cfg.url);
    /* An OpenAI-style base URL already ends in /v1. */
    if (r->cfg.api != IFL_API_LLAMA_INFILL && ul >= 3 && strcmp(r->cfg.url + ul - 3, "/v1") == 0)
        path += 3;
    size_t n = ul + strlen(path) + 1;
    r->endpoint = malloc(n);
    r->multi = curl_multi_init();
    r->easy[0] = curl_easy_init();
    if (!r->endpoint || !r->multi || !r->easy[0]) {
        ifl_remote_free(r);
        return NULL;
    }
    snprintf(r->endpoint, n, "%s%s", r->cfg.url, path);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = h ? curl_slist_append(h, r->cfg.stream ? "Accept: text/event-stream"
                                               : "Accept: application/json")
          : NULL;
    /* No "Expect: 100-continue" round trip for large prompts. */
    h = h ? curl_slist_append(h, "Expect:") : NULL;
    if (h && r->cfg.api_key) {
        size_t al = strlen(r->cfg.api_key) + 32;
        char *auth = malloc(al);
        if (auth) {
            snprintf(auth, al, "Authorization: Bearer %s", r->cfg.api_key);
            struct curl_slist *h2 = curl_slist_append(h, auth);
            memset(auth, 0, al);
            free(auth);
            h = h2;
        } else {
            curl_slist_free_all(h);
            h = NULL;
        }
    }
    for (int i = 0; h && i < r->cfg.n_headers; i++)
        h = curl_slist_append(h, r->cfg.headers[i]);
    if (!h) {
        ifl_remote_free(r);
        return NULL;
    }
    r->hdrs = h;
    CURL *e = r->easy[0];
    curl_easy_setopt(e, CURLOPT_URL, r->endpoint);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->hdrs);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    /* A redirect would carry the key elsewhere. */
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (r->cfg.ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, r->cfg.ca_file);
    /* HTTP/2 when the server offers it in the TLS handshake (ALPN), else
     * HTTP/1.1; parallel transfers then share one connection. */
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    /* Over TLS, parallel transfers wait for the first connection's ALPN
     * answer so that they share it if it is HTTP/2. (Over http:// there is
     * no HTTP/2 here, and waiting would only queue them.) */
    if (strncmp(r->cfg.url, "https:", 6) == 0)
        curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "infilld");
    curl_multi_setopt(r->multi, CURLMOPT_MAXCONNECTS, (long)IFL__MAX_XFER);
    return r;
}

/* The i-th transfer's handle, a copy of the first (NULL on OOM). */
static CURL *ifl__easy(ifl_remote *r, int i) {
    if (!r->easy[i])
        r->easy[i] = curl_easy_duphandle(r->easy[0]);
    return r->easy[i];
}

void ifl_remote_free(ifl_remote *r) {
    if (!r)
        return;
    for (int i = 0; i < IFL__MAX_XFER; i++)
        if (r->easy[i])
            curl_easy_cleanup(r->easy[i]);
    if (r->multi)
        curl_multi_cleanup(r->multi);
    curl_slist_free_all(r->hdrs);
    free(r->endpoint);
    ifl_remote_cfg_free(&r->cfg);
    free(r);
}

const ifl_remote_cfg *ifl_remote_config(const ifl_remote *r) { return &r->cfg; }

/* The answer as it arrives: the whole body (a plain answer, or an error
 * answer to a stream request), or, for a 2xx answer to a stream request,
 * server-sent events (the WHATWG EventSource format: "data:" lines, a blank
 * line ends an event) folded into per-choice texts. */
typedef struct ifl__body {
    base_buf buf;
    size_t max, total;
    bool oversize;
    ifl_remote *r;
    CURL *easy;
    int slot; /* the transfer's number: only the first one's text goes to infilld/partial */
    const ifl_source_req *sr;
    size_t pre_off, suf_len; /* what was sent, for the chat clean-up of partial texts */
    int max_tokens;
    bool stream, sse, sse_checked;
    base_buf line, data;
    base_buf acc[ENG_DIFF_MAX_CANDIDATES];
    int n_acc, events;
    bool done, finished, bad;
    char why[200];
} ifl__body;

static void ifl__body_deinit(ifl__body *b) {
    base_buf_deinit(&b->buf);
    base_buf_deinit(&b->line);
    base_buf_deinit(&b->data);
    for (int i = 0; i < ENG_DIFF_MAX_CANDIDATES; i++)
        base_buf_deinit(&b->acc[i]);
}

static void ifl__body_reset(ifl__body *b) {
    b->buf.len = b->line.len = b->data.len = 0;
    for (int i = 0; i < ENG_DIFF_MAX_CANDIDATES; i++)
        b->acc[i].len = 0;
    b->total = 0;
    b->n_acc = b->events = 0;
    b->oversize = b->sse = b->sse_checked = b->done = b->finished = b->bad = false;
    b->why[0] = 0;
}

static void ifl__server_error(const json_t *root, char *out, size_t cap);

static bool ifl__acc_add(ifl__body *b, int idx, const json_t *t) {
    if (!json_is_string(t))
        return true; /* null / absent: nothing this event */
    if (idx < 0 || idx >= ENG_DIFF_MAX_CANDIDATES)
        return true;
    if (base_buf_append(&b->acc[idx], json_string_value(t), json_string_length(t)) != BASE_OK)
        return false;
    if (idx + 1 > b->n_acc)
        b->n_acc = idx + 1;
    return true;
}

/* The first candidate so far, to infilld/partial (chat answers cleaned). */
static void ifl__sse_partial(ifl__body *b) {
    const ifl_doc_req *d = b->sr ? b->sr->doc : NULL;
    if (!d || !d->partial || b->n_acc == 0 || b->slot != 0)
        return;
    const base_buf *a = &b->acc[0];
    const char *t = a->data ? a->data : "";
    if (b->r->cfg.api == IFL_API_CHAT) {
        char *c = NULL;
        size_t cl = 0;
        const ifl_source_req *sr = b->sr;
        if (ifl_chat_clean(sr->prefix + b->pre_off, sr->prefix_len - b->pre_off, sr->suffix,
                           b->suf_len, t, a->len, &c, &cl) == BASE_OK)
            d->partial(d->partial_ud, c, cl, b->events, b->max_tokens);
        free(c);
        return;
    }
    d->partial(d->partial_ud, t, a->len, b->events, b->max_tokens);
}

/* One event's data. false stops the transfer (b->why says why). */
static bool ifl__sse_event(ifl__body *b) {
    const char *s = b->data.data;
    size_t n = b->data.len;
    if (n > 0 && s[n - 1] == '\n')
        n--;
    b->data.len = 0;
    if (n == 0 || b->done)
        return true;
    if (n == 6 && memcmp(s, "[DONE]", 6) == 0) {
        b->done = true;
        return true;
    }
    json_error_t je;
    json_t *o = json_loadb(s, n, 0, &je);
    b->events++;
    if (!json_is_object(o)) {
        snprintf(b->why, sizeof b->why,
                 "remote: %s sent a malformed event (event %d is not a JSON object)", b->r->cfg.url,
                 b->events);
        json_decref(o);
        b->bad = true;
        return false;
    }
    if (json_object_get(o, "error")) {
        char detail[160];
        ifl__server_error(o, detail, sizeof detail);
        snprintf(b->why, sizeof b->why, "remote: %s reported an error mid-stream%s", b->r->cfg.url,
                 detail);
        json_decref(o);
        b->bad = true;
        return false;
    }
    bool ok = true;
    if (b->r->cfg.api == IFL_API_LLAMA_INFILL) {
        ok = ifl__acc_add(b, 0, json_object_get(o, "content"));
        if (json_is_true(json_object_get(o, "stop")))
            b->done = true;
    } else {
        json_t *ch = json_object_get(o, "choices");
        size_t i;
        json_t *c;
        json_array_foreach(ch, i, c) {
            json_t *ix = json_object_get(c, "index");
            int idx = json_is_integer(ix) ? (int)json_integer_value(ix) : (int)i;
            json_t *t = json_object_get(c, "text");
            if (!t)
                t = json_object_get(json_object_get(c, "delta"), "content");
            if (!t)
                t = json_object_get(json_object_get(c, "message"), "content");
            ok = ok && ifl__acc_add(b, idx, t);
            json_t *fr = json_object_get(c, "finish_reason");
            if (idx == 0 && fr && !json_is_null(fr))
                b->finished = true;
        }
    }
    json_decref(o);
    if (!ok) {
        snprintf(b->why, sizeof b->why, "remote: out of memory");
        b->bad = true;
        return false;
    }
    ifl__sse_partial(b);
    return true;
}

static bool ifl__sse_line(ifl__body *b) {
    char *l = b->line.data ? b->line.data : "";
    size_t n = b->line.len;
    if (n > 0 && l[n - 1] == '\r')
        n--;
    if (n == 0)
        return ifl__sse_event(b);
    if (l[0] == ':')
        return true; /* a comment (keep-alive) */
    const char *colon = memchr(l, ':', n);
    size_t fl = colon ? (size_t)(colon - l) : n;
    if (fl != 4 || memcmp(l, "data", 4) != 0)
        return true; /* event:, id:, retry: say nothing a completion needs */
    const char *v = colon ? colon + 1 : l + n;
    if (v < l + n && *v == ' ')
        v++;
    return base_buf_append(&b->data, v, (size_t)(l + n - v)) == BASE_OK &&
           base_buf_append(&b->data, "\n", 1) == BASE_OK;
}

static size_t ifl__write(char *p, size_t sz, size_t n, void *ud) {
    ifl__body *b = ud;
    size_t k = sz * n;
    b->total += k;
    if (b->total > b->max) {
        b->oversize = true;
        return 0; /* aborts the transfer */
    }
    if (b->stream && !b->sse_checked) {
        long code = 0;
        curl_easy_getinfo(b->easy, CURLINFO_RESPONSE_CODE, &code);
        b->sse = code >= 200 && code < 300;
        b->sse_checked = true;
    }
    if (!b->sse)
        return base_buf_append(&b->buf, p, k) == BASE_OK ? k : 0;
    const char *s = p, *e = p + k;
    while (s < e) {
        const char *nl = memchr(s, '\n', (size_t)(e - s));
        const char *end = nl ? nl : e;
        if (base_buf_append(&b->line, s, (size_t)(end - s)) != BASE_OK)
            return 0;
        if (!nl)
            break;
        if (!ifl__sse_line(b))
            return 0;
        b->line.len = 0;
        s = nl + 1;
    }
    return k;
}

/* One transfer of a request: its handle, its answer and how it ended. */
typedef struct ifl__xfer {
    CURL *e;
    ifl__body body;
    const char *req; /* the request body, handed to curl by ifl__read */
    size_t req_len, req_off;
    bool resend_refused;
    int attempt;
    bool running, finished;
    uint64_t start_at; /* a retry waits for its backoff */
    long tmo, code;
    base_status st;
    char msg[256];
    char errbuf[CURL_ERROR_SIZE];
} ifl__xfer;

/* One request in flight: its transfers (one per candidate where the API
 * has no "n") and what their answers are collected against. */
struct ifl_remote_call {
    ifl_remote *r;
    ifl_source_req sr;
    const volatile int *cancel;
    size_t pre_off, suf_len;
    int max_tokens, n_x;
    bool own_easy; /* its handles are its own (the loop's), not the source's */
    char *json;
    ifl__xfer *xs;
    base_status st; /* ERR_CANCELLED once the loop dropped its transfers */
    long http_version;
    uint64_t t0;
};

static size_t ifl__read(char *buf, size_t sz, size_t n, void *ud) {
    ifl__xfer *x = ud;
    size_t k = BASE_MIN(sz * n, x->req_len - x->req_off);
    memcpy(buf, x->req + x->req_off, k);
    x->req_off += k;
    return k;
}

/* libcurl sends a request again on its own when a kept-alive connection it
 * reused closes before any answer byte; it then rewinds the body here. A
 * body that was (partly) handed over may have reached the server and run
 * there, so that rewind is refused and the transfer fails instead
 * (CURLE_SEND_FAIL_REWIND): only a request that was never sent is retried. */
static int ifl__seek(void *ud, curl_off_t off, int origin) {
    ifl__xfer *x = ud;
    if (origin == SEEK_SET && off == 0 && x->req_off == 0)
        return CURL_SEEKFUNC_OK;
    x->resend_refused = true;
    return CURL_SEEKFUNC_FAIL;
}

/* A finished transfer: its status and message, or true to try it again
 * (only a connection that failed before anything was sent). */
static bool ifl__settle(ifl_remote_call *c, ifl__xfer *x, CURLcode res) {
    ifl_remote *r = c->r;
    const volatile int *cancel = c->cancel;
    ifl__body *body = &x->body;
    CURL *e = x->e;
    char *eb = x->errbuf;
    char *msg = x->msg;
    size_t cap = sizeof x->msg;
    long tmo = x->tmo;
    curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &c->http_version);
    x->st = BASE_OK;
    if (body->bad) {
        snprintf(msg, cap, "%s", body->why);
        x->st = BASE_ERR_PARSE;
        return false;
    }
    if (res == CURLE_OK) {
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &x->code);
        if (body->sse && body->line.len > 0) {
            /* A last line without its newline. */
            if (!ifl__sse_line(body) || !ifl__sse_event(body)) {
                snprintf(msg, cap, "%s", body->why);
                x->st = BASE_ERR_PARSE;
                return false;
            }
        } else if (body->sse && body->data.len > 0 && !ifl__sse_event(body)) {
            snprintf(msg, cap, "%s", body->why);
            x->st = BASE_ERR_PARSE;
            return false;
        }
        if (body->sse && !body->done && !body->finished) {
            snprintf(msg, cap,
                     "remote: the stream from %s ended after %d event%s without finishing",
                     r->cfg.url, body->events, body->events == 1 ? "" : "s");
            x->st = BASE_ERR_IO;
        }
        return false;
    }
    if (body->oversize) {
        snprintf(msg, cap, "remote: the response is larger than %zu bytes", body->max);
        x->st = BASE_ERR_TOO_LARGE;
        return false;
    }
    /* Only a connection that failed before anything was sent is retried: it
     * was refused, or its TLS handshake broke off (a certificate that fails
     * the check is CURLE_PEER_FAILED_VERIFICATION, not retried). A request
     * that was sent may have run on the server, so it is never sent again. */
    if ((res == CURLE_COULDNT_CONNECT || res == CURLE_SSL_CONNECT_ERROR) && x->attempt < 2 &&
        !base_flag_get(cancel)) {
        int backoff_ms = 50 + 100 * x->attempt; /* 50 ms, then 150 ms */
        BASE_LOGI("remote", "connecting to %s failed (%.120s); retry %d in %d ms", r->cfg.url,
                  eb[0] ? eb : curl_easy_strerror(res), x->attempt + 1, backoff_ms);
        x->attempt++;
        x->start_at = base_now_ns() + (uint64_t)backoff_ms * 1000000u;
        return true;
    }
    if (res == CURLE_SEND_FAIL_REWIND || x->resend_refused) {
        snprintf(msg, cap,
                 "remote: %s closed the connection after the request was sent (it is not sent "
                 "again)",
                 r->cfg.url);
        x->st = BASE_ERR_IO;
        return false;
    }
    if (res == CURLE_OPERATION_TIMEDOUT && body->sse) {
        snprintf(msg, cap, "remote: the stream from %s did not finish within %ld ms (%d events)",
                 r->cfg.url, tmo, body->events);
        x->st = BASE_ERR_TIMEOUT;
        return false;
    }
    if (body->sse && body->done) {
        /* Everything came; only the connection's end was untidy. */
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &x->code);
        return false;
    }
    if (body->sse && !body->done) {
        snprintf(msg, cap, "remote: the stream from %s broke off after %d event%s: %.100s",
                 r->cfg.url, body->events, body->events == 1 ? "" : "s",
                 eb[0] ? eb : curl_easy_strerror(res));
        x->st = BASE_ERR_IO;
        return false;
    }
    if (res == CURLE_OPERATION_TIMEDOUT) {
        snprintf(msg, cap, "remote: no answer from %s within %ld ms", r->cfg.url, tmo);
        x->st = BASE_ERR_TIMEOUT;
        return false;
    }
    snprintf(msg, cap, "remote: %.100s: %.120s", r->cfg.url, eb[0] ? eb : curl_easy_strerror(res));
    x->st = BASE_ERR_IO;
    return false;
}

int ifl_remote_call_xfers(const ifl_remote_call *c) { return c->n_x; }
CURL *ifl_remote_call_easy(ifl_remote_call *c, int i) { return c->xs[i].e; }
const volatile int *ifl_remote_call_cancel(const ifl_remote_call *c) { return c->cancel; }
uint64_t ifl_remote_call_start_at(const ifl_remote_call *c, int i) { return c->xs[i].start_at; }
void ifl_remote_call_cancelled(ifl_remote_call *c) { c->st = BASE_ERR_CANCELLED; }

void ifl_remote_call_fail(ifl_remote_call *c, int i, const char *msg) {
    snprintf(c->xs[i].msg, sizeof c->xs[i].msg, "remote: %s", msg);
    c->xs[i].st = BASE_ERR_IO;
}

bool ifl_remote_call_arm(ifl_remote_call *c, int i) {
    ifl__xfer *x = &c->xs[i];
    long tmo = c->r->cfg.timeout_ms;
    uint64_t deadline_ns = c->sr.deadline_ns, now = base_now_ns();
    if (deadline_ns) {
        long left = now >= deadline_ns ? 0 : (long)((deadline_ns - now) / 1000000u);
        if (left <= 0) {
            snprintf(x->msg, sizeof x->msg, "remote: the request's time budget ran out");
            x->st = BASE_ERR_TIMEOUT;
            return false;
        }
        tmo = BASE_MIN(tmo, left);
    }
    x->tmo = tmo;
    curl_easy_setopt(x->e, CURLOPT_TIMEOUT_MS, tmo);
    curl_easy_setopt(x->e, CURLOPT_CONNECTTIMEOUT_MS, tmo);
    ifl__body_reset(&x->body);
    x->req_off = 0;
    x->resend_refused = false;
    x->errbuf[0] = 0;
    return true;
}

bool ifl_remote_call_settle(ifl_remote_call *c, int i, CURLcode res) {
    return ifl__settle(c, &c->xs[i], res);
}

/* Runs the call's transfers at once on the source's own multi handle until
 * each has finished (x[i].st, x[i].msg): the path without a loop (doctor's
 * probe, a worker with no loop). BASE_ERR_CANCELLED when the flag was set
 * (polled every IFL__POLL_MS): every unfinished transfer is removed and its
 * connection closed. */
static base_status ifl__post(ifl_remote_call *c) {
    ifl_remote *r = c->r;
    ifl__xfer *xs = c->xs;
    int n = c->n_x;
    const volatile int *cancel = c->cancel;
    base_status st = BASE_OK;
    for (;;) {
        uint64_t now = base_now_ns(), next = 0;
        int running = 0, waiting = 0;
        for (int i = 0; i < n; i++) {
            ifl__xfer *x = &xs[i];
            if (x->finished || x->running)
                continue;
            if (x->start_at > now) {
                waiting++;
                next = next && next < x->start_at ? next : x->start_at;
                continue;
            }
            if (!ifl_remote_call_arm(c, i)) {
                x->finished = true;
                continue;
            }
            if (curl_multi_add_handle(r->multi, x->e) != CURLM_OK) {
                ifl_remote_call_fail(c, i, "cannot start the transfer");
                x->finished = true;
                continue;
            }
            x->running = true;
        }
        for (int i = 0; i < n; i++)
            running += xs[i].running;
        if (running == 0 && waiting == 0)
            break;
        if (base_flag_get(cancel)) {
            st = BASE_ERR_CANCELLED;
            break;
        }
        int still = 0;
        if (running > 0 && curl_multi_perform(r->multi, &still) != CURLM_OK) {
            for (int i = 0; i < n; i++)
                if (xs[i].running) {
                    snprintf(xs[i].msg, sizeof xs[i].msg, "remote: transfer failed");
                    xs[i].st = BASE_ERR_IO;
                    xs[i].finished = true;
                }
            break;
        }
        CURLMsg *m;
        int left;
        bool progressed = false;
        while ((m = curl_multi_info_read(r->multi, &left)) != NULL) {
            if (m->msg != CURLMSG_DONE)
                continue;
            for (int i = 0; i < n; i++) {
                ifl__xfer *x = &xs[i];
                if (x->e != m->easy_handle || !x->running)
                    continue;
                CURLcode res = m->data.result;
                curl_multi_remove_handle(r->multi, x->e);
                x->running = false;
                x->finished = !ifl__settle(c, x, res);
                progressed = true;
                break;
            }
        }
        if (progressed)
            continue;
        if (running > 0) {
            curl_multi_poll(r->multi, NULL, 0, IFL__POLL_MS, NULL);
        } else {
            /* Only retries are waiting: sleep towards the first, polling the flag. */
            uint64_t wait = next > now ? next - now : 0;
            if (wait > (uint64_t)IFL__POLL_MS * 1000000u)
                wait = (uint64_t)IFL__POLL_MS * 1000000u;
            struct timespec ts = {0, (long)wait};
            nanosleep(&ts, NULL);
        }
    }
    /* Removing an unfinished transfer closes its HTTP/1.1 connection. An
     * HTTP/2 one would stay open with the stream's reset queued until the
     * connection's next use, the server still working on it meanwhile, so
     * a cancelled transfer's connection is closed (FORBID_REUSE) either way. */
    for (int i = 0; i < n; i++)
        if (xs[i].running) {
            curl_easy_setopt(xs[i].e, CURLOPT_FORBID_REUSE, 1L);
            curl_multi_remove_handle(r->multi, xs[i].e);
            curl_easy_setopt(xs[i].e, CURLOPT_FORBID_REUSE, 0L);
            xs[i].running = false;
        }
    return st;
}

/* Keeps the far ends of prefix/suffix within the byte budget (3/4 prefix,
 * 1/4 suffix, as the token budget), cutting at line starts. */
static void ifl__cut_context(const ifl_remote *r, const ifl_source_req *sr, size_t *pre_off,
                             size_t *suf_len) {
    int kp, ks;
    size_t budget = r->cfg.context_bytes;
    ifl_budget_split((int)BASE_MIN(budget, (size_t)1 << 30),
                     (int)BASE_MIN(sr->prefix_len, (size_t)1 << 30),
                     (int)BASE_MIN(sr->suffix_len, (size_t)1 << 30), &kp, &ks);
    *pre_off = 0;
    if (sr->prefix_len > (size_t)kp) {
        size_t o = sr->prefix_len - (size_t)kp;
        const char *nl = memchr(sr->prefix + o, '\n', sr->prefix_len - o);
        if (nl) {
            o = (size_t)(nl - sr->prefix) + 1;
        } else {
            /* One long line: cut it, at a code point. */
            while (o < sr->prefix_len && ((unsigned char)sr->prefix[o] & 0xC0) == 0x80)
                o++;
        }
        *pre_off = o;
    }
    *suf_len = sr->suffix_len;
    if (sr->suffix_len > (size_t)ks) {
        size_t e = (size_t)ks;
        while (e > 0 && sr->suffix[e - 1] != '\n')
            e--;
        if (e == 0) {
            e = (size_t)ks;
            while (e > 0 && ((unsigned char)sr->suffix[e] & 0xC0) == 0x80)
                e--;
        }
        *suf_len = e;
    }
}

static json_t *ifl__stops(const ifl_remote *r, const ifl_source_req *sr) {
    json_t *stop = json_array();
    if (!stop)
        return NULL;
    if (r->cfg.api == IFL_API_COMPLETIONS_TEMPLATE)
        for (int i = 0; i < 4 && r->cfg.tmpl->stops[i]; i++)
            json_array_append_new(stop, json_string(r->cfg.tmpl->stops[i]));
    /* A chat model may open with a fence line: "\n" would end it there. */
    if (sr->single_line && r->cfg.api != IFL_API_CHAT)
        json_array_append_new(stop, json_string("\n"));
    if (json_array_size(stop) == 0) {
        json_decref(stop);
        return NULL;
    }
    return stop;
}

/* Whether the API takes "n" (several choices in one answer): OpenAI's
 * completions and chat (and vLLM's, SGLang's) do; the FIM endpoint (Mistral's
 * FimCompletionRequest has no "n") and llama.cpp's /infill do not, so their
 * candidates are parallel requests. */
static bool ifl__takes_n(ifl_remote_api api) {
    return api == IFL_API_COMPLETIONS_SUFFIX || api == IFL_API_COMPLETIONS_TEMPLATE ||
           api == IFL_API_CHAT;
}

/* n: the "n" to send (<= 1: none); want: the candidates the request wants in
 * all (several: sampling noise and, where the API reports them, logprobs to
 * rank by). */
static char *ifl__request_json(const ifl_remote *r, const ifl_source_req *sr, size_t pre_off,
                               size_t suf_len, int max_tokens, int n, int want) {
    const char *p = sr->prefix + pre_off, *q = sr->suffix;
    size_t pl = sr->prefix_len - pre_off, ql = suf_len;
    json_t *o = json_object();
    if (!o)
        return NULL;
    bool ok = true;
    ifl_remote_api api = r->cfg.api;
    if (api != IFL_API_LLAMA_INFILL && r->cfg.model)
        json_object_set_new(o, "model", json_string(r->cfg.model));
    if (api == IFL_API_OPENAI_FIM || api == IFL_API_COMPLETIONS_SUFFIX) {
        json_t *pre = json_stringn(p, pl), *suf = json_stringn(q, ql);
        ok = pre && suf;
        json_object_set_new(o, "prompt", pre ? pre : json_null());
        json_object_set_new(o, "suffix", suf ? suf : json_null());
    } else if (api == IFL_API_LLAMA_INFILL) {
        json_t *pre = json_stringn(p, pl), *suf = json_stringn(q, ql);
        ok = pre && suf;
        json_object_set_new(o, "input_prefix", pre ? pre : json_null());
        json_object_set_new(o, "input_suffix", suf ? suf : json_null());
        /* Other open files (llama.cpp server README, POST /infill:
         * "input_extra": [{"filename": ..., "text": ...}]), built and
         * filtered by the daemon; a malformed one is dropped, not sent. */
        const char *ex = sr->doc ? sr->doc->input_extra : NULL;
        json_t *je = ex ? json_loads(ex, 0, NULL) : NULL;
        if (json_is_array(je) && json_array_size(je) > 0)
            json_object_set_new(o, "input_extra", je);
        else
            json_decref(je);
    } else if (api == IFL_API_COMPLETIONS_TEMPLATE) {
        size_t tl = 0;
        char *t = ifl_fim_render(r->cfg.tmpl, p, pl, q, ql, &tl);
        json_t *js = t ? json_stringn(t, tl) : NULL;
        free(t);
        ok = js != NULL;
        json_object_set_new(o, "prompt", js ? js : json_null());
    } else {
        char *u = ifl_chat_user(p, pl, q, ql);
        json_t *ju = u ? json_string(u) : NULL;
        free(u);
        ok = ju != NULL;
        json_t *msgs = json_array();
        json_array_append_new(
            msgs, json_pack("{s:s,s:s}", "role", "system", "content", ifl_chat_instruction));
        json_array_append_new(
            msgs, json_pack("{s:s,s:o}", "role", "user", "content", ju ? ju : json_null()));
        json_object_set_new(o, "messages", msgs);
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    /* A chat answer spends tokens on a fence it should not write. */
    int mt = api == IFL_API_CHAT ? max_tokens + 16 : max_tokens;
    json_object_set_new(o, api == IFL_API_LLAMA_INFILL ? "n_predict" : "max_tokens",
                        json_integer(mt));
    json_t *stop = ifl__stops(r, sr);
    if (stop)
        json_object_set_new(o, "stop", stop);
    if (r->cfg.has_temperature)
        json_object_set_new(o, "temperature", json_real(r->cfg.temperature));
    else if (want > 1)
        /* Distinct candidates need noise: the local pipeline's default. */
        json_object_set_new(o, "temperature", json_real(0.6));
    if (n > 1)
        json_object_set_new(o, "n", json_integer(n));
    /* The mean probability of a choice's tokens ranks it, as the local
     * model's mean confidence ranks its candidates (completions: "logprobs":
     * the top-k count, token_logprobs in the answer; chat: true). */
    if (want > 1 && ifl__takes_n(api))
        json_object_set_new(o, "logprobs", api == IFL_API_CHAT ? json_true() : json_integer(1));
    if (api != IFL_API_LLAMA_INFILL || r->cfg.stream)
        json_object_set_new(o, "stream", json_boolean(r->cfg.stream));
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static void ifl__server_error(const json_t *root, char *out, size_t cap) {
    out[0] = 0;
    json_t *e = json_object_get(root, "error");
    const char *m = json_string_value(e);
    if (!m)
        m = json_string_value(json_object_get(e, "message"));
    if (!m)
        m = json_string_value(json_object_get(root, "message"));
    if (!m)
        m = json_string_value(json_object_get(root, "detail"));
    if (m)
        snprintf(out, cap, ": %.120s", m);
}

/* Cuts a completions-template answer at the first of the template's end
 * markers, in case the server sent special tokens as text. */
static size_t ifl__cut_stops(const ifl_remote *r, const char *t, size_t n) {
    if (r->cfg.api != IFL_API_COMPLETIONS_TEMPLATE)
        return n;
    for (int i = 0; i < 4 && r->cfg.tmpl->stops[i]; i++) {
        size_t sl = strlen(r->cfg.tmpl->stops[i]);
        for (size_t k = 0; k + sl <= n; k++)
            if (memcmp(t + k, r->cfg.tmpl->stops[i], sl) == 0) {
                n = k;
                break;
            }
    }
    return n;
}

/* A choice's mean token probability from its logprobs (completions:
 * logprobs.token_logprobs[]; chat: logprobs.content[].logprob), the measure
 * the local model ranks by; -1 when the answer carries none. */
static double ifl__mean_prob(const json_t *choice, bool chat) {
    json_t *lp = json_object_get(choice, "logprobs");
    json_t *arr = json_object_get(lp, chat ? "content" : "token_logprobs");
    double sum = 0.0;
    size_t k = 0, i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        json_t *l = chat ? json_object_get(v, "logprob") : v;
        if (json_is_number(l)) {
            double x = json_number_value(l);
            sum += exp(x < 0.0 ? x : 0.0);
            k++;
        }
    }
    return k ? sum / (double)k : -1.0;
}

typedef struct ifl__cand {
    char *text;
    size_t len;
    double conf;
    int order; /* arrival: transfer, then choice */
} ifl__cand;

/* One finished transfer's answer → candidates (cleaned, cut at the
 * template's stops), appended to cs. On failure x->st / x->msg say why. */
static void ifl__collect(ifl_remote *r, const ifl_source_req *sr, ifl__xfer *x, size_t pre_off,
                         size_t suf_len, ifl__cand *cs, int *nc) {
    ifl__body *body = &x->body;
    char *msg = x->msg;
    size_t cap = sizeof x->msg;
    long code = x->code;
    json_t *root = NULL;
    if (!body->sse) {
        json_error_t je;
        root = body->buf.len ? json_loadb(body->buf.data, body->buf.len, 0, &je) : NULL;
        char detail[160] = "";
        if (root)
            ifl__server_error(root, detail, sizeof detail);
        if (code == 401 || code == 403) {
            snprintf(msg, cap, "remote: %s refused the credentials (HTTP %ld)%s", r->cfg.url, code,
                     detail);
            x->st = BASE_ERR_DENIED;
        } else if (code == 429) {
            snprintf(msg, cap, "remote: %s is rate limiting (HTTP 429)%s", r->cfg.url, detail);
            x->st = BASE_ERR_IO;
        } else if (code < 200 || code >= 300) {
            snprintf(msg, cap, "remote: %s answered HTTP %ld%s", r->cfg.url, code, detail);
            x->st = BASE_ERR_IO;
        } else if (!json_is_object(root)) {
            snprintf(msg, cap, "remote: %s sent a body that is not a JSON object", r->cfg.url);
            x->st = BASE_ERR_PARSE;
        }
    }
    const char *texts[ENG_DIFF_MAX_CANDIDATES];
    size_t lens[ENG_DIFF_MAX_CANDIDATES];
    double confs[ENG_DIFF_MAX_CANDIDATES];
    int n = 0;
    ifl_remote_api api = r->cfg.api;
    if (x->st == BASE_OK && body->sse) {
        for (int i = 0; i < body->n_acc; i++) {
            texts[n] = body->acc[i].data ? body->acc[i].data : "";
            confs[n] = -1.0;
            lens[n++] = body->acc[i].len;
        }
        if (n == 0) {
            texts[n] = "";
            confs[n] = -1.0;
            lens[n++] = 0; /* a finished stream with no text: an empty answer */
        }
    } else if (x->st == BASE_OK) {
        /* openai-fim / completions: choices[].text; chat: choices[].message.content;
         * llama-infill: content. */
        json_t *choices = json_object_get(root, "choices");
        if (api != IFL_API_LLAMA_INFILL && json_is_array(choices)) {
            size_t i;
            json_t *c;
            json_array_foreach(choices, i, c) {
                json_t *t = api == IFL_API_CHAT
                                ? json_object_get(json_object_get(c, "message"), "content")
                                : json_object_get(c, "text");
                if (json_is_string(t) && n < ENG_DIFF_MAX_CANDIDATES) {
                    texts[n] = json_string_value(t);
                    confs[n] = ifl__mean_prob(c, api == IFL_API_CHAT);
                    lens[n++] = json_string_length(t);
                }
            }
            if (n == 0 && json_array_size(choices) > 0)
                x->st = BASE_ERR_PARSE;
        } else if (api == IFL_API_LLAMA_INFILL &&
                   json_is_string(json_object_get(root, "content"))) {
            json_t *t = json_object_get(root, "content");
            texts[n] = json_string_value(t);
            confs[n] = -1.0;
            lens[n++] = json_string_length(t);
        } else {
            x->st = BASE_ERR_PARSE;
        }
        if (x->st == BASE_ERR_PARSE)
            snprintf(msg, cap, "remote: %s answered without %s", r->cfg.url,
                     api == IFL_API_LLAMA_INFILL ? "\"content\""
                     : api == IFL_API_CHAT       ? "choices[].message.content"
                                                 : "choices[].text");
    }
    for (int i = 0; x->st == BASE_OK && i < n && *nc < ENG_DIFF_MAX_CANDIDATES; i++) {
        ifl__cand *c = &cs[*nc];
        if (api == IFL_API_CHAT) {
            x->st = ifl_chat_clean(sr->prefix + pre_off, sr->prefix_len - pre_off, sr->suffix,
                                   suf_len, texts[i], lens[i], &c->text, &c->len);
            if (x->st != BASE_OK)
                break;
        } else {
            size_t l = ifl__cut_stops(r, texts[i], lens[i]);
            c->text = malloc(l + 1);
            if (!c->text) {
                x->st = BASE_ERR_NOMEM;
                break;
            }
            memcpy(c->text, texts[i], l);
            c->text[l] = 0;
            c->len = l;
        }
        c->conf = confs[i];
        c->order = *nc;
        (*nc)++;
    }
    json_decref(root);
}

/* Best first: by mean probability where the answers report one, else in
 * the order they came (a server's own ranking). */
static int ifl__cand_cmp(const void *a, const void *b) {
    const ifl__cand *x = a, *y = b;
    if (x->conf != y->conf)
        return x->conf > y->conf ? -1 : 1;
    return x->order - y->order;
}

void ifl_remote_call_free(ifl_remote_call *c) {
    if (!c)
        return;
    for (int i = 0; i < c->n_x; i++) {
        ifl__body_deinit(&c->xs[i].body);
        if (c->own_easy && c->xs[i].e)
            curl_easy_cleanup(c->xs[i].e);
    }
    free(c->xs);
    free(c->json);
    free(c);
}

base_status ifl_remote_call_new(ifl_remote *r, const ifl_source_req *sr, const volatile int *cancel,
                                bool own_easy, ifl_remote_call **out, ifl_doc_res *res) {
    *out = NULL;
    ifl_remote_call *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(res->error, sizeof res->error, "remote: out of memory");
        return BASE_ERR_NOMEM;
    }
    c->r = r;
    c->sr = *sr;
    c->cancel = cancel;
    c->own_easy = own_easy;
    c->t0 = base_now_ns();
    ifl__cut_context(r, sr, &c->pre_off, &c->suf_len);
    /* maxTokens, when set, replaces the span's size (the span's is counted in
     * the local model's tokens, a fair guess for another tokenizer). */
    c->max_tokens = r->cfg.max_tokens > 0 ? r->cfg.max_tokens
                    : sr->n_hole_cap > 0  ? sr->n_hole_cap
                                          : 64;
    /* The pipeline's candidate count: "n" where the API takes it, else as
     * many requests at once. */
    int want =
        sr->doc && sr->doc->candidates > 1 ? BASE_MIN(sr->doc->candidates, IFL__MAX_XFER) : 1;
    bool via_n = ifl__takes_n(r->cfg.api);
    int n_x = via_n ? 1 : want;
    c->json =
        ifl__request_json(r, sr, c->pre_off, c->suf_len, c->max_tokens, via_n ? want : 0, want);
    if (!c->json) {
        free(c);
        snprintf(res->error, sizeof res->error,
                 "remote: the document is not valid UTF-8 and cannot be sent as JSON");
        return BASE_ERR_PARSE;
    }
    c->xs = calloc((size_t)n_x, sizeof *c->xs);
    if (!c->xs) {
        ifl_remote_call_free(c);
        snprintf(res->error, sizeof res->error, "remote: out of memory");
        return BASE_ERR_NOMEM;
    }
    size_t req_len = strlen(c->json);
    for (int i = 0; i < n_x; i++) {
        ifl__xfer *x = &c->xs[i];
        x->e = own_easy ? curl_easy_duphandle(r->easy[0]) : ifl__easy(r, i);
        if (!x->e)
            break; /* out of handles: fewer parallel candidates */
        c->n_x = i + 1;
        ifl__body *b = &x->body;
        base_buf_init(&b->buf);
        base_buf_init(&b->line);
        base_buf_init(&b->data);
        for (int k = 0; k < ENG_DIFF_MAX_CANDIDATES; k++)
            base_buf_init(&b->acc[k]);
        b->max = r->cfg.max_body;
        b->r = r;
        b->easy = x->e;
        b->slot = i;
        b->sr = &c->sr;
        b->pre_off = c->pre_off;
        b->suf_len = c->suf_len;
        b->max_tokens = c->max_tokens;
        b->stream = r->cfg.stream;
        CURL *e = x->e;
        x->req = c->json;
        x->req_len = req_len;
        /* The body through a read callback (not POSTFIELDS) so that a resend
         * of it can be refused (ifl__seek). */
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->req_len);
        curl_easy_setopt(e, CURLOPT_READFUNCTION, ifl__read);
        curl_easy_setopt(e, CURLOPT_READDATA, x);
        curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, ifl__seek);
        curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, ifl__write);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &x->body);
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
        curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)c);
    }
    if (c->n_x == 0) {
        ifl_remote_call_free(c);
        snprintf(res->error, sizeof res->error, "remote: out of memory");
        return BASE_ERR_NOMEM;
    }
    *out = c;
    return BASE_OK;
}

base_status ifl_remote_call_finish(ifl_remote_call *c, ifl_doc_res *out) {
    ifl_remote *r = c->r;
    const ifl_source_req *sr = &c->sr;
    size_t pre_off = c->pre_off, suf_len = c->suf_len;
    int n_x = c->n_x;
    ifl__xfer *xs = c->xs;
    base_status st = c->st;
    if (c->http_version)
        r->http_version = c->http_version;
    ifl__cand *cs = calloc(ENG_DIFF_MAX_CANDIDATES, sizeof *cs);
    if (!cs && st == BASE_OK)
        st = BASE_ERR_NOMEM;
    out->raw.prefix_cut = pre_off;
    out->raw.suffix_cut = sr->suffix_len - suf_len;
    int nc = 0, n_ok = 0;
    const ifl__xfer *failed = NULL;
    for (int i = 0; st == BASE_OK && i < n_x; i++) {
        ifl__xfer *x = &xs[i];
        if (x->st == BASE_OK)
            ifl__collect(r, sr, x, pre_off, suf_len, cs, &nc);
        if (x->st == BASE_OK) {
            n_ok++;
        } else if (!failed) {
            failed = x;
        } else {
            ifl__redact(r, x->msg);
            BASE_LOGW("remote", "candidate request %d of %d: %s", i + 1, n_x, x->msg);
        }
    }
    char msg[sizeof out->error] = "";
    if (st == BASE_OK && n_ok == 0 && failed) {
        st = failed->st;
        snprintf(msg, sizeof msg, "%s", failed->msg);
    } else if (st == BASE_OK && failed) {
        /* Some candidates came: answer with them, say what the others met. */
        char m2[sizeof failed->msg];
        snprintf(m2, sizeof m2, "%s", failed->msg);
        ifl__redact(r, m2);
        BASE_LOGW("remote", "%d of %d candidate requests failed: %s", n_x - n_ok, n_x, m2);
    }
    if (st == BASE_OK) {
        qsort(cs, (size_t)nc, sizeof *cs, ifl__cand_cmp);
        for (int i = 0; i < nc; i++) {
            bool dup = false;
            for (int k = 0; k < out->raw.n_cand && !dup; k++)
                dup = out->raw.cand[k].len == cs[i].len &&
                      memcmp(out->raw.cand[k].text, cs[i].text, cs[i].len) == 0;
            if (dup)
                continue; /* the same text twice is one candidate */
            ifl_text_cand *tc = &out->raw.cand[out->raw.n_cand];
            tc->text = cs[i].text;
            tc->len = cs[i].len;
            tc->mean_conf = cs[i].conf; /* -1: the API reports none */
            tc->index = out->raw.n_cand;
            out->raw.n_cand++;
            cs[i].text = NULL;
        }
    }
    for (int i = 0; cs && i < nc; i++)
        free(cs[i].text);
    free(cs);
    if (st != BASE_OK && st != BASE_ERR_CANCELLED) {
        if (!msg[0])
            snprintf(msg, sizeof msg, "remote: %s", base_status_str(st));
        ifl__redact(r, msg);
        snprintf(out->error, sizeof out->error, "%s", msg);
        BASE_LOGW("remote", "%s", out->error);
    }
    out->runs = 1;
    out->n_hole = c->max_tokens;
    out->raw.t.diffuse_ms = base_ms_since(c->t0);
    ifl_remote_call_free(c);
    return st;
}

static base_status ifl__remote_produce(void *self, const ifl_source_req *sr,
                                       const volatile int *cancel, ifl_doc_res *out) {
    ifl_remote_call *c = NULL;
    base_status st = ifl_remote_call_new(self, sr, cancel, false, &c, out);
    if (st != BASE_OK)
        return st;
    c->st = ifl__post(c);
    return ifl_remote_call_finish(c, out);
}

ifl_source_i ifl_source_remote(ifl_remote *r) {
    ifl_source_i s = {"remote", ifl__remote_produce, r};
    return s;
}

base_status ifl_remote_probe(ifl_remote *r, char *msg, size_t cap) {
    ifl_doc_req d;
    ifl_doc_req_default(&d);
    static const char pre[] = "def add(a, b):\n    return ";
    static const char suf[] = "\n";
    ifl_source_req sr = {pre, sizeof pre - 1, suf, sizeof suf - 1, 4, 4, true, 0, 0.0, &d, 0, 0.0};
    ifl_doc_res res;
    memset(&res, 0, sizeof res);
    uint64_t t0 = base_now_ns();
    base_status st = ifl__remote_produce(r, &sr, NULL, &res);
    double ms = base_ms_since(t0);
    const char *ver = r->http_version == CURL_HTTP_VERSION_2_0   ? "HTTP/2"
                      : r->http_version == CURL_HTTP_VERSION_1_1 ? "HTTP/1.1"
                      : r->http_version == CURL_HTTP_VERSION_1_0 ? "HTTP/1.0"
                                                                 : "HTTP";
    if (st == BASE_OK)
        snprintf(msg, cap, "reachable, authenticated, answered in %.0f ms over %s (%d candidate%s)",
                 ms, ver, res.raw.n_cand, res.raw.n_cand == 1 ? "" : "s");
    else
        snprintf(msg, cap, "%s", res.error[0] ? res.error : base_status_str(st));
    ifl_text_res_free(&res.raw);
    return st;
}
