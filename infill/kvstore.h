/* infill kvstore: a document's context K/V kept between requests and between
 * hole growths (issue 19 item 2; design in docs/ARCHITECTURE.md "Context K/V
 * kept between requests").
 *
 * The store keeps, per document key, the last canvas the engine ran (hole
 * slots marked as never matching) with its K/V rows. A new canvas is aligned
 * to it token by token (Myers' O(ND) diff, bounded): a matched row is reused,
 * its K re-rotated to its new position (exact at layer 0), and one window
 * covering every unmatched row, the hole and a margin around both is
 * re-encoded by the first step. Rows above layer 0 of reused tokens are an
 * approximation (attention is bidirectional); each row's age counts the
 * requests since it was last computed, and too many old rows force a full
 * forward. Not thread-safe: owned by the model's single worker. */
#ifndef INFILLD_INFILL_KVSTORE_H
#define INFILLD_INFILL_KVSTORE_H

#include "engine.h"

typedef struct ifl_kv_opts {
    bool enabled;
    size_t doc_bytes;   /* one document's K/V at most (larger canvases are not kept) */
    size_t total_bytes; /* all documents; least recently used evicted first */
    int stale_edits;    /* a reused row computed more than this many requests ago is stale */
    double stale_share; /* full forward when stale rows exceed this share of the canvas */
    int margin;         /* rows re-encoded on either side of an edit and of the hole */
    double max_window;  /* full forward when the window would exceed this share */
    int max_diff;       /* edit distance (tokens) above which the canvases are unrelated */
} ifl_kv_opts;

void ifl_kv_opts_default(ifl_kv_opts *o);

typedef struct ifl_kvstore ifl_kvstore;

/* What the store decided for one canvas. */
typedef struct ifl_kv_plan {
    bool warm;       /* import the rows (src) and re-encode [lo, hi) */
    int lo, hi;      /* the re-encode window (whole canvas when !warm) */
    int reused;      /* rows taken from the saved canvas, outside the window */
    int shifted;     /* of those, rows whose position changed (K re-rotated) */
    int reencoded;   /* rows the first step computes */
    int matched;     /* rows the diff matched (also those inside the window) */
    int stale;       /* reused rows older than stale_edits */
    const char *why; /* "warm", "cold", "off", "jump", "window", "stale" */
    int32_t *src;    /* [len] saved row per canvas slot or -1 (owned by the store) */
} ifl_kv_plan;

ifl_kvstore *ifl_kv_new(const ifl_kv_opts *o, size_t row_floats);
void ifl_kv_free(ifl_kvstore *s);
/* New options; a change drops every kept canvas (settings changed). */
void ifl_kv_set_opts(ifl_kvstore *s, const ifl_kv_opts *o);
const ifl_kv_opts *ifl_kv_get_opts(const ifl_kvstore *s);
void ifl_kv_clear(ifl_kvstore *s);

/* Plans canvas (len slots, hole [hs, hs + n_hole)) of document key. On
 * warm, pl->src and ifl_kv_rows() are valid until the next call.
 * may_refresh false: the caller has no time for a full forward, so stale
 * rows are reused anyway (why "stale kept"; the rows age on until a full
 * forward or an idle prefill refreshes them). */
base_status ifl_kv_plan_canvas(ifl_kvstore *s, const char *key, const int32_t *canvas, int len,
                               int hs, int n_hole, bool may_refresh, ifl_kv_plan *pl);
/* The saved rows of key's canvas (what pl->src indexes), or NULL. */
const float *ifl_kv_rows(const ifl_kvstore *s, const char *key, int *n_rows);
/* Where the document's context was cut for the kept canvas: bytes dropped
 * from the prefix's start and from the suffix's end, with the text right
 * after the one and before the other, so that a request whose own cut the
 * store cannot reuse in time can hold the kept edges where the document
 * around them did not change; and what the planner reads of the last run. */
typedef struct ifl_kv_anchor {
    size_t prefix_cut, suffix_cut;
    char head[48], tail[48];
    int n_head, n_tail;
    /* Rows outside the hole that the kept canvas's first step re-encoded
     * when it was warm (margins and the edit), -1 when it was cold: what
     * the planner expects the next warm step to cost while the user types. */
    int window_extra;
    /* Prefix + suffix tokens of the kept canvas: its own shares decide
     * whether the cursor left it (a larger budget alone does not). */
    int ctx_tokens;
} ifl_kv_anchor;
bool ifl_kv_anchor_get(const ifl_kvstore *s, const char *key, ifl_kv_anchor *a);
/* Takes back the statistics of a plan the caller discards (it cut the
 * canvas again and plans that one). */
void ifl_kv_plan_discard(ifl_kvstore *s, const ifl_kv_plan *pl);
/* Keeps canvas with the K/V ctx holds after a run planned as pl (rows of
 * ctx's sequence 0). Over the document budget: nothing is kept. Evicts
 * other documents past the global budget. */
base_status ifl_kv_save(ifl_kvstore *s, const char *key, const int32_t *canvas, int len, int hs,
                        int n_hole, const ifl_kv_plan *pl, eng_ctx *ctx, const ifl_kv_anchor *an);
/* Drops key's canvas (document closed). */
void ifl_kv_forget(ifl_kvstore *s, const char *key);

typedef struct ifl_kv_stats {
    int docs;
    size_t bytes;
    long long evictions, refreshes, warm, cold;
} ifl_kv_stats;
void ifl_kv_get_stats(const ifl_kvstore *s, ifl_kv_stats *st);

/* The diff itself (tests): writes src[j] = i for each b[j] matched to a[i],
 * else -1; returns the edit distance, or -1 above max_d. */
int ifl_kv_align(const int32_t *a, int n, const int32_t *b, int m, int max_d, int32_t *src);

#endif
