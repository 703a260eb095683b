/* CUDA backend, host side: step planning and memory estimates (no CUDA). */
#include "backend_cuda.h"

base_status eng__cuda_plan_step(const eng_model_info *info, const eng_batch *batch,
                                const eng_step_req *req, eng__cuda_plan *plan, int32_t *head_rows,
                                uint32_t *noise_pos) {
    const int len = batch->len;
    plan->n_seq = batch->n_seq;
    plan->len = len;
    if (req->mode == ENG_STEP_WINDOW) {
        if (req->win_start < 0 || req->win_end > len || req->win_start >= req->win_end)
            return BASE_ERR_INVALID;
        plan->win_start = req->win_start;
        plan->n_q = req->win_end - req->win_start;
    } else if (req->mode == ENG_STEP_FULL) {
        plan->win_start = 0;
        plan->n_q = len;
    } else {
        return BASE_ERR_INVALID;
    }
    plan->n_head_rows = req->n_pos;
    for (int j = 0; j < req->n_pos; j++) {
        int p = req->positions[j];
        if (p < 0 || p >= batch->n_seq * len)
            return BASE_ERR_RANGE;
        int b = p / len, col = p % len;
        int row = info->shift_logits && col > 0 ? col - 1 : col;
        if (row < plan->win_start || row >= plan->win_start + plan->n_q)
            return BASE_ERR_INVALID;
        bool pad = batch->valid && !batch->valid[(size_t)b * len + row];
        head_rows[j] = pad ? -1 : b * plan->n_q + (row - plan->win_start);
        noise_pos[j] = (uint32_t)p;
    }
    return BASE_OK;
}

uint64_t eng__cuda_weight_bytes(const eng_model_info *info, int matrix_dtype) {
    const uint64_t d = (uint64_t)info->d_model, hd = (uint64_t)info->head_dim;
    const uint64_t q = (uint64_t)info->n_head * hd, kv = (uint64_t)info->n_kv_head * hd;
    const uint64_t ff = (uint64_t)info->d_ff, V = (uint64_t)info->vocab_size;
    uint64_t es = matrix_dtype == 3 ? 1 : matrix_dtype == 0 ? 4 : 2;
    uint64_t rows = (q + 2 * kv) + d + 2 * ff + d; /* qkv, o, gate+up, down: output rows */
    uint64_t per_layer = ((q + 2 * kv) * d + d * q + 2 * ff * d + d * ff) * es;
    if (matrix_dtype == 3)
        per_layer += rows * 4;                                    /* per-row scales */
    per_layer += (2 * d + (info->qkv_bias ? q + 2 * kv : 0)) * 4; /* norms, biases as f32 */
    /* The embedding keeps its 16-bit (or f32) storage for the gather. */
    uint64_t emb_es = matrix_dtype == 0 ? 4 : 2;
    uint64_t total = per_layer * (uint64_t)info->n_layer + V * d * emb_es + d * 4;
    if (!info->tied_head || matrix_dtype == 3)
        total += V * d * es + (matrix_dtype == 3 ? V * 4 : 0);
    return total;
}

uint64_t eng__cuda_ctx_bytes(const eng_model_info *info, int max_batch, int max_len,
                             int head_chunk) {
    const uint64_t R = (uint64_t)max_batch * (uint64_t)max_len;
    const uint64_t d = (uint64_t)info->d_model, hd = (uint64_t)info->head_dim;
    const uint64_t q = (uint64_t)info->n_head * hd, kv = (uint64_t)info->n_kv_head * hd;
    const uint64_t ff = (uint64_t)info->d_ff, V = (uint64_t)info->vocab_size;
    uint64_t cache = 2 * (uint64_t)info->n_layer * R * kv * 4;
    uint64_t wide = d > q ? d : q;
    if (ff > wide)
        wide = ff;
    uint64_t act = R * (d * 4 + wide * 4 + (q + 2 * kv) * 4 + 2 * ff * 4);
    uint64_t small = R * (4 + 1 + 4 + 4 + 4 + 16);
    uint64_t head = (uint64_t)head_chunk * (d * 4 + d * 4 + V * 4);
    return cache + act + small + head;
}

int eng__cuda_row_bucket(int n, int cap) {
    if (n <= 0)
        return 0;
    int b = 8;
    while (b < n)
        b *= 2;
    return b < cap ? b : (n > cap ? n : cap);
}
