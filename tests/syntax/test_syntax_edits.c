/* Incremental parsing: edit sequences applied to a document and, via
 * ifl_tree_edit, to its tree; the incrementally reparsed tree must equal a
 * fresh parse of the same text (same S-expression) whenever that text parses
 * without errors:
 *   - retyping sessions (delete a span of up to 40 bytes, type it back byte by
 *     byte, reparse lazily every one to three keystrokes);
 *   - random edits (brackets, quotes, keywords, newlines at random places).
 * On text with syntax errors tree-sitter's error recovery may take another
 * path when it resumes from an edited tree (e.g. Java with a stray '}');
 * those differences are counted and printed, not failed.
 * Each runs on one tree for the whole buffer and on segmented trees (every
 * sound cut, and the default size), over small documents and documents of
 * several top-level constructs; the fresh parse is always one whole tree.
 * Deterministic: fixed seeds. Usage: test_syntax_edits [rounds [seed]]. */
#include "check.h"
#include "syntax.h"
#include "syntax_edits.h"
#include "syntax_script.h"

#include <stdlib.h>
#include <string.h>

static void run_seeds(const syntax_edits_seed *seeds, size_t n, int rounds, uint64_t seed,
                      size_t *compared) {
    for (size_t i = 0; i < n; i++) {
        const syntax_edits_seed *sd = &seeds[i];
        base_rng rng;
        base_rng_seed(&rng, seed + i);
        size_t mismatches = 0;
        base_status st = syntax_edits_retype(sd->lang, sd->text, strlen(sd->text), &rng, rounds,
                                             true, &mismatches, compared);
        CHECK_EQ_I(st, BASE_OK);
        CHECK_EQ_U(mismatches, 0);
        mismatches = 0;
        st =
            syntax_edits_run(sd->lang, sd->text, strlen(sd->text), &rng, rounds, true, &mismatches);
        CHECK_EQ_I(st, BASE_OK);
        CHECK_EQ_U(mismatches, 0);
        *compared += (size_t)rounds;
    }
}

/* The segmented tree t reads text as one fresh tree (whole) does, and
 * that text is error-free. */
static void same_tree(ifl_tree *t, ifl_tree *whole, const char *text, size_t len) {
    char *a = ifl_tree_sexp(t, text, len), *b = ifl_tree_sexp(whole, text, len);
    CHECK(a && b);
    CHECK_EQ_U(ifl_tree_error_count(whole, text, len), 0);
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
}

/* Replays an edit script on text with segments of seg bytes (0: one tree,
 * 1: every sound cut) and trees kept within keep bytes of the focus: the
 * edited tree must never differ from a fresh parse. */
static void replay(const char *lang, const char *text, size_t len, const uint8_t *script, size_t n,
                   size_t seg, size_t keep) {
    size_t mismatches = 0;
    syntax_edits_segment_bytes = seg;
    syntax_edits_keep_bytes = keep;
    CHECK_EQ_I(syntax_script_run(lang, text, len, script, n, &mismatches), BASE_OK);
    if (mismatches)
        fprintf(stderr, "replay: segment bytes %zu, keep %zu\n", seg, keep);
    CHECK_EQ_U(mismatches, 0);
    syntax_edits_keep_bytes = IFL_TREE_KEEP_BYTES;
}

/* Segment sizes and kept trees the edit tests run at: one tree, every sound
 * cut, the default size, and every sound cut with only the focus's segment
 * and its neighbours keeping their trees (the others parsed afresh whenever
 * they are needed). */
static const struct {
    size_t seg, keep;
} configs[] = {{0, IFL_TREE_KEEP_BYTES},
               {1, IFL_TREE_KEEP_BYTES},
               {IFL_TREE_SEGMENT_BYTES, IFL_TREE_KEEP_BYTES},
               {1, 0}};

/* At every sound cut, with trees kept and with only the focus's (and its
 * neighbours'). */
static void replay_cuts(const char *lang, const char *text, size_t len, const uint8_t *script,
                        size_t n) {
    replay(lang, text, len, script, n, 1, IFL_TREE_KEEP_BYTES);
    replay(lang, text, len, script, n, 1, 0);
}

/* The same at every configuration. */
static void replay_sizes(const char *lang, const char *text, const uint8_t *script, size_t n) {
    for (size_t k = 0; k < BASE_ARRAY_LEN(configs); k++)
        replay(lang, text, strlen(text), script, n, configs[k].seg, configs[k].keep);
}

/* The last seed of v[0..n) in lang (the test fails when there is none). */
static const syntax_edits_seed *seed_in(const syntax_edits_seed *v, size_t n, const char *lang) {
    const syntax_edits_seed *sd = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].lang, lang) == 0)
            sd = &v[i];
    CHECK(sd != NULL);
    return sd;
}

/* An edit script replayed at every size on the last seed of v[0..n) in
 * lang. */
static void replay_seed(const syntax_edits_seed *v, size_t n, const char *lang,
                        const uint8_t *script, size_t len) {
    const syntax_edits_seed *sd = seed_in(v, n, lang);
    if (sd)
        replay_sizes(sd->lang, sd->text, script, len);
}

/* fuzz_syntax_edits' first finding: a `;` typed before the `#endif` of a
 * conditional inside a C include guard makes that line no directive, so the
 * guard no longer closes; the edited tree kept parsing the guard as blanks
 * (only edited lines starting with '#' made it look again). Every segment
 * size, since the guard is looked for whatever the cut. */
static void guard_broken_by_edit(void) {
    const char *text = syntax_edits_multi[0].text; /* count.h */
    const char *at = strstr(text, "#endif\nint main");
    CHECK(at != NULL);
    if (!at)
        return;
    static const size_t sizes[] = {0, 1, IFL_TREE_SEGMENT_BYTES};
    for (size_t k = 0; k < BASE_ARRAY_LEN(sizes); k++) {
        base_status st = BASE_OK;
        ifl_tree *t = ifl_tree_new("c", &st), *fresh = ifl_tree_new("c", &st);
        CHECK(t && fresh);
        if (!t || !fresh)
            return;
        ifl_tree_set_segment_bytes(t, sizes[k]);
        ifl_tree_set_segment_bytes(fresh, 0);
        size_t len = strlen(text), off = (size_t)(at - text);
        CHECK_EQ_I(ifl_tree_update(t, text, len), BASE_OK);
        char *edited = malloc(len + 2);
        memcpy(edited, text, off);
        edited[off] = ';';
        memcpy(edited + off + 1, text + off, len - off + 1);
        uint32_t row = 0;
        for (size_t i = 0; i < off; i++)
            row += text[i] == '\n';
        lsp_edit_event ev = {.start_byte = off,
                             .old_end_byte = off,
                             .new_end_byte = off + 1,
                             .start_point = {row, 0},
                             .old_end_point = {row, 0},
                             .new_end_point = {row, 1}};
        ifl_tree_edit(t, &ev);
        char *a = ifl_tree_sexp(t, edited, len + 1), *b = ifl_tree_sexp(fresh, edited, len + 1);
        CHECK(a && b);
        CHECK_EQ_U(ifl_tree_error_count(fresh, edited, len + 1), 0);
        if (a && b && strcmp(a, b) != 0) {
            fprintf(stderr, "segment bytes %zu:\nincremental: %s\nfresh:       %s\n", sizes[k], a,
                    b);
            CHECK(false);
        }
        free(a);
        free(b);
        free(edited);
        ifl_tree_free(t);
        ifl_tree_free(fresh);
    }
}

/* Finding 29: a blank line typed between a C include guard's `#ifndef` and
 * its `#define` (still a guard), then code typed on it, with no '#' or
 * delimiter on the line: that is no guard any more, and the edited tree
 * kept parsing the `#ifndef` and its `#endif` as blanks. Every
 * configuration, each edit compared with a fresh parse. */
static void guard_head_typed_into(void) {
    const char *text = syntax_edits_multi[0].text; /* count.h */
    const char *at = strstr(text, "#define COUNT_H");
    CHECK(at != NULL);
    if (!at)
        return;
    size_t off = (size_t)(at - text);
    static const struct {
        size_t at;
        const char *ins;
    } edits[] = {{0, " \n"}, {1, "return n;"}};
    for (size_t k = 0; k < BASE_ARRAY_LEN(configs); k++) {
        syntax_edits_doc e;
        CHECK_EQ_I(
            syntax_edits_doc_open(&e, "c", text, strlen(text), configs[k].seg, configs[k].keep),
            BASE_OK);
        for (size_t i = 0; i < BASE_ARRAY_LEN(edits) && e.t; i++) {
            CHECK_EQ_I(syntax_edits_doc_edit(&e, off + edits[i].at, 0, edits[i].ins,
                                             strlen(edits[i].ins), "code typed into a guard"),
                       BASE_OK);
            CHECK(e.last_clean);
        }
        CHECK_EQ_U(e.compares, BASE_ARRAY_LEN(edits));
        CHECK_EQ_U(e.mismatches, 0);
        syntax_edits_doc_close(&e);
    }
}

/* fuzz_syntax_edits' second finding: JSX text over two lines in column 0,
 * cut at every sound place, is one construct in four segments; the first
 * two merged do not mend it, and the cuts between the text lines look
 * sound, so the segmented tree kept errors a whole parse does not have. */
static void jsx_text_over_lines(void) {
    const char *text = "const A = () => <div>\ntext\ntext\n</div>\n\nexport function B() {\n"
                       "  return <A />\n}\n";
    base_status st = BASE_OK;
    ifl_tree *t = ifl_tree_new("tsx", &st), *whole = ifl_tree_new("tsx", &st);
    CHECK(t && whole);
    if (!t || !whole)
        return;
    ifl_tree_set_segment_bytes(t, 1);
    ifl_tree_set_segment_bytes(whole, 0);
    size_t len = strlen(text);
    same_tree(t, whole, text, len);
    ifl_tree_free(t);
    ifl_tree_free(whole);
}

/* fuzz_syntax_edits' third finding, its edit script replayed: in the C++
 * document of several constructs, segments at every sound cut, `public:`
 * edited, a line moved next to `template <typename T>`, both undone. The
 * undo parsed the template line's segment while settling the one before it,
 * so it was no longer dirty and its cut with `T twice(...)` (one construct
 * cut in two) was never looked at. */
static void template_after_undo(void) {
    static const uint8_t script[] = {0x00, 0x65, 0xff, 0x72, 0x65, 0x74, 0x75,
                                     0x68, 0x65, 0x72, 0x65, 0x64, 0x6f, 0x63};
    const syntax_edits_seed *sd = &syntax_edits_multi[1];
    CHECK(strcmp(sd->lang, "cpp") == 0);
    replay_cuts(sd->lang, sd->text, strlen(sd->text), script, sizeof script);
}

/* fuzz_syntax_edits' fourth finding (7 in docs/perf/fuzz.md), its two edit
 * scripts replayed on the small Java seed at every segment size: the line
 * ends made CRLF, a wide character appended to a type, `return a;`
 * duplicated into the class body (there the word `return` is a type name
 * to a fresh parse), then a line moved and undone, or moved and a span
 * re-inserted. tree-sitter's incremental reparse alone (one tree, no
 * segments) kept a MISSING "}" and an ERROR on that error-free text. */
static void java_reparse_after_undo(void) {
    static const uint8_t crlf_wide_undo[] = {0x08, 0x99, 0x30, 0x1a, 0x99, 0x98, 0x77, 0xbd,
                                             0xdc, 0x02, 0xe7, 0x54, 0x36, 0xe9, 0xb9};
    static const uint8_t line_moved[] = {
        0x08, 0x67, 0x67, 0x77, 0xbd, 0x09, 0x92, 0xfc, 0x00, 0x22, 0xdc, 0x02, 0xe7,
        0x54, 0x33, 0xa9, 0xfb, 0x07, 0xc9, 0x07, 0xc9, 0x02, 0xd1, 0xe9, 0x64, 0x00,
        0x0f, 0x3b, 0x89, 0x6e, 0x67, 0x84, 0x02, 0xd1, 0xe9, 0x64, 0x00, 0x0f, 0x3b,
        0x0c, 0x89, 0xa6, 0x05, 0x62, 0x5c, 0x65, 0xc5, 0x3d, 0x4a, 0x89, 0x6e, 0x67,
        0x84, 0x45, 0x03, 0xb9, 0x4a, 0x9c, 0x2b, 0x2c, 0x08, 0x67, 0x7f, 0x7b, 0x98,
        0x8b, 0x06, 0xc6, 0x98, 0x55, 0x63, 0xcd, 0x0b, 0x45, 0x03, 0xb9, 0x4a, 0x9c};
    const syntax_edits_seed *sd = seed_in(syntax_edits_seeds, syntax_edits_nseeds, "java");
    if (!sd)
        return;
    replay_sizes(sd->lang, sd->text, crlf_wide_undo, sizeof crlf_wide_undo);
    replay_sizes(sd->lang, sd->text, line_moved, sizeof line_moved);
}

/* fuzz_syntax_edits' finding 8, its edit script replayed on the JavaScript
 * document of several constructs: the template string's first line (with
 * invalid UTF-8 in it) moved to the top, so the template runs from line 1
 * over six segments. With segments at every sound cut, the merge over the
 * open template was parsed from the tree of its first segment, which
 * tree-sitter had read with the template unclosed; the reparse kept an
 * ERROR and the template unread. */
static void js_template_merged(void) {
    static const uint8_t script[] = {0x0b, 0x0a, 0xdf, 0x0a, 0x0b, 0x0a, 0x33, 0x01, 0x1c,
                                     0x96, 0x00, 0x00, 0x01, 0xf1, 0xdf, 0xf6, 0x9d, 0x89,
                                     0xdc, 0xff, 0x50, 0xff, 0xff, 0xff, 0x29, 0x6f};
    replay_seed(syntax_edits_multi, syntax_edits_nmulti, "javascript", script, sizeof script);
}

/* fuzz_syntax_edits' finding 9: in the C header of several constructs,
 * segments at every sound cut, its first line (a comment) duplicated
 * between `static int` and `count(const char *s)`. The segment `static
 * int` + comment ends in a comment after its error, so its cut with
 * `count(...)` looked sound, and a trial of `static int` with the comment
 * alone did not look wider. Checked on a fresh build of that text and by
 * the edit script replayed. */
static void comment_inside_cut_construct(void) {
    const syntax_edits_seed *sd = &syntax_edits_multi[0];
    CHECK(strcmp(sd->lang, "c") == 0);
    const char *at = strstr(sd->text, "static int\ncount(");
    CHECK(at != NULL);
    if (!at)
        return;
    size_t off = (size_t)(at - sd->text) + strlen("static int\n"), len = strlen(sd->text);
    const char *ins = "/* count.h */\n";
    char *text = malloc(len + strlen(ins) + 1);
    CHECK(text != NULL);
    if (!text)
        return;
    memcpy(text, sd->text, off);
    memcpy(text + off, ins, strlen(ins));
    memcpy(text + off + strlen(ins), sd->text + off, len - off + 1);
    len += strlen(ins);
    base_status st = BASE_OK;
    ifl_tree *t = ifl_tree_new("c", &st), *whole = ifl_tree_new("c", &st);
    CHECK(t && whole);
    if (t && whole) {
        ifl_tree_set_segment_bytes(t, 1);
        ifl_tree_set_segment_bytes(whole, 0);
        same_tree(t, whole, text, len);
    }
    ifl_tree_free(t);
    ifl_tree_free(whole);
    free(text);
    static const uint8_t script[] = {0x0b, 0xdf, 0x0b, 0x0b, 0xdf, 0x0b, 0x21, 0x62,
                                     0x34, 0x15, 0x04, 0x00, 0x00, 0x00, 0x0a};
    replay_cuts(sd->lang, sd->text, strlen(sd->text), script, sizeof script);
}

/* fuzz_syntax_edits' finding 10: tree-sitter-c reads a '/' and the line
 * break after it as part of a directive's argument, so a segment that is
 * one such line (a comment's closing after `#x`) lacks its line end: a
 * MISSING hidden token, which the node API does not show. The cut after
 * it looked sound and the two stayed apart; a whole parse reads the next
 * line into the directive. Fresh builds at every sound cut. */
static void directive_eats_line_break(void) {
    static const char *const texts[] = {"#x */\nint a;\n", "#x */\n#ifndef A\nint a;\n#endif\n"};
    for (size_t k = 0; k < BASE_ARRAY_LEN(texts); k++) {
        base_status st = BASE_OK;
        ifl_tree *t = ifl_tree_new("c", &st), *whole = ifl_tree_new("c", &st);
        CHECK(t && whole);
        if (t && whole) {
            size_t len = strlen(texts[k]);
            ifl_tree_set_segment_bytes(t, 1);
            ifl_tree_set_segment_bytes(whole, 0);
            char *a = ifl_tree_sexp(t, texts[k], len), *b = ifl_tree_sexp(whole, texts[k], len);
            CHECK(a && b);
            CHECK_EQ_U(ifl_tree_error_count(whole, texts[k], len), 0);
            CHECK_EQ_U(ifl_tree_error_count(t, texts[k], len), 0);
            CHECK(a && b && strcmp(a, b) == 0);
            free(a);
            free(b);
        }
        ifl_tree_free(t);
        ifl_tree_free(whole);
    }
}

/* fuzz_syntax_edits' finding 11: a line of code put after the include
 * guard's #endif (here appended at the end, an insertion with none of the
 * characters that made the guard be looked for again) ends the guard; the
 * edited tree kept parsing it as blanks. Every segment size. */
static void code_after_guard_endif(void) {
    const char *text = syntax_edits_multi[0].text; /* count.h */
    const char *add = "int after;\n";
    size_t len = strlen(text), n = strlen(add);
    CHECK(len > 0 && text[len - 1] == '\n');
    uint32_t rows = 0;
    for (size_t i = 0; i < len; i++)
        rows += text[i] == '\n';
    char *edited = malloc(len + n + 1);
    CHECK(edited != NULL);
    if (!edited)
        return;
    memcpy(edited, text, len);
    memcpy(edited + len, add, n + 1);
    static const size_t sizes[] = {0, 1, IFL_TREE_SEGMENT_BYTES};
    for (size_t k = 0; k < BASE_ARRAY_LEN(sizes); k++) {
        base_status st = BASE_OK;
        ifl_tree *t = ifl_tree_new("c", &st), *fresh = ifl_tree_new("c", &st);
        CHECK(t && fresh);
        if (t && fresh) {
            ifl_tree_set_segment_bytes(t, sizes[k]);
            ifl_tree_set_segment_bytes(fresh, 0);
            CHECK_EQ_I(ifl_tree_update(t, text, len), BASE_OK);
            lsp_edit_event ev = {.start_byte = len,
                                 .old_end_byte = len,
                                 .new_end_byte = len + n,
                                 .start_point = {rows, 0},
                                 .old_end_point = {rows, 0},
                                 .new_end_point = {rows + 1, 0}};
            ifl_tree_edit(t, &ev);
            char *a = ifl_tree_sexp(t, edited, len + n), *b = ifl_tree_sexp(fresh, edited, len + n);
            CHECK(a && b);
            CHECK_EQ_U(ifl_tree_error_count(fresh, edited, len + n), 0);
            if (a && b && strcmp(a, b) != 0) {
                fprintf(stderr, "segment bytes %zu:\nincremental: %s\nfresh:       %s\n", sizes[k],
                        a, b);
                CHECK(false);
            }
            free(a);
            free(b);
        }
        ifl_tree_free(t);
        ifl_tree_free(fresh);
    }
    free(edited);
}

/* fuzz_syntax_edits' finding 12: an #endif line inside a function body
 * within the include guard. tree-sitter reads it as a directive of its own
 * (conditionals nest with the code), the line lexer closed the guard's
 * #ifndef there and cut the rest of the file apart from it. Fresh builds
 * at every sound cut and the default size, and the edit script replayed
 * (only it fails without the fix: which cuts exist depends on the edits). */
static void endif_inside_function(void) {
    const char *text = syntax_edits_multi[0].text; /* count.h */
    const char *at = strstr(text, "    int n = 0;\n");
    CHECK(at != NULL);
    if (!at)
        return;
    const char *ins = "#endif /* COUNT_H */\n";
    size_t off = (size_t)(at - text) + strlen("    int n = 0;\n"), len = strlen(text),
           n = strlen(ins);
    char *edited = malloc(len + n + 1);
    CHECK(edited != NULL);
    if (!edited)
        return;
    memcpy(edited, text, off);
    memcpy(edited + off, ins, n);
    memcpy(edited + off + n, text + off, len - off + 1);
    static const size_t sizes[] = {1, IFL_TREE_SEGMENT_BYTES};
    for (size_t k = 0; k < BASE_ARRAY_LEN(sizes); k++) {
        base_status st = BASE_OK;
        ifl_tree *t = ifl_tree_new("c", &st), *whole = ifl_tree_new("c", &st);
        CHECK(t && whole);
        if (t && whole) {
            ifl_tree_set_segment_bytes(t, sizes[k]);
            ifl_tree_set_segment_bytes(whole, 0);
            char *a = ifl_tree_sexp(t, edited, len + n), *b = ifl_tree_sexp(whole, edited, len + n);
            CHECK(a && b);
            CHECK_EQ_U(ifl_tree_error_count(whole, edited, len + n), 0);
            CHECK(a && b && strcmp(a, b) == 0);
            free(a);
            free(b);
        }
        ifl_tree_free(t);
        ifl_tree_free(whole);
    }
    free(edited);
    /* The edit script as found (segments at every sound cut): the #endif
     * line duplicated into the body after other edits. */
    static const uint8_t script[] = {
        0x9c, 0x8d, 0x9a, 0x90, 0x00, 0x05, 0x94, 0x74, 0x64, 0x26, 0xe9, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0x9f, 0xdd, 0x81, 0xf8, 0x08, 0xd9, 0x4c, 0xb4, 0x26,
        0x29, 0xfc, 0x35, 0x04, 0x9b, 0x07, 0x5e, 0x06, 0xf8, 0x2f, 0xad, 0xb7, 0xda, 0x0b,
        0x05, 0x7c, 0x23, 0x57, 0x80, 0x04, 0x14, 0x5a, 0x2a, 0x2a, 0x53, 0x09, 0xe4, 0x00,
        0x99, 0x1c, 0xf0, 0x6a, 0x17, 0x2b, 0x05, 0xc4, 0xdb, 0xda, 0x65, 0x0a, 0x8e, 0x14,
        0xde, 0x53, 0x39, 0x03, 0x7a, 0x52, 0xde, 0x4d, 0x53, 0x08, 0x97, 0x97, 0x9c};
    replay_cuts("c", text, len, script, sizeof script);
}

/* fuzz_syntax_edits' finding 13, its edit script replayed on the C header
 * (every sound cut; each size fails alike): the end of count() deleted
 * and retyped one byte at a time.
 * With the closing brace gone, the guard's #endif sat inside brackets and
 * (after finding 12's rule) no longer closed the #ifndef, so the guard was
 * lost; retyping `}` puts back none of the characters that make the guard
 * be looked for again, and the tree kept the #ifndef unblanked. The
 * guard's search now ignores brackets. */
static void guard_after_brace_retyped(void) {
    static const uint8_t script[] = {
        0x02, 0x00, 0x28, 0x18, 0x00, 0x6f, 0x23, 0xff, 0x60, 0x03, 0x00, 0x4d, 0x00, 0x00, 0x00,
        0x00, 0x45, 0x6a, 0x61, 0x76, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
        0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
        0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
        0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
        0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0xff, 0x02,
        0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
        0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x00};
    const syntax_edits_seed *sd = &syntax_edits_multi[0];
    replay_cuts(sd->lang, sd->text, strlen(sd->text), script, sizeof script);
}

/* fuzz_syntax_edits' finding 14, its edit script replayed on the C header
 * (every sound cut): after many edits, a block comment opened on the
 * continuation line of `#define TWICE(x)` and closed segments later. In
 * its segment alone tree-sitter reads that line as the macro's value,
 * error-free, so the cut check started its lexer after it and saw no
 * comment left open. */
static void comment_in_macro_continuation(void) {
    static const uint8_t script[] = {
        0x00, 0x10, 0x00, 0x6e, 0x6f, 0x74, 0x00, 0x58, 0x9d, 0xe1, 0xb6, 0x62, 0x1e, 0x12, 0x40,
        0x08, 0x00, 0x4d, 0x4c, 0x4c, 0x4c, 0x4c, 0x68, 0x65, 0x72, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f,
        0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0xe1, 0xb6, 0x62,
        0xff, 0xff, 0xff, 0xff, 0xff, 0x1e, 0x12, 0x4c, 0x4c, 0x4c, 0x4c, 0x49, 0x4c, 0x4c, 0x4c,
        0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0xb8, 0xb8, 0xb8, 0xb8, 0xb8, 0xb8, 0x4c,
        0x4c, 0x4c, 0x4c, 0x40, 0x00, 0x26, 0x0a, 0xdb, 0xdf, 0x0a, 0x29, 0x63, 0x87, 0x29, 0x4c,
        0x4c, 0x4c, 0x4c, 0x12, 0x4c, 0x4c, 0x4c, 0x4c, 0x49, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c,
        0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b,
        0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b, 0x8b,
        0x8b, 0x00, 0x00, 0x49, 0x9d, 0x00, 0x90, 0x92, 0x8b, 0x00, 0x00, 0x65, 0x64, 0x6f, 0x63,
        0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x6d, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c};
    const syntax_edits_seed *sd = &syntax_edits_multi[0];
    replay_cuts(sd->lang, sd->text, strlen(sd->text), script, sizeof script);
}

/* fuzz_syntax_edits' finding 15, its edit script replayed on the C header:
 * among many edits, the include guard's `#endif` line duplicated to the top
 * of the file, above the comment and the `#ifndef`. The file then has no
 * guard; tree-sitter reads that first `#endif` as a directive of its own,
 * while the line lexer's conditional depth went to -1 there, so the
 * `#ifndef` brought it back to 0 and the whole header was cut inside it (a
 * MISSING `#endif`). Every segment size. */
static void endif_above_guard(void) {
    static const uint8_t script[] = {
        0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0x00, 0x00, 0x01, 0x00, 0x10, 0x00, 0x28, 0x28, 0x28, 0x28, 0x28, 0x28, 0x28, 0x28,
        0x28, 0x28, 0x28, 0xae, 0xae, 0xae, 0xae, 0xae, 0xae, 0xae, 0xae, 0xae, 0xae, 0xae, 0xae,
        0x28, 0x28, 0x28, 0x28, 0x28, 0x28, 0x28, 0x28, 0x28, 0x6e, 0x6f, 0x74, 0x00, 0x58, 0x9d,
        0xe1, 0xb6, 0x62, 0x1e, 0x12, 0x40, 0x08, 0x00, 0x4d, 0x4c, 0x4c, 0x4c, 0x4c, 0x68, 0x65,
        0x72, 0xe1, 0xb6, 0x62, 0x1e, 0x12, 0x4c, 0x4c, 0x4c, 0x4c, 0x49, 0x4c, 0x4c, 0x4c, 0x4c,
        0x4c, 0x4c, 0x4c, 0x4c, 0x08, 0x4c, 0x4c, 0x4c, 0xb8, 0xb8, 0xb8, 0xb8, 0xb8, 0xb8, 0x4c,
        0x4c, 0x63, 0x6f, 0x6d, 0x6d, 0x65, 0x6e, 0x74, 0x4c, 0x4c, 0x40, 0x00, 0x26, 0x0a, 0xdb,
        0xdf, 0x0a, 0x29, 0x63, 0x87, 0x29, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x00,
        0x00, 0x49, 0x9d, 0x00, 0x90, 0x92, 0x8b, 0x00, 0x00, 0x65, 0x64, 0x6f, 0x63, 0x4c, 0x4c,
        0x4c, 0x4c, 0x4c, 0x4c, 0x6d, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c};
    replay_sizes(syntax_edits_multi[0].lang, syntax_edits_multi[0].text, script, sizeof script);
}

/* fuzz_syntax_edits' finding 16, its edit script replayed on the
 * JavaScript document of several constructs: among many edits, the
 * template string's closing line moved down so that the template spans the
 * IIFE, a function and a block comment with a multi-byte character, then a
 * span deleted and re-inserted in one edit. tree-sitter's incremental
 * reparse reused the old tree's call_expression and function_declaration,
 * lexed as code, inside the template: ERROR nodes alone, no MISSING token,
 * so the fresh parse that finding 7 added did not run. Every segment size. */
static void js_template_span_reinserted(void) {
    static const uint8_t script[] = {
        0x75, 0x6e, 0x74, 0x97, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb,
        0xfb, 0xfb, 0xfb, 0x07, 0x00, 0x25, 0xff, 0x00, 0x29, 0x07, 0x5d, 0x21, 0x00, 0x00, 0xbf,
        0x00, 0x00, 0xd7, 0xff, 0x00, 0x91, 0x73, 0x00, 0x63, 0x21, 0x00, 0x00, 0xbf, 0x00, 0x00,
        0xd7, 0xff, 0x00, 0x29, 0x07, 0x00, 0x21, 0x00, 0x00, 0xbf, 0x00, 0x00, 0xd7, 0xff, 0x00,
        0x91, 0x73, 0x00, 0x63, 0x21, 0x00, 0x00, 0xbf, 0x00, 0x00, 0xd7, 0xfb, 0xfb, 0xfb, 0xfb,
        0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb,
        0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb,
        0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xff, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0x00, 0x91,
        0x73, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb,
        0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0x00, 0x63, 0xfb, 0xfb, 0xfb, 0xfb,
        0xfb, 0xfb, 0x95, 0x00, 0x6b, 0x00,
    };
    replay_seed(syntax_edits_multi, syntax_edits_nmulti, "javascript", script, sizeof script);
}

/* fuzz_syntax_edits' finding 19: JavaScript, one tree, line ends turned
 * from CRLF back to LF; after the reparse a `//` comment that follows a
 * declaration without `;` stood after the declaration, in a fresh parse
 * inside it (the automatic semicolon after the comment). tree-sitter's own
 * incremental reparse, no segments: the comparison hoists trailing
 * comments (syntax_edits.c), and the rest of the trees must be equal at
 * every segment size. */
static void js_comment_after_asi_declaration(void) {
    static const uint8_t script[] = {
        0x00, 0x07, 0x33, 0x2b, 0xb9, 0x3a, 0x6c, 0x00, 0x2c, 0xbd, 0x50, 0xfc, 0xf3, 0x05, 0xa2,
        0x45, 0xe1, 0xf3, 0x6f, 0x0a, 0x73, 0xd6, 0x0f, 0x7a, 0x62, 0x03, 0x25, 0xd3, 0x7f, 0xf2,
        0x8c, 0x08, 0x95, 0x59, 0xaf, 0xe6, 0x48, 0x01, 0xa4, 0x87, 0x8d, 0x20, 0xf2, 0x06, 0x87,
        0xe7, 0xc6, 0x04, 0x52, 0x0b, 0xd0, 0xac, 0x04, 0x6c, 0x1d, 0x04, 0xf7, 0x91, 0x3e, 0xb9,
        0x84, 0x09, 0xba, 0x9a, 0x74, 0x10, 0x7e, 0x02, 0x0c, 0xfe, 0x24, 0xdb, 0x10, 0x07, 0xec,
        0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec,
        0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec, 0xec,
        0xec, 0xec, 0xec, 0xec, 0x6a, 0x2d, 0xe9, 0xb9};
    replay_seed(syntax_edits_seeds, syntax_edits_nseeds, "javascript", script, sizeof script);
}

/* fuzz_syntax_edits' finding 20: count.h with CRLF line ends, a span
 * deleted, left `/\* count.h *\/` and a lone CR before `#ifndef COUNT_H`.
 * tree-sitter-c reads that as a conditional around the whole file (a CR is
 * a blank to it); the line lexer took only spaces and tabs for blanks
 * before '#', saw no conditional and cut the file after the first line,
 * whose segment closed the #ifndef with a MISSING #endif. */
static void cr_before_directive(void) {
    static const uint8_t script[] = {
        0x02, 0x7b, 0x22, 0x23, 0x2a, 0x96, 0x01, 0x91, 0x01, 0x48, 0xfa, 0xa6, 0xdd, 0xf7,
        0x06, 0xfe, 0x3d, 0xa7, 0x63, 0x6f, 0x6d, 0x6d, 0x65, 0x6e, 0x74, 0x3b, 0xed, 0x0b,
        0xde, 0x11, 0xcf, 0x69, 0x66, 0x64, 0x65, 0x66, 0x74, 0x23, 0x23, 0x23, 0x23, 0x23,
        0x23, 0x23, 0x23, 0x23, 0x1a, 0x4d, 0x00, 0x08, 0x99, 0x35, 0x1a, 0x99, 0x98, 0x77,
        0xbd, 0x68, 0x65, 0x72, 0x65, 0x64, 0x6f, 0x63, 0x23, 0x23, 0x23, 0x23, 0x23, 0x4c,
        0x23, 0x23, 0xb5, 0x23, 0x23, 0x00, 0x39, 0x28, 0xd7, 0x23, 0x23};
    replay_sizes("c", syntax_edits_multi[0].text, script, sizeof script);
}

/* fuzz_syntax_edits' finding 21: count.h with its `#define TWICE(x) \\`
 * line duplicated above the guard's `#endif`. tree-sitter-c reads that
 * `#endif` as the macro's value, so the conditional runs on to the last
 * line; the line lexer took it as closing the guard and cut after it. */
static void endif_in_macro_continuation(void) {
    static const uint8_t script[] = {
        0x0b, 0xdf, 0x0b, 0x70, 0x79, 0x74, 0x0b, 0xdf, 0x0b, 0x00, 0x62, 0x21, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0xbb, 0xf1, 0x01, 0x50, 0xa4, 0x62, 0x0a, 0x7a, 0x78, 0xb3, 0x21, 0xae,
        0x6f, 0x03, 0xb8, 0x12, 0xba, 0x70, 0xa7, 0x08, 0x60, 0xd2, 0xb2, 0x99, 0x7e, 0x7e, 0xbb,
        0x94, 0xf3, 0x02, 0xff, 0xf7, 0x3b, 0x22, 0x52, 0x07, 0x19, 0x28, 0x2e, 0xbc, 0xd2, 0x6e,
        0x74, 0xf7, 0x32, 0x0a, 0xb4, 0x9c, 0xdc, 0x33, 0x00, 0x00, 0x00, 0xd7, 0x02, 0x78, 0x23,
        0x23, 0x23, 0x23, 0x23, 0x23, 0x23, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x23, 0x04, 0x2d, 0x23,
        0x23, 0x80, 0x0a, 0x0b, 0x2d, 0x27};
    replay_sizes("c", syntax_edits_multi[0].text, script, sizeof script);
}

/* fuzz_syntax_edits' finding 22: count.h with `#include` typed over as
 * `#in)ude`, and the guard's `#endif` moved into a function body, where
 * tree-sitter-c reads it as a directive of its own. The line lexer counted
 * the directive's ')', so the body's '{' left no bracket open and that
 * `#endif` closed the guard for it: a cut after the function. */
static void bracket_in_directive(void) {
    static const uint8_t script[] = {
        0x0b, 0xdf, 0x6a, 0x61, 0x76, 0x61, 0x0b, 0xdf, 0x0b, 0x00, 0x62, 0x2f, 0x00, 0x34,
        0x15, 0x04, 0x3b, 0x8a, 0x2d, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7,
        0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7,
        0xdf, 0x0b, 0x00, 0x62, 0x21, 0x00, 0x34, 0x15, 0x04, 0x3b, 0x00, 0x00, 0x08, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0xf9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x8a, 0x2d, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7, 0xa7};
    replay_sizes("c", syntax_edits_multi[0].text, script, sizeof script);
}

/* fuzz_syntax_edits' finding 23: a directive's raw argument
 * (`#iot X<byte>COUNT_H'/\* a comment`, a line duplicated and edited near
 * count.h's top) opens a block comment at its "/" "*" whatever quote
 * precedes it, and tree-sitter-c runs that comment on to the "*" "/" of
 * the next comment below; the line lexer read a character literal from the
 * quote, so the cut after the line looked sound. Fails at every sound cut
 * without the raw reading. */
static void quote_before_comment_in_directive(void) {
    static const uint8_t script[] = {
        0x00, 0x10, 0x00, 0x6e, 0x6f, 0x74, 0x00, 0x58, 0x9d, 0xe1, 0xb6, 0x62, 0x1e, 0x12,
        0x40, 0x08, 0x00, 0x4d, 0x4c, 0x65, 0x4c, 0x68, 0x3f, 0x4c, 0x72, 0x4c, 0x3f, 0x3f,
        0x3f, 0x3f, 0x70, 0x79, 0x74, 0x68, 0x6f, 0x6e, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f,
        0xe1, 0xb6, 0x27, 0x62, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1e, 0x12, 0xb4, 0xb3, 0xb3,
        0xb3, 0x49, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0x4c, 0xc2, 0x4c, 0x4c, 0xb8,
        0xb8, 0xb8, 0xb8, 0xb8, 0xb8, 0x4c, 0xb8, 0xb8, 0xb8, 0xb8, 0x4c, 0x4c, 0x4c, 0x4c,
        0x40, 0x00, 0x26, 0x0a, 0xdb, 0xdf, 0x0a, 0x13, 0x13, 0x13, 0x13, 0x13, 0x13, 0x13,
        0x13, 0x13, 0x47, 0x00, 0x02, 0x68, 0x32, 0x0d, 0xe9, 0x71, 0x07, 0x0f, 0xcc, 0x3e,
        0xdb, 0x1d, 0x00, 0x1e, 0x60, 0x86, 0x89, 0x13, 0x13, 0x13, 0x29, 0x63, 0x87};
    replay_sizes("c", syntax_edits_multi[0].text, script, sizeof script);
}

/* fuzz_syntax_edits' finding 24: count.h with its `#include <stdio.h>`
 * edited into `#include <st/\*o.h>` and a line `/\*\/` typed after the
 * function. tree-sitter-c reads the path as one system_lib_string token, so
 * that `/\*\/` opens a comment that runs on to the guard's last line; the
 * line lexer opened a comment in the path and closed it on that line, and
 * cut before `struct point`, inside the comment. Fails at every sound cut
 * (with trees kept and with only the focus's) without the path read as a
 * token. */
static void comment_opener_in_include_path(void) {
    static const uint8_t script[] = {0x08, 0x99, 0x33, 0x1a, 0x99, 0x98, 0x77, 0xbd, 0x68,
                                     0x23, 0x62, 0xf7, 0x06, 0xfe, 0x3d, 0xa7, 0x63, 0x6d,
                                     0x65, 0x6e, 0x74, 0x3b, 0xed, 0x0b, 0xde, 0x11};
    replay_sizes("c", syntax_edits_multi[0].text, script, sizeof script);
}

/* fuzz_syntax_edits' finding 25: the bash seed's `x=1 \\` edited into
 * `x={\\`, then into `x42={\\` (a line break and `  y=2` after the
 * backslash). tree-sitter-bash's incremental reparse reused the value `{`
 * and lexed the backslash after it in another parse state than a fresh
 * parse does: as a line continuation and a second assignment `y=2`, where
 * a fresh parse reads the word `y=2`, the command's name. Plain tree-sitter
 * does the same, even after an edit that changes no byte, so the edits
 * below are also such edits, on texts random search found: a backslash
 * after a token, in a command substitution inside a string (quotes do not
 * protect) and after a newline. Each fails without the fresh parse. */
static void bash_backslash_after_token(void) {
    static const uint8_t script[] = {0x00, 0x5a, 0x00, 0x0a, 0x7b, 0x02, 0x00,
                                     0x59, 0x00, 0x10, 0x34, 0x32, 0x02};
    replay_seed(syntax_edits_multi, syntax_edits_nmulti, "bash", script, sizeof script);
    static const struct {
        const char *text;
        size_t at;
        const char *ins;
    } edits[] = {
        {"x={\\\n  y=2\nn\n", 1, "42"},           /* the finding's */
        {"x={\\\n  y=2\nn\n", 0, ""},             /* no byte changed */
        {"echo \"$(a={\\\n  y=2)\"\nn\n", 9, ""}, /* in a string */
        {"$y\\$ $x}[", 9, ""},                    /* after a word */
        {"x2=$y\n\\\nay= a\n=", 12, ""},          /* after a newline */
    };
    for (size_t k = 0; k < BASE_ARRAY_LEN(edits); k++) {
        syntax_edits_doc e;
        const char *text = edits[k].text, *ins = edits[k].ins;
        CHECK_EQ_I(syntax_edits_doc_open(&e, "bash", text, strlen(text), IFL_TREE_SEGMENT_BYTES,
                                         IFL_TREE_KEEP_BYTES),
                   BASE_OK);
        if (e.t)
            CHECK_EQ_I(syntax_edits_doc_edit(&e, edits[k].at, 0, ins, strlen(ins),
                                             "backslash after a token"),
                       BASE_OK);
        CHECK(e.last_clean);
        if (e.mismatches)
            fprintf(stderr, "bash_backslash_after_token: edit %zu\n", k);
        CHECK_EQ_U(e.mismatches, 0);
        syntax_edits_doc_close(&e);
    }
    /* Validation parses the candidate from the tree too: here its reparse
     * had an ERROR at the end that a fresh parse has not, and the candidate
     * was rejected. */
    const char *text = "xx=2\n2\n\\\n \n";
    CHECK_EQ_I(ifl_syntax_validate_text("bash", text, strlen(text), 1, 1, "2", 1), BASE_OK);
}

/* fuzz_syntax_edits' finding 26: count.h with a `#define` line whose
 * value ends in `*\/` (`#define TWICE(x)ot X<byte>count.h *\/`) copied
 * inside the guard above an `#endif`. tree-sitter-c's preproc_arg pairs a
 * '/' with the byte after it, the line break too, so the value runs on over
 * the `#endif`, and the guard closes at the file's end; the line lexer
 * closed the guard at that `#endif` and cut there, leaving the first
 * segment a MISSING `#endif` that merging with the next four did not mend.
 * Fails at every sound cut without the continued value. */
static void slash_continues_directive(void) {
    static const uint8_t script[] = {
        0x4c, 0x4c, 0x4c, 0xc2, 0x4c, 0x99, 0x8d, 0x35, 0x00, 0x80, 0x61, 0x00, 0x00, 0x4c,
        0xb8, 0xb8, 0xb8, 0xb8, 0xb8, 0xb8, 0x4c, 0xb8, 0xb8, 0xb8, 0xb8, 0x4c, 0x4c, 0x4c,
        0x4c, 0x40, 0x00, 0x26, 0x0a, 0xdb, 0xdf, 0x0a, 0x13, 0x13, 0x13, 0x13, 0x13, 0x13,
        0x00, 0x10, 0x00, 0x6e, 0x6f, 0x74, 0x00, 0x58, 0x9d, 0xe1, 0xb6, 0x62, 0x1e, 0x12,
        0x40, 0x3d, 0x00, 0x4d, 0x4c, 0x65, 0x4c, 0x68, 0x3f, 0x4c, 0x72, 0x4c, 0x3f, 0x3f,
        0x3f, 0x3f, 0x04, 0x00, 0x00, 0x00, 0xb3, 0xb3, 0xb3, 0x49, 0x4c, 0x4c, 0x4c, 0x4c,
        0x4c, 0x4c, 0x44, 0x4c, 0xc2, 0x4c, 0x4c, 0xb8, 0xb8, 0xb8, 0xb7, 0xb8, 0xb8, 0x4c,
        0xb8, 0xb8, 0xb8, 0xb8, 0x4c, 0x4c, 0x4c, 0xb8, 0xb8, 0xb8, 0x4c, 0xb8, 0xb8, 0x60,
        0xb8, 0x3a, 0x01, 0x23, 0x02, 0x96, 0x2a, 0xfc, 0x91, 0x00, 0x00, 0xdf, 0x0b, 0x62,
        0xf7, 0x06, 0xfe, 0x3d, 0x6f, 0xa7, 0x63, 0x6d, 0x6d, 0x65, 0x6e, 0x74};
    replay_sizes("c", syntax_edits_multi[0].text, script, sizeof script);
}

/* fuzz_syntax_edits' finding 27: the bash seed with its lines duplicated
 * and moved (`cat <<EOF` five times, heredocs left open, `x=1 \\` then
 * `  y=2` then a line `ca444444EOF`). tree-sitter-bash's incremental
 * reparse, one tree, made `x=1 y=2` assignments of their own and
 * `ca444444EOF` a command; a fresh parse reads one command `x=1 y=2
 * ca444444EOF`. The backslash follows a blank, where finding 25's rule kept
 * the reparse; bash up to IFL__FRESH_MAX bytes is now always parsed
 * afresh. */
static void bash_reparse_after_heredocs(void) {
    static const uint8_t script[] = {
        0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34,
        0x2f, 0x75, 0x34, 0x34, 0x34, 0x3c, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0xb4, 0x34,
        0x34, 0x34, 0x0d, 0x00, 0x00, 0x00, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34,
        0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34,
        0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34,
        0x34, 0x34, 0x34, 0x34, 0x14, 0x34, 0x34, 0x34, 0x34, 0x34, 0x00, 0x91, 0x91, 0x91, 0x91,
        0x73, 0x0b, 0x00, 0x00, 0xff, 0x00, 0x74, 0x67, 0x65, 0x6e, 0x5d, 0x63, 0x6f, 0x64, 0x65,
        0x66, 0x6d, 0xff, 0xff, 0x34, 0x34, 0x2f, 0x75, 0x34, 0x34, 0x34, 0x3c, 0x34, 0x34, 0x34,
        0x34, 0x34, 0x34, 0x34, 0xb4, 0x34, 0x34, 0x34, 0x0d, 0x00, 0x00, 0x00, 0x34, 0x34, 0x34,
        0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34,
        0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34,
        0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x34, 0x14, 0x34, 0x34, 0x34, 0x34,
        0x34, 0x00, 0x91, 0x91, 0x91, 0x91, 0x73, 0x0b, 0x00, 0x00, 0xff, 0x00, 0x74, 0x67, 0x65,
        0x6e, 0x5d, 0x63, 0x6f, 0x64, 0x65, 0x66, 0x6d, 0xff, 0xff};
    replay_seed(syntax_edits_multi, syntax_edits_nmulti, "bash", script, sizeof script);
}

/* fuzz_syntax_edits' finding 28: count.h in CR LF, with the line that
 * closes `/\* a comment` (edited into `ifndef lines *\/`) moved up to the
 * third line. The move's two edits fell in two segments (2 and 4). The
 * reparse settled segment 2, whose cut with 1 had an error to mend; the
 * merge trial parsed segments 3 to 5 on the way, which left segment 4,
 * edited, no longer dirty, so that its cut with segment 5, inside the now
 * open comment, was never looked at. The undo's first step took the line
 * out at the top; the whole file then closes the comment at the guard's
 * last line, error-free, and the cut inside it stayed. Fails at every sound
 * cut without the trial's edited segments settled. */
static void merge_trial_settles_what_it_parsed(void) {
    static const uint8_t script[] = {
        0x00, 0x00, 0x00, 0x3f, 0x96, 0x02, 0x01, 0x00, 0x2a, 0x91, 0x73, 0x74, 0x72, 0x69,
        0x6e, 0x67, 0x06, 0xfe, 0x3d, 0xa7, 0x63, 0x6f, 0x6d, 0x6d, 0x65, 0x6e, 0x74, 0x3b,
        0xed, 0x1f, 0x0b, 0xde, 0x11, 0xcf, 0x69, 0x66, 0x91, 0x9c, 0xdc, 0xdc, 0xdc, 0xdc,
        0x66, 0x6e, 0x9a, 0x5c, 0x00, 0x00, 0x00, 0x7e, 0x12, 0x28, 0x03, 0x63, 0x6f, 0x6d,
        0x6d, 0x65, 0x6e, 0x74, 0x8f, 0xb7, 0xfe, 0xd8, 0xd3, 0x08, 0x5c, 0x1d, 0x00, 0x7e,
        0x12, 0x21, 0x00, 0x0a, 0x25, 0x74, 0x0c, 0x0b, 0x03, 0x03, 0x49, 0x2e, 0xaf, 0x69,
        0xa7, 0x8a, 0x02, 0x95, 0x26, 0x1d, 0x65, 0x50, 0x07, 0x09, 0xd1, 0x51, 0x5d, 0x46,
        0x00, 0x51, 0xbe, 0xb4, 0x1c, 0x9d, 0x05, 0xc6, 0x85, 0x10, 0x85, 0x66, 0x6e, 0x9a,
        0x5c, 0x00, 0x00, 0x7e, 0x12, 0x28, 0x03, 0x8f, 0xb7, 0xfe, 0xd8, 0xd3, 0x08, 0x5c,
        0x1d, 0x7d, 0xfe, 0x87, 0xf5, 0x28, 0x03, 0x63, 0x6f, 0x6d, 0x6d, 0x65, 0x6e, 0x74,
        0x8f, 0xb7, 0xfe, 0xd8, 0xd3, 0x08, 0x5c, 0x1d, 0x7d, 0xfe, 0x87, 0xf5, 0x1a, 0x2a,
        0x1a, 0x2a, 0x01, 0xe5, 0xb1, 0x23, 0x23, 0xb5, 0x01, 0x16, 0x93, 0x23, 0x23, 0x23};
    replay_sizes("c", syntax_edits_multi[0].text, script, sizeof script);
}

/* Each text, parsed at every sound cut, reads as one tree does, and is
 * error-free. */
static void same_at_every_cut(const char *lang, const char *const *texts, size_t n) {
    for (size_t i = 0; i < n; i++) {
        base_status st = BASE_OK;
        ifl_tree *t = ifl_tree_new(lang, &st), *whole = ifl_tree_new(lang, &st);
        CHECK(t && whole);
        if (!t || !whole)
            return;
        ifl_tree_set_segment_bytes(t, 1);
        ifl_tree_set_segment_bytes(whole, 0);
        size_t len = strlen(texts[i]);
        CHECK_EQ_I(ifl_tree_update(t, texts[i], len), BASE_OK);
        CHECK_EQ_I(ifl_tree_update(whole, texts[i], len), BASE_OK);
        same_tree(t, whole, texts[i], len);
        ifl_tree_free(t);
        ifl_tree_free(whole);
    }
}

/* fuzz_syntax_edits' finding 17: in Lua a string literal at the start of a
 * line is the argument of a call on the line before (`f\n"x"` is f("x")),
 * and so is a long string or a table; the cut before such a line split the
 * call into a call and a second one with a MISSING name. */
static void lua_string_call_on_next_line(void) {
    static const char *const texts[] = {
        "local M = {}\nM.f{}\n\"[==[\"\nfunction M.g(x)\n  return x\nend\nreturn M\n",
        "print\n'one'\nlocal x = 1\nreturn x\n",
        "require\n[[mod]]\nlocal y = 2\n",
    };
    same_at_every_cut("lua", texts, BASE_ARRAY_LEN(texts));
}

/* fuzz_syntax_edits' finding 18: tree-sitter-c reads a conditional that
 * follows `;`, a brace or a closed comment on the same line as a directive
 * (`/\* count.h *\/;#ifndef COUNT_H`); the line lexer looked for
 * conditionals at line starts only, so the file was cut inside one. */
static void c_conditional_after_code_on_line(void) {
    static const char *const texts[] = {
        "/* h */;#ifndef H\n#define H\nint a;\n\nint f(void) { return 1; }\n\nint b;\n#endif\n",
        "int a; #ifdef X\nint b;\n\nint c;\n#endif\nint d;\n",
        "/* x */ #if 1\nint e;\n\nint g;\n#endif\n",
    };
    same_at_every_cut("c", texts, BASE_ARRAY_LEN(texts));
}

/* Found by inserting every line of up to 3 bytes into each multi-construct
 * seed: in Python a decorator, a lone backslash (a line continuation, an
 * extra like a comment), a comment and the decorated function on the next
 * lines. The cut before `def` left the decorator an ERROR, which ended
 * before the line continuation's line and so did not count as reaching the
 * segment's last line of code: the halves were not merged. */
static void python_line_continuation_after_decorator(void) {
    static const char *const texts[] = {
        "import os\n\n\n@decorator\n\\\n#\ndef f(x):\n    return x\n\n\nDOC = 1\n",
        "@a\n\\\n\\\n# c\nclass A:\n    pass\n\n\nx = 1\n",
    };
    same_at_every_cut("python", texts, BASE_ARRAY_LEN(texts));
}

/* Found by inserting every string of up to 2 bytes anywhere in each
 * multi-construct seed: in Rust `#![derive(Debug)]` after the first item is
 * an inner attribute, but the segment cut before it read `#!` at its start
 * as a shebang, which tree-sitter-rust takes only at the file's start. A
 * line starting with `#!` starts no construct now. */
static void rust_inner_attribute_not_shebang(void) {
    static const char *const texts[] = {
        "use std::fmt;\n\n#![derive(Debug)]\nstruct P {\n    x: i32,\n}\n\nfn f() {}\n",
        "fn a() {}\n\n#! [allow(dead_code)]\nfn b() {}\n",
    };
    same_at_every_cut("rust", texts, BASE_ARRAY_LEN(texts));
}

/* Found by the same sweep with two bytes anywhere: in Lua `return` then
 * `# t` on the next line returns t's length, but a segment that starts
 * with `#` reads that line as a hash-bang line, which tree-sitter-lua takes
 * at the file's start (a line starting with `#` starts no construct now);
 * and `return` with its value alone on the next line: that segment was one
 * ERROR, and merging mends it. */
static void lua_line_after_return(void) {
    static const char *const texts[] = {
        "local t = {\nx = 1,\n}\nreturn\n# t\n",
        "local t = {\nx = 1,\n}\nreturn\nt\n",
    };
    same_at_every_cut("lua", texts, BASE_ARRAY_LEN(texts));
}

/* Finding 30: a Lua function whose body lines are in column 0, each a
 * segment of its own when cut at every sound place: the header alone is an
 * ERROR, and only the pieces up to `end` parsed as one mend it. Merging
 * tried at most four segments after the header, here seven. */
static void lua_function_body_in_column_0(void) {
    static const char *const texts[] = {
        "function M.f(x)\nlocal a = 1\nlocal b = 2\nlocal c = 3\nlocal d = 4\nlocal e = "
        "5\nlocal f = 6\nreturn x\nend\nreturn M\n",
    };
    same_at_every_cut("lua", texts, BASE_ARRAY_LEN(texts));
}

/* Found beside fuzz_syntax_edits' finding 24: tree-sitter-c and -cpp know
 * `#include` only; `#include_next` and `#import` are unknown directives,
 * whose argument is raw (a preproc_arg) and stops at a "/" "*" that opens a
 * comment, quotes or not. The line lexer read a string there, which ended
 * at the line end, and cut inside the comment. */
static void include_next_and_import_raw(void) {
    static const char *const texts[] = {
        "#include_next \"x/* a\nint x;\n\nint y;\n*/\nint z;\n",
        "#import \"x/* a\nint x;\n\nint y;\n*/\nint z;\n",
        "#include <x/* a>\nint x;\n\nint y;\n/*/\nint z;\n*/\n",
    };
    same_at_every_cut("c", texts, BASE_ARRAY_LEN(texts));
    same_at_every_cut("cpp", texts, BASE_ARRAY_LEN(texts));
}

/* Where a directive's text ends, against tree-sitter-c itself: every value
 * of up to max_len bytes (3 in ctest; 4, 309,410 texts, by hand) over
 * slashes, stars, backslashes, quotes, brackets, '#', blanks and line
 * breaks (CR LF too), after raw directives and ones read as tokens, inside
 * a conditional whose `#endif` the value may run on over. The tree cut at
 * every sound place mends no construct past two segments (mend bytes 0),
 * and six constructs follow that `#endif`, so a cut the line lexer places
 * inside the directive shows as a difference from one tree. Texts with errors are skipped; a cut
 * placed too late costs speed only and shows nowhere here. */
enum { DIRECTIVE_VALUE_MAX = 6 };

/* s with its line breaks and backslashes escaped, in out (2 bytes per byte
 * of s, and 1). */
static void escaped(const char *s, char *out) {
    for (; *s; s++) {
        const char *e = *s == '\n' ? "\\n" : *s == '\r' ? "\\r" : *s == '\\' ? "\\\\" : NULL;
        if (e) {
            memcpy(out, e, 2);
            out += 2;
        } else {
            *out++ = *s;
        }
    }
    *out = 0;
}

static void directive_value_ends(size_t max_len) {
    static const char alphabet[] = {'a', ' ', '/',  '*', '\\', '\n', '\r',
                                    '"', '#', '\'', '{', '}',  '\t'};
    static const char *const heads[] = {"#define X ", "#define F(x) ", "#define Y", "#define F(x)",
                                        "#pragma ",   "#error",        "#foo ",     "#include <a> ",
                                        "#if B",      "#ifdef B "};
    enum { NA = sizeof alphabet };
    base_status st = BASE_OK;
    ifl_tree *whole = ifl_tree_new("c", &st);
    CHECK(whole != NULL);
    if (!whole)
        return;
    ifl_tree_set_segment_bytes(whole, 0);
    syntax_edits_mend_bytes = 0;
    size_t clean = 0, texts = 0, differ = 0;
    for (size_t h = 0; h < BASE_ARRAY_LEN(heads); h++) {
        for (size_t len = 0; len <= max_len && len <= DIRECTIVE_VALUE_MAX; len++) {
            char v[DIRECTIVE_VALUE_MAX + 1];
            for (size_t code = 0; syntax_edits_nth_string(alphabet, NA, len, code, v); code++) {
                v[len] = 0;
                char text[256];
                int n = snprintf(text, sizeof text,
                                 "#ifdef A\n%s%s\n#endif\nint a;\nint b;\nint c;\nint d;\n"
                                 "int e;\nint f;\n#endif\n",
                                 heads[h], v);
                CHECK(n > 0 && (size_t)n < sizeof text);
                texts++;
                bool ok = false;
                char *a = NULL, *b = NULL;
                CHECK_EQ_I(syntax_edits_cut_compare("c", whole, text, (size_t)n, &ok, &a, &b),
                           BASE_OK);
                clean += ok;
                if (a && differ++ < 3) {
                    char e[2 * DIRECTIVE_VALUE_MAX + 1];
                    escaped(v, e);
                    fprintf(stderr, "directive_value_ends: [%s] [%s]\n  cut:   %s\n  whole: %s\n",
                            heads[h], e, a, b);
                }
                free(a);
                free(b);
            }
        }
    }
    fprintf(stderr, "directive_value_ends: %zu texts, %zu error-free, %zu differ\n", texts, clean,
            differ);
    syntax_edits_mend_bytes = IFL_TREE_MEND_BYTES;
    CHECK_EQ_U(differ, 0);
    /* Most values parse cleanly: the check is not vacuous. */
    CHECK(clean * 2 >= texts);
    ifl_tree_free(whole);
}

/* The guard's lines were parsed as blanks: the #define is the first node
 * (else the #ifndef reads as a conditional, or an ERROR, around it). */
static bool guard_blanked(const char *sexp) {
    return strncmp(sexp, "(translation_unit (preproc_def ", 31) == 0;
}

/* The include guard is looked for again only when an edit could move it
 * (ifl__guard_may_change): these insertions hold no '#' and the first two
 * no delimiter, yet each turns the guard on or off — a letter typed
 * between `/` and `*`, a letter typed after a backslash in a string, a line
 * break that ends a line comment before a comment opener. The tree after
 * the keystroke must equal a fresh tree of the same segment size (which
 * finds the guard anew), and the fresh trees before and after must differ
 * in the guard, or the case tests nothing. */
static void guard_moved_by(const char *text, const char *at, const char *ins) {
    const char *p = strstr(text, at);
    CHECK(p != NULL);
    if (!p)
        return;
    size_t len = strlen(text), off = (size_t)(p - text);
    static const size_t sizes[] = {0, 1, IFL_TREE_SEGMENT_BYTES};
    for (size_t k = 0; k < BASE_ARRAY_LEN(sizes); k++) {
        base_status st = BASE_OK;
        ifl_tree *t = ifl_tree_new("c", &st), *before = ifl_tree_new("c", &st),
                 *fresh = ifl_tree_new("c", &st);
        base_buf doc;
        base_buf_init(&doc);
        CHECK(t && before && fresh);
        if (t && before && fresh && base_buf_append(&doc, text, len) == BASE_OK) {
            ifl_tree_set_segment_bytes(t, sizes[k]);
            ifl_tree_set_segment_bytes(before, sizes[k]);
            ifl_tree_set_segment_bytes(fresh, sizes[k]);
            CHECK_EQ_I(ifl_tree_update(t, text, len), BASE_OK);
            CHECK_EQ_I(syntax_edits_apply(t, &doc, off, 0, ins, strlen(ins)), BASE_OK);
            char *a = ifl_tree_sexp(t, doc.data, doc.len),
                 *b = ifl_tree_sexp(fresh, doc.data, doc.len),
                 *c = ifl_tree_sexp(before, text, len);
            CHECK(a && b && c);
            if (a && b && c) {
                CHECK(guard_blanked(b) != guard_blanked(c));
                if (strcmp(a, b) != 0) {
                    fprintf(stderr, "segment bytes %zu, \"%s\" typed at \"%s\":\n", sizes[k], ins,
                            at);
                    fprintf(stderr, "incremental: %s\nfresh:       %s\n", a, b);
                    CHECK(false);
                }
            }
            free(a);
            free(b);
            free(c);
        }
        base_buf_deinit(&doc);
        ifl_tree_free(t);
        ifl_tree_free(before);
        ifl_tree_free(fresh);
    }
}

static void guard_moved_without_hash(void) {
    /* `1 /x* 2` divides: the comment that hid the #endif is gone. */
    guard_moved_by("#ifndef A_H\n#define A_H\nint x;\nint a = 1 /* 2;\n#endif\n// */\n", "* 2;",
                   "x");
    /* `"a\x"` closes where `"a\"` ran on: the comment opener after it opens. */
    guard_moved_by("#ifndef A_H\n#define A_H\nconst char *s = \"a\\\"/*\";\n#endif\n// */\n",
                   "\"/*\";", "x");
    /* The comment opener leaves the line comment. */
    guard_moved_by("#ifndef A_H\n#define A_H\nint a; // note x/*\n#endif\n// */\n", " x/*", "\n");
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    uint64_t seed = argc > 2 ? (uint64_t)strtoull(argv[2], NULL, 10) : 1000;
    base_log_set_level(BASE_LOG_WARN);
    guard_broken_by_edit();
    guard_head_typed_into();
    jsx_text_over_lines();
    template_after_undo();
    java_reparse_after_undo();
    js_template_merged();
    comment_inside_cut_construct();
    directive_eats_line_break();
    code_after_guard_endif();
    endif_inside_function();
    guard_after_brace_retyped();
    comment_in_macro_continuation();
    endif_above_guard();
    js_template_span_reinserted();
    lua_string_call_on_next_line();
    c_conditional_after_code_on_line();
    include_next_and_import_raw();
    guard_moved_without_hash();
    js_comment_after_asi_declaration();
    cr_before_directive();
    endif_in_macro_continuation();
    bracket_in_directive();
    quote_before_comment_in_directive();
    comment_opener_in_include_path();
    bash_backslash_after_token();
    bash_reparse_after_heredocs();
    merge_trial_settles_what_it_parsed();
    slash_continues_directive();
    python_line_continuation_after_decorator();
    rust_inner_attribute_not_shebang();
    lua_line_after_return();
    lua_function_body_in_column_0();
    directive_value_ends(argc > 3 ? (size_t)atoi(argv[3]) : 3);
    size_t compared = 0;
    /* One tree per buffer, then segments cut at every sound place (the
     * most cuts an edit can move or break), then the default size, then
     * every sound cut with trees dropped away from the focus. */
    for (size_t k = 0; k < BASE_ARRAY_LEN(configs); k++) {
        syntax_edits_segment_bytes = configs[k].seg;
        syntax_edits_keep_bytes = configs[k].keep;
        size_t before = syntax_edits_errorful_diffs;
        run_seeds(syntax_edits_seeds, syntax_edits_nseeds, rounds, seed, &compared);
        run_seeds(syntax_edits_multi, syntax_edits_nmulti, rounds, seed + 100, &compared);
        fprintf(stderr, "segment bytes %zu, keep %zu: %zu differences on text with syntax errors\n",
                configs[k].seg, configs[k].keep, syntax_edits_errorful_diffs - before);
    }
    syntax_edits_keep_bytes = IFL_TREE_KEEP_BYTES;
    /* The property is only tested where documents parse cleanly: make sure
     * a good share of the comparisons did. */
    CHECK(syntax_edits_clean_compared * 4 >= compared);
    fprintf(stderr,
            "%zu comparisons over %zu languages, %zu on error-free text; %zu differences on "
            "text with syntax errors (not failed)\n",
            compared, syntax_edits_nseeds, syntax_edits_clean_compared,
            syntax_edits_errorful_diffs);
    return check_finish("test_syntax_edits");
}
