/* bench_syntax: span location + validation of one candidate, and incremental
 * reparse after a one-character edit, on generated 5,000-line files (Python
 * with and without comments, C). Prints p50/p90/max in milliseconds of thread
 * CPU time (the machine is shared; wall time is noisier), for the segmented
 * tree and for one tree per buffer; no assertions (see docs/perf/syntax.md).
 * `bench_syntax LANG FILE [LANG FILE ...]` measures reparses on real files
 * instead. */
#define _POSIX_C_SOURCE 200809L
#include "syntax.h"

#include <malloc.h>
#include <time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, size_t n) {
    qsort(v, n, sizeof(*v), cmp_double);
    printf("%-44s p50 %.3f ms  p90 %.3f ms  max %.3f ms  (n=%zu)\n", what, v[n / 2],
           v[(n * 9) / 10], v[n - 1], n);
}

/* 5,000 lines: functions of 10 lines each, with an empty line in each body
 * where the cursor goes. */
static char *gen_python(size_t *len, size_t *cursors, size_t *nc, bool comments) {
    base_buf b;
    base_buf_init(&b);
    *nc = 0;
    for (int f = 0; f < 500; f++) {
        base_buf_printf(&b, "def func_%d(xs, limit=%d):\n", f, f);
        base_buf_printf(&b, "    \"\"\"Sum the items of xs below limit.\"\"\"\n");
        base_buf_printf(&b, "    total = 0\n");
        base_buf_printf(&b, "    for x in xs:\n");
        base_buf_printf(&b, "        if x < limit:%s\n", comments ? "  # keep small ones" : "");
        base_buf_printf(&b, "            total += x * %d\n", f % 7);
        base_buf_printf(&b, "    ");
        cursors[(*nc)++] = b.len;
        base_buf_printf(&b, "\n");
        base_buf_printf(&b, "    return [total, len(xs), {'f': %d}]\n", f);
        base_buf_printf(&b, "\n\n");
    }
    return base_buf_steal(&b, len);
}

/* guarded: a header, the whole file inside an include guard and every 10th
 * function inside an #ifdef (the include guard's search runs after edits
 * there: fuzz finding 4's fix). */
static char *gen_c(size_t *len, size_t *cursors, size_t *nc, bool guarded) {
    base_buf b;
    base_buf_init(&b);
    *nc = 0;
    if (guarded)
        base_buf_printf(&b, "#ifndef BENCH_H\n#define BENCH_H\n\n#include <stddef.h>\n\n");
    for (int f = 0; f < 500; f++) {
        if (guarded && f % 10 == 0)
            base_buf_printf(&b, "#ifdef DEBUG_%d\n", f);
        base_buf_printf(&b, "static int func_%d(const int *xs, int n) {\n", f);
        base_buf_printf(&b, "    int total = 0; /* running sum */\n");
        base_buf_printf(&b, "    for (int i = 0; i < n; i++) {\n");
        base_buf_printf(&b, "        if (xs[i] < %d)\n", f);
        base_buf_printf(&b, "            total += xs[i] * %d;\n", f % 7);
        base_buf_printf(&b, "    }\n");
        base_buf_printf(&b, "    ");
        cursors[(*nc)++] = b.len;
        base_buf_printf(&b, "\n");
        base_buf_printf(&b, "    return total;\n");
        base_buf_printf(&b, "}\n\n");
        if (guarded && f % 10 == 0)
            base_buf_printf(&b, "#endif\n\n");
    }
    if (guarded)
        base_buf_printf(&b, "#endif /* BENCH_H */\n");
    return base_buf_steal(&b, len);
}

/* Whether the last time_edit left the tree with syntax errors (counted
 * after the timed reparse, untimed). */
static bool last_errorful;

/* Types 'x' at pos of text, reparses t (timed), then undoes it and
 * reparses again; returns the milliseconds of the first reparse, -1 on OOM. */
static double time_edit(ifl_tree *t, const char *text, size_t len, size_t pos) {
    lsp_point pt = {0, 0};
    for (size_t k = 0; k < pos; k++) {
        if (text[k] == '\n') {
            pt.row++;
            pt.column = 0;
        } else {
            pt.column++;
        }
    }
    char *nt = malloc(len + 2);
    if (!nt)
        return -1;
    memcpy(nt, text, pos);
    nt[pos] = 'x';
    memcpy(nt + pos + 1, text + pos, len - pos + 1);
    lsp_edit_event ev = {pos, pos, pos + 1, pt, pt, {pt.row, pt.column + 1}};
    uint64_t a = cpu_ns();
    ifl_tree_edit(t, &ev);
    ifl_tree_update(t, nt, len + 1);
    double ms = (double)(cpu_ns() - a) / 1e6;
    last_errorful = ifl_tree_error_count(t, nt, len + 1) > 0;
    lsp_edit_event undo = {pos, pos + 1, pos, pt, {pt.row, pt.column + 1}, pt};
    ifl_tree_edit(t, &undo);
    ifl_tree_update(t, text, len);
    free(nt);
    return ms;
}

/* n edits at random places of text; out[i] is the i-th reparse time; when
 * err is given, err[i] says whether that edit left syntax errors. */
static void reparse_edits(ifl_tree *t, const char *text, size_t len, double *out, bool *err,
                          size_t n) {
    base_rng rng;
    base_rng_seed(&rng, 7);
    for (size_t i = 0; i < n; i++) {
        out[i] = time_edit(t, text, len, (size_t)(base_rng_next(&rng) % len));
        if (err)
            err[i] = last_errorful;
    }
}

/* The reparse times of the edits that left errors (errorful) or not. */
static void report_split(const char *name, const double *rep, const bool *err, size_t n) {
    for (int e = 0; e < 2; e++) {
        double v[256];
        size_t k = 0;
        for (size_t i = 0; i < n && k < BASE_ARRAY_LEN(v); i++)
            if (err[i] == (e == 1))
                v[k++] = rep[i];
        char what[96];
        snprintf(what, sizeof(what), "%s:   edits leaving %s", name,
                 e ? "syntax errors" : "no errors");
        if (k)
            report(what, v, k);
    }
}

/* Reparse times on a real file: 200 one-character edits inside identifiers
 * (where typing happens), segmented and as one tree. */
static void bench_file(const char *lang, const char *path) {
    char *text = NULL;
    size_t len = 0;
    if (base_read_file(path, &text, &len) != BASE_OK || len < 2) {
        fprintf(stderr, "bench_syntax: cannot read %s\n", path);
        free(text);
        return;
    }
    enum { N = 200 };
    double seg[N], whole[N], typing[N];
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    for (int pass = 0; pass < 2; pass++) {
        ifl_tree *t = ifl_tree_new(lang, NULL);
        if (!t)
            break;
        if (pass == 1)
            ifl_tree_set_segment_bytes(t, 0);
        size_t heap0 = mallinfo2().uordblks;
        uint64_t t0 = cpu_ns();
        ifl_tree_update(t, text, len);
        double build = (double)(cpu_ns() - t0) / 1e6;
        double heap = (double)(mallinfo2().uordblks - heap0) / (1024.0 * 1024.0);
        /* Edits inside identifiers: type in the middle of a word. */
        base_rng rng;
        base_rng_seed(&rng, 11);
        double *out = pass ? whole : seg;
        size_t pos = 0;
        for (int i = 0; i < 2 * N; i++) {
            /* The first N at a new place each, then ten per place (typing). */
            if (i < N || i % 10 == 0) {
                do
                    pos = 1 + (size_t)(base_rng_next(&rng) % (len - 1));
                while (!(text[pos] >= 'a' && text[pos] <= 'z' && text[pos - 1] >= 'a' &&
                         text[pos - 1] <= 'z'));
            }
            double ms = time_edit(t, text, len, pos);
            if (i < N)
                out[i] = ms;
            else if (!pass)
                typing[i - N] = ms;
        }
        printf("%s (%s, %zu lines): %s: %zu segments, %zu syntax errors, first parse %.1f ms, "
               "trees %.1f MiB (%zu kept after the edits)\n",
               path, lang, lines, pass ? "one tree" : "segments", ifl_tree_segment_count(t),
               ifl_tree_error_count(t, text, len), build, heap, ifl_tree_kept_count(t));
        ifl_tree_free(t);
    }
    report("  reparse after 1-char edit, segments", seg, N);
    report("  reparse after 1-char edit, one tree", whole, N);
    report("  typing, 10 edits per place, segments", typing, N);
    free(text);
}

static void bench(const char *lang, const char *name, char *text, size_t len, const size_t *cursors,
                  size_t nc, const char *cand) {
    ifl_tree *t = ifl_tree_new(lang, NULL);
    if (!t)
        return;
    /* Heap in use before and after the first parse: what the kept trees
     * (segments, their tree-sitter trees) cost in memory. */
    size_t heap0 = mallinfo2().uordblks;
    uint64_t t0 = cpu_ns();
    ifl_tree_update(t, text, len);
    double build = (double)(cpu_ns() - t0) / 1e6;
    size_t heap = mallinfo2().uordblks - heap0;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    printf("%s: %zu bytes, %zu lines; initial parse %.2f ms, trees %.1f MiB\n", name, len, lines,
           build, (double)heap / (1024.0 * 1024.0));
    enum { N = 200 };
    double loc[N], post[N], both[N], rep[N];
    bool rep_err[N];
    size_t accepted = 0;
    for (int i = 0; i < N; i++) {
        size_t cur = cursors[(size_t)i * 7 % nc];
        ifl_span sp;
        uint64_t a = cpu_ns();
        ifl_tree_locate(t, text, len, cur, 0, 0, &sp);
        uint64_t b = cpu_ns();
        ifl_post_opts o = {.validate = true};
        char *out = NULL;
        size_t out_len = 0;
        if (ifl_tree_postprocess(t, text, len, &sp, cand, strlen(cand), &o, &out, &out_len) ==
            BASE_OK)
            accepted++;
        uint64_t c = cpu_ns();
        free(out);
        loc[i] = (double)(b - a) / 1e6;
        post[i] = (double)(c - b) / 1e6;
        both[i] = (double)(c - a) / 1e6;
    }
    /* A candidate the syntax check rejects, cut back one line at a time:
     * 16 lines whose first is broken, so every cut fails (the worst case:
     * 16 checks, then null). */
    double bad[N];
    base_buf bb;
    base_buf_init(&bb);
    base_buf_printf(&bb, "%s", strcmp(lang, "python") == 0 ? "total = (]" : "total = (];");
    for (int k = 1; k < 16; k++)
        base_buf_printf(&bb, "\n    total += %d%s", k, strcmp(lang, "python") == 0 ? "" : ";");
    for (int i = 0; i < N; i++) {
        size_t cur = cursors[(size_t)i * 7 % nc];
        ifl_span sp;
        ifl_tree_locate(t, text, len, cur, 0, 0, &sp);
        ifl_post_opts o = {.validate = true};
        char *out = NULL;
        size_t out_len = 0;
        uint64_t a = cpu_ns();
        ifl_tree_postprocess(t, text, len, &sp, bb.data, bb.len, &o, &out, &out_len);
        bad[i] = (double)(cpu_ns() - a) / 1e6;
        free(out);
    }
    base_buf_deinit(&bb);
    /* The same through the _text entry points (no kept tree; what the
     * one-shot CLI uses). */
    double txt[N];
    for (int i = 0; i < N; i++) {
        size_t cur = cursors[(size_t)i * 7 % nc];
        ifl_span sp;
        ifl_post_opts o = {.validate = true};
        char *out = NULL;
        size_t out_len = 0;
        uint64_t a = cpu_ns();
        ifl_syntax_locate_text(lang, text, len, cur, 0, 0, &sp);
        ifl_syntax_postprocess_text(lang, text, len, &sp, cand, strlen(cand), &o, &out, &out_len);
        txt[i] = (double)(cpu_ns() - a) / 1e6;
        free(out);
    }
    /* One-character edits: type 'x' at a random place, reparse, delete it,
     * reparse; on the segmented tree (the default) and on one tree for the
     * whole buffer, the same edits. */
    double rep_whole[N], rep_all[N], typing[N];
    reparse_edits(t, text, len, rep, rep_err, N);
    /* Typing: ten one-character edits at one cursor, then the next cursor
     * (the first edit at a place whose trees were dropped parses its
     * segment and the neighbours afresh). */
    for (int i = 0; i < N; i++)
        typing[i] = time_edit(t, text, len, cursors[(size_t)(i / 10) * 7 % nc]);
    /* The same random edits with every segment's tree kept (the memory
     * that costs: its heap). */
    size_t heap1 = mallinfo2().uordblks;
    ifl_tree *all = ifl_tree_new(lang, NULL);
    ifl_tree_set_keep_bytes(all, SIZE_MAX);
    ifl_tree_update(all, text, len);
    size_t heap_all = mallinfo2().uordblks - heap1;
    reparse_edits(all, text, len, rep_all, NULL, N);
    ifl_tree_free(all);
    ifl_tree *w = ifl_tree_new(lang, NULL);
    ifl_tree_set_segment_bytes(w, 0);
    ifl_tree_update(w, text, len);
    reparse_edits(w, text, len, rep_whole, NULL, N);
    ifl_tree_free(w);
    char what[96];
    snprintf(what, sizeof(what), "%s: span location", name);
    report(what, loc, N);
    snprintf(what, sizeof(what), "%s: post-process + validate", name);
    report(what, post, N);
    snprintf(what, sizeof(what), "%s: location + validation", name);
    report(what, both, N);
    snprintf(what, sizeof(what), "%s: location + validation, _text API", name);
    report(what, txt, N);
    /* (report sorts in place: split first.) */
    snprintf(what, sizeof(what), "%s: reparse after 1-char edit", name);
    double rep_sorted[N];
    memcpy(rep_sorted, rep, sizeof(rep));
    report(what, rep_sorted, N);
    report_split(name, rep, rep_err, N);
    snprintf(what, sizeof(what), "%s: same, every tree kept (%.1f MiB)", name,
             (double)heap_all / (1024.0 * 1024.0));
    report(what, rep_all, N);
    snprintf(what, sizeof(what), "%s: same, one tree (no segments)", name);
    report(what, rep_whole, N);
    snprintf(what, sizeof(what), "%s: typing, 10 edits per place", name);
    report(what, typing, N);
    printf("%s: %zu segments\n", name, ifl_tree_segment_count(t));
    printf("%s: candidate accepted %zu/%d\n", name, accepted, N);
    snprintf(what, sizeof(what), "%s: 16-line rejected candidate, cut back", name);
    report(what, bad, N);
    ifl_tree_free(t);
}

int main(int argc, char **argv) {
    base_log_set_level(BASE_LOG_WARN);
    /* bench_syntax LANG FILE [LANG FILE ...]: real files instead. */
    if (argc > 2) {
        for (int i = 1; i + 1 < argc; i += 2)
            bench_file(argv[i], argv[i + 1]);
        return 0;
    }
    size_t cursors[600], nc = 0, len = 0;
    const char *pyc = "total = total * 2\n    if total > limit:\n        total = limit";
    char *py = gen_python(&len, cursors, &nc, false);
    bench("python", "python", py, len, cursors, nc, pyc);
    free(py);
    py = gen_python(&len, cursors, &nc, true);
    bench("python", "python+comments", py, len, cursors, nc, pyc);
    free(py);
    const char *cc = "total *= 2;\n    if (total > n) {\n        total = n;\n    }";
    char *c = gen_c(&len, cursors, &nc, false);
    bench("c", "c", c, len, cursors, nc, cc);
    free(c);
    c = gen_c(&len, cursors, &nc, true);
    bench("c", "c-header", c, len, cursors, nc, cc);
    free(c);
    return 0;
}
