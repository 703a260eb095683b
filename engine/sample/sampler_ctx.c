/* The production stepper: eng_step on an eng_ctx. Kept apart from sampler.c so
 * that sampler tests can link the samplers against a scripted stepper alone. */
#include "diffusion.h"

static base_status eng__ctx_step(void *ud, const eng_batch *batch, const eng_step_req *req,
                                 eng_row_result *out) {
    return eng_step((eng_ctx *)ud, batch, req, out);
}

eng_stepper eng_stepper_ctx(eng_ctx *ctx) {
    eng_stepper s = {eng__ctx_step, ctx};
    return s;
}
