/* infill/prefill.c: the idle-prefill slot (prefill.h).
 *
 * Design (issue 19 item 3, docs/PROTOCOL.md "idlePrefill"): the prefill runs
 * the next request's own first full forward rather than encoding the context
 * in 64-token chunks that each see only the earlier ones. For a bidirectional
 * model the chunked encoding is an approximation (every row's K/V above layer
 * 0 depends on every other row); the request's own step is exact, so a
 * request served from it is bit-identical to one without prefill, in exact
 * mode too. The step is preemptible between layers (the engine's cancel
 * check), which bounds what a request arriving mid-prefill waits. */
#include "prefill.h"

#include <stdlib.h>
#include <string.h>

void ifl_pf_clear(ifl_pf_slot *s) {
    free(s->tokens);
    free(s->mask);
    free(s->positions);
    free(s->bias);
    free(s->out);
    memset(s, 0, sizeof *s);
}

static bool ifl__pf_same_req(const eng_step_req *a, const eng_step_req *b) {
    if (a->mode != b->mode || a->n_pos != b->n_pos)
        return false;
    if (a->mode == ENG_STEP_WINDOW && (a->win_start != b->win_start || a->win_end != b->win_end))
        return false;
    const eng_sampling *x = &a->sampling, *y = &b->sampling;
    /* Bit patterns for the floats: the same request, not a close one. */
    if (x->pick != y->pick || memcmp(&x->temperature, &y->temperature, sizeof(float)) != 0 ||
        memcmp(&x->top_p, &y->top_p, sizeof(float)) != 0 || x->top_k != y->top_k ||
        x->seed != y->seed || x->step != y->step || x->n_bias != y->n_bias)
        return false;
    if (a->n_pos > 0 && memcmp(a->positions, b->positions, sizeof(int32_t) * (size_t)a->n_pos) != 0)
        return false;
    if (x->n_bias > 0 && memcmp(x->bias, y->bias, sizeof(eng_logit_bias) * (size_t)x->n_bias) != 0)
        return false;
    return true;
}

bool ifl_pf_match(const ifl_pf_slot *s, uint64_t gen, const eng_batch *b, const eng_step_req *r) {
    if (!s->valid || s->gen != gen || b->n_seq != s->n_seq || b->len != s->len)
        return false;
    size_t n = (size_t)b->n_seq * (size_t)b->len;
    if (memcmp(b->tokens, s->tokens, sizeof(int32_t) * n) != 0)
        return false;
    if ((b->valid != NULL) != (s->mask != NULL) || (b->valid && memcmp(b->valid, s->mask, n) != 0))
        return false;
    return ifl__pf_same_req(r, &s->req);
}

bool ifl_pf_covers(const ifl_pf_slot *s, uint64_t gen, const int32_t *canvas, int len, int n_seq) {
    if (!s->valid || s->gen != gen || s->n_seq != n_seq || s->len != len ||
        s->req.mode != ENG_STEP_FULL || s->mask)
        return false;
    for (int b = 0; b < n_seq; b++)
        if (memcmp(s->tokens + (size_t)b * (size_t)len, canvas, sizeof(int32_t) * (size_t)len) != 0)
            return false;
    return true;
}

base_status ifl_pf_keep(ifl_pf_slot *s, uint64_t gen, const eng_batch *b, const eng_step_req *r,
                        const eng_row_result *out) {
    ifl_pf_clear(s);
    size_t n = (size_t)b->n_seq * (size_t)b->len;
    s->tokens = malloc(sizeof(int32_t) * (n ? n : 1));
    s->mask = b->valid ? malloc(n ? n : 1) : NULL;
    s->positions = malloc(sizeof(int32_t) * (size_t)(r->n_pos > 0 ? r->n_pos : 1));
    s->bias =
        r->sampling.n_bias > 0 ? malloc(sizeof(eng_logit_bias) * (size_t)r->sampling.n_bias) : NULL;
    s->out = malloc(sizeof(eng_row_result) * (size_t)(r->n_pos > 0 ? r->n_pos : 1));
    if (!s->tokens || (b->valid && !s->mask) || !s->positions ||
        (r->sampling.n_bias > 0 && !s->bias) || !s->out) {
        ifl_pf_clear(s);
        return BASE_ERR_NOMEM;
    }
    memcpy(s->tokens, b->tokens, sizeof(int32_t) * n);
    if (b->valid)
        memcpy(s->mask, b->valid, n);
    s->req = *r;
    if (r->n_pos > 0) {
        memcpy(s->positions, r->positions, sizeof(int32_t) * (size_t)r->n_pos);
        memcpy(s->out, out, sizeof(eng_row_result) * (size_t)r->n_pos);
    }
    s->req.positions = s->positions;
    if (s->bias)
        memcpy(s->bias, r->sampling.bias, sizeof(eng_logit_bias) * (size_t)r->sampling.n_bias);
    s->req.sampling.bias = s->bias;
    s->n_seq = b->n_seq;
    s->len = b->len;
    s->gen = gen;
    s->valid = true;
    return BASE_OK;
}
