/* Incremental parsing: random edit sequences applied to a document and, via
 * ifl_tree_edit, to its tree; after every few edits the incrementally
 * reparsed tree must equal a fresh parse of the same text (same
 * S-expression). Deterministic: a fixed seed per language. Also the core of
 * the libFuzzer harness fuzz_syntax_edits (syntax_edits_run). */
#include "check.h"
#include "syntax.h"
#include "syntax_edits.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    base_log_set_level(BASE_LOG_WARN);
    size_t total = 0;
    for (size_t i = 0; i < syntax_edits_nseeds; i++) {
        const syntax_edits_seed *sd = &syntax_edits_seeds[i];
        base_rng rng;
        base_rng_seed(&rng, 1000 + i);
        size_t mismatches = 0;
        base_status st = syntax_edits_run(sd->lang, sd->text, strlen(sd->text), &rng, rounds, false,
                                          &mismatches);
        CHECK_EQ_I(st, BASE_OK);
        CHECK_EQ_U(mismatches, 0);
        total += (size_t)rounds;
    }
    fprintf(stderr, "%zu edits over %zu languages\n", total, syntax_edits_nseeds);
    return check_finish("test_syntax_edits");
}
