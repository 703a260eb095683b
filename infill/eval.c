/* infill eval: tasks, metrics and the copy baseline of the quality harness
 * (infill/eval.h). zlib reads the data files, gzip-compressed or plain. */
#define _POSIX_C_SOURCE 200809L
#include "eval.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- tasks ------------------------------------------------------------------ */

static char *ifl__dup_field(json_t *o, const char *key, size_t *len) {
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return NULL;
    size_t n = json_string_length(v);
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, json_string_value(v), n);
    s[n] = 0;
    if (len)
        *len = n;
    return s;
}

static void ifl__task_free(ifl_eval_task *t) {
    free(t->id);
    free(t->lang);
    free(t->prefix);
    free(t->middle);
    free(t->suffix);
    free(t->test);
    free(t->entry_point);
    free(t->cursor);
    memset(t, 0, sizeof *t);
}

void ifl_eval_set_free(ifl_eval_set *s) {
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        ifl__task_free(&s->tasks[i]);
    free(s->tasks);
    memset(s, 0, sizeof *s);
}

static void ifl__errf(char *err, size_t cap, const char *fmt, ...) BASE_PRINTF(3, 4);
static void ifl__errf(char *err, size_t cap, const char *fmt, ...) {
    if (!err || !cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* One JSON object → a task; false when a required field is missing. */
static bool ifl__task_from_json(json_t *o, ifl_eval_task *t) {
    memset(t, 0, sizeof *t);
    if (json_object_get(o, "canonical_solution")) {
        t->id = ifl__dup_field(o, "task_id", NULL);
        t->prefix = ifl__dup_field(o, "prompt", &t->prefix_len);
        t->middle = ifl__dup_field(o, "canonical_solution", &t->middle_len);
        t->suffix = ifl__dup_field(o, "suffix", &t->suffix_len);
        t->test = ifl__dup_field(o, "test", NULL);
        t->entry_point = ifl__dup_field(o, "entry_point", NULL);
        t->lang = strdup("python");
        t->multiline = t->middle && memchr(t->middle, '\n', t->middle_len) &&
                       memchr(t->middle, '\n', t->middle_len) != t->middle + t->middle_len - 1;
        return t->id && t->prefix && t->middle && t->suffix && t->test && t->entry_point && t->lang;
    }
    t->id = ifl__dup_field(o, "id", NULL);
    char *lang = ifl__dup_field(o, "lang", NULL);
    const char *canon = lang ? ifl_syntax_language(lang, NULL) : NULL;
    t->lang = canon ? strdup(canon) : lang ? strdup(lang) : NULL;
    free(lang);
    t->prefix = ifl__dup_field(o, "prefix", &t->prefix_len);
    t->middle = ifl__dup_field(o, "middle", &t->middle_len);
    t->suffix = ifl__dup_field(o, "suffix", &t->suffix_len);
    t->cursor = ifl__dup_field(o, "cursor", NULL);
    t->multiline = json_is_true(json_object_get(o, "multiline"));
    return t->id && t->lang && t->prefix && t->middle && t->suffix;
}

base_status ifl_eval_set_load(const char *path, size_t limit, ifl_eval_set *out, char *err,
                              size_t err_cap) {
    memset(out, 0, sizeof *out);
    gzFile f = gzopen(path, "rb");
    if (!f) {
        ifl__errf(err, err_cap, "%s: cannot open", path);
        return BASE_ERR_IO;
    }
    base_buf line;
    base_buf_init(&line);
    base_status st = BASE_OK;
    size_t cap = 0, lineno = 0;
    char chunk[65536];
    bool eof = false;
    while (!eof && (limit == 0 || out->n < limit)) {
        /* One line, however long: gzgets in chunks until the newline. */
        line.len = 0;
        for (;;) {
            if (!gzgets(f, chunk, sizeof chunk)) {
                eof = true;
                break;
            }
            size_t k = strlen(chunk);
            if (base_buf_append(&line, chunk, k) != BASE_OK) {
                st = BASE_ERR_NOMEM;
                goto done;
            }
            if (k > 0 && chunk[k - 1] == '\n')
                break;
        }
        lineno++;
        size_t a = 0;
        while (a < line.len && strchr(" \t\r\n", line.data[a]))
            a++;
        if (a == line.len)
            continue;
        json_error_t je;
        json_t *o = json_loadb(line.data, line.len, 0, &je);
        if (!json_is_object(o)) {
            ifl__errf(err, err_cap, "%s:%zu: not a JSON object (%s)", path, lineno, je.text);
            json_decref(o);
            st = BASE_ERR_PARSE;
            goto done;
        }
        if (out->n == cap) {
            cap = cap ? 2 * cap : 256;
            ifl_eval_task *g = realloc(out->tasks, cap * sizeof *g);
            if (!g) {
                json_decref(o);
                st = BASE_ERR_NOMEM;
                goto done;
            }
            out->tasks = g;
        }
        ifl_eval_task *t = &out->tasks[out->n];
        bool ok = ifl__task_from_json(o, t);
        json_decref(o);
        if (!ok) {
            ifl__task_free(t);
            ifl__errf(err, err_cap,
                      "%s:%zu: missing fields (HumanEval: task_id prompt suffix "
                      "canonical_solution test entry_point; held-out: id lang prefix middle "
                      "suffix)",
                      path, lineno);
            st = BASE_ERR_PARSE;
            goto done;
        }
        out->n++;
    }
    int zerr = 0;
    const char *zmsg = gzerror(f, &zerr);
    if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
        ifl__errf(err, err_cap, "%s: %s", path, zmsg);
        st = BASE_ERR_IO;
    }
done:
    gzclose(f);
    base_buf_deinit(&line);
    if (st != BASE_OK)
        ifl_eval_set_free(out);
    return st;
}

/* ---- metrics ------------------------------------------------------------------ */

char *ifl_eval_normalize(const char *s, size_t n, size_t *out_len) {
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t k = 0, i = 0;
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) : n;
        size_t t = e;
        while (t > i && (s[t - 1] == ' ' || s[t - 1] == '\t' || s[t - 1] == '\r'))
            t--;
        memcpy(o + k, s + i, t - i);
        k += t - i;
        if (nl)
            o[k++] = '\n';
        i = nl ? e + 1 : n;
    }
    while (k > 0 && o[k - 1] == '\n')
        k--;
    o[k] = 0;
    *out_len = k;
    return o;
}

bool ifl_eval_exact(const char *answer, size_t alen, const char *middle, size_t mlen) {
    size_t la, lm;
    char *a = ifl_eval_normalize(answer, alen, &la);
    char *m = ifl_eval_normalize(middle, mlen, &lm);
    bool eq = a && m && la == lm && memcmp(a, m, la) == 0;
    free(a);
    free(m);
    return eq;
}

double ifl_eval_edit_sim(const char *answer, size_t alen, const char *middle, size_t mlen) {
    size_t la, lm;
    char *a = ifl_eval_normalize(answer, alen, &la);
    char *m = ifl_eval_normalize(middle, mlen, &lm);
    double sim = 0;
    if (!a || !m)
        goto out;
    if (la == 0 && lm == 0) {
        sim = 1;
        goto out;
    }
    /* Two rows of the Levenshtein table over the shorter text. */
    if (la < lm) {
        char *t = a;
        a = m;
        m = t;
        size_t tl = la;
        la = lm;
        lm = tl;
    }
    size_t *prev = malloc((lm + 1) * sizeof *prev), *cur = malloc((lm + 1) * sizeof *cur);
    if (prev && cur) {
        for (size_t j = 0; j <= lm; j++)
            prev[j] = j;
        for (size_t i = 1; i <= la; i++) {
            cur[0] = i;
            for (size_t j = 1; j <= lm; j++) {
                size_t sub = prev[j - 1] + (a[i - 1] != m[j - 1]);
                size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
                cur[j] = BASE_MIN(sub, BASE_MIN(del, ins));
            }
            size_t *t = prev;
            prev = cur;
            cur = t;
        }
        sim = 1.0 - (double)prev[lm] / (double)la;
    }
    free(prev);
    free(cur);
out:
    free(a);
    free(m);
    return sim;
}

/* The first line of s holding anything but whitespace: [*b, *e). */
static bool ifl__first_code_line(const char *s, size_t n, size_t *b, size_t *e) {
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n;
        for (size_t k = i; k < end; k++)
            if (!strchr(" \t\r", s[k])) {
                *b = i;
                *e = end;
                return true;
            }
        i = end + 1;
    }
    return false;
}

bool ifl_eval_first_line(const char *answer, size_t alen, const char *middle, size_t mlen) {
    size_t la, lm;
    char *a = ifl_eval_normalize(answer, alen, &la);
    char *m = ifl_eval_normalize(middle, mlen, &lm);
    bool eq = false;
    if (a && m) {
        size_t ab, ae, mb, me;
        bool ha = ifl__first_code_line(a, la, &ab, &ae);
        bool hm = ifl__first_code_line(m, lm, &mb, &me);
        eq = ha == hm && (!ha || (ae - ab == me - mb && memcmp(a + ab, m + mb, ae - ab) == 0));
    }
    free(a);
    free(m);
    return eq;
}

/* ---- documents and the baseline ---------------------------------------------------- */

base_status ifl_eval_task_doc(const ifl_eval_task *t, ifl_doc_req *r, char **text) {
    ifl_doc_req_default(r);
    char *s = malloc(t->prefix_len + t->suffix_len + 1);
    if (!s)
        return BASE_ERR_NOMEM;
    memcpy(s, t->prefix, t->prefix_len);
    memcpy(s + t->prefix_len, t->suffix, t->suffix_len);
    s[t->prefix_len + t->suffix_len] = 0;
    *text = s;
    r->text = s;
    r->len = t->prefix_len + t->suffix_len;
    r->cursor = r->sel_start = r->sel_end = t->prefix_len;
    r->language = ifl_syntax_language(t->lang, NULL);
    return BASE_OK;
}

static base_status ifl__post_doc(void *ud, const ifl_span *span, const char *cand, size_t len,
                                 const ifl_post_opts *o, char **out, size_t *out_len) {
    const ifl_doc_req *r = ud;
    return ifl_syntax_postprocess_text(r->language, r->text, r->len, span, cand, len, o, out,
                                       out_len);
}

/* Indentation width of the first line holding code at or after off. */
static size_t ifl__next_indent(const char *text, size_t len, size_t off, const char **ind) {
    while (off < len) {
        size_t b = off, i = off;
        while (i < len && (text[i] == ' ' || text[i] == '\t'))
            i++;
        if (i < len && text[i] != '\n' && text[i] != '\r') {
            *ind = text + b;
            return i - b;
        }
        const char *nl = memchr(text + i, '\n', len - i);
        off = nl ? (size_t)(nl - text) + 1 : len;
    }
    *ind = "";
    return 0;
}

/* The copy rule on [line start, cursor): the continuation, or NULL. */
static const char *ifl__copy_line(const char *text, size_t len, size_t cursor, size_t *out_len,
                                  const char **lead, size_t *lead_len) {
    size_t ls = cursor;
    while (ls > 0 && text[ls - 1] != '\n')
        ls--;
    const char *typed = text + ls;
    size_t tl = cursor - ls, ind = 0;
    while (ind < tl && (typed[ind] == ' ' || typed[ind] == '\t'))
        ind++;
    bool blank = ind == tl;
    /* Nothing typed on the line: the editor would indent it like the code
     * that follows, so that indentation is what the copy must match. */
    const char *want = typed;
    size_t wl = tl;
    *lead = "";
    *lead_len = 0;
    if (tl == 0) {
        const char *nl = memchr(text + cursor, '\n', len - cursor);
        size_t after = nl ? (size_t)(nl - text) + 1 : len;
        /* The cursor's own line counts when it holds code after the cursor. */
        wl = ifl__next_indent(text, len, cursor < len && text[cursor] != '\n' ? cursor : after,
                              &want);
        *lead = want;
        *lead_len = wl;
    }
    const char *best = NULL;
    size_t best_len = 0;
    /* Earlier lines, nearest first, so that a tie keeps the nearest. */
    size_t e = ls;
    while (e > 0) {
        size_t end = e - 1; /* the '\n' ending this line */
        size_t b = end;
        while (b > 0 && text[b - 1] != '\n')
            b--;
        size_t n = end - b;
        const char *l = text + b;
        bool ok = n > wl && memcmp(l, want, wl) == 0;
        if (ok && blank) /* the same indentation, then code */
            ok = l[wl] != ' ' && l[wl] != '\t' && l[wl] != '\r';
        if (ok && n - wl > best_len) {
            best = l + wl;
            best_len = n - wl;
        }
        e = b;
    }
    while (best_len > 0 && best[best_len - 1] == '\r')
        best_len--;
    *out_len = best_len;
    return best_len ? best : NULL;
}

base_status ifl_eval_baseline_copy(const ifl_doc_req *r, ifl_doc_res *res) {
    memset(res, 0, sizeof *res);
    if (!r->text || r->cursor > r->len)
        return BASE_ERR_RANGE;
    uint64_t t0 = base_now_ns();
    base_status located = ifl_syntax_locate_text(r->language, r->text, r->len, r->cursor, r->cursor,
                                                 r->cursor, &res->span);
    res->syntax = ifl_doc_span(r, located, &res->span);
    res->raw.t.span_ms = base_ms_since(t0);
    size_t n = 0, ll = 0;
    const char *lead = NULL;
    const char *c = ifl__copy_line(r->text, r->len, res->span.hole_start, &n, &lead, &ll);
    res->runs = 1;
    if (c) {
        char *t = malloc(ll + n + 1);
        if (!t)
            return BASE_ERR_NOMEM;
        memcpy(t, lead, ll);
        memcpy(t + ll, c, n);
        t[ll + n] = 0;
        res->raw.cand[0].text = t;
        res->raw.cand[0].len = ll + n;
        res->raw.cand[0].mean_conf = 1;
        res->raw.n_cand = 1;
    }
    base_status st = ifl_doc_post(r, res, ifl__post_doc, (void *)r);
    res->raw.t.total_ms = base_ms_since(t0);
    return st;
}

/* ---- HumanEval programs -------------------------------------------------------------- */

char *ifl_eval_humaneval_program(const ifl_eval_task *t, const char *completion, size_t len,
                                 size_t *out_len) {
    base_buf b;
    base_buf_init(&b);
    base_status st = base_buf_append(&b, t->prefix, t->prefix_len);
    if (st == BASE_OK)
        st = base_buf_append(&b, completion, len);
    /* As the editor leaves the buffer: no line break added (post-processing
     * ends a line inserted at column 0 before code with one). */
    if (st == BASE_OK)
        st = base_buf_append(&b, t->suffix, t->suffix_len);
    if (st == BASE_OK)
        st = base_buf_printf(&b, "\n%s\n\ncheck(%s)\n", t->test, t->entry_point);
    if (st != BASE_OK) {
        base_buf_deinit(&b);
        return NULL;
    }
    *out_len = b.len;
    return b.data;
}
