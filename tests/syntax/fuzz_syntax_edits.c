/* libFuzzer harness: the input picks a seed document and a tree layout and
 * drives edits of it; a difference between the incrementally edited tree and
 * a fresh parse of an error-free document aborts. Built only with
 * INFILLD_FUZZ.
 *
 * Input: data[0] the seed document (small, or of several constructs), the
 * segment size of the edited tree (whole, every sound cut, default) and,
 * from its top three bits, whether only the focus's segment and its
 * neighbours keep their trees (values 3-7: ifl_tree_set_keep_bytes 0);
 * data[1] the mode: mostly (data[1] % 8 != 7) the rest is an edit script
 * (syntax_script.h), whose undos and parse-keeping edits bring the text back
 * to error-free states, where the check can fail; else the rest is the old
 * input, 8 bytes of a random seed for syntax_edits_run and bytes appended to
 * the document (almost always errorful text: kept for its coverage of error
 * recovery). With INFILLD_FUZZ_STATS set, the share of comparisons on
 * error-free text is printed at exit. */
#include "syntax_edits.h"
#include "syntax_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void print_stats(void) {
    fprintf(stderr, "fuzz_syntax_edits: %zu comparisons, %zu on error-free text\n",
            syntax_edits_points, syntax_edits_clean_compared);
}

static void appended(const syntax_edits_seed *sd, const uint8_t *data, size_t size,
                     size_t *mismatches) {
    if (size < 8)
        return;
    uint64_t seed = 0;
    memcpy(&seed, data, 8);
    base_rng rng;
    base_rng_seed(&rng, seed);
    size_t tl = strlen(sd->text), extra = size - 8;
    char *text = malloc(tl + extra + 1);
    if (!text)
        return;
    memcpy(text, sd->text, tl);
    /* NUL bytes end the input for tree-sitter's lexers in ways that depend
     * on where parsing resumes; documents do not contain them. */
    for (size_t i = 0; i < extra; i++)
        text[tl + i] = data[8 + i] ? (char)data[8 + i] : ' ';
    text[tl + extra] = 0;
    /* Strict on documents that parse cleanly; error recovery may differ. */
    syntax_edits_run(sd->lang, text, tl + extra, &rng, 8, true, mismatches);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static bool init;
    if (!init) {
        init = true;
        base_log_set_level(BASE_LOG_OFF);
        if (getenv("INFILLD_FUZZ_STATS"))
            atexit(print_stats);
    }
    if (size < 2)
        return 0;
    size_t pick = data[0] % (syntax_edits_nseeds + syntax_edits_nmulti);
    const syntax_edits_seed *sd = pick < syntax_edits_nseeds
                                      ? &syntax_edits_seeds[pick]
                                      : &syntax_edits_multi[pick - syntax_edits_nseeds];
    static const size_t sizes[] = {0, 1, IFL_TREE_SEGMENT_BYTES};
    syntax_edits_segment_bytes = sizes[(data[0] >> 5) % 3];
    /* Five of the eight: only the focus's segment and its neighbours keep
     * their trees. */
    syntax_edits_keep_bytes = (data[0] >> 5) >= 3 ? 0 : IFL_TREE_KEEP_BYTES;
    /* Only comparisons on error-free text can fail here (only_clean); the
     * others need no S-expressions. */
    syntax_edits_skip_errorful = true;
    size_t mismatches = 0;
    if (data[1] % 8 == 7)
        appended(sd, data + 2, size - 2, &mismatches);
    else
        syntax_script_run(sd->lang, sd->text, strlen(sd->text), data + 2, size - 2, &mismatches);
    if (mismatches)
        abort();
    return 0;
}
