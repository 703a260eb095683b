/* Context K/V kept between requests (infill/kvstore.c, issue 19 item 2), on
 * an F32 Dream-shaped model written by tests/engine/tmodel.h (Qwen's
 * tokenizer from the pinned npm package):
 *   - the alignment (Myers' diff) on token arrays;
 *   - scripted edit sequences (insert, delete, paste, undo, edits before,
 *     after and at the hole, CRLF, multi-byte text): the bookkeeping (rows
 *     reused, shifted, re-encoded) is right, and every reused row's layer-0
 *     K and V equal a fresh encode's (<= 1e-5 relative) after re-rotation;
 *   - a forced refresh (every reused row stale) gives the same tokens as no
 *     store at all, bit for bit, and exact mode never uses the store;
 *   - the stale-row bound forces a refresh; the per-document and global
 *     budgets keep nothing / evict the least recently used document. */
#define _POSIX_C_SOURCE 200809L
#include "../engine/tmodel.h"
#include "check.h"
#include "infill.h"
#include "kvstore.h"

static void test_align(void) {
    int32_t src[64];
    const int32_t a[] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* identical */
    CHECK_EQ_I(ifl_kv_align(a, 8, a, 8, 16, src), 0);
    for (int i = 0; i < 8; i++)
        CHECK_EQ_I(src[i], i);
    /* insertion of two tokens after 3 */
    const int32_t b[] = {1, 2, 3, 90, 91, 4, 5, 6, 7, 8};
    CHECK_EQ_I(ifl_kv_align(a, 8, b, 10, 16, src), 2);
    CHECK_EQ_I(src[2], 2);
    CHECK_EQ_I(src[3], -1);
    CHECK_EQ_I(src[4], -1);
    CHECK_EQ_I(src[5], 3);
    CHECK_EQ_I(src[9], 7);
    /* the start dropped (window moved) and an edit in the middle */
    const int32_t c[] = {3, 4, 77, 6, 7, 8};
    CHECK_EQ_I(ifl_kv_align(a, 8, c, 6, 16, src), 4);
    CHECK_EQ_I(src[0], 2);
    CHECK_EQ_I(src[1], 3);
    CHECK_EQ_I(src[2], -1);
    CHECK_EQ_I(src[3], 5);
    CHECK_EQ_I(src[5], 7);
    /* too far apart */
    const int32_t d[] = {50, 51, 52, 53, 54, 55, 56, 57};
    CHECK_EQ_I(ifl_kv_align(a, 8, d, 8, 6, src), -1);
    /* matched pairs keep order and equal tokens (a longer random case) */
    int32_t x[40], y[44];
    base_rng r;
    base_rng_seed(&r, 3);
    for (int i = 0; i < 40; i++)
        x[i] = (int32_t)(base_rng_uniform(&r) * 5);
    for (int i = 0; i < 44; i++)
        y[i] = i < 40 && base_rng_uniform(&r) < 0.8 ? x[i] : (int32_t)(base_rng_uniform(&r) * 5);
    int dd = ifl_kv_align(x, 40, y, 44, 84, src);
    CHECK(dd >= 4);
    int last = -1, matched = 0;
    for (int j = 0; j < 44; j++)
        if (src[j] >= 0) {
            CHECK(src[j] > last);
            CHECK_EQ_I(x[src[j]], y[j]);
            last = src[j];
            matched++;
        }
    CHECK_EQ_I(40 + 44 - 2 * matched, dd); /* a shortest script: D = n + m - 2 LCS */
}

/* ---- on a model ------------------------------------------------------------------- */

static ifl_model *M;
static const eng_model_info *INFO;
static int KVD;
static double WORST; /* largest layer-0 relative error seen */

static double rel_err(const float *a, const float *b, int n) {
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        num = fmax(num, fabs((double)a[i] - b[i]));
        den = fmax(den, fabs((double)b[i]));
    }
    return den > 0 ? num / den : num;
}

typedef struct run_out {
    const char *why;
    int reused, shifted, reencoded;
    int32_t tokens[64];
    int n_tokens;
    int32_t canvas[512];
    int len, hs;
    size_t prefix_cut, suffix_cut;
} run_out;

static int CTX_BUDGET; /* 0: the whole context fits */

/* The tests' request: an 8-token hole between pre and suf, 4 steps, on
 * document key (NULL: no store), context budget CTX_BUDGET. */
static void text_req(ifl_text_req *r, const char *key, const char *pre, const char *suf,
                     eng_cache_mode mode) {
    memset(r, 0, sizeof *r);
    r->prefix = pre;
    r->prefix_len = strlen(pre);
    r->suffix = suf;
    r->suffix_len = strlen(suf);
    eng_diff_params_default(&r->params);
    r->params.n_hole = 8;
    r->params.steps = 4;
    r->params.mode = mode;
    r->kv_key = key;
    r->ctx_budget = CTX_BUDGET;
}

/* One request on document key (NULL: no store) with the hole between pre
 * and suf; fills o with the store's figures and the canvas it ran. */
static void run(const char *key, const char *pre, const char *suf, eng_cache_mode mode,
                run_out *o) {
    memset(o, 0, sizeof *o);
    ifl_text_req r;
    text_req(&r, key, pre, suf, mode);
    ifl_text_res res;
    base_status st = ifl_infill_text(M, &r, NULL, &res);
    CHECK_EQ_I(st, BASE_OK);
    if (st != BASE_OK)
        return;
    if (!CTX_BUDGET) {
        CHECK_EQ_I(res.prefix_cut, 0);
        CHECK_EQ_I(res.suffix_cut, 0);
    }
    o->prefix_cut = res.prefix_cut;
    o->suffix_cut = res.suffix_cut;
    o->why = res.kv_why;
    o->reused = res.kv_reused;
    o->shifted = res.kv_shifted;
    o->reencoded = res.kv_reencoded;
    o->n_tokens = BASE_MIN(res.n_tokens, 64);
    memcpy(o->tokens, res.tokens, sizeof(int32_t) * (size_t)o->n_tokens);
    /* the canvas it ran: the same layout from the same tokens */
    int32_t *p = NULL, *s = NULL;
    size_t np = 0, ns = 0;
    CHECK_EQ_I(eng_tokenize(ifl_model_tokenizer(M), pre + res.prefix_cut,
                            strlen(pre) - res.prefix_cut, &p, &np),
               BASE_OK);
    CHECK_EQ_I(eng_tokenize(ifl_model_tokenizer(M), suf, strlen(suf) - res.suffix_cut, &s, &ns),
               BASE_OK);
    eng_diff_prompt pr = {p, (int)np, s, (int)ns};
    o->len = eng_diff_layout(INFO, &pr, 8, o->canvas, 512, &o->hs);
    free(p);
    free(s);
    ifl_text_res_free(&res);
}

/* The saved rows and tokens before a request, to check what it reused. */
typedef struct before {
    int32_t canvas[512];
    int len, hs;
} before;

/* After a warm request: the store's map agrees with the canvases (equal
 * tokens, order kept, every row outside the window reused), the counts
 * match, and each reused row's layer-0 K/V equal a fresh full encode's. */
static void check_warm(const before *b, const run_out *o, int expect_delta_after_hole) {
    CHECK_STR(o->why, "warm");
    if (!o->why || strcmp(o->why, "warm") != 0)
        return;
    ifl_kvstore *kv = ifl_model_kv(M);
    /* Re-plan the same canvas against the saved one of before: the store's
     * map for this request (planning does not change the saved canvas). */
    (void)kv;
    eng_ctx *ctx = ifl_model_ctx(M);
    /* Rows the request reused were never recomputed at layer 0: read them
     * now, then encode the canvas from scratch and compare. */
    int32_t src[512];
    int32_t oldc[512], newc[512];
    memcpy(oldc, b->canvas, sizeof(int32_t) * (size_t)b->len);
    for (int i = b->hs; i < b->hs + 8; i++)
        oldc[i] = -1;
    memcpy(newc, o->canvas, sizeof(int32_t) * (size_t)o->len);
    for (int i = o->hs; i < o->hs + 8; i++)
        newc[i] = -2;
    const ifl_kv_opts *op = ifl_kv_get_opts(kv);
    CHECK(ifl_kv_align(oldc, b->len, newc, o->len, op->max_diff, src) >= 0);
    int lo = o->hs, hi = o->hs + 8;
    for (int i = 0; i < o->len; i++)
        if (src[i] < 0) {
            lo = BASE_MIN(lo, i);
            hi = BASE_MAX(hi, i + 1);
        }
    lo = BASE_MAX(0, lo - op->margin);
    hi = BASE_MIN(o->len, hi + op->margin);
    int reused = 0, shifted = 0;
    float *k0 = malloc(sizeof(float) * (size_t)KVD * 512), *v0 = malloc(sizeof(float) * KVD * 512);
    float k1[256], v1[256];
    for (int i = 0; i < o->len; i++) {
        if (i >= lo && i < hi)
            continue;
        CHECK(src[i] >= 0);
        if (src[i] < 0)
            continue;
        CHECK_EQ_I(oldc[src[i]], newc[i]);
        reused++;
        if (src[i] != i) {
            shifted++;
            if (i > o->hs && expect_delta_after_hole != 0x7fff)
                CHECK_EQ_I(i - src[i], expect_delta_after_hole);
        }
        CHECK_EQ_I(eng_ctx_kv_row(ctx, 0, 0, i, k0 + (size_t)i * KVD, v0 + (size_t)i * KVD),
                   BASE_OK);
    }
    CHECK_EQ_I(reused, o->reused);
    CHECK_EQ_I(shifted, o->shifted);
    CHECK_EQ_I(hi - lo, o->reencoded);
    CHECK_EQ_I(reused + (hi - lo), o->len);
    eng_batch bt = {1, o->len, o->canvas, NULL};
    CHECK_EQ_I(eng_forward(ctx, &bt, NULL, 0, NULL), BASE_OK);
    double worst = 0;
    for (int i = 0; i < o->len; i++) {
        if ((i >= lo && i < hi) || src[i] < 0)
            continue;
        CHECK_EQ_I(eng_ctx_kv_row(ctx, 0, 0, i, k1, v1), BASE_OK);
        worst = fmax(worst, rel_err(k0 + (size_t)i * KVD, k1, KVD));
        worst = fmax(worst, rel_err(v0 + (size_t)i * KVD, v1, KVD));
    }
    WORST = fmax(WORST, worst);
    CHECK(worst <= 1e-5);
    if (worst > 1e-5)
        fprintf(stderr, "layer-0 relative error %g\n", worst);
    free(k0);
    free(v0);
}

static void snap(before *b, const run_out *o) {
    memcpy(b->canvas, o->canvas, sizeof(int32_t) * (size_t)o->len);
    b->len = o->len;
    b->hs = o->hs;
}

static const char *BASE_PRE = "#include <stdio.h>\n\nstatic int add(int a, int b) {\n"
                              "    return a + b;\n}\n\nint main(void) {\n    int x = add(1, 2);\n"
                              "    printf(\"%d\\n\", x);\n    ";
static const char *BASE_SUF = "\n    return 0;\n}\n\nstatic int sub(int a, int b) {\n"
                              "    return a - b;\n}\n";

static void set_opts(int margin, int stale_edits, double stale_share, size_t doc, size_t total) {
    ifl_kv_opts o;
    ifl_kv_opts_default(&o);
    o.enabled = true;
    o.margin = margin;
    o.stale_edits = stale_edits;
    o.stale_share = stale_share;
    o.doc_bytes = doc;
    o.total_bytes = total;
    o.max_window = 0.9;
    ifl_kv_set_opts(ifl_model_kv(M), &o);
}

/* Edit sequences on one document. */
static void test_edits(const char *pre0, const char *suf0, const char *ins_line,
                       const char *multibyte) {
    set_opts(4, 1000, 2.0, (size_t)64 << 20, (size_t)256 << 20);
    ifl_kv_clear(ifl_model_kv(M));
    char pre[4096], suf[4096];
    run_out o;
    before b;
    run("doc", pre0, suf0, ENG_CACHE_CACHED, &o);
    CHECK_STR(o.why, "cold");
    CHECK_EQ_I(o.reencoded, o.len);
    snap(&b, &o);
    /* 1. insert a line early in the prefix: every reused row after it moves */
    const char *at = strstr(pre0, "int main");
    snprintf(pre, sizeof pre, "%.*s%s%s", (int)(at - pre0), pre0, ins_line, at);
    run("doc", pre, suf0, ENG_CACHE_CACHED, &o);
    check_warm(&b, &o, 0x7fff);
    CHECK(o.shifted > 0);
    snap(&b, &o);
    /* 2. undo it: back to the first canvas */
    run("doc", pre0, suf0, ENG_CACHE_CACHED, &o);
    check_warm(&b, &o, 0x7fff);
    CHECK(o.shifted > 0);
    snap(&b, &o);
    /* 3. typing at the hole (the prefix grows at its end) */
    snprintf(pre, sizeof pre, "%sint y", pre0);
    run("doc", pre, suf0, ENG_CACHE_CACHED, &o);
    check_warm(&b, &o, 0x7fff);
    snap(&b, &o);
    /* 4. delete a line after the hole (in the suffix's far part) */
    const char *ret = strstr(suf0, "    return a - b;"), *eol = strchr(ret, '\n');
    snprintf(suf, sizeof suf, "%.*s%s", (int)(ret - suf0), suf0, eol + 1);
    run("doc", pre, suf, ENG_CACHE_CACHED, &o);
    check_warm(&b, &o, 0x7fff);
    snap(&b, &o);
    /* 5. paste a block (multi-byte text) at the start of the prefix */
    snprintf(pre, sizeof pre, "%s%sint y", multibyte, pre0);
    run("doc", pre, suf, ENG_CACHE_CACHED, &o);
    check_warm(&b, &o, 0x7fff);
    CHECK(o.shifted > 0);
    snap(&b, &o);
    /* 6. the hole's neighbourhood: the suffix's first line changes */
    snprintf(suf, sizeof suf, ";%s", suf0);
    run("doc", pre, suf, ENG_CACHE_CACHED, &o);
    check_warm(&b, &o, 0x7fff);
    snap(&b, &o);
    /* 7. the same request again: nothing moved, only the hole's window */
    run("doc", pre, suf, ENG_CACHE_CACHED, &o);
    check_warm(&b, &o, 0);
    CHECK_EQ_I(o.shifted, 0);
    CHECK_EQ_I(o.reencoded, 8 + 2 * 4);
    snap(&b, &o);
    /* 8. an unrelated document under the same key: no reuse */
    run("doc", "local function f(a)\n  return a * 2 end\n", "\nprint(f(3))\n", ENG_CACHE_CACHED,
        &o);
    CHECK(strcmp(o.why, "jump") == 0 || strcmp(o.why, "window") == 0);
    CHECK_EQ_I(o.reused, 0);
}

/* The same sequence with a forced refresh and without a store give the same
 * tokens bit for bit; exact mode never touches the store. */
static void test_refresh_exact(void) {
    const char *pres[3] = {BASE_PRE, "#include <stdio.h>\n\nint main(void) {\n    ", BASE_PRE};
    for (int m = 0; m < 2; m++) {
        eng_cache_mode mode = m ? ENG_CACHE_EXACT : ENG_CACHE_CACHED;
        for (int i = 0; i < 3; i++) {
            run_out a, b;
            set_opts(4, 0, 0.0, (size_t)64 << 20, (size_t)256 << 20);
            run("r", pres[i], BASE_SUF, mode, &a);
            run(NULL, pres[i], BASE_SUF, mode, &b);
            CHECK_EQ_I(a.n_tokens, b.n_tokens);
            CHECK(memcmp(a.tokens, b.tokens, sizeof(int32_t) * (size_t)a.n_tokens) == 0);
            if (m == 0 && i > 0)
                CHECK_STR(a.why, "stale");
            if (m == 1)
                CHECK(a.why == NULL);
        }
    }
}

/* The same canvas again (nothing typed): every row outside the window is
 * the first request's first step, computed over the same masks, so the
 * warm request answers bit for bit what a request without a store does. */
static void test_unchanged_warm(void) {
    set_opts(4, 1000, 2.0, (size_t)64 << 20, (size_t)256 << 20);
    ifl_kv_clear(ifl_model_kv(M));
    run_out a, b, c;
    run(NULL, BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &a);
    run("u", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &b);
    CHECK_STR(b.why, "cold");
    run("u", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &c);
    CHECK_STR(c.why, "warm");
    CHECK(c.reused > 0);
    CHECK_EQ_I(a.n_tokens, c.n_tokens);
    CHECK(memcmp(a.tokens, c.tokens, sizeof(int32_t) * (size_t)a.n_tokens) == 0);
    ifl_kv_clear(ifl_model_kv(M));
}

static void test_stale_budget(void) {
    /* Stale bound: rows reused more than 2 requests after they were computed
     * force a full forward. */
    set_opts(4, 2, 0.5, (size_t)64 << 20, (size_t)256 << 20);
    ifl_kv_clear(ifl_model_kv(M));
    const char *whys[5] = {"cold", "warm", "warm", "stale", "warm"};
    char pre[4096];
    for (int i = 0; i < 5; i++) {
        run_out o;
        snprintf(pre, sizeof pre, "%s%.*s", BASE_PRE, i, "xyzw");
        run("s", pre, BASE_SUF, ENG_CACHE_CACHED, &o);
        CHECK_STR(o.why, whys[i]);
    }
    /* Per-document budget below one canvas: nothing is kept. */
    run_out o;
    set_opts(4, 1000, 2.0, 1024, (size_t)256 << 20);
    run("d", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &o);
    run("d", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &o);
    CHECK_STR(o.why, "cold");
    ifl_kv_stats st;
    ifl_kv_get_stats(ifl_model_kv(M), &st);
    CHECK_EQ_I(st.docs, 0);
    /* Global budget of two and a half canvases: a third document evicts the
     * least recently used one. */
    size_t one = (size_t)o.len * eng_ctx_kv_row_floats(ifl_model_ctx(M)) * sizeof(float);
    set_opts(4, 1000, 2.0, (size_t)64 << 20, one * 5 / 2);
    run("A", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &o);
    run("B", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &o);
    run("A", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &o);
    CHECK_STR(o.why, "warm");
    run("C", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &o);
    ifl_kv_get_stats(ifl_model_kv(M), &st);
    CHECK_EQ_I(st.docs, 2);
    CHECK_EQ_I(st.evictions, 1);
    CHECK(st.bytes <= one * 5 / 2);
    run("A", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &o);
    CHECK_STR(o.why, "warm");
    run("B", BASE_PRE, BASE_SUF, ENG_CACHE_CACHED, &o);
    CHECK_STR(o.why, "cold"); /* B was the least recently used */
    /* A settings change drops everything. */
    set_opts(5, 1000, 2.0, (size_t)64 << 20, (size_t)256 << 20);
    ifl_kv_get_stats(ifl_model_kv(M), &st);
    CHECK_EQ_I(st.docs, 0);
}

/* With a deadline, when a full forward of the canvas would pass it: stale
 * rows are reused once more ("stale kept") rather than refreshed late, and
 * a canvas the store cannot reuse at all ("window": edits at both far ends)
 * runs nothing and the document is forgotten (the next request is cold and
 * planned as such). When the full forward fits, both run as before. */
static base_status run_deadline(const char *key, const char *pre, const char *suf, double row_ms,
                                ifl_text_res *res) {
    ifl_cost saved = *ifl_model_cost(M), c;
    memset(&c, 0, sizeof c);
    c.row_ms = row_ms;
    c.scale = 1.0;
    ifl_model_set_cost(M, &c);
    ifl_text_req r;
    text_req(&r, key, pre, suf, ENG_CACHE_CACHED);
    r.params.deadline_ns = base_now_ns() + 2000000000ull;
    base_status st = ifl_infill_text(M, &r, NULL, res);
    ifl_model_set_cost(M, &saved);
    return st;
}

static void test_refuse_cold(void) {
    char pre[4096], suf[4096];
    ifl_kv_anchor an;
    for (int slow = 1; slow >= 0; slow--) {
        /* 1 s per row: a full forward of any canvas passes the 2 s deadline */
        const double row_ms = slow ? 1000.0 : 1e-6;
        set_opts(4, 2, 0.5, (size_t)64 << 20, (size_t)256 << 20);
        ifl_kv_clear(ifl_model_kv(M));
        run_out o;
        for (int i = 0; i < 3; i++) {
            snprintf(pre, sizeof pre, "%s%.*s", BASE_PRE, i, "xyzw");
            run("rc", pre, BASE_SUF, ENG_CACHE_CACHED, &o);
        }
        snprintf(pre, sizeof pre, "%s%.*s", BASE_PRE, 3, "xyzw");
        ifl_text_res res;
        CHECK_EQ_I(run_deadline("rc", pre, BASE_SUF, row_ms, &res), BASE_OK);
        CHECK_STR(res.kv_why, slow ? "stale kept" : "stale");
        CHECK(!res.kv_refused);
        CHECK(res.n_cand > 0 && res.steps_run > 0);
        CHECK((res.kv_reused > 0) == (bool)slow);
        CHECK(ifl_kv_anchor_get(ifl_model_kv(M), "rc", &an));
        ifl_text_res_free(&res);
        /* edits at both far ends: one window over the whole canvas */
        snprintf(pre, sizeof pre, "/* a */\n%s", BASE_PRE);
        snprintf(suf, sizeof suf, "%s/* b */\n", BASE_SUF);
        CHECK_EQ_I(run_deadline("rc", pre, suf, row_ms, &res), BASE_OK);
        CHECK_STR(res.kv_why, "window");
        CHECK(res.kv_refused == (bool)slow);
        CHECK((res.n_cand > 0) == !slow);
        CHECK((res.steps_run > 0) == !slow);
        CHECK(ifl_kv_anchor_get(ifl_model_kv(M), "rc", &an) == !slow);
        ifl_text_res_free(&res);
        run("rc", pre, suf, ENG_CACHE_CACHED, &o);
        CHECK_STR(o.why, slow ? "cold" : "warm");
    }
    ifl_kv_clear(ifl_model_kv(M));
}

enum { LONG_LINES = 120 };

/* A 120-line document, larger than the tests' 160-token context; line[i]
 * is where its line i starts (line[120]: its end). */
static void long_doc(char *doc, size_t cap, size_t line[LONG_LINES + 1]) {
    size_t n = 0;
    for (int i = 0; i < LONG_LINES; i++) {
        line[i] = n;
        n += (size_t)snprintf(doc + n, cap - n, "    total += values[%d] * %d;\n", i, i % 7);
    }
    line[LONG_LINES] = n;
}

/* A document larger than the context: typing, moving a line up or down and
 * a jump cut exactly as a request without the store does (the same canvas:
 * the store changes which rows are recomputed, never what the model sees),
 * and every row outside the window is reused. */
static void test_anchor(void) {
    set_opts(4, 1000, 2.0, (size_t)64 << 20, (size_t)256 << 20);
    ifl_kv_clear(ifl_model_kv(M));
    static char doc[16384];
    size_t line[LONG_LINES + 1];
    long_doc(doc, sizeof doc, line);
    CTX_BUDGET = 160;
    /* the cursor at the start of line 60, then typing, then a line down
     * and two up */
    char pre[16384], typed[64] = "";
    const size_t at[6] = {line[60], line[60], line[60], line[61], line[59], line[2]};
    const char *typ[6] = {"", "    x", "    x = 1", "", "", ""};
    const char *want[6] = {"cold", "warm", "warm", "warm", "warm", NULL};
    size_t cut0 = 0;
    before b;
    for (int t = 0; t < 6; t++) {
        snprintf(typed, sizeof typed, "%s", typ[t]);
        snprintf(pre, sizeof pre, "%.*s%s", (int)at[t], doc, typed);
        run_out o, fresh;
        run(NULL, pre, doc + at[t], ENG_CACHE_CACHED, &fresh);
        run("long", pre, doc + at[t], ENG_CACHE_CACHED, &o);
        /* what the planner expects of the next warm step: this one's rows
         * outside the 8-token hole, or -1 after a cold run */
        ifl_kv_anchor an;
        CHECK(ifl_kv_anchor_get(ifl_model_kv(M), "long", &an));
        CHECK_EQ_I(an.window_extra, strcmp(o.why, "warm") == 0 ? o.reencoded - 8 : -1);
        if (t > 0 && t < 5)
            CHECK(an.window_extra >= 2 * 4); /* both margins of 4 at least */
        /* the canvas a request without the store sees */
        CHECK_EQ_U(o.prefix_cut, fresh.prefix_cut);
        CHECK_EQ_U(o.suffix_cut, fresh.suffix_cut);
        CHECK_EQ_I(o.len, fresh.len);
        CHECK(o.len == fresh.len &&
              memcmp(o.canvas, fresh.canvas, sizeof(int32_t) * (size_t)o.len) == 0);
        if (t == 0) {
            CHECK(o.prefix_cut > 0);
            CHECK(o.suffix_cut > 0);
            cut0 = o.prefix_cut;
        } else if (t < 5) {
            CHECK_STR(o.why, want[t]);
            check_warm(&b, &o, 0x7fff);
            /* typing and a line down reuse most rows; two lines up adds
             * rows at the canvas's start, and the one window then runs
             * from there to the hole: only the suffix side is reused */
            CHECK(t == 4 ? o.reused > 0 && o.reused < o.len / 2 : o.reused >= o.len / 2);
        } else {
            CHECK(o.prefix_cut != cut0);
            CHECK(strcmp(o.why, "warm") != 0 || o.reused < o.len / 2);
        }
        snap(&b, &o);
    }
    /* A later request allowed a larger context cuts afresh too: the rows
     * the larger context adds are new, so it is no warm step. */
    snprintf(pre, sizeof pre, "%.*s", (int)line[60], doc);
    run_out o1, o2, f2;
    run("long", pre, doc + line[60], ENG_CACHE_CACHED, &o1);
    CHECK(o1.prefix_cut > 0);
    CTX_BUDGET = 640;
    run(NULL, pre, doc + line[60], ENG_CACHE_CACHED, &f2);
    run("long", pre, doc + line[60], ENG_CACHE_CACHED, &o2);
    CHECK(o2.prefix_cut < o1.prefix_cut);
    CHECK_EQ_U(o2.prefix_cut, f2.prefix_cut);
    CHECK_EQ_U(o2.suffix_cut, f2.suffix_cut);
    CHECK(strcmp(o2.why, "warm") != 0 || o2.reencoded > o2.len / 4);
    CTX_BUDGET = 0;
}

/* With a deadline a full forward would pass, a move two lines up, whose
 * fresh cut the store cannot reuse (the one window would run from the
 * canvas's new start to the hole, over half of it), holds the kept canvas's
 * prefix edge instead of answering nothing: a warm step on the kept rows.
 * The statistics count that plan only. When the full forward fits, the
 * fresh cut runs, as without the store. */
static void test_hold_late(void) {
    static char doc[16384];
    size_t line[LONG_LINES + 1];
    long_doc(doc, sizeof doc, line);
    CTX_BUDGET = 160;
    char pre60[16384], pre58[16384];
    snprintf(pre60, sizeof pre60, "%.*s", (int)line[60], doc);
    snprintf(pre58, sizeof pre58, "%.*s", (int)line[58], doc);
    for (int slow = 1; slow >= 0; slow--) {
        set_opts(4, 1000, 2.0, (size_t)64 << 20, (size_t)256 << 20);
        ifl_kv_opts ko = *ifl_kv_get_opts(ifl_model_kv(M));
        ko.max_window = 0.5;
        ifl_kv_set_opts(ifl_model_kv(M), &ko);
        ifl_kv_clear(ifl_model_kv(M));
        run_out o0, fresh;
        run("hl", pre60, doc + line[60], ENG_CACHE_CACHED, &o0);
        CHECK(o0.prefix_cut > 0);
        run(NULL, pre58, doc + line[58], ENG_CACHE_CACHED, &fresh);
        CHECK(fresh.prefix_cut < o0.prefix_cut);
        ifl_kv_stats s0, s1;
        ifl_kv_get_stats(ifl_model_kv(M), &s0);
        ifl_text_res res;
        CHECK_EQ_I(run_deadline("hl", pre58, doc + line[58], slow ? 1000.0 : 1e-6, &res), BASE_OK);
        ifl_kv_get_stats(ifl_model_kv(M), &s1);
        CHECK(!res.kv_refused);
        CHECK(res.n_cand > 0 && res.steps_run > 0);
        if (slow) {
            CHECK_STR(res.kv_why, "warm");
            CHECK_EQ_U(res.prefix_cut, o0.prefix_cut); /* held */
            CHECK(res.kv_reused > 0);
            CHECK(s1.warm == s0.warm + 1 && s1.cold == s0.cold);
        } else {
            CHECK_STR(res.kv_why, "window");
            CHECK_EQ_U(res.prefix_cut, fresh.prefix_cut);
            CHECK_EQ_U(res.suffix_cut, fresh.suffix_cut);
            CHECK(s1.warm == s0.warm && s1.cold == s0.cold + 1);
        }
        ifl_text_res_free(&res);
    }
    CTX_BUDGET = 0;
    ifl_kv_clear(ifl_model_kv(M));
}

/* An idle prefill cuts its own (larger) context, and its pass becomes the
 * kept canvas and anchor, so the request after it with that context takes
 * the prefilled step. */
static void test_prefill_cut(void) {
    set_opts(4, 1000, 2.0, (size_t)64 << 20, (size_t)256 << 20);
    ifl_kv_clear(ifl_model_kv(M));
    static char doc[16384];
    size_t line[LONG_LINES + 1];
    long_doc(doc, sizeof doc, line);
    const size_t at = line[60];
    char pre[16384];
    snprintf(pre, sizeof pre, "%.*s", (int)at, doc);
    CTX_BUDGET = 160;
    run_out o;
    run("pc", pre, doc + at, ENG_CACHE_CACHED, &o);
    CHECK(o.prefix_cut > 0);
    ifl_kv_anchor a0, a1;
    CHECK(ifl_kv_anchor_get(ifl_model_kv(M), "pc", &a0));
    ifl_text_req r;
    text_req(&r, "pc", pre, doc + at, ENG_CACHE_CACHED);
    r.ctx_budget = 320;
    r.prefill = true;
    ifl_model_prefill_clear(M);
    ifl_text_res res;
    CHECK_EQ_I(ifl_infill_text(M, &r, NULL, &res), BASE_ERR_CANCELLED); /* stops after its step */
    CHECK(ifl_model_prefilled(M));
    CHECK(ifl_kv_anchor_get(ifl_model_kv(M), "pc", &a1));
    CHECK(a1.prefix_cut < a0.prefix_cut); /* its own larger cut, not the anchored one */
    CHECK_EQ_I(a1.window_extra, -1);
    /* the request there with that context takes the prefilled step */
    r.prefill = false;
    CHECK_EQ_I(ifl_infill_text(M, &r, NULL, &res), BASE_OK);
    CHECK(res.prefill_hit);
    CHECK_EQ_U(res.prefix_cut, a1.prefix_cut);
    ifl_text_res_free(&res);
    CTX_BUDGET = 0;
    ifl_kv_clear(ifl_model_kv(M));
    ifl_model_prefill_clear(M);
}

int main(void) {
    test_align();
    if (!tm_have_tokenizer()) {
        fprintf(stderr, "no tokenizer at %s\n", tm_tokenizer_path());
        return 1;
    }
    char *dir = tm_tmpdir();
    tm_spec s = tm_default(TM_DREAM);
    s.layers = 2;
    s.d = 32;
    s.heads = 2;
    s.kv = 1;
    s.ff = 64;
    s.vocab = 151936;
    s.mask_id = 151665;
    s.seed = 7;
    CHECK_EQ_I(tm_write(dir, &s), 0);
    ifl_model_opts mo;
    ifl_model_opts_default(&mo);
    mo.no_cost = true;
    mo.max_candidates = 1;
    mo.max_len = 512;
    mo.load.n_threads = 2;
    eng_error err = {0};
    M = ifl_model_open(dir, &mo, &err);
    CHECK(M != NULL);
    if (!M) {
        fprintf(stderr, "%s\n", err.msg);
        tm_rmrf(dir);
        free(dir);
        return check_finish("test_kvcache");
    }
    INFO = ifl_model_info(M);
    KVD = INFO->n_kv_head * INFO->head_dim;
    test_edits(
        BASE_PRE, BASE_SUF, "static int z = 3;\n\n",
        "/* d\xc3\xa9j\xc3\xa0 vu \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x98\x80 */\n");
    /* the same document with CRLF line ends */
    char crp[4096], crs[4096];
    size_t k = 0;
    for (const char *c = BASE_PRE; *c; c++) {
        if (*c == '\n')
            crp[k++] = '\r';
        crp[k++] = *c;
    }
    crp[k] = 0;
    k = 0;
    for (const char *c = BASE_SUF; *c; c++) {
        if (*c == '\n')
            crs[k++] = '\r';
        crs[k++] = *c;
    }
    crs[k] = 0;
    test_edits(crp, crs, "static int z = 3;\r\n\r\n",
               "// \xce\xb1\xce\xb2\xce\xb3 \xe2\x82\xac\r\n");
    test_anchor();
    test_hold_late();
    test_refresh_exact();
    test_unchanged_warm();
    test_stale_budget();
    test_refuse_cold();
    test_prefill_cut();
    fprintf(stderr, "largest layer-0 K/V relative error of a reused row: %.3g\n", WORST);
    ifl_model_close(M);
    tm_rmrf(dir);
    free(dir);
    return check_finish("test_kvcache");
}
