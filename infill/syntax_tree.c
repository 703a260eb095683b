/* infill syntax: ifl_tree, one incrementally parsed buffer, kept as a row of
 * segment trees.
 *
 * Why segments: tree-sitter reuses little of an edited tree when a grammar
 * marks its subtrees fragile (Python's statement lists come from conflicted
 * parse states, so a one-character edit revisits every statement of the
 * file) or when an error elsewhere in the file makes the parser redo its
 * error recovery there (C headers full of macros, files being typed). The
 * cost of a reparse then grows with the file, not with the edit. Top-level
 * constructs do not depend on each other, so the buffer is cut at lines that
 * start one (column 0, outside comments and strings, not a continuation) into
 * segments of about `seg_bytes`, each parsed on its own. An edit reparses its
 * segment only; later segments just move.
 *
 * The row of segments equals a parse of the whole buffer when every cut is
 * sound. A cut is kept only while the line after it starts a construct on
 * its own (not an operator, a bracket or a continuation word such as
 * `else`) and nothing runs on across it (a comment, string, bracket or
 * preprocessor conditional left open, a backslash, a decorator); an error
 * that reaches the end of the code before it merges the two segments when
 * parsing them as one has fewer errors (one construct cut in two). C/C++
 * include guards are parsed as blanks so headers can be cut; JSON and shell
 * scripts stay one tree. With syntax errors at a cut the trees may differ
 * from the whole-buffer parse, as tree-sitter's own error recovery does
 * after an incremental edit; error-free text gives the same S-expression
 * (tests/syntax: test_syntax_edits, test_syntax_segments). */
#include "syntax.h"

#include "syntax_impl.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IFL__MOD "syntax"

enum {
    /* Default segment size (docs/perf/syntax.md): about one top-level
     * construct, since cuts fall only between them. A fresh parse of a
     * segment, which an edit that leaves an error costs, then takes about
     * 0.1 ms; at 4 KiB a one-character edit of C took 0.82 ms at p50 (four
     * times one tree's 0.23 ms), at 512 bytes 0.18 ms, with the same heap
     * for the trees and the same first parse. */
    IFL__SEG_BYTES = IFL_TREE_SEGMENT_BYTES,
    /* A segment merged or typed past this many times seg_bytes is cut again
     * (when error-free). */
    IFL__SEG_SPLIT_FACTOR = 4,
    /* Merging across unsound cuts stops at this many bytes: past it the
     * text has an unclosed construct that a whole-file parse would recover
     * from no better. */
    IFL__SEG_MERGE_MAX = 64 * 1024,
    /* An incremental reparse that leaves a MISSING node is checked with a
     * fresh parse of its segment up to this size (ifl__seg_parse). */
    IFL__FRESH_MAX = 16 * 1024,
    /* Only segments up to this size drop their trees away from the focus:
     * parsing one again costs at most about a millisecond (0.1-0.25 ms per
     * KiB on error-free text), where a large class or a file-wide construct
     * would cost a whole-file parse at every jump. */
    IFL__EVICT_MAX = 16 * 1024,
    /* ifl__settle parses a range of more segments than this as it goes. */
    IFL__SETTLE_STREAM = 8,
};

/* ---- compiled spans.scm per language --------------------------------------
 * Shared by every tree: compiling takes milliseconds, and a compiled query is
 * immutable (cursors hold the state). Built on first use, kept for the life
 * of the process. */
static pthread_mutex_t ifl__query_lock = PTHREAD_MUTEX_INITIALIZER;
static TSQuery *ifl__query_cache[32];
static bool ifl__query_tried[32];

static TSQuery *ifl__spans_query(const char *lang, const TSLanguage *ts) {
    size_t idx = SIZE_MAX;
    for (size_t i = 0; i < gr_language_count() && i < BASE_ARRAY_LEN(ifl__query_cache); i++)
        if (strcmp(gr_language_name(i), lang) == 0)
            idx = i;
    if (idx == SIZE_MAX)
        return NULL;
    pthread_mutex_lock(&ifl__query_lock);
    if (!ifl__query_tried[idx]) {
        ifl__query_tried[idx] = true;
        size_t qlen = 0;
        const char *q = gr_query_source(lang, "spans", &qlen);
        if (q) {
            uint32_t eoff = 0;
            TSQueryError qerr = TSQueryErrorNone;
            ifl__query_cache[idx] = ts_query_new(ts, q, (uint32_t)qlen, &eoff, &qerr);
            /* A broken query file is a build defect; spans then fall back to
             * the line rules, which is still usable. */
            if (!ifl__query_cache[idx])
                BASE_LOGE(IFL__MOD, "%s/spans.scm: query error %d at offset %u", lang, (int)qerr,
                          eoff);
        }
    }
    TSQuery *q = ifl__query_cache[idx];
    pthread_mutex_unlock(&ifl__query_lock);
    return q;
}

/* Languages kept as one tree: JSON is one value; tree-sitter-bash parses
 * some lines differently depending on the code before them (a line after
 * assignments), so a shell script cut in two may not read as a whole one
 * does, and shell scripts are small enough to reparse whole. */
static bool ifl__segmented(const char *lang) {
    return strcmp(lang, "json") != 0 && strcmp(lang, "bash") != 0;
}

/* ---- parsing with a time budget ----------------------------------------------------
 * The daemon parses on its event loop, so no parse may take unbounded time.
 * Every parse gets a budget of 100 ms plus 10 ms per KiB of the parsing
 * thread's CPU time, several times the slowest honest parse seen; CPU time,
 * not wall time, so that a busy machine does not make honest parses give up
 * (a runaway parse burns CPU all the same). tree-sitter's progress callback
 * stops a slow parse cleanly. Some
 * grammars also loop forever on some broken text where no progress callback
 * runs (tree-sitter-typescript on a 124-byte fragment the edit fuzzer found,
 * inside ts_parser__do_all_potential_reductions, growing memory; the same
 * class of hang is reported upstream for JavaScript and TypeScript). Such a
 * loop keeps allocating, so tree-sitter's allocator is ours: past twice the
 * budget, the next allocation of a parse on this thread jumps back out of
 * it. The parser is then in an unknown state and is leaked with what it
 * allocated (the old tree's nodes it retained are leaked, never freed early),
 * and the tree gets a fresh one. */

typedef struct ifl__parse_guard {
    jmp_buf jb;
    uint64_t hard_deadline_ns;
    unsigned count;
} ifl__parse_guard;

static _Thread_local ifl__parse_guard *ifl__guard;

static void ifl__guard_check(void) {
    ifl__parse_guard *g = ifl__guard;
    if (g && (++g->count & 63) == 0 && base_thread_cpu_ns() > g->hard_deadline_ns) {
        ifl__guard = NULL;
        longjmp(g->jb, 1);
    }
}

/* As tree-sitter's default allocator: out of memory ends the process. */
static void *ifl__ts_oom(void *p, size_t n) {
    if (!p && n) {
        fprintf(stderr, "tree-sitter failed to allocate %zu bytes\n", n);
        abort();
    }
    return p;
}

static void *ifl__ts_malloc(size_t n) {
    ifl__guard_check();
    return ifl__ts_oom(malloc(n), n);
}

static void *ifl__ts_calloc(size_t k, size_t n) {
    ifl__guard_check();
    return ifl__ts_oom(calloc(k, n), k * n);
}

static void *ifl__ts_realloc(void *p, size_t n) {
    ifl__guard_check();
    return ifl__ts_oom(realloc(p, n), n);
}

static void ifl__ts_free(void *p) { free(p); }

static pthread_once_t ifl__alloc_once = PTHREAD_ONCE_INIT;

/* Installed on first use: the functions wrap malloc, so memory tree-sitter
 * allocated before stays freeable. */
static void ifl__alloc_install(void) {
    ts_set_allocator(ifl__ts_malloc, ifl__ts_calloc, ifl__ts_realloc, ifl__ts_free);
}

typedef struct ifl__budget {
    uint64_t deadline_ns;
    bool expired;
} ifl__budget;

static bool ifl__over_budget(TSParseState *state) {
    ifl__budget *b = state->payload;
    if (!b->expired && base_thread_cpu_ns() > b->deadline_ns)
        b->expired = true;
    return b->expired;
}

typedef struct ifl__strin {
    const char *s;
    uint32_t n;
} ifl__strin;

static const char *ifl__read(void *payload, uint32_t byte, TSPoint pt, uint32_t *bytes_read) {
    (void)pt;
    const ifl__strin *in = payload;
    if (byte >= in->n) {
        *bytes_read = 0;
        return "";
    }
    *bytes_read = in->n - byte;
    return in->s + byte;
}

/* Parsers stopped inside the grammar, kept reachable: what they hold is
 * abandoned, not lost (leak checkers stay quiet, and nothing is freed that
 * the parser might still point into). */
static pthread_mutex_t ifl__lost_lock = PTHREAD_MUTEX_INITIALIZER;
static TSParser *ifl__lost[64];
static size_t ifl__nlost;

static void ifl__bury(TSParser *p) {
    pthread_mutex_lock(&ifl__lost_lock);
    if (ifl__nlost < BASE_ARRAY_LEN(ifl__lost))
        ifl__lost[ifl__nlost++] = p;
    pthread_mutex_unlock(&ifl__lost_lock);
}

/* "parseBudgetMs": set by the daemon's loop thread, read by any parse. */
static _Atomic unsigned ifl__parse_cap_ms;

void ifl_syntax_set_parse_budget(unsigned ms) {
    atomic_store_explicit(&ifl__parse_cap_ms, ms, memory_order_relaxed);
}

/* ifl__parse, from old exactly as given. */
static TSTree *ifl__parse_from(ifl_tree *t, const TSTree *old, const char *text, uint32_t len,
                               base_status *st) {
    pthread_once(&ifl__alloc_once, ifl__alloc_install);
    if (!t->parser) {
        *st = BASE_ERR_NOMEM;
        return NULL;
    }
    /* 100 ms, plus 10 ms per KiB: parses run at 0.1-0.4 ms per KiB, error
     * recovery over a whole file (a string opened at its top) at up to 3. */
    uint64_t budget = (100 + 10 * (uint64_t)(len / 1024)) * 1000000u;
    uint64_t cap = (uint64_t)atomic_load_explicit(&ifl__parse_cap_ms, memory_order_relaxed);
    if (cap && budget > cap * 1000000u)
        budget = cap * 1000000u;
    uint64_t now = base_thread_cpu_ns();
    ifl__budget b = {now + budget, false};
    TSParseOptions o = {.payload = &b, .progress_callback = ifl__over_budget};
    ifl__strin si = {text, len};
    TSInput input = {&si, ifl__read, TSInputEncodingUTF8, NULL};
    ifl__parse_guard g;
    memset(&g, 0, sizeof(g));
    g.hard_deadline_ns = now + 2 * budget;
    TSTree *volatile tree = NULL;
    if (setjmp(g.jb) == 0) {
        ifl__guard = &g;
        tree = ts_parser_parse_with_options(t->parser, old, input, o);
        ifl__guard = NULL;
    } else {
        BASE_LOGW(IFL__MOD, "%s: parse of %u bytes stopped inside the grammar after %.0f ms of CPU",
                  t->lang, len, (double)(2 * budget) / 1e6);
        ifl__bury(t->parser);
        t->parser = ts_parser_new();
        if (t->parser && !ts_parser_set_language(t->parser, t->ts)) {
            ts_parser_delete(t->parser);
            t->parser = NULL;
        }
        *st = BASE_ERR_TIMEOUT;
        return NULL;
    }
    if (!tree) {
        /* Start the next parse afresh, not from where this one stopped. */
        ts_parser_reset(t->parser);
        *st = b.expired ? BASE_ERR_TIMEOUT : BASE_ERR_NOMEM;
        if (b.expired)
            BASE_LOGW(IFL__MOD, "%s: parse of %u bytes gave up after its time budget", t->lang,
                      len);
        return NULL;
    }
    *st = BASE_OK;
    return tree;
}

TSTree *ifl__parse(ifl_tree *t, const TSTree *old, const char *text, uint32_t len,
                   base_status *st) {
    /* From scratch where the reuse may go wrong (fuzz findings 25, 27). */
    return ifl__parse_from(t, old && ifl__fresh_only(t, len) ? NULL : old, text, len, st);
}

/* ---- life cycle ----------------------------------------------------------------- */

/* No include guard. */
static void ifl__guard_none(ifl_tree *t) {
    t->guard = (ifl__include_guard){SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX};
}

/* INFILLD_TREE_KEEP_BYTES overrides IFL_TREE_KEEP_BYTES ("all": keep every
 * tree), for A/B runs of the daemon's memory (docs/perf/syntax.md). */
static size_t ifl__keep_bytes = IFL_TREE_KEEP_BYTES;
static pthread_once_t ifl__keep_once = PTHREAD_ONCE_INIT;

static void ifl__keep_read(void) {
    const char *e = getenv("INFILLD_TREE_KEEP_BYTES");
    if (!e || !*e)
        return;
    if (strcmp(e, "all") == 0) {
        ifl__keep_bytes = SIZE_MAX;
        return;
    }
    char *end = NULL;
    unsigned long long v = strtoull(e, &end, 10);
    if (end && *end == 0)
        ifl__keep_bytes = (size_t)v;
}

static size_t ifl__keep_default(void) {
    pthread_once(&ifl__keep_once, ifl__keep_read);
    return ifl__keep_bytes;
}

ifl_tree *ifl_tree_new(const char *language, base_status *err) {
    base_status st = BASE_OK;
    const TSLanguage *ts = gr_language(language);
    ifl_tree *t = NULL;
    if (!ts) {
        st = BASE_ERR_UNSUPPORTED;
        goto fail;
    }
    t = calloc(1, sizeof(*t));
    if (!t) {
        st = BASE_ERR_NOMEM;
        goto fail;
    }
    t->ts = ts;
    t->rebuild = true;
    ifl__guard_none(t);
    t->cap_comment = t->cap_string = t->cap_body = UINT32_MAX;
    for (size_t i = 0; i < gr_language_count(); i++)
        if (strcmp(gr_language_name(i), language) == 0)
            t->lang = gr_language_name(i);
    t->seg_bytes = ifl__segmented(t->lang) ? IFL__SEG_BYTES : 0;
    t->mend_bytes = IFL_TREE_MEND_BYTES;
    t->keep_bytes = ifl__keep_default();
    t->parser = ts_parser_new();
    t->qc = ts_query_cursor_new();
    if (!t->parser || !t->qc || !ts_parser_set_language(t->parser, ts)) {
        st = BASE_ERR_NOMEM;
        goto fail;
    }
    t->spans = ifl__spans_query(t->lang, ts);
    if (t->spans) {
        for (uint32_t i = 0; i < ts_query_capture_count(t->spans); i++) {
            uint32_t n = 0;
            const char *name = ts_query_capture_name_for_id(t->spans, i, &n);
            if (n == 7 && memcmp(name, "comment", 7) == 0)
                t->cap_comment = i;
            else if (n == 6 && memcmp(name, "string", 6) == 0)
                t->cap_string = i;
            else if (n == 4 && memcmp(name, "body", 4) == 0)
                t->cap_body = i;
        }
    }
    if (err)
        *err = BASE_OK;
    return t;
fail:
    ifl_tree_free(t);
    if (err)
        *err = st;
    return NULL;
}

static void ifl__segs_clear(ifl_tree *t) {
    for (size_t i = 0; i < t->nseg; i++)
        if (t->segs[i].tree)
            ts_tree_delete(t->segs[i].tree);
    t->nseg = 0;
}

void ifl_tree_free(ifl_tree *t) {
    if (!t)
        return;
    ifl__segs_clear(t);
    free(t->segs);
    if (t->qc)
        ts_query_cursor_delete(t->qc);
    if (t->parser)
        ts_parser_delete(t->parser);
    free(t);
}

void ifl_tree_reset(ifl_tree *t) {
    if (!t)
        return;
    ifl__segs_clear(t);
    t->len = 0;
    t->rebuild = true;
    t->dirty = t->timed_out = t->edited = t->edit_deleted = false;
    t->errors = -1;
    t->focus = 0;
    ifl__guard_none(t);
    /* ifl__parse leaves the parser reset after every parse, stopped or not;
     * once more costs nothing. */
    if (t->parser)
        ts_parser_reset(t->parser);
}

const char *ifl_tree_language(const ifl_tree *t) { return t ? t->lang : NULL; }

void ifl_tree_set_segment_bytes(ifl_tree *t, size_t bytes) {
    if (!t || !ifl__segmented(t->lang))
        return;
    t->seg_bytes = bytes;
    t->rebuild = true;
}

size_t ifl_tree_segment_count(const ifl_tree *t) { return t ? t->nseg : 0; }

void ifl_tree_set_mend_bytes(ifl_tree *t, size_t bytes) {
    if (t)
        t->mend_bytes = bytes;
}

void ifl_tree_set_keep_bytes(ifl_tree *t, size_t bytes) {
    if (t)
        t->keep_bytes = bytes;
}

size_t ifl_tree_kept_count(const ifl_tree *t) {
    size_t n = 0;
    for (size_t i = 0; t && i < t->nseg; i++)
        n += t->segs[i].tree != NULL;
    return n;
}

/* ---- errors ------------------------------------------------------------------------ */

size_t ifl__count_errors_in(TSNode n, size_t a, size_t b, size_t *inside) {
    if (inside)
        *inside = 0;
    size_t count = 0;
    if (!ts_node_has_error(n))
        return count;
    TSTreeCursor c = ts_tree_cursor_new(n);
    for (;;) {
        TSNode cur = ts_tree_cursor_current_node(&c);
        bool has = ts_node_has_error(cur);
        bool self = ts_node_is_error(cur) || ts_node_is_missing(cur);
        if (!self && has) {
            /* An error below cur that no visible child carries: a MISSING
             * hidden token (Go's statement terminator at the end of the
             * input), which the node API does not show. */
            self = true;
            for (uint32_t i = 0, k = ts_node_child_count(cur); i < k && self; i++) {
                TSNode ch = ts_node_child(cur, i);
                self = !ts_node_has_error(ch) && !ts_node_is_error(ch) && !ts_node_is_missing(ch);
            }
        }
        if (self) {
            count++;
            if (inside && ts_node_start_byte(cur) >= a && ts_node_end_byte(cur) <= b)
                (*inside)++;
        }
        if (has && ts_tree_cursor_goto_first_child(&c))
            continue;
        while (!ts_tree_cursor_goto_next_sibling(&c))
            if (!ts_tree_cursor_goto_parent(&c))
                goto done;
    }
done:
    ts_tree_cursor_delete(&c);
    return count;
}

/* ---- segments ------------------------------------------------------------------------ */

/* Does the line at ls (column 0) start a construct that cannot continue the
 * code before it? Code in column 0 that starts with a word, a quote, '#',
 * '@' or '$'; not an operator, a bracket or a word that only continues a
 * statement. Blank and comment-only lines never start one. */
static bool ifl__starts_construct(const char *lang, const char *s, size_t len, size_t ls) {
    if (ls >= len)
        return false;
    char c = s[ls];
    if (c == '#') {
        /* C-family preprocessor lines and Rust attributes; a comment in
         * Python. Not `#!`: a segment parsed alone would read it as a
         * shebang, which grammars take at the file's start only (Rust's
         * `#![attr]` is an inner attribute anywhere else); tree-sitter-lua
         * takes any `#` line there (elsewhere `#` is the length operator,
         * `return` then `# t` on the next line). */
        if (ls + 1 < len && s[ls + 1] == '!')
            return false;
        return strcmp(lang, "python") != 0 && strcmp(lang, "lua") != 0;
    }
    if (c == '/' || c == '-') /* comments (and operators) */
        return false;
    /* In Lua a string on a line of its own is the argument of a call on the
     * line before (`f\n"x"` is f("x")). */
    if ((c == '"' || c == '\'') && strcmp(lang, "lua") == 0)
        return false;
    if (!(ifl__word_char(c) || c == '"' || c == '\'' || c == '@' || c == '$'))
        return false;
    size_t e = ls;
    while (e < len && ifl__word_char(s[e]))
        e++;
    static const char *const cont[] = {
        "else", "elif",    "except", "finally", "catch",     "end",   "fi",      "done",
        "esac", "until",   "then",   "do",      "in",        "of",    "as",      "instanceof",
        "and",  "or",      "not",    "is",      "satisfies", "where", "extends", "implements",
        "case", "default", "when",   "elseif",  "throws",    "with",
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(cont); i++) {
        size_t k = strlen(cont[i]);
        if (e - ls == k && memcmp(s + ls, cont[i], k) == 0)
            return false;
    }
    return true;
}

/* The bracket lexer run line by line: where comments and strings are, and
 * for C and C++ preprocessor conditionals. */
typedef struct ifl__lexpos {
    const ifl__lexdef *d; /* NULL: no lexer rules, always code */
    ifl__lex lx;
    bool cpp;            /* C and C++: preprocessor conditionals nest */
    int depth;           /* #if / #ifdef / #ifndef open */
    long open_bal[16];   /* brackets open at each of the first conditionals */
    bool flat;           /* every #endif closes (the include guard's search) */
    bool dcont;          /* the last line was a directive continued on the next */
    int dr;              /* ... in text tree-sitter reads raw (ifl__raw_scan's state), else
                          * IFL__DR_END */
    bool dcom;           /* in a block comment opened in a directive's raw text */
    const char *doc;     /* the buffer, to place lines */
    size_t skip1, skip2; /* the include guard's lines: not counted */
} ifl__lexpos;

static void ifl__lexpos_init(ifl__lexpos *p, const char *lang) {
    memset(p, 0, sizeof(*p));
    p->skip1 = p->skip2 = SIZE_MAX;
    p->d = ifl__lexdef_for(lang);
    p->cpp = strcmp(lang, "c") == 0 || strcmp(lang, "cpp") == 0;
}

/* Blanks before a directive's '#': tree-sitter-c skips every whitespace
 * character there, '\r' too (fuzz finding 20: `/\* count.h *\/` then a
 * lone CR, then `#ifndef COUNT_H`, is a conditional). */
static bool ifl__blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* The directive on the line [s, s + n): false when the line is none, else
 * its name at [*w, *e) (empty for a lone '#'). */
static bool ifl__directive_word(const char *s, size_t n, size_t *w, size_t *e) {
    size_t i = 0;
    while (i < n && ifl__blank(s[i]))
        i++;
    if (i >= n || s[i] != '#')
        return false;
    i++;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    *w = i;
    while (i < n && ifl__word_char(s[i]))
        i++;
    *e = i;
    return true;
}

/* A preprocessor conditional opened or closed on the line [s, s + n). */
static void ifl__cond_line(ifl__lexpos *p, const char *s, size_t n) {
    if (p->doc && ((size_t)(s - p->doc) == p->skip1 || (size_t)(s - p->doc) == p->skip2))
        return;
    size_t w = 0, i = 0;
    if (!ifl__directive_word(s, n, &w, &i))
        return;
    /* An #endif inside brackets opened after its #if does not close it:
     * tree-sitter's conditionals nest with the code, and it reads such an
     * #endif as a directive of its own (fuzz finding 12: an #endif line
     * duplicated into a function body inside the include guard). */
    long bal = p->lx.bal[0] + p->lx.bal[1] + p->lx.bal[2];
    if ((i - w == 2 && memcmp(s + w, "if", 2) == 0) ||
        (i - w == 5 && memcmp(s + w, "ifdef", 5) == 0) ||
        (i - w == 6 && memcmp(s + w, "ifndef", 6) == 0)) {
        if (p->depth >= 0 && p->depth < (int)BASE_ARRAY_LEN(p->open_bal))
            p->open_bal[p->depth] = bal;
        p->depth++;
    } else if (i - w == 5 && memcmp(s + w, "endif", 5) == 0) {
        if (!p->flat && p->depth > 0 && p->depth <= (int)BASE_ARRAY_LEN(p->open_bal) &&
            bal > p->open_bal[p->depth - 1])
            return;
        /* An #endif with no #if open closes nothing: tree-sitter reads it
         * as a directive of its own, and a depth below zero would let the
         * next #if count as closed (fuzz finding 15: an #endif line moved
         * above a header's #ifndef, which then was cut inside). */
        if (p->depth > 0)
            p->depth--;
    }
}

/* Where tree-sitter-c reads a directive's text raw: a macro's value and the
 * argument of `#error`, `#pragma` or an unknown directive are one
 * preproc_arg token (the regex `\S([^/\n]|\/[^*]|\\\r?\n)*`), in which
 * quotes are nothing (fuzz finding 23: `#iot X'/\* a comment` ran on as a comment to a
 * later `*\/` where the line lexer had read a character literal).
 * Conditions and `#include` paths hold real literals; `#include_next` and
 * `#import` are unknown directives to tree-sitter-c and -cpp, read raw.
 * Returns where the raw text of the directive line [s, s + n) starts (after
 * the directive's word; for `#define`, after the macro's name and
 * parameters), SIZE_MAX when the line is read as tokens. */
static size_t ifl__raw_directive(const char *s, size_t n) {
    size_t w = 0, i = 0;
    if (!ifl__directive_word(s, n, &w, &i))
        return SIZE_MAX;
    static const char *const lit[] = {"if",       "ifdef",   "ifndef", "elif", "elifdef",
                                      "elifndef", "include", "else",   "endif"};
    for (size_t k = 0; k < BASE_ARRAY_LEN(lit); k++)
        if (i - w == strlen(lit[k]) && memcmp(s + w, lit[k], i - w) == 0)
            return SIZE_MAX;
    if (i - w == 6 && memcmp(s + w, "define", 6) == 0) {
        while (i < n && ifl__blank(s[i]))
            i++;
        while (i < n && ifl__word_char(s[i]))
            i++;
        /* A function-like macro's '(' follows its name immediately. */
        if (i < n && s[i] == '(') {
            while (i < n && s[i] != ')' && s[i] != '\n')
                i++;
            if (i < n && s[i] == ')')
                i++;
        }
    }
    return i;
}

/* How a raw directive's text runs on into the next line (ifl__raw_scan). */
enum {
    IFL__DR_END = 0, /* it ends on this line */
    IFL__DR_VAL,     /* where the value may start, a line break next ends it */
    IFL__DR_SKIP,    /* blanks skipped there: line breaks are blanks too */
    IFL__DR_TOK,     /* inside the preproc_arg token */
    IFL__DR_LCOM,    /* inside a line comment */
};

/* Where the block comment whose text starts at s[k] closes on its line:
 * just past its "*" "/", or SIZE_MAX when it runs on past the line. */
static size_t ifl__comment_end(const char *s, size_t n, size_t k) {
    for (; k + 1 < n && s[k] != '\n'; k++)
        if (s[k] == '*' && s[k + 1] == '/')
            return k + 2;
    return SIZE_MAX;
}

/* Is there a line break (LF or CR LF) at s[i]? */
static bool ifl__line_break_at(const char *s, size_t n, size_t i) {
    return (i < n && s[i] == '\n') || (i + 1 < n && s[i] == '\r' && s[i + 1] == '\n');
}

/* Scans a raw directive's text [s + i, s + n), one line with its '\n' if it
 * has one, from the state *dr (IFL__DR_VAL where the raw text starts) as
 * tree-sitter-c's lexer reads it:
 *  - Where the value may start, a line break ends the directive; a comment
 *    (which outranks preproc_arg, prec -1) leaves it there. Any blank, or a
 *    backslash before the line break, is skipped as an extra, and after
 *    that the line break must follow at once no more: line breaks are
 *    skipped as blanks, and the next line's text is the value (`#define X `
 *    with a trailing blank takes the line below as its value).
 *  - Any other byte starts the preproc_arg token, which its regex ends at a
 *    line break, except that a backslash or a '/' before it continues it: a
 *    '/' pairs with the byte after it, the line break too (fuzz finding 26:
 *    a value ending in `*\/` ran on over an `#endif`, which closed no
 *    conditional), and an even run `//` does not. A "/" "*" ends the token
 *    and opens a comment.
 * Returns the offset of a block comment still open at the line's end (n
 * when there is none; the directive resumes at IFL__DR_VAL where it
 * closes) and sets *dr for the next line. */
static size_t ifl__raw_scan(const char *s, size_t n, size_t i, int *dr) {
    int st = *dr == IFL__DR_END ? IFL__DR_VAL : *dr;
    *dr = IFL__DR_END;
    while (i < n) {
        char c = s[i];
        if (st == IFL__DR_LCOM) {
            /* `//` then (\\+(.|\r?\n)|[^\\\n])*: backslashes escape the
             * byte or line break after them. */
            if (c == '\n')
                return n;
            if (c != '\\') {
                i++;
                continue;
            }
            while (i + 1 < n && s[i + 1] == '\\')
                i++;
            if (ifl__line_break_at(s, n, i + 1)) {
                *dr = IFL__DR_LCOM;
                return n;
            }
            i += 2;
            continue;
        }
        if (st == IFL__DR_TOK) {
            if (c == '\n')
                return n;
            if (c == '/' && i + 1 < n && s[i + 1] == '*') {
                st = IFL__DR_VAL;
                continue;
            }
            if ((c == '/' && i + 1 < n && s[i + 1] == '\n') ||
                (c == '\\' && ifl__line_break_at(s, n, i + 1))) {
                *dr = IFL__DR_TOK;
                return n;
            }
            i += c == '/' ? 2 : 1;
            continue;
        }
        if (st == IFL__DR_VAL && ifl__line_break_at(s, n, i))
            return n;
        if (c == '\n' || ifl__blank(c)) {
            st = IFL__DR_SKIP;
            if (c == '\n') {
                *dr = st;
                return n;
            }
            i++;
        } else if (c == '\\' && ifl__line_break_at(s, n, i + 1)) {
            *dr = IFL__DR_SKIP;
            return n;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            size_t e = ifl__comment_end(s, n, i + 2);
            if (e == SIZE_MAX)
                return i;
            i = e;
            st = IFL__DR_VAL;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            st = IFL__DR_LCOM;
            i += 2;
        } else {
            /* The token's first byte, \S: a '/' there pairs with nothing. */
            st = IFL__DR_TOK;
            i++;
        }
    }
    return n;
}

/* The `<...>` path of an `#include` line [s, s + n) (a comment closed on
 * the line may come before it): tree-sitter-c reads it as one
 * system_lib_string token, to the first '>' that no backslash precedes
 * (else to the last '>'), in which "/" "*" opens no comment (fuzz finding
 * 24: `#include <st/\*o.h>` hid a later `/\*` that opened a comment over the
 * rest of the file from the lexer, which had closed the path's comment on
 * it). Returns true with the token at [*pa, *pb); false when the line has no
 * path closed on it (tree-sitter then reads the line with errors). */
static bool ifl__include_path(const char *s, size_t n, size_t *pa, size_t *pb) {
    size_t w = 0, i = 0;
    if (!ifl__directive_word(s, n, &w, &i) || i - w != 7 || memcmp(s + w, "include", 7) != 0)
        return false;
    for (;;) {
        while (i < n && ifl__blank(s[i]))
            i++;
        if (i + 1 >= n || s[i] != '/' || s[i + 1] != '*')
            break;
        if ((i = ifl__comment_end(s, n, i + 2)) == SIZE_MAX)
            return false;
    }
    if (i >= n || s[i] != '<')
        return false;
    size_t last = 0;
    for (size_t k = i + 1; k < n && s[k] != '\n'; k++) {
        if (s[k] != '>')
            continue;
        if (s[k - 1] != '\\') {
            last = k;
            break;
        }
        last = k;
    }
    if (!last)
        return false;
    *pa = i;
    *pb = last + 1;
    return true;
}

static void ifl__lexpos_feed(ifl__lexpos *p, const char *s, size_t n) {
    if (!p->d)
        return;
    if (!p->cpp) {
        ifl__lex_run(p->d, &p->lx, s, n);
        return;
    }
    for (size_t a = 0; a < n;) {
        const char *nl = memchr(s + a, '\n', n - a);
        size_t b = nl ? (size_t)(nl - s) + 1 : n;
        size_t i = a;
        while (i < b && ifl__blank(s[i]))
            i++;
        /* A directive's line continued by a backslash is part of it, a
         * macro's value: an `#endif` there closes nothing (fuzz finding
         * 21: a `#define TWICE(x) \` line duplicated above the guard's
         * `#endif`). */
        bool cont = p->dcont;
        p->dcont = false;
        /* A block comment opened in a directive's raw text: the directive
         * goes on where it closes. */
        size_t from = a;
        if (p->dcom && p->lx.st == IFL__LX_BLOCK_COMMENT) {
            from = ifl__comment_end(s, b, a);
            if (from == SIZE_MAX) {
                ifl__lex_run(p->d, &p->lx, s + a, b - a);
                a = b;
                continue;
            }
            ifl__lex_run(p->d, &p->lx, s + a, from - a);
            cont = true;
            p->dr = IFL__DR_VAL;
        }
        p->dcom = false;
        if (p->lx.st == IFL__LX_CODE && !cont)
            ifl__cond_line(p, s + a, b - a);
        if (p->lx.st != IFL__LX_CODE || i == b || s[i] == '#' || cont) {
            bool directive = cont || (p->lx.st == IFL__LX_CODE && i < b && s[i] == '#');
            /* Brackets in a directive do not nest with the code: tree-sitter
             * takes `#include` arguments and macro values raw (fuzz finding
             * 22: `#in)ude <stdio.h>` left a ')' that let an `#endif` inside
             * a function body count as closing the guard). Comments and
             * strings there still count. */
            long bal[3];
            memcpy(bal, p->lx.bal, sizeof(bal));
            size_t raw = SIZE_MAX;
            int dr = IFL__DR_VAL;
            if (directive && p->lx.st == IFL__LX_CODE) {
                if (cont && p->dr != IFL__DR_END) {
                    raw = from - a;
                    dr = p->dr;
                } else if (!cont) {
                    raw = ifl__raw_directive(s + a, b - a);
                }
            }
            size_t pa = 0, pb = 0;
            if (raw == SIZE_MAX && directive && !cont && p->lx.st == IFL__LX_CODE &&
                ifl__include_path(s + a, b - a, &pa, &pb)) {
                ifl__lex_run(p->d, &p->lx, s + a, pa);
                p->lx.prev = s[a + pb - 1];
                ifl__lex_run(p->d, &p->lx, s + a + pb, b - a - pb);
            } else if (raw == SIZE_MAX) {
                ifl__lex_run(p->d, &p->lx, s + a, b - a);
            } else {
                size_t open = ifl__raw_scan(s + a, b - a, raw, &dr);
                if (open < b - a) {
                    /* Only a block comment opened in the raw text counts. */
                    p->lx.prev = 0;
                    ifl__lex_run(p->d, &p->lx, s + a + open, b - a - open);
                    p->dcom = p->lx.st == IFL__LX_BLOCK_COMMENT;
                    dr = IFL__DR_END;
                } else {
                    p->lx.prev = s[b - 1];
                }
            }
            if (directive)
                memcpy(p->lx.bal, bal, sizeof(bal));
            if (raw != SIZE_MAX) {
                p->dcont = dr != IFL__DR_END;
                p->dr = dr;
            } else {
                size_t e = b;
                if (e > a && s[e - 1] == '\n')
                    e--;
                if (e > a && s[e - 1] == '\r')
                    e--;
                p->dcont = directive && e > a && s[e - 1] == '\\';
                p->dr = IFL__DR_END;
            }
            a = b;
            continue;
        }
        /* tree-sitter-c also reads a directive where a statement may start
         * later on a line: after `;`, a brace or a closed comment (fuzz
         * finding 18: `/\* count.h *\/;#ifndef COUNT_H`). */
        size_t c = a;
        for (size_t k = i; k < b; k++) {
            if (s[k] != '#')
                continue;
            ifl__lex_run(p->d, &p->lx, s + c, k - c);
            c = k;
            if (p->lx.st != IFL__LX_CODE)
                continue;
            size_t j = k;
            while (j > a && ifl__blank(s[j - 1]))
                j--;
            if (j > a && (s[j - 1] == ';' || s[j - 1] == '{' || s[j - 1] == '}' ||
                          (s[j - 1] == '/' && j - 1 > a && s[j - 2] == '*')))
                ifl__cond_line(p, s + k, b - k);
        }
        ifl__lex_run(p->d, &p->lx, s + c, b - c);
        a = b;
    }
}

/* In code, or in a line comment the text fed ended in (not one continued
 * past a line break), and not in a directive that runs on. */
static bool ifl__lexpos_in_code(const ifl__lexpos *p) {
    return !p->d || ((p->lx.st == IFL__LX_CODE ||
                      (p->lx.st == IFL__LX_LINE_COMMENT && p->lx.prev != '\n')) &&
                     !p->dcont);
}

/* In code with no bracket or preprocessor conditional left open. */
static bool ifl__lexpos_settled(const ifl__lexpos *p) {
    return ifl__lexpos_in_code(p) && p->depth <= 0 &&
           (!p->d || (p->lx.bal[0] <= 0 && p->lx.bal[1] <= 0 && p->lx.bal[2] <= 0));
}

/* A lexer for the buffer s of t: the include guard's lines do not count as
 * conditionals. */
static void ifl__lexpos_for(ifl__lexpos *p, const ifl_tree *t, const char *s) {
    ifl__lexpos_init(p, t->lang);
    if (t->guard.if_start != SIZE_MAX) {
        p->doc = s;
        p->skip1 = t->guard.if_start;
        p->skip2 = t->guard.endif_start;
    }
}

/* Skips blanks and comments from i; returns the first code byte. */
static size_t ifl__skip_c_blank(const char *s, size_t len, size_t i) {
    for (;;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
            i++;
        if (i + 1 < len && s[i] == '/' && s[i + 1] == '/') {
            while (i < len && s[i] != '\n')
                i++;
        } else if (i + 1 < len && s[i] == '/' && s[i + 1] == '*') {
            const char *e = NULL;
            for (size_t k = i + 2; k + 1 < len && !e; k++)
                if (s[k] == '*' && s[k + 1] == '/')
                    e = s + k;
            i = e ? (size_t)(e - s) + 2 : len;
        } else {
            return i;
        }
    }
}

/* Matches `#` blanks `word` at i; returns the index after the word, or 0. */
static size_t ifl__directive(const char *s, size_t len, size_t i, const char *word) {
    if (i >= len || s[i] != '#')
        return 0;
    i++;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    size_t k = strlen(word);
    if (i + k > len || memcmp(s + i, word, k) != 0 || (i + k < len && ifl__word_char(s[i + k])))
        return 0;
    return i + k;
}

/* Finds a C/C++ include guard: the file's first code is `#ifndef NAME`
 * then `#define NAME`, and the `#endif` that closes that `#ifndef` is
 * followed by nothing but blanks and comments. Its lines are parsed as
 * blanks, so that the file's top-level constructs are top-level for the
 * parser too and can be cut into segments; the guard wraps the whole file
 * and says nothing about the code. */
static void ifl__find_guard(ifl_tree *t, const char *s, size_t len) {
    ifl__guard_none(t);
    if (strcmp(t->lang, "c") != 0 && strcmp(t->lang, "cpp") != 0)
        return;
    size_t a = ifl__skip_c_blank(s, len, 0);
    size_t e = ifl__directive(s, len, a, "ifndef");
    if (!e || (a > 0 && s[a - 1] != '\n'))
        return;
    while (e < len && (s[e] == ' ' || s[e] == '\t'))
        e++;
    size_t n0 = e;
    while (e < len && ifl__word_char(s[e]))
        e++;
    if (e == n0)
        return;
    size_t d = ifl__skip_c_blank(s, len, e);
    size_t de = ifl__directive(s, len, d, "define");
    if (!de)
        return;
    while (de < len && (s[de] == ' ' || s[de] == '\t'))
        de++;
    if (len - de < e - n0 || memcmp(s + de, s + n0, e - n0) != 0 ||
        (de + (e - n0) < len && ifl__word_char(s[de + (e - n0)])))
        return;
    /* The #endif that closes it: conditionals counted line by line, outside
     * comments and strings. Brackets do not count here (flat): then only
     * the characters ifl__guard_may_change looks for can move it (with
     * them, a bracket typed anywhere could; fuzz finding 13). Both trees a
     * test compares look for the guard alike. */
    ifl__lexpos lx;
    ifl__lexpos_init(&lx, t->lang);
    lx.flat = true;
    size_t end = SIZE_MAX;
    for (size_t ls = a; ls < len && end == SIZE_MAX;) {
        const char *nl = memchr(s + ls, '\n', len - ls);
        size_t next = nl ? (size_t)(nl - s) + 1 : len;
        ifl__lexpos_feed(&lx, s + ls, next - ls);
        if (lx.depth == 0)
            end = ls;
        ls = next;
    }
    if (end == SIZE_MAX)
        return;
    size_t h = end;
    while (h < len && ifl__blank(s[h]))
        h++;
    size_t he = ifl__directive(s, len, h, "endif");
    if (!he || ifl__skip_c_blank(s, len, he) != len)
        return;
    t->guard = (ifl__include_guard){a, e, end, he, de + (e - n0)};
}

/* Text of [a, a + n) of s as the parser sees it: the include guard blanked.
 * Returns s + a, or a malloc'ed copy in *copy. */
static const char *ifl__parse_text(const ifl_tree *t, const char *s, size_t a, size_t n,
                                   char **copy) {
    *copy = NULL;
    const ifl__include_guard *gd = &t->guard;
    if (gd->if_start == SIZE_MAX)
        return s + a;
    size_t r[2][2] = {{gd->if_start, gd->if_end}, {gd->endif_start, gd->endif_end}};
    bool hit = false;
    for (int k = 0; k < 2; k++)
        hit = hit || (r[k][0] < a + n && r[k][1] > a);
    if (!hit)
        return s + a;
    char *c = malloc(n + 1);
    if (!c)
        return NULL;
    memcpy(c, s + a, n);
    c[n] = 0;
    for (int k = 0; k < 2; k++)
        for (size_t i = r[k][0]; i < r[k][1]; i++)
            if (i >= a && i < a + n)
                c[i - a] = ' ';
    *copy = c;
    return c;
}

/* tree-sitter-bash's incremental reparse differs from a fresh parse where
 * its lexing depends on the parse state, and plain ts_tree_edit +
 * ts_parser_parse on one tree does the same, even after an edit that
 * changes no byte. Fuzz finding 25: `x42={\` (a backslash, a line break)
 * `  y=2`, reparsed after `42` was typed. The reused value `{` left the
 * parser where the backslash and the line break are a line continuation
 * and `y=2` a second assignment, whose command then ran on to the next
 * line's word; a fresh parse lexes after the `{` token, where the backslash
 * starts the word `y=2`, the command's name, and the line ends the
 * command. Random single edits found it only after a backslash that
 * follows a token; fuzz finding 27, after a run of edits that left open
 * heredocs, after `x=1 \` too, a backslash after a blank. So a bash
 * script up to IFL__FRESH_MAX bytes is always parsed afresh (0.6 ms for
 * 11.7 KB, docs/perf/syntax.md); a larger one keeps its incremental
 * tree. */
bool ifl__fresh_only(const ifl_tree *t, size_t n) {
    return n <= IFL__FRESH_MAX && strcmp(t->lang, "bash") == 0;
}

/* Parses segment i (incrementally from its tree when it has one). */
static base_status ifl__seg_parse(ifl_tree *t, const char *s, size_t i) {
    ifl__seg *g = &t->segs[i];
    char *copy = NULL;
    const char *text = ifl__parse_text(t, s, g->start, g->len, &copy);
    base_status st = BASE_ERR_NOMEM;
    /* (ifl__parse would not reuse the tree there either; the fallback
     * below must know that it was not.) */
    const TSTree *old = g->tree;
    if (old && ifl__fresh_only(t, g->len))
        old = NULL;
    TSTree *nt = text ? ifl__parse(t, old, text, (uint32_t)g->len, &st) : NULL;
    /* tree-sitter's incremental reparse can keep errors that a fresh parse
     * of the same text does not have; tree-sitter#1444 and #4001 report
     * this class of bug, and plain ts_tree_edit + ts_parser_parse on one
     * tree reproduces it, no segments. Fuzz finding 7 (Java): with `return
     * a;` in a class body, a line moved and the move undone, the reparse
     * took back the old tree's return_statement, patched with a MISSING "}"
     * and an ERROR. Finding 16 (JavaScript): a span deleted and typed back
     * around a template string that spans several constructs kept ERROR
     * nodes alone: the reparse reused the old tree's call_expression and
     * function_declaration, lexed as code, inside what is the template
     * again. A result with any error is therefore parsed again from
     * scratch and the fresh tree kept. Bounded: one segment of at most
     * IFL__FRESH_MAX bytes (a larger one keeps its incremental tree), and
     * only after edits that leave an error, where the reparse is cheap
     * beside the fresh parse (docs/perf/syntax.md). */
    if (nt && old && g->len <= IFL__FRESH_MAX && ts_node_has_error(ts_tree_root_node(nt))) {
        base_status fst = BASE_OK;
        TSTree *fresh = ifl__parse(t, NULL, text, (uint32_t)g->len, &fst);
        if (fresh) {
            ts_tree_delete(nt);
            nt = fresh;
        }
    }
    free(copy);
    if (!nt)
        return st;
    if (g->tree)
        ts_tree_delete(g->tree);
    g->tree = nt;
    g->dirty = false;
    g->evicted = false;
    g->errors = -1;
    t->errors = -1;
    return BASE_OK;
}

/* The end of the last ERROR or MISSING node under n, in document order. An
 * error below n that no visible child carries is a MISSING hidden token
 * (as in ifl__count_errors_in), which the node API does not show: n's end
 * stands for it (fuzz finding 10: tree-sitter-c reads a '/' and the line
 * break after it as part of a directive's argument, so a segment that is
 * one such line, `#ount.h` and a comment's closing, lacks its line end). */
static bool ifl__last_error(TSNode n, uint32_t *end) {
    if (ts_node_is_missing(n) || ts_node_is_error(n)) {
        *end = ts_node_end_byte(n);
        return true;
    }
    if (!ts_node_has_error(n))
        return false;
    for (uint32_t i = ts_node_child_count(n); i-- > 0;)
        if (ifl__last_error(ts_node_child(n, i), end))
            return true;
    *end = ts_node_end_byte(n);
    return true;
}

/* The last top-level node under root that is code, or root when there is
 * none. Comments at the end do not count, since a construct cut in two may
 * have a comment line between its halves (`static int`, a comment,
 * `count(...) {` in column 0: fuzz finding 9). Nor does a Python line
 * continuation, an extra like a comment (a decorator, then a lone `\`,
 * then `def f():` on the line after a comment). */
static TSNode ifl__last_code_node(TSNode root) {
    for (uint32_t c = ts_node_child_count(root); c-- > 0;) {
        TSNode ch = ts_node_child(root, c);
        const char *ty = ts_node_type(ch);
        if (!strstr(ty, "comment") && strcmp(ty, "line_continuation") != 0)
            return ch;
    }
    return root;
}

/* Where the last line of code under root starts, in s (root's text begins
 * at base): the line of the end of ifl__last_code_node. */
static size_t ifl__code_last_line(TSNode root, const char *s, size_t base) {
    TSNode n = ifl__last_code_node(root);
    uint32_t end = ts_node_eq(n, root) ? 0 : ts_node_end_byte(n);
    size_t ls = base + (end > 0 ? end - 1 : 0);
    while (ls > base && s[ls - 1] != '\n')
        ls--;
    return ls;
}

/* Does [s, s + n) of a C/C++ buffer hold a directive line (or its
 * continuation) with "/" "*" in it? tree-sitter takes a directive's text
 * raw, so a block comment opened there and closed in a later segment reads,
 * in its segment alone, as the macro's value, error-free, where the whole
 * file has the comment run on (fuzz finding 14): the tree's nodes are then
 * no guide to where code is. A byte scan, much cheaper than the lexer. */
static bool ifl__directive_comment(const ifl_tree *t, const char *s, size_t n) {
    if (strcmp(t->lang, "c") != 0 && strcmp(t->lang, "cpp") != 0)
        return false;
    bool directive = false, cont = false;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) : n;
        size_t b = i;
        while (b < e && ifl__blank(s[b]))
            b++;
        directive = cont || (b < e && s[b] == '#');
        if (directive)
            for (size_t k = b; k + 1 < e; k++)
                if (s[k] == '/' && s[k + 1] == '*')
                    return true;
        size_t l = e;
        while (l > i && (s[l - 1] == '\r' || s[l - 1] == ' ' || s[l - 1] == '\t'))
            l--;
        cont = directive && l > i && s[l - 1] == '\\';
        i = e + 1;
    }
    return false;
}

/* Is the cut between segments i and i + 1 sound? It is not when
 *  - b's first line does not start a construct (it was edited into an
 *    indented line, an operator, `else`, ...);
 *  - a ends inside a comment or string, or its last line ends with a
 *    backslash (a continued macro or line);
 *  - a's last line is a decorator or annotation;
 *  - a's last top-level node has a syntax error that reaches a's last
 *    line of code (comments after it do not count) and parsing both as one
 *    has fewer errors: one construct cut in two (a C return type or
 *    template header on its own line, JSX text in column 0);
 *  - b's first top-level node is an ERROR and parsing both as one has
 *    fewer errors (Lua's `return` and its value on the next line);
 *  - b's tree does not start with a node at its first byte;
 *  - a's last construct is a C/C++ `case` label in column 0, which takes
 *    the lines after it.
 * and not when b no longer starts a line (an edit deleted the line break).
 * An error further inside a's last construct (code being typed) stays in a:
 * merging would not mend it, and would make every keystroke reparse more. */
typedef enum ifl__cut_state {
    IFL__CUT_OK = 0,
    IFL__CUT_TEXT, /* the text runs on across the cut: merge */
    IFL__CUT_TREE, /* a construct may be cut in two: merge if that mends it */
} ifl__cut_state;

static ifl__cut_state ifl__cut_check(const ifl_tree *t, const char *s, size_t len, size_t i) {
    const ifl__seg *a = &t->segs[i], *b = &t->segs[i + 1];
    /* An edit may have joined b's first line to a's last. */
    if (b->start == 0 || s[b->start - 1] != '\n')
        return IFL__CUT_TEXT;
    if (!ifl__starts_construct(t->lang, s, len, b->start))
        return IFL__CUT_TEXT;
    /* a's last non-blank line: a continued line, or a decorator or
     * annotation that belongs to what follows. */
    size_t e = a->start + a->len;
    while (e > a->start &&
           (s[e - 1] == '\n' || s[e - 1] == '\r' || s[e - 1] == ' ' || s[e - 1] == '\t'))
        e--;
    if (e > a->start && s[e - 1] == '\\')
        return IFL__CUT_TEXT;
    size_t ls = e;
    while (ls > a->start && s[ls - 1] != '\n')
        ls--;
    if (ls < e && s[ls] == '@')
        return IFL__CUT_TEXT;
    TSNode ra = ts_tree_root_node(a->tree), rb = ts_tree_root_node(b->tree);
    uint32_t na = ts_node_child_count(ra), nb = ts_node_child_count(rb);
    if (na == 0 || nb == 0)
        return IFL__CUT_TEXT;
    if (ts_node_start_byte(ts_node_child(rb, 0)) != 0)
        return IFL__CUT_TEXT;
    TSNode la = ts_node_child(ra, na - 1);
    /* The lexer needs a start in code: in an error-free tree, the deepest
     * last node of la that is not a comment or string (node boundaries
     * outside those are in code); otherwise the segment's start (a broken
     * tree may have read an unclosed comment as code), or when a C/C++
     * directive before that node opens a block comment (ifl__directive_comment). */
    size_t from = 0;
    if (!ts_node_has_error(ra)) {
        TSNode n = la;
        while (ts_node_child_count(n) > 0 && !ts_node_has_error(n)) {
            const char *ty = ts_node_type(n);
            if (strstr(ty, "comment") || strstr(ty, "string") || strstr(ty, "heredoc"))
                break;
            n = ts_node_child(n, ts_node_child_count(n) - 1);
        }
        from = ts_node_start_byte(n);
        if (ifl__directive_comment(t, s + a->start, from))
            from = 0;
    }
    /* Open comments, strings, here-documents, brackets and preprocessor
     * conditionals run on into b. */
    ifl__lexpos lx;
    ifl__lexpos_for(&lx, t, s);
    ifl__lexpos_feed(&lx, s + a->start + from, a->len - from);
    if (!ifl__lexpos_settled(&lx))
        return IFL__CUT_TEXT;
    /* An error reaching a's last line may be one construct cut in two (a C
     * return type or template header on its own line, JSX text in column
     * 0), or code being typed; the caller merges only when that mends it. */
    uint32_t err_end = 0;
    /* (From the root: a segment that does not parse at all is one ERROR.) */
    if (ifl__last_error(ra, &err_end) && a->start + err_end >= ifl__code_last_line(ra, s, a->start))
        return IFL__CUT_TREE;
    /* b's first construct an ERROR: the rest of one cut in two (Lua's
     * `return` with its value on the next line, which alone is an
     * expression and no statement). */
    if (ts_node_is_error(ts_node_child(rb, 0)))
        return IFL__CUT_TREE;
    /* A C/C++ `case` or `default` label in column 0 (invalid code that
     * tree-sitter-c reads without an error) takes the declarations and
     * statements after it, on any line. */
    if (strcmp(ts_node_type(ifl__last_code_node(ra)), "case_statement") == 0)
        return IFL__CUT_TEXT;
    return IFL__CUT_OK;
}

/* Bytes after the last line break of [a, b) (b - a when there is none). */
static size_t ifl__last_line_len(const char *s, size_t a, size_t b) {
    size_t i = b;
    while (i > a && s[i - 1] != '\n')
        i--;
    return b - i;
}

/* Merges segments i and i + 1; the merged tree follows incrementally from
 * i's, which sees the text appended at its end. */
/* The edit that appends segment b's text to segment a, in a's coordinates:
 * the points of a's end and of b's end (a usually ends with a line break,
 * but an edit may have taken it). */
static TSInputEdit ifl__append_edit(const char *s, const ifl__seg *a, const ifl__seg *b) {
    TSPoint end = {a->row_count, (uint32_t)ifl__last_line_len(s, a->start, a->start + a->len)};
    TSPoint nend = {a->row_count + b->row_count,
                    b->row_count ? (uint32_t)ifl__last_line_len(s, b->start, b->start + b->len)
                                 : end.column + (uint32_t)b->len};
    return (TSInputEdit){
        (uint32_t)a->len, (uint32_t)a->len, (uint32_t)(a->len + b->len), end, end, nend};
}

static base_status ifl__seg_merge(ifl_tree *t, const char *s, size_t i) {
    ifl__seg *a = &t->segs[i], *b = &t->segs[i + 1];
    if (a->tree) {
        TSInputEdit ed = ifl__append_edit(s, a, b);
        ts_tree_edit(a->tree, &ed);
    }
    a->len += b->len;
    a->row_count += b->row_count;
    a->dirty = true;
    a->evicted = false;
    a->errors = -1;
    if (b->tree)
        ts_tree_delete(b->tree);
    memmove(&t->segs[i + 1], &t->segs[i + 2], (t->nseg - i - 2) * sizeof(ifl__seg));
    t->nseg--;
    return BASE_OK;
}

static base_status ifl__seg_reserve(ifl_tree *t, size_t n) {
    if (n <= t->cap)
        return BASE_OK;
    size_t cap = t->cap ? t->cap : 16;
    while (cap < n)
        cap *= 2;
    ifl__seg *v = realloc(t->segs, cap * sizeof(*v));
    if (!v)
        return BASE_ERR_NOMEM;
    t->segs = v;
    t->cap = cap;
    return BASE_OK;
}

static uint32_t ifl__rows(const char *s, size_t a, size_t b) {
    uint32_t r = 0;
    for (const char *p = s + a, *e = s + b; p < e && (p = memchr(p, '\n', (size_t)(e - p))); p++)
        r++;
    return r;
}

/* Cuts [a, b) of s into pieces of about seg_bytes at lines that start a
 * construct (and are outside comments and strings) and inserts them, without
 * trees, at index at (replacing nothing). Returns how many. */
static base_status ifl__cut(ifl_tree *t, const char *s, size_t len, size_t a, size_t b,
                            uint32_t row, size_t at, size_t *count) {
    *count = 0;
    size_t piece = a;
    uint32_t prow = row;
    ifl__lexpos lx;
    ifl__lexpos_for(&lx, t, s);
    for (size_t ls = a; ls < b;) {
        const char *nl = memchr(s + ls, '\n', b - ls);
        size_t next = nl ? (size_t)(nl - s) + 1 : b;
        if (t->seg_bytes && ls > piece && ls - piece >= t->seg_bytes && ifl__lexpos_in_code(&lx) &&
            lx.depth == 0 && ifl__starts_construct(t->lang, s, len, ls)) {
            base_status st = ifl__seg_reserve(t, t->nseg + 1);
            if (st != BASE_OK)
                return st;
            memmove(&t->segs[at + 1], &t->segs[at], (t->nseg - at) * sizeof(ifl__seg));
            t->nseg++;
            uint32_t rows = ifl__rows(s, piece, ls);
            t->segs[at] = (ifl__seg){.start = piece,
                                     .len = ls - piece,
                                     .row = prow,
                                     .row_count = rows,
                                     .dirty = true,
                                     .errors = -1};
            at++;
            (*count)++;
            piece = ls;
            prow += rows;
        }
        ifl__lexpos_feed(&lx, s + ls, next - ls);
        ls = next;
    }
    base_status st = ifl__seg_reserve(t, t->nseg + 1);
    if (st != BASE_OK)
        return st;
    memmove(&t->segs[at + 1], &t->segs[at], (t->nseg - at) * sizeof(ifl__seg));
    t->nseg++;
    t->segs[at] = (ifl__seg){.start = piece,
                             .len = b - piece,
                             .row = prow,
                             .row_count = ifl__rows(s, piece, b),
                             .dirty = true,
                             .errors = -1};
    (*count)++;
    return BASE_OK;
}

/* Would segments i .. i + m parsed as one have fewer syntax errors than
 * apart? Parses them as one from a copy of i's tree; *mended is that tree
 * when they would (the caller merges and keeps it), else NULL. When they
 * would not, *wider says whether one more segment can still help: only
 * when the trial has as many errors as apart (not more) and its last one
 * lies past segment i (the construct runs on into what was appended, as an
 * unclosed JSX element does). Errors that stay inside i are code being
 * typed there; more errors than apart are i's error breaking what follows
 * (Python, where one bad line can turn every later function into errors).
 * Either way a wider trial parses more text for nothing: while code was
 * typed at such a cut, up to three more parses of up to 20 KiB on every
 * keystroke. *edited_to is raised to the last of i + 1 .. i + m that was
 * edited (or never parsed) and that the trial parsed. */
static base_status ifl__merge_mends(ifl_tree *t, const char *s, size_t i, size_t m, TSTree **mended,
                                    bool *wider, size_t *edited_to) {
    ifl__seg *a = &t->segs[i];
    *mended = NULL;
    *wider = false;
    /* Segments i + 1 .. i + m as one, for the edit that appends them. */
    ifl__seg rest = t->segs[i + 1];
    size_t apart = ifl__count_errors_in(ts_tree_root_node(a->tree), 0, 0, NULL);
    for (size_t k = i + 1; k <= i + m; k++) {
        base_status st;
        /* An edited segment parsed here is no longer dirty for the caller,
         * which must look at its cuts (fuzz finding 28). */
        if (t->segs[k].dirty || (!t->segs[k].tree && !t->segs[k].evicted))
            *edited_to = BASE_MAX(*edited_to, k);
        if ((t->segs[k].dirty || !t->segs[k].tree) && (st = ifl__seg_parse(t, s, k)) != BASE_OK)
            return st;
        apart += ifl__count_errors_in(ts_tree_root_node(t->segs[k].tree), 0, 0, NULL);
        if (k > i + 1) {
            rest.len += t->segs[k].len;
            rest.row_count += t->segs[k].row_count;
        }
    }
    size_t n = a->len + rest.len;
    char *copy = NULL;
    const char *text = ifl__parse_text(t, s, a->start, n, &copy);
    if (!text)
        return BASE_ERR_NOMEM;
    TSTree *trial = ts_tree_copy(a->tree);
    TSInputEdit ed = ifl__append_edit(s, a, &rest);
    ts_tree_edit(trial, &ed);
    base_status st = BASE_OK;
    TSTree *nt = ifl__parse(t, trial, text, (uint32_t)n, &st);
    ts_tree_delete(trial);
    free(copy);
    if (!nt)
        return st == BASE_ERR_TIMEOUT ? BASE_OK : st; /* no mend that can be seen */
    TSNode root = ts_tree_root_node(nt);
    size_t merged = ifl__count_errors_in(root, 0, 0, NULL);
    if (merged < apart) {
        *mended = nt;
        return BASE_OK;
    }
    uint32_t err_end = 0;
    *wider = merged == apart && ifl__last_error(root, &err_end) && err_end > a->len;
    ts_tree_delete(nt);
    return BASE_OK;
}

/* Index of the segment holding byte pos: the last one starting at or before
 * it. */
static size_t ifl__seg_index(const ifl_tree *t, size_t pos) {
    size_t lo = 0, hi = t->nseg;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->segs[mid].start <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ---- trees kept near the focus ------------------------------------------------------ */

/* A segment's tree holds about 40 bytes per byte of its text
 * (docs/perf/syntax.md), so trees are dropped from the segments farther than
 * keep_bytes from the focus, their errors counted first so that error counts
 * need no parse; a fresh parse of one when it is read or edited again costs
 * about 0.1 ms. The focus's segment and its two neighbours always keep
 * theirs: a reparse there checks its cuts with both (typing inside a large
 * class would otherwise parse them again at every keystroke), and so do
 * segments over IFL__EVICT_MAX. */
typedef struct ifl__keep {
    size_t lo, hi; /* bytes whose segments keep their trees */
    size_t at;     /* the focus's segment */
} ifl__keep;

/* The window around the focus, as the segments lie now. */
static ifl__keep ifl__keep_window(const ifl_tree *t) {
    size_t focus = BASE_MIN(t->focus, t->len);
    ifl__keep w;
    w.lo = focus > t->keep_bytes ? focus - t->keep_bytes : 0;
    w.hi = t->len - focus > t->keep_bytes ? focus + t->keep_bytes : t->len;
    w.at = ifl__seg_index(t, focus);
    return w;
}

/* Drops segment i's tree when the window w allows. */
static void ifl__evict_one(ifl_tree *t, size_t i, const ifl__keep *w) {
    ifl__seg *g = &t->segs[i];
    if (!g->tree || g->dirty || g->len > IFL__EVICT_MAX || (i + 1 >= w->at && i <= w->at + 1) ||
        (g->start + g->len > w->lo && g->start < w->hi))
        return;
    if (g->errors < 0)
        g->errors = (long)ifl__count_errors_in(ts_tree_root_node(g->tree), 0, 0, NULL);
    ts_tree_delete(g->tree);
    g->tree = NULL;
    g->evicted = true;
}

static void ifl__evict(ifl_tree *t) {
    t->restored = false;
    if (t->keep_bytes == SIZE_MAX)
        return;
    ifl__keep w = ifl__keep_window(t);
    for (size_t i = 0; i < t->nseg; i++)
        ifl__evict_one(t, i, &w);
}

/* Parses every segment in [i, j) that needs it, then merges across unsound
 * cuts among them and with their neighbours (the cuts those parses may have
 * changed). Every merge removes a segment, so this ends. */
static base_status ifl__settle(ifl_tree *t, const char *s, size_t len, size_t i, size_t j) {
    base_status st;
    /* A long range (a fresh cut of the buffer) is parsed as the cuts are
     * looked at, below, and the trees left behind that the focus does not
     * need are dropped on the way: a 1 MB file then never holds 40 MB of
     * trees at once. A short one is parsed first. */
    bool stream = j - i > IFL__SETTLE_STREAM;
    for (size_t k = i; k < (stream ? i + 1 : j); k++)
        if ((t->segs[k].dirty || !t->segs[k].tree) && (st = ifl__seg_parse(t, s, k)) != BASE_OK)
            return st;
    /* Cuts to look at: (k, k + 1) for k in [i - 1, j - 1]. */
    size_t k = i > 0 ? i - 1 : 0;
    size_t last = j > 0 ? j - 1 : 0;
    while (k + 1 < t->nseg && k <= last) {
        /* The segment before the range, or one a merge stepped back to,
         * may have had its tree evicted. */
        if (!t->segs[k].tree && (st = ifl__seg_parse(t, s, k)) != BASE_OK)
            return st;
        if (t->segs[k + 1].dirty || !t->segs[k + 1].tree) {
            /* A dropped tree parsed again reads the same text, whose cut
             * with the next segment was settled when it was parsed. */
            bool restore = !t->segs[k + 1].dirty && t->segs[k + 1].evicted;
            if ((st = ifl__seg_parse(t, s, k + 1)) != BASE_OK)
                return st;
            /* Parsed here, it is no longer dirty for the caller: its cut
             * with the next segment is looked at here too. */
            if (last < k + 1 && !restore)
                last = k + 1;
        }
        ifl__cut_state cs = ifl__cut_check(t, s, len, k);
        if (cs == IFL__CUT_OK || t->segs[k].len + t->segs[k + 1].len > IFL__SEG_MERGE_MAX) {
            /* (Merges move the segments: the window is taken anew. A merge
             * stepping back parses the segment again.) */
            if (stream && t->keep_bytes != SIZE_MAX) {
                ifl__keep w = ifl__keep_window(t);
                ifl__evict_one(t, k, &w);
            }
            k++;
            continue;
        }
        if (cs == IFL__CUT_TREE) {
            /* The trial parse of the two as one is the merged tree. */
            /* Also with the next few segments: a construct may be cut in
             * three or more (JSX text over several lines in column 0, each
             * line parsing alone), and the cuts between its middle pieces
             * then look sound. Tried only when the two alone do not mend
             * and their trial says a wider one may (ifl__merge_mends), with
             * twice the segments each time, up to t->mend_bytes: a bound in
             * bytes, not segments, so that a construct mends alike however
             * finely the text is cut (fuzz finding 30: a Lua function whose
             * body of column-0 lines was seven one-line segments). */
            TSTree *mended = NULL;
            size_t m = 1, len_m = t->segs[k].len + t->segs[k + 1].len, edited_to = 0;
            for (;;) {
                bool wider = false;
                if ((st = ifl__merge_mends(t, s, k, m, &mended, &wider, &edited_to)) != BASE_OK)
                    return st;
                if (mended || !wider)
                    break;
                size_t n = m;
                while (n < 2 * m && k + n + 1 < t->nseg &&
                       len_m + t->segs[k + n + 1].len <= t->mend_bytes) {
                    n++;
                    len_m += t->segs[k + n].len;
                }
                if (n == m)
                    break;
                m = n;
            }
            if (!mended) {
                /* The trial parsed edited segments after k + 1: their cuts
                 * are looked at here. */
                if (last < edited_to)
                    last = edited_to;
                k++;
                continue;
            }
            for (size_t r = 0; r < m; r++) {
                if ((st = ifl__seg_merge(t, s, k)) != BASE_OK) {
                    ts_tree_delete(mended);
                    return st;
                }
                if (last > k)
                    last--;
            }
            ifl__seg *g = &t->segs[k];
            if (g->tree)
                ts_tree_delete(g->tree);
            g->tree = mended;
            g->dirty = false;
        } else {
            /* A comment, string or bracket left open runs on: take in every
             * segment it covers before parsing, rather than one reparse per
             * segment. */
            ifl__lexpos lx;
            ifl__lexpos_for(&lx, t, s);
            ifl__lexpos_feed(&lx, s + t->segs[k].start, t->segs[k].len);
            do {
                ifl__lexpos_feed(&lx, s + t->segs[k + 1].start, t->segs[k + 1].len);
                if ((st = ifl__seg_merge(t, s, k)) != BASE_OK)
                    return st;
                if (last > k)
                    last--;
            } while (!ifl__lexpos_settled(&lx) && k + 1 < t->nseg &&
                     t->segs[k].len + t->segs[k + 1].len <= IFL__SEG_MERGE_MAX);
            /* Parsed afresh, not from k's tree: that tree read the comment
             * or string as left open, and tree-sitter's incremental reparse
             * can keep what it recovered there once the text closes it
             * (fuzz finding 8: a JavaScript template string with invalid
             * UTF-8, its first line moved to the top, kept an ERROR with the
             * template unread; plain tree-sitter does the same when the
             * rest is appended to a tree of the first line with
             * ts_tree_edit). The text from the opening on reads anew
             * anyway; what a fresh parse costs more is k's text before it. */
            if (t->segs[k].tree) {
                ts_tree_delete(t->segs[k].tree);
                t->segs[k].tree = NULL;
            }
            if ((st = ifl__seg_parse(t, s, k)) != BASE_OK)
                return st;
        }
        /* The merged tree may end or begin differently: its cut with the
         * next segment, and the one before it, are looked at again. */
        if (last < k)
            last = k;
        if (k > 0)
            k--;
    }
    return BASE_OK;
}

/* Cuts the whole buffer afresh. */
static base_status ifl__build(ifl_tree *t, const char *s, size_t len) {
    ifl__segs_clear(t);
    ifl__find_guard(t, s, len);
    size_t n = 0;
    base_status st = ifl__cut(t, s, len, 0, len, 0, 0, &n);
    if (st == BASE_OK)
        st = ifl__settle(t, s, len, 0, t->nseg);
    if (st != BASE_OK) {
        ifl__segs_clear(t);
        return st;
    }
    t->rebuild = false;
    return BASE_OK;
}

/* Segment i grew well past seg_bytes (typing, merges) and parses without
 * errors: cut it again. */
static base_status ifl__resplit(ifl_tree *t, const char *s, size_t len, size_t i, size_t *after) {
    ifl__seg g = t->segs[i];
    memmove(&t->segs[i], &t->segs[i + 1], (t->nseg - i - 1) * sizeof(ifl__seg));
    t->nseg--;
    size_t n = 0;
    base_status st = ifl__cut(t, s, len, g.start, g.start + g.len, g.row, i, &n);
    if (st != BASE_OK) {
        /* Out of memory mid-way: the pieces cut so far cover part of g; a
         * rebuild on the next update restores the row. */
        if (g.tree)
            ts_tree_delete(g.tree);
        t->rebuild = true;
        return st;
    }
    if (n == 1) {
        t->segs[i].tree = g.tree; /* nothing to cut at: keep the tree */
        t->segs[i].dirty = false;
        t->segs[i].errors = g.errors;
        *after = i + 1;
        return BASE_OK;
    }
    if (g.tree)
        ts_tree_delete(g.tree);
    *after = i + n;
    return ifl__settle(t, s, len, i, i + n);
}

/* ---- edits and updates ------------------------------------------------------------ */

static TSPoint ifl__pt(lsp_point p) { return (TSPoint){.row = p.row, .column = p.column}; }

void ifl_tree_edit(ifl_tree *t, const lsp_edit_event *ev) {
    if (!t || !ev)
        return;
    t->dirty = true;
    t->errors = -1;
    if (!t->edited) {
        t->edit_lo = ev->start_byte;
        t->edit_hi = ev->new_end_byte;
        t->edited = true;
        t->edit_deleted = false;
    } else {
        if (t->edit_hi >= ev->old_end_byte)
            t->edit_hi = t->edit_hi + ev->new_end_byte - ev->old_end_byte;
        t->edit_lo = BASE_MIN(t->edit_lo, ev->start_byte);
        t->edit_hi = BASE_MAX(t->edit_hi, ev->new_end_byte);
    }
    t->edit_deleted = t->edit_deleted || ev->old_end_byte > ev->start_byte;
    if (t->rebuild || t->nseg == 0)
        return;
    if (ev->old_end_byte < ev->start_byte || ev->old_end_byte > t->len) {
        t->rebuild = true; /* not an edit of the text the segments follow */
        return;
    }
    ifl__include_guard *gd = &t->guard;
    if (gd->if_start != SIZE_MAX) {
        if ((ev->start_byte <= gd->if_end && ev->old_end_byte >= gd->if_start) ||
            (ev->start_byte <= gd->endif_end && ev->old_end_byte >= gd->endif_start)) {
            t->rebuild = true; /* the guard itself changed */
            return;
        }
        size_t *f[] = {&gd->if_start, &gd->if_end, &gd->endif_start, &gd->endif_end, &gd->head_end};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            if (*f[i] >= ev->old_end_byte)
                *f[i] = *f[i] - ev->old_end_byte + ev->new_end_byte;
    }
    size_t k = ifl__seg_index(t, ev->start_byte);
    size_t m = ev->old_end_byte > ev->start_byte ? ifl__seg_index(t, ev->old_end_byte - 1) : k;
    if (m > k) {
        /* The edit spans cuts: one segment, parsed afresh. */
        ifl__seg *g = &t->segs[k];
        for (size_t i = k + 1; i <= m; i++) {
            g->len += t->segs[i].len;
            g->row_count += t->segs[i].row_count;
            if (t->segs[i].tree)
                ts_tree_delete(t->segs[i].tree);
        }
        memmove(&t->segs[k + 1], &t->segs[m + 1], (t->nseg - m - 1) * sizeof(ifl__seg));
        t->nseg -= m - k;
        if (g->tree)
            ts_tree_delete(g->tree);
        g->tree = NULL;
    }
    ifl__seg *g = &t->segs[k];
    long dbytes = (long)ev->new_end_byte - (long)ev->old_end_byte;
    long drows = (long)ev->new_end_point.row - (long)ev->old_end_point.row;
    if (g->tree) {
        uint32_t r0 = g->row;
        TSInputEdit e = {
            .start_byte = (uint32_t)(ev->start_byte - g->start),
            .old_end_byte = (uint32_t)(ev->old_end_byte - g->start),
            .new_end_byte = (uint32_t)(ev->new_end_byte - g->start),
            .start_point = ifl__pt(ev->start_point),
            .old_end_point = ifl__pt(ev->old_end_point),
            .new_end_point = ifl__pt(ev->new_end_point),
        };
        e.start_point.row -= r0;
        e.old_end_point.row -= r0;
        e.new_end_point.row -= r0;
        ts_tree_edit(g->tree, &e);
    }
    g->len = (size_t)((long)g->len + dbytes);
    g->row_count = (uint32_t)((long)g->row_count + drows);
    g->dirty = true;
    g->evicted = false;
    g->errors = -1;
    t->focus = ev->start_byte;
    for (size_t i = k + 1; i < t->nseg; i++) {
        t->segs[i].start = (size_t)((long)t->segs[i].start + dbytes);
        t->segs[i].row = (uint32_t)((long)t->segs[i].row + drows);
    }
    t->len = (size_t)((long)t->len + dbytes);
}

/* Could the edits since the last update have changed how the C/C++ include
 * guard reads, and does it now read differently (found, lost or moved)? The
 * guard is looked for when the buffer is cut afresh; this brings a guard
 * typed in (or taken out) later to the same tree a fresh parse gives. What
 * decides the guard: which lines are directives and which are hidden in
 * comments or strings. An edit changes that only
 * - by removing bytes (what they were is not known here),
 * - by putting code before the #ifndef's `#define NAME` or after the
 *   #endif (fuzz finding 11: a line moved below the #endif; finding 29:
 *   code typed back between the #ifndef and the #define),
 * - on a line with '#': a `;` typed before an `#endif` turns it into a line
 *   that is not a directive (found by fuzz_syntax_edits),
 * - by inserting a comment or string delimiter, a backslash or a line
 *   break, or by typing next to one: a letter typed between `/` and `*`, or
 *   after a backslash in a string, changes what the lexer reads.
 * Only the last two look at text, the edited lines for '#' and the inserted
 * bytes with their two neighbours for the rest: a keystroke in a guarded
 * header cost a whole-file search whenever its line held a `*` (0.78 ms in
 * a 5,156-line header). A line break among the inserted bytes can end a
 * line comment or a string early and let what followed on the line open
 * one: then the edited lines are searched for every delimiter. */
static bool ifl__delim(char c) {
    return c == '/' || c == '*' || c == '"' || c == '\\' || c == '\'';
}

static bool ifl__guard_may_change(ifl_tree *t, const char *s, size_t len) {
    if (strcmp(t->lang, "c") != 0 && strcmp(t->lang, "cpp") != 0)
        return false;
    const ifl__include_guard *gd = &t->guard;
    bool hit = t->edit_deleted || (gd->if_start != SIZE_MAX &&
                                   (t->edit_lo <= gd->head_end || t->edit_hi > gd->endif_end));
    size_t lo = BASE_MIN(t->edit_lo, len), hi = BASE_MIN(t->edit_hi, len);
    bool nl = hi > lo && memchr(s + lo, '\n', hi - lo) != NULL;
    for (size_t i = lo > 0 ? lo - 1 : 0; i < hi + 1 && i < len && !hit; i++)
        hit = ifl__delim(s[i]);
    size_t ls = lo;
    while (ls > 0 && s[ls - 1] != '\n')
        ls--;
    for (size_t i = ls; i < len && !hit; i++) {
        char c = s[i];
        hit = c == '#' || (nl && ifl__delim(c));
        if (c == '\n' && i >= hi)
            break;
    }
    if (!hit)
        return false;
    ifl__include_guard was = t->guard;
    ifl__find_guard(t, s, len);
    return memcmp(&was, &t->guard, sizeof was) != 0;
}

base_status ifl_tree_update(ifl_tree *t, const char *text, size_t len) {
    if (!t || (!text && len))
        return BASE_ERR_INVALID;
    if (len > UINT32_MAX)
        return BASE_ERR_TOO_LARGE;
    if (!text)
        text = "";
    if (!t->rebuild && !t->dirty && t->len == len) {
        /* Reads since the last update parsed dropped trees again: drop
         * them here, between two operations (within one, a read may hold
         * another segment's nodes). */
        if (t->restored)
            ifl__evict(t);
        return BASE_OK;
    }
    /* The text the grammar could not parse in time, unchanged: do not spend
     * the budget on it again. */
    if (t->timed_out && !t->dirty && t->len == len)
        return BASE_ERR_TIMEOUT;
    t->timed_out = false;
    if (t->edited && !t->rebuild && ifl__guard_may_change(t, text, len))
        t->rebuild = true;
    t->edited = false;
    base_status st = BASE_OK;
    if (t->rebuild || t->len != len || t->nseg == 0) {
        t->len = len;
        st = ifl__build(t, text, len);
    } else {
        /* Settling merges at most backwards by one segment per merge, and
         * leaves nothing dirty behind: rescan from the one before. */
        for (size_t i = 0; i < t->nseg && st == BASE_OK;) {
            if (!t->segs[i].dirty && (t->segs[i].tree || t->segs[i].evicted)) {
                i++;
                continue;
            }
            st = ifl__settle(t, text, len, i, i + 1);
            i = i > 0 ? i - 1 : 0;
        }
        for (size_t i = 0; i < t->nseg && st == BASE_OK;) {
            ifl__seg *g = &t->segs[i];
            /* (An evicted segment was looked at when it was parsed.) */
            if (t->seg_bytes && g->tree && g->len > IFL__SEG_SPLIT_FACTOR * t->seg_bytes &&
                !ts_node_has_error(ts_tree_root_node(g->tree)) &&
                (!g->split_len || g->len > g->split_len + t->seg_bytes)) {
                size_t after = i + 1;
                size_t before = t->nseg;
                st = ifl__resplit(t, text, len, i, &after);
                /* Nothing to cut at (one long construct): look again only
                 * once it has grown by another segment's worth. */
                if (st == BASE_OK && t->nseg == before && i < t->nseg)
                    t->segs[i].split_len = t->segs[i].len;
                i = after;
            } else {
                i++;
            }
        }
    }
    if (st != BASE_OK) {
        t->rebuild = true;
        t->len = len;
        t->dirty = false;
        t->timed_out = st == BASE_ERR_TIMEOUT;
        return st;
    }
    t->dirty = false;
    t->errors = -1;
    ifl__evict(t);
    return BASE_OK;
}

/* ---- reading ------------------------------------------------------------------------- */

bool ifl__tree_at(ifl_tree *t, const char *s, size_t pos, TSNode *root, size_t *base) {
    if (!t || t->nseg == 0 || t->rebuild || t->dirty)
        return false;
    size_t i = ifl__seg_index(t, pos);
    const ifl__seg *g = &t->segs[i];
    t->focus = pos;
    if (!g->tree) {
        if (!g->evicted || ifl__seg_parse(t, s, i) != BASE_OK || !g->tree)
            return false;
        t->restored = true;
    }
    *root = ts_tree_root_node(g->tree);
    *base = g->start;
    return true;
}

size_t ifl_tree_error_count(ifl_tree *t, const char *text, size_t len) {
    if (ifl_tree_update(t, text, len) != BASE_OK)
        return 0;
    if (t->errors < 0) {
        size_t n = 0;
        for (size_t i = 0; i < t->nseg; i++) {
            ifl__seg *g = &t->segs[i];
            if (g->errors < 0)
                g->errors = (long)ifl__count_errors_in(ts_tree_root_node(g->tree), 0, 0, NULL);
            n += (size_t)g->errors;
        }
        t->errors = (long)n;
    }
    return (size_t)t->errors;
}

/* The S-expression of the buffer: the segments' top-level nodes under one
 * root, as a whole-buffer parse prints it. */
char *ifl_tree_sexp(ifl_tree *t, const char *text, size_t len) {
    if (ifl_tree_update(t, text, len) != BASE_OK || t->nseg == 0)
        return NULL;
    for (size_t i = 0; i < t->nseg; i++) {
        if (t->segs[i].tree)
            continue;
        if (ifl__seg_parse(t, text, i) != BASE_OK)
            return NULL;
        t->restored = true;
    }
    if (t->nseg == 1)
        return ts_node_string(ts_tree_root_node(t->segs[0].tree));
    base_buf b;
    base_buf_init(&b);
    base_status st = base_buf_printf(&b, "(%s", ts_node_type(ts_tree_root_node(t->segs[0].tree)));
    for (size_t i = 0; i < t->nseg && st == BASE_OK; i++) {
        char *s = ts_node_string(ts_tree_root_node(t->segs[i].tree));
        if (!s) {
            st = BASE_ERR_NOMEM;
            break;
        }
        /* "(type child child)": keep " child child". */
        size_t n = strlen(s), a = 1;
        while (a < n && s[a] != ' ' && s[a] != ')')
            a++;
        if (a < n && s[a] == ' ' && n > 0)
            st = base_buf_append(&b, s + a, n - 1 - a);
        free(s);
    }
    if (st == BASE_OK)
        st = base_buf_append(&b, ")", 1);
    if (st != BASE_OK) {
        base_buf_deinit(&b);
        return NULL;
    }
    size_t n = 0;
    return base_buf_steal(&b, &n);
}
