/* engine-private: host-side planning of the CUDA backend, kept apart from the
 * device code so that it is unit-tested on machines without a GPU. */
#ifndef INFILLD_ENGINE_BACKEND_CUDA_H
#define INFILLD_ENGINE_BACKEND_CUDA_H

#include "backend.h"

/* The rows one step recomputes and the LM-head rows it reads. */
typedef struct eng__cuda_plan {
    int n_seq, len;
    int win_start, n_q; /* window [win_start, win_start + n_q) of every sequence */
    int n_head_rows;    /* = n_pos */
} eng__cuda_plan;

/* Maps a step request to a window and, per asked position, the window row that
 * feeds the LM head (head_rows[j] = b * n_q + (row - win_start), row = i - 1 for
 * shifted families, i otherwise, 0 for i = 0), or -1 when that canvas row is
 * padding (its logits are zeros, as on the CPU), and the noise counter
 * (noise_pos[j] = the canvas position). ERR_INVALID when a row falls outside
 * the window. */
base_status eng__cuda_plan_step(const eng_model_info *info, const eng_batch *batch,
                                const eng_step_req *req, eng__cuda_plan *plan, int32_t *head_rows,
                                uint32_t *noise_pos);

/* Device bytes the weights take with matrices stored as `matrix_dtype`
 * (eng_dtype value, or 3 for FP8 with per-row fp32 scales). */
uint64_t eng__cuda_weight_bytes(const eng_model_info *info, int matrix_dtype);
/* Device bytes of a context (K/V cache + activations + logits scratch). */
uint64_t eng__cuda_ctx_bytes(const eng_model_info *info, int max_batch, int max_len,
                             int head_chunk);

/* LM-head rows a step computes for n asked rows: the next power of two >= 8,
 * at most cap (and never below n). */
int eng__cuda_row_bucket(int n, int cap);

/* Key of a captured step graph: everything that changes the launch sequence. */
typedef struct eng__cuda_graph_key {
    int n_seq, len, win_start, n_q, n_head_rows;
} eng__cuda_graph_key;

#endif
