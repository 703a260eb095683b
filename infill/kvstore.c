/* infill kvstore: context K/V kept between requests (kvstore.h). */
#define _POSIX_C_SOURCE 200809L
#include "kvstore.h"

#include <stdlib.h>
#include <string.h>

#define IFL__HOLE_OLD (-1) /* saved hole slots: never match */
#define IFL__HOLE_NEW (-2)

typedef struct ifl__kv_doc {
    char *key;
    int32_t *tokens; /* [len] canvas with hole slots IFL__HOLE_OLD */
    uint16_t *age;   /* [len] requests since the row was computed */
    float *rows;     /* [len * row_floats] */
    int len;
    size_t bytes;
    uint64_t used; /* LRU clock */
    ifl_kv_anchor an;
} ifl__kv_doc;

struct ifl_kvstore {
    ifl_kv_opts o;
    size_t row_floats;
    ifl__kv_doc *docs;
    int n_docs, cap_docs;
    uint64_t clock;
    int32_t *src;
    int src_cap;
    int32_t *tmp;
    int tmp_cap;
    ifl_kv_stats st;
};

void ifl_kv_opts_default(ifl_kv_opts *o) {
    o->enabled = false; /* on through the LSP setting contextCache (measured first) */
    o->doc_bytes = (size_t)64 << 20;
    o->total_bytes = (size_t)256 << 20;
    o->stale_edits = 8;
    o->stale_share = 0.5;
    o->margin = 16;
    o->max_window = 0.5;
    o->max_diff = 512;
}

ifl_kvstore *ifl_kv_new(const ifl_kv_opts *o, size_t row_floats) {
    ifl_kvstore *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (o)
        s->o = *o;
    else
        ifl_kv_opts_default(&s->o);
    s->row_floats = row_floats;
    return s;
}

static void ifl__kv_doc_free(ifl__kv_doc *d) {
    free(d->key);
    free(d->tokens);
    free(d->age);
    free(d->rows);
    memset(d, 0, sizeof *d);
}

static void ifl__kv_drop(ifl_kvstore *s, int i) {
    s->st.bytes -= s->docs[i].bytes;
    ifl__kv_doc_free(&s->docs[i]);
    s->docs[i] = s->docs[--s->n_docs];
}

void ifl_kv_clear(ifl_kvstore *s) {
    while (s && s->n_docs > 0)
        ifl__kv_drop(s, s->n_docs - 1);
}

void ifl_kv_free(ifl_kvstore *s) {
    if (!s)
        return;
    ifl_kv_clear(s);
    free(s->docs);
    free(s->src);
    free(s->tmp);
    free(s);
}

void ifl_kv_set_opts(ifl_kvstore *s, const ifl_kv_opts *o) {
    const ifl_kv_opts *a = &s->o;
    /* field by field: the struct has padding */
    if (a->enabled != o->enabled || a->doc_bytes != o->doc_bytes ||
        a->total_bytes != o->total_bytes || a->stale_edits != o->stale_edits ||
        a->stale_share != o->stale_share || a->margin != o->margin ||
        a->max_window != o->max_window || a->max_diff != o->max_diff) {
        ifl_kv_clear(s);
        s->o = *o;
    }
}

const ifl_kv_opts *ifl_kv_get_opts(const ifl_kvstore *s) { return &s->o; }

static int ifl__kv_find(const ifl_kvstore *s, const char *key) {
    for (int i = 0; i < s->n_docs; i++)
        if (strcmp(s->docs[i].key, key) == 0)
            return i;
    return -1;
}

void ifl_kv_forget(ifl_kvstore *s, const char *key) {
    int i = s && key ? ifl__kv_find(s, key) : -1;
    if (i >= 0)
        ifl__kv_drop(s, i);
}

void ifl_kv_get_stats(const ifl_kvstore *s, ifl_kv_stats *st) {
    *st = s->st;
    st->docs = s->n_docs;
}

const float *ifl_kv_rows(const ifl_kvstore *s, const char *key, int *n_rows) {
    int i = key ? ifl__kv_find(s, key) : -1;
    if (i < 0)
        return NULL;
    *n_rows = s->docs[i].len;
    return s->docs[i].rows;
}

bool ifl_kv_anchor_get(const ifl_kvstore *s, const char *key, ifl_kv_anchor *a) {
    int i = s && key ? ifl__kv_find(s, key) : -1;
    if (i < 0)
        return false;
    *a = s->docs[i].an;
    return true;
}

/* ---- alignment ------------------------------------------------------------------ */

/* Myers' greedy O((n + m) D) shortest edit script on the middle left after
 * the common prefix and suffix, with the V array of every round kept for the
 * walk back ((D + 1) x (2 D + 1) ints: 2.4 MiB at D = 512). */
int ifl_kv_align(const int32_t *a, int n, const int32_t *b, int m, int max_d, int32_t *src) {
    for (int j = 0; j < m; j++)
        src[j] = -1;
    int p = 0;
    while (p < n && p < m && a[p] == b[p]) {
        src[p] = p;
        p++;
    }
    int q = 0;
    while (q < n - p && q < m - p && a[n - 1 - q] == b[m - 1 - q]) {
        src[m - 1 - q] = n - 1 - q;
        q++;
    }
    const int32_t *A = a + p, *B = b + p;
    const int N = n - p - q, M = m - p - q;
    if (N == 0 || M == 0)
        return N + M <= max_d ? N + M : -1;
    if (max_d > N + M)
        max_d = N + M;
    const int W = 2 * max_d + 1, off = max_d;
    int *trace = malloc(sizeof(int) * (size_t)W * (size_t)(max_d + 1));
    int *V = malloc(sizeof(int) * (size_t)W);
    if (!trace || !V) {
        free(trace);
        free(V);
        return -1;
    }
    for (int k = 0; k < W; k++)
        V[k] = 0;
    int D = -1;
    for (int d = 0; d <= max_d && D < 0; d++) {
        memcpy(trace + (size_t)d * W, V, sizeof(int) * (size_t)W);
        for (int k = -d; k <= d; k += 2) {
            int x;
            if (k == -d || (k != d && V[off + k - 1] < V[off + k + 1]))
                x = V[off + k + 1];
            else
                x = V[off + k - 1] + 1;
            int y = x - k;
            while (x < N && y < M && A[x] == B[y]) {
                x++;
                y++;
            }
            V[off + k] = x;
            if (x >= N && y >= M) {
                D = d;
                break;
            }
        }
    }
    if (D >= 0) {
        int x = N, y = M;
        for (int d = D; d >= 0; d--) {
            const int *T = trace + (size_t)d * W;
            int k = x - y, px, py;
            if (d == 0) {
                px = 0;
                py = 0;
            } else {
                int pk = (k == -d || (k != d && T[off + k - 1] < T[off + k + 1])) ? k + 1 : k - 1;
                px = T[off + pk];
                py = px - pk;
            }
            while (x > px && y > py) {
                src[p + y - 1] = p + x - 1;
                x--;
                y--;
            }
            x = px;
            y = py;
        }
    }
    free(trace);
    free(V);
    return D;
}

/* ---- plan and save ---------------------------------------------------------------- */

static void ifl__kv_cold(ifl_kv_plan *pl, int len, const char *why) {
    pl->warm = false;
    pl->lo = 0;
    pl->hi = len;
    pl->reencoded = len;
    pl->why = why;
}

base_status ifl_kv_plan_canvas(ifl_kvstore *s, const char *key, const int32_t *canvas, int len,
                               int hs, int n_hole, bool may_refresh, ifl_kv_plan *pl) {
    memset(pl, 0, sizeof *pl);
    if (len > s->src_cap || len > s->tmp_cap) {
        int32_t *a = realloc(s->src, sizeof(int32_t) * (size_t)len);
        if (a)
            s->src = a;
        int32_t *t = a ? realloc(s->tmp, sizeof(int32_t) * (size_t)len) : NULL;
        if (t)
            s->tmp = t;
        if (!a || !t)
            return BASE_ERR_NOMEM;
        s->src_cap = s->tmp_cap = len;
    }
    pl->src = s->src;
    for (int i = 0; i < len; i++)
        s->src[i] = -1;
    int di = s->o.enabled && key ? ifl__kv_find(s, key) : -1;
    if (!s->o.enabled || !key) {
        ifl__kv_cold(pl, len, "off");
        return BASE_OK;
    }
    if (di < 0) {
        s->st.cold++;
        ifl__kv_cold(pl, len, "cold");
        return BASE_OK;
    }
    ifl__kv_doc *d = &s->docs[di];
    d->used = ++s->clock;
    memcpy(s->tmp, canvas, sizeof(int32_t) * (size_t)len);
    for (int i = hs; i < hs + n_hole && i < len; i++)
        s->tmp[i] = IFL__HOLE_NEW;
    int dist = ifl_kv_align(d->tokens, d->len, s->tmp, len, s->o.max_diff, s->src);
    if (dist < 0) {
        s->st.cold++;
        ifl__kv_cold(pl, len, "jump");
        for (int i = 0; i < len; i++)
            s->src[i] = -1;
        return BASE_OK;
    }
    /* One window: every unmatched slot, the hole, and a margin around each
     * run of them (the rows whose neighbourhood changed most). */
    int lo = hs, hi = hs + n_hole;
    for (int i = 0; i < len; i++)
        if (s->src[i] < 0) {
            lo = lo < i ? lo : i;
            hi = hi > i + 1 ? hi : i + 1;
        }
    lo = lo - s->o.margin > 0 ? lo - s->o.margin : 0;
    hi = hi + s->o.margin < len ? hi + s->o.margin : len;
    int matched = 0, shifted = 0, stale = 0, reused = 0;
    for (int i = 0; i < len; i++) {
        if (s->src[i] < 0)
            continue;
        matched++;
        if (i >= lo && i < hi)
            continue;
        reused++;
        if (s->src[i] != i)
            shifted++;
        if (d->age[s->src[i]] + 1 > s->o.stale_edits)
            stale++;
    }
    pl->matched = matched;
    pl->stale = stale;
    if (hi - lo > s->o.max_window * len) {
        s->st.cold++;
        ifl__kv_cold(pl, len, "window");
        return BASE_OK;
    }
    bool too_stale = reused > 0 && stale > s->o.stale_share * reused;
    if (too_stale && may_refresh) {
        s->st.refreshes++;
        ifl__kv_cold(pl, len, "stale");
        return BASE_OK;
    }
    s->st.warm++;
    pl->warm = true;
    pl->lo = lo;
    pl->hi = hi;
    pl->reused = reused;
    pl->shifted = shifted;
    pl->reencoded = hi - lo;
    pl->why = too_stale ? "stale kept" : "warm";
    return BASE_OK;
}

void ifl_kv_plan_discard(ifl_kvstore *s, const ifl_kv_plan *pl) {
    if (!pl->why || strcmp(pl->why, "off") == 0)
        return;
    if (pl->warm)
        s->st.warm--;
    else if (strcmp(pl->why, "stale") == 0)
        s->st.refreshes--;
    else
        s->st.cold--;
}

static void ifl__kv_evict(ifl_kvstore *s, int keep) {
    const size_t cap = s->o.total_bytes;
    while (s->st.bytes > cap && s->n_docs > 1) {
        int v = -1;
        for (int i = 0; i < s->n_docs; i++)
            if (i != keep && (v < 0 || s->docs[i].used < s->docs[v].used))
                v = i;
        if (v < 0)
            break;
        /* The kept document may move into the dropped one's slot. */
        if (keep == s->n_docs - 1)
            keep = v;
        ifl__kv_drop(s, v);
        s->st.evictions++;
    }
}

base_status ifl_kv_save(ifl_kvstore *s, const char *key, const int32_t *canvas, int len, int hs,
                        int n_hole, const ifl_kv_plan *pl, eng_ctx *ctx, const ifl_kv_anchor *an) {
    if (!s->o.enabled || !key)
        return BASE_OK;
    const size_t bytes = (size_t)len * s->row_floats * sizeof(float);
    int di = ifl__kv_find(s, key);
    if (bytes > s->o.doc_bytes || bytes > s->o.total_bytes) {
        if (di >= 0)
            ifl__kv_drop(s, di);
        return BASE_OK;
    }
    float *rows = malloc(bytes > 0 ? bytes : 1);
    int32_t *tokens = malloc(sizeof(int32_t) * (size_t)(len > 0 ? len : 1));
    uint16_t *age = malloc(sizeof(uint16_t) * (size_t)(len > 0 ? len : 1));
    base_status st = rows && tokens && age ? BASE_OK : BASE_ERR_NOMEM;
    if (st == BASE_OK)
        st = eng_ctx_kv_export(ctx, len, rows);
    if (st != BASE_OK) {
        free(rows);
        free(tokens);
        free(age);
        if (di >= 0)
            ifl__kv_drop(s, di);
        return st == BASE_ERR_UNSUPPORTED ? BASE_OK : st;
    }
    memcpy(tokens, canvas, sizeof(int32_t) * (size_t)len);
    for (int i = hs; i < hs + n_hole && i < len; i++)
        tokens[i] = IFL__HOLE_OLD;
    for (int i = 0; i < len; i++) {
        int src = pl && pl->warm ? pl->src[i] : -1;
        bool fresh = !pl || !pl->warm || src < 0 || (i >= pl->lo && i < pl->hi);
        int a = fresh || di < 0 ? 0 : s->docs[di].age[src] + 1;
        age[i] = (uint16_t)(a > 60000 ? 60000 : a);
    }
    if (di < 0) {
        if (s->n_docs == s->cap_docs) {
            int nc = s->cap_docs ? 2 * s->cap_docs : 8;
            ifl__kv_doc *nd = realloc(s->docs, sizeof *nd * (size_t)nc);
            if (!nd) {
                free(rows);
                free(tokens);
                free(age);
                return BASE_ERR_NOMEM;
            }
            s->docs = nd;
            s->cap_docs = nc;
        }
        char *k = strdup(key);
        if (!k) {
            free(rows);
            free(tokens);
            free(age);
            return BASE_ERR_NOMEM;
        }
        di = s->n_docs++;
        memset(&s->docs[di], 0, sizeof s->docs[di]);
        s->docs[di].key = k;
    }
    ifl__kv_doc *d = &s->docs[di];
    free(d->rows);
    free(d->tokens);
    free(d->age);
    s->st.bytes -= d->bytes;
    d->rows = rows;
    d->tokens = tokens;
    d->age = age;
    d->len = len;
    d->bytes = bytes;
    d->used = ++s->clock;
    if (an)
        d->an = *an;
    else
        memset(&d->an, 0, sizeof d->an);
    s->st.bytes += bytes;
    ifl__kv_evict(s, di);
    return BASE_OK;
}
