/* infill remote source: candidates from an HTTP inference server.
 *
 * libcurl (multi interface) does HTTP and TLS; it is a kept library with
 * keep-alive, HTTP/2 and certificate checks, so none of that is hand-written.
 * The transfer runs on the thread that runs the job (the engine worker) and
 * polls the job's cancel flag every IFL__POLL_MS: a superseded or cancelled
 * request removes its transfer, which closes that connection. One easy
 * handle and one multi handle live as long as the source, so the next
 * request reuses the kept-alive connection.
 *
 * The API key is only ever put into the Authorization header; every message
 * that leaves this file passes through ifl__redact first. */
#define _POSIX_C_SOURCE 200809L
#include "flag.h"
#include "source.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define IFL__POLL_MS 10

struct ifl_remote {
    ifl_remote_cfg cfg;
    CURLM *multi;
    CURL *easy;
    struct curl_slist *hdrs;
    char *endpoint;
    char errbuf[CURL_ERROR_SIZE];
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
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
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
    r->easy = curl_easy_init();
    if (!r->endpoint || !r->multi || !r->easy) {
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
    CURL *e = r->easy;
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
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "infilld");
    curl_multi_setopt(r->multi, CURLMOPT_MAXCONNECTS, 4L);
    return r;
}

void ifl_remote_free(ifl_remote *r) {
    if (!r)
        return;
    if (r->easy)
        curl_easy_cleanup(r->easy);
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
    if (!d || !d->partial || b->n_acc == 0)
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
        curl_easy_getinfo(b->r->easy, CURLINFO_RESPONSE_CODE, &code);
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

static base_status ifl__post(ifl_remote *r, const char *json, const volatile int *cancel,
                             uint64_t deadline_ns, long *code, ifl__body *body, char *msg,
                             size_t cap) {
    CURL *e = r->easy;
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(json));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, ifl__write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
    for (int attempt = 0;; attempt++) {
        long tmo = r->cfg.timeout_ms;
        if (deadline_ns) {
            uint64_t now = base_now_ns();
            long left = now >= deadline_ns ? 0 : (long)((deadline_ns - now) / 1000000u);
            if (left <= 0) {
                snprintf(msg, cap, "remote: the request's time budget ran out");
                return BASE_ERR_TIMEOUT;
            }
            tmo = BASE_MIN(tmo, left);
        }
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, tmo);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, tmo);
        ifl__body_reset(body);
        r->errbuf[0] = 0;
        if (curl_multi_add_handle(r->multi, e) != CURLM_OK) {
            snprintf(msg, cap, "remote: cannot start the transfer");
            return BASE_ERR_IO;
        }
        CURLcode res = CURLE_OK;
        bool done = false, cancelled = false;
        while (!done) {
            int running = 0;
            if (curl_multi_perform(r->multi, &running) != CURLM_OK)
                break;
            CURLMsg *m;
            int left;
            while ((m = curl_multi_info_read(r->multi, &left)) != NULL)
                if (m->msg == CURLMSG_DONE) {
                    res = m->data.result;
                    done = true;
                }
            if (done)
                break;
            if (base_flag_get(cancel)) {
                cancelled = true;
                break;
            }
            curl_multi_poll(r->multi, NULL, 0, IFL__POLL_MS, NULL);
        }
        /* Removing an unfinished transfer closes its connection. */
        curl_multi_remove_handle(r->multi, e);
        if (cancelled)
            return BASE_ERR_CANCELLED;
        if (!done) {
            snprintf(msg, cap, "remote: transfer failed");
            return BASE_ERR_IO;
        }
        if (body->bad) {
            snprintf(msg, cap, "%s", body->why);
            return BASE_ERR_PARSE;
        }
        if (res == CURLE_OK) {
            curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, code);
            if (body->sse && body->line.len > 0) {
                /* A last line without its newline. */
                if (!ifl__sse_line(body) || !ifl__sse_event(body)) {
                    snprintf(msg, cap, "%s", body->why);
                    return BASE_ERR_PARSE;
                }
            } else if (body->sse && body->data.len > 0 && !ifl__sse_event(body)) {
                snprintf(msg, cap, "%s", body->why);
                return BASE_ERR_PARSE;
            }
            if (body->sse && !body->done && !body->finished) {
                snprintf(msg, cap,
                         "remote: the stream from %s ended after %d event%s without finishing",
                         r->cfg.url, body->events, body->events == 1 ? "" : "s");
                return BASE_ERR_IO;
            }
            return BASE_OK;
        }
        if (body->oversize) {
            snprintf(msg, cap, "remote: the response is larger than %zu bytes", body->max);
            return BASE_ERR_TOO_LARGE;
        }
        /* Only a connection that failed before anything was sent is retried. */
        if (res == CURLE_COULDNT_CONNECT && attempt < 2 && !base_flag_get(cancel)) {
            struct timespec ts = {0, (long)(50 + 100 * attempt) * 1000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        if (res == CURLE_OPERATION_TIMEDOUT && body->sse) {
            snprintf(msg, cap,
                     "remote: the stream from %s did not finish within %ld ms (%d events)",
                     r->cfg.url, tmo, body->events);
            return BASE_ERR_TIMEOUT;
        }
        if (body->sse && body->done) {
            /* Everything came; only the connection's end was untidy. */
            curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, code);
            return BASE_OK;
        }
        if (body->sse && !body->done) {
            snprintf(msg, cap, "remote: the stream from %s broke off after %d event%s: %.100s",
                     r->cfg.url, body->events, body->events == 1 ? "" : "s",
                     r->errbuf[0] ? r->errbuf : curl_easy_strerror(res));
            return BASE_ERR_IO;
        }
        if (res == CURLE_OPERATION_TIMEDOUT) {
            snprintf(msg, cap, "remote: no answer from %s within %ld ms", r->cfg.url, tmo);
            return BASE_ERR_TIMEOUT;
        }
        snprintf(msg, cap, "remote: %.100s: %.120s", r->cfg.url,
                 r->errbuf[0] ? r->errbuf : curl_easy_strerror(res));
        return BASE_ERR_IO;
    }
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

static char *ifl__request_json(const ifl_remote *r, const ifl_source_req *sr, size_t pre_off,
                               size_t suf_len, int max_tokens) {
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

static base_status ifl__remote_produce(void *self, const ifl_source_req *sr,
                                       const volatile int *cancel, ifl_doc_res *out) {
    ifl_remote *r = self;
    uint64_t t0 = base_now_ns();
    size_t pre_off, suf_len;
    ifl__cut_context(r, sr, &pre_off, &suf_len);
    /* maxTokens, when set, replaces the span's size (the span's is counted in
     * the local model's tokens, a fair guess for another tokenizer). */
    int max_tokens = r->cfg.max_tokens > 0 ? r->cfg.max_tokens
                     : sr->n_hole_cap > 0  ? sr->n_hole_cap
                                           : 64;
    uint64_t deadline = sr->deadline_ns;
    char *json = ifl__request_json(r, sr, pre_off, suf_len, max_tokens);
    if (!json) {
        snprintf(out->error, sizeof out->error,
                 "remote: the document is not valid UTF-8 and cannot be sent as JSON");
        return BASE_ERR_PARSE;
    }
    ifl__body body;
    memset(&body, 0, sizeof body);
    base_buf_init(&body.buf);
    base_buf_init(&body.line);
    base_buf_init(&body.data);
    for (int i = 0; i < ENG_DIFF_MAX_CANDIDATES; i++)
        base_buf_init(&body.acc[i]);
    body.max = r->cfg.max_body;
    body.r = r;
    body.sr = sr;
    body.pre_off = pre_off;
    body.suf_len = suf_len;
    body.max_tokens = max_tokens;
    body.stream = r->cfg.stream;
    long code = 0;
    char msg[sizeof out->error] = "";
    base_status st = ifl__post(r, json, cancel, deadline, &code, &body, msg, sizeof msg);
    free(json);
    out->raw.prefix_cut = pre_off;
    out->raw.suffix_cut = sr->suffix_len - suf_len;
    json_t *root = NULL;
    if (st == BASE_OK && !body.sse) {
        json_error_t je;
        root = body.buf.len ? json_loadb(body.buf.data, body.buf.len, 0, &je) : NULL;
        char detail[160] = "";
        if (root)
            ifl__server_error(root, detail, sizeof detail);
        if (code == 401 || code == 403) {
            snprintf(msg, sizeof msg, "remote: %s refused the credentials (HTTP %ld)%s", r->cfg.url,
                     code, detail);
            st = BASE_ERR_DENIED;
        } else if (code == 429) {
            snprintf(msg, sizeof msg, "remote: %s is rate limiting (HTTP 429)%s", r->cfg.url,
                     detail);
            st = BASE_ERR_IO;
        } else if (code < 200 || code >= 300) {
            snprintf(msg, sizeof msg, "remote: %s answered HTTP %ld%s", r->cfg.url, code, detail);
            st = BASE_ERR_IO;
        } else if (!json_is_object(root)) {
            snprintf(msg, sizeof msg, "remote: %s sent a body that is not a JSON object",
                     r->cfg.url);
            st = BASE_ERR_PARSE;
        }
    }
    const char *texts[ENG_DIFF_MAX_CANDIDATES];
    size_t lens[ENG_DIFF_MAX_CANDIDATES];
    int n = 0;
    ifl_remote_api api = r->cfg.api;
    if (st == BASE_OK && body.sse) {
        for (int i = 0; i < body.n_acc; i++) {
            texts[n] = body.acc[i].data ? body.acc[i].data : "";
            lens[n++] = body.acc[i].len;
        }
        if (n == 0) {
            texts[n] = "";
            lens[n++] = 0; /* a finished stream with no text: an empty answer */
        }
    } else if (st == BASE_OK) {
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
                    lens[n++] = json_string_length(t);
                }
            }
            if (n == 0 && json_array_size(choices) > 0)
                st = BASE_ERR_PARSE;
        } else if (api == IFL_API_LLAMA_INFILL &&
                   json_is_string(json_object_get(root, "content"))) {
            json_t *t = json_object_get(root, "content");
            texts[n] = json_string_value(t);
            lens[n++] = json_string_length(t);
        } else {
            st = BASE_ERR_PARSE;
        }
        if (st == BASE_ERR_PARSE)
            snprintf(msg, sizeof msg, "remote: %s answered without %s", r->cfg.url,
                     api == IFL_API_LLAMA_INFILL ? "\"content\""
                     : api == IFL_API_CHAT       ? "choices[].message.content"
                                                 : "choices[].text");
    }
    for (int i = 0; st == BASE_OK && i < n; i++) {
        ifl_text_cand *c = &out->raw.cand[out->raw.n_cand];
        if (api == IFL_API_CHAT) {
            st = ifl_chat_clean(sr->prefix + pre_off, sr->prefix_len - pre_off, sr->suffix, suf_len,
                                texts[i], lens[i], &c->text, &c->len);
            if (st != BASE_OK)
                break;
        } else {
            size_t l = ifl__cut_stops(r, texts[i], lens[i]);
            c->text = malloc(l + 1);
            if (!c->text) {
                st = BASE_ERR_NOMEM;
                break;
            }
            memcpy(c->text, texts[i], l);
            c->text[l] = 0;
            c->len = l;
        }
        c->mean_conf = -1.0; /* the API reports none */
        c->index = i;
        out->raw.n_cand++;
    }
    json_decref(root);
    ifl__body_deinit(&body);
    if (st != BASE_OK && st != BASE_ERR_CANCELLED) {
        if (!msg[0])
            snprintf(msg, sizeof msg, "remote: %s", base_status_str(st));
        ifl__redact(r, msg);
        snprintf(out->error, sizeof out->error, "%s", msg);
        BASE_LOGW("remote", "%s", out->error);
    }
    out->runs = 1;
    out->n_hole = max_tokens;
    out->raw.t.diffuse_ms = base_ms_since(t0);
    return st;
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
    ifl_source_req sr = {pre, sizeof pre - 1, suf, sizeof suf - 1, 4, 4, true, 0, 0.0, &d};
    ifl_doc_res res;
    memset(&res, 0, sizeof res);
    uint64_t t0 = base_now_ns();
    base_status st = ifl__remote_produce(r, &sr, NULL, &res);
    double ms = base_ms_since(t0);
    if (st == BASE_OK)
        snprintf(msg, cap, "reachable, authenticated, answered in %.0f ms (%d candidate%s)", ms,
                 res.raw.n_cand, res.raw.n_cand == 1 ? "" : "s");
    else
        snprintf(msg, cap, "%s", res.error[0] ? res.error : base_status_str(st));
    ifl_text_res_free(&res.raw);
    return st;
}
