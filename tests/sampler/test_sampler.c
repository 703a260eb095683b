/* Sampler unit tests with scripted steppers (no model): DreamOn expand /
 * delete / budget exhausted / window full, Dream's transfer schedule, layouts,
 * cancellation, step budget, progress and determinism. */
#include "check.h"
#include "toy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- scripted DreamOn double ------------------------------------------------
 * At step s the row of the script's `which`-th requested position proposes
 * `token` with high confidence; every other row proposes FILL with low
 * confidence. An expand proposal under a -1e9 expand bias yields FILL instead
 * (what a model does with the logit pushed down). */
#define FILL 9

typedef struct script {
    int which[16];
    int token[16];
    int n;
    int calls;
    bool suppressed[64]; /* expand bias seen at step s */
    int window[64];      /* valid length at step s */
} script;

static base_status script_step(void *ud, const eng_batch *batch, const eng_step_req *req,
                               eng_row_result *out) {
    script *sc = ud;
    int s = sc->calls++;
    bool sup = false;
    for (int i = 0; i < req->sampling.n_bias; i++)
        if (req->sampling.bias[i].id == TOY_EXPAND && req->sampling.bias[i].bias <= -1e8f)
            sup = true;
    if (s < 64) {
        sc->suppressed[s] = sup;
        int w = 0;
        for (int i = 0; i < batch->len; i++)
            w += batch->valid ? batch->valid[i] : 1;
        sc->window[s] = w;
    }
    for (int q = 0; q < req->n_pos; q++) {
        out[q].token = FILL;
        out[q].prob = 0.1f;
        out[q].margin = 0.0f;
        out[q].neg_entropy = -3.0f - 0.01f * (float)q;
    }
    int which = s < sc->n ? sc->which[s] : 0;
    int tok = s < sc->n ? sc->token[s] : 20 + s;
    if (which < req->n_pos) {
        out[which].token = (tok == TOY_EXPAND && sup) ? FILL : tok;
        out[which].prob = 0.9f;
        out[which].neg_entropy = -0.01f;
    }
    return BASE_OK;
}

static eng_diffuser *new_diffuser(eng_model_info *info, bool expand) {
    toy_info(info, expand);
    eng_error err;
    return eng_diffuser_new(info, 4, 256, &err);
}

static const int32_t PREFIX[] = {1, 2, 3};
static const int32_t SUFFIX[] = {10, 11};

static void dreamon_params(eng_diff_params *p, int n) {
    eng_diff_params_default(p);
    p->alg = ENG_ALG_DREAMON;
    p->n_hole = n;
}

/* Runs the scripted stepper on PREFIX / SUFFIX; the result borrows d. */
static void run_dreamon(eng_diffuser *d, script *sc, const eng_diff_params *p,
                        eng_diff_result *res) {
    eng_stepper st = {script_step, sc};
    eng_diff_prompt pr = {PREFIX, 3, SUFFIX, 2};
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, p, res), BASE_OK);
}

static void test_dreamon_expand(void) {
    eng_model_info info;
    eng_diffuser *d = new_diffuser(&info, true);
    script sc = {.which = {0}, .token = {TOY_EXPAND, 20, 21, 22}, .n = 4};
    eng_diff_params p;
    dreamon_params(&p, 2);
    eng_diff_result res;
    run_dreamon(d, &sc, &p, &res);
    CHECK_EQ_I(res.alg, ENG_ALG_DREAMON);
    CHECK_EQ_I(res.cand[0].n_tokens, 3);
    CHECK_EQ_I(res.cand[0].tokens[0], 20);
    CHECK_EQ_I(res.cand[0].tokens[1], 21);
    CHECK_EQ_I(res.cand[0].tokens[2], 22);
    /* The suffix and the final EOS follow the grown hole. */
    CHECK_EQ_I(res.cand[0].tokens[3], 10);
    CHECK_EQ_I(res.cand[0].tokens[4], 11);
    CHECK_EQ_I(res.cand[0].tokens[5], TOY_EOS);
    CHECK(!sc.suppressed[0]);
    CHECK_EQ_I(sc.window[0], 9);  /* BOS + 3 + 2 masks + 2 + EOS */
    CHECK_EQ_I(sc.window[1], 10); /* one slot more after the expansion */
    CHECK_EQ_I(res.steps_run, 4);
    eng_diffuser_free(d);
}

static void test_dreamon_delete(void) {
    eng_model_info info;
    eng_diffuser *d = new_diffuser(&info, true);
    /* Step 0: the third mask proposes EOS → it and every later mask of the
     * hole become EOS and are deleted; two slots remain. */
    script sc = {.which = {2, 0, 0}, .token = {TOY_EOS, 20, 21}, .n = 3};
    eng_diff_params p;
    dreamon_params(&p, 4);
    eng_diff_result res;
    run_dreamon(d, &sc, &p, &res);
    CHECK_EQ_I(res.cand[0].n_tokens, 2);
    CHECK_EQ_I(res.cand[0].tokens[0], 20);
    CHECK_EQ_I(res.cand[0].tokens[1], 21);
    CHECK_EQ_I(res.cand[0].tokens[2], 10);
    CHECK_EQ_I(res.cand[0].n_text_ids, 2);
    CHECK_EQ_I(sc.window[0], 11);
    CHECK_EQ_I(sc.window[1], 9);
    CHECK_EQ_I(res.steps_run, 3);
    eng_diffuser_free(d);
}

static void test_dreamon_budget(void) {
    eng_model_info info;
    eng_diffuser *d = new_diffuser(&info, true);
    script sc = {.which = {0, 0, 0, 0, 0},
                 .token = {TOY_EXPAND, TOY_EXPAND, TOY_EXPAND, TOY_EXPAND, TOY_EXPAND},
                 .n = 5};
    eng_diff_params p;
    dreamon_params(&p, 2);
    p.dreamon_budget = 1;
    eng_diff_result res;
    run_dreamon(d, &sc, &p, &res);
    CHECK(!sc.suppressed[0]);
    CHECK(sc.suppressed[1]); /* budget 0 after one expansion */
    CHECK(sc.suppressed[2]);
    CHECK_EQ_I(res.cand[0].n_tokens, 3);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_I(res.cand[0].tokens[i], FILL);
    eng_diffuser_free(d);
}

static void test_dreamon_window_full(void) {
    eng_model_info info;
    eng_diffuser *d = new_diffuser(&info, true);
    script sc = {
        .which = {0, 0, 0, 0}, .token = {TOY_EXPAND, TOY_EXPAND, TOY_EXPAND, TOY_EXPAND}, .n = 4};
    eng_diff_params p;
    dreamon_params(&p, 2);
    p.dreamon_max_hole = 3; /* the canvas holds one extra slot */
    eng_diff_result res;
    run_dreamon(d, &sc, &p, &res);
    CHECK(!sc.suppressed[0]);
    CHECK(sc.suppressed[1]); /* W == max_tokens */
    CHECK_EQ_I(sc.window[1], 10);
    CHECK_EQ_I(res.cand[0].n_tokens, 3);
    CHECK_EQ_I(res.steps_run, 4); /* one expansion + three commits */
    eng_diffuser_free(d);
}

/* ---- schedules and layouts ---------------------------------------------------- */

static void test_schedule(void) {
    /* linspace(1, eps, S+1) endpoints are exact. */
    CHECK(eng_diff_timestep(0, 512, 1e-3f) == 1.0f);
    CHECK(eng_diff_timestep(512, 512, 1e-3f) == 1e-3f);
    /* MODELS §3.1 quirk: S = N = 512 → step 0 commits 0 tokens, the last
     * commits the rest, and everything is committed. */
    int n = 512, total = 0, first = -1, last = -1;
    for (int j = 0; j < 512; j++) {
        int k = eng_diff_transfer_count(n, j, 512, 1e-3f);
        if (j == 0)
            first = k;
        last = k;
        n -= k;
        total += k;
    }
    CHECK_EQ_I(first, 0);
    CHECK(last >= 2);
    CHECK_EQ_I(total, 512);
    CHECK_EQ_I(n, 0);
    /* S = N/2: the first step commits 1. */
    CHECK_EQ_I(eng_diff_transfer_count(512, 0, 256, 1e-3f), 1);
}

static void test_layout(void) {
    eng_model_info info;
    toy_info(&info, false);
    int32_t out[32];
    int hs = -1;
    eng_diff_prompt pr = {PREFIX, 3, SUFFIX, 2};
    int n = eng_diff_layout(&info, &pr, 2, out, 32, &hs);
    CHECK_EQ_I(n, 9);
    CHECK_EQ_I(hs, 4);
    CHECK_EQ_I(out[0], TOY_BOS);
    CHECK_EQ_I(out[4], TOY_MASK);
    CHECK_EQ_I(out[8], TOY_EOS);
    /* Open-dCoder: no specials, but an empty prefix gets one leading token. */
    info.family = ENG_FAMILY_OPEN_DCODER;
    n = eng_diff_layout(&info, &pr, 2, out, 32, &hs);
    CHECK_EQ_I(n, 7);
    CHECK_EQ_I(hs, 3);
    eng_diff_prompt empty = {NULL, 0, SUFFIX, 2};
    n = eng_diff_layout(&info, &empty, 2, out, 32, &hs);
    CHECK_EQ_I(n, 5);
    CHECK_EQ_I(hs, 1);
    CHECK_EQ_I(out[0], TOY_BOS);
    /* LLaDA: BOS, no trailing EOS. */
    info.family = ENG_FAMILY_LLADA;
    n = eng_diff_layout(&info, &pr, 2, out, 32, &hs);
    CHECK_EQ_I(n, 8);
    CHECK_EQ_I(out[7], 11);
    CHECK_EQ_I(eng_diff_layout(&info, &pr, 40, out, 32, &hs), -1);
}

/* ---- loop behaviour on the toy model ------------------------------------------ */

static int progress_calls, progress_last_masks;
static volatile int cancel_flag;

static void on_progress(void *ud, const eng_diff_progress *p) {
    (void)ud;
    progress_calls++;
    progress_last_masks = p->masks_left;
    for (int i = 0; i < p->n_hole; i++)
        if (p->hole[i] < 0 || p->hole[i] >= TOY_VOCAB)
            progress_last_masks = -1000;
    if (p->step == 2)
        cancel_flag = ud ? 1 : 0;
}

static void test_loop(void) {
    eng_model_info info;
    eng_diffuser *d = new_diffuser(&info, false);
    eng_stepper st = {toy_step, NULL};
    eng_diff_prompt pr = {PREFIX, 3, SUFFIX, 2};
    eng_diff_params p;
    eng_diff_params_default(&p);
    p.alg = ENG_ALG_ENTROPY;
    p.n_hole = 12;
    p.progress = on_progress;
    eng_diff_result a, b;
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &a), BASE_OK);
    CHECK_EQ_I(progress_calls, 12);
    CHECK_EQ_I(progress_last_masks, 0);
    int32_t first[12];
    memcpy(first, a.cand[0].tokens, sizeof first);
    for (int i = 0; i < 12; i++)
        CHECK(first[i] != TOY_MASK);
    /* Determinism. */
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &b), BASE_OK);
    CHECK(memcmp(first, b.cand[0].tokens, sizeof first) == 0);
    /* Step budget: 3 steps, the last commits every mask. */
    p.max_steps = 3;
    p.progress = NULL;
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &b), BASE_OK);
    CHECK_EQ_I(b.steps_run, 3);
    for (int i = 0; i < 12; i++)
        CHECK(b.cand[0].tokens[i] != TOY_MASK);
    /* Cancellation between steps. */
    p.max_steps = 0;
    p.progress = on_progress;
    p.progress_ud = &p;
    p.cancel = &cancel_flag;
    cancel_flag = 0;
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &b), BASE_ERR_CANCELLED);
    cancel_flag = 0;
    /* Cached mode with the toy (which ignores windows) plans WINDOW steps
     * between FULL block starts. */
    p.cancel = NULL;
    p.progress = NULL;
    p.alg = ENG_ALG_THRESHOLD;
    p.threshold = 0.2f;
    p.block = 4;
    p.mode = ENG_CACHE_CACHED;
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &b), BASE_OK);
    CHECK_EQ_I(b.n_forward_full, 3);
    CHECK(b.n_forward_window > 0);
    CHECK_EQ_I(b.n_forward_full + b.n_forward_window, b.steps_run);
    /* Candidates: ranked by mean confidence. */
    p.mode = ENG_CACHE_EXACT;
    p.alg = ENG_ALG_ENTROPY;
    p.temperature = 0.8f;
    p.candidates = 3;
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &b), BASE_OK);
    CHECK_EQ_I(b.n_candidates, 3);
    CHECK(b.cand[0].mean_conf >= b.cand[1].mean_conf);
    CHECK(b.cand[1].mean_conf >= b.cand[2].mean_conf);
    /* Bad input is an error, not a crash. */
    p.candidates = 9;
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &b), BASE_ERR_INVALID);
    p.candidates = 1;
    p.n_hole = 300;
    CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &b), BASE_ERR_TOO_LARGE);
    eng_diffuser_free(d);
}

/* ---- special tokens in the hole ------------------------------------------------
 * Every requested position proposes, with high confidence, either an ordinary
 * id or SPECIAL (standing for an added token such as <|fim_suffix|>): the
 * proposals land in the hole for every algorithm, and only the strip list
 * keeps them out of the text. */
#define SPECIAL 30

static base_status special_step(void *ud, const eng_batch *batch, const eng_step_req *req,
                                eng_row_result *out) {
    (void)ud;
    for (int q = 0; q < req->n_pos; q++) {
        int i = req->positions[q] % batch->len;
        out[q].token = i % 2 ? SPECIAL : 21;
        out[q].prob = 0.97f;
        out[q].margin = 0.95f;
        out[q].neg_entropy = -0.05f;
    }
    return BASE_OK;
}

static int count_id(const int32_t *v, int n, int32_t id) {
    int k = 0;
    for (int i = 0; i < n; i++)
        k += v[i] == id;
    return k;
}

static void test_special_stripped(void) {
    eng_model_info info;
    eng_diffuser *d = new_diffuser(&info, true);
    eng_stepper st = {special_step, NULL};
    eng_diff_prompt pr = {PREFIX, 3, SUFFIX, 2};
    static const int32_t strip[] = {SPECIAL, 40};
    for (int a = 0; a < ENG_ALG_COUNT_; a++) {
        for (int with = 0; with < 2; with++) {
            CHECK_EQ_I(eng_diffuser_set_strip(d, strip, with ? 2 : 0), BASE_OK);
            eng_diff_params p;
            eng_diff_params_default(&p);
            p.alg = (eng_alg)a;
            p.n_hole = 6;
            p.candidates = 2;
            eng_diff_result res;
            CHECK_EQ_I(eng_diffuse(d, &st, &pr, &p, &res), BASE_OK);
            for (int c = 0; c < res.n_candidates; c++) {
                const eng_diff_candidate *k = &res.cand[c];
                int in_hole = count_id(k->tokens, k->n_tokens, SPECIAL);
                int in_text = count_id(k->text_ids, k->n_text_ids, SPECIAL);
                if (in_hole == 0)
                    fprintf(stderr, "alg %s: no special id in the hole\n", eng_alg_name(p.alg));
                CHECK(in_hole > 0);
                CHECK_EQ_I(in_text, with ? 0 : in_hole);
                CHECK_EQ_I(count_id(k->text_ids, k->n_text_ids, 21),
                           count_id(k->tokens, k->n_tokens, 21));
            }
        }
    }
    CHECK_EQ_I(eng_diffuser_set_strip(d, NULL, -1), BASE_ERR_INVALID);
    eng_diffuser_free(d);
}

static void test_names(void) {
    eng_alg a;
    for (int i = 0; i < ENG_ALG_COUNT_; i++) {
        CHECK(eng_alg_parse(eng_alg_name((eng_alg)i), &a));
        CHECK_EQ_I(a, i);
    }
    CHECK(!eng_alg_parse("nope", &a));
    eng_model_info info;
    toy_info(&info, true);
    CHECK_EQ_I(eng_alg_default(&info), ENG_ALG_DREAMON);
    info.expand_id = -1;
    CHECK_EQ_I(eng_alg_default(&info), ENG_ALG_THRESHOLD);
}

int main(void) {
    test_dreamon_expand();
    test_dreamon_delete();
    test_dreamon_budget();
    test_dreamon_window_full();
    test_schedule();
    test_layout();
    test_loop();
    test_names();
    test_special_stripped();
    return check_finish("test_sampler");
}
