/* Model loading: each family loads with the right facts, and every kind of
 * malformed model directory is a clear error naming the file or tensor (one
 * case each), never a crash. */
#include "tmodel.h"

#include "check.h"
#include "engine.h"

static char *g_root;
static int g_case;

static char *new_dir(void) {
    static char p[4096];
    snprintf(p, sizeof p, "%s/case%d", g_root, ++g_case);
    mkdir(p, 0755);
    return p;
}

/* Loads dir expecting failure with status st and every needle in the message. */
static void expect_fail(const char *dir, const eng_load_opts *o, base_status st, const char *n1,
                        const char *n2) {
    eng_error err = {0};
    eng_model *m = eng_model_load(dir, o, &err);
    CHECK(m == NULL);
    eng_model_free(m);
    CHECK_EQ_I(err.status, st);
    if (n1 && !strstr(err.msg, n1))
        fprintf(stderr, "message lacks '%s': %s\n", n1, err.msg);
    CHECK(!n1 || strstr(err.msg, n1));
    if (n2 && !strstr(err.msg, n2))
        fprintf(stderr, "message lacks '%s': %s\n", n2, err.msg);
    CHECK(!n2 || strstr(err.msg, n2));
}

static eng_model *expect_ok(const char *dir, const eng_load_opts *o) {
    eng_error err = {0};
    eng_model *m = eng_model_load(dir, o, &err);
    if (!m)
        fprintf(stderr, "load failed: %s\n", err.msg);
    CHECK(m != NULL);
    return m;
}

/* A safetensors file with a raw header and n_data zero bytes after it. */
static void write_raw(const char *dir, const char *header, size_t n_data, uint64_t hlen_override) {
    char p[4096];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    FILE *f = fopen(p, "wb");
    uint64_t hl = hlen_override ? hlen_override : strlen(header);
    for (int i = 0; i < 8; i++)
        fputc((int)(hl >> (8 * i)) & 0xff, f);
    fputs(header, f);
    for (size_t i = 0; i < n_data; i++)
        fputc(0, f);
    fclose(f);
}

static void test_families(void) {
    tm_spec s = tm_default(TM_DREAM);
    char *d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    eng_model *m = expect_ok(d, NULL);
    if (m) {
        const eng_model_info *in = eng_model_get_info(m);
        CHECK_EQ_I(in->family, ENG_FAMILY_DREAM);
        CHECK(in->shift_logits);
        CHECK(in->qkv_bias);
        CHECK(!in->tied_head);
        CHECK_EQ_I(in->head_dim, 16);
        CHECK_EQ_I(in->n_kv_head, 2);
        CHECK_EQ_I(in->mask_id, 299);
        CHECK_EQ_I(in->bos_id, 2);
        CHECK_EQ_I(in->eos_id, 1);
        CHECK_EQ_I(in->max_context, 2048);
        CHECK_EQ_I(in->dtype, ENG_F32);
        CHECK_STR(in->arch, "DreamModel");
        CHECK_STR(eng_model_backend_name(m), "cpu");
        eng_model_free(m);
    }

    s = tm_default(TM_LLADA);
    s.bf16 = true;
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    m = expect_ok(d, NULL);
    if (m) {
        const eng_model_info *in = eng_model_get_info(m);
        CHECK_EQ_I(in->family, ENG_FAMILY_LLADA);
        CHECK(!in->shift_logits);
        CHECK(!in->qkv_bias);
        CHECK_EQ_I(in->dtype, ENG_BF16);
        CHECK_EQ_I(in->max_context, 4096);
        CHECK_EQ_I(in->bos_id, -1);
        eng_model_free(m);
    }

    /* Open-dCoder: tied head, sharded, mask token given explicitly. */
    s = tm_default(TM_QWEN2);
    s.mask_id = -1;
    s.shards = 2;
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.mask_token = 298;
    o.n_threads = 1;
    m = expect_ok(d, &o);
    if (m) {
        const eng_model_info *in = eng_model_get_info(m);
        CHECK_EQ_I(in->family, ENG_FAMILY_OPEN_DCODER);
        CHECK(in->tied_head);
        CHECK(in->shift_logits);
        CHECK_EQ_I(in->mask_id, 298);
        CHECK_EQ_I(in->max_context, 4096);
        eng_model_free(m);
    }
    /* The same directory without a mask token is an autoregressive model. */
    expect_fail(d, NULL, BASE_ERR_UNSUPPORTED, "autoregressive", NULL);
}

static void test_progress_cb(void *ud, uint64_t done, uint64_t total) {
    uint64_t *p = ud;
    CHECK(done <= total);
    p[0] = done;
    p[1] = total;
    p[2]++;
}

static void test_progress(void) {
    tm_spec s = tm_default(TM_DREAM);
    char *d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    uint64_t seen[3] = {0};
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.progress = test_progress_cb;
    o.progress_ud = seen;
    eng_model *m = expect_ok(d, &o);
    CHECK(seen[2] >= 1);
    CHECK(seen[1] > 0 && seen[0] == seen[1]);
    eng_model_free(m);
}

static void test_malformed_files(void) {
    tm_spec s = tm_default(TM_DREAM);
    char p[4096];

    /* truncated file: the last tensor's data runs past the end. */
    char *d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    snprintf(p, sizeof p, "%s/model.safetensors", d);
    struct stat sb;
    stat(p, &sb);
    CHECK_EQ_I(truncate(p, sb.st_size - 100), 0);
    expect_fail(d, NULL, BASE_ERR_MODEL, "model.safetensors", "truncated");

    /* header length past the end of the file. */
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    write_raw(d, "{}", 0, 1ull << 40);
    expect_fail(d, NULL, BASE_ERR_MODEL, "model.safetensors", "past the end");

    /* a file shorter than the 8-byte length. */
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    snprintf(p, sizeof p, "%s/model.safetensors", d);
    CHECK_EQ_I(truncate(p, 5), 0);
    expect_fail(d, NULL, BASE_ERR_MODEL, "model.safetensors", "truncated");

    /* overlapping offsets. */
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    write_raw(d,
              "{\"a.weight\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
              "\"b.weight\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}",
              24, 0);
    expect_fail(d, NULL, BASE_ERR_MODEL, "overlap", "a.weight");

    /* wrong dtype size: 4 BF16 values cannot take 16 bytes. */
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    write_raw(d, "{\"a.weight\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,16]}}", 16,
              0);
    expect_fail(d, NULL, BASE_ERR_MODEL, "'a.weight'", "dtype size");

    /* header that is not JSON. */
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    write_raw(d, "{\"a.weight\":{\"dtype\":", 0, 0);
    expect_fail(d, NULL, BASE_ERR_MODEL, "model.safetensors", "JSON");

    /* missing tensor. */
    d = new_dir();
    s.skip = "model.layers.1.mlp.up_proj.weight";
    CHECK_EQ_I(tm_write(d, &s), 0);
    expect_fail(d, NULL, BASE_ERR_MODEL, "model.layers.1.mlp.up_proj.weight", "missing");
    s.skip = NULL;

    /* a tensor with the wrong shape. */
    d = new_dir();
    s.bad_shape = "model.layers.0.self_attn.k_proj.weight";
    CHECK_EQ_I(tm_write(d, &s), 0);
    expect_fail(d, NULL, BASE_ERR_MODEL, "model.layers.0.self_attn.k_proj.weight", "expected");
    s.bad_shape = NULL;

    /* sharded: the index names a tensor its shard lacks. */
    d = new_dir();
    s.shards = 2;
    CHECK_EQ_I(tm_write(d, &s), 0);
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", d);
    char *idx = NULL;
    size_t n = 0;
    CHECK_EQ_I(base_read_file(p, &idx, &n), BASE_OK);
    if (idx) {
        char *at = strstr(idx, "\"weight_map\": {");
        if (at) {
            char *rest = strdup(at + 15);
            sprintf(at + 15, "\"ghost.weight\": \"model-00001-of-00002.safetensors\", %s", rest);
            free(rest);
        }
        tm_write_file(d, "model.safetensors.index.json", idx);
        free(idx);
    }
    expect_fail(d, NULL, BASE_ERR_MODEL, "ghost.weight", "model-00001-of-00002.safetensors");
    s.shards = 0;

    /* no weights at all. */
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    snprintf(p, sizeof p, "%s/model.safetensors", d);
    unlink(p);
    expect_fail(d, NULL, BASE_ERR_NOT_FOUND, "model.safetensors", NULL);

    /* missing tokenizer. */
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    snprintf(p, sizeof p, "%s/tokenizer.json", d);
    unlink(p);
    eng_error err = {0};
    eng_model *m = eng_model_load(d, NULL, &err);
    CHECK(m == NULL);
    CHECK(strstr(err.msg, "tokenizer") != NULL);
    eng_model_free(m);
}

static void test_bad_configs(void) {
    static const struct {
        const char *extra; /* overrides (duplicate keys are rejected, so we rewrite) */
        const char *key;
        const char *needle;
    } cases[] = {
        {"0", "hidden_size", "positive"},
        {"-2", "num_hidden_layers", "positive"},
        {"1000000000", "vocab_size", "larger than"},
        {"\"many\"", "num_attention_heads", "not an integer"},
        {"3", "num_key_value_heads", "multiple"},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(cases); i++) {
        tm_spec s = tm_default(TM_DREAM);
        char *d = new_dir();
        CHECK_EQ_I(tm_write(d, &s), 0);
        char p[4096], *cfg = NULL;
        size_t n;
        snprintf(p, sizeof p, "%s/config.json", d);
        CHECK_EQ_I(base_read_file(p, &cfg, &n), BASE_OK);
        if (!cfg)
            continue;
        /* Replace the value of "key": N with the case's value. */
        char pat[128];
        snprintf(pat, sizeof pat, "\"%s\": ", cases[i].key);
        char *at = strstr(cfg, pat);
        CHECK(at != NULL);
        if (at) {
            char *v = at + strlen(pat), *e = v;
            while (*e && *e != ',' && *e != '}')
                e++;
            char *out = malloc(n + 64);
            sprintf(out, "%.*s%s%s", (int)(v - cfg), cfg, cases[i].extra, e);
            tm_write_file(d, "config.json", out);
            free(out);
        }
        free(cfg);
        expect_fail(d, NULL, BASE_ERR_MODEL, cases[i].key, cases[i].needle);
    }

    /* unknown architecture: the message lists the supported ones. */
    char *d = new_dir();
    tm_spec s = tm_default(TM_DREAM);
    CHECK_EQ_I(tm_write(d, &s), 0);
    tm_write_file(d, "config.json",
                  "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
                  "\"hidden_size\": 64}");
    expect_fail(d, NULL, BASE_ERR_UNSUPPORTED, "LlamaForCausalLM", "DreamModel");

    /* config.json that is not JSON, and none at all. */
    d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    tm_write_file(d, "config.json", "{\"architectures\": [");
    expect_fail(d, NULL, BASE_ERR_MODEL, "config.json", NULL);
    expect_fail("/nonexistent/model/dir", NULL, BASE_ERR_NOT_FOUND, "config.json", NULL);

    /* a mask id outside the vocabulary. */
    d = new_dir();
    s.mask_id = 5000;
    CHECK_EQ_I(tm_write(d, &s), 0);
    expect_fail(d, NULL, BASE_ERR_MODEL, "mask", "vocabulary");
}

/* generation_config.json's eos_penalty is the model's default EOS penalty;
 * a value that is not a number in [0, 100] fails the load, naming the key. */
static void test_eos_penalty(void) {
    tm_spec s = tm_default(TM_DREAM);
    char *d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    eng_model *m = expect_ok(d, NULL);
    if (m)
        CHECK(eng_model_get_info(m)->eos_penalty == 0.0f);
    eng_model_free(m);
    tm_write_file(d, "generation_config.json", "{\"eos_penalty\": 2.5, \"steps\": 64}");
    m = expect_ok(d, NULL);
    if (m)
        CHECK(eng_model_get_info(m)->eos_penalty == 2.5f);
    eng_model_free(m);
    static const char *bad[] = {"-1", "101", "\"3\"", "true"};
    for (size_t i = 0; i < BASE_ARRAY_LEN(bad); i++) {
        char js[128];
        snprintf(js, sizeof js, "{\"eos_penalty\": %s}", bad[i]);
        tm_write_file(d, "generation_config.json", js);
        expect_fail(d, NULL, BASE_ERR_MODEL, "generation_config.json", "eos_penalty");
    }
}

/* generation_config.json's candidates is how many candidates an automatic
 * request samples by default; anything but an integer in [1, 16] fails the
 * load, naming the key. */
static void test_candidates(void) {
    tm_spec s = tm_default(TM_DREAM);
    char *d = new_dir();
    CHECK_EQ_I(tm_write(d, &s), 0);
    eng_model *m = expect_ok(d, NULL);
    if (m)
        CHECK_EQ_I(eng_model_get_info(m)->candidates, 0);
    eng_model_free(m);
    tm_write_file(d, "generation_config.json", "{\"candidates\": 4, \"steps\": 64}");
    m = expect_ok(d, NULL);
    if (m)
        CHECK_EQ_I(eng_model_get_info(m)->candidates, 4);
    eng_model_free(m);
    static const char *bad[] = {"0", "17", "2.5", "\"4\"", "true"};
    for (size_t i = 0; i < BASE_ARRAY_LEN(bad); i++) {
        char js[128];
        snprintf(js, sizeof js, "{\"candidates\": %s}", bad[i]);
        tm_write_file(d, "generation_config.json", js);
        expect_fail(d, NULL, BASE_ERR_MODEL, "generation_config.json", "candidates");
    }
}

int main(void) {
    if (!tm_have_tokenizer()) {
        fprintf(stderr, "skipped: no Qwen tokenizer.json (run ./bootstrap.sh)\n");
        return 77;
    }
    g_root = tm_tmpdir();
    if (!g_root)
        return 1;
    base_log_set_level(BASE_LOG_WARN);
    test_families();
    test_progress();
    test_malformed_files();
    test_bad_configs();
    test_eos_penalty();
    test_candidates();
    tm_rmrf(g_root);
    free(g_root);
    return check_finish("test_engine_load");
}
