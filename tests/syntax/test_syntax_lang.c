/* Grammars: every compiled-in language loads at a supported ABI, parses a
 * snippet without errors, has a spans.scm that compiles; languageId and
 * extension tables. */
#include "check.h"
#include "grammars.h"
#include "syntax.h"
#include "syntax_impl.h"

#include <stdlib.h>
#include <string.h>

static const char *const snippets[][2] = {
    {"c", "int main(void) { return 0; }\n"},
    {"cpp", "template <class T> T id(T x) { return x; }\n"},
    {"python", "def f(x):\n    return x\n"},
    {"javascript", "const f = (x) => x * 2;\n"},
    {"typescript", "let x: number = 1;\n"},
    {"tsx", "const a = <div>{1}</div>;\n"},
    {"go", "package main\n\nfunc main() {}\n"},
    {"rust", "fn main() { let v = vec![1]; }\n"},
    {"java", "class A { void f() {} }\n"},
    {"lua", "local x = 1\nprint(x)\n"},
    {"bash", "for f in *; do echo \"$f\"; done\n"},
    {"json", "{\"a\": [1, 2, null]}\n"},
};

int main(void) {
    base_log_set_level(BASE_LOG_WARN);
    CHECK_EQ_U(gr_language_count(), BASE_ARRAY_LEN(snippets));
    for (size_t i = 0; i < BASE_ARRAY_LEN(snippets); i++) {
        const char *lang = snippets[i][0], *src = snippets[i][1];
        const TSLanguage *ts = gr_language(lang);
        CHECK(ts != NULL);
        if (!ts)
            continue;
        uint32_t abi = ts_language_abi_version(ts);
        CHECK(abi >= TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION &&
              abi <= TREE_SITTER_LANGUAGE_VERSION);
        size_t qlen = 0;
        CHECK(gr_query_source(lang, "spans", &qlen) != NULL && qlen > 0);
        base_status st = BASE_OK;
        ifl_tree *t = ifl_tree_new(lang, &st);
        CHECK(t != NULL);
        if (!t)
            continue;
        CHECK_STR(ifl_tree_language(t), lang);
        CHECK(t->spans != NULL);
        CHECK(t->cap_comment != UINT32_MAX);
        CHECK(t->cap_string != UINT32_MAX);
        CHECK(t->cap_body != UINT32_MAX);
        CHECK_EQ_U(ifl_tree_error_count(t, src, strlen(src)), 0);
        ifl_tree_free(t);
    }
    CHECK(gr_language("cobol") == NULL);
    CHECK(gr_query_source("c", "nope", NULL) == NULL);
    base_status st = BASE_OK;
    CHECK(ifl_tree_new("cobol", &st) == NULL);
    CHECK_EQ_I(st, BASE_ERR_UNSUPPORTED);
    CHECK_EQ_I(ifl_syntax_validate_text("cobol", "x", 1, 0, 0, "y", 1), BASE_ERR_UNSUPPORTED);

    /* languageId first, then the extension. */
    CHECK_STR(ifl_syntax_language("typescriptreact", NULL), "tsx");
    CHECK_STR(ifl_syntax_language("shellscript", "file:///x"), "bash");
    CHECK_STR(ifl_syntax_language("python", "file:///a.rs"), "python");
    CHECK_STR(ifl_syntax_language("plaintext", "file:///src/a.rs"), "rust");
    CHECK_STR(ifl_syntax_language(NULL, "/home/u/x.HPP.d/m.hpp"), "cpp");
    CHECK_STR(ifl_syntax_language(NULL, "file:///a/b.test.tsx?x=1#L2"), "tsx");
    CHECK_STR(ifl_syntax_language(NULL, "C:\\src\\main.go"), "go");
    CHECK(ifl_syntax_language(NULL, "file:///a/.bashrc") == NULL);
    CHECK(ifl_syntax_language("markdown", "file:///README.md") == NULL);
    CHECK(ifl_syntax_language(NULL, NULL) == NULL);
    CHECK(ifl_syntax_language(NULL, "file:///Makefile") == NULL);

    /* Bad arguments are errors, not crashes. */
    ifl_span sp;
    CHECK_EQ_I(ifl_syntax_locate_text("c", "int x;", 6, 7, 0, 0, &sp), BASE_ERR_RANGE);
    CHECK_EQ_I(ifl_syntax_locate_text("c", "int x;", 6, 0, 4, 2, &sp), BASE_ERR_RANGE);
    CHECK_EQ_I(ifl_syntax_locate_text("c", "", 0, 0, 0, 0, &sp), BASE_OK);
    char *out = NULL;
    size_t out_len = 0;
    ifl_post_opts o = {.validate = true};
    sp.hole_start = 5;
    sp.hole_end = 99;
    CHECK_EQ_I(ifl_syntax_postprocess_text("c", "int x;", 6, &sp, "y", 1, &o, &out, &out_len),
               BASE_ERR_RANGE);
    CHECK(out == NULL);

    /* Large files: the _text entry points parse only the window around the
     * cursor; they must agree with the kept-tree path on every span kind. */
    base_buf big;
    base_buf_init(&big);
    for (int f = 0; f < 600; f++)
        base_buf_printf(&big,
                        "def f%d(xs):\n    # sum of xs\n    total = sum(xs)\n    if total:\n"
                        "        \n    return \"%d\"\n\n\n",
                        f, f);
    ifl_tree *bt = ifl_tree_new("python", NULL);
    const char *probes[] = {"sum(xs)", "of xs", "if total:", "    return", "\"3"};
    size_t offs[] = {4, 3, 9, 0, 2};
    for (size_t i = 0; i < BASE_ARRAY_LEN(probes); i++) {
        const char *at = strstr(big.data + big.len / 2, probes[i]);
        CHECK(at != NULL);
        if (!at)
            continue;
        size_t cur2 = (size_t)(at - big.data) + offs[i];
        ifl_span a, b;
        CHECK_EQ_I(ifl_syntax_locate_text("python", big.data, big.len, cur2, 0, 0, &a), BASE_OK);
        CHECK_EQ_I(ifl_tree_locate(bt, big.data, big.len, cur2, 0, 0, &b), BASE_OK);
        CHECK_EQ_I(a.kind, b.kind);
        CHECK_EQ_U(a.hole_start, b.hole_start);
        CHECK_EQ_I(a.n_tokens, b.n_tokens);
        CHECK_EQ_I(a.n_max, b.n_max);
        char *x = NULL, *y = NULL;
        size_t xl = 0, yl = 0;
        base_status sa =
            ifl_syntax_postprocess_text("python", big.data, big.len, &a, "n = 1\n", 6, &o, &x, &xl);
        base_status sb = ifl_tree_postprocess(bt, big.data, big.len, &b, "n = 1\n", 6, &o, &y, &yl);
        CHECK_EQ_I(sa, sb);
        CHECK((!x && !y) || (x && y && strcmp(x, y) == 0));
        free(x);
        free(y);
    }
    ifl_tree_free(bt);
    base_buf_deinit(&big);

    /* CRLF documents get CRLF completions. */
    const char *crlf = "int f(void) {\r\n    int a = 1;\r\n    \r\n    return a;\r\n}\r\n";
    size_t cur = strstr(crlf, "    \r\n    return") - crlf + 4;
    CHECK_EQ_I(ifl_syntax_locate_text("c", crlf, strlen(crlf), cur, 0, 0, &sp), BASE_OK);
    CHECK_EQ_I(sp.kind, IFL_SPAN_STATEMENT);
    CHECK_EQ_I(ifl_syntax_postprocess_text("c", crlf, strlen(crlf), &sp, "a++;\n    a++;", 13, &o,
                                           &out, &out_len),
               BASE_OK);
    CHECK_STR(out, "a++;\r\n    a++;");
    free(out);
    /* A rejected candidate is cut back to its leading lines that pass, in
     * the file's line endings. */
    out = NULL;
    CHECK_EQ_I(ifl_syntax_postprocess_text("c", crlf, strlen(crlf), &sp,
                                           "a++;\n    a += 2;\n    a = (;", 27, &o, &out, &out_len),
               BASE_OK);
    CHECK_STR(out, "a++;\r\n    a += 2;");
    free(out);
    return check_finish("test_syntax_lang");
}
