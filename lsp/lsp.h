/* lsp: one LSP 3.18 session over a byte stream, and the provider interface
 * through which completion work is requested.
 *
 * An lsp_server is one session (one stdio pipe or one TCP connection) with its
 * own document store. The transport feeds it bytes (lsp_server_feed) and gets
 * framed bytes back through the write hook. Completion work goes to a provider
 * (lsp_provider_i), shared by all sessions, which must never block: it answers
 * later with lsp_server_complete. Everything here is loop-thread only.
 *
 * Positions: the provider sees byte offsets only. The server converts LSP
 * positions (in the negotiated encoding) to bytes and back through the
 * document store, the one place that knows encodings. */
#ifndef INFILLD_LSP_H
#define INFILLD_LSP_H

#include "base.h"
#include "document.h"

#include <jansson.h>

typedef struct lsp_server lsp_server;

/* Identifies one piece of completion work within a server; unique per server,
 * never 0. Also the `requestId` the client sees in infilld/partial and
 * infilld.accepted. */
typedef uint64_t lsp_token;

typedef enum lsp_req_kind {
    LSP_REQ_INLINE = 0,  /* textDocument/inlineCompletion: insert at the cursor */
    LSP_REQ_COMPLETION,  /* textDocument/completion: same, answered as one item */
    LSP_REQ_REGENERATE,  /* workspace/executeCommand infilld.regenerate: replace selection */
    LSP_REQ_CODE_ACTION, /* codeAction/resolve of "Regenerate selection": replace selection */
} lsp_req_kind;

/* Per-request options, from the session's effective settings (see
 * lsp_server_set_settings and docs/PROTOCOL.md). Zero / NULL means default. */
typedef struct lsp_req_options {
    bool has_seed;
    uint64_t seed;     /* "seed" */
    int candidates;    /* "candidates": how many to return (0 = provider default) */
    int validate;      /* "validate": -1 default, 0 off, 1 on */
    int steps;         /* "steps": denoising steps (0 = default) */
    const char *alg;   /* "alg": remasking algorithm name, borrowed */
    const json_t *all; /* the whole effective settings object, borrowed (never NULL) */
} lsp_req_options;

/* A completion request handed to the provider. All pointers are borrowed and
 * valid only during lsp_provider_i.complete; copy what is needed later (the
 * document can be looked up again by uri in lsp_server_docs). */
typedef struct lsp_completion_req {
    lsp_token token;
    lsp_req_kind kind;
    const lsp_doc *doc;
    const char *uri;
    const char *language_id;
    int64_t version;  /* document version when asked */
    size_t cursor;    /* byte offset of the cursor */
    size_t sel_start; /* selection [sel_start, sel_end) in bytes for REGENERATE and */
    size_t sel_end;   /* CODE_ACTION; both == cursor otherwise */
    bool invoked;     /* triggerKind Invoked (user gesture) rather than Automatic */
    /* selectedCompletionInfo: items must start with this text and replace this
     * byte range (on the cursor line). */
    bool has_selected;
    const char *selected_text;
    size_t selected_len;
    size_t selected_start, selected_end;
    bool want_partial; /* client opted into infilld/partial */
    /* base_now_ns() when the transport handed the request's bytes to the
     * server: latency budgets count from here. */
    uint64_t received_ns;
    const lsp_req_options *opts;
} lsp_completion_req;

/* One answer. text replaces the document bytes [start, end); start == end is a
 * pure insertion. For INLINE/COMPLETION the range must end at the cursor, lie
 * on the cursor line and cover only text the inserted text starts with; with
 * selectedCompletionInfo it must be the selected range (an insertion at the
 * cursor that continues the selected text is rewritten to it). The server
 * drops (and logs) items that break this. */
typedef struct lsp_completion_item {
    const char *text;
    size_t len;
    size_t start, end;
    double confidence; /* 0..1, or < 0 when unknown */
} lsp_completion_item;

/* The provider: one per daemon, shared by all sessions. Loop thread only. */
typedef struct lsp_provider_i {
    /* Required. Starts work for req and returns at once. The provider answers
     * exactly once with lsp_server_complete(srv, req->token, ...) — possibly
     * from inside this call — unless cancel() arrives first. */
    void (*complete)(void *ud, lsp_server *srv, const lsp_completion_req *req);
    /* Required. The client no longer wants token (cancelled, superseded, or the
     * session is closing); the server has already answered the client. A later
     * lsp_server_complete for this token is ignored, so the provider may stop
     * at its next step boundary. */
    void (*cancel)(void *ud, lsp_server *srv, lsp_token token);
    /* Optional. The user accepted acceptedLength UTF-16 units of the item of
     * request_id (infilld.accepted). */
    void (*accepted)(void *ud, lsp_server *srv, lsp_token request_id, uint32_t accepted_length);
    /* Optional. Effective settings changed (initializationOptions merged with
     * the config file, or workspace/didChangeConfiguration); e.g. a changed
     * "model" reloads the model without dropping sessions. settings borrowed. */
    base_status (*configure)(void *ud, const json_t *settings);
    /* Optional. A session starts (e.g. subscribe to lsp_server_docs(srv)) / ends.
     * After session_close the provider must not use srv; every pending token of
     * srv has been cancelled before it. */
    void (*session_open)(void *ud, lsp_server *srv);
    void (*session_close)(void *ud, lsp_server *srv);
    void *ud;
    /* Optional. The editor reports where its cursor is in doc (byte offset;
     * infilld/didChangeCursor, docs/PROTOCOL.md): e.g. schedule work there. */
    void (*cursor)(void *ud, lsp_server *srv, const lsp_doc *doc, size_t offset);
} lsp_provider_i;

/* Hooks from the server to its transport / daemon. write is required. */
typedef struct lsp_server_hooks {
    /* Framed output bytes (header + body), to be written in order. */
    void (*write)(void *ud, const char *data, size_t len);
    /* The `exit` notification arrived (or the session must end): close the
     * transport. code is 0 after shutdown, else 1. */
    void (*exit)(void *ud, lsp_server *srv, int code);
    /* Optional. initialize params arrived (processId, initializationOptions,
     * ...). Return ERR_DENIED to refuse the session (e.g. bad token): the
     * server answers with an error and calls exit(1). May call
     * lsp_server_set_settings. msg (size msg_len) may receive a reason. */
    base_status (*initialize)(void *ud, lsp_server *srv, const json_t *params, char *msg,
                              size_t msg_len);
    /* Optional. workspace/didChangeConfiguration `settings` (borrowed). */
    void (*configuration)(void *ud, lsp_server *srv, const json_t *settings);
    /* Optional. May this document be sent to the provider? (exclude globs,
     * per-language enable). A refused document gets empty answers. */
    bool (*allow)(void *ud, lsp_server *srv, const lsp_doc *doc);
    void *ud;
    /* Optional. The `initialized` notification arrived: the session is ready
     * for server-initiated messages (e.g. the current infilld/status). */
    void (*initialized)(void *ud, lsp_server *srv);
    /* Optional. For a client that registers inline completion dynamically:
     * false when the current settings switch it off for the whole session
     * (then it is unregistered). Otherwise *selector may receive a
     * documentSelector (new reference); left NULL, every document. Without
     * this hook inline completion is registered for every document. */
    bool (*inline_selector)(void *ud, lsp_server *srv, json_t **selector);
} lsp_server_hooks;

typedef struct lsp_server_opts {
    size_t max_message; /* body size limit in bytes; 0 → 256 MiB */
    /* Optional: server version string in initialize's serverInfo. */
    const char *version;
} lsp_server_opts;

/* provider and hooks are copied; provider may be NULL (every completion gets
 * an empty answer). opts may be NULL. */
lsp_server *lsp_server_new(const lsp_server_hooks *hooks, const lsp_provider_i *provider,
                           const lsp_server_opts *opts, base_status *err);
/* NULL-safe. Cancels pending work at the provider, calls session_close, closes
 * every document. Writes nothing. */
void lsp_server_free(lsp_server *srv);

/* Feeds transport bytes; complete messages are dispatched at once. Framing
 * errors are answered (or logged) and parsing resumes after the bad message. */
base_status lsp_server_feed(lsp_server *srv, const char *data, size_t len);
/* The transport reached end of input (the peer went away): pending work is
 * cancelled. Returns the exit code (0 if shutdown had been requested). */
int lsp_server_eof(lsp_server *srv);

/* Session state. */
bool lsp_server_initialized(const lsp_server *srv);
bool lsp_server_shutting_down(const lsp_server *srv); /* shutdown received */
bool lsp_server_exited(const lsp_server *srv);        /* exit received */
int lsp_server_exit_code(const lsp_server *srv);      /* 0 after shutdown, else 1 */
lsp_pos_encoding lsp_server_encoding(const lsp_server *srv);
/* The session's documents (for subscribing to edit events). Borrowed. */
lsp_doc_store *lsp_server_docs(lsp_server *srv);
/* processId from initialize, or 0 when absent / null. */
int64_t lsp_server_process_id(const lsp_server *srv);
/* Number of requests waiting for the provider. */
size_t lsp_server_pending(const lsp_server *srv);

/* Replaces the effective settings (a JSON object; the server takes a new
 * reference) used for lsp_req_options and opt-in flags ("partial", "status"). */
void lsp_server_set_settings(lsp_server *srv, json_t *settings);
const json_t *lsp_server_settings(const lsp_server *srv); /* borrowed, never NULL */
/* The per-request options a request would get now (idle work that prepares
 * for the next request; o->all borrowed from the settings). */
void lsp_server_req_options(lsp_server *srv, lsp_req_options *o);

/* Answers token. status OK: items (n_items may be 0 → empty answer).
 * ERR_CANCELLED / ERR_SUPERSEDED: a null result. Anything else: a JSON-RPC
 * error carrying errmsg (or the status text). Items are copied. Returns
 * ERR_NOT_FOUND when token is no longer pending (ignored). */
base_status lsp_server_complete(lsp_server *srv, lsp_token token, const lsp_completion_item *items,
                                size_t n_items, base_status status, const char *errmsg);

/* infilld/partial {requestId, uri, range, text, step, steps} for a pending
 * token, sent only when the client opted in. Bytes [start, end) as in items. */
base_status lsp_server_partial(lsp_server *srv, lsp_token token, const char *text, size_t len,
                               size_t start, size_t end, int step, int steps);

/* infilld/status {model, device, state, lastLatencyMs, plan?}, sent only when the
 * client opted in ("status": true). Strings may be NULL (sent as null);
 * last_latency_ms < 0 is sent as null. */
typedef struct lsp_status {
    const char *model;
    const char *device;
    const char *state; /* "loading" | "ready" | "busy" | "error" | "none" */
    double last_latency_ms;
    const json_t *plan;         /* the last request's latency plan (borrowed); NULL: omitted */
    const json_t *idle_prefill; /* idle-prefill counters (borrowed); NULL: omitted */
} lsp_status;
void lsp_server_status(lsp_server *srv, const lsp_status *st);

/* window/showMessage and window/logMessage; type 1 error, 2 warning, 3 info, 4 log. */
enum { LSP_MSG_ERROR = 1, LSP_MSG_WARNING = 2, LSP_MSG_INFO = 3, LSP_MSG_LOG = 4 };
void lsp_server_show_message(lsp_server *srv, int type, const char *msg);
void lsp_server_log_message(lsp_server *srv, int type, const char *msg);

/* ---- daemon log lines to clients ----------------------------------------
 * Log lines come from any thread with the log lock held, and sessions live on
 * the loop thread. lsp_logq_hook (a base_log_hook) copies each line into a
 * bounded queue and rings `wake` (e.g. uv_async_send) when the queue was
 * empty; the loop thread then drains it and hands each line to the sessions
 * with lsp_server_log_line. A full queue drops its oldest line; the count
 * travels with the next line drained. */
typedef struct lsp_log_line {
    base_log_level level;
    const char *module;
    const char *msg;
    uint64_t dropped; /* lines dropped (queue full) since the previous drained line */
} lsp_log_line;

typedef struct lsp_logq lsp_logq;

/* cap: lines kept (0 → 256). wake is called from the logging thread, with the
 * log lock held; it must not log. */
lsp_logq *lsp_logq_new(size_t cap, void (*wake)(void *ud), void *wake_ud);
/* NULL-safe. Uninstall the hook first (base_log_set_hook(NULL, NULL)). */
void lsp_logq_free(lsp_logq *q);
/* The base_log_hook; ud is the lsp_logq. Lines logged while this thread is
 * forwarding (inside lsp_logq_drain's callback) or while the server reports
 * a session's own problem to that session are not queued. */
void lsp_logq_hook(void *ud, base_log_level level, const char *module, const char *msg);
/* Calls fn for every queued line, oldest first, on the calling thread;
 * returns how many. Pointers in line are valid during the call only. */
size_t lsp_logq_drain(lsp_logq *q, void (*fn)(void *ud, const lsp_log_line *line), void *ud);
/* Sends line to the client when the session admits it: as $/logTrace while
 * the trace is "messages" (info and above) or "verbose" (every level), and as
 * window/logMessage at or above the "clientLogLevel" setting (default warn).
 * Nothing before initialize or after shutdown. */
void lsp_server_log_line(lsp_server *srv, const lsp_log_line *line);
/* The lowest level this session forwards (BASE_LOG_OFF: none), for
 * base_log_set_hook_level. */
base_log_level lsp_server_log_wants(const lsp_server *srv);

/* Work-done progress (window/workDoneProgress/create + $/progress), e.g. while
 * a model loads. Silently does nothing when the client lacks
 * window.workDoneProgress. begin returns a handle (> 0) or 0. */
int lsp_server_progress_begin(lsp_server *srv, const char *title, const char *message);
void lsp_server_progress_report(lsp_server *srv, int handle, int percent, const char *message);
void lsp_server_progress_end(lsp_server *srv, int handle, const char *message);

/* ---- framing (exposed for tests, the fuzzer and the benchmark) ----------- */
typedef struct lsp_framer lsp_framer;

typedef enum lsp_frame_kind {
    LSP_FRAME_NONE = 0, /* need more bytes */
    LSP_FRAME_MESSAGE,  /* a complete body */
    LSP_FRAME_ERROR,    /* a bad header block or an oversized body, skipped */
} lsp_frame_kind;

typedef struct lsp_frame {
    lsp_frame_kind kind;
    const char *body; /* MESSAGE: body bytes, valid until the next call */
    size_t len;
    base_status status; /* ERROR: ERR_PARSE (bad header) or ERR_TOO_LARGE */
    char error[160];    /* ERROR: what was wrong */
} lsp_frame;

lsp_framer *lsp_framer_new(size_t max_message);
void lsp_framer_free(lsp_framer *f);
base_status lsp_framer_push(lsp_framer *f, const char *data, size_t len);
/* Extracts the next frame from what was pushed. */
void lsp_framer_next(lsp_framer *f, lsp_frame *out);
/* Bytes buffered but not yet returned (e.g. a truncated message at EOF). */
size_t lsp_framer_buffered(const lsp_framer *f);

/* Appends "Content-Length: N\r\n\r\n" + body to out. */
base_status lsp_frame_write(base_buf *out, const char *body, size_t len);

#endif
