/* ifl_syntax on a document store: trees follow incremental edits (equal to a
 * fresh parse), spans come from the document, unsupported languages get line
 * rules, closing frees the tree. */
#include "check.h"
#include "document.h"
#include "syntax.h"

#include <stdlib.h>
#include <string.h>

static void check_tree_fresh(ifl_syntax *sx, lsp_doc *d, const char *lang) {
    size_t len = 0;
    const char *text = lsp_doc_text(d, &len);
    ifl_tree *t = ifl_syntax_tree(sx, d);
    CHECK(t != NULL);
    if (!t)
        return;
    char *a = ifl_tree_sexp(t, text, len);
    ifl_tree *f = ifl_tree_new(lang, NULL);
    char *b = ifl_tree_sexp(f, text, len);
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    ifl_tree_free(f);
}

int main(void) {
    base_log_set_level(BASE_LOG_WARN);
    lsp_doc_store *store = lsp_doc_store_new();
    CHECK(store != NULL);
    ifl_syntax *sx = ifl_syntax_new(store);
    CHECK(sx != NULL);
    if (!store || !sx)
        return check_finish("test_syntax_doc");

    const char *src = "def f(xs):\n    total = 0\n    return total\n";
    CHECK_EQ_I(lsp_doc_open(store, "file:///a.py", "python", 1, src, strlen(src)), BASE_OK);
    lsp_doc *d = lsp_doc_get(store, "file:///a.py");
    CHECK(d != NULL);
    check_tree_fresh(sx, d, "python");

    /* Type a new line after "total = 0", one character at a time. */
    const char *typed = "\n    for x in xs:";
    for (size_t i = 0; typed[i]; i++) {
        uint32_t col = i == 0 ? 13 : (uint32_t)(i - 1);
        uint32_t line = i == 0 ? 1 : 2;
        CHECK_EQ_I(lsp_doc_apply(d, LSP_ENC_UTF16, line, col, line, col, typed + i, 1), BASE_OK);
    }
    check_tree_fresh(sx, d, "python");
    size_t len = 0;
    const char *text = lsp_doc_text(d, &len);
    CHECK_STR(text, "def f(xs):\n    total = 0\n    for x in xs:\n    return total\n");

    /* Cursor at the end of the new `for` line: a block with a body to write. */
    size_t cursor = 0;
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF16, 2, 16, &cursor), BASE_OK);
    ifl_span sp;
    CHECK_EQ_I(ifl_syntax_locate(sx, d, cursor, 0, 0, &sp), BASE_OK);
    CHECK_EQ_I(sp.kind, IFL_SPAN_BLOCK);
    CHECK_STR(sp.language, "python");
    ifl_post_opts o = {.validate = true};
    char *out = NULL;
    size_t out_len = 0;
    const char *cand = "\n        total += x\n    return total\n";
    CHECK_EQ_I(ifl_syntax_postprocess(sx, d, &sp, cand, strlen(cand), &o, &out, &out_len), BASE_OK);
    CHECK_STR(out, "\n        total += x");
    free(out);
    out = NULL;
    cand = "\n        total += (x\n";
    CHECK_EQ_I(ifl_syntax_postprocess(sx, d, &sp, cand, strlen(cand), &o, &out, &out_len),
               BASE_ERR_PARSE);
    CHECK(out == NULL);

    /* Replace everything (full sync) and check again. */
    const char *src2 = "x = [1,\n     2]\n";
    CHECK_EQ_I(lsp_doc_replace_all(d, 2, src2, strlen(src2)), BASE_OK);
    check_tree_fresh(sx, d, "python");

    /* An unsupported language: no tree, line rules still work. */
    const char *txt = "hello world\n";
    CHECK_EQ_I(lsp_doc_open(store, "file:///notes.xyz", "plaintext", 1, txt, strlen(txt)), BASE_OK);
    lsp_doc *n = lsp_doc_get(store, "file:///notes.xyz");
    CHECK(ifl_syntax_tree(sx, n) == NULL);
    CHECK_EQ_I(ifl_syntax_locate(sx, n, 5, 0, 0, &sp), BASE_OK);
    CHECK_EQ_I(sp.kind, IFL_SPAN_LINE_REST);
    CHECK(sp.language == NULL);
    o.validate = true; /* ignored without a grammar */
    CHECK_EQ_I(ifl_syntax_postprocess(sx, n, &sp, " big\nx", 6, &o, &out, &out_len), BASE_OK);
    CHECK_STR(out, " big");
    free(out);

    /* Language from the extension when the languageId is unknown. */
    CHECK_EQ_I(lsp_doc_open(store, "file:///m.rs", "unknown-id", 1, "fn f() {}\n", 10), BASE_OK);
    CHECK(ifl_syntax_tree(sx, lsp_doc_get(store, "file:///m.rs")) != NULL);

    CHECK_EQ_I(lsp_doc_close(store, "file:///a.py"), BASE_OK);
    lsp_doc_store_free(store); /* closes the rest; trees go with them */
    ifl_syntax_free(sx);
    return check_finish("test_syntax_doc");
}
