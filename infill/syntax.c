/* infill syntax: span location, candidate post-processing and validation.
 *
 * Reading order: language selection; line helpers and the file's
 * indentation style; span location
 * (ifl__locate, the rules documented in docs/SPANS.md); the bracket lexer;
 * validation (ifl__validate); post-processing (ifl__postprocess); the _text
 * entry points, which wrap a throw-away ifl_tree. The trees themselves (one
 * incrementally parsed buffer, kept as segments) are in syntax_tree.c. */
#include "syntax.h"

#include "syntax_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define IFL__MOD "syntax"

const char *ifl_syntax_language(const char *language_id, const char *uri) {
    const char *lang = gr_language_for_id(language_id);
    return lang ? lang : gr_language_for_path(uri);
}

const char *ifl_span_kind_name(ifl_span_kind k) {
    switch (k) {
    case IFL_SPAN_LINE_REST:
        return "line_rest";
    case IFL_SPAN_BLOCK:
        return "block";
    case IFL_SPAN_STATEMENT:
        return "statement";
    case IFL_SPAN_COMMENT:
        return "comment";
    case IFL_SPAN_SELECTION:
        return "selection";
    case IFL_SPAN_LINE_END:
        return "line_end";
    }
    return "?";
}

/* ---- line helpers ----------------------------------------------------------- */

static bool ifl__is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; }

static size_t ifl__line_start(const char *s, size_t pos) {
    while (pos > 0 && s[pos - 1] != '\n')
        pos--;
    return pos;
}

/* End of the line containing pos: the '\n' (or len), before a '\r'. */
static size_t ifl__line_end(const char *s, size_t len, size_t pos) {
    while (pos < len && s[pos] != '\n')
        pos++;
    if (pos > 0 && s[pos - 1] == '\r')
        pos--;
    return pos;
}

static bool ifl__blank(const char *s, size_t a, size_t b) {
    for (size_t i = a; i < b; i++)
        if (!ifl__is_ws(s[i]))
            return false;
    return true;
}

/* The file's indentation: tabs or `width` spaces per level. */
typedef struct ifl__style {
    bool tabs;
    int width;
    bool known; /* the file has indented lines to tell */
} ifl__style;

static int ifl__indent_cols(const char *s, size_t a, size_t b, int width) {
    int cols = 0;
    for (size_t i = a; i < b; i++) {
        if (s[i] == ' ')
            cols++;
        else if (s[i] == '\t')
            cols += width;
        else
            break;
    }
    return cols;
}

/* Indentation (columns) of the line starting at ls. */
static int ifl__line_indent(const char *s, size_t len, size_t ls, int width) {
    return ifl__indent_cols(s, ls, ifl__line_end(s, len, ls), width);
}

static bool ifl__opens_block(const char *lang, const char *s, size_t a, size_t b);

enum { IFL__STYLE_SPAN = 24 * 1024 };

/* Majority vote over indented lines near pos: tab-indented vs space-indented. For
 * spaces, the most common positive step (2, 3, 4 or 8) from a line that
 * opens a block to the next line, so that text inside docstrings and
 * comments does not vote; any step between consecutive lines when no opener
 * is followed by a deeper line. Defaults to 4 spaces. */
static ifl__style ifl__detect_style(const char *lang, const char *s, size_t len, size_t pos) {
    size_t tab_lines = 0, space_lines = 0, steps[9] = {0}, open_steps[9] = {0};
    int prev = -1;
    bool prev_opens = false;
    /* The 48 KiB around pos decide: enough lines to vote, bounded cost. */
    size_t from = pos > IFL__STYLE_SPAN ? ifl__line_start(s, pos - IFL__STYLE_SPAN) : 0;
    size_t to = len - pos > IFL__STYLE_SPAN ? pos + IFL__STYLE_SPAN : len;
    for (size_t ls = from; ls < to;) {
        size_t le = ifl__line_end(s, len, ls);
        if (!ifl__blank(s, ls, le)) {
            if (s[ls] == '\t')
                tab_lines++;
            else if (s[ls] == ' ') {
                size_t i = ls;
                while (i < le && s[i] == ' ')
                    i++;
                if (i < le && s[i] != '\t')
                    space_lines++;
            }
            if (s[ls] != '\t') {
                int ind = ifl__indent_cols(s, ls, le, 4);
                if (prev >= 0 && ind > prev && ind - prev <= 8) {
                    steps[ind - prev]++;
                    if (prev_opens)
                        open_steps[ind - prev]++;
                }
                prev = ind;
                prev_opens = ifl__opens_block(lang, s, ls, le);
            }
        }
        while (le < len && s[le] != '\n')
            le++;
        ls = le + 1;
    }
    ifl__style st = {
        .tabs = tab_lines > space_lines, .width = 4, .known = tab_lines + space_lines > 0};
    size_t any_open = 0;
    for (size_t i = 0; i < BASE_ARRAY_LEN(open_steps); i++)
        any_open += open_steps[i];
    const size_t *votes = any_open ? open_steps : steps;
    size_t best = 0;
    static const int cands[] = {4, 2, 8, 3};
    for (size_t i = 0; i < BASE_ARRAY_LEN(cands); i++)
        if (votes[cands[i]] > best) {
            best = votes[cands[i]];
            st.width = cands[i];
        }
    return st;
}

/* Start of the previous non-blank line before the line starting at ls, or
 * SIZE_MAX. */
static size_t ifl__prev_nonblank(const char *s, size_t len, size_t ls) {
    while (ls > 0) {
        size_t p = ifl__line_start(s, ls - 1);
        if (!ifl__blank(s, p, ifl__line_end(s, len, p)))
            return p;
        ls = p;
    }
    return SIZE_MAX;
}

/* Start of the next non-blank line after the line containing pos, or SIZE_MAX. */
static size_t ifl__next_nonblank(const char *s, size_t len, size_t pos) {
    size_t i = pos;
    while (i < len && s[i] != '\n')
        i++;
    while (i < len) {
        size_t ls = i + 1;
        size_t le = ifl__line_end(s, len, ls);
        if (ls < len && !ifl__blank(s, ls, le))
            return ls;
        i = le;
        while (i < len && s[i] != '\n')
            i++;
    }
    return SIZE_MAX;
}

bool ifl__word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

static bool ifl__ends_with_word(const char *s, size_t a, size_t b, const char *w) {
    size_t n = strlen(w);
    if (b - a < n || memcmp(s + b - n, w, n) != 0)
        return false;
    return b - n == a || !ifl__word_char(s[b - n - 1]);
}

static bool ifl__contains_word(const char *s, size_t a, size_t b, const char *w) {
    size_t n = strlen(w);
    for (size_t i = a; i + n <= b; i++)
        if (memcmp(s + i, w, n) == 0 && (i == a || !ifl__word_char(s[i - 1])) &&
            (i + n == b || !ifl__word_char(s[i + n])))
            return true;
    return false;
}

/* Does the code on [a, b) (one line) end by opening a block or a bracketed
 * list that continues on the next lines? */
static bool ifl__opens_block(const char *lang, const char *s, size_t a, size_t b) {
    while (b > a && ifl__is_ws(s[b - 1]))
        b--;
    if (b == a)
        return false;
    char c = s[b - 1];
    if (c == '{' || c == '(' || c == '[')
        return true;
    if (c == ':' && lang && strcmp(lang, "python") == 0)
        return true;
    if (ifl__ends_with_word(s, a, b, "then") || ifl__ends_with_word(s, a, b, "do") ||
        ifl__ends_with_word(s, a, b, "else") || ifl__ends_with_word(s, a, b, "repeat"))
        return true;
    /* Lua: `function f(x)` opens a body without a bracket. */
    if (c == ')' && lang && strcmp(lang, "lua") == 0 && ifl__contains_word(s, a, b, "function"))
        return true;
    return false;
}

/* ---- span location -------------------------------------------------------- */

/* Token budget N of the first run, the largest it may grow to when the
 * model fills the hole without EOS, and the line limit per span kind
 * (docs/SPANS.md). Small first budgets keep short middles from
 * over-generating; the growth serves the long ones. */
enum {
    IFL__N_LINE_REST = 16,
    IFL__MAX_LINE_REST = 48,
    IFL__N_LINE_END = 16,
    IFL__MAX_LINE_END = 64,
    IFL__N_COMMENT = 16,
    IFL__MAX_COMMENT = 48,
    IFL__N_STATEMENT = 16,
    IFL__MAX_STATEMENT = 128,
    IFL__N_BLOCK = 32,
    IFL__MAX_BLOCK = 256,
    IFL__MAX_SELECTION = 1024,
    IFL__LINES_STATEMENT = 12,
    IFL__LINES_BLOCK = 32,
    /* Validation parses only the window around the hole when that skips at
     * least this many bytes of the file. */
    IFL__WINDOW_MIN_SAVING = 16 * 1024,
};

/* Estimated tokens of n bytes of code: 3.5 bytes per token, rounded up. */
static int ifl__est_tokens(size_t n) { return (int)((2 * n + 6) / 7); }

/* Nodes captured by spans.scm that contain pos: the innermost comment, string
 * and body, or null nodes. */
typedef struct ifl__around {
    TSNode comment, string, body;
} ifl__around;

static bool ifl__closes_itself(const char *s, TSNode n) {
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    if (b - a < 2)
        return false;
    static const char *const closers[] = {"*/", "]]", "-->", "\"", "'", "`"};
    for (size_t i = 0; i < BASE_ARRAY_LEN(closers); i++) {
        size_t k = strlen(closers[i]);
        if (b - a >= k + 1 && memcmp(s + b - k, closers[i], k) == 0)
            return true;
    }
    return false;
}

static bool ifl__node_smaller(TSNode a, TSNode b) {
    if (ts_node_is_null(b))
        return true;
    return ts_node_end_byte(a) - ts_node_start_byte(a) <
           ts_node_end_byte(b) - ts_node_start_byte(b);
}

/* CPU time one span query may take on the loop thread. */
#define IFL__QUERY_BUDGET_NS (50 * 1000000ull)

typedef struct ifl__qbudget {
    uint64_t deadline_ns;
    bool expired;
} ifl__qbudget;

static bool ifl__query_over(TSQueryCursorState *state) {
    ifl__qbudget *b = state->payload;
    if (!b->expired && base_thread_cpu_ns() > b->deadline_ns)
        b->expired = true;
    return b->expired;
}

static ifl__around ifl__find_around(ifl_tree *t, const char *s, size_t len, size_t pos) {
    ifl__around ar;
    memset(&ar, 0, sizeof(ar));
    TSNode root;
    size_t base = 0;
    if (!t || !t->spans || !ifl__tree_at(t, s, pos, &root, &base))
        return ar;
    /* Node positions are relative to the segment. */
    s += base;
    len -= base;
    pos -= base;
    uint32_t lo = pos > 0 ? (uint32_t)pos - 1 : 0;
    uint32_t hi = pos + 1 < len ? (uint32_t)pos + 1 : (uint32_t)len;
    ts_query_cursor_set_byte_range(t->qc, lo, hi > lo ? hi : lo + 1);
    /* Matching costs the nesting depth at the cursor squared (every
     * enclosing body is a match): 100,000 nested braces took minutes. Past
     * its budget the query stops and the span falls back to the line rules. */
    ifl__qbudget qb = {base_thread_cpu_ns() + IFL__QUERY_BUDGET_NS, false};
    TSQueryCursorOptions qo = {.payload = &qb, .progress_callback = ifl__query_over};
    ts_query_cursor_exec_with_options(t->qc, t->spans, root, &qo);
    TSQueryMatch m;
    while (ts_query_cursor_next_match(t->qc, &m)) {
        for (uint16_t i = 0; i < m.capture_count; i++) {
            TSNode n = m.captures[i].node;
            uint32_t id = m.captures[i].index;
            size_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
            if (id == t->cap_comment || id == t->cap_string) {
                /* Inside when strictly within, or at the end of one that does
                 * not close itself (a line comment runs to the line end, an
                 * unterminated string is still open). */
                bool in = a < pos && (pos < b || (pos == b && !ifl__closes_itself(s, n)));
                if (in && id == t->cap_comment && ifl__node_smaller(n, ar.comment))
                    ar.comment = n;
                if (in && id == t->cap_string && ifl__node_smaller(n, ar.string))
                    ar.string = n;
            } else if (id == t->cap_body) {
                if (a < pos && pos < b && ifl__node_smaller(n, ar.body))
                    ar.body = n;
            }
        }
    }
    if (qb.expired) {
        BASE_LOGW("syntax", "span query at byte %zu stopped after its budget: line rules apply",
                  pos + base);
        memset(&ar, 0, sizeof(ar));
    }
    return ar;
}

/* A body node with no named children other than comments. */
static bool ifl__body_empty(TSNode body) {
    uint32_t n = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < n; i++) {
        TSNode c = ts_node_named_child(body, i);
        if (!strstr(ts_node_type(c), "comment"))
            return false;
    }
    return true;
}

static size_t ifl__utf8_back(const char *s, size_t pos) {
    while (pos > 0 && ((unsigned char)s[pos] & 0xC0) == 0x80)
        pos--;
    return pos;
}

/* Widening rule (docs/SPANS.md): a selection end strictly inside a token
 * moves outward to the token's boundary. Tokens are tree-sitter leaves, except
 * inside comments and string contents (and without a tree), where a token is a
 * run of word characters. Ends always land on UTF-8 boundaries. */
static size_t ifl__widen(ifl_tree *t, const char *s, size_t len, size_t pos, bool is_start) {
    if (pos == 0 || pos >= len)
        return pos;
    TSNode root;
    size_t base = 0;
    if (t && ifl__tree_at(t, s, pos, &root, &base)) {
        TSNode leaf =
            ts_node_descendant_for_byte_range(root, (uint32_t)(pos - base), (uint32_t)(pos - base));
        size_t a = base + ts_node_start_byte(leaf), b = base + ts_node_end_byte(leaf);
        const char *type = ts_node_type(leaf);
        bool textual = strstr(type, "comment") || strstr(type, "string") ||
                       strstr(type, "heredoc") || strstr(type, "fragment");
        if (ts_node_child_count(leaf) == 0 && !textual && a < pos && pos < b)
            return is_start ? a : b;
    }
    if (ifl__word_char(s[pos - 1]) && ifl__word_char(s[pos])) {
        if (is_start)
            while (pos > 0 && ifl__word_char(s[pos - 1]))
                pos--;
        else
            while (pos < len && ifl__word_char(s[pos]))
                pos++;
    }
    if (is_start)
        return ifl__utf8_back(s, pos);
    while (pos < len && ((unsigned char)s[pos] & 0xC0) == 0x80)
        pos++;
    return pos;
}

static void ifl__set(ifl_span *o, ifl_span_kind k, bool ml, int n, int n_max, int lines,
                     const char *why) {
    o->kind = k;
    o->multiline = ml;
    o->n_tokens = n;
    o->n_max = n_max;
    o->max_lines = ml ? lines : 1;
    o->reason = why;
}

static base_status ifl__locate(ifl_tree *t, const char *lang, const char *s, size_t len,
                               size_t cursor, size_t sel_start, size_t sel_end, ifl_span *o) {
    if (!s || !o)
        return BASE_ERR_INVALID;
    memset(o, 0, sizeof(*o));
    o->language = lang;
    bool sel = sel_end > sel_start;
    if (cursor > len || sel_end > len || sel_start > sel_end)
        return BASE_ERR_RANGE;
    if (t) {
        base_status st = ifl_tree_update(t, s, len);
        if (st != BASE_OK)
            return st;
    }
    if (sel) {
        size_t a = ifl__widen(t, s, len, sel_start, true);
        size_t b = ifl__widen(t, s, len, sel_end, false);
        o->hole_start = a;
        o->hole_end = b;
        size_t lines = 1;
        for (size_t i = a; i < b; i++)
            lines += s[i] == '\n';
        bool ml = lines > 1;
        int n = BASE_MIN(2 * ifl__est_tokens(b - a) + 16, IFL__MAX_SELECTION);
        ifl__set(o, IFL_SPAN_SELECTION, ml, n, BASE_MIN(2 * n, IFL__MAX_SELECTION),
                 (int)(2 * lines + 2),
                 ml ? "selection: regenerate the selected lines"
                    : "selection: regenerate the selected text on its line");
        return BASE_OK;
    }
    o->hole_start = o->hole_end = cursor;
    ifl__style style = ifl__detect_style(lang, s, len, cursor);
    size_t ls = ifl__line_start(s, cursor), le = ifl__line_end(s, len, cursor);
    if (cursor > le)
        le = cursor; /* cursor between '\r' and '\n' */
    bool prefix_blank = ifl__blank(s, ls, cursor);
    bool rest_blank = ifl__blank(s, cursor, le);

    ifl__around ar = ifl__find_around(t, s, len, cursor);
    if (!ts_node_is_null(ar.comment) || !ts_node_is_null(ar.string)) {
        ifl__set(o, IFL_SPAN_COMMENT, false, IFL__N_COMMENT, IFL__MAX_COMMENT, 1,
                 !ts_node_is_null(ar.comment) ? "inside a comment: short, single line"
                                              : "inside a string: short, single line");
        return BASE_OK;
    }
    if (!rest_blank) {
        if (prefix_blank)
            ifl__set(o, IFL_SPAN_STATEMENT, true, IFL__N_STATEMENT, IFL__MAX_STATEMENT,
                     IFL__LINES_STATEMENT,
                     "cursor in the indentation of a code line: whole lines before it");
        else
            ifl__set(o, IFL_SPAN_LINE_REST, false, IFL__N_LINE_REST, IFL__MAX_LINE_REST, 1,
                     "mid-line: single line, up to the existing rest of the line");
        return BASE_OK;
    }
    int width = style.width;
    if (!prefix_blank) {
        if (ifl__opens_block(lang, s, ls, cursor)) {
            size_t nx = ifl__next_nonblank(s, len, cursor);
            int ind = ifl__line_indent(s, len, ls, width);
            if (nx == SIZE_MAX || ifl__line_indent(s, len, nx, width) <= ind)
                ifl__set(o, IFL_SPAN_BLOCK, true, IFL__N_BLOCK, IFL__MAX_BLOCK, IFL__LINES_BLOCK,
                         "line opens an empty block: multi-line, up to the block end");
            else
                ifl__set(o, IFL_SPAN_STATEMENT, true, IFL__N_STATEMENT, IFL__MAX_STATEMENT,
                         IFL__LINES_STATEMENT,
                         "line opens a block that has a body: a first statement");
        } else {
            ifl__set(o, IFL_SPAN_LINE_END, false, IFL__N_LINE_END, IFL__MAX_LINE_END, 1,
                     "end of a line: finish the line");
        }
        return BASE_OK;
    }
    size_t p = ifl__prev_nonblank(s, len, ls);
    size_t nx = ifl__next_nonblank(s, len, cursor);
    bool empty_body = !ts_node_is_null(ar.body) && ifl__body_empty(ar.body);
    if (p != SIZE_MAX && ifl__opens_block(lang, s, p, ifl__line_end(s, len, p))) {
        int pind = ifl__line_indent(s, len, p, width);
        if (nx == SIZE_MAX || ifl__line_indent(s, len, nx, width) <= pind)
            empty_body = true;
    }
    if (empty_body)
        ifl__set(o, IFL_SPAN_BLOCK, true, IFL__N_BLOCK, IFL__MAX_BLOCK, IFL__LINES_BLOCK,
                 "empty line in an empty body: multi-line, up to the block end");
    else
        ifl__set(o, IFL_SPAN_STATEMENT, true, IFL__N_STATEMENT, IFL__MAX_STATEMENT,
                 IFL__LINES_STATEMENT,
                 "empty line between statements: one statement or a few lines");
    return BASE_OK;
}

static bool ifl__closer_line(const char *s, size_t a, size_t b);

static bool ifl__closer_line_at(const char *s, size_t len, size_t ls) {
    return ifl__closer_line(s, ls, ifl__line_end(s, len, ls));
}

/* ---- bracket lexer ------------------------------------------------------------
 * Counts (), [] and {} outside comments and strings, resumably, so that the
 * prefix is lexed once and the suffix after the empty hole and after the
 * candidate. A lexer, not a parser: it only needs to agree with itself. */

const ifl__lexdef *ifl__lexdef_for(const char *lang) {
    static const ifl__lexdef cfam = {.line_comment = "//",
                                     .block_open = "/*",
                                     .block_close = "*/",
                                     .squote = true,
                                     .parens = true,
                                     .comment_cont = true};
    static const ifl__lexdef java = {.line_comment = "//",
                                     .block_open = "/*",
                                     .block_close = "*/",
                                     .squote = true,
                                     .triple = true,
                                     .parens = true};
    static const ifl__lexdef jsfam = {.line_comment = "//",
                                      .block_open = "/*",
                                      .block_close = "*/",
                                      .squote = true,
                                      .backtick = true,
                                      .parens = true};
    /* Rust strings may span lines; '"' is a char literal, 'a a lifetime. */
    static const ifl__lexdef rust = {.line_comment = "//",
                                     .block_open = "/*",
                                     .block_close = "*/",
                                     .parens = true,
                                     .ml_quotes = true,
                                     .char_lits = true};
    static const ifl__lexdef py = {
        .line_comment = "#", .squote = true, .triple = true, .parens = true};
    /* tree-sitter-lua reads a quoted string over line breaks. */
    static const ifl__lexdef lua = {
        .line_comment = "--", .squote = true, .parens = true, .ml_quotes = true, .lua_long = true};
    static const ifl__lexdef sh = {
        .line_comment = "#", .squote = true, .hash_at_word = true, .ml_quotes = true};
    static const ifl__lexdef json = {
        .line_comment = "//", .block_open = "/*", .block_close = "*/", .parens = true};
    if (!lang)
        return NULL;
    if (!strcmp(lang, "c") || !strcmp(lang, "cpp"))
        return &cfam;
    if (!strcmp(lang, "java"))
        return &java;
    if (!strcmp(lang, "javascript") || !strcmp(lang, "typescript") || !strcmp(lang, "tsx") ||
        !strcmp(lang, "go"))
        return &jsfam;
    if (!strcmp(lang, "rust"))
        return &rust;
    if (!strcmp(lang, "python"))
        return &py;
    if (!strcmp(lang, "lua"))
        return &lua;
    if (!strcmp(lang, "bash"))
        return &sh;
    if (!strcmp(lang, "json"))
        return &json;
    return NULL;
}

static void ifl__lex_bracket(ifl__lex *lx, int k, bool open) { lx->bal[k] += open ? 1 : -1; }

static bool ifl__at(const char *s, size_t n, size_t i, const char *w) {
    /* The first byte first: the lexer asks this at every byte of code, and
     * strlen + memcmp there were most of the C include guard's search
     * (a keystroke in a 5,156-line guarded header: ~3 ms). */
    if (!w[0])
        return i <= n;
    if (i >= n || s[i] != w[0])
        return false;
    size_t k = strlen(w);
    return i + k <= n && memcmp(s + i, w, k) == 0;
}

/* Lua long brackets: `[` `=`* `[` at i opens one of that level. */
static bool ifl__lua_long_open(const char *s, size_t n, size_t i, int *level) {
    if (i >= n || s[i] != '[')
        return false;
    size_t j = i + 1;
    while (j < n && s[j] == '=')
        j++;
    if (j >= n || s[j] != '[')
        return false;
    *level = (int)(j - i - 1);
    return true;
}

static bool ifl__lua_long_close(const char *s, size_t n, size_t i, int level) {
    size_t j = i + 1;
    for (int k = 0; k < level; k++, j++)
        if (j >= n || s[j] != '=')
            return false;
    return j < n && s[j] == ']';
}

void ifl__lex_run(const ifl__lexdef *d, ifl__lex *lx, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        switch (lx->st) {
        case IFL__LX_CODE:
            if (d->lua_long && (c == '[' || ifl__at(s, n, i, "--[")) &&
                ifl__lua_long_open(s, n, c == '[' ? i : i + 2, &lx->level)) {
                /* A comment or a string: neither counts brackets. */
                lx->st = IFL__LX_BLOCK_COMMENT;
                i += (size_t)(c == '[' ? 1 : 3) + (size_t)lx->level;
            } else if (c == '\\' && d->ml_quotes && i + 1 < n) {
                i++; /* shell: an escaped quote or bracket is a plain character */
            } else if (d->block_open && ifl__at(s, n, i, d->block_open)) {
                lx->st = IFL__LX_BLOCK_COMMENT;
                i += strlen(d->block_open) - 1;
            } else if (d->line_comment && ifl__at(s, n, i, d->line_comment) &&
                       (!d->hash_at_word || lx->prev == 0 || ifl__is_ws(lx->prev) ||
                        lx->prev == '\n')) {
                lx->st = IFL__LX_LINE_COMMENT;
            } else if (d->triple && (ifl__at(s, n, i, "\"\"\"") || ifl__at(s, n, i, "'''"))) {
                lx->st = c == '"' ? IFL__LX_TDQ : IFL__LX_TSQ;
                i += 2;
            } else if (c == '"') {
                lx->st = IFL__LX_DQ;
            } else if (c == '\'' && d->char_lits) {
                /* A character literal ('x', '"', '\n', '\u{1F600}', one UTF-8
                 * character) is skipped; a quote that closes none is a
                 * lifetime ('a) and means nothing here. */
                size_t k = i + 1;
                if (k < n && s[k] == '\\') {
                    k += 2;
                    while (k < n && k < i + 12 && s[k] != '\'' && s[k] != '\n')
                        k++;
                } else if (k < n) {
                    k++;
                    while (k < n && ((unsigned char)s[k] & 0xC0) == 0x80)
                        k++;
                }
                if (k < n && s[k] == '\'')
                    i = k;
            } else if (c == '\'' && d->squote) {
                lx->st = IFL__LX_SQ;
            } else if (c == '`' && d->backtick) {
                lx->st = IFL__LX_BT;
            } else if ((c == '(' || c == ')') && d->parens) {
                ifl__lex_bracket(lx, 0, c == '(');
            } else if (c == '[' || c == ']') {
                ifl__lex_bracket(lx, 1, c == '[');
            } else if (c == '{' || c == '}') {
                ifl__lex_bracket(lx, 2, c == '{');
            }
            break;
        case IFL__LX_LINE_COMMENT:
            /* tree-sitter-c's comment regex escapes a line break after a
             * backslash (`\` CR LF too): the comment runs on. */
            if (d->comment_cont && lx->prev == '\\' && c == '\r' && i + 1 < n && s[i + 1] == '\n')
                continue;
            if (c == '\n' && !(d->comment_cont && lx->prev == '\\'))
                lx->st = IFL__LX_CODE;
            break;
        case IFL__LX_BLOCK_COMMENT:
            if (d->lua_long) {
                if (c == ']' && ifl__lua_long_close(s, n, i, lx->level)) {
                    lx->st = IFL__LX_CODE;
                    i += 1 + (size_t)lx->level;
                }
            } else if (ifl__at(s, n, i, d->block_close)) {
                lx->st = IFL__LX_CODE;
                i += strlen(d->block_close) - 1;
            }
            break;
        case IFL__LX_DQ:
        case IFL__LX_SQ:
            /* Single-line literals end at their quote or, unterminated, at the
             * line end; shell quotes run on over lines. */
            if (c == '\\' && i + 1 < n && s[i + 1] != '\n')
                i++;
            else if ((c == '\n' && !d->ml_quotes) || c == (lx->st == IFL__LX_DQ ? '"' : '\''))
                lx->st = IFL__LX_CODE;
            break;
        case IFL__LX_BT:
            if (c == '\\' && i + 1 < n)
                i++;
            else if (c == '`')
                lx->st = IFL__LX_CODE;
            break;
        case IFL__LX_TDQ:
        case IFL__LX_TSQ:
            if (c == '\\' && i + 1 < n)
                i++;
            else if (ifl__at(s, n, i, lx->st == IFL__LX_TDQ ? "\"\"\"" : "'''")) {
                lx->st = IFL__LX_CODE;
                i += 2;
            }
            break;
        }
        lx->prev = s[i];
    }
}

/* ---- validation ---------------------------------------------------------------- */

/* A line that starts a top-level construct: code in column 0 that is not a
 * closer ("}", "end"), a block brace or a comment. */
static bool ifl__toplevel_line(const char *s, size_t len, size_t ls) {
    if (ls >= len || ifl__is_ws(s[ls]) || s[ls] == '\n' || strchr("#{/*-", s[ls]))
        return false;
    return !ifl__closer_line_at(s, len, ls);
}

/* The window validation looks at: from the last top-level line before the
 * hole's line to the next one after it (or the file's ends). An imbalance
 * or error inside it is the hole's to keep or fix; one elsewhere belongs to
 * other code. */
static void ifl__window(const char *s, size_t len, size_t hs, size_t he, size_t *ws, size_t *we) {
    size_t rs = ifl__line_start(s, hs);
    while (rs > 0) {
        rs = ifl__line_start(s, rs - 1);
        if (ifl__toplevel_line(s, len, rs))
            break;
    }
    *ws = rs;
    *we = len;
    for (size_t i = he; i < len; i++)
        if (s[i] == '\n' && ifl__toplevel_line(s, len, i + 1)) {
            *we = i + 1;
            break;
        }
}

/* Parses the window [ws, we) of s with [hs, he) replaced by ins from
 * scratch and counts its syntax errors (and those inside ins). */
static base_status ifl__errors_window(ifl_tree *t, const char *s, size_t ws, size_t we, size_t hs,
                                      size_t he, const char *ins, size_t ins_len, size_t *errors,
                                      size_t *inside) {
    size_t nlen = (hs - ws) + ins_len + (we - he);
    if (nlen > UINT32_MAX)
        return BASE_ERR_TOO_LARGE;
    char *buf = malloc(nlen + 1);
    if (!buf)
        return BASE_ERR_NOMEM;
    memcpy(buf, s + ws, hs - ws);
    if (ins_len)
        memcpy(buf + (hs - ws), ins, ins_len);
    memcpy(buf + (hs - ws) + ins_len, s + he, we - he);
    buf[nlen] = 0;
    base_status st = BASE_OK;
    TSTree *nt = ifl__parse(t, NULL, buf, (uint32_t)nlen, &st);
    free(buf);
    if (!nt)
        return st;
    *errors = ifl__count_errors_in(ts_tree_root_node(nt), hs - ws, hs - ws + ins_len, inside);
    ts_tree_delete(nt);
    return BASE_OK;
}

/* Parses the segment of t that holds the hole [hs, he) with the hole
 * replaced by ins, incrementally from the segment's tree, and counts its
 * syntax errors. ERR_RANGE when the hole spans segments. */
static base_status ifl__errors_with(ifl_tree *t, const char *s, size_t hs, size_t he,
                                    const char *ins, size_t ins_len, size_t *errors,
                                    size_t *inside) {
    TSNode root;
    size_t base = 0;
    if (!ifl__tree_at(t, s, hs, &root, &base))
        return BASE_ERR_INVALID;
    const ifl__seg *g = NULL;
    for (size_t i = 0; i < t->nseg && !g; i++)
        if (t->segs[i].start == base)
            g = &t->segs[i];
    if (!g || he > g->start + g->len)
        return BASE_ERR_RANGE;
    size_t slen = g->len, rs = hs - base, re = he - base;
    if (rs == re && ins_len == 0) {
        *errors = ifl__count_errors_in(root, 0, 0, inside);
        return BASE_OK;
    }
    size_t nlen = slen - (re - rs) + ins_len;
    if (nlen > UINT32_MAX)
        return BASE_ERR_TOO_LARGE;
    const char *seg = s + base;
    char *buf = malloc(nlen + 1);
    if (!buf)
        return BASE_ERR_NOMEM;
    memcpy(buf, seg, rs);
    if (ins_len)
        memcpy(buf + rs, ins, ins_len);
    memcpy(buf + rs + ins_len, seg + re, slen - re);
    buf[nlen] = 0;
    TSTree *copy = ts_tree_copy(g->tree);
    /* Points: rows and byte columns of the edit's ends, in the segment. */
    TSPoint sp = {0, 0}, op, np;
    for (size_t i = 0; i < rs; i++) {
        if (seg[i] == '\n') {
            sp.row++;
            sp.column = 0;
        } else
            sp.column++;
    }
    op = sp;
    for (size_t i = rs; i < re; i++) {
        if (seg[i] == '\n') {
            op.row++;
            op.column = 0;
        } else
            op.column++;
    }
    np = sp;
    for (size_t i = 0; i < ins_len; i++) {
        if (ins[i] == '\n') {
            np.row++;
            np.column = 0;
        } else
            np.column++;
    }
    TSInputEdit e = {(uint32_t)rs, (uint32_t)re, (uint32_t)(rs + ins_len), sp, op, np};
    ts_tree_edit(copy, &e);
    base_status st = BASE_OK;
    TSTree *nt = ifl__parse(t, copy, buf, (uint32_t)nlen, &st);
    ts_tree_delete(copy);
    free(buf);
    if (!nt)
        return st;
    *errors = ifl__count_errors_in(ts_tree_root_node(nt), rs, rs + ins_len, inside);
    ts_tree_delete(nt);
    return BASE_OK;
}

/* t follows text s. OK when the candidate adds no syntax errors and does not
 * unbalance brackets against the suffix, ERR_PARSE otherwise. */
static base_status ifl__validate(ifl_tree *t, const char *s, size_t len, size_t hs, size_t he,
                                 const char *cand, size_t cl) {
    base_status st = BASE_OK;
    if (ifl__blank(cand, 0, cl))
        return BASE_ERR_PARSE;
    size_t base_err = 0, cand_err = 0, inside = 0;
    size_t ws = 0, we = len;
    ifl__window(s, len, hs, he, &ws, &we);
    /* A large file: parsing the window (the top-level construct around the
     * hole) from scratch beats reparsing even its segment, as grammars whose
     * subtrees are fragile (Python's statements) reuse little. Otherwise the
     * segment holding the hole is reparsed incrementally, with and without
     * the candidate. */
    bool window = len - (we - ws) >= IFL__WINDOW_MIN_SAVING;
    if (!window) {
        if ((st = ifl_tree_update(t, s, len)) != BASE_OK)
            return st;
        st = ifl__errors_with(t, s, hs, he, "", 0, &base_err, NULL);
        if (st == BASE_OK)
            st = ifl__errors_with(t, s, hs, he, cand, cl, &cand_err, &inside);
        if (st == BASE_ERR_RANGE)
            window = true; /* a hole across segments (a selection) */
        else if (st != BASE_OK)
            return st;
    }
    if (window) {
        if ((st = ifl__errors_window(t, s, ws, we, hs, he, "", 0, &base_err, NULL)) != BASE_OK ||
            (st = ifl__errors_window(t, s, ws, we, hs, he, cand, cl, &cand_err, &inside)) !=
                BASE_OK)
            return st;
    }
    /* More errors than without the candidate, or as many but now inside the
     * candidate's own text (it replaced an error with another). */
    if (cand_err > base_err || (inside > 0 && cand_err >= base_err)) {
        BASE_LOGD(IFL__MOD, "candidate rejected: %zu syntax errors (%zu inside), %zu without it",
                  cand_err, inside, base_err);
        return BASE_ERR_PARSE;
    }
    /* Brackets, per kind, within the window: the candidate may close
     * brackets the window leaves open (or open ones it closes too often), but
     * the balance must stay between zero and its value without the
     * candidate, and an imbalance must not stay as it is (the candidate is
     * the missing part). */
    const ifl__lexdef *d = ifl__lexdef_for(t->lang);
    if (d) {
        ifl__lex pre = {0}, empty, with;
        ifl__lex_run(d, &pre, s + ws, hs - ws);
        empty = pre;
        ifl__lex_run(d, &empty, s + he, we - he);
        with = pre;
        ifl__lex_run(d, &with, cand, cl);
        ifl__lex_run(d, &with, s + he, we - he);
        for (int k = 0; k < 3; k++) {
            long b0 = empty.bal[k], b1 = with.bal[k];
            bool bad = b0 >= 0 ? (b1 < 0 || b1 > b0) : (b1 > 0 || b1 < b0);
            if (b1 == b0 && b0 != 0)
                bad = true;
            if (bad) {
                BASE_LOGD(IFL__MOD, "candidate rejected: bracket balance %ld -> %ld", b0, b1);
                return BASE_ERR_PARSE;
            }
        }
    }
    return BASE_OK;
}

/* ---- post-processing --------------------------------------------------------- */

/* One line of a candidate: [a, b) without its '\n'. */
typedef struct ifl__line {
    size_t a, b;
} ifl__line;

static size_t ifl__split_lines(const char *s, size_t n, ifl__line **out) {
    size_t count = 1;
    for (size_t i = 0; i < n; i++)
        count += s[i] == '\n';
    ifl__line *v = malloc(count * sizeof(*v));
    if (!v)
        return 0;
    size_t k = 0, a = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '\n') {
            v[k].a = a;
            v[k].b = i;
            k++;
            a = i + 1;
        }
    *out = v;
    return k;
}

/* Bytes of [a, b) without trailing whitespace. */
static size_t ifl__rtrim(const char *s, size_t a, size_t b) {
    while (b > a && ifl__is_ws(s[b - 1]))
        b--;
    return b;
}

/* A line made only of closing brackets, separators and block-ending words. */
static bool ifl__closer_line(const char *s, size_t a, size_t b) {
    while (a < b && ifl__is_ws(s[a]))
        a++;
    b = ifl__rtrim(s, a, b);
    if (a == b)
        return false;
    static const char *const words[] = {"end", "fi", "done", "esac", "until"};
    for (size_t i = 0; i < BASE_ARRAY_LEN(words); i++) {
        size_t k = strlen(words[i]);
        if (b - a >= k && memcmp(s + a, words[i], k) == 0 &&
            (b - a == k || !ifl__word_char(s[a + k])))
            return true;
    }
    for (size_t i = a; i < b; i++)
        if (!strchr(")]};, \t", s[i]))
            return false;
    return true;
}

/* Does the line [a, b) of x equal line [c, d) of y, ignoring trailing
 * whitespace? */
static bool ifl__same_line(const char *x, size_t a, size_t b, const char *y, size_t c, size_t d) {
    b = ifl__rtrim(x, a, b);
    d = ifl__rtrim(y, c, d);
    return b - a == d - c && memcmp(x + a, y + c, b - a) == 0;
}

static bool ifl__same_trimmed(const char *x, size_t a, size_t b, const char *y, size_t c,
                              size_t d) {
    while (a < b && ifl__is_ws(x[a]))
        a++;
    while (c < d && ifl__is_ws(y[c]))
        c++;
    return ifl__same_line(x, a, b, y, c, d);
}

/* Do candidate lines i.. repeat the code after the hole from its line nxs
 * on? Line i equals line nxs; so must each following non-blank candidate
 * line the next non-blank suffix line, for two lines or up to the
 * candidate's end. A candidate that equals the next line once and then goes
 * elsewhere wrote code that happens to equal it (a branch appending the same
 * item, say), not a copy of the suffix. */
static bool ifl__repeats_suffix(const char *c, const ifl__line *L, size_t n, size_t i,
                                const char *s, size_t len, size_t nxs) {
    size_t k = nxs;
    int matched = 0;
    for (size_t j = i; j < n; j++) {
        if (ifl__blank(c, L[j].a, L[j].b))
            continue;
        if (k == SIZE_MAX)
            return true; /* past the end of the file: the copy ran over */
        if (!ifl__same_trimmed(c, L[j].a, L[j].b, s, k, ifl__line_end(s, len, k)))
            return false;
        if (++matched >= 2)
            return true;
        k = ifl__next_nonblank(s, len, k);
    }
    return true;
}

/* Re-indents lines [first, n) of the candidate in buf to the file's style.
 * `base` is the indentation (columns) below which the candidate's own step
 * is not applied. Lines keep any sub-step remainder as spaces. */
static base_status ifl__reindent(base_buf *buf, size_t first, ifl__style fs) {
    ifl__line *L = NULL;
    size_t n = ifl__split_lines(buf->data, buf->len, &L);
    if (!n)
        return BASE_ERR_NOMEM;
    /* The candidate's own unit: tabs if any indented line starts with a tab,
     * else the smallest positive step between distinct space indentations. */
    bool ctabs = false;
    int min_ind = -1, step = 0;
    int inds[512];
    size_t ni = 0;
    for (size_t i = first; i < n; i++) {
        if (ifl__blank(buf->data, L[i].a, L[i].b))
            continue;
        if (buf->data[L[i].a] == '\t')
            ctabs = true;
        int ind = ifl__indent_cols(buf->data, L[i].a, L[i].b, fs.width);
        if (ni < BASE_ARRAY_LEN(inds))
            inds[ni++] = ind;
        if (min_ind < 0 || ind < min_ind)
            min_ind = ind;
    }
    if (min_ind < 0) {
        free(L);
        return BASE_OK;
    }
    for (size_t i = 0; i < ni; i++)
        for (size_t j = 0; j < ni; j++) {
            int dlt = inds[i] - inds[j];
            if (dlt > 0 && (step == 0 || dlt < step))
                step = dlt;
        }
    bool convert_step = !ctabs && step > 0 && step != fs.width &&
                        (step == 2 || step == 4 || step == 3 || step == 8);
    if (convert_step)
        for (size_t i = 0; i < ni; i++)
            if ((inds[i] - min_ind) % step != 0)
                convert_step = false;
    bool mismatch = fs.known && (convert_step || ctabs != fs.tabs);
    if (!mismatch) {
        free(L);
        return BASE_OK;
    }
    base_buf nb;
    base_buf_init(&nb);
    base_status st = BASE_OK;
    for (size_t i = 0; i < n && st == BASE_OK; i++) {
        size_t a = L[i].a, b = L[i].b;
        if (i >= first && !ifl__blank(buf->data, a, b)) {
            int ind = ifl__indent_cols(buf->data, a, b, fs.width);
            while (a < b && (buf->data[a] == ' ' || buf->data[a] == '\t'))
                a++;
            int cols = ind;
            if (convert_step && ind >= min_ind)
                cols = min_ind + ((ind - min_ind) / step) * fs.width;
            int levels = fs.tabs ? cols / fs.width : 0;
            int spaces = fs.tabs ? cols % fs.width : cols;
            for (int k = 0; k < levels && st == BASE_OK; k++)
                st = base_buf_append(&nb, "\t", 1);
            for (int k = 0; k < spaces && st == BASE_OK; k++)
                st = base_buf_append(&nb, " ", 1);
        }
        if (st == BASE_OK)
            st = base_buf_append(&nb, buf->data + a, b - a);
        if (st == BASE_OK && i + 1 < n)
            st = base_buf_append(&nb, "\n", 1);
    }
    free(L);
    if (st != BASE_OK) {
        base_buf_deinit(&nb);
        return st;
    }
    base_buf_deinit(buf);
    *buf = nb;
    return BASE_OK;
}

/* Columns below which a multi-line completion has left its span: the block
 * body's indentation for BLOCK, the enclosing statement level otherwise. */
static int ifl__span_base_indent(const char *lang, const char *s, size_t len, size_t hs,
                                 const ifl_span *sp, int width) {
    size_t ls = ifl__line_start(s, hs);
    bool prefix_blank = ifl__blank(s, ls, hs);
    size_t p = prefix_blank ? ifl__prev_nonblank(s, len, ls) : ls;
    size_t nx = ifl__next_nonblank(s, len, hs);
    /* Code after the cursor on its own line is the code that follows. */
    if (prefix_blank && !ifl__blank(s, hs, ifl__line_end(s, len, hs)))
        nx = ls;
    if (sp->kind == IFL_SPAN_BLOCK) {
        /* The body is indented deeper than its opener; the completion may
         * go on at the level of the code that follows (an `else`, sibling
         * statements) or, when nothing follows, inside the top-level
         * definition. */
        int opener = p == SIZE_MAX ? 0 : ifl__line_indent(s, len, p, width);
        int follow = nx == SIZE_MAX ? 1 : ifl__line_indent(s, len, nx, width);
        return BASE_MIN(opener + 1, follow);
    }
    /* A statement may dedent out of the block it starts in (ending an `if`),
     * but not below the code that follows it; when nothing follows, not out
     * of the top-level definition it is in. */
    if (nx == SIZE_MAX) {
        bool nested = p != SIZE_MAX && (ifl__line_indent(s, len, p, width) > 0 ||
                                        ifl__opens_block(lang, s, p, ifl__line_end(s, len, p)));
        return nested ? 1 : 0;
    }
    int base = ifl__line_indent(s, len, nx, width);
    if (prefix_blank && hs > ls)
        base = BASE_MIN(base, ifl__indent_cols(s, ls, hs, width));
    if (p != SIZE_MAX) {
        /* ... and it may open the block the following code is in. */
        int pind = ifl__line_indent(s, len, p, width);
        if (ifl__opens_block(lang, s, p, ifl__line_end(s, len, p)))
            pind += width;
        base = BASE_MIN(base, pind);
    }
    return base;
}

/* Longest k with cand[-k:] == rest[:k]. */
static size_t ifl__overlap(const char *c, size_t cn, const char *r, size_t rn) {
    for (size_t k = BASE_MIN(cn, rn); k > 0; k--)
        if (memcmp(c + cn - k, r, k) == 0)
            return k;
    return 0;
}

static long ifl__naive_balance(const char *s, size_t n) {
    long b = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '(' || s[i] == '[' || s[i] == '{')
            b++;
        else if (s[i] == ')' || s[i] == ']' || s[i] == '}')
            b--;
    }
    return b;
}

/* Brackets the document with the hole left empty opens and never closes. */
static long ifl__unclosed(const char *lang, const char *s, size_t len, size_t hs, size_t he) {
    const ifl__lexdef *d = ifl__lexdef_for(lang);
    if (!d)
        return ifl__naive_balance(s, hs) + ifl__naive_balance(s + he, len - he);
    ifl__lex lx = {0};
    ifl__lex_run(d, &lx, s, hs);
    ifl__lex_run(d, &lx, s + he, len - he);
    return lx.bal[0] + lx.bal[1] + lx.bal[2];
}

/* Indentation consistent with blocks: a line of the completed text that opens
 * a block must be followed by a line indented deeper (within the completed
 * lines or, for the last, the suffix's next line), unless that line closes
 * the block. Python's grammar accepts an empty block, so the parse alone does
 * not catch this. */
static bool ifl__blocks_indented(const char *lang, const char *s, size_t len, size_t hs, size_t he,
                                 const char *c, size_t cl, int width) {
    size_t ls = ifl__line_start(s, hs), le = ifl__line_end(s, len, he);
    if (le < he)
        le = he;
    base_buf x; /* the hole's lines as completed: prefix of line + candidate + rest */
    base_buf_init(&x);
    if (base_buf_append(&x, s + ls, hs - ls) != BASE_OK || base_buf_append(&x, c, cl) != BASE_OK ||
        base_buf_append(&x, s + he, le - he) != BASE_OK || !x.data) {
        base_buf_deinit(&x);
        return true;
    }
    ifl__line *L = NULL;
    size_t n = ifl__split_lines(x.data, x.len, &L);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        if (!ifl__opens_block(lang, x.data, L[i].a, L[i].b))
            continue;
        int ind = ifl__indent_cols(x.data, L[i].a, L[i].b, width);
        size_t j = i + 1;
        while (j < n && ifl__blank(x.data, L[j].a, L[j].b))
            j++;
        int next;
        bool closer;
        if (j < n) {
            next = ifl__indent_cols(x.data, L[j].a, L[j].b, width);
            closer = ifl__closer_line(x.data, L[j].a, L[j].b);
        } else {
            size_t nx = ifl__next_nonblank(s, len, le);
            if (nx == SIZE_MAX)
                continue; /* unfinished at the end of the file */
            next = ifl__line_indent(s, len, nx, width);
            closer = ifl__closer_line(s, nx, ifl__line_end(s, len, nx));
        }
        if (next <= ind && !closer)
            ok = false;
    }
    free(L);
    base_buf_deinit(&x);
    return ok;
}

/* Most lines a rejected multi-line candidate is cut back by (each try is a
 * syntax check: a window parse of well under a millisecond). */
#define IFL__CUT_BACK_MAX 32

/* [0, n) without trailing spaces and blank lines. */
static size_t ifl__trim_lines(const char *s, size_t n) {
    n = ifl__rtrim(s, 0, n);
    while (n > 0 && s[n - 1] == '\n')
        n = ifl__rtrim(s, 0, n - 1);
    return n;
}

/* out = text (+ '\n' + indent when indent is not NULL), '\n' -> "\r\n" when
 * crlf. */
static base_status ifl__as_inserted(base_buf *out, const char *text, size_t n, const char *indent,
                                    size_t indent_len, bool crlf) {
    base_status st = base_buf_append(out, text, n);
    if (st == BASE_OK && indent && n > 0) {
        st = base_buf_append(out, "\n", 1);
        if (st == BASE_OK && indent_len)
            st = base_buf_append(out, indent, indent_len);
    }
    if (crlf)
        for (size_t i = 0; i < out->len && st == BASE_OK; i++)
            if (out->data[i] == '\n' && (i == 0 || out->data[i - 1] != '\r')) {
                st = base_buf_splice(out, i, 0, "\r", 1);
                i++;
            }
    return st;
}

static base_status ifl__postprocess(ifl_tree *t, const char *lang, const char *s, size_t len,
                                    const ifl_span *sp, const char *cand, size_t cl,
                                    const ifl_post_opts *o, char **out, size_t *out_len) {
    if (!s || !sp || (!cand && cl) || !out)
        return BASE_ERR_INVALID;
    *out = NULL;
    if (out_len)
        *out_len = 0;
    size_t hs = sp->hole_start, he = sp->hole_end;
    if (hs > he || he > len)
        return BASE_ERR_RANGE;
    base_buf b;
    base_buf_init(&b);
    base_status st = BASE_OK;
    ifl__line *L = NULL;
    ifl__style fs = ifl__detect_style(lang, s, len, hs);
    size_t ls = ifl__line_start(s, hs);
    size_t le = ifl__line_end(s, len, he);
    if (le < he)
        le = he;
    bool prefix_blank = ifl__blank(s, ls, hs);
    bool rest_blank = ifl__blank(s, he, le);
    bool crlf = false;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\n') {
            crlf = i > 0 && s[i - 1] == '\r';
            break;
        }

    /* The model's text without '\r' (re-added for CRLF files at the end). */
    for (size_t i = 0; i < cl && st == BASE_OK; i++)
        if (cand[i] != '\r')
            st = base_buf_append(&b, cand + i, 1);
    if (st != BASE_OK)
        goto done;
    if (!b.data) {
        st = BASE_ERR_PARSE;
        goto done;
    }

    if (!sp->multiline) {
        char *nl = memchr(b.data, '\n', b.len);
        if (nl) {
            b.len = (size_t)(nl - b.data);
            b.data[b.len] = 0;
        }
    } else {
        /* On a line holding only indentation, the model often repeats that
         * indentation: drop the copy. */
        if (prefix_blank && hs > ls && b.len >= hs - ls && memcmp(b.data, s + ls, hs - ls) == 0)
            base_buf_consume(&b, hs - ls);
        /* A block opened at the end of a line starts on the next line. */
        if (sp->kind == IFL_SPAN_BLOCK && !prefix_blank) {
            size_t i = 0;
            while (i < b.len && (b.data[i] == ' ' || b.data[i] == '\t'))
                i++;
            if (i == b.len || b.data[i] != '\n') {
                base_buf_consume(&b, i);
                int ind = ifl__line_indent(s, len, ls, fs.width) + fs.width;
                char pre[256];
                size_t k = 0;
                pre[k++] = '\n';
                for (int c = 0; c < ind && k < sizeof(pre);) {
                    pre[k++] = fs.tabs ? '\t' : ' ';
                    c += fs.tabs ? fs.width : 1;
                }
                if ((st = base_buf_splice(&b, 0, 0, pre, k)) != BASE_OK)
                    goto done;
            }
        }
        /* Lines after the first (and the first when it starts a line) are
         * re-indented to the file's style. */
        if ((st = ifl__reindent(&b, prefix_blank && hs == ls ? 0 : 1, fs)) != BASE_OK)
            goto done;

        /* Cut at the span end, the line limit and a copy of the suffix. */
        size_t n = ifl__split_lines(b.data, b.len, &L);
        if (!n) {
            st = BASE_ERR_NOMEM;
            goto done;
        }
        int base = ifl__span_base_indent(lang, s, len, hs, sp, fs.width);
        if (sp->kind == IFL_SPAN_SELECTION)
            base = 0;
        size_t nx = ifl__next_nonblank(s, len, hs);
        size_t nxs = SIZE_MAX; /* the first non-blank suffix line, as a full line */
        if (!rest_blank)
            nxs = ls;
        else if (nx != SIZE_MAX)
            nxs = nx;
        size_t cut = n, lines = 0;
        for (size_t i = 0; i < n; i++) {
            size_t a = L[i].a, e = L[i].b;
            bool starts_line = i > 0 || (prefix_blank && hs == ls);
            if (ifl__blank(b.data, a, e)) {
                if (i > 0 || e > a)
                    lines++;
                continue;
            }
            lines++;
            if (lines > (size_t)sp->max_lines) {
                cut = i;
                break;
            }
            int ind = ifl__indent_cols(b.data, a, e, fs.width);
            if (!starts_line)
                ind += ifl__indent_cols(s, ls, hs, fs.width);
            /* A copy of the line that follows the hole: the rest is the
             * suffix again. */
            if (nxs != SIZE_MAX && (starts_line || prefix_blank) &&
                sp->kind != IFL_SPAN_SELECTION &&
                ifl__same_trimmed(b.data, a, e, s, nxs, ifl__line_end(s, len, nxs)) &&
                ind == ifl__line_indent(s, len, nxs, fs.width) &&
                ifl__repeats_suffix(b.data, L, n, i, s, len, nxs)) {
                cut = i;
                break;
            }
            if (starts_line && ind < base && ifl__opens_block(lang, b.data, a, e) &&
                nxs != SIZE_MAX && ifl__line_indent(s, len, nxs, fs.width) > ind) {
                /* Lines from here on open the block that the following code
                 * is the body of: allowed down to this line's level. */
                size_t j = i + 1;
                bool last_opener = true;
                for (; j < n; j++)
                    if (!ifl__blank(b.data, L[j].a, L[j].b) &&
                        ifl__indent_cols(b.data, L[j].a, L[j].b, fs.width) <= ind)
                        last_opener = false;
                if (last_opener) {
                    base = ind;
                    continue;
                }
            }
            if (starts_line && ind < base) {
                /* Leaving the span. A closer line the suffix does not
                 * already provide is kept as the completion's last line. */
                bool suffix_closes = nxs != SIZE_MAX &&
                                     ifl__closer_line(s, nxs, ifl__line_end(s, len, nxs)) &&
                                     ifl__line_indent(s, len, nxs, fs.width) < base;
                if (ifl__closer_line(b.data, a, e) && !suffix_closes &&
                    ifl__unclosed(lang, s, len, hs, he) + ifl__naive_balance(b.data, L[i].a) > 0)
                    cut = i + 1;
                else
                    cut = i;
                break;
            }
        }
        if (cut < n) {
            b.len = cut == 0 ? 0 : L[cut - 1].b;
            b.data[b.len] = 0;
        }
        /* No trailing blank lines or spaces, unless the completion is whole
         * lines inserted before the cursor's line, which end with '\n'. */
        b.len = ifl__trim_lines(b.data, b.len);
        b.data[b.len] = 0;
    }

    if (!sp->multiline) {
        b.len = ifl__rtrim(b.data, 0, b.len);
        b.data[b.len] = 0;
        if (!rest_blank && sp->kind != IFL_SPAN_SELECTION) {
            /* Mid-line: the end of the candidate repeating the start of the
             * rest of the line is dropped when it is long (4+ bytes) or when
             * it is a closer the candidate does not open. */
            size_t k = ifl__overlap(b.data, b.len, s + he, le - he);
            if (k > 0 && (k >= 4 || ifl__naive_balance(b.data, b.len) < 0)) {
                b.len -= k;
                b.data[b.len] = 0;
            }
        } else if (sp->kind != IFL_SPAN_SELECTION) {
            /* The line as completed must not copy the next line. */
            size_t nx = ifl__next_nonblank(s, len, hs);
            if (nx != SIZE_MAX) {
                base_buf line;
                base_buf_init(&line);
                st = base_buf_append(&line, s + ls, hs - ls);
                if (st == BASE_OK)
                    st = base_buf_append(&line, b.data, b.len);
                bool dup = st == BASE_OK && ifl__same_trimmed(line.data, 0, line.len, s, nx,
                                                              ifl__line_end(s, len, nx));
                base_buf_deinit(&line);
                if (st != BASE_OK)
                    goto done;
                if (dup)
                    b.len = 0;
            }
        }
    }

    /* The candidate as inserted: whole lines put before the cursor's line
     * end with the line break and indentation the hole took, and CRLF files
     * get their '\r' back. A multi-line candidate the syntax check rejects is
     * cut back one line at a time: the longest leading lines that pass are
     * the answer (a model often writes good lines, then loses its way). */
    bool tail_nl = sp->multiline && prefix_blank && !rest_blank;
    const bool validate = o && o->validate && t;
    for (int tries = 0;; tries++) {
        if (ifl__blank(b.data, 0, b.len)) {
            st = BASE_ERR_PARSE;
            goto done;
        }
        base_buf f;
        base_buf_init(&f);
        if ((st = ifl__as_inserted(&f, b.data, b.len, tail_nl ? s + ls : NULL, hs - ls, crlf)) !=
            BASE_OK) {
            base_buf_deinit(&f);
            goto done;
        }
        if (!validate) {
            *out = base_buf_steal(&f, out_len);
            goto done;
        }
        if (sp->multiline && !ifl__blocks_indented(lang, s, len, hs, he, f.data, f.len, fs.width)) {
            BASE_LOGD(IFL__MOD, "candidate rejected: a block without an indented body");
            st = BASE_ERR_PARSE;
        } else {
            st = ifl__validate(t, s, len, hs, he, f.data, f.len);
        }
        if (st == BASE_OK) {
            if (tries > 0)
                BASE_LOGD(IFL__MOD, "candidate cut back by %d line(s) to pass the syntax check",
                          tries);
            *out = base_buf_steal(&f, out_len);
            goto done;
        }
        base_buf_deinit(&f);
        if (st != BASE_ERR_PARSE || !sp->multiline || tries >= IFL__CUT_BACK_MAX)
            goto done;
        size_t nl = b.len;
        while (nl > 0 && b.data[nl - 1] != '\n')
            nl--;
        if (nl == 0)
            goto done;
        b.len = ifl__trim_lines(b.data, nl - 1);
        b.data[b.len] = 0;
    }
done:
    free(L);
    base_buf_deinit(&b);
    return st;
}

/* ---- entry points -------------------------------------------------------------- */

base_status ifl_tree_locate(ifl_tree *t, const char *text, size_t len, size_t cursor,
                            size_t sel_start, size_t sel_end, ifl_span *out) {
    if (!t)
        return BASE_ERR_INVALID;
    return ifl__locate(t, t->lang, text, len, cursor, sel_start, sel_end, out);
}

base_status ifl_tree_postprocess(ifl_tree *t, const char *text, size_t len, const ifl_span *span,
                                 const char *candidate, size_t cand_len, const ifl_post_opts *o,
                                 char **out, size_t *out_len) {
    if (!t)
        return BASE_ERR_INVALID;
    base_status st = ifl_tree_update(t, text, len);
    if (st != BASE_OK)
        return st;
    return ifl__postprocess(t, t->lang, text, len, span, candidate, cand_len, o, out, out_len);
}

base_status ifl_syntax_locate_text(const char *language, const char *text, size_t len,
                                   size_t cursor, size_t sel_start, size_t sel_end, ifl_span *out) {
    ifl_tree *t = gr_language(language) ? ifl_tree_new(language, NULL) : NULL;
    const char *lang = t ? t->lang : NULL;
    base_status st;
    size_t ws = 0, we = len;
    bool sel = sel_end > sel_start;
    if (t && text && cursor <= len && sel_end <= len && sel_start <= sel_end) {
        /* Without a kept tree, a large file is parsed only in the window
         * around the cursor (whole top-level constructs, plus the line that
         * follows the window for the next-line rules). */
        ifl__window(text, len, sel ? sel_start : cursor, sel ? sel_end : cursor, &ws, &we);
        if (we < len)
            we = ifl__line_end(text, len, we);
        if (len - (we - ws) < IFL__WINDOW_MIN_SAVING) {
            ws = 0;
            we = len;
        }
    }
    if (ws == 0 && we == len) {
        st = ifl__locate(t, lang, text, len, cursor, sel_start, sel_end, out);
    } else {
        st = ifl__locate(t, lang, text + ws, we - ws, cursor - ws, sel ? sel_start - ws : 0,
                         sel ? sel_end - ws : 0, out);
        if (st == BASE_OK) {
            out->hole_start += ws;
            out->hole_end += ws;
        }
    }
    ifl_tree_free(t);
    return st;
}

base_status ifl_syntax_postprocess_text(const char *language, const char *text, size_t len,
                                        const ifl_span *span, const char *candidate,
                                        size_t cand_len, const ifl_post_opts *o, char **out,
                                        size_t *out_len) {
    /* The tree is parsed only when validation needs the whole file. */
    ifl_tree *t = gr_language(language) ? ifl_tree_new(language, NULL) : NULL;
    base_status st = ifl__postprocess(t, t ? t->lang : NULL, text, len, span, candidate, cand_len,
                                      o, out, out_len);
    ifl_tree_free(t);
    return st;
}

base_status ifl_syntax_validate_text(const char *language, const char *text, size_t len,
                                     size_t hole_start, size_t hole_end, const char *candidate,
                                     size_t cand_len) {
    if (!text || (!candidate && cand_len))
        return BASE_ERR_INVALID;
    if (hole_start > hole_end || hole_end > len)
        return BASE_ERR_RANGE;
    base_status st = BASE_OK;
    ifl_tree *t = ifl_tree_new(language, &st);
    if (!t)
        return st;
    st = ifl__validate(t, text, len, hole_start, hole_end, candidate ? candidate : "", cand_len);
    ifl_tree_free(t);
    return st;
}
