/* libFuzzer harness: the input picks a seed document and drives the edit
 * generator; a difference between the incrementally edited tree and a fresh
 * parse of an error-free document aborts. Built only with INFILLD_FUZZ. */
#include "syntax_edits.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 9)
        return 0;
    /* data[0]: the seed document (small or of several constructs) and the
     * segment size of the edited tree (whole, every sound cut, default). */
    size_t pick = data[0] % (syntax_edits_nseeds + syntax_edits_nmulti);
    const syntax_edits_seed *sd = pick < syntax_edits_nseeds
                                      ? &syntax_edits_seeds[pick]
                                      : &syntax_edits_multi[pick - syntax_edits_nseeds];
    static const size_t sizes[] = {0, 1, 4096};
    syntax_edits_segment_bytes = sizes[(data[0] >> 5) % 3];
    uint64_t seed = 0;
    memcpy(&seed, data + 1, 8);
    base_rng rng;
    base_rng_seed(&rng, seed);
    /* The rest of the input is appended to the seed document. */
    size_t tl = strlen(sd->text), extra = size - 9;
    char *text = malloc(tl + extra + 1);
    if (!text)
        return 0;
    memcpy(text, sd->text, tl);
    /* NUL bytes end the input for tree-sitter's lexers in ways that depend
     * on where parsing resumes; documents do not contain them. */
    for (size_t i = 0; i < extra; i++)
        text[tl + i] = data[9 + i] ? (char)data[9 + i] : ' ';
    text[tl + extra] = 0;
    size_t mismatches = 0;
    base_log_set_level(BASE_LOG_OFF);
    /* Only comparisons on error-free text can fail here (only_clean below);
     * the others need no reference S-expression. */
    syntax_edits_skip_errorful = true;
    /* Strict on documents that parse cleanly; error recovery may differ. */
    syntax_edits_run(sd->lang, text, tl + extra, &rng, 8, true, &mismatches);
    free(text);
    if (mismatches)
        abort();
    return 0;
}
