/* infill for DiffusionGemma (shared/design/DIFFUSIONGEMMA.md §4.1, option a):
 * prompt-level FIM in the Gemma-4 chat template with thinking off, the
 * official entropy-bound sampler unchanged, and a clean-up of the chat
 * framing (prose, markdown fences, echoed prefix/suffix) before the usual
 * post-processing and validation. The model has no FIM or mask token. */
#ifndef INFILLD_INFILL_DGEMMA_FIM_H
#define INFILLD_INFILL_DGEMMA_FIM_H

#include "base.h"
#include "dgemma.h"
#include "engine.h"

#include <stddef.h>

#define IFL_DG_HOLE "<MISSING>"

/* The user turn's text (without the turn markers): the instruction and the
 * code with IFL_DG_HOLE at the cursor, fenced as language lang (may be NULL).
 * Caller frees *out. */
base_status ifl_dg_user_text(const char *prefix, size_t n_prefix, const char *suffix,
                             size_t n_suffix, const char *lang, char **out, size_t *len);

/* The whole prompt as ids: <bos><|turn>user\n TEXT <turn|>\n<|turn>model\n,
 * the markers as the tokenizer's special ids (ERR_MODEL when it lacks them).
 * Caller frees *ids. */
base_status ifl_dg_prompt_ids(const eng_tokenizer *t, const char *user, size_t n_user,
                              int32_t **ids, int *n);

/* Clean-up of a chat answer into the code for the hole: the content of the
 * first markdown fence when there is one (prose around it dropped), else
 * the text without leading prose lines ("Here is ...:"); then an echo of the
 * prefix's tail at the start and of the suffix's head at the end removed, and
 * a stray IFL_DG_HOLE marker. Writes a malloc'ed NUL-terminated string. */
base_status ifl_dg_clean(const char *ans, size_t n_ans, const char *prefix, size_t n_prefix,
                         const char *suffix, size_t n_suffix, char **out, size_t *len);

#endif
