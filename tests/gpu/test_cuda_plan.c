/* CUDA backend pieces that run without a GPU: the step planner (window and
 * LM-head row mapping, logit shift), the memory estimates, and a clean failure
 * of device selection when no GPU is usable. */
#include "backend_cuda.h"
#include "check.h"
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

static eng_model_info info_dream(void) {
    eng_model_info in;
    memset(&in, 0, sizeof in);
    in.family = ENG_FAMILY_DREAM;
    in.n_layer = 28;
    in.d_model = 3584;
    in.n_head = 28;
    in.n_kv_head = 4;
    in.head_dim = 128;
    in.d_ff = 18944;
    in.vocab_size = 152064;
    in.rope_theta = 1e6f;
    in.rms_eps = 1e-6f;
    in.shift_logits = true;
    in.qkv_bias = true;
    in.dtype = ENG_BF16;
    return in;
}

static void test_plan_full_shifted(void) {
    eng_model_info in = info_dream();
    int32_t tokens[2 * 10] = {0};
    eng_batch b = {2, 10, tokens, NULL};
    int32_t pos[4] = {0, 3, 10 + 5, 10 + 9};
    eng_step_req req;
    memset(&req, 0, sizeof req);
    req.mode = ENG_STEP_FULL;
    req.positions = pos;
    req.n_pos = 4;
    eng__cuda_plan p;
    int32_t rows[4];
    uint32_t npos[4];
    CHECK_EQ_I(eng__cuda_plan_step(&in, &b, &req, &p, rows, npos), BASE_OK);
    CHECK_EQ_I(p.win_start, 0);
    CHECK_EQ_I(p.n_q, 10);
    CHECK_EQ_I(p.n_head_rows, 4);
    /* shifted: position i reads row i - 1; position 0 reads row 0 */
    CHECK_EQ_I(rows[0], 0);
    CHECK_EQ_I(rows[1], 2);
    CHECK_EQ_I(rows[2], 10 + 4);
    CHECK_EQ_I(rows[3], 10 + 8);
    /* the noise counter is the canvas position itself */
    CHECK_EQ_U(npos[2], 15);
}

static void test_plan_window(void) {
    eng_model_info in = info_dream();
    int32_t tokens[2 * 12] = {0};
    eng_batch b = {2, 12, tokens, NULL};
    /* hole [5, 9) of a shifted model: window starts one row earlier */
    int32_t pos[3] = {5, 8, 12 + 6};
    eng_step_req req;
    memset(&req, 0, sizeof req);
    req.mode = ENG_STEP_WINDOW;
    req.win_start = 4;
    req.win_end = 9;
    req.positions = pos;
    req.n_pos = 3;
    eng__cuda_plan p;
    int32_t rows[3];
    uint32_t npos[3];
    CHECK_EQ_I(eng__cuda_plan_step(&in, &b, &req, &p, rows, npos), BASE_OK);
    CHECK_EQ_I(p.win_start, 4);
    CHECK_EQ_I(p.n_q, 5);
    CHECK_EQ_I(rows[0], 0);     /* row 4 -> window row 0 */
    CHECK_EQ_I(rows[1], 3);     /* row 7 -> 3 */
    CHECK_EQ_I(rows[2], 5 + 1); /* sequence 1, row 5 -> 5 * 1 + 1 */

    /* a position whose output row lies outside the window is refused */
    int32_t bad[1] = {4}; /* reads row 3 < win_start */
    req.positions = bad;
    req.n_pos = 1;
    CHECK_EQ_I(eng__cuda_plan_step(&in, &b, &req, &p, rows, npos), BASE_ERR_INVALID);

    /* unshifted (LLaDA): position i reads row i */
    in.shift_logits = false;
    int32_t ll[1] = {4};
    req.positions = ll;
    CHECK_EQ_I(eng__cuda_plan_step(&in, &b, &req, &p, rows, npos), BASE_OK);
    CHECK_EQ_I(rows[0], 0);

    /* a padded output row feeds the head a zero row (-1), as the CPU's zero logits */
    uint8_t valid[2 * 12];
    memset(valid, 1, sizeof valid);
    valid[12 + 4] = 0;
    b.valid = valid;
    int32_t pp[2] = {12 + 4, 12 + 5};
    req.positions = pp;
    req.n_pos = 2;
    req.win_start = 4;
    req.win_end = 9;
    CHECK_EQ_I(eng__cuda_plan_step(&in, &b, &req, &p, rows, npos), BASE_OK);
    CHECK_EQ_I(rows[0], -1);    /* unshifted here: position 16 reads padded row 4 */
    CHECK_EQ_I(rows[1], 5 + 1); /* position 17 reads row 5 -> window row 1 */
    b.valid = NULL;

    /* empty or inverted windows are invalid */
    req.win_start = 6;
    req.win_end = 6;
    CHECK_EQ_I(eng__cuda_plan_step(&in, &b, &req, &p, rows, npos), BASE_ERR_INVALID);
    req.win_start = 0;
    req.win_end = 13;
    CHECK_EQ_I(eng__cuda_plan_step(&in, &b, &req, &p, rows, npos), BASE_ERR_INVALID);
}

static void test_memory_estimates(void) {
    eng_model_info in = info_dream();
    /* Dream-7B in BF16: 7.6e9 parameters (untied), about 15.2 GB */
    uint64_t bf16 = eng__cuda_weight_bytes(&in, ENG_BF16);
    CHECK(bf16 > 15000000000ull && bf16 < 15600000000ull);
    /* FP8 roughly halves the matrices; the embedding stays 16-bit */
    uint64_t fp8 = eng__cuda_weight_bytes(&in, 3);
    CHECK(fp8 < bf16 * 6 / 10 && fp8 > bf16 * 4 / 10);
    uint64_t f32 = eng__cuda_weight_bytes(&in, ENG_F32);
    CHECK(f32 > bf16 * 19 / 10);
    /* context: K/V cache for 1 x 1024 tokens is 28 * 1024 * 512 * 4 * 2 bytes */
    uint64_t ctx = eng__cuda_ctx_bytes(&in, 1, 1024, 256);
    CHECK(ctx > 28ull * 1024 * 512 * 4 * 2);
    CHECK(ctx < 2000000000ull);
    CHECK(eng__cuda_ctx_bytes(&in, 8, 1024, 256) > 5 * ctx); /* the logits scratch is shared */
}

static void test_row_bucket(void) {
    CHECK_EQ_I(eng__cuda_row_bucket(0, 100), 0);
    CHECK_EQ_I(eng__cuda_row_bucket(1, 100), 8);
    CHECK_EQ_I(eng__cuda_row_bucket(8, 100), 8);
    CHECK_EQ_I(eng__cuda_row_bucket(9, 100), 16);
    CHECK_EQ_I(eng__cuda_row_bucket(33, 100), 64);
    CHECK_EQ_I(eng__cuda_row_bucket(65, 100), 100); /* capped by the context */
    CHECK_EQ_I(eng__cuda_row_bucket(3, 5), 5);
    /* a 256-token hole filled 8 per step meets at most 6 sizes */
    int seen[64], n_seen = 0;
    for (int left = 256; left > 0; left -= 8) {
        int b = eng__cuda_row_bucket(left, 1 << 20), k = 0;
        while (k < n_seen && seen[k] != b)
            k++;
        if (k == n_seen)
            seen[n_seen++] = b;
    }
    CHECK_EQ_I(n_seen, 6);
}

/* Split-key attention scratch: short windows over long canvases split their
 * keys into up to 8 ranges of whole 128-key blocks; long windows never split. */
static void test_attention_splits(void) {
    kcu_attn_shape s = {2, 1057, 1100, 512, 33, 28, 4, 128};
    CHECK_EQ_U(kcu_attention_scratch(&s), 8ull * 2 * 33 * 28 * 130);
    s.len = 300;
    s.q_start = 100;
    s.n_q = 5;
    CHECK_EQ_U(kcu_attention_scratch(&s), 2ull * 2 * 5 * 28 * 130);
    s.len = 127;
    s.q_start = 0;
    CHECK_EQ_U(kcu_attention_scratch(&s), 0);
    s.len = 1057;
    s.n_q = 65;
    CHECK_EQ_U(kcu_attention_scratch(&s), 0);
}

/* Without a usable GPU, device query and backend init fail cleanly with
 * ERR_DEVICE and a message; with one, init on bogus weights must not be
 * reached here (the GPU tests cover it). */
static void test_no_device(void) {
    kcu_device_info di;
    char msg[256] = "";
    base_status st = kcu_device_query(&di, msg, sizeof msg);
    if (st == BASE_OK) {
        CHECK(di.count > 0);
        CHECK(msg[0] != '\0');
        fprintf(stderr, "test_cuda_plan: a GPU is present (%s); no-device checks skipped\n", msg);
        return;
    }
    CHECK_EQ_I(st, BASE_ERR_DEVICE);
    CHECK_EQ_I(di.count, 0);
    CHECK(strstr(msg, "no usable CUDA device") != NULL);

    const eng_backend_i *bi = eng_backend_cuda_get();
    CHECK(bi != NULL);
    if (!bi)
        return;
    CHECK_STR(bi->name, "cuda");
    eng_model_info in = info_dream();
    eng_layer_w layers[1];
    memset(layers, 0, sizeof layers);
    in.n_layer = 1;
    eng_weights w;
    memset(&w, 0, sizeof w);
    w.info = &in;
    w.layers = layers;
    eng_load_opts o;
    eng_load_opts_default(&o);
    eng_error err;
    memset(&err, 0, sizeof err);
    eng_backend *be = bi->init(&w, &o, &err);
    CHECK(be == NULL);
    CHECK_EQ_I(err.status, BASE_ERR_DEVICE);
    CHECK(strstr(err.msg, "cuda:") != NULL);
    if (be)
        bi->free(be);
}

int main(void) {
    test_plan_full_shifted();
    test_plan_window();
    test_memory_estimates();
    test_attention_splits();
    test_row_bucket();
    test_no_device();
    return check_finish("test_cuda_plan");
}
