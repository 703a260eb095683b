/* Segmented trees against one tree, by sweep: every string of up to two
 * bytes over a per-language alphabet is inserted as a line of its own at
 * every line start of each multi-construct seed (syntax_edits_multi), every
 * byte of a shorter alphabet at every byte, every one of the language's
 * multi-byte tokens at every byte and line start, and every pair of tokens
 * as lines at most `apart` lines from each other; each text that one tree
 * parses without errors must read the same cut at every sound place. And
 * on the incremental path, each token typed in at every line start (every
 * byte with `bytes`; a keystroke at a time with `typed`) of one long-lived
 * tree and taken out again, and every line moved before every other and
 * back, copied there and taken out. Where fuzz_syntax_edits finds one text
 * by chance, the sweep finds the classes near the seeds' constructs at
 * once: it found a Python line continuation after a decorator, a Rust
 * `#![attr]` and a Lua `#` line read as a shebang, Lua's `return` with its
 * value on the next line, and a C `case` label in column 0 taking the
 * declaration after it. Deterministic.
 * Usage: test_syntax_sweep [max_len [lang|all [apart [bytes|typed]]]] (by
 * hand: 3 all 6 bytes, 1 all 0 typed; CI: 2 all 1), or
 * test_syntax_sweep file LANG FILE... (by hand, real files). */
#include "check.h"
#include "syntax.h"
#include "syntax_edits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SWEEP_MAX_LEN = 4 };

/* What each language's constructs turn on: comment and string openers,
 * brackets, line continuations, its prefixes of a line. */
static const struct {
    const char *lang, *line, *any;
} alphabets[] = {
    {"c", "a/*\\\"'{}#\n(e \r", "/*\\#\n"},
    {"cpp", "a/*\\\"'{}#\n<>R( ", "/*\\#\n<"},
    {"python", "a:\\\"'(#\n@=[ \t", "\\\"#\n:"},
    {"javascript", "a/*`$\\\"'{}\n<( ", "/*`\n{"},
    {"typescript", "a/*`$\\\"'{}\n<:( ", "/*`\n<"},
    {"tsx", "a/*`$\\\"'{}\n<>( ", "/*<>\n"},
    {"go", "a/*`\\\"'{}\n( ", "/*`\n"},
    {"rust", "a/*\\\"'{}#!\n[r ", "/*#!\n'"},
    {"java", "a/*\\\"'{}\n@(<", "/*@\n"},
    {"lua", "a-[]=\\\"'\n( {#", "-[=\n#"},
    {"bash", "a#\\\"'$(){<\n`;", "#\\$\n"},
};

/* Each language's multi-byte tokens, the constructs short strings over an
 * alphabet cannot spell: directives, raw and long strings and comments,
 * heredocs, block keywords. Tried at every byte and as a line of their own
 * at every line start. */
static const struct {
    const char *lang;
    const char *const tok[40];
} tokens[] = {
    {"c",
     {"#if 0",
      "#if 1",
      "#else",
      "#elif X",
      "#endif",
      "#define X",
      "#define X \\",
      "#define F(x) x",
      "#include \"a.h\"",
      "#include <a.h>",
      "#pragma once",
      "# define Y",
      "#ifdef X",
      "#undef X",
      "#error x",
      "/* x",
      "*/",
      "// x \\",
      "\"x\\",
      "'\\''",
      "L\"x\"",
      "u8\"x\"",
      "} else {",
      "case 1:",
      "default:",
      "x:",
      "typedef int t;",
      "struct s {",
      "__attribute__((x))",
      "#",
      "%:",
      "<:",
      "do {",
      "} while (0);",
      "enum {",
      "..."}},
    {"cpp",
     {"R\"x(",
      ")x\"",
      "R\"(",
      ")\"",
      "template <typename T>",
      ">>",
      "::",
      "[[nodiscard]]",
      "#if 0",
      "#endif",
      "#else",
      "namespace {",
      "extern \"C\" {",
      "public:",
      "operator<",
      "requires",
      "co_return x;",
      "'0'",
      "1'000",
      "u8R\"(",
      "/* x",
      "*/",
      "// x \\",
      "#define X \\",
      "} // x",
      "class C;",
      "auto [a, b] =",
      "[]() {",
      "<::",
      "#include <a>",
      "using T = int;",
      "concept C =",
      "friend",
      "virtual ~A();",
      "case 1:",
      "default:",
      "int x;"}},
    {"python",
     {"\"\"\"",
      "'''",
      "f\"{",
      "}\"",
      "r'\\",
      "lambda:",
      "async ",
      "match x:",
      "case _:",
      "elif x:",
      "else:",
      "try:",
      "except:",
      "finally:",
      "with x:",
      "@d",
      "# x",
      "if x: pass",
      "b'",
      "global x",
      "    ",
      "\t",
      ";",
      "...",
      "def f():",
      "class C:",
      "return",
      "f'''",
      "rb\"",
      "x = \\",
      "print(",
      ")",
      "]",
      "}",
      "async def f():",
      "yield",
      "type X = int",
      "\"\"\"x\"\"\"",
      "from . import x"}},
    {"javascript",
     {"`${",
      "}`",
      "/re/",
      "/[/]/",
      "// x",
      "/* x",
      "*/",
      "=>",
      "async ",
      "<div>",
      "</div>",
      "#!/x",
      "'use strict'",
      "class {",
      "get x()",
      "?.",
      "??",
      "l:",
      "import(",
      "export default",
      "yield",
      "function* g() {",
      "#p",
      "static {",
      "}",
      "{",
      "`",
      "${",
      "x\n++y",
      "<!--",
      "-->",
      "'\\",
      "\"\\",
      "/=/",
      "a\n/b/g"}},
    {"typescript",
     {"`${",
      "}`",
      "/re/",
      "// x",
      "/* x",
      "*/",
      "=>",
      "<T>",
      "as const",
      "satisfies T",
      "declare module 'm' {",
      "abstract class A {",
      "@dec",
      "enum E {",
      "namespace N {",
      "type X =",
      "?:",
      "!:",
      "readonly",
      "interface I {",
      "}",
      "{",
      "implements I",
      "<T,>() =>",
      "x!",
      "keyof",
      "import type",
      "export =",
      "#!/x",
      "unique symbol",
      "infer U",
      "asserts x",
      "accessor"}},
    {"tsx",
     {"<div>",      "</div>", "<>",   "</>",  "<A />", "{x}",  "{/* x */}", "`${",   "}`",
      "/re/",       "// x",   "/* x", "*/",   "=>",    "<T,>", "as const",  "&amp;", "<a b=\"c\">",
      "<a {...p}>", "}",      "{",    "<div", ">",     "/>",   "'",         "\""}},
    {"go",
     {"`",
      "func (",
      "//go:build x",
      "/* x",
      "*/",
      "// x",
      "import \"C\"",
      "go func() {}()",
      "defer",
      "select {",
      "case <-c:",
      "type X = int",
      "...",
      "'a'",
      "\"\\\"",
      ":=",
      "goto l",
      "l:",
      "}",
      "{",
      "package p",
      "var (",
      ")",
      "const (",
      "iota",
      "fallthrough",
      "interface {",
      "struct {",
      "map[",
      "chan<-",
      "<-chan",
      "0x1p-2",
      "'\\''"}},
    {"rust",
     {"r#\"",
      "\"#",
      "r\"",
      "b'",
      "'a",
      "#[x]",
      "#![x]",
      "/// x",
      "//! x",
      "/** x",
      "/* x",
      "*/",
      "macro_rules! m {",
      "=>",
      "impl",
      "where",
      "unsafe {",
      "async move",
      "'l: loop {",
      "|x|",
      "::<",
      "?",
      "dyn",
      "b\"",
      "c\"",
      "br#\"",
      "}",
      "{",
      "fn f()",
      "mod m;",
      "x!{",
      "x![",
      "r#type",
      "'\\''",
      "/*/**/*/",
      "#!/x"}},
    {"java",
     {"@interface A {",
      "record R() {}",
      "\"\"\"",
      "sealed",
      "permits",
      "non-sealed",
      "/** x",
      "/* x",
      "*/",
      "// x",
      "yield",
      "switch (x) {",
      "case 1 ->",
      "var",
      "->",
      "::",
      "<T>",
      "'\\u0041'",
      "enum E {",
      "static {",
      "}",
      "{",
      "@A",
      "module m {",
      "package p;",
      "import static a.b;",
      "default:",
      "'",
      "\"",
      "class",
      "throws E"}},
    {"lua", {"--[[",         "]]",
             "--[==[",       "]==]",
             "[[",           "[=[",
             "]=]",          "::l::",
             "goto l",       "local function f()",
             "end",          "then",
             "do",           "repeat",
             "until x",      "elseif x then",
             "else",         "#!",
             "\\z",          "..",
             "...",          "-- x",
             "function",     "return",
             "if x then",    "while x do",
             "for i=1,2 do", "local x <const> =",
             "x:y()",        ";",
             "'\\",          "\"\\"}},
    {"bash",
     {"<<EOF",
      "EOF",
      "<<-EOF",
      "<<'EOF'",
      "$(",
      ")",
      "$((",
      "))",
      "`",
      "case x in",
      "esac",
      ";;",
      "fi",
      "then",
      "do",
      "done",
      "function f {",
      "[[",
      "]]",
      "${x",
      "}",
      "$'",
      "\\",
      "# x",
      "{",
      "&&",
      "||",
      "&",
      "|",
      "2>&1",
      "((",
      "<(",
      ">(",
      "<<<",
      "\"",
      "'",
      "x=(",
      "if true; then",
      "while :; do"}},
};

static size_t texts, clean, differ;

/* seed with v[0..n) inserted at p; compared when one tree parses it
 * cleanly. */
static void try_text(const char *lang, ifl_tree *whole, const char *seed, size_t sl, size_t p,
                     const char *v, size_t n) {
    char text[4096];
    if (sl + n + 1 > sizeof text)
        return;
    memcpy(text, seed, p);
    memcpy(text + p, v, n);
    memcpy(text + p + n, seed + p, sl - p);
    size_t len = sl + n;
    text[len] = 0;
    texts++;
    bool ok = false;
    char *a = NULL, *b = NULL;
    CHECK_EQ_I(syntax_edits_cut_compare(lang, whole, text, len, &ok, &a, &b), BASE_OK);
    clean += ok;
    if (a && differ++ < 5)
        fprintf(stderr,
                "test_syntax_sweep: %s, %zu bytes inserted at %zu:\n%s\n  cut:   %s\n  whole: %s\n",
                lang, n, p, text, a, b);
    free(a);
    free(b);
}

/* Every string of 1..max_len bytes over alpha, then a line break, at every
 * line start of seed. */
static void sweep_lines(const char *lang, ifl_tree *whole, const char *seed, const char *alpha,
                        size_t max_len) {
    size_t sl = strlen(seed), na = strlen(alpha);
    for (size_t p = 0; p <= sl; p++) {
        if (p > 0 && seed[p - 1] != '\n')
            continue;
        for (size_t len = 1; len <= max_len && len <= SWEEP_MAX_LEN; len++) {
            char v[SWEEP_MAX_LEN + 1];
            for (size_t code = 0; syntax_edits_nth_string(alpha, na, len, code, v); code++) {
                v[len] = '\n';
                try_text(lang, whole, seed, sl, p, v, len + 1);
            }
        }
    }
}

/* Every byte of alpha at every byte of seed. */
static void sweep_bytes(const char *lang, ifl_tree *whole, const char *seed, const char *alpha) {
    size_t sl = strlen(seed);
    for (size_t p = 0; p <= sl; p++)
        for (const char *c = alpha; *c; c++)
            try_text(lang, whole, seed, sl, p, c, 1);
}

/* Every token of tok at every byte of seed, and as a line of its own at
 * every line start. */
static void sweep_tokens(const char *lang, ifl_tree *whole, const char *seed,
                         const char *const *tok) {
    size_t sl = strlen(seed);
    for (const char *const *t = tok; *t; t++) {
        size_t n = strlen(*t);
        char v[64];
        memcpy(v, *t, n);
        v[n] = '\n';
        for (size_t p = 0; p <= sl; p++) {
            try_text(lang, whole, seed, sl, p, v, n);
            if (p == 0 || seed[p - 1] == '\n')
                try_text(lang, whole, seed, sl, p, v, n + 1);
        }
    }
}

/* Two tokens of tok as lines of their own, the first at a line start of
 * seed and the second up to `apart` lines below it: an opener and its
 * closer (`#if 0` .. `#endif`, `--[[` .. `]]`, `<<EOF` .. `EOF`) around
 * lines that would be cut elsewhere, or a construct and what it takes
 * (a C `case` label and a declaration). */
static void sweep_token_pairs(const char *lang, ifl_tree *whole, const char *seed,
                              const char *const *tok, size_t apart) {
    size_t sl = strlen(seed), starts[256], ns = 0;
    for (size_t p = 0; p <= sl && ns < BASE_ARRAY_LEN(starts); p++)
        if (p == 0 || seed[p - 1] == '\n')
            starts[ns++] = p;
    char text[4096];
    for (size_t i = 0; i < ns; i++)
        for (size_t j = i; j < ns && j <= i + apart; j++)
            for (const char *const *a = tok; *a; a++)
                for (const char *const *b = tok; *b; b++) {
                    size_t na = strlen(*a), nb = strlen(*b), p = starts[i], q = starts[j];
                    if (sl + na + nb + 3 > sizeof text)
                        continue;
                    /* seed[0..p) a \n seed[p..q) b \n seed[q..) */
                    size_t o = 0;
                    memcpy(text + o, seed, p), o += p;
                    memcpy(text + o, *a, na), o += na;
                    text[o++] = '\n';
                    memcpy(text + o, seed + p, q - p), o += q - p;
                    memcpy(text + o, *b, nb), o += nb;
                    text[o++] = '\n';
                    memcpy(text + o, seed + q, sl - q), o += sl - q;
                    try_text(lang, whole, text, o, o, "", 0);
                }
}

/* The incremental path: one tree of lang that lives through all of a
 * sweep's edits, as a buffer's does, compared with a fresh parse after each
 * edit. */
static size_t edit_compares, edit_clean, edit_differ;

/* Cut at every sound place or at the default size, with every tree kept or
 * only the focus's. */
static const struct {
    size_t seg, keep;
} edit_configs[] = {{1, IFL_TREE_KEEP_BYTES}, {1, 0}, {IFL_TREE_SEGMENT_BYTES, 0}};

/* A sweep's edit, checked (what: for the report of a difference). */
static void edited_edit(syntax_edits_doc *e, size_t at, size_t del, const char *ins, size_t n,
                        const char *what) {
    CHECK_EQ_I(syntax_edits_doc_edit(e, at, del, ins, n, what), BASE_OK);
}

/* e holds text in a tree of seg and keep bytes; false when it cannot. */
static bool edited_open(syntax_edits_doc *e, const char *lang, const char *text, size_t len,
                        size_t seg, size_t keep) {
    base_status st = syntax_edits_doc_open(e, lang, text, len, seg, keep);
    CHECK_EQ_I(st, BASE_OK);
    if (st != BASE_OK)
        syntax_edits_doc_close(e);
    return st == BASE_OK;
}

static void edited_close(syntax_edits_doc *e) {
    edit_compares += e->compares;
    edit_clean += e->clean;
    edit_differ += e->mismatches;
    syntax_edits_doc_close(e);
}

/* Each token typed in at every line start of seed (every byte with
 * every_byte) and taken out again: in one edit each way, or (typed) a
 * keystroke at a time, then backspaced. As it is, and as a line. */
static void type_tokens(syntax_edits_doc *e, const char *seed, const size_t *at, size_t nat,
                        const char *const *tok, bool typed) {
    for (const char *const *tk = tok; *tk; tk++) {
        char v[64];
        size_t n = strlen(*tk);
        memcpy(v, *tk, n);
        v[n] = '\n';
        for (size_t i = 0; i < nat; i++) {
            size_t p = at[i];
            bool line_start = p == 0 || seed[p - 1] == '\n';
            for (size_t w = n; w <= n + line_start; w++) {
                size_t step = typed ? 1 : w;
                for (size_t d = 0; d < w; d += step)
                    edited_edit(e, p + d, 0, v + d, step, "token typed");
                for (size_t d = w; d > 0; d -= step)
                    edited_edit(e, p + d - step, step, "", 0, "token taken out");
            }
        }
    }
}

/* Line starts of s (and s's end after them) in starts[0..*ns], at most
 * cap - 1 of them. */
static void line_starts(const char *s, size_t len, size_t *starts, size_t cap, size_t *ns) {
    *ns = 0;
    for (size_t p = 0; p < len && *ns + 1 < cap; p++)
        if (p == 0 || s[p - 1] == '\n')
            starts[(*ns)++] = p;
    starts[*ns] = len;
}

/* Line i of the text (starts[0..ns]) moved before line j and back, then
 * copied there and taken out (a move is two edits, as an editor sends it). */
static void move_line(syntax_edits_doc *e, const size_t *starts, size_t ns, size_t i, size_t j,
                      bool copy) {
    size_t a = starts[i], n = starts[i + 1] - a;
    char line[1024];
    if (j > ns || j == i || j == i + 1 || n == 0 || n > sizeof line ||
        e->doc.data[a + n - 1] != '\n')
        return;
    memcpy(line, e->doc.data + a, n);
    /* Line j's start moves up by n when it lies after a. */
    size_t to = starts[j] > a ? starts[j] - n : starts[j];
    edited_edit(e, a, n, "", 0, "line moved: taken out");
    edited_edit(e, to, 0, line, n, "line moved: put in");
    edited_edit(e, to, n, "", 0, "line moved back: taken out");
    edited_edit(e, a, 0, line, n, "line moved back: put in");
    if (copy) {
        edited_edit(e, starts[j], 0, line, n, "line copied");
        edited_edit(e, starts[j], n, "", 0, "copy taken out");
    }
}

/* The seed's tokens typed (every line start, or every byte) and every line
 * moved and copied before every other, in each configuration. */
static void sweep_edits(const char *lang, const char *seed, const char *const *tok, bool every_byte,
                        bool typed) {
    size_t sl = strlen(seed), starts[256], ns = 0, bytes[4096];
    line_starts(seed, sl, starts, BASE_ARRAY_LEN(starts), &ns);
    for (size_t p = 0; p <= sl && p < BASE_ARRAY_LEN(bytes); p++)
        bytes[p] = p;
    for (size_t k = 0; k < BASE_ARRAY_LEN(edit_configs); k++) {
        syntax_edits_doc e;
        if (!edited_open(&e, lang, seed, sl, edit_configs[k].seg, edit_configs[k].keep))
            return;
        if (every_byte && sl < BASE_ARRAY_LEN(bytes))
            type_tokens(&e, seed, bytes, sl + 1, tok, typed);
        else
            type_tokens(&e, seed, starts, ns + 1, tok, typed);
        for (size_t i = 0; i < ns; i++)
            for (size_t j = 0; j <= ns; j++)
                move_line(&e, starts, ns, i, j, true);
        CHECK(e.doc.len == sl && memcmp(e.doc.data, seed, sl) == 0);
        edited_close(&e);
    }
}

/* By hand, real files: `test_syntax_sweep file LANG FILE...` types each of
 * the language's tokens in at every stride-th line start of each file that
 * parses without errors and takes it out, and moves every stride-th line a
 * few lines down and back, at the default segment size with only the
 * focus's trees kept. The seeds are small; real files have many segments. */
static int sweep_files(const char *lang, char **paths, int n) {
    size_t li = 0;
    while (li < BASE_ARRAY_LEN(tokens) && strcmp(tokens[li].lang, lang) != 0)
        li++;
    CHECK(li < BASE_ARRAY_LEN(tokens));
    for (int f = 0; f < n && li < BASE_ARRAY_LEN(tokens); f++) {
        static char buf[1 << 20];
        static size_t starts[1 << 16], at[64];
        FILE *fp = fopen(paths[f], "rb");
        if (!fp)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, fp), ns = 0, nat = 0;
        fclose(fp);
        syntax_edits_doc e;
        if (memchr(buf, 0, len) || !edited_open(&e, lang, buf, len, IFL_TREE_SEGMENT_BYTES, 0))
            continue;
        if (ifl_tree_error_count(e.t, e.doc.data, e.doc.len) == 0) {
            line_starts(buf, len, starts, BASE_ARRAY_LEN(starts), &ns);
            size_t stride = ns / 40 + 1, c0 = edit_compares;
            for (size_t i = 0; i < ns && nat < BASE_ARRAY_LEN(at); i += stride)
                at[nat++] = starts[i];
            type_tokens(&e, buf, at, nat, tokens[li].tok, false);
            for (size_t i = 0; i < ns; i += stride)
                move_line(&e, starts, ns, i, i + 2 + i % 9, false);
            fprintf(stderr, "%s: %zu comparisons, %zu differ\n", paths[f], edit_compares - c0,
                    e.mismatches);
        }
        edited_close(&e);
    }
    CHECK_EQ_U(edit_differ, 0);
    return check_finish("test_syntax_sweep");
}

int main(int argc, char **argv) {
    if (argc > 3 && strcmp(argv[1], "file") == 0) {
        base_log_set_level(BASE_LOG_WARN);
        return sweep_files(argv[2], argv + 3, argc - 3);
    }
    size_t max_len = argc > 1 ? (size_t)atoi(argv[1]) : 2;
    const char *only = argc > 2 && strcmp(argv[2], "all") != 0 ? argv[2] : NULL;
    size_t apart = argc > 3 ? (size_t)atoi(argv[3]) : 1;
    bool every_byte = argc > 4 && strcmp(argv[4], "bytes") == 0;
    bool typed = argc > 4 && strcmp(argv[4], "typed") == 0;
    base_log_set_level(BASE_LOG_WARN);
    size_t langs = 0;
    for (size_t i = 0; i < BASE_ARRAY_LEN(alphabets); i++) {
        if (only && strcmp(only, alphabets[i].lang) != 0)
            continue;
        const char *seed = NULL;
        for (size_t m = 0; m < syntax_edits_nmulti; m++)
            if (strcmp(syntax_edits_multi[m].lang, alphabets[i].lang) == 0)
                seed = syntax_edits_multi[m].text;
        CHECK(seed != NULL);
        base_status st = BASE_OK;
        ifl_tree *whole = ifl_tree_new(alphabets[i].lang, &st);
        CHECK(whole != NULL);
        if (!seed || !whole)
            continue;
        ifl_tree_set_segment_bytes(whole, 0);
        size_t t0 = texts, c0 = clean, d0 = differ;
        sweep_lines(alphabets[i].lang, whole, seed, alphabets[i].line, max_len);
        sweep_bytes(alphabets[i].lang, whole, seed, alphabets[i].any);
        CHECK(strcmp(tokens[i].lang, alphabets[i].lang) == 0);
        sweep_tokens(alphabets[i].lang, whole, seed, tokens[i].tok);
        sweep_token_pairs(alphabets[i].lang, whole, seed, tokens[i].tok, apart);
        size_t e0 = edit_compares, ec0 = edit_clean, ed0 = edit_differ;
        sweep_edits(alphabets[i].lang, seed, tokens[i].tok, every_byte, typed);
        fprintf(stderr, "%-10s %6zu edits compared, %5zu error-free, %zu differ\n",
                alphabets[i].lang, edit_compares - e0, edit_clean - ec0, edit_differ - ed0);
        fprintf(stderr, "%-10s %6zu texts, %5zu error-free, %zu differ\n", alphabets[i].lang,
                texts - t0, clean - c0, differ - d0);
        /* Some of each language's texts parse cleanly: the check is not
         * vacuous. */
        CHECK(clean - c0 >= 50);
        ifl_tree_free(whole);
        langs++;
    }
    CHECK(langs > 0);
    CHECK_EQ_U(differ, 0);
    CHECK_EQ_U(edit_differ, 0);
    return check_finish("test_syntax_sweep");
}
