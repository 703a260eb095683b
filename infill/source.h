/* infill source: where candidates come from, above the engine.
 *
 * The document pipeline (span, hole size, post-processing, validation, the
 * typing-through cache) is the same for every source; a source only turns
 * prefix/suffix/size into raw candidate texts. Kinds: "local" (the in-process
 * engine, ifl_model) and "remote" (an HTTP inference server, infill/remote.c).
 * A remote API returns text, not logits, which is why this sits above
 * engine/ rather than beside the engine's CPU/CUDA backends. */
#ifndef INFILLD_INFILL_SOURCE_H
#define INFILLD_INFILL_SOURCE_H

#include "infill.h"

#include <jansson.h>

typedef struct ifl_source_req {
    const char *prefix; /* text before the hole (not NUL-terminated) */
    size_t prefix_len;
    const char *suffix; /* text after the hole */
    size_t suffix_len;
    int n_hole, n_hole_cap; /* first hole size and the most it may grow to (tokens) */
    bool single_line;       /* the span wants one line: "\n" stops a remote model */
    /* The request's deadline (base_now_ns(); 0 = none), counted from its
     * receipt, and its budget in ms: the local source plans to them, a
     * remote one uses what is left as its timeout. */
    uint64_t deadline_ns;
    double budget_ms;
    const ifl_doc_req *doc; /* the whole request (candidates, seed, steps, budgets) */
    uint64_t t0;            /* when the pipeline started (ifl_doc_prepare) */
    double span_ms;
} ifl_source_req;

typedef struct ifl_source_i {
    const char *kind; /* "local" / "remote" */
    /* Fills out->raw (candidates, ranked) and out->runs / n_hole*; on failure
     * may write a one-line reason into out->error (never secrets). cancel is
     * polled: a set flag ends the work early with ERR_CANCELLED. */
    base_status (*produce)(void *self, const ifl_source_req *r, const volatile int *cancel,
                           ifl_doc_res *out);
    void *self;
} ifl_source_i;

/* The local source over a loaded model (no allocation; valid while m is). */
ifl_source_i ifl_source_local(ifl_model *m);

/* The document pipeline on any source: span → source → post-processing. */
base_status ifl_complete_doc_src(const ifl_source_i *src, const ifl_doc_req *r,
                                 const volatile int *cancel, ifl_doc_res *out);
/* Its two halves, for a source whose candidates come later (the remote
 * source on the loop): prepare locates the span and fills *sr (which points
 * into r->text); finish takes what the source produced (st, out->raw) and
 * post-processes it. ifl_complete_doc_src = prepare, produce, finish. */
base_status ifl_doc_prepare(const ifl_doc_req *r, ifl_doc_res *out, ifl_source_req *sr);
base_status ifl_doc_finish(const ifl_doc_req *r, ifl_doc_res *out, const ifl_source_req *sr,
                           base_status produced);

/* ---- the remote source ------------------------------------------------------------- */

typedef enum ifl_remote_api {
    IFL_API_OPENAI_FIM,   /* POST {url}/v1/fim/completions: prompt, suffix, max_tokens, stop */
    IFL_API_LLAMA_INFILL, /* POST {url}/infill: input_prefix, input_suffix, n_predict */
    IFL_API_COMPLETIONS_SUFFIX,   /* POST {url}/v1/completions: prompt, suffix */
    IFL_API_COMPLETIONS_TEMPLATE, /* POST {url}/v1/completions: prompt = the model's FIM prompt */
    IFL_API_CHAT,                 /* POST {url}/v1/chat/completions: a FIM instruction */
} ifl_remote_api;

/* A model family's own FIM prompt (openai-completions-template): the text is
 * pre + prefix + suf + suffix + mid (or, suffix first, pre + suf + suffix +
 * mid + prefix for SPM), and the model's end markers are sent as stops. */
typedef struct ifl_fim_template {
    const char *name;     /* "qwen2.5-coder", "starcoder", "codellama", ... */
    const char *match[4]; /* substrings of a model name that pick it (lower case) */
    const char *pre, *suf, *mid;
    bool spm;
    const char *stops[4];
} ifl_fim_template;

/* By template name, else by the first template whose match is a substring
 * of the (lower-cased) model name; NULL when neither finds one. */
const ifl_fim_template *ifl_fim_template_find(const char *name, const char *model);
/* The known templates' names, comma separated (for error messages). */
const char *ifl_fim_template_names(void);
/* malloc'ed prompt text; NULL on OOM. */
char *ifl_fim_render(const ifl_fim_template *t, const char *pre, size_t pl, const char *suf,
                     size_t sl, size_t *len);

/* openai-chat: the system instruction, and the user turn (malloc'ed) with
 * the hole marked IFL_CHAT_HOLE. */
#define IFL_CHAT_HOLE "<|HOLE|>"
extern const char ifl_chat_instruction[];
char *ifl_chat_user(const char *pre, size_t pl, const char *suf, size_t sl);
/* A chat model's answer cut down to the hole's text: a thinking block,
 * markdown fences and the prose around them, an echo of the text before
 * the hole (from a line start) and of the text after it, and the hole
 * marker are removed. *out is malloc'ed (NULL, ERR_NOMEM on OOM). */
base_status ifl_chat_clean(const char *pre, size_t pl, const char *suf, size_t sl, const char *text,
                           size_t len, char **out, size_t *out_len);

typedef struct ifl_remote_cfg {
    ifl_remote_api api;
    char *url;      /* base URL, e.g. https://api.inceptionlabs.ai/v1 or http://127.0.0.1:8080 */
    char *model;    /* may be NULL */
    char *api_key;  /* resolved from apiKeyEnv / apiKeyFile; never logged */
    char *key_from; /* where it came from ("env FOO" / "file PATH"), for doctor */
    int timeout_ms; /* per request, inside the request's own time budget */
    int max_tokens; /* cap on the span's size (0: the span's) */
    double temperature;
    bool has_temperature;
    bool allow_insecure; /* http:// to a non-loopback host */
    char **headers;      /* "Name: value" lines */
    int n_headers;
    size_t max_body;              /* response limit (bytes) */
    size_t context_bytes;         /* prefix + suffix bytes sent (3/4 : 1/4, cut at lines) */
    const ifl_fim_template *tmpl; /* openai-completions-template */
    bool stream;                  /* "stream": true: server-sent events feed infilld/partial */
    char *ca_file;                /* "caFile": the CA bundle that signs the server (NULL: system) */
} ifl_remote_cfg;

/* Parses a "source" settings object ({kind: "remote", ...}). Returns OK with
 * *out filled, ERR_NOT_FOUND when src is absent or kind "local", else an
 * error with a clear message in err (bad URL, world-readable key file, ...). */
base_status ifl_remote_cfg_parse(const json_t *src, ifl_remote_cfg *out, char *err, size_t cap);
void ifl_remote_cfg_free(ifl_remote_cfg *c);
const char *ifl_remote_api_name(ifl_remote_api a);

typedef struct ifl_remote ifl_remote;

/* Takes ownership of cfg's members. NULL on OOM. Used by one thread at a time. */
ifl_remote *ifl_remote_new(ifl_remote_cfg *cfg);
void ifl_remote_free(ifl_remote *r);

/* ---- the remote source on the daemon's libuv loop (remote_loop.c) ----------------- */

/* One request's transfers (remote_call.h). */
typedef struct ifl_remote_call ifl_remote_call;
/* Runs calls on a libuv loop with libcurl's multi-socket interface: a
 * uv_poll_t per socket, one uv_timer_t for libcurl's timeouts, one for
 * retry backoff. Every function but submit and kick is for the loop's
 * thread. */
typedef struct ifl_remote_loop ifl_remote_loop;
struct uv_loop_s;
/* A call's transfers have all ended (or were dropped when its cancel flag
 * was set: then ifl_remote_call_finish says ERR_CANCELLED); on the loop's
 * thread. The receiver owns c. */
typedef void (*ifl_remote_done_fn)(void *ud, ifl_remote_call *c);
ifl_remote_loop *ifl_remote_loop_new(struct uv_loop_s *loop);
/* Drops every call (their done callbacks run, here), closes the handles
 * and frees rl once they are closed. NULL-safe. */
void ifl_remote_loop_close(ifl_remote_loop *rl);
/* Any thread: hands c to the loop; false (c still the caller's) after close. */
bool ifl_remote_loop_submit(ifl_remote_loop *rl, ifl_remote_call *c, ifl_remote_done_fn done,
                            void *ud);
/* Any thread: a call's cancel flag was set; the loop drops it next iteration
 * (the loop's own thread needs no kick: a check handle looks every iteration). */
void ifl_remote_loop_kick(ifl_remote_loop *rl);
/* Remote jobs then run their transfers on rl, several at once; NULL: back to
 * the blocking transfer on the worker thread. Set before jobs are submitted. */
void ifl_worker_set_loop(ifl_worker *w, ifl_remote_loop *rl);
ifl_source_i ifl_source_remote(ifl_remote *r);
const ifl_remote_cfg *ifl_remote_config(const ifl_remote *r);
/* Doctor: one small request; writes what was found (HTTP status, latency,
 * the reason) to msg. OK when the server answered 2xx with a usable body. */
base_status ifl_remote_probe(ifl_remote *r, char *msg, size_t cap);

/* Replaces the worker's model by a remote source (on the worker thread, like
 * ifl_worker_load; state "ready" with msg "remote"). Takes cfg's members. */
void ifl_worker_load_remote(ifl_worker *w, ifl_remote_cfg *cfg);

#endif
