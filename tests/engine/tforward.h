/* Helpers shared by the engine tests that compare logits of whole passes:
 * every row's logits from eng_forward, and the worst row's relative error.
 * Include after check.h and engine.h. */
#ifndef INFILLD_TESTS_TFORWARD_H
#define INFILLD_TESTS_TFORWARD_H

#include <math.h>
#include <stdlib.h>

/* max over rows of max|a - b| / max|b|. */
static inline double tf_row_err(const float *a, const float *b, int n_rows, int V) {
    double worst = 0;
    for (int r = 0; r < n_rows; r++) {
        double md = 0, mb = 0;
        for (int v = 0; v < V; v++) {
            md = fmax(md, fabs((double)a[(size_t)r * V + v] - b[(size_t)r * V + v]));
            mb = fmax(mb, fabs((double)b[(size_t)r * V + v]));
        }
        worst = fmax(worst, mb > 0 ? md / mb : md);
    }
    return worst;
}

/* The logits of every row of n_seq sequences of len tokens (valid: NULL for
 * all valid), in a fresh context; the caller frees them. */
static inline float *tf_forward_all(eng_model *m, const int32_t *tok, const uint8_t *valid,
                                    int n_seq, int len) {
    const int V = eng_model_get_info(m)->vocab_size;
    eng_error err = {0};
    eng_ctx *c = eng_ctx_new(m, n_seq, len, &err);
    CHECK(c != NULL);
    float *out = calloc((size_t)n_seq * len * V, sizeof(float));
    int32_t *rows = malloc((size_t)n_seq * len * sizeof *rows);
    for (int i = 0; i < n_seq * len; i++)
        rows[i] = i;
    eng_batch b = {n_seq, len, tok, valid};
    CHECK_EQ_I(eng_forward(c, &b, rows, n_seq * len, out), BASE_OK);
    free(rows);
    eng_ctx_free(c);
    return out;
}

#endif
