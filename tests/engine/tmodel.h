/* Test helper: writes tiny model directories (config.json, safetensors,
 * tokenizer link) from C, so that engine tests can build well-formed and
 * deliberately broken checkpoints without the Python generator. The helpers
 * are static inline so that a test may use only some of them. */
#ifndef INFILLD_TESTS_TMODEL_H
#define INFILLD_TESTS_TMODEL_H

#define _GNU_SOURCE
#include "base.h"

/* Paths in these tests are short; a truncated one would fail the test anyway. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum { TM_DREAM, TM_QWEN2, TM_LLADA } tm_family;

typedef struct tm_spec {
    tm_family family;
    int layers, d, heads, kv, ff, vocab;
    bool bf16;
    bool tied;
    int mask_id; /* written to config.json when >= 0 */
    uint64_t seed;
    const char *skip;      /* a tensor name to leave out, or NULL */
    const char *bad_shape; /* a tensor written with one extra row, or NULL */
    int shards;            /* 0/1: model.safetensors; 2: two shards + index */
    const char *extra_cfg; /* raw JSON members appended to config.json, or NULL */
} tm_spec;

static inline tm_spec tm_default(tm_family f) {
    tm_spec s = {f, 2, 64, 4, 2, 96, 300, false, f == TM_QWEN2, 299, 1, NULL, NULL, 0, NULL};
    return s;
}

typedef struct tm_tensor {
    char name[128];
    int64_t rows, cols; /* rows = 0: 1-D */
    float *v;
} tm_tensor;

typedef struct tm_list {
    tm_tensor t[512];
    int n;
} tm_list;

static inline void tm_add(tm_list *l, base_rng *r, const char *name, int64_t rows, int64_t cols,
                          float center, float scale) {
    tm_tensor *t = &l->t[l->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rows = rows;
    t->cols = cols;
    int64_t n = (rows ? rows : 1) * cols;
    t->v = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        t->v[i] = center + scale * (float)(2 * base_rng_uniform(r) - 1);
}

static inline uint16_t tm_bf16(float f) {
    union {
        float f;
        uint32_t u;
    } v = {f};
    return (uint16_t)((v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16);
}

/* Writes the listed tensors [first, last) into path as safetensors. */
static inline int tm_write_st(const char *path, tm_list *l, int first, int last, bool bf16,
                              const char *bad_shape) {
    size_t esz = bf16 ? 2 : 4;
    char *hdr = malloc(1 << 20);
    size_t h = 0;
    uint64_t off = 0;
    h += (size_t)sprintf(hdr + h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = first; i < last; i++) {
        tm_tensor *t = &l->t[i];
        int64_t rows = t->rows;
        if (bad_shape && strcmp(bad_shape, t->name) == 0)
            rows = rows ? rows + 1 : 0;
        uint64_t n = (uint64_t)((rows ? rows : 1) * t->cols);
        if (t->rows)
            h +=
                (size_t)sprintf(hdr + h,
                                ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],\"data_offsets\":["
                                "%llu,%llu]}",
                                t->name, bf16 ? "BF16" : "F32", (long long)rows, (long long)t->cols,
                                (unsigned long long)off, (unsigned long long)(off + n * esz));
        else
            h += (size_t)sprintf(hdr + h,
                                 ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],\"data_offsets\":["
                                 "%llu,%llu]}",
                                 t->name, bf16 ? "BF16" : "F32", (long long)t->cols,
                                 (unsigned long long)off, (unsigned long long)(off + n * esz));
        off += n * esz;
    }
    hdr[h++] = '}';
    while (h % 8)
        hdr[h++] = ' ';
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(hdr);
        return -1;
    }
    uint64_t hl = h;
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(hl >> (8 * i));
    fwrite(le, 1, 8, f);
    fwrite(hdr, 1, h, f);
    for (int i = first; i < last; i++) {
        tm_tensor *t = &l->t[i];
        int64_t n = (t->rows ? t->rows : 1) * t->cols;
        if (bf16) {
            for (int64_t k = 0; k < n; k++) {
                uint16_t b = tm_bf16(t->v[k]);
                fwrite(&b, 2, 1, f);
            }
        } else {
            fwrite(t->v, 4, (size_t)n, f);
        }
        if (bad_shape && strcmp(bad_shape, t->name) == 0 && t->rows) /* the extra row */
            for (int64_t k = 0; k < t->cols; k++)
                fwrite("\0\0\0\0", esz, 1, f);
    }
    free(hdr);
    return fclose(f) == 0 ? 0 : -1;
}

static inline const char *tm_tokenizer_path(void) {
#ifdef TM_QWEN_TOKENIZER
    return TM_QWEN_TOKENIZER;
#else
    return "";
#endif
}

static inline bool tm_have_tokenizer(void) { return access(tm_tokenizer_path(), R_OK) == 0; }

static inline void tm_write_file(const char *dir, const char *name, const char *text) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Writes a complete model directory; returns 0 on success. */
static inline int tm_write(const char *dir, const tm_spec *s) {
    mkdir(dir, 0755);
    char p[4096], cfg[4096];
    const int hd = s->d / s->heads;
    const char *extra = s->extra_cfg ? s->extra_cfg : "";
    const char *sep = s->extra_cfg ? "," : "";
    char mask[64] = "";
    if (s->mask_id >= 0)
        snprintf(mask, sizeof mask, "\"mask_token_id\": %d,", s->mask_id);
    if (s->family == TM_LLADA)
        snprintf(cfg, sizeof cfg,
                 "{\"architectures\": [\"LLaDAModelLM\"], \"model_type\": \"llada\", "
                 "\"d_model\": %d, \"n_layers\": %d, \"n_heads\": %d, \"n_kv_heads\": %d, "
                 "\"mlp_hidden_size\": %d, \"embedding_size\": %d, \"vocab_size\": %d, "
                 "\"rope_theta\": 10000.0, \"rms_norm_eps\": 1e-5, \"weight_tying\": %s, "
                 "\"include_bias\": false, \"include_qkv_bias\": false, %s "
                 "\"max_sequence_length\": 4096, \"eos_token_id\": 1, \"pad_token_id\": 1%s%s}",
                 s->d, s->layers, s->heads, s->kv, s->ff, s->vocab, s->vocab,
                 s->tied ? "true" : "false", mask, sep, extra);
    else
        snprintf(cfg, sizeof cfg,
                 "{\"architectures\": [\"%s\"], \"model_type\": \"%s\", \"hidden_size\": %d, "
                 "\"num_hidden_layers\": %d, \"num_attention_heads\": %d, "
                 "\"num_key_value_heads\": %d, \"intermediate_size\": %d, \"vocab_size\": %d, "
                 "\"rope_theta\": 1000000.0, \"rms_norm_eps\": 1e-6, \"tie_word_embeddings\": %s, "
                 "%s \"max_position_embeddings\": 32768, \"bos_token_id\": 2, \"eos_token_id\": 1, "
                 "\"pad_token_id\": 1%s%s}",
                 s->family == TM_DREAM ? "DreamModel" : "Qwen2ForCausalLM",
                 s->family == TM_DREAM ? "Dream" : "qwen2", s->d, s->layers, s->heads, s->kv, s->ff,
                 s->vocab, s->tied ? "true" : "false", mask, sep, extra);
    tm_write_file(dir, "config.json", cfg);

    base_rng r;
    base_rng_seed(&r, s->seed);
    tm_list *l = calloc(1, sizeof *l);
    const int qd = s->heads * hd, kvd = s->kv * hd;
    const float ad = 1.0f / sqrtf((float)s->d), af = 1.0f / sqrtf((float)s->ff);
    char n[128];
    const bool ll = s->family == TM_LLADA;
    tm_add(l, &r, ll ? "model.transformer.wte.weight" : "model.embed_tokens.weight", s->vocab, s->d,
           0, 1);
    for (int i = 0; i < s->layers; i++) {
#define TM_N(fmt) (snprintf(n, sizeof n, fmt, i), n)
        if (ll) {
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.attn_norm.weight"), 0, s->d, 1, .2f);
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.q_proj.weight"), qd, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.k_proj.weight"), kvd, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.v_proj.weight"), kvd, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.attn_out.weight"), s->d, qd, 0, ad);
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.ff_norm.weight"), 0, s->d, 1, .2f);
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.ff_proj.weight"), s->ff, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.up_proj.weight"), s->ff, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.transformer.blocks.%d.ff_out.weight"), s->d, s->ff, 0, af);
        } else {
            tm_add(l, &r, TM_N("model.layers.%d.input_layernorm.weight"), 0, s->d, 1, .2f);
            tm_add(l, &r, TM_N("model.layers.%d.self_attn.q_proj.weight"), qd, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.layers.%d.self_attn.q_proj.bias"), 0, qd, 0, .5f);
            tm_add(l, &r, TM_N("model.layers.%d.self_attn.k_proj.weight"), kvd, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.layers.%d.self_attn.k_proj.bias"), 0, kvd, 0, .5f);
            tm_add(l, &r, TM_N("model.layers.%d.self_attn.v_proj.weight"), kvd, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.layers.%d.self_attn.v_proj.bias"), 0, kvd, 0, .5f);
            tm_add(l, &r, TM_N("model.layers.%d.self_attn.o_proj.weight"), s->d, qd, 0, ad);
            tm_add(l, &r, TM_N("model.layers.%d.post_attention_layernorm.weight"), 0, s->d, 1, .2f);
            tm_add(l, &r, TM_N("model.layers.%d.mlp.gate_proj.weight"), s->ff, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.layers.%d.mlp.up_proj.weight"), s->ff, s->d, 0, ad);
            tm_add(l, &r, TM_N("model.layers.%d.mlp.down_proj.weight"), s->d, s->ff, 0, af);
        }
#undef TM_N
    }
    tm_add(l, &r, ll ? "model.transformer.ln_f.weight" : "model.norm.weight", 0, s->d, 1, .2f);
    if (!s->tied)
        tm_add(l, &r, ll ? "model.transformer.ff_out.weight" : "lm_head.weight", s->vocab, s->d, 0,
               3 * ad);
    if (s->skip)
        for (int i = 0; i < l->n; i++)
            if (strcmp(l->t[i].name, s->skip) == 0) {
                free(l->t[i].v);
                l->t[i] = l->t[--l->n];
                break;
            }
    int rc;
    if (s->shards >= 2) {
        int half = l->n / 2;
        snprintf(p, sizeof p, "%s/model-00001-of-00002.safetensors", dir);
        rc = tm_write_st(p, l, 0, half, s->bf16, s->bad_shape);
        snprintf(p, sizeof p, "%s/model-00002-of-00002.safetensors", dir);
        rc |= tm_write_st(p, l, half, l->n, s->bf16, s->bad_shape);
        char *idx = malloc(1 << 20);
        size_t k = (size_t)sprintf(idx, "{\"metadata\": {}, \"weight_map\": {");
        for (int i = 0; i < l->n; i++)
            k += (size_t)sprintf(idx + k, "%s\"%s\": \"model-0000%d-of-00002.safetensors\"",
                                 i ? ", " : "", l->t[i].name, i < half ? 1 : 2);
        sprintf(idx + k, "}}");
        tm_write_file(dir, "model.safetensors.index.json", idx);
        free(idx);
    } else {
        snprintf(p, sizeof p, "%s/model.safetensors", dir);
        rc = tm_write_st(p, l, 0, l->n, s->bf16, s->bad_shape);
    }
    for (int i = 0; i < l->n; i++)
        free(l->t[i].v);
    free(l);
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    unlink(p);
    if (symlink(tm_tokenizer_path(), p) != 0)
        rc = -1;
    return rc;
}

/* A fresh temporary directory under /tmp (caller removes it with tm_rmrf). */
static inline char *tm_tmpdir(void) {
    char *t = strdup("/tmp/infilld-engine-test-XXXXXX");
    return mkdtemp(t) ? t : NULL;
}

static inline void tm_rmrf(const char *dir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

#endif
