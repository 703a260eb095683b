/* A grammar that loops forever on some broken text must not take the daemon
 * with it: tree-sitter-typescript (0.23.2, runtime 0.25.1) loops inside
 * ts_parser__do_all_potential_reductions on the fragment below (found by the
 * edit fuzzer), where tree-sitter's progress callback never runs. The parse
 * must give up with ERR_TIMEOUT, the span and validation fall back, and the
 * same tree parses the next, fixed text. Without the guard this test hangs
 * (and ctest's timeout fails it). */
#include "check.h"
#include "syntax.h"

#include <stdlib.h>
#include <string.h>

static const char hang[] = "interf) P {\n  x: number\n}\n\ntype Q + &\n{ y: */numb+er }\n*/-export "
                           "functio]n f(p: P\\ number {\n  return p.x\n}\n\num{\n  A,\n  B,\n}\n";

static const char fixed[] = "interface P {\n  x: number\n}\n";

int main(void) {
    base_log_set_level(BASE_LOG_ERROR);
    size_t n = strlen(hang);
    base_status st = BASE_OK;
    ifl_tree *t = ifl_tree_new("typescript", &st);
    CHECK(t != NULL);
    if (!t)
        return check_finish("test_syntax_guard");
    CHECK_EQ_I(ifl_tree_update(t, hang, n), BASE_ERR_TIMEOUT);
    /* The same text again: answered without another try. */
    CHECK_EQ_I(ifl_tree_update(t, hang, n), BASE_ERR_TIMEOUT);
    ifl_span sp;
    CHECK(ifl_tree_locate(t, hang, n, 10, 0, 0, &sp) != BASE_OK);
    /* The text entry points parse on their own and give up the same way. */
    CHECK(ifl_syntax_locate_text("typescript", hang, n, 10, 0, 0, &sp) != BASE_OK);
    CHECK_EQ_I(ifl_syntax_validate_text("typescript", hang, n, 10, 10, "x", 1), BASE_ERR_TIMEOUT);
    /* The tree recovers: a rebuild with good text parses. */
    size_t m = strlen(fixed);
    CHECK_EQ_I(ifl_tree_update(t, fixed, m), BASE_OK);
    CHECK_EQ_U(ifl_tree_error_count(t, fixed, m), 0);
    char *sx = ifl_tree_sexp(t, fixed, m);
    CHECK(sx && strstr(sx, "interface_declaration") != NULL);
    free(sx);
    CHECK_EQ_I(ifl_tree_locate(t, fixed, m, 16, 0, 0, &sp), BASE_OK);
    ifl_tree_free(t);
    return check_finish("test_syntax_guard");
}
