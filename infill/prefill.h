/* infill/prefill.h: the model's idle-prefill slot (private to infill/).
 *
 * One kept first step: the batch and step request it answered, its row
 * results and the ctx generation it left (the ctx's K/V cache then holds that
 * batch's full forward). A later step with the same batch and request, at the
 * same generation, is answered from it: what the engine would compute, bit
 * for bit, because nothing used the ctx since. */
#ifndef INFILLD_INFILL_PREFILL_H
#define INFILLD_INFILL_PREFILL_H

#include "engine.h"

typedef struct ifl_pf_slot {
    bool valid;
    uint64_t gen; /* the ctx generation right after the kept step */
    int n_seq, len;
    int32_t *tokens;
    uint8_t *mask; /* batch.valid copy, NULL when the batch had none */
    eng_step_req req;
    int32_t *positions;
    eng_logit_bias *bias;
    eng_row_result *out;
} ifl_pf_slot;

void ifl_pf_clear(ifl_pf_slot *s);
bool ifl_pf_match(const ifl_pf_slot *s, uint64_t gen, const eng_batch *b, const eng_step_req *r);
/* Does the kept step run on n_seq copies of canvas[len] (a full forward)? */
bool ifl_pf_covers(const ifl_pf_slot *s, uint64_t gen, const int32_t *canvas, int len, int n_seq);
base_status ifl_pf_keep(ifl_pf_slot *s, uint64_t gen, const eng_batch *b, const eng_step_req *r,
                        const eng_row_result *out);

#endif
