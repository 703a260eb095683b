/* Trees kept only near the focus (ifl_tree_set_keep_bytes): on documents of
 * 200 KB, a tree that drops the trees of far segments must answer exactly as
 * one that keeps them all — error counts, S-expressions, span location and
 * candidate validation at cursors all over the file, and after edits far
 * from the focus — while holding trees for only a window of segments. */
#include "check.h"
#include "syntax.h"
#include "syntax_edits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FUNCS = 1000 }; /* two cursors in each */

/* Python functions, each with cursors in a comment and on an empty body
 * line; C ones the same, inside an include guard so that its blanking is
 * read again. */
static char *gen(const char *lang, size_t *len, size_t *cursors, size_t *nc) {
    base_buf b;
    base_buf_init(&b);
    *nc = 0;
    bool py = strcmp(lang, "python") == 0;
    if (!py)
        base_buf_printf(&b, "#ifndef EVICT_H\n#define EVICT_H\n\n");
    for (int f = 0; f < FUNCS; f++) {
        if (py) {
            base_buf_printf(&b, "def func_%d(xs, limit=%d):\n    total = 0\n", f, f);
            base_buf_printf(&b, "    for x in xs:  # it");
            cursors[(*nc)++] = b.len; /* in a comment: only the tree tells */
            base_buf_printf(&b, "ems\n        total += x * %d\n    ", f % 7);
            cursors[(*nc)++] = b.len;
            base_buf_printf(&b, "\n    return [total, {'f': %d}]\n\n\n", f);
        } else {
            base_buf_printf(&b, "static int func_%d(const int *xs, int n) {\n", f);
            base_buf_printf(&b, "    int total = 0; /* s");
            cursors[(*nc)++] = b.len;
            base_buf_printf(&b, "um */\n    for (int i = 0; i < n; i++)\n");
            base_buf_printf(&b, "        total += xs[i] * %d;\n    ", f % 7);
            cursors[(*nc)++] = b.len;
            base_buf_printf(&b, "\n    return total;\n}\n\n");
        }
    }
    if (!py)
        base_buf_printf(&b, "#endif\n");
    return base_buf_steal(&b, len);
}

static bool same_span(const ifl_span *a, const ifl_span *b) {
    return a->kind == b->kind && a->multiline == b->multiline && a->hole_start == b->hole_start &&
           a->hole_end == b->hole_end && a->n_tokens == b->n_tokens && a->n_max == b->n_max &&
           a->max_lines == b->max_lines;
}

/* ev (evicting) and all (keeping every tree) follow doc: same error count and
 * S-expression; ev holds far fewer trees. */
static void same_trees(ifl_tree *ev, ifl_tree *all, const base_buf *doc) {
    CHECK_EQ_I(ifl_tree_update(ev, doc->data, doc->len), BASE_OK);
    CHECK_EQ_I(ifl_tree_update(all, doc->data, doc->len), BASE_OK);
    size_t kept = ifl_tree_kept_count(ev), nseg = ifl_tree_segment_count(ev);
    CHECK(nseg > 100);
    /* IFL_TREE_KEEP_BYTES either side of the focus, in segments of the
     * document's mean length, and one more at each end of the window. */
    CHECK(kept > 0 && kept <= 2 * IFL_TREE_KEEP_BYTES * nseg / doc->len + 3);
    CHECK_EQ_U(ifl_tree_kept_count(all), ifl_tree_segment_count(all));
    /* Counted before the S-expressions, which parse every segment again. */
    CHECK_EQ_U(ifl_tree_error_count(ev, doc->data, doc->len),
               ifl_tree_error_count(all, doc->data, doc->len));
    char *a = ifl_tree_sexp(ev, doc->data, doc->len), *b = ifl_tree_sexp(all, doc->data, doc->len);
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
}

/* Span location and validation at cursors spread over the file, visited in
 * an order that jumps (each one far from the last focus). */
static void reads_far_away(ifl_tree *ev, ifl_tree *all, const base_buf *doc, const size_t *cursors,
                           size_t nc) {
    static const char *cands[] = {"total = total + 1", "if (n) total++;", "return total", "x = (",
                                  "} }"};
    for (size_t i = 0; i < 40; i++) {
        size_t cur = cursors[(i * 397) % nc];
        ifl_span sa, sb;
        CHECK_EQ_I(ifl_tree_locate(ev, doc->data, doc->len, cur, 0, 0, &sa), BASE_OK);
        CHECK_EQ_I(ifl_tree_locate(all, doc->data, doc->len, cur, 0, 0, &sb), BASE_OK);
        CHECK(same_span(&sa, &sb));
        const char *cand = cands[i % BASE_ARRAY_LEN(cands)];
        ifl_post_opts o = {.validate = true};
        char *oa = NULL, *ob = NULL;
        size_t la = 0, lb = 0;
        base_status ra =
            ifl_tree_postprocess(ev, doc->data, doc->len, &sa, cand, strlen(cand), &o, &oa, &la);
        base_status rb =
            ifl_tree_postprocess(all, doc->data, doc->len, &sb, cand, strlen(cand), &o, &ob, &lb);
        CHECK_EQ_I(ra, rb);
        CHECK((!oa && !ob) || (oa && ob && la == lb && memcmp(oa, ob, la) == 0));
        free(oa);
        free(ob);
    }
    /* The reads parsed their segments again; the next update drops those
     * outside the window around the last one. */
    size_t nseg = ifl_tree_segment_count(ev);
    CHECK_EQ_I(ifl_tree_update(ev, doc->data, doc->len), BASE_OK);
    CHECK(ifl_tree_kept_count(ev) <= 2 * IFL_TREE_KEEP_BYTES * nseg / doc->len + 3);
}

/* Edits in segments whose trees were dropped, some breaking the syntax and
 * then mended, each followed by an update of both trees. */
static void edits_far_away(ifl_tree *ev, ifl_tree *all, base_buf *da, base_buf *db,
                           const size_t *cursors, size_t nc, bool py) {
    static const char *ins[] = {"total += 1\n    ", "(", "x = [", "return 0\n    "};
    static const char *cins[] = {"total += 1;\n    ", "(", "int x = {", "return 0;\n    "};
    for (size_t i = 0; i < 24; i++) {
        /* Each edit is taken out again below, so the cursors stay valid. */
        size_t k = (i * 211) % nc, cur = cursors[k];
        const char *s = (py ? ins : cins)[i % 4];
        CHECK_EQ_I(syntax_edits_apply(ev, da, cur, 0, s, strlen(s)), BASE_OK);
        CHECK_EQ_I(syntax_edits_apply(all, db, cur, 0, s, strlen(s)), BASE_OK);
        same_trees(ev, all, da);
        CHECK_EQ_I(syntax_edits_apply(ev, da, cur, strlen(s), "", 0), BASE_OK);
        CHECK_EQ_I(syntax_edits_apply(all, db, cur, strlen(s), "", 0), BASE_OK);
        /* Read somewhere else before the next edit: its segment then lost its
         * tree, and the edit above has to parse it afresh. */
        size_t far = cursors[(k + nc / 2) % nc];
        ifl_span sp;
        CHECK_EQ_I(ifl_tree_locate(ev, da->data, da->len, far, 0, 0, &sp), BASE_OK);
        CHECK_EQ_I(ifl_tree_locate(all, db->data, db->len, far, 0, 0, &sp), BASE_OK);
    }
    same_trees(ev, all, da);
}

static void lang_case(const char *lang) {
    size_t len = 0, nc = 0;
    static size_t cursors[2 * FUNCS];
    char *text = gen(lang, &len, cursors, &nc);
    CHECK(text != NULL && len > 100 * 1024);
    base_status st = BASE_OK;
    ifl_tree *ev = ifl_tree_new(lang, &st), *all = ifl_tree_new(lang, &st);
    CHECK(ev && all);
    if (!text || !ev || !all)
        goto done;
    ifl_tree_set_keep_bytes(all, SIZE_MAX);
    base_buf da, db;
    base_buf_init(&da);
    base_buf_init(&db);
    CHECK_EQ_I(base_buf_append(&da, text, len), BASE_OK);
    CHECK_EQ_I(base_buf_append(&db, text, len), BASE_OK);
    same_trees(ev, all, &da);
    size_t full = ifl_tree_segment_count(ev);
    reads_far_away(ev, all, &da, cursors, nc);
    edits_far_away(ev, all, &da, &db, cursors, nc, strcmp(lang, "python") == 0);
    CHECK(da.len == len && memcmp(da.data, text, len) == 0);
    CHECK_EQ_I(ifl_tree_update(ev, da.data, da.len), BASE_OK);
    fprintf(stderr, "%s: %zu bytes, %zu segments, trees kept %zu\n", lang, len, full,
            ifl_tree_kept_count(ev));
    base_buf_deinit(&da);
    base_buf_deinit(&db);
done:
    ifl_tree_free(ev);
    ifl_tree_free(all);
    free(text);
}

/* keep 0: only the focus's segment and its neighbours keep their trees. */
static void keep_zero(void) {
    size_t len = 0, nc = 0;
    static size_t cursors[2 * FUNCS];
    char *text = gen("c", &len, cursors, &nc);
    ifl_tree *t = ifl_tree_new("c", NULL), *all = ifl_tree_new("c", NULL);
    CHECK(text && t && all);
    if (text && t && all) {
        ifl_tree_set_keep_bytes(t, 0);
        ifl_tree_set_keep_bytes(all, SIZE_MAX);
        CHECK_EQ_I(ifl_tree_update(t, text, len), BASE_OK);
        CHECK_EQ_U(ifl_tree_kept_count(t), 2); /* segments 0 and 1 */
        CHECK_EQ_U(ifl_tree_error_count(t, text, len), 0);
        ifl_span sa, sb;
        CHECK_EQ_I(ifl_tree_locate(t, text, len, cursors[nc - 1], 0, 0, &sa), BASE_OK);
        CHECK_EQ_I(ifl_tree_locate(all, text, len, cursors[nc - 1], 0, 0, &sb), BASE_OK);
        CHECK(same_span(&sa, &sb));
        /* The read parsed the last function's segment again: three trees
         * until the next update, which keeps only that one (its neighbour
         * has none to keep). */
        CHECK_EQ_U(ifl_tree_kept_count(t), 3);
        CHECK_EQ_I(ifl_tree_update(t, text, len), BASE_OK);
        CHECK_EQ_U(ifl_tree_kept_count(t), 1);
    }
    ifl_tree_free(t);
    ifl_tree_free(all);
    free(text);
}

int main(void) {
    lang_case("python");
    lang_case("c");
    keep_zero();
    return check_finish("test_syntax_evict");
}
