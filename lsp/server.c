/* lsp server: one LSP 3.18 session. Decodes frames with jansson, enforces the
 * lifecycle, keeps the document store, turns completion requests into
 * provider work and provider answers into LSP results.
 *
 * Reading guide: lsp_server_feed → lsp__dispatch → one handler per method
 * (lsp__on_*). Provider answers come back through lsp_server_complete, which
 * converts byte ranges to positions (through the document store, the only
 * place that knows encodings) and writes the response. */
#define _POSIX_C_SOURCE 200809L
#include "lsp.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON-RPC / LSP error codes. */
enum {
    LSP__PARSE_ERROR = -32700,
    LSP__INVALID_REQUEST = -32600,
    LSP__METHOD_NOT_FOUND = -32601,
    LSP__INVALID_PARAMS = -32602,
    LSP__INTERNAL_ERROR = -32603,
    LSP__SERVER_NOT_INITIALIZED = -32002,
    LSP__REQUEST_FAILED = -32803,
    LSP__REQUEST_CANCELLED = -32800,
};

/* The one table from base_status to JSON-RPC error codes (STYLE rule 4). */
static int lsp__status_code(base_status st) {
    switch (st) {
    case BASE_ERR_INVALID:
    case BASE_ERR_RANGE:
    case BASE_ERR_NOT_FOUND:
        return LSP__INVALID_PARAMS;
    case BASE_ERR_PARSE:
        return LSP__PARSE_ERROR;
    case BASE_ERR_TOO_LARGE:
    case BASE_ERR_STATE:
    case BASE_ERR_DENIED:
        return LSP__INVALID_REQUEST;
    case BASE_ERR_CANCELLED:
        return LSP__REQUEST_CANCELLED;
    case BASE_ERR_NOMEM:
        return LSP__INTERNAL_ERROR;
    default: /* the model or device failed: the request could not be served */
        return LSP__REQUEST_FAILED;
    }
}

/* Error codes for a request the provider could not serve (its params were
 * valid): cancelled, out of memory, or the request failed. */
static int lsp__provider_code(base_status st) {
    switch (st) {
    case BASE_ERR_CANCELLED:
        return LSP__REQUEST_CANCELLED;
    case BASE_ERR_NOMEM:
        return LSP__INTERNAL_ERROR;
    default:
        return LSP__REQUEST_FAILED;
    }
}

static const char *lsp__kind_name(lsp_req_kind k) {
    switch (k) {
    case LSP_REQ_INLINE:
        return "textDocument/inlineCompletion failed";
    case LSP_REQ_COMPLETION:
        return "textDocument/completion failed";
    case LSP_REQ_REGENERATE:
        return "infilld.regenerate failed";
    default:
        return "codeAction/resolve failed";
    }
}

typedef enum lsp__state {
    LSP__UNINIT = 0,
    LSP__RUNNING,  /* initialize answered */
    LSP__SHUTDOWN, /* shutdown answered */
    LSP__EXITED,
} lsp__state;

typedef enum lsp__trace { LSP__TRACE_OFF = 0, LSP__TRACE_MESSAGES, LSP__TRACE_VERBOSE } lsp__trace;

/* A request waiting for the provider. */
typedef struct lsp__pending {
    struct lsp__pending *next;
    lsp_token token;
    json_t *id; /* the client's request id (owned) */
    lsp_req_kind kind;
    char *uri;
    int64_t version;
    size_t cursor;
    size_t sel_start, sel_end;
    bool has_selected;
    char *selected_text;
    size_t selected_len;
    size_t selected_start, selected_end;
    json_t *action; /* CODE_ACTION: the action to resolve (owned) */
} lsp__pending;

/* A request we sent to the client. */
typedef enum lsp__out_kind {
    LSP__OUT_APPLY_EDIT,
    LSP__OUT_PROGRESS_CREATE,
    LSP__OUT_REGISTER,   /* handle: the registration's serial */
    LSP__OUT_UNREGISTER, /* handle: the registration's serial */
} lsp__out_kind;
typedef struct lsp__outreq {
    struct lsp__outreq *next;
    int64_t id;
    lsp__out_kind kind;
    int handle;
} lsp__outreq;

/* Work-done progress, begun once the client has accepted its token. */
typedef struct lsp__progress {
    struct lsp__progress *next;
    int handle;
    bool created, begun, ended;
    char *title, *message, *end_message;
    int percent;
} lsp__progress;

struct lsp_server {
    lsp_server_hooks hooks;
    lsp_provider_i provider;
    bool has_provider;
    char *version;
    lsp_framer *framer;
    lsp_doc_store *docs;
    lsp__state state;
    bool initialized_note; /* `initialized` received */
    lsp_pos_encoding enc;
    lsp__trace trace;
    json_t *settings;
    int64_t process_id;
    bool cap_progress, cap_apply_edit, cap_resolve_edit;
    bool cap_inline_dynamic; /* textDocument.inlineCompletion.dynamicRegistration */
    /* The dynamic inline completion registration, when one is in force (or
     * sent and not refused). */
    struct {
        bool active;
        int serial;
        json_t *selector; /* as registered (owned; json null = every document) */
        bool refusal_shown;
    } reg;
    base_log_level client_log; /* "clientLogLevel": window/logMessage from this level */
    lsp__pending *pending;
    lsp_token next_token;
    uint64_t fed_ns; /* base_now_ns() when the bytes being dispatched arrived */
    lsp__outreq *outreqs;
    int64_t next_out_id;
    lsp__progress *progress;
    int next_progress;
    base_buf out; /* scratch for framing output */
    char perr[256];
    bool shutdown_requested; /* shutdown answered: exit code 0 */
};

/* Set while this thread forwards log lines to clients, or reports a
 * session's own problem to it: lines logged meanwhile are not queued for
 * forwarding (no recursion, no copy of a message the session already got). */
static _Thread_local bool lsp__log_quiet;

/* ---- output ------------------------------------------------------------- */

static void lsp__send(lsp_server *s, json_t *msg) {
    if (!msg)
        return;
    if (s->state == LSP__EXITED) {
        json_decref(msg);
        return;
    }
    char *body = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!body) {
        BASE_LOGE("lsp", "could not encode a message");
        return;
    }
    s->out.len = 0;
    if (lsp_frame_write(&s->out, body, strlen(body)) == BASE_OK && s->hooks.write)
        s->hooks.write(s->hooks.ud, s->out.data, s->out.len);
    free(body);
    if (s->out.cap > (1u << 20)) { /* do not keep a huge scratch buffer around */
        base_buf_deinit(&s->out);
        base_buf_init(&s->out);
    }
}

/* A JSON string from bytes that may not be valid UTF-8 (model output):
 * invalid bytes become U+FFFD. New reference. */
static json_t *lsp__str(const char *t, size_t n) {
    if (!t)
        return json_string("");
    if (base_utf8_valid(t, n)) {
        json_t *j = json_stringn(t, n);
        if (j)
            return j;
    }
    base_buf b;
    base_buf_init(&b);
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t l = base_utf8_decode(t + i, n - i, &cp);
        if (cp == 0) {
            base_buf_append(&b, "\0", 1);
        } else {
            char enc[4];
            size_t el = base_utf8_encode(cp, enc);
            base_buf_append(&b, enc, el);
        }
        i += l;
    }
    json_t *j = json_stringn(b.data ? b.data : "", b.len);
    base_buf_deinit(&b);
    return j;
}

static void lsp__respond(lsp_server *s, json_t *id, json_t *result) {
    json_t *m = json_object();
    json_object_set_new(m, "jsonrpc", json_string("2.0"));
    json_object_set(m, "id", id ? id : json_null());
    json_object_set_new(m, "result", result ? result : json_null());
    lsp__send(s, m);
}

static void lsp__error(lsp_server *s, json_t *id, int code, const char *fmt, ...) BASE_PRINTF(4, 5);
static void lsp__error(lsp_server *s, json_t *id, int code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_t *e = json_object();
    json_object_set_new(e, "code", json_integer(code));
    json_object_set_new(e, "message", lsp__str(msg, strlen(msg)));
    json_t *m = json_object();
    json_object_set_new(m, "jsonrpc", json_string("2.0"));
    json_object_set(m, "id", id ? id : json_null());
    json_object_set_new(m, "error", e);
    lsp__send(s, m);
}

static void lsp__notify(lsp_server *s, const char *method, json_t *params) {
    json_t *m = json_object();
    json_object_set_new(m, "jsonrpc", json_string("2.0"));
    json_object_set_new(m, "method", json_string(method));
    json_object_set_new(m, "params", params ? params : json_null());
    lsp__send(s, m);
}

static void lsp__request(lsp_server *s, const char *method, json_t *params, lsp__out_kind kind,
                         int handle) {
    lsp__outreq *o = calloc(1, sizeof(*o));
    if (!o) {
        json_decref(params);
        return;
    }
    o->id = ++s->next_out_id;
    o->kind = kind;
    o->handle = handle;
    o->next = s->outreqs;
    s->outreqs = o;
    json_t *m = json_object();
    json_object_set_new(m, "jsonrpc", json_string("2.0"));
    json_object_set_new(m, "id", json_integer(o->id));
    json_object_set_new(m, "method", json_string(method));
    json_object_set_new(m, "params", params ? params : json_null());
    lsp__send(s, m);
}

void lsp_server_show_message(lsp_server *srv, int type, const char *msg) {
    if (!srv || !msg)
        return;
    lsp__notify(srv, "window/showMessage",
                json_pack("{s:i,s:o}", "type", type, "message", lsp__str(msg, strlen(msg))));
}

void lsp_server_log_message(lsp_server *srv, int type, const char *msg) {
    if (!srv || !msg)
        return;
    lsp__notify(srv, "window/logMessage",
                json_pack("{s:i,s:o}", "type", type, "message", lsp__str(msg, strlen(msg))));
}

static void lsp__logmsg(lsp_server *s, int type, const char *fmt, ...) BASE_PRINTF(3, 4);
static void lsp__logmsg(lsp_server *s, int type, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    bool was = lsp__log_quiet;
    lsp__log_quiet = true;
    BASE_LOGW("lsp", "%s", msg);
    lsp__log_quiet = was;
    lsp_server_log_message(s, type, msg);
}

/* ---- parameter access: every failure names the field -------------------- */

static json_t *lsp__get(lsp_server *s, json_t *o, const char *key, const char *path, int type,
                        bool required) {
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    if (!v || json_is_null(v)) {
        if (required)
            snprintf(s->perr, sizeof(s->perr), "invalid params: %s is missing", path);
        return NULL;
    }
    if (json_typeof(v) != (json_type)type) {
        static const char *names[] = {"an object", "an array",  "a string",  "an integer",
                                      "a number",  "a boolean", "a boolean", "null"};
        snprintf(s->perr, sizeof(s->perr), "invalid params: %s must be %s", path,
                 type >= 0 && type < 8 ? names[type] : "valid");
        return NULL;
    }
    return v;
}

static bool lsp__uint(lsp_server *s, json_t *o, const char *key, const char *path, uint32_t *out) {
    json_t *v = lsp__get(s, o, key, path, JSON_INTEGER, true);
    if (!v)
        return false;
    json_int_t x = json_integer_value(v);
    if (x < 0 || x > (json_int_t)UINT32_MAX) {
        snprintf(s->perr, sizeof(s->perr), "invalid params: %s must be a uinteger", path);
        return false;
    }
    *out = (uint32_t)x;
    return true;
}

typedef struct lsp__pos {
    uint32_t line, character;
} lsp__pos;

static bool lsp__position(lsp_server *s, json_t *o, const char *key, const char *path,
                          lsp__pos *p) {
    json_t *v = lsp__get(s, o, key, path, JSON_OBJECT, true);
    char sub[128];
    if (!v)
        return false;
    snprintf(sub, sizeof(sub), "%s.line", path);
    if (!lsp__uint(s, v, "line", sub, &p->line))
        return false;
    snprintf(sub, sizeof(sub), "%s.character", path);
    return lsp__uint(s, v, "character", sub, &p->character);
}

static bool lsp__range(lsp_server *s, json_t *o, const char *key, const char *path, lsp__pos *a,
                       lsp__pos *b) {
    json_t *v = lsp__get(s, o, key, path, JSON_OBJECT, true);
    char sub[128];
    if (!v)
        return false;
    snprintf(sub, sizeof(sub), "%s.start", path);
    if (!lsp__position(s, v, "start", sub, a))
        return false;
    snprintf(sub, sizeof(sub), "%s.end", path);
    return lsp__position(s, v, "end", sub, b);
}

/* textDocument.uri of params. */
static const char *lsp__doc_uri(lsp_server *s, json_t *params) {
    json_t *td = lsp__get(s, params, "textDocument", "textDocument", JSON_OBJECT, true);
    if (!td)
        return NULL;
    json_t *u = lsp__get(s, td, "uri", "textDocument.uri", JSON_STRING, true);
    return u ? json_string_value(u) : NULL;
}

/* The open document uri names, or NULL after answering id with -32602. */
static lsp_doc *lsp__open_doc(lsp_server *s, json_t *id, const char *uri) {
    lsp_doc *d = lsp_doc_get(s->docs, uri);
    if (!d)
        lsp__error(s, id, LSP__INVALID_PARAMS, "invalid params: textDocument.uri %s is not open",
                   uri);
    return d;
}

static json_t *lsp__pos_json(const lsp_doc *d, lsp_pos_encoding enc, size_t off) {
    uint32_t line = 0, ch = 0;
    if (lsp_doc_offset_to_pos(d, enc, off, &line, &ch) != BASE_OK)
        return NULL;
    return json_pack("{s:i,s:i}", "line", (json_int_t)line, "character", (json_int_t)ch);
}

static json_t *lsp__range_json(const lsp_doc *d, lsp_pos_encoding enc, size_t a, size_t b) {
    json_t *pa = lsp__pos_json(d, enc, a), *pb = lsp__pos_json(d, enc, b);
    if (!pa || !pb) {
        json_decref(pa);
        json_decref(pb);
        return NULL;
    }
    return json_pack("{s:o,s:o}", "start", pa, "end", pb);
}

/* ---- pending requests --------------------------------------------------- */

static void lsp__pending_free(lsp__pending *p) {
    if (!p)
        return;
    json_decref(p->id);
    json_decref(p->action);
    free(p->uri);
    free(p->selected_text);
    free(p);
}

static lsp__pending *lsp__take(lsp_server *s, lsp_token token) {
    for (lsp__pending **pp = &s->pending; *pp; pp = &(*pp)->next)
        if ((*pp)->token == token) {
            lsp__pending *p = *pp;
            *pp = p->next;
            p->next = NULL;
            return p;
        }
    return NULL;
}

static lsp__pending *lsp__find_id(lsp_server *s, json_t *id) {
    for (lsp__pending *p = s->pending; p; p = p->next)
        if (p->id && json_equal(p->id, id))
            return p;
    return NULL;
}

/* Answers p with a null result (or a cancellation error) and tells the
 * provider to stop. */
static void lsp__drop(lsp_server *s, lsp_token token, bool cancelled, bool answer) {
    lsp__pending *p = lsp__take(s, token);
    if (!p)
        return;
    if (answer && p->id) {
        if (cancelled)
            lsp__error(s, p->id, LSP__REQUEST_CANCELLED, "request cancelled");
        else
            lsp__respond(s, p->id, NULL);
    }
    if (s->has_provider)
        s->provider.cancel(s->provider.ud, s, p->token);
    lsp__pending_free(p);
}

static void lsp__drop_all(lsp_server *s, bool answer) {
    while (s->pending)
        lsp__drop(s, s->pending->token, false, answer);
}

size_t lsp_server_pending(const lsp_server *srv) {
    size_t n = 0;
    for (const lsp__pending *p = srv ? srv->pending : NULL; p; p = p->next)
        n++;
    return n;
}

/* ---- life cycle ----------------------------------------------------------- */

lsp_server *lsp_server_new(const lsp_server_hooks *hooks, const lsp_provider_i *provider,
                           const lsp_server_opts *opts, base_status *err) {
    base_status st = BASE_ERR_NOMEM;
    if (!hooks || !hooks->write) {
        st = BASE_ERR_INVALID;
        goto fail;
    }
    if (provider && (!provider->complete || !provider->cancel)) {
        st = BASE_ERR_INVALID;
        goto fail;
    }
    lsp_server *s = calloc(1, sizeof(*s));
    if (!s)
        goto fail;
    s->hooks = *hooks;
    if (provider) {
        s->provider = *provider;
        s->has_provider = true;
    }
    base_buf_init(&s->out);
    s->framer = lsp_framer_new(opts ? opts->max_message : 0);
    s->docs = lsp_doc_store_new();
    s->settings = json_object();
    s->client_log = BASE_LOG_WARN;
    s->version = strdup(opts && opts->version ? opts->version : "0");
    if (!s->framer || !s->docs || !s->settings || !s->version)
        goto fail_server;
    if (s->has_provider && s->provider.session_open)
        s->provider.session_open(s->provider.ud, s);
    if (err)
        *err = BASE_OK;
    return s;

fail_server:
    lsp_framer_free(s->framer);
    lsp_doc_store_free(s->docs);
    json_decref(s->settings);
    free(s->version);
    free(s);
fail:
    if (err)
        *err = st;
    return NULL;
}

void lsp_server_free(lsp_server *srv) {
    if (!srv)
        return;
    srv->state = LSP__EXITED; /* writes nothing from here on */
    lsp__drop_all(srv, false);
    if (srv->has_provider && srv->provider.session_close)
        srv->provider.session_close(srv->provider.ud, srv);
    while (srv->outreqs) {
        lsp__outreq *o = srv->outreqs;
        srv->outreqs = o->next;
        free(o);
    }
    while (srv->progress) {
        lsp__progress *p = srv->progress;
        srv->progress = p->next;
        free(p->title);
        free(p->message);
        free(p->end_message);
        free(p);
    }
    lsp_doc_store_free(srv->docs);
    lsp_framer_free(srv->framer);
    json_decref(srv->settings);
    json_decref(srv->reg.selector);
    base_buf_deinit(&srv->out);
    free(srv->version);
    free(srv);
}

bool lsp_server_initialized(const lsp_server *srv) { return srv && srv->state != LSP__UNINIT; }
bool lsp_server_shutting_down(const lsp_server *srv) { return srv && srv->shutdown_requested; }
bool lsp_server_exited(const lsp_server *srv) { return srv && srv->state == LSP__EXITED; }
int lsp_server_exit_code(const lsp_server *srv) { return lsp_server_shutting_down(srv) ? 0 : 1; }
lsp_pos_encoding lsp_server_encoding(const lsp_server *srv) {
    return srv ? srv->enc : LSP_ENC_UTF16;
}
lsp_doc_store *lsp_server_docs(lsp_server *srv) { return srv ? srv->docs : NULL; }
int64_t lsp_server_process_id(const lsp_server *srv) { return srv ? srv->process_id : 0; }

static void lsp__sync_registration(lsp_server *s);

void lsp_server_set_settings(lsp_server *srv, json_t *settings) {
    if (!srv || !json_is_object(settings))
        return;
    json_incref(settings);
    json_decref(srv->settings);
    srv->settings = settings;
    base_log_level lv;
    const char *cl = json_string_value(json_object_get(settings, "clientLogLevel"));
    srv->client_log = cl && base_log_level_parse(cl, &lv) ? lv : BASE_LOG_WARN;
    lsp__sync_registration(srv);
}

const json_t *lsp_server_settings(const lsp_server *srv) { return srv ? srv->settings : NULL; }

static bool lsp__flag(const lsp_server *s, const char *key) {
    return json_is_true(json_object_get(s->settings, key));
}

/* Ends the session: answers nothing more, tells the transport. */
static void lsp__exit(lsp_server *s) {
    int code = s->shutdown_requested ? 0 : 1;
    lsp__drop_all(s, false);
    s->state = LSP__EXITED;
    if (s->hooks.exit)
        s->hooks.exit(s->hooks.ud, s, code);
}

int lsp_server_eof(lsp_server *srv) {
    if (!srv)
        return 1;
    size_t left = lsp_framer_buffered(srv->framer);
    if (left)
        BASE_LOGW("lsp", "input ended inside a message: %zu bytes discarded", left);
    int code = lsp_server_exit_code(srv);
    lsp__drop_all(srv, false);
    srv->state = LSP__EXITED;
    return code;
}

/* ---- initialize ------------------------------------------------------------ */

static lsp_pos_encoding lsp__negotiate(json_t *caps) {
    json_t *encs = json_object_get(json_object_get(caps, "general"), "positionEncodings");
    bool u8 = false, u16 = false, u32 = false;
    size_t i;
    json_t *e;
    json_array_foreach(encs, i, e) {
        const char *v = json_string_value(e);
        if (!v)
            continue;
        u8 |= strcmp(v, "utf-8") == 0;
        u16 |= strcmp(v, "utf-16") == 0;
        u32 |= strcmp(v, "utf-32") == 0;
    }
    if (u8)
        return LSP_ENC_UTF8;
    if (u16 || !u32)
        return LSP_ENC_UTF16;
    return LSP_ENC_UTF32;
}

static const char *lsp__enc_name(lsp_pos_encoding e) {
    return e == LSP_ENC_UTF8 ? "utf-8" : e == LSP_ENC_UTF32 ? "utf-32" : "utf-16";
}

static void lsp__on_initialize(lsp_server *s, json_t *id, json_t *params) {
    if (s->state != LSP__UNINIT) {
        lsp__error(s, id, LSP__INVALID_REQUEST, "initialize may only be sent once");
        return;
    }
    if (!json_is_object(params)) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "invalid params: params must be an object");
        return;
    }
    json_t *pid = json_object_get(params, "processId");
    if (pid && !json_is_null(pid) && !json_is_integer(pid)) {
        lsp__error(s, id, LSP__INVALID_PARAMS,
                   "invalid params: processId must be an integer or null");
        return;
    }
    json_t *caps = json_object_get(params, "capabilities");
    if (caps && !json_is_object(caps)) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "invalid params: capabilities must be an object");
        return;
    }
    s->process_id = json_is_integer(pid) ? (int64_t)json_integer_value(pid) : 0;
    s->enc = lsp__negotiate(caps);
    s->cap_progress =
        json_is_true(json_object_get(json_object_get(caps, "window"), "workDoneProgress"));
    s->cap_apply_edit =
        json_is_true(json_object_get(json_object_get(caps, "workspace"), "applyEdit"));
    s->cap_inline_dynamic = json_is_true(
        json_object_get(json_object_get(json_object_get(caps, "textDocument"), "inlineCompletion"),
                        "dynamicRegistration"));
    {
        json_t *props = json_object_get(
            json_object_get(json_object_get(json_object_get(caps, "textDocument"), "codeAction"),
                            "resolveSupport"),
            "properties");
        size_t i;
        json_t *e;
        json_array_foreach(props, i, e) {
            if (json_is_string(e) && strcmp(json_string_value(e), "edit") == 0)
                s->cap_resolve_edit = true;
        }
    }
    json_t *trace = json_object_get(params, "trace");
    if (json_is_string(trace)) {
        const char *t = json_string_value(trace);
        s->trace = strcmp(t, "verbose") == 0    ? LSP__TRACE_VERBOSE
                   : strcmp(t, "messages") == 0 ? LSP__TRACE_MESSAGES
                                                : LSP__TRACE_OFF;
    }
    json_t *io = json_object_get(params, "initializationOptions");
    if (json_is_object(io))
        lsp_server_set_settings(s, io);
    if (s->hooks.initialize) {
        char msg[256] = "";
        base_status st = s->hooks.initialize(s->hooks.ud, s, params, msg, sizeof(msg));
        if (st != BASE_OK) {
            lsp__error(s, id, LSP__INVALID_REQUEST, "session refused: %s",
                       msg[0] ? msg : base_status_str(st));
            lsp__exit(s);
            return;
        }
    }
    s->state = LSP__RUNNING;
    json_t *caps_out =
        json_pack("{s:s, s:{s:b,s:i,s:{s:b}}, s:b, s:{s:b,s:[]}, s:{s:[s],s:b}, s:{s:[s,s]},"
                  " s:{s:{s:b,s:b,s:b}}}",
                  "positionEncoding", lsp__enc_name(s->enc), "textDocumentSync", "openClose", 1,
                  "change", 2, "save", "includeText", 0, "inlineCompletionProvider", 1,
                  "completionProvider", "resolveProvider", 0, "triggerCharacters",
                  "codeActionProvider", "codeActionKinds", "refactor.rewrite", "resolveProvider", 1,
                  "executeCommandProvider", "commands", "infilld.regenerate", "infilld.accepted",
                  "experimental", "infilld", "partial", 1, "status", 1, "viewFileText", 1);
    /* A client that registers inline completion dynamically gets it through
     * client/registerCapability after `initialized` instead (LSP 3.18). */
    if (s->cap_inline_dynamic)
        json_object_del(caps_out, "inlineCompletionProvider");
    lsp__respond(s, id,
                 json_pack("{s:o,s:{s:s,s:s}}", "capabilities", caps_out, "serverInfo", "name",
                           "infilld", "version", s->version));
}

/* ---- documents ---------------------------------------------------------------- */

/* Pending completions of uri are answered with null and cancelled. */
static void lsp__drop_doc(lsp_server *s, const char *uri, bool only_completion) {
    for (lsp__pending *p = s->pending, *next; p; p = next) {
        next = p->next;
        if (strcmp(p->uri, uri) == 0 &&
            (!only_completion || p->kind == LSP_REQ_INLINE || p->kind == LSP_REQ_COMPLETION))
            lsp__drop(s, p->token, false, true);
    }
}

static void lsp__on_did_open(lsp_server *s, json_t *params) {
    json_t *td = lsp__get(s, params, "textDocument", "textDocument", JSON_OBJECT, true);
    json_t *uri = td ? lsp__get(s, td, "uri", "textDocument.uri", JSON_STRING, true) : NULL;
    json_t *lang =
        uri ? lsp__get(s, td, "languageId", "textDocument.languageId", JSON_STRING, true) : NULL;
    json_t *ver =
        lang ? lsp__get(s, td, "version", "textDocument.version", JSON_INTEGER, true) : NULL;
    json_t *text = ver ? lsp__get(s, td, "text", "textDocument.text", JSON_STRING, true) : NULL;
    if (!text) {
        lsp__logmsg(s, LSP_MSG_ERROR, "textDocument/didOpen ignored: %s", s->perr);
        return;
    }
    base_status st = lsp_doc_open(s->docs, json_string_value(uri), json_string_value(lang),
                                  (int64_t)json_integer_value(ver), json_string_value(text),
                                  json_string_length(text));
    if (st != BASE_OK)
        lsp__logmsg(s, LSP_MSG_ERROR, "textDocument/didOpen %s failed: %s", json_string_value(uri),
                    base_status_str(st));
}

/* infilld/didChangeCursor {textDocument: {uri, version?}, position}: where
 * the editor's cursor is (LSP has no such notification; Copilot's
 * textDocument/didFocus and Supermaven's cursor_update are the peers). A
 * stale version or a document that is not open is dropped quietly: the
 * notification races the edits that moved the cursor. */
static void lsp__on_did_change_cursor(lsp_server *s, json_t *params) {
    const char *uri = lsp__doc_uri(s, params);
    lsp__pos pos;
    if (!uri || !lsp__position(s, params, "position", "position", &pos)) {
        lsp__logmsg(s, LSP_MSG_ERROR, "infilld/didChangeCursor ignored: %s", s->perr);
        return;
    }
    lsp_doc *d = lsp_doc_get(s->docs, uri);
    if (!d) {
        BASE_LOGD("lsp", "infilld/didChangeCursor for %s, which is not open", uri);
        return;
    }
    json_t *ver = json_object_get(json_object_get(params, "textDocument"), "version");
    if (json_is_integer(ver) && json_integer_value(ver) != lsp_doc_version(d))
        return;
    size_t off;
    if (lsp_doc_pos_to_offset(d, s->enc, pos.line, pos.character, &off) != BASE_OK) {
        /* without a version it may describe a text still on its way */
        BASE_LOGD("lsp", "infilld/didChangeCursor: %u:%u lies outside %s", pos.line, pos.character,
                  uri);
        return;
    }
    if (s->has_provider && s->provider.cursor)
        s->provider.cursor(s->provider.ud, s, d, off);
}

static void lsp__on_did_change(lsp_server *s, json_t *params) {
    json_t *td = lsp__get(s, params, "textDocument", "textDocument", JSON_OBJECT, true);
    json_t *uri = td ? lsp__get(s, td, "uri", "textDocument.uri", JSON_STRING, true) : NULL;
    json_t *ver = NULL;
    if (uri)
        ver = lsp__get(s, td, "version", "textDocument.version", JSON_INTEGER, true);
    json_t *changes =
        ver ? lsp__get(s, params, "contentChanges", "contentChanges", JSON_ARRAY, true) : NULL;
    if (!changes) {
        lsp__logmsg(s, LSP_MSG_ERROR, "textDocument/didChange ignored: %s", s->perr);
        return;
    }
    lsp_doc *d = lsp_doc_get(s->docs, json_string_value(uri));
    if (!d) {
        lsp__logmsg(s, LSP_MSG_ERROR, "textDocument/didChange for %s, which is not open",
                    json_string_value(uri));
        return;
    }
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c) {
        char path[64];
        snprintf(path, sizeof(path), "contentChanges[%zu].text", i);
        json_t *text = lsp__get(s, c, "text", path, JSON_STRING, true);
        if (!text) {
            lsp__logmsg(s, LSP_MSG_ERROR, "textDocument/didChange %s: %s (change dropped)",
                        json_string_value(uri), s->perr);
            break;
        }
        base_status st;
        if (!json_object_get(c, "range")) {
            st = lsp_doc_replace_all(d, lsp_doc_version(d), json_string_value(text),
                                     json_string_length(text));
        } else {
            lsp__pos a, b;
            snprintf(path, sizeof(path), "contentChanges[%zu].range", i);
            if (!lsp__range(s, c, "range", path, &a, &b)) {
                lsp__logmsg(s, LSP_MSG_ERROR, "textDocument/didChange %s: %s (change dropped)",
                            json_string_value(uri), s->perr);
                break;
            }
            st = lsp_doc_apply(d, s->enc, a.line, a.character, b.line, b.character,
                               json_string_value(text), json_string_length(text));
            if (st == BASE_ERR_RANGE) {
                lsp__logmsg(s, LSP_MSG_ERROR,
                            "textDocument/didChange %s: range %u:%u-%u:%u lies outside the "
                            "document (%zu lines); change dropped",
                            json_string_value(uri), a.line, a.character, b.line, b.character,
                            lsp_doc_line_count(d));
                break;
            }
        }
        if (st != BASE_OK) {
            lsp__logmsg(s, LSP_MSG_ERROR, "textDocument/didChange %s: %s", json_string_value(uri),
                        base_status_str(st));
            break;
        }
    }
    lsp_doc_set_version(d, (int64_t)json_integer_value(ver));
    /* Answers computed for the old text would be stale: end them now and
     * free the model for the request that follows the edit. */
    lsp__drop_doc(s, json_string_value(uri), true);
}

static void lsp__on_did_close(lsp_server *s, json_t *params) {
    const char *uri = lsp__doc_uri(s, params);
    if (!uri) {
        lsp__logmsg(s, LSP_MSG_ERROR, "textDocument/didClose ignored: %s", s->perr);
        return;
    }
    lsp__drop_doc(s, uri, false);
    if (lsp_doc_close(s->docs, uri) != BASE_OK)
        lsp__logmsg(s, LSP_MSG_WARNING, "textDocument/didClose for %s, which is not open", uri);
}

/* ---- completion requests --------------------------------------------------------- */

static void lsp__opts(lsp_server *s, lsp_req_options *o) {
    memset(o, 0, sizeof(*o));
    o->all = s->settings;
    json_t *v = json_object_get(s->settings, "seed");
    if (json_is_integer(v)) {
        o->has_seed = true;
        o->seed = (uint64_t)json_integer_value(v);
    }
    v = json_object_get(s->settings, "candidates");
    if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= 64)
        o->candidates = (int)json_integer_value(v);
    v = json_object_get(s->settings, "validate");
    o->validate = json_is_boolean(v) ? json_is_true(v) : -1;
    v = json_object_get(s->settings, "steps");
    if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= 4096)
        o->steps = (int)json_integer_value(v);
    o->alg = json_string_value(json_object_get(s->settings, "alg"));
}

void lsp_server_req_options(lsp_server *srv, lsp_req_options *o) { lsp__opts(srv, o); }

/* Registers p and hands it to the provider (which may answer at once). */
static void lsp__start(lsp_server *s, lsp__pending *p, lsp_doc *d, bool invoked) {
    p->token = ++s->next_token;
    p->version = lsp_doc_version(d);
    p->next = s->pending;
    s->pending = p;
    bool allowed = !s->hooks.allow || s->hooks.allow(s->hooks.ud, s, d);
    if (!s->has_provider || !allowed) {
        if (!allowed)
            BASE_LOGD("lsp", "%s is excluded: not sent to the model", p->uri);
        lsp_server_complete(s, p->token, NULL, 0, BASE_OK, NULL);
        return;
    }
    lsp_req_options opts;
    lsp__opts(s, &opts);
    lsp_completion_req r;
    memset(&r, 0, sizeof(r));
    r.token = p->token;
    r.kind = p->kind;
    r.doc = d;
    r.uri = lsp_doc_uri(d);
    r.language_id = lsp_doc_language_id(d);
    r.version = p->version;
    r.cursor = p->cursor;
    r.sel_start = p->sel_start;
    r.sel_end = p->sel_end;
    r.invoked = invoked;
    r.has_selected = p->has_selected;
    r.selected_text = p->selected_text;
    r.selected_len = p->selected_len;
    r.selected_start = p->selected_start;
    r.selected_end = p->selected_end;
    r.want_partial = lsp__flag(s, "partial");
    r.received_ns = s->fed_ns ? s->fed_ns : base_now_ns();
    r.opts = &opts;
    s->provider.complete(s->provider.ud, s, &r);
}

static lsp__pending *lsp__pending_new(json_t *id, lsp_req_kind kind, const char *uri) {
    lsp__pending *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->uri = strdup(uri);
    if (!p->uri) {
        free(p);
        return NULL;
    }
    p->id = id ? json_incref(id) : NULL;
    p->kind = kind;
    return p;
}

/* inlineCompletion and completion share everything but the answer's shape. */
static void lsp__on_completion(lsp_server *s, json_t *id, json_t *params, lsp_req_kind kind) {
    const char *uri = lsp__doc_uri(s, params);
    lsp__pos pos;
    if (!uri || !lsp__position(s, params, "position", "position", &pos)) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
        return;
    }
    bool invoked = true;
    json_t *sel = NULL;
    json_t *ctx = lsp__get(s, params, "context", "context", JSON_OBJECT, kind == LSP_REQ_INLINE);
    if (kind == LSP_REQ_INLINE) {
        uint32_t tk;
        if (!ctx || !lsp__uint(s, ctx, "triggerKind", "context.triggerKind", &tk)) {
            lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
            return;
        }
        if (tk != 1 && tk != 2) {
            lsp__error(s, id, LSP__INVALID_PARAMS,
                       "invalid params: context.triggerKind must be 1 (Invoked) or 2 (Automatic)");
            return;
        }
        invoked = tk == 1;
        s->perr[0] = '\0';
        sel = lsp__get(s, ctx, "selectedCompletionInfo", "context.selectedCompletionInfo",
                       JSON_OBJECT, false);
        if (!sel && s->perr[0]) {
            lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
            return;
        }
    } else if (ctx) {
        json_t *tk = json_object_get(ctx, "triggerKind");
        invoked = !json_is_integer(tk) || json_integer_value(tk) == 1;
    } else if (s->perr[0] && json_object_get(params, "context")) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
        return;
    }
    lsp_doc *d = lsp__open_doc(s, id, uri);
    if (!d)
        return;
    size_t cursor;
    if (lsp_doc_pos_to_offset(d, s->enc, pos.line, pos.character, &cursor) != BASE_OK) {
        lsp__error(s, id, LSP__INVALID_PARAMS,
                   "invalid params: position %u:%u lies outside the document", pos.line,
                   pos.character);
        return;
    }
    lsp__pending *p = lsp__pending_new(id, kind, uri);
    if (!p) {
        lsp__error(s, id, LSP__INTERNAL_ERROR, "out of memory");
        return;
    }
    p->cursor = p->sel_start = p->sel_end = cursor;
    if (sel) {
        lsp__pos a, b;
        json_t *t =
            lsp__get(s, sel, "text", "context.selectedCompletionInfo.text", JSON_STRING, true);
        size_t sa, sb;
        if (!t || !lsp__range(s, sel, "range", "context.selectedCompletionInfo.range", &a, &b)) {
            lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
            lsp__pending_free(p);
            return;
        }
        if (lsp_doc_pos_to_offset(d, s->enc, a.line, a.character, &sa) != BASE_OK ||
            lsp_doc_pos_to_offset(d, s->enc, b.line, b.character, &sb) != BASE_OK || sb < sa ||
            a.line != b.line) {
            lsp__error(s, id, LSP__INVALID_PARAMS,
                       "invalid params: context.selectedCompletionInfo.range must be one line "
                       "inside the document");
            lsp__pending_free(p);
            return;
        }
        p->has_selected = true;
        p->selected_len = json_string_length(t);
        p->selected_text = malloc(p->selected_len + 1);
        if (!p->selected_text) {
            lsp__error(s, id, LSP__INTERNAL_ERROR, "out of memory");
            lsp__pending_free(p);
            return;
        }
        memcpy(p->selected_text, json_string_value(t), p->selected_len + 1);
        p->selected_start = sa;
        p->selected_end = sb;
    }
    /* A newer completion for the same document supersedes older ones. */
    lsp__drop_doc(s, uri, true);
    lsp__start(s, p, d, invoked);
}

/* The cursor line's [start, end) in bytes (without its line terminator). */
static void lsp__line_bounds(const lsp_doc *d, size_t off, size_t *a, size_t *b) {
    size_t len;
    const char *t = lsp_doc_text(d, &len);
    size_t x = off, y = off;
    while (x > 0 && t[x - 1] != '\n')
        x--;
    while (y < len && t[y] != '\n')
        y++;
    if (y > x && y < len && t[y - 1] == '\r')
        y--;
    *a = x;
    *b = y;
}

/* An inline item must insert at the cursor: its range [start, end) ends at the
 * cursor (or is empty at it), lies on the cursor line, and the replaced text
 * is a prefix of the new text. With selectedCompletionInfo, the range is the
 * selected one and the text extends the selected text. */
static bool lsp__inline_ok(const lsp__pending *p, const lsp_doc *d, const lsp_completion_item *it) {
    size_t len;
    const char *t = lsp_doc_text(d, &len);
    if (!it->text && it->len)
        return false;
    if (p->has_selected) {
        return it->start == p->selected_start && it->end == p->selected_end &&
               it->len >= p->selected_len &&
               memcmp(it->text, p->selected_text, p->selected_len) == 0;
    }
    if (it->start > it->end || it->end != p->cursor)
        return false;
    size_t la, lb;
    lsp__line_bounds(d, p->cursor, &la, &lb);
    if (it->start < la)
        return false;
    size_t n = it->end - it->start;
    return n <= it->len && memcmp(t + it->start, it->text, n) == 0;
}

/* UTF-16 length (acceptedLength is counted in UTF-16 units, as Copilot does). */
static json_t *lsp__accept_cmd(lsp_token token, const char *text, size_t len) {
    return json_pack("{s:s,s:s,s:[{s:I,s:I}]}", "title", "infilld: accepted", "command",
                     "infilld.accepted", "arguments", "requestId", (json_int_t)token,
                     "acceptedLength", (json_int_t)base_utf16_len(text, len));
}

static json_t *lsp__inline_result(lsp_server *s, const lsp__pending *p, const lsp_doc *d,
                                  const lsp_completion_item *items, size_t n) {
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        lsp_completion_item it = items[i];
        if (it.start == 0 && it.end == 0 && p->cursor != 0 && !p->has_selected)
            it.start = it.end = p->cursor; /* zero-initialised range: insertion */
        /* With selectedCompletionInfo, a plain insertion at the cursor that
         * continues the selected item is rewritten over the selected range:
         * typed "pa" + model "th.join()" becomes "path.join()" for "path". */
        char *joined = NULL;
        if (p->has_selected && it.start == p->cursor && it.end == p->cursor &&
            p->selected_end == p->cursor && it.text) {
            size_t dl, typed = p->selected_end - p->selected_start;
            const char *dt = lsp_doc_text(d, &dl);
            joined = malloc(typed + it.len + 1);
            if (joined) {
                memcpy(joined, dt + p->selected_start, typed);
                memcpy(joined + typed, it.text, it.len);
                it.text = joined;
                it.len += typed;
                it.start = p->selected_start;
            }
        }
        if (!lsp__inline_ok(p, d, &it)) {
            free(joined);
            lsp__logmsg(s, LSP_MSG_LOG,
                        "dropped a completion item that does not insert at the cursor "
                        "(range %zu-%zu, cursor %zu)",
                        it.start, it.end, p->cursor);
            continue;
        }
        json_t *r = lsp__range_json(d, s->enc, it.start, it.end);
        if (!r) {
            free(joined);
            continue;
        }
        if (p->kind == LSP_REQ_INLINE) {
            json_array_append_new(arr, json_pack("{s:o,s:o,s:o}", "insertText",
                                                 lsp__str(it.text, it.len), "range", r, "command",
                                                 lsp__accept_cmd(p->token, it.text, it.len)));
        } else {
            /* label: the first line of the completion, shortened. */
            size_t ll = 0;
            while (ll < it.len && it.text[ll] != '\n' && it.text[ll] != '\r' && ll < 80)
                ll++;
            json_t *item =
                json_pack("{s:o,s:i,s:s,s:i,s:o,s:{s:o,s:o},s:o}", "label",
                          lsp__str(ll ? it.text : "infilld", ll ? ll : 7), "kind", 1, "detail",
                          "infilld", "insertTextFormat", 1, "filterText", lsp__str(it.text, it.len),
                          "textEdit", "range", r, "newText", lsp__str(it.text, it.len), "command",
                          lsp__accept_cmd(p->token, it.text, it.len));
            if (item && it.confidence >= 0)
                json_object_set_new(item, "data",
                                    json_pack("{s:I,s:f}", "requestId", (json_int_t)p->token,
                                              "confidence", it.confidence));
            json_array_append_new(arr, item);
        }
        free(joined);
    }
    if (p->kind == LSP_REQ_INLINE)
        return json_pack("{s:o}", "items", arr);
    return json_pack("{s:b,s:o}", "isIncomplete", 1, "items", arr);
}

/* What the editor is sent, at debug level: lets a user (and the real-editor
 * tests) compare the ghost text or edit shown with the daemon's answer. */
static void lsp__log_answer(lsp_token token, const char *what, const json_t *v) {
    if (!v || base_log_get_level() > BASE_LOG_DEBUG)
        return;
    char *t = json_dumps(v, JSON_COMPACT);
    BASE_LOGD("lsp", "answer to request %lld, %s: %s", (long long)token, what, t ? t : "?");
    free(t);
}

static json_t *lsp__workspace_edit(lsp_server *s, const lsp_doc *d, const lsp_completion_item *it) {
    json_t *r = lsp__range_json(d, s->enc, it->start, it->end);
    if (!r)
        return NULL;
    json_t *changes = json_object();
    json_object_set_new(
        changes, lsp_doc_uri(d),
        json_pack("[{s:o,s:o}]", "range", r, "newText", lsp__str(it->text, it->len)));
    return json_pack("{s:o}", "changes", changes);
}

base_status lsp_server_complete(lsp_server *srv, lsp_token token, const lsp_completion_item *items,
                                size_t n_items, base_status status, const char *errmsg) {
    if (!srv)
        return BASE_ERR_INVALID;
    lsp__pending *p = lsp__take(srv, token);
    if (!p)
        return BASE_ERR_NOT_FOUND;
    if (status == BASE_ERR_CANCELLED || status == BASE_ERR_SUPERSEDED) {
        lsp__respond(srv, p->id, NULL);
        goto done;
    }
    if (status != BASE_OK) {
        /* The params were checked when the request came in, so a provider
         * failure is the server's, never the client's: "out of range" from
         * deep inside the model pipeline must not read as -32602. */
        lsp__error(srv, p->id, lsp__provider_code(status), "%s: %s", lsp__kind_name(p->kind),
                   errmsg ? errmsg : base_status_str(status));
        goto done;
    }
    lsp_doc *d = lsp_doc_get(srv->docs, p->uri);
    if (!d || lsp_doc_version(d) != p->version) {
        /* The answer was computed for text that no longer exists. */
        lsp__respond(srv, p->id, NULL);
        goto done;
    }
    for (size_t i = 0; i < n_items; i++) {
        size_t len;
        lsp_doc_text(d, &len);
        if (items[i].start > items[i].end || items[i].end > len) {
            lsp__logmsg(srv, LSP_MSG_ERROR, "provider answered a range outside the document");
            n_items = i;
            break;
        }
    }
    switch (p->kind) {
    case LSP_REQ_INLINE:
    case LSP_REQ_COMPLETION: {
        json_t *res = lsp__inline_result(srv, p, d, items, n_items);
        lsp__log_answer(p->token, "items", json_object_get(res, "items"));
        lsp__respond(srv, p->id, res);
        break;
    }
    case LSP_REQ_CODE_ACTION: {
        json_t *action = json_deep_copy(p->action);
        if (n_items > 0 && action)
            json_object_set_new(action, "edit", lsp__workspace_edit(srv, d, &items[0]));
        lsp__respond(srv, p->id, action);
        break;
    }
    case LSP_REQ_REGENERATE: {
        if (n_items == 0) {
            lsp__respond(srv, p->id, NULL);
            break;
        }
        json_t *edit = lsp__workspace_edit(srv, d, &items[0]);
        lsp__log_answer(p->token, "edit", edit);
        if (srv->cap_apply_edit && edit)
            lsp__request(srv, "workspace/applyEdit",
                         json_pack("{s:s,s:O}", "label", "Regenerate selection", "edit", edit),
                         LSP__OUT_APPLY_EDIT, 0);
        lsp__respond(srv, p->id,
                     json_pack("{s:I,s:o,s:o*}", "requestId", (json_int_t)p->token, "text",
                               lsp__str(items[0].text, items[0].len), "edit", edit));
        break;
    }
    }
done:
    lsp__pending_free(p);
    return BASE_OK;
}

base_status lsp_server_partial(lsp_server *srv, lsp_token token, const char *text, size_t len,
                               size_t start, size_t end, int step, int steps) {
    if (!srv)
        return BASE_ERR_INVALID;
    lsp__pending *p = NULL;
    for (lsp__pending *q = srv->pending; q; q = q->next)
        if (q->token == token)
            p = q;
    if (!p)
        return BASE_ERR_NOT_FOUND;
    if (!lsp__flag(srv, "partial"))
        return BASE_OK;
    lsp_doc *d = lsp_doc_get(srv->docs, p->uri);
    if (!d || lsp_doc_version(d) != p->version)
        return BASE_ERR_STATE;
    size_t dl;
    lsp_doc_text(d, &dl);
    if (start > end || end > dl)
        return BASE_ERR_RANGE;
    json_t *r = lsp__range_json(d, srv->enc, start, end);
    lsp__notify(srv, "infilld/partial",
                json_pack("{s:I,s:s,s:o,s:o,s:i,s:i}", "requestId", (json_int_t)token, "uri",
                          p->uri, "range", r, "text", lsp__str(text, len), "step", step, "steps",
                          steps));
    return BASE_OK;
}

void lsp_server_status(lsp_server *srv, const lsp_status *st) {
    if (!srv || !st || srv->state != LSP__RUNNING || !lsp__flag(srv, "status"))
        return;
    json_t *p = json_object();
    json_object_set_new(p, "model", st->model ? json_string(st->model) : json_null());
    json_object_set_new(p, "device", st->device ? json_string(st->device) : json_null());
    json_object_set_new(p, "state", st->state ? json_string(st->state) : json_null());
    json_object_set_new(p, "lastLatencyMs",
                        st->last_latency_ms >= 0 ? json_real(st->last_latency_ms) : json_null());
    if (st->plan)
        json_object_set_new(p, "plan", json_deep_copy(st->plan));
    if (st->idle_prefill)
        json_object_set_new(p, "idlePrefill", json_deep_copy(st->idle_prefill));
    lsp__notify(srv, "infilld/status", p);
}

/* ---- code actions and commands ------------------------------------------------------ */

/* Resolves a {uri, range} selection to bytes; fills s->perr on failure. */
static lsp_doc *lsp__selection(lsp_server *s, json_t *obj, const char *path, size_t *a, size_t *b) {
    char sub[96];
    snprintf(sub, sizeof(sub), "%s.uri", path);
    json_t *u = lsp__get(s, obj, "uri", sub, JSON_STRING, true);
    lsp__pos pa, pb;
    snprintf(sub, sizeof(sub), "%s.range", path);
    if (!u || !lsp__range(s, obj, "range", sub, &pa, &pb))
        return NULL;
    lsp_doc *d = lsp_doc_get(s->docs, json_string_value(u));
    if (!d) {
        snprintf(s->perr, sizeof(s->perr), "invalid params: %s.uri %s is not open", path,
                 json_string_value(u));
        return NULL;
    }
    if (lsp_doc_pos_to_offset(d, s->enc, pa.line, pa.character, a) != BASE_OK ||
        lsp_doc_pos_to_offset(d, s->enc, pb.line, pb.character, b) != BASE_OK || *b < *a) {
        snprintf(s->perr, sizeof(s->perr), "invalid params: %s.range lies outside the document",
                 path);
        return NULL;
    }
    return d;
}

static void lsp__on_code_action(lsp_server *s, json_t *id, json_t *params) {
    const char *uri = lsp__doc_uri(s, params);
    lsp__pos a, b;
    if (!uri || !lsp__range(s, params, "range", "range", &a, &b)) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
        return;
    }
    lsp_doc *d = lsp__open_doc(s, id, uri);
    if (!d)
        return;
    json_t *only = json_object_get(json_object_get(params, "context"), "only");
    bool wanted = !json_is_array(only);
    size_t i;
    json_t *k;
    json_array_foreach(only, i, k) {
        const char *v = json_string_value(k);
        if (v && (strcmp(v, "refactor") == 0 || strcmp(v, "refactor.rewrite") == 0))
            wanted = true;
    }
    size_t sa, sb;
    bool ok = lsp_doc_pos_to_offset(d, s->enc, a.line, a.character, &sa) == BASE_OK &&
              lsp_doc_pos_to_offset(d, s->enc, b.line, b.character, &sb) == BASE_OK && sb > sa;
    if (!wanted || !ok || (s->hooks.allow && !s->hooks.allow(s->hooks.ud, s, d))) {
        lsp__respond(s, id, json_array());
        return;
    }
    json_t *sel = json_pack("{s:s,s:O}", "uri", uri, "range", json_object_get(params, "range"));
    json_t *action;
    if (s->cap_resolve_edit) {
        action = json_pack("{s:s,s:s,s:O}", "title", "Regenerate selection", "kind",
                           "refactor.rewrite", "data", sel);
    } else {
        /* Without lazy resolution, the action runs the command instead. */
        action = json_pack("{s:s,s:s,s:{s:s,s:s,s:[O]}}", "title", "Regenerate selection", "kind",
                           "refactor.rewrite", "command", "title", "Regenerate selection",
                           "command", "infilld.regenerate", "arguments", sel);
    }
    json_decref(sel);
    lsp__respond(s, id, json_pack("[o]", action));
}

static void lsp__on_code_action_resolve(lsp_server *s, json_t *id, json_t *params) {
    if (!lsp__get(s, params, "title", "title", JSON_STRING, true)) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
        return;
    }
    json_t *data = json_object_get(params, "data");
    if (!json_is_object(data)) {
        /* Not one of ours (or already complete): nothing to add. */
        lsp__respond(s, id, json_incref(params));
        return;
    }
    size_t a, b;
    lsp_doc *d = lsp__selection(s, data, "data", &a, &b);
    if (!d) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
        return;
    }
    lsp__pending *p = lsp__pending_new(id, LSP_REQ_CODE_ACTION, lsp_doc_uri(d));
    if (!p) {
        lsp__error(s, id, LSP__INTERNAL_ERROR, "out of memory");
        return;
    }
    p->action = json_incref(params);
    p->cursor = p->sel_start = a;
    p->sel_end = b;
    lsp__start(s, p, d, true);
}

static void lsp__on_execute(lsp_server *s, json_t *id, json_t *params) {
    json_t *cmd = lsp__get(s, params, "command", "command", JSON_STRING, true);
    if (!cmd) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
        return;
    }
    const char *c = json_string_value(cmd);
    s->perr[0] = '\0';
    json_t *args = lsp__get(s, params, "arguments", "arguments", JSON_ARRAY, false);
    json_t *arg0 = json_array_get(args, 0);
    if (strcmp(c, "infilld.regenerate") == 0) {
        size_t a, b;
        if (!json_is_object(arg0)) {
            lsp__error(s, id, LSP__INVALID_PARAMS,
                       "invalid params: arguments[0] must be an object {uri, range}");
            return;
        }
        lsp_doc *d = lsp__selection(s, arg0, "arguments[0]", &a, &b);
        if (!d) {
            lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
            return;
        }
        lsp__pending *p = lsp__pending_new(id, LSP_REQ_REGENERATE, lsp_doc_uri(d));
        if (!p) {
            lsp__error(s, id, LSP__INTERNAL_ERROR, "out of memory");
            return;
        }
        p->cursor = p->sel_start = a;
        p->sel_end = b;
        lsp__start(s, p, d, true);
    } else if (strcmp(c, "infilld.accepted") == 0) {
        if (!json_is_object(arg0)) {
            lsp__error(s, id, LSP__INVALID_PARAMS,
                       "invalid params: arguments[0] must be an object {requestId, "
                       "acceptedLength}");
            return;
        }
        json_t *rid = lsp__get(s, arg0, "requestId", "arguments[0].requestId", JSON_INTEGER, true);
        uint32_t alen = 0;
        if (!rid || !lsp__uint(s, arg0, "acceptedLength", "arguments[0].acceptedLength", &alen)) {
            lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
            return;
        }
        if (s->has_provider && s->provider.accepted)
            s->provider.accepted(s->provider.ud, s, (lsp_token)json_integer_value(rid), alen);
        lsp__respond(s, id, NULL);
    } else {
        lsp__error(s, id, LSP__INVALID_PARAMS, "invalid params: command: unknown command '%s'", c);
    }
}

static void lsp__on_view_file_text(lsp_server *s, json_t *id, json_t *params) {
    const char *uri = lsp__doc_uri(s, params);
    if (!uri) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "%s", s->perr);
        return;
    }
    lsp_doc *d = lsp__open_doc(s, id, uri);
    if (!d)
        return;
    size_t len;
    const char *t = lsp_doc_text(d, &len);
    lsp__respond(s, id, lsp__str(t, len));
}

/* ---- progress ------------------------------------------------------------------- */

static lsp__progress *lsp__progress_find(lsp_server *s, int handle) {
    for (lsp__progress *p = s->progress; p; p = p->next)
        if (p->handle == handle)
            return p;
    return NULL;
}

static void lsp__progress_send(lsp_server *s, lsp__progress *p, const char *kind) {
    char tok[32];
    snprintf(tok, sizeof(tok), "infilld-progress-%d", p->handle);
    json_t *v = json_pack("{s:s}", "kind", kind);
    if (strcmp(kind, "begin") == 0) {
        json_object_set_new(v, "title", json_string(p->title ? p->title : "infilld"));
        json_object_set_new(v, "cancellable", json_false());
    }
    const char *m = strcmp(kind, "end") == 0 ? p->end_message : p->message;
    if (m)
        json_object_set_new(v, "message", lsp__str(m, strlen(m)));
    if (strcmp(kind, "end") != 0 && p->percent >= 0)
        json_object_set_new(v, "percentage", json_integer(p->percent));
    lsp__notify(s, "$/progress", json_pack("{s:s,s:o}", "token", tok, "value", v));
}

static void lsp__progress_remove(lsp_server *s, lsp__progress *p) {
    for (lsp__progress **pp = &s->progress; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    free(p->title);
    free(p->message);
    free(p->end_message);
    free(p);
}

/* The client accepted (or refused) a progress token. */
static void lsp__progress_created(lsp_server *s, int handle, bool ok) {
    lsp__progress *p = lsp__progress_find(s, handle);
    if (!p)
        return;
    if (!ok) {
        lsp__progress_remove(s, p);
        return;
    }
    p->created = true;
    p->begun = true;
    lsp__progress_send(s, p, "begin");
    if (p->ended) {
        lsp__progress_send(s, p, "end");
        lsp__progress_remove(s, p);
    }
}

static char *lsp__dup(const char *m) { return m ? strdup(m) : NULL; }

int lsp_server_progress_begin(lsp_server *srv, const char *title, const char *message) {
    if (!srv || !srv->cap_progress || srv->state != LSP__RUNNING)
        return 0;
    lsp__progress *p = calloc(1, sizeof(*p));
    if (!p)
        return 0;
    p->handle = ++srv->next_progress;
    p->title = lsp__dup(title);
    p->message = lsp__dup(message);
    p->percent = 0;
    p->next = srv->progress;
    srv->progress = p;
    char tok[32];
    snprintf(tok, sizeof(tok), "infilld-progress-%d", p->handle);
    lsp__request(srv, "window/workDoneProgress/create", json_pack("{s:s}", "token", tok),
                 LSP__OUT_PROGRESS_CREATE, p->handle);
    return p->handle;
}

void lsp_server_progress_report(lsp_server *srv, int handle, int percent, const char *message) {
    lsp__progress *p = srv ? lsp__progress_find(srv, handle) : NULL;
    if (!p || p->ended)
        return;
    p->percent = percent < 0 ? -1 : percent > 100 ? 100 : percent;
    if (message) {
        free(p->message);
        p->message = strdup(message);
    }
    if (p->begun)
        lsp__progress_send(srv, p, "report");
}

void lsp_server_progress_end(lsp_server *srv, int handle, const char *message) {
    lsp__progress *p = srv ? lsp__progress_find(srv, handle) : NULL;
    if (!p)
        return;
    p->ended = true;
    p->end_message = lsp__dup(message);
    if (p->begun) {
        lsp__progress_send(srv, p, "end");
        lsp__progress_remove(srv, p);
    }
}

/* ---- dynamic registration of inline completion ------------------------------------- */

static void lsp__reg_id(int serial, char *buf, size_t n) {
    snprintf(buf, n, "infilld-inline-completion-%d", serial);
}

/* Brings the client's registration in line with the settings: registers
 * when wanted and absent, unregisters when switched off, and does both when
 * the document selector changed. Only for clients that asked for dynamic
 * registration, and only between `initialized` and shutdown. */
static void lsp__sync_registration(lsp_server *s) {
    if (!s->cap_inline_dynamic || !s->initialized_note || s->state != LSP__RUNNING)
        return;
    json_t *sel = NULL;
    bool want = !s->hooks.inline_selector || s->hooks.inline_selector(s->hooks.ud, s, &sel);
    if (!sel)
        sel = json_null();
    if (!want) {
        json_decref(sel);
        sel = NULL;
    }
    char id[64];
    if (s->reg.active && (!want || !json_equal(sel, s->reg.selector))) {
        lsp__reg_id(s->reg.serial, id, sizeof(id));
        lsp__request(s, "client/unregisterCapability",
                     json_pack("{s:[{s:s,s:s}]}", "unregisterations", "id", id, "method",
                               "textDocument/inlineCompletion"),
                     LSP__OUT_UNREGISTER, s->reg.serial);
        s->reg.active = false;
        json_decref(s->reg.selector);
        s->reg.selector = NULL;
    }
    if (want && !s->reg.active) {
        s->reg.active = true;
        s->reg.serial++;
        s->reg.selector = json_incref(sel);
        lsp__reg_id(s->reg.serial, id, sizeof(id));
        lsp__request(s, "client/registerCapability",
                     json_pack("{s:[{s:s,s:s,s:{s:O}}]}", "registrations", "id", id, "method",
                               "textDocument/inlineCompletion", "registerOptions",
                               "documentSelector", sel),
                     LSP__OUT_REGISTER, s->reg.serial);
    }
    json_decref(sel);
}

/* The client answered registerCapability with an error. There is no static
 * provider to fall back to after initialize, so the user is told once. */
static void lsp__registration_refused(lsp_server *s, int serial, json_t *err) {
    const char *why = json_string_value(json_object_get(err, "message"));
    if (serial == s->reg.serial) {
        s->reg.active = false;
        json_decref(s->reg.selector);
        s->reg.selector = NULL;
    }
    bool was = lsp__log_quiet;
    lsp__log_quiet = true;
    BASE_LOGW("lsp", "the client refused to register inline completion: %s", why ? why : "?");
    lsp__log_quiet = was;
    if (!s->reg.refusal_shown) {
        s->reg.refusal_shown = true;
        char msg[512];
        snprintf(msg, sizeof(msg),
                 "infilld: the editor refused to register inline completion (%s); inline "
                 "completions are off for this session",
                 why ? why : "no reason given");
        lsp_server_show_message(s, LSP_MSG_WARNING, msg);
    }
}

/* ---- daemon log lines ------------------------------------------------------------------ */

typedef struct lsp__logent {
    base_log_level level;
    char module[24];
    char *msg; /* owned */
} lsp__logent;

struct lsp_logq {
    pthread_mutex_t mu;
    lsp__logent *ring; /* cap entries; n of them from head on are queued */
    size_t cap, head, n;
    uint64_t dropped; /* since the last drained line */
    void (*wake)(void *ud);
    void *wake_ud;
};

lsp_logq *lsp_logq_new(size_t cap, void (*wake)(void *ud), void *wake_ud) {
    lsp_logq *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->cap = cap ? cap : 256;
    q->ring = calloc(q->cap, sizeof(*q->ring));
    if (!q->ring || pthread_mutex_init(&q->mu, NULL) != 0) {
        free(q->ring);
        free(q);
        return NULL;
    }
    q->wake = wake;
    q->wake_ud = wake_ud;
    return q;
}

void lsp_logq_free(lsp_logq *q) {
    if (!q)
        return;
    for (size_t i = 0; i < q->n; i++)
        free(q->ring[(q->head + i) % q->cap].msg);
    pthread_mutex_destroy(&q->mu);
    free(q->ring);
    free(q);
}

void lsp_logq_hook(void *ud, base_log_level level, const char *module, const char *msg) {
    lsp_logq *q = ud;
    if (!q || lsp__log_quiet)
        return;
    /* Copied before taking the queue lock: it is held only for a few stores. */
    char *copy = strdup(msg ? msg : "");
    pthread_mutex_lock(&q->mu);
    bool was_empty = q->n == 0;
    if (!copy) {
        q->dropped++;
    } else {
        if (q->n == q->cap) { /* full: the oldest line goes */
            free(q->ring[q->head].msg);
            q->head = (q->head + 1) % q->cap;
            q->n--;
            q->dropped++;
        }
        lsp__logent *e = &q->ring[(q->head + q->n) % q->cap];
        e->level = level;
        snprintf(e->module, sizeof(e->module), "%s", module ? module : "-");
        e->msg = copy;
        q->n++;
    }
    pthread_mutex_unlock(&q->mu);
    if (was_empty && copy && q->wake)
        q->wake(q->wake_ud);
}

size_t lsp_logq_drain(lsp_logq *q, void (*fn)(void *ud, const lsp_log_line *line), void *ud) {
    if (!q)
        return 0;
    size_t done = 0;
    bool was = lsp__log_quiet;
    lsp__log_quiet = true;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        if (q->n == 0) {
            pthread_mutex_unlock(&q->mu);
            break;
        }
        lsp__logent e = q->ring[q->head];
        q->ring[q->head].msg = NULL;
        q->head = (q->head + 1) % q->cap;
        q->n--;
        lsp_log_line line = {
            .level = e.level, .module = e.module, .msg = e.msg, .dropped = q->dropped};
        q->dropped = 0;
        pthread_mutex_unlock(&q->mu);
        if (fn)
            fn(ud, &line);
        free(e.msg);
        done++;
    }
    lsp__log_quiet = was;
    return done;
}

/* $/logTrace carries info and above with "messages", everything with "verbose". */
static base_log_level lsp__trace_level(const lsp_server *s) {
    return s->trace == LSP__TRACE_VERBOSE    ? BASE_LOG_TRACE
           : s->trace == LSP__TRACE_MESSAGES ? BASE_LOG_INFO
                                             : BASE_LOG_OFF;
}

base_log_level lsp_server_log_wants(const lsp_server *srv) {
    if (!srv || srv->state != LSP__RUNNING)
        return BASE_LOG_OFF;
    return BASE_MIN(lsp__trace_level(srv), srv->client_log);
}

void lsp_server_log_line(lsp_server *srv, const lsp_log_line *line) {
    if (!srv || !line || !line->msg || srv->state != LSP__RUNNING)
        return;
    bool trace = line->level >= lsp__trace_level(srv);
    bool logmsg = line->level >= srv->client_log;
    if (!trace && !logmsg)
        return;
    char note[64] = "";
    if (line->dropped)
        snprintf(note, sizeof(note), " (%llu earlier log lines dropped)",
                 (unsigned long long)line->dropped);
    bool was = lsp__log_quiet;
    lsp__log_quiet = true;
    if (trace) {
        char *m = NULL;
        size_t ml = 0;
        base_buf b;
        base_buf_init(&b);
        if (base_buf_printf(&b, "[%s] %s: %s%s", base_log_level_name(line->level),
                            line->module ? line->module : "-", line->msg, note) == BASE_OK)
            m = base_buf_steal(&b, &ml);
        base_buf_deinit(&b);
        if (m)
            lsp__notify(srv, "$/logTrace", json_pack("{s:o}", "message", lsp__str(m, ml)));
        free(m);
    }
    if (logmsg) {
        int type = line->level >= BASE_LOG_ERROR  ? LSP_MSG_ERROR
                   : line->level == BASE_LOG_WARN ? LSP_MSG_WARNING
                   : line->level == BASE_LOG_INFO ? LSP_MSG_INFO
                                                  : LSP_MSG_LOG;
        base_buf b;
        base_buf_init(&b);
        if (base_buf_printf(&b, "%s: %s%s", line->module ? line->module : "-", line->msg, note) ==
            BASE_OK)
            lsp_server_log_message(srv, type, b.data);
        base_buf_deinit(&b);
    }
    lsp__log_quiet = was;
}

/* ---- dispatch ----------------------------------------------------------------------- */

static void lsp__on_response(lsp_server *s, json_t *msg) {
    json_t *id = json_object_get(msg, "id");
    lsp__outreq *o = NULL;
    if (json_is_integer(id)) {
        for (lsp__outreq **pp = &s->outreqs; *pp; pp = &(*pp)->next)
            if ((*pp)->id == json_integer_value(id)) {
                o = *pp;
                *pp = o->next;
                break;
            }
    }
    if (!o) {
        char *t = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
        lsp__logmsg(s, LSP_MSG_WARNING, "response with unknown id %s ignored", t ? t : "?");
        free(t);
        return;
    }
    bool ok = json_object_get(msg, "error") == NULL;
    if (o->kind == LSP__OUT_PROGRESS_CREATE)
        lsp__progress_created(s, o->handle, ok);
    else if (o->kind == LSP__OUT_REGISTER && !ok)
        lsp__registration_refused(s, o->handle, json_object_get(msg, "error"));
    else if (o->kind == LSP__OUT_UNREGISTER && !ok)
        BASE_LOGD("lsp", "the client refused to unregister inline completion");
    else if (o->kind == LSP__OUT_APPLY_EDIT &&
             (!ok || !json_is_true(json_object_get(json_object_get(msg, "result"), "applied"))))
        BASE_LOGI("lsp", "the client did not apply a regenerated selection");
    free(o);
}

static const char *const lsp__notifications[] = {
    "initialized",
    "exit",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "textDocument/willSave",
    "workspace/didChangeConfiguration",
    "workspace/didChangeWatchedFiles",
    "workspace/didChangeWorkspaceFolders",
    "$/cancelRequest",
    "$/setTrace",
    "$/progress",
    "window/workDoneProgress/cancel",
    "infilld/didChangeCursor",
};

static bool lsp__is_notification(const char *m) {
    for (size_t i = 0; i < BASE_ARRAY_LEN(lsp__notifications); i++)
        if (strcmp(m, lsp__notifications[i]) == 0)
            return true;
    return false;
}

static void lsp__trace_in(lsp_server *s, const char *method, json_t *id, json_t *params) {
    if (s->trace == LSP__TRACE_OFF || s->state != LSP__RUNNING)
        return;
    char msg[256];
    char *ids = id ? json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    if (ids)
        snprintf(msg, sizeof(msg), "Received request '%s - (%s)'.", method, ids);
    else
        snprintf(msg, sizeof(msg), "Received notification '%s'.", method);
    free(ids);
    json_t *p = json_pack("{s:s}", "message", msg);
    if (s->trace == LSP__TRACE_VERBOSE && params) {
        char *v = json_dumps(params, JSON_ENCODE_ANY | JSON_COMPACT);
        if (v) {
            size_t vl = strlen(v);
            json_object_set_new(p, "verbose", lsp__str(v, BASE_MIN(vl, (size_t)4096)));
        }
        free(v);
    }
    lsp__notify(s, "$/logTrace", p);
}

static void lsp__notification(lsp_server *s, const char *m, json_t *params) {
    if (strcmp(m, "exit") == 0) {
        lsp__exit(s);
        return;
    }
    if (s->state == LSP__UNINIT) {
        BASE_LOGD("lsp", "notification %s before initialize dropped", m);
        return;
    }
    if (s->state == LSP__SHUTDOWN) {
        BASE_LOGD("lsp", "notification %s after shutdown dropped", m);
        return;
    }
    lsp__trace_in(s, m, NULL, params);
    if (strcmp(m, "initialized") == 0) {
        if (!s->initialized_note) {
            s->initialized_note = true;
            if (s->hooks.initialized)
                s->hooks.initialized(s->hooks.ud, s);
            lsp__sync_registration(s);
        }
    } else if (strcmp(m, "textDocument/didOpen") == 0) {
        lsp__on_did_open(s, params);
    } else if (strcmp(m, "textDocument/didChange") == 0) {
        lsp__on_did_change(s, params);
    } else if (strcmp(m, "textDocument/didClose") == 0) {
        lsp__on_did_close(s, params);
    } else if (strcmp(m, "infilld/didChangeCursor") == 0) {
        lsp__on_did_change_cursor(s, params);
    } else if (strcmp(m, "$/cancelRequest") == 0) {
        json_t *id = json_object_get(params, "id");
        lsp__pending *p = id ? lsp__find_id(s, id) : NULL;
        if (p)
            lsp__drop(s, p->token, true, true);
    } else if (strcmp(m, "$/setTrace") == 0) {
        const char *v = json_string_value(json_object_get(params, "value"));
        if (!v || (strcmp(v, "off") && strcmp(v, "messages") && strcmp(v, "verbose")))
            lsp__logmsg(s, LSP_MSG_ERROR,
                        "$/setTrace ignored: value must be \"off\", \"messages\" or \"verbose\"");
        else
            s->trace = v[0] == 'o'   ? LSP__TRACE_OFF
                       : v[0] == 'm' ? LSP__TRACE_MESSAGES
                                     : LSP__TRACE_VERBOSE;
    } else if (strcmp(m, "workspace/didChangeConfiguration") == 0) {
        json_t *settings = json_object_get(params, "settings");
        if (s->hooks.configuration)
            s->hooks.configuration(s->hooks.ud, s, settings);
        else if (json_is_object(settings))
            lsp_server_set_settings(s, settings);
    } else {
        /* didSave, $/progress, unknown notifications: nothing to do (LSP says
         * unknown notifications are ignored). */
        BASE_LOGD("lsp", "notification %s ignored", m);
    }
}

static void lsp__request_in(lsp_server *s, const char *m, json_t *id, json_t *params) {
    if (lsp__is_notification(m)) {
        lsp__error(s, id, LSP__INVALID_REQUEST, "%s is a notification and must not carry an id", m);
        return;
    }
    if (strcmp(m, "initialize") == 0) {
        lsp__on_initialize(s, id, params);
        return;
    }
    if (s->state == LSP__UNINIT) {
        lsp__error(s, id, LSP__SERVER_NOT_INITIALIZED, "server not initialized: %s refused", m);
        return;
    }
    if (s->state == LSP__SHUTDOWN) {
        lsp__error(s, id, LSP__INVALID_REQUEST, "server is shutting down: %s refused", m);
        return;
    }
    if (lsp__find_id(s, id)) {
        lsp__error(s, id, LSP__INVALID_REQUEST,
                   "duplicate request id: a request with this id "
                   "is still pending");
        return;
    }
    lsp__trace_in(s, m, id, params);
    s->perr[0] = '\0';
    if (params && !json_is_object(params) && !json_is_array(params)) {
        lsp__error(s, id, LSP__INVALID_PARAMS, "invalid params: params must be an object");
        return;
    }
    if (strcmp(m, "shutdown") == 0) {
        lsp__drop_all(s, true);
        s->state = LSP__SHUTDOWN;
        s->shutdown_requested = true;
        lsp__respond(s, id, NULL);
    } else if (strcmp(m, "textDocument/inlineCompletion") == 0) {
        lsp__on_completion(s, id, params, LSP_REQ_INLINE);
    } else if (strcmp(m, "textDocument/completion") == 0) {
        lsp__on_completion(s, id, params, LSP_REQ_COMPLETION);
    } else if (strcmp(m, "textDocument/codeAction") == 0) {
        lsp__on_code_action(s, id, params);
    } else if (strcmp(m, "codeAction/resolve") == 0) {
        lsp__on_code_action_resolve(s, id, params);
    } else if (strcmp(m, "workspace/executeCommand") == 0) {
        lsp__on_execute(s, id, params);
    } else if (strcmp(m, "infilld/viewFileText") == 0) {
        lsp__on_view_file_text(s, id, params);
    } else {
        lsp__error(s, id, LSP__METHOD_NOT_FOUND, "method not found: %s", m);
    }
}

static void lsp__dispatch(lsp_server *s, const char *body, size_t len) {
    json_error_t jerr;
    /* JSON_ALLOW_NUL: a buffer may hold NUL characters ("\u0000"); texts are
     * read with their length, every other string stops at its first NUL. */
    json_t *msg = json_loadb(body, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!msg) {
        lsp__error(s, NULL, LSP__PARSE_ERROR, "parse error: %s (line %d, column %d)", jerr.text,
                   jerr.line, jerr.column);
        return;
    }
    if (!json_is_object(msg)) {
        lsp__error(s, NULL, LSP__INVALID_REQUEST,
                   json_is_array(msg) ? "batch messages are not supported by LSP"
                                      : "a message must be a JSON object");
        json_decref(msg);
        return;
    }
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    /* Clients send "params": null for parameterless methods (shutdown, exit);
     * JSON-RPC clients in the wild treat it as omitted, so do we. */
    if (json_is_null(params))
        params = NULL;
    json_t *ver = json_object_get(msg, "jsonrpc");
    bool id_ok = !id || json_is_integer(id) || json_is_string(id);
    if (!ver || !json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0) {
        lsp__error(s, id_ok ? id : NULL, LSP__INVALID_REQUEST, "jsonrpc must be \"2.0\"");
    } else if (!method) {
        if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
            lsp__on_response(s, msg);
        else
            lsp__error(s, id_ok ? id : NULL, LSP__INVALID_REQUEST, "a message needs a method");
    } else if (!json_is_string(method)) {
        lsp__error(s, id_ok ? id : NULL, LSP__INVALID_REQUEST, "method must be a string");
    } else if (!id_ok) {
        lsp__error(s, NULL, LSP__INVALID_REQUEST, "id must be an integer or a string");
    } else if (id) {
        lsp__request_in(s, json_string_value(method), id, params);
    } else {
        lsp__notification(s, json_string_value(method), params);
    }
    json_decref(msg);
}

base_status lsp_server_feed(lsp_server *srv, const char *data, size_t len) {
    if (!srv)
        return BASE_ERR_INVALID;
    if (srv->state == LSP__EXITED)
        return BASE_ERR_STATE;
    /* Latency budgets count from here: the transport just read these bytes. */
    srv->fed_ns = base_now_ns();
    base_status st = lsp_framer_push(srv->framer, data, len);
    if (st != BASE_OK)
        return st;
    for (;;) {
        lsp_frame f;
        lsp_framer_next(srv->framer, &f);
        if (f.kind == LSP_FRAME_NONE)
            break;
        if (f.kind == LSP_FRAME_ERROR) {
            BASE_LOGW("lsp", "framing: %s", f.error);
            lsp__error(srv, NULL, lsp__status_code(f.status), "%s", f.error);
            continue;
        }
        lsp__dispatch(srv, f.body, f.len);
        if (srv->state == LSP__EXITED)
            return BASE_OK;
    }
    return BASE_OK;
}
