/* GGUF files: the header parser on hand-built images (every malformed case is a
 * clear error naming the file and, where there is one, the tensor; never a
 * crash), a tiny model file that loads like a model directory, model-level
 * errors (shape against the hyper-parameters, missing tokenizer keys), and the
 * block dequantisers on hand-computed blocks. */
#define _GNU_SOURCE
#include "check.h"
#include "engine_impl.h"
#include "tokenizer_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- image builder ------------------------------------------------------------ */

typedef struct gb {
    uint8_t *p;
    size_t n, cap;
} gb;

static void gb_put(gb *b, const void *s, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 256;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void gb_u32(gb *b, uint32_t v) { gb_put(b, &v, 4); }
static void gb_u64(gb *b, uint64_t v) { gb_put(b, &v, 8); }
static void gb_str(gb *b, const char *s) {
    gb_u64(b, strlen(s));
    gb_put(b, s, strlen(s));
}
static void kv_str(gb *b, const char *k, const char *v) {
    gb_str(b, k);
    gb_u32(b, ENG__GV_STR);
    gb_str(b, v);
}
static void kv_u32(gb *b, const char *k, uint32_t v) {
    gb_str(b, k);
    gb_u32(b, ENG__GV_U32);
    gb_u32(b, v);
}
static void kv_f32(gb *b, const char *k, float v) {
    gb_str(b, k);
    gb_u32(b, ENG__GV_F32);
    gb_put(b, &v, 4);
}

/* ---- tiny dream model ------------------------------------------------------------ */

enum { D = 32, HD = 16, NH = 2, NKV = 1, FF = 64, V = 8 };

typedef struct spec {
    const char *drop_key; /* leave this key out */
    const char *arch;     /* general.architecture */
    int k_rows;           /* rows of attn_k (NKV * HD when right) */
    uint32_t version;     /* 3 */
    uint32_t bad_type;    /* 0 = F32 everywhere, else the type of attn_q */
    uint64_t misalign;    /* added to the first tensor's offset */
    bool overlap;         /* second tensor starts inside the first */
    uint64_t truncate_to; /* cut the image to this many bytes (0: whole) */
} spec;

typedef struct tdesc {
    const char *name;
    int64_t rows, cols; /* rows 0: 1-D */
} tdesc;

static size_t build_model(const spec *s, uint8_t **out) {
    const tdesc ts[] = {
        {"token_embd.weight", V, D},
        {"output_norm.weight", 0, D},
        {"output.weight", V, D},
        {"blk.0.attn_norm.weight", 0, D},
        {"blk.0.attn_q.weight", NH * HD, D},
        {"blk.0.attn_k.weight", s->k_rows, D},
        {"blk.0.attn_v.weight", NKV * HD, D},
        {"blk.0.attn_q.bias", 0, NH * HD},
        {"blk.0.attn_k.bias", 0, NKV * HD},
        {"blk.0.attn_v.bias", 0, NKV * HD},
        {"blk.0.attn_output.weight", D, NH * HD},
        {"blk.0.ffn_norm.weight", 0, D},
        {"blk.0.ffn_gate.weight", FF, D},
        {"blk.0.ffn_up.weight", FF, D},
        {"blk.0.ffn_down.weight", D, FF},
    };
    const int nt = (int)(sizeof ts / sizeof ts[0]);
    gb kv = {0};
    int nkv = 0;
#define KEY(k) (s->drop_key && strcmp(s->drop_key, k) == 0 ? 0 : (nkv++, 1))
    if (KEY("general.architecture"))
        kv_str(&kv, "general.architecture", s->arch ? s->arch : "dream");
    if (KEY("dream.block_count"))
        kv_u32(&kv, "dream.block_count", 1);
    if (KEY("dream.embedding_length"))
        kv_u32(&kv, "dream.embedding_length", D);
    if (KEY("dream.feed_forward_length"))
        kv_u32(&kv, "dream.feed_forward_length", FF);
    if (KEY("dream.attention.head_count"))
        kv_u32(&kv, "dream.attention.head_count", NH);
    if (KEY("dream.attention.head_count_kv"))
        kv_u32(&kv, "dream.attention.head_count_kv", NKV);
    if (KEY("dream.rope.freq_base"))
        kv_f32(&kv, "dream.rope.freq_base", 10000.0f);
    if (KEY("tokenizer.ggml.model"))
        kv_str(&kv, "tokenizer.ggml.model", "gpt2");
    if (KEY("tokenizer.ggml.pre"))
        kv_str(&kv, "tokenizer.ggml.pre", "qwen2");
    static const char *toks[V] = {"a", "b", "c", "ab", "<|mask|>", "[PAD5]", "[PAD6]", "[PAD7]"};
    static const int32_t types[V] = {1, 1, 1, 1, 3, 5, 5, 5};
    if (KEY("tokenizer.ggml.tokens")) {
        gb_str(&kv, "tokenizer.ggml.tokens");
        gb_u32(&kv, ENG__GV_ARR);
        gb_u32(&kv, ENG__GV_STR);
        gb_u64(&kv, V);
        for (int i = 0; i < V; i++)
            gb_str(&kv, toks[i]);
    }
    if (KEY("tokenizer.ggml.token_type")) {
        gb_str(&kv, "tokenizer.ggml.token_type");
        gb_u32(&kv, ENG__GV_ARR);
        gb_u32(&kv, ENG__GV_I32);
        gb_u64(&kv, V);
        gb_put(&kv, types, sizeof types);
    }
    if (KEY("tokenizer.ggml.merges")) {
        gb_str(&kv, "tokenizer.ggml.merges");
        gb_u32(&kv, ENG__GV_ARR);
        gb_u32(&kv, ENG__GV_STR);
        gb_u64(&kv, 1);
        gb_str(&kv, "a b");
    }
    if (KEY("tokenizer.ggml.mask_token_id"))
        kv_u32(&kv, "tokenizer.ggml.mask_token_id", 4);
#undef KEY
    gb b = {0};
    gb_u32(&b, 0x46554747u);
    gb_u32(&b, s->version ? s->version : 3);
    gb_u64(&b, (uint64_t)nt);
    gb_u64(&b, (uint64_t)nkv);
    gb_put(&b, kv.p, kv.n);
    free(kv.p);
    uint64_t off = 0, sizes[32];
    for (int i = 0; i < nt; i++) {
        gb_str(&b, ts[i].name);
        uint32_t type = i == 4 && s->bad_type ? s->bad_type : 0;
        if (ts[i].rows) {
            gb_u32(&b, 2);
            gb_u64(&b, (uint64_t)ts[i].cols);
            gb_u64(&b, (uint64_t)ts[i].rows);
        } else {
            gb_u32(&b, 1);
            gb_u64(&b, (uint64_t)ts[i].cols);
        }
        gb_u32(&b, type);
        uint64_t o = off;
        if (i == 0)
            o += s->misalign;
        if (i == 1 && s->overlap)
            o = 32;
        gb_u64(&b, o);
        sizes[i] = (uint64_t)(ts[i].rows ? ts[i].rows : 1) * (uint64_t)ts[i].cols * 4;
        off += (sizes[i] + 31) / 32 * 32;
    }
    while (b.n % 32)
        gb_put(&b, "", 1);
    /* Weights: small deterministic values, norms 1. */
    for (int i = 0; i < nt; i++) {
        size_t n = (size_t)(sizes[i] / 4);
        for (size_t k = 0; k < n; k++) {
            float v = ts[i].rows ? (float)sin((double)(k * 7 + (size_t)i)) * 0.2f : 1.0f;
            gb_put(&b, &v, 4);
        }
        while (b.n % 32)
            gb_put(&b, "", 1);
    }
    *out = b.p;
    return s->truncate_to && s->truncate_to < b.n ? s->truncate_to : b.n;
}

static base_status parse(const uint8_t *p, size_t n, eng_error *err) {
    eng__gg_file gf;
    eng__st_tensor *t = NULL;
    int nt = 0;
    base_status st = eng__gg_parse(p, n, "x.gguf", 0, &gf, &t, &nt, err);
    if (st == BASE_OK) {
        for (int i = 0; i < nt; i++)
            CHECK((const uint8_t *)t[i].data + (t[i].end - t[i].begin) <= p + n);
        eng__gg_file_deinit(&gf);
    }
    eng__st_tensors_free(t, nt);
    return st;
}

static const spec OK_SPEC = {.k_rows = NKV * HD};

static void expect_parse(spec s, base_status want, const char *n1, const char *n2) {
    uint8_t *p;
    size_t n = build_model(&s, &p);
    eng_error err = {0};
    base_status st = parse(p, n, &err);
    CHECK_EQ_I(st, want);
    if (want) {
        if ((n1 && !strstr(err.msg, n1)) || (n2 && !strstr(err.msg, n2)))
            fprintf(stderr, "message lacks '%s'/'%s': %s\n", n1, n2 ? n2 : "", err.msg);
        CHECK(!n1 || strstr(err.msg, n1));
        CHECK(!n2 || strstr(err.msg, n2));
        CHECK(strstr(err.msg, "x.gguf") != NULL);
    }
    free(p);
}

static void test_header(void) {
    expect_parse(OK_SPEC, BASE_OK, NULL, NULL);
    spec s = OK_SPEC;
    s.version = 1;
    expect_parse(s, BASE_ERR_UNSUPPORTED, "version 1", NULL);
    s = OK_SPEC;
    s.misalign = 4;
    expect_parse(s, BASE_ERR_MODEL, "token_embd.weight", "alignment");
    s = OK_SPEC;
    s.overlap = true;
    expect_parse(s, BASE_ERR_MODEL, "overlap", NULL);
    s = OK_SPEC;
    s.bad_type = 99;
    expect_parse(s, BASE_ERR_MODEL, "blk.0.attn_q.weight", "unknown type 99");
    s = OK_SPEC;
    s.bad_type = 10; /* Q2_K: known, not readable */
    expect_parse(s, BASE_ERR_UNSUPPORTED, "blk.0.attn_q.weight", "Q2_K");
    s = OK_SPEC;
    s.bad_type = 12; /* Q4_K over 32 columns: not a whole block */
    expect_parse(s, BASE_ERR_MODEL, "blk.0.attn_q.weight", "blocks of 256");
    /* Every truncation point of the header and data is an error, never a crash. */
    uint8_t *p;
    size_t full = build_model(&OK_SPEC, &p);
    int fails = 0;
    for (size_t cut = 0; cut < full; cut += cut < 2048 ? 1 : 997) {
        eng_error err = {0};
        fails += parse(p, cut, &err) != BASE_OK;
    }
    int tries = 0;
    for (size_t cut = 0; cut < full; cut += cut < 2048 ? 1 : 997)
        tries++;
    CHECK_EQ_I(fails, tries);
    /* Bad magic, huge counts. */
    uint8_t *q = malloc(full);
    memcpy(q, p, full);
    q[0] = 'X';
    eng_error err = {0};
    CHECK_EQ_I(parse(q, full, &err), BASE_ERR_MODEL);
    CHECK(strstr(err.msg, "bad magic") != NULL);
    memcpy(q, p, full);
    uint64_t huge = UINT64_MAX / 2;
    memcpy(q + 8, &huge, 8); /* tensor count */
    CHECK_EQ_I(parse(q, full, &err), BASE_ERR_MODEL);
    CHECK(strstr(err.msg, "tensors cannot fit") != NULL);
    memcpy(q, p, full);
    memcpy(q + 16, &huge, 8); /* key/value count */
    CHECK_EQ_I(parse(q, full, &err), BASE_ERR_MODEL);
    CHECK(strstr(err.msg, "key/value pairs cannot fit") != NULL);
    /* A string length past the end (the first key's length). */
    memcpy(q, p, full);
    memcpy(q + 24, &huge, 8);
    CHECK_EQ_I(parse(q, full, &err), BASE_ERR_MODEL);
    CHECK(strstr(err.msg, "more than the file holds") != NULL);
    free(q);
    free(p);
}

/* ---- model-level -------------------------------------------------------------------- */

static char g_dir[] = "/tmp/infilld-test-gguf-XXXXXX";

static const char *write_model(const spec *s, const char *name) {
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    uint8_t *p;
    size_t n = build_model(s, &p);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
    free(p);
    return path;
}

static void expect_load_fail(spec s, const char *name, const char *n1, const char *n2) {
    const char *path = write_model(&s, name);
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.device = ENG_DEVICE_CPU;
    o.n_threads = 1;
    eng_error err = {0};
    eng_model *m = eng_model_load(path, &o, &err);
    CHECK(m == NULL);
    eng_model_free(m);
    CHECK(err.status != BASE_OK);
    if ((n1 && !strstr(err.msg, n1)) || (n2 && !strstr(err.msg, n2)))
        fprintf(stderr, "message lacks '%s'/'%s': %s\n", n1, n2 ? n2 : "", err.msg);
    CHECK(!n1 || strstr(err.msg, n1));
    CHECK(!n2 || strstr(err.msg, n2));
    CHECK(strstr(err.msg, name) != NULL);
}

static void test_model(void) {
    const char *path = write_model(&OK_SPEC, "tiny.gguf");
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.device = ENG_DEVICE_CPU;
    o.n_threads = 1;
    eng_error err = {0};
    eng_model *m = eng_model_load(path, &o, &err);
    if (!m)
        fprintf(stderr, "load failed: %s\n", err.msg);
    CHECK(m != NULL);
    if (m) {
        const eng_model_info *in = eng_model_get_info(m);
        CHECK_EQ_I(in->family, ENG_FAMILY_DREAM);
        CHECK(in->gguf);
        CHECK(in->shift_logits); /* Dream files do not write diffusion.shift_logits */
        CHECK(!in->tied_head);
        CHECK_EQ_I(in->vocab_size, V);
        CHECK_EQ_I(in->head_dim, HD);
        CHECK_EQ_I(in->n_kv_head, NKV);
        CHECK_EQ_I(in->mask_id, 4);
        CHECK_STR(in->quant_types, "F32");
        const eng_tokenizer *t = eng_model_tokenizer(m);
        int32_t *ids = NULL;
        size_t n = 0;
        CHECK_EQ_I(eng_tokenize(t, "abc", 3, &ids, &n), BASE_OK);
        CHECK_EQ_U(n, 2);
        if (n == 2) {
            CHECK_EQ_I(ids[0], 3); /* "ab" by the merge */
            CHECK_EQ_I(ids[1], 2);
        }
        free(ids);
        CHECK_EQ_I(eng_token_special_id(t, "<|mask|>"), 4);
        CHECK(eng_token_bytes(t, 5, &n) == NULL); /* [PAD5] is padding, no token */
        eng_ctx *c = eng_ctx_new(m, 1, 4, &err);
        CHECK(c != NULL);
        int32_t toks[4] = {0, 3, 4, 2}, rows[1] = {3};
        float lg[V];
        eng_batch bt = {.n_seq = 1, .len = 4, .tokens = toks};
        CHECK_EQ_I(eng_forward(c, &bt, rows, 1, lg), BASE_OK);
        for (int i = 0; i < V; i++)
            CHECK(isfinite(lg[i]));
        eng_ctx_free(c);
        eng_model_free(m);
    }
    /* The directory holding only the .gguf loads too. */
    m = eng_model_load(g_dir, &o, &err);
    CHECK(m != NULL);
    eng_model_free(m);

    spec s = OK_SPEC;
    s.k_rows = NH * HD;
    expect_load_fail(s, "shape.gguf", "blk.0.attn_k.weight", "expected [16, 32]");
    static const char *keys[] = {"tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                                 "tokenizer.ggml.model",  "general.architecture",
                                 "dream.block_count",     "dream.embedding_length"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        s = OK_SPEC;
        s.drop_key = keys[i];
        char name[64];
        snprintf(name, sizeof name, "nokey%zu.gguf", i);
        expect_load_fail(s, name, keys[i], NULL);
    }
    s = OK_SPEC;
    s.drop_key = "tokenizer.ggml.mask_token_id";
    /* the <|mask|> token still names it */
    path = write_model(&s, "nomaskid.gguf");
    m = eng_model_load(path, &o, &err);
    CHECK(m != NULL);
    if (m)
        CHECK_EQ_I(eng_model_get_info(m)->mask_id, 4);
    eng_model_free(m);
    s = OK_SPEC;
    s.arch = "llama";
    expect_load_fail(s, "arch.gguf", "unsupported GGUF architecture 'llama'", NULL);
    s = OK_SPEC;
    s.truncate_to = 3000;
    expect_load_fail(s, "trunc.gguf", "runs past the end", NULL);
}

/* ---- dequantisation on hand-computed blocks ---------------------------------------------- */

static void test_dequant(void) {
    float y[256];
    /* Q8_0: d = 0.5 (f16 0x3800), q = j - 16. */
    uint8_t q8[34] = {0x00, 0x38};
    for (int j = 0; j < 32; j++)
        q8[2 + j] = (uint8_t)(int8_t)(j - 16);
    eng__dequant(ENG_Q8_0, q8, 0, 32, y);
    CHECK(y[0] == -8.0f && y[31] == 7.5f && y[16] == 0.0f);
    /* Q4_0: d = 2, low nibble j -> value j, high nibble 15 - j -> value 16 + j. */
    uint8_t q4[18] = {0x00, 0x40};
    for (int j = 0; j < 16; j++)
        q4[2 + j] = (uint8_t)(j | ((15 - j) << 4));
    eng__dequant(ENG_Q4_0, q4, 0, 32, y);
    CHECK(y[0] == -16.0f && y[15] == 14.0f && y[16] == 14.0f && y[31] == -16.0f);
    /* Q4_K: d = 1, dmin = 0.5, sub-block j scale j + 1 and min 2 (j < 4) or, packed
     * across the high bits, scale 40 + j and min 33 (j >= 4); every nibble 3. */
    uint8_t k4[144] = {0x00, 0x3c, 0x00, 0x38};
    uint8_t sc[8], mn[8];
    for (int j = 0; j < 8; j++) {
        sc[j] = (uint8_t)(j < 4 ? j + 1 : 40 + j);
        mn[j] = (uint8_t)(j < 4 ? 2 : 33);
    }
    for (int j = 0; j < 4; j++) {
        k4[4 + j] = (uint8_t)((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        k4[8 + j] = (uint8_t)((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
        k4[12 + j] = (uint8_t)((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
    }
    memset(k4 + 16, 0x33, 128);
    eng__dequant(ENG_Q4_K, k4, 0, 256, y);
    for (int j = 0; j < 8; j++)
        CHECK(y[32 * j + 5] == 1.0f * sc[j] * 3 - 0.5f * mn[j]);
    /* Q6_K: d = 0.25, scales 1..16, every 6-bit value 40 (-> 8). */
    uint8_t k6[210] = {0};
    memset(k6, 0x88, 128);      /* low nibbles 8 */
    memset(k6 + 128, 0xAA, 64); /* high bits 2 -> 32 + 8 = 40 */
    for (int j = 0; j < 16; j++)
        k6[192 + j] = (uint8_t)(j + 1);
    k6[208] = 0x00, k6[209] = 0x34;
    eng__dequant(ENG_Q6_K, k6, 0, 256, y);
    for (int e = 0; e < 256; e += 17)
        CHECK(y[e] == 0.25f * (float)(e / 16 + 1) * 8.0f);
    /* Q5_K: Q4_K's scales with the fifth bit set on the even sub-blocks. */
    uint8_t k5[176];
    memcpy(k5, k4, 16);
    memset(k5 + 16, 0x55, 32); /* bits 0, 2, 4, 6: sub-blocks 0, 2, 4, 6 */
    memset(k5 + 48, 0x33, 128);
    eng__dequant(ENG_Q5_K, k5, 0, 256, y);
    for (int j = 0; j < 8; j++)
        CHECK(y[32 * j + 9] == 1.0f * sc[j] * (3 + (j % 2 ? 0 : 16)) - 0.5f * mn[j]);
}

/* The pre-tokenizer table entry "qwen2" is the Split regex (and NFC) of the
 * Qwen tokenizer.json that the generated models use; unknown names are errors. */
static void test_pre_table(void) {
    char *text = NULL;
    size_t len = 0;
    CHECK_EQ_I(base_read_file(TM_QWEN_TOKENIZER, &text, &len), BASE_OK);
    eng_error err = {0};
    eng__json_doc *d = text ? eng__json_parse(text, len, &err) : NULL;
    free(text);
    CHECK(d != NULL);
    if (!d)
        return;
    const eng__json *pt = eng__json_get(eng__json_root(d), "pre_tokenizer");
    const eng__json *list = eng__json_get(pt, "pretokenizers");
    CHECK(list && list->type == ENG_JSON_ARR && list->n >= 1);
    const char *re =
        list ? eng__json_str(eng__json_get(eng__json_get(&list->u.items[0], "pattern"), "Regex"))
             : NULL;
    bool nfc = false;
    CHECK_STR(eng__tok_pre_regex("qwen2", &nfc), re);
    CHECK(nfc);
    const char *norm =
        eng__json_str(eng__json_get(eng__json_get(eng__json_root(d), "normalizer"), "type"));
    CHECK_STR(norm, "NFC");
    CHECK(eng__tok_pre_regex("no-such-pre", &nfc) == NULL);
    eng__json_free(d);
}

int main(void) {
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_header();
    test_model();
    test_dequant();
    test_pre_table();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return check_finish("test_gguf");
}
