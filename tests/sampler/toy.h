/* A toy "model" for sampler tests: logits are an integer hash of the
 * sequence's committed tokens, the position and the vocabulary id, so a Python
 * reference (toy_ref.py) computes exactly the same numbers. The stepper applies
 * the Dream or Gumbel pick the way docs/SAMPLERS.md states it. Test-only. */
#ifndef INFILLD_TESTS_SAMPLER_TOY_H
#define INFILLD_TESTS_SAMPLER_TOY_H

#include "diffusion.h"

#define TOY_VOCAB 48
#define TOY_MASK 47
#define TOY_BOS 46
#define TOY_EOS 45
#define TOY_EXPAND 44

/* Model info of the toy (Dream family, shifted, mask 47, BOS 46, EOS = pad 45);
 * with_expand adds the DreamOn expand id 44. */
void toy_info(eng_model_info *info, bool with_expand);
/* Raw logit of vocabulary id v at position pos of seq[0..len). */
double toy_logit(const int32_t *seq, int len, int pos, int v);
/* Stepper: ud is unused (NULL). */
base_status toy_step(void *ud, const eng_batch *batch, const eng_step_req *req,
                     eng_row_result *out);

#endif
