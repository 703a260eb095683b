/* Edit scripts for fuzz_syntax_edits (see syntax_script.h). */
#include "syntax_script.h"

#include "syntax.h"
#include "syntax_edits.h"

#include <stdlib.h>
#include <string.h>

/* Pending edits kept for an undo in reverse; beyond this, the undo is one
 * edit from the common prefix to the common suffix. */
#define LOG_MAX 16
/* Edits that grow the document stop here (each comparison parses it twice). */
#define DOC_MAX 8192

typedef struct {
    size_t start, ins_len, del_len;
    char *del; /* the deleted bytes */
} log_entry;

typedef struct {
    syntax_edits_doc d; /* the document, its edited tree and its reference */
    base_buf base;      /* the last text checked error-free */
    log_entry log[LOG_MAX];
    size_t nlog;
    bool overflow; /* pending edits not all in log */
    const uint8_t *p;
    size_t n, i;
} script;

static unsigned rd(script *s) { return s->i < s->n ? s->p[s->i++] : 0; }

static size_t rd_pos(script *s, size_t len) {
    unsigned v = rd(s);
    v |= rd(s) << 8;
    return (size_t)v % (len + 1);
}

static const char *const frags[] = {
    "(", ")",  "{",  "}",  "[",  "]",  "\n",  " ",    "\"",  "'", "`", ";", ",",
    "#", "/*", "*/", "//", "\\", "\r", "if ", "else", "end", "=", "<", ">", "x",
};

static const char *const wide[] = {"\xc3\xa9", "\xc3\xb1", "\xe5\x90\x8d", "\xcf\x80"};

static void log_clear(script *s) {
    for (size_t k = 0; k < s->nlog; k++)
        free(s->log[k].del);
    s->nlog = 0;
    s->overflow = false;
}

/* A pending edit: logged for the undo. */
static base_status edit(script *s, size_t start, size_t del, const char *ins, size_t ins_len) {
    if (start > s->d.doc.len)
        start = s->d.doc.len;
    if (del > s->d.doc.len - start)
        del = s->d.doc.len - start;
    if (s->nlog < LOG_MAX && !s->overflow) {
        log_entry *e = &s->log[s->nlog];
        e->del = malloc(del + 1);
        if (!e->del)
            return BASE_ERR_NOMEM;
        memcpy(e->del, s->d.doc.data + start, del);
        e->start = start;
        e->del_len = del;
        e->ins_len = ins_len;
        s->nlog++;
    } else {
        s->overflow = true;
    }
    return syntax_edits_apply(s->d.t, &s->d.doc, start, del, ins, ins_len);
}

static base_status check(script *s, const char *what, bool *clean) {
    return syntax_edits_doc_check(&s->d, what, clean);
}

/* Back to base: in reverse, one edit per pending one (a reparse between
 * them when `steps`), or as one edit over what differs. Then a comparison
 * (error-free text, unless base was not). */
static base_status undo(script *s, unsigned style) {
    base_status st = BASE_OK;
    bool clean;
    if (!s->overflow && style % 2 == 0) {
        while (s->nlog && st == BASE_OK) {
            log_entry *e = &s->log[--s->nlog];
            st = syntax_edits_apply(s->d.t, &s->d.doc, e->start, e->ins_len, e->del, e->del_len);
            free(e->del);
            if (st == BASE_OK && (style & 2) && s->nlog)
                st = check(s, "undo step", &clean);
        }
    } else {
        const char *a = s->d.doc.data, *b = s->base.data;
        size_t la = s->d.doc.len, lb = s->base.len, pre = 0, suf = 0;
        while (pre < la && pre < lb && a[pre] == b[pre])
            pre++;
        while (suf < la - pre && suf < lb - pre && a[la - 1 - suf] == b[lb - 1 - suf])
            suf++;
        if (la != lb || pre != la)
            st = syntax_edits_apply(s->d.t, &s->d.doc, pre, la - pre - suf, s->base.data + pre,
                                    lb - pre - suf);
    }
    log_clear(s);
    if (st == BASE_OK)
        st = check(s, "undo", &clean);
    return st;
}

/* After an edit meant to keep the text parseable: keep it if it does (the
 * new base), else undo it. */
static base_status settle(script *s, const char *what) {
    bool clean = false;
    base_status st = check(s, what, &clean);
    if (st != BASE_OK)
        return st;
    if (!clean)
        return undo(s, rd(s));
    log_clear(s);
    s->base.len = 0;
    return base_buf_append(&s->base, s->d.doc.data, s->d.doc.len);
}

static size_t line_start(const base_buf *d, size_t pos) {
    while (pos > 0 && d->data[pos - 1] != '\n')
        pos--;
    return pos;
}

static size_t line_end(const base_buf *d, size_t pos) { /* past its '\n' */
    while (pos < d->len && d->data[pos] != '\n')
        pos++;
    return pos < d->len ? pos + 1 : pos;
}

static bool ident_byte(char c) {
    unsigned char u = (unsigned char)c;
    return u == '_' || u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') ||
           (u >= 'A' && u <= 'Z');
}

/* The identifier-like run around pos: [*a, *b); false when there is none. */
static bool ident_at(const base_buf *d, size_t pos, size_t *a, size_t *b) {
    while (pos < d->len && !ident_byte(d->data[pos]))
        pos++;
    if (pos >= d->len)
        return false;
    size_t x = pos, y = pos;
    while (x > 0 && ident_byte(d->data[x - 1]))
        x--;
    while (y < d->len && ident_byte(d->data[y]))
        y++;
    *a = x;
    *b = y;
    return true;
}

/* The first bracket opening at or after pos and its match: [*a, *b). */
static bool brackets_at(const base_buf *d, size_t pos, size_t *a, size_t *b) {
    for (; pos < d->len; pos++) {
        char o = d->data[pos], c = o == '(' ? ')' : o == '[' ? ']' : o == '{' ? '}' : 0;
        if (!c)
            continue;
        size_t depth = 0;
        for (size_t k = pos; k < d->len; k++) {
            if (d->data[k] == o) {
                depth++;
            } else if (d->data[k] == c && --depth == 0) {
                *a = pos;
                *b = k + 1;
                return true;
            }
        }
        return false;
    }
    return false;
}

static base_status op_line(script *s, bool move) {
    size_t p = rd_pos(s, s->d.doc.len), q = rd_pos(s, s->d.doc.len);
    size_t a = line_start(&s->d.doc, p), b = line_end(&s->d.doc, p);
    if (b == a || (!move && s->d.doc.len + (b - a) > DOC_MAX))
        return BASE_OK;
    char *line = malloc(b - a + 1);
    if (!line)
        return BASE_ERR_NOMEM;
    memcpy(line, s->d.doc.data + a, b - a);
    base_status st = BASE_OK;
    size_t n = b - a;
    /* A line without its '\n' (the last one) gets one when pasted. */
    bool nl = line[n - 1] == '\n';
    if (move) {
        st = edit(s, a, n, "", 0);
        q = q > s->d.doc.len ? s->d.doc.len : q;
    }
    if (st == BASE_OK) {
        size_t at = line_start(&s->d.doc, q);
        st = edit(s, at, 0, line, n);
        if (st == BASE_OK && !nl)
            st = edit(s, at + n, 0, "\n", 1);
    }
    free(line);
    return st == BASE_OK ? settle(s, move ? "line moved" : "line duplicated") : st;
}

static base_status op_rename(script *s) {
    size_t a, b, c, d;
    if (!ident_at(&s->d.doc, rd_pos(s, s->d.doc.len), &a, &b) ||
        !ident_at(&s->d.doc, rd_pos(s, s->d.doc.len), &c, &d) || s->d.doc.len + (b - a) > DOC_MAX)
        return BASE_OK;
    char *id = malloc(b - a);
    if (!id)
        return BASE_ERR_NOMEM;
    memcpy(id, s->d.doc.data + a, b - a);
    base_status st = edit(s, c, d - c, id, b - a);
    free(id);
    return st == BASE_OK ? settle(s, "identifier renamed") : st;
}

static base_status op_brackets(script *s) {
    size_t a, b;
    unsigned how = rd(s) % 3;
    if (!brackets_at(&s->d.doc, rd_pos(s, s->d.doc.len), &a, &b))
        return BASE_OK;
    base_status st = BASE_OK;
    if (how == 0) { /* duplicated after itself */
        if (s->d.doc.len + (b - a) > DOC_MAX)
            return BASE_OK;
        char *r = malloc(b - a);
        if (!r)
            return BASE_ERR_NOMEM;
        memcpy(r, s->d.doc.data + a, b - a);
        st = edit(s, b, 0, r, b - a);
        free(r);
    } else if (how == 1) { /* emptied: "(...)" -> "()" */
        st = edit(s, a + 1, b - a - 2, "", 0);
    } else { /* deleted */
        st = edit(s, a, b - a, "", 0);
    }
    return st == BASE_OK ? settle(s, "bracket range") : st;
}

static base_status op_crlf(script *s) {
    bool all = rd(s) & 1;
    size_t p = rd_pos(s, s->d.doc.len);
    base_status st = BASE_OK;
    if (!all) {
        size_t e = line_end(&s->d.doc, p);
        if (e == 0 || s->d.doc.data[e - 1] != '\n')
            return BASE_OK;
        if (e >= 2 && s->d.doc.data[e - 2] == '\r')
            st = edit(s, e - 2, 1, "", 0);
        else
            st = edit(s, e - 1, 0, "\r", 1);
    } else {
        /* Every line end toggled, in one edit over the whole text. */
        bool crlf = memchr(s->d.doc.data, '\r', s->d.doc.len) != NULL;
        base_buf out;
        base_buf_init(&out);
        for (size_t k = 0; k < s->d.doc.len && st == BASE_OK; k++) {
            char c = s->d.doc.data[k];
            if (crlf && c == '\r' && k + 1 < s->d.doc.len && s->d.doc.data[k + 1] == '\n')
                continue;
            if (!crlf && c == '\n')
                st = base_buf_append(&out, "\r", 1);
            if (st == BASE_OK)
                st = base_buf_append(&out, &c, 1);
        }
        if (st == BASE_OK && out.len <= DOC_MAX)
            st = edit(s, 0, s->d.doc.len, out.data ? out.data : "", out.len);
        base_buf_deinit(&out);
    }
    return st == BASE_OK ? settle(s, "line ends") : st;
}

static base_status op_wide(script *s) {
    size_t a, b;
    const char *w = wide[rd(s) % BASE_ARRAY_LEN(wide)];
    if (!ident_at(&s->d.doc, rd_pos(s, s->d.doc.len), &a, &b))
        return BASE_OK;
    base_status st = edit(s, b, 0, w, strlen(w));
    return st == BASE_OK ? settle(s, "multi-byte identifier") : st;
}

/* Deletes a span and types it back one byte per edit, with one comparison
 * part-way (after the keystroke the input picks), or re-inserts it in one
 * edit: the text ends as it began, compared. Few comparisons in between:
 * they are on errorful text, where nothing can fail. */
static base_status op_retype(script *s, bool one) {
    size_t p = rd_pos(s, s->d.doc.len), n = 1 + rd(s) % 40;
    unsigned mid = rd(s);
    if (p + n > s->d.doc.len)
        n = s->d.doc.len - p;
    if (n == 0)
        return BASE_OK;
    char span[48];
    memcpy(span, s->d.doc.data + p, n);
    bool clean;
    base_status st = syntax_edits_apply(s->d.t, &s->d.doc, p, n, "", 0);
    if (st == BASE_OK && one && (mid & 1))
        st = check(s, "span deleted", &clean);
    if (one) {
        if (st == BASE_OK)
            st = syntax_edits_apply(s->d.t, &s->d.doc, p, 0, span, n);
        return st == BASE_OK ? check(s, "span re-inserted", &clean) : st;
    }
    for (size_t k = 0; k < n && st == BASE_OK; k++) {
        st = syntax_edits_apply(s->d.t, &s->d.doc, p + k, 0, span + k, 1);
        if (st == BASE_OK && (k + 1 == n || k == mid % n))
            st = check(s, "retyping", &clean);
    }
    return st;
}

static base_status op_bytes(script *s, bool raw) {
    size_t p = rd_pos(s, s->d.doc.len);
    unsigned k = rd(s);
    size_t del = k % 8;
    char ins[8];
    size_t n = 0;
    if (raw) {
        n = (k >> 3) % 8;
        for (size_t j = 0; j < n; j++) {
            /* NUL bytes end tree-sitter's input early (see the harness). */
            unsigned c = rd(s);
            ins[j] = c ? (char)c : ' ';
        }
    } else {
        const char *f = frags[(k >> 3) % BASE_ARRAY_LEN(frags)];
        n = strlen(f);
        memcpy(ins, f, n);
        del = k % 3;
    }
    if (s->d.doc.len + n > DOC_MAX)
        return BASE_OK;
    return edit(s, p, del, ins, n);
}

base_status syntax_script_run(const char *lang, const char *text, size_t len, const uint8_t *ops,
                              size_t n, size_t *mismatches) {
    script s;
    memset(&s, 0, sizeof s);
    s.p = ops;
    s.n = n;
    base_buf_init(&s.base);
    base_status st = syntax_edits_doc_open(&s.d, lang, text, len, syntax_edits_segment_bytes,
                                           syntax_edits_keep_bytes);
    if (st != BASE_OK || (st = base_buf_append(&s.base, text, len)) != BASE_OK)
        goto done;
    for (int k = 0; k < SYNTAX_SCRIPT_MAX_OPS && s.i < s.n && st == BASE_OK; k++) {
        bool clean;
        switch (rd(&s) % 12) {
        case 0:
            st = op_bytes(&s, true);
            break;
        case 1:
            st = op_bytes(&s, false);
            break;
        case 2:
            st = check(&s, "pending edits", &clean);
            break;
        case 3:
            st = undo(&s, rd(&s));
            break;
        case 4:
            st = op_line(&s, false);
            break;
        case 5:
            st = op_line(&s, true);
            break;
        case 6:
            st = op_rename(&s);
            break;
        case 7:
            st = op_brackets(&s);
            break;
        case 8:
            st = op_crlf(&s);
            break;
        case 9:
            st = op_wide(&s);
            break;
        case 10:
            st = op_retype(&s, false);
            break;
        default:
            st = op_retype(&s, true);
            break;
        }
    }
    /* Pending edits are undone at the end: the last comparison is on
     * error-free text. */
    if (st == BASE_OK && (s.nlog || s.overflow))
        st = undo(&s, 0);
done:
    *mismatches += s.d.mismatches;
    log_clear(&s);
    syntax_edits_doc_close(&s.d);
    base_buf_deinit(&s.base);
    return st;
}
