/* Segmented trees against one tree, by sweep: every string of up to two
 * bytes over a per-language alphabet is inserted as a line of its own at
 * every line start of each multi-construct seed (syntax_edits_multi), and
 * every byte of a shorter alphabet at every byte; each text that one tree
 * parses without errors must read the same cut at every sound place. Where
 * fuzz_syntax_edits finds one text by chance, the sweep finds the classes
 * near the seeds' constructs at once: it found a Python line continuation
 * after a decorator, a Rust `#![attr]` and a Lua `#` line read as a
 * shebang, and Lua's `return` with its value on the next line. Deterministic.
 * Usage: test_syntax_sweep [max_len [lang]] (by hand: 3). */
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

int main(int argc, char **argv) {
    size_t max_len = argc > 1 ? (size_t)atoi(argv[1]) : 2;
    const char *only = argc > 2 ? argv[2] : NULL;
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
    return check_finish("test_syntax_sweep");
}
