/* `infilld convert MODEL_DIR OUT.gguf --type T`: a safetensors model (Dream
 * family or LLaDA) as one GGUF v3 file in llama.cpp's layout and conventions
 * (tensor names, {arch}.* keys, tokenizer.ggml.* from tokenizer.json, LLaDA's
 * Q/K rows permuted for NORM RoPE, no shift_logits for Dream), so that the
 * daemon and llama.cpp read it.
 *
 * Types: f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m (Q6_K for the
 * output matrix, attn_v and ffn_down, Q4_K elsewhere; llama.cpp's own mix
 * gives Q6_K to only some of those layers). 1-D tensors stay F32; a row
 * length the block does not divide falls back to Q8_0, then F16, as the
 * project's generator (tests/gen/gguf_writer.py) does.
 *
 * The quantisers are the generator's (which follow ggml's reference
 * quantize_row_*_ref for Q8_0 and Q4_0 and use min/max scales for the
 * K-quants, without ggml's iterative scale search), written with the same
 * float32 operations in the same order, so that both write the same bytes
 * (tests/golden/convert_golden.py checks that, and that the dequantisers
 * read back what was meant). Weights are converted one tensor at a time,
 * a few rows at once, and streamed to the file: memory stays at the mapped
 * model plus one tensor's rows. */
#define _GNU_SOURCE
#include "cli.h"
#include "engine_impl.h"
#include "tokenizer_impl.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GG_U16 = 2, GG_U32 = 4, GG_I32 = 5, GG_F32 = 6, GG_BOOL = 7, GG_STR = 8, GG_ARR = 9 };

/* ---- float16 (round to nearest even, as numpy's astype(float16)) ---------- */

static uint16_t cv_f16(float f) {
    union {
        float f;
        uint32_t u;
    } v = {f};
    const uint32_t sign = (v.u >> 16) & 0x8000;
    uint32_t a = v.u & 0x7FFFFFFF;
    if (a >= 0x7F800000) /* inf, nan */
        return (uint16_t)(sign | 0x7C00 | (a > 0x7F800000 ? 0x200 : 0));
    if (a >= 0x477FF000) /* rounds to >= 65520: inf */
        return (uint16_t)(sign | 0x7C00);
    if (a < 0x38800000) { /* below 2^-14: subnormal half */
        if (a < 0x33000000)
            return (uint16_t)sign; /* < 2^-25 rounds to 0 (2^-25 itself ties to even 0) */
        const int e = (int)(a >> 23);
        const uint32_t m = (a & 0x7FFFFF) | 0x800000;
        const int shift = 126 - e; /* value = m * 2^(e-150); half ulp 2^-24 */
        uint32_t h = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((a >> 13) - (112u << 10));
    const uint32_t rem = a & 0x1FFF;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

static uint16_t cv_bf16(float f) {
    union {
        float f;
        uint32_t u;
    } v = {f};
    return (uint16_t)((v.u + 0x7FFF + ((v.u >> 16) & 1)) >> 16);
}

static void put16(uint8_t *p, uint16_t h) { memcpy(p, &h, 2); }
static float nearest(float x) { return x < 0 ? -floorf(-x + 0.5f) : floorf(x + 0.5f); }
static float sinv(float d) { return d != 0 ? 1.0f / d : 0.0f; }
static float clampf(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

/* ---- quantisers: one block from 32 or 256 floats -------------------------------------- */

static void qz_q8_0(const float *x, uint8_t *o) {
    float amax = 0;
    for (int i = 0; i < 32; i++)
        amax = fmaxf(amax, fabsf(x[i]));
    const float d = amax / 127.0f, id = sinv(d);
    put16(o, cv_f16(d));
    for (int i = 0; i < 32; i++)
        o[2 + i] = (uint8_t)(int8_t)clampf(nearest(x[i] * id), -127, 127);
}

static void qz_q4_0(const float *x, uint8_t *o) {
    float amax = 0, mx = 0;
    for (int i = 0; i < 32; i++)
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            mx = x[i];
        }
    const float d = mx / -8.0f, id = sinv(d);
    put16(o, cv_f16(d));
    for (int i = 0; i < 16; i++) {
        const uint8_t a = (uint8_t)clampf(floorf(x[i] * id + 8.5f), 0, 15);
        const uint8_t b = (uint8_t)clampf(floorf(x[i + 16] * id + 8.5f), 0, 15);
        o[2 + i] = (uint8_t)(a | (b << 4));
    }
}

/* Q4_K / Q5_K: d, dmin and the 6-bit sc, mn of 8 sub-blocks; q in 0..levels. */
static void qz_k_affine(const float *x, float levels, uint8_t *dd, uint8_t sc[8], uint8_t mn[8],
                        uint8_t q[256]) {
    float scale[8], lo[8], smax = 0, lmax = 0;
    for (int j = 0; j < 8; j++) {
        float mi = x[32 * j], ma = x[32 * j];
        for (int i = 1; i < 32; i++) {
            mi = fminf(mi, x[32 * j + i]);
            ma = fmaxf(ma, x[32 * j + i]);
        }
        lo[j] = fminf(mi, 0.0f);
        scale[j] = (ma - lo[j]) / levels;
        smax = fmaxf(smax, scale[j]);
        lmax = fmaxf(lmax, -lo[j]);
    }
    const uint16_t dh = cv_f16(smax / 63.0f), mh = cv_f16(lmax / 63.0f);
    put16(dd, dh);
    put16(dd + 2, mh);
    const float df = eng__f16_to_f32(dh), mf = eng__f16_to_f32(mh);
    const float idf = sinv(df), imf = sinv(mf);
    for (int j = 0; j < 8; j++) {
        sc[j] = (uint8_t)clampf(nearest(scale[j] * idf), 0, 63);
        mn[j] = (uint8_t)clampf(nearest(-lo[j] * imf), 0, 63);
        const float step = df * sc[j], off = mf * mn[j], is = sinv(step);
        for (int i = 0; i < 32; i++)
            q[32 * j + i] = (uint8_t)clampf(nearest((x[32 * j + i] + off) * is), 0, levels);
    }
}

static void pack_scales_k4(const uint8_t sc[8], const uint8_t mn[8], uint8_t *s) {
    for (int j = 0; j < 4; j++) {
        s[j] = (uint8_t)((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = (uint8_t)((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
        s[j + 8] = (uint8_t)((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
    }
}

static void qz_q4_k(const float *x, uint8_t *o) {
    uint8_t sc[8], mn[8], q[256];
    qz_k_affine(x, 15.0f, o, sc, mn, q);
    pack_scales_k4(sc, mn, o + 4);
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++)
            o[16 + 32 * c + l] = (uint8_t)(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
}

static void qz_q5_k(const float *x, uint8_t *o) {
    uint8_t sc[8], mn[8], q[256];
    qz_k_affine(x, 31.0f, o, sc, mn, q);
    pack_scales_k4(sc, mn, o + 4);
    uint8_t *qh = o + 16;
    memset(qh, 0, 32);
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) {
            const uint8_t a = q[64 * c + l], b = q[64 * c + 32 + l];
            o[48 + 32 * c + l] = (uint8_t)((a & 0xF) | ((b & 0xF) << 4));
            qh[l] |= (uint8_t)(((a >> 4) << (2 * c)) | ((b >> 4) << (2 * c + 1)));
        }
}

static void qz_q6_k(const float *x, uint8_t *o) {
    float scale[16], smax = 0;
    for (int j = 0; j < 16; j++) {
        float amax = 0;
        for (int i = 0; i < 16; i++)
            amax = fmaxf(amax, fabsf(x[16 * j + i]));
        scale[j] = amax / 31.0f;
        smax = fmaxf(smax, scale[j]);
    }
    const uint16_t dh = cv_f16(smax / 127.0f);
    const float df = eng__f16_to_f32(dh), idf = sinv(df);
    uint8_t q[256];
    int8_t sc[16];
    for (int j = 0; j < 16; j++) {
        sc[j] = (int8_t)clampf(nearest(scale[j] * idf), -128, 127);
        const float is = sinv(df * sc[j]);
        for (int i = 0; i < 16; i++)
            q[16 * j + i] = (uint8_t)(clampf(nearest(x[16 * j + i] * is), -32, 31) + 32);
    }
    for (int h = 0; h < 2; h++) {
        const uint8_t *e = q + 128 * h;
        uint8_t *ql = o + 64 * h, *qh = o + 128 + 32 * h;
        for (int l = 0; l < 32; l++) {
            ql[l] = (uint8_t)((e[l] & 0xF) | ((e[64 + l] & 0xF) << 4));
            ql[32 + l] = (uint8_t)((e[32 + l] & 0xF) | ((e[96 + l] & 0xF) << 4));
            qh[l] = (uint8_t)((e[l] >> 4) | ((e[32 + l] >> 4) << 2) | ((e[64 + l] >> 4) << 4) |
                              ((e[96 + l] >> 4) << 6));
        }
    }
    memcpy(o + 192, sc, 16);
    put16(o + 208, dh);
}

/* ggml type ids */
static int ggml_type(eng_dtype t) {
    static const int id[] = {0, 1, 30, 8, 2, 12, 13, 14};
    return id[t];
}

static int block_len(eng_dtype t) {
    return t == ENG_Q4_K || t == ENG_Q5_K || t == ENG_Q6_K ? 256 : eng__dtype_is_block(t) ? 32 : 1;
}

/* Encodes n floats (n a multiple of the block) into out. */
static void encode(eng_dtype t, const float *x, int64_t n, uint8_t *out) {
    void (*fn)(const float *, uint8_t *) = NULL;
    switch (t) {
    case ENG_F32:
        memcpy(out, x, (size_t)n * 4);
        return;
    case ENG_F16:
        for (int64_t i = 0; i < n; i++)
            put16(out + 2 * i, cv_f16(x[i]));
        return;
    case ENG_BF16:
        for (int64_t i = 0; i < n; i++)
            put16(out + 2 * i, cv_bf16(x[i]));
        return;
    case ENG_Q8_0:
        fn = qz_q8_0;
        break;
    case ENG_Q4_0:
        fn = qz_q4_0;
        break;
    case ENG_Q4_K:
        fn = qz_q4_k;
        break;
    case ENG_Q5_K:
        fn = qz_q5_k;
        break;
    case ENG_Q6_K:
        fn = qz_q6_k;
        break;
    }
    const int qk = block_len(t);
    const size_t bs = (size_t)eng__dtype_bytes(t, qk);
    for (int64_t i = 0; i < n; i += qk, out += bs)
        fn(x + i, out);
}

/* ---- the output file --------------------------------------------------------------- */

typedef struct cv_buf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} cv_buf;

static void bput(cv_buf *b, const void *src, size_t n) {
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 1 << 16;
        while (c < b->n + n)
            c *= 2;
        uint8_t *g = realloc(b->p, c);
        if (!g) {
            b->oom = true;
            return;
        }
        b->p = g;
        b->cap = c;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void bu32(cv_buf *b, uint32_t v) { bput(b, &v, 4); }
static void bu64(cv_buf *b, uint64_t v) { bput(b, &v, 8); }
static void bstr(cv_buf *b, const char *s) {
    bu64(b, strlen(s));
    bput(b, s, strlen(s));
}
static void kv_head(cv_buf *b, const char *key, uint32_t type) {
    bstr(b, key);
    bu32(b, type);
}
static void kv_str(cv_buf *b, const char *key, const char *v) {
    kv_head(b, key, GG_STR);
    bstr(b, v);
}
static void kv_u32(cv_buf *b, const char *key, uint32_t v) {
    kv_head(b, key, GG_U32);
    bu32(b, v);
}
static void kv_f32(cv_buf *b, const char *key, float v) {
    kv_head(b, key, GG_F32);
    bput(b, &v, 4);
}
static void kv_bool(cv_buf *b, const char *key, bool v) {
    kv_head(b, key, GG_BOOL);
    uint8_t c = v;
    bput(b, &c, 1);
}

typedef struct cv_tensor {
    char name[96];
    const eng_tensor *src;
    eng_dtype type;
    int permute_heads; /* LLaDA attn_q / attn_k: llama.cpp's row permutation; 0 = none */
    uint64_t off, bytes;
} cv_tensor;

static eng_dtype tensor_type(const char *name, const eng_tensor *t, const char *ftype,
                             eng_dtype base) {
    if (t->rows == 1)
        return ENG_F32;
    eng_dtype ty = base;
    if (strcmp(ftype, "q4_k_m") == 0) {
        const size_t n = strlen(name);
        bool six = false;
        const char *suf[] = {"output.weight", "attn_v.weight", "ffn_down.weight"};
        for (int i = 0; i < 3; i++)
            six = six || (n >= strlen(suf[i]) && strcmp(name + n - strlen(suf[i]), suf[i]) == 0);
        ty = six ? ENG_Q6_K : ENG_Q4_K;
    }
    if (t->cols % block_len(ty))
        ty = t->cols % 32 == 0 ? ENG_Q8_0 : ENG_F16;
    return ty;
}

/* Row r of the file's tensor: LLaDA's Q/K rows in llama.cpp's order
 * (LlamaModel.permute: within a head, rotate-half pairs (i, i + hd/2)
 * become adjacent rows 2i, 2i + 1). */
static int64_t src_row(const cv_tensor *t, int64_t r) {
    if (!t->permute_heads)
        return r;
    const int64_t hd = t->src->rows / t->permute_heads, half = hd / 2;
    const int64_t h = r / hd, k = r % hd;
    return h * hd + (k % 2) * half + k / 2;
}

/* tokenizer.json's pre-tokenizer regex, and the llama.cpp name infilld maps to it. */
static const char *pre_name_of(json_t *tok) {
    json_t *pre = json_object_get(tok, "pre_tokenizer");
    json_t *list = json_object_get(pre, "pretokenizers");
    const char *re = NULL;
    if (json_is_array(list)) {
        size_t i;
        json_t *p;
        json_array_foreach(list, i, p) {
            const char *s =
                json_string_value(json_object_get(json_object_get(p, "pattern"), "Regex"));
            if (s && !re)
                re = s;
        }
    } else {
        re = json_string_value(json_object_get(json_object_get(pre, "pattern"), "Regex"));
    }
    if (!re)
        return NULL;
    static const char *const names[] = {"qwen2", "llama-bpe", "gpt-2"};
    for (size_t i = 0; i < BASE_ARRAY_LEN(names); i++) {
        const char *r = eng__tok_pre_regex(names[i], NULL);
        if (r && strcmp(r, re) == 0)
            return names[i];
    }
    return NULL;
}

static bool looks_special(const char *s) {
    const size_t n = strlen(s);
    return n >= 4 && strncmp(s, "<|", 2) == 0 && strcmp(s + n - 2, "|>") == 0;
}

/* tokenizer.ggml.* as the generator writes them (tokens padded to the vocabulary). */
static bool tokenizer_kvs(cv_buf *b, json_t *tok, const eng_model_info *in, int *n_kv) {
    json_t *model = json_object_get(tok, "model");
    json_t *vocab = json_object_get(model, "vocab"), *merges = json_object_get(model, "merges");
    json_t *added = json_object_get(tok, "added_tokens");
    const char *pre = pre_name_of(tok);
    if (!json_is_object(vocab) || !json_is_array(merges) || !pre)
        return false;
    const int V = in->vocab_size;
    const char **tokens = calloc((size_t)V, sizeof *tokens);
    int32_t *types = malloc((size_t)V * sizeof *types);
    char(*pads)[24] = malloc((size_t)V * sizeof *pads);
    if (!tokens || !types || !pads) {
        free(tokens);
        free(types);
        free(pads);
        return false;
    }
    for (int i = 0; i < V; i++) {
        snprintf(pads[i], sizeof pads[i], "[PAD%d]", i);
        tokens[i] = pads[i];
        types[i] = 5; /* unused */
    }
    const char *k;
    json_t *v;
    json_object_foreach(vocab, k, v) {
        json_int_t id = json_integer_value(v);
        if (json_is_integer(v) && id >= 0 && id < V) {
            tokens[id] = k;
            types[id] = 1;
        }
    }
    size_t i;
    json_array_foreach(added, i, v) {
        json_int_t id = json_integer_value(json_object_get(v, "id"));
        const char *c = json_string_value(json_object_get(v, "content"));
        if (c && id >= 0 && id < V) {
            tokens[id] = c;
            types[id] = json_is_true(json_object_get(v, "special")) || looks_special(c) ? 3 : 4;
        }
    }
    kv_str(b, "tokenizer.ggml.model", "gpt2");
    kv_str(b, "tokenizer.ggml.pre", pre);
    kv_head(b, "tokenizer.ggml.tokens", GG_ARR);
    bu32(b, GG_STR);
    bu64(b, (uint64_t)V);
    for (int t = 0; t < V; t++)
        bstr(b, tokens[t]);
    kv_head(b, "tokenizer.ggml.token_type", GG_ARR);
    bu32(b, GG_I32);
    bu64(b, (uint64_t)V);
    bput(b, types, (size_t)V * 4);
    kv_head(b, "tokenizer.ggml.merges", GG_ARR);
    bu32(b, GG_STR);
    bu64(b, json_array_size(merges));
    json_array_foreach(merges, i, v) {
        if (json_is_string(v)) {
            bstr(b, json_string_value(v));
        } else { /* ["a", "b"] */
            const char *x = json_string_value(json_array_get(v, 0)),
                       *y = json_string_value(json_array_get(v, 1));
            char *s = NULL;
            if (!x || !y || asprintf(&s, "%s %s", x, y) < 0) {
                b->oom = true;
                break;
            }
            bstr(b, s);
            free(s);
        }
    }
    *n_kv += 5;
    kv_u32(b, "tokenizer.ggml.mask_token_id", (uint32_t)in->mask_id);
    kv_u32(b, "tokenizer.ggml.eos_token_id", (uint32_t)in->eos_id);
    kv_u32(b, "tokenizer.ggml.padding_token_id", (uint32_t)in->pad_id);
    *n_kv += 3;
    if (in->bos_id >= 0 && in->family != ENG_FAMILY_LLADA) {
        kv_u32(b, "tokenizer.ggml.bos_token_id", (uint32_t)in->bos_id);
        ++*n_kv;
    }
    free(tokens);
    free(types);
    free(pads);
    return true;
}

static int usage(FILE *f) {
    fprintf(f, "usage: infilld convert MODEL_DIR OUT.gguf --type TYPE [--threads N]\n"
               "\n"
               "Writes a safetensors model (Dream family or LLaDA) as one GGUF file that infilld\n"
               "and llama.cpp read. TYPE: f32 f16 bf16 q8_0 q4_0 q4_k q5_k q6_k q4_k_m\n"
               "(q4_k_m: Q6_K for output, attn_v and ffn_down, Q4_K elsewhere). 1-D tensors stay\n"
               "F32; a row the block does not divide falls back to Q8_0, then F16.\n");
    return f == stderr ? 2 : 0;
}

int dmn_cli_convert(int argc, char **argv) {
    const char *dir = NULL, *outp = NULL, *ftype = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--type") == 0 && i + 1 < argc)
            ftype = argv[++i];
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage(stdout);
        else if (argv[i][0] == '-')
            return usage(stderr);
        else if (!dir)
            dir = argv[i];
        else if (!outp)
            outp = argv[i];
        else
            return usage(stderr);
    }
    if (!dir || !outp || !ftype)
        return usage(stderr);
    static const struct {
        const char *name;
        eng_dtype t;
        uint32_t ftype;
    } types[] = {{"f32", ENG_F32, 0},    {"f16", ENG_F16, 1},    {"bf16", ENG_BF16, 32},
                 {"q8_0", ENG_Q8_0, 7},  {"q4_0", ENG_Q4_0, 2},  {"q4_k", ENG_Q4_K, 15},
                 {"q5_k", ENG_Q5_K, 17}, {"q6_k", ENG_Q6_K, 18}, {"q4_k_m", ENG_Q4_K, 15}};
    int ti = -1;
    for (size_t i = 0; i < BASE_ARRAY_LEN(types); i++)
        if (strcmp(ftype, types[i].name) == 0)
            ti = (int)i;
    if (ti < 0) {
        fprintf(stderr, "infilld convert: unknown --type '%s'\n", ftype);
        return usage(stderr);
    }
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.device = ENG_DEVICE_CPU;
    eng_error err = {0};
    eng_model *m = eng_model_load(dir, &o, &err);
    if (!m) {
        fprintf(stderr, "infilld convert: %s\n", err.msg);
        return 1;
    }
    const eng_model_info *in = &m->info;
    int rc = 1;
    cv_buf h = {0};
    cv_tensor *ts = NULL;
    json_t *tok = NULL;
    FILE *f = NULL;
    float *rows = NULL;
    uint8_t *enc = NULL;
    if (in->gguf) {
        fprintf(stderr, "infilld convert: %s is already a GGUF model\n", dir);
        goto done;
    }
    if (in->family != ENG_FAMILY_DREAM && in->family != ENG_FAMILY_LLADA) {
        fprintf(stderr,
                "infilld convert: %s: only the Dream family and LLaDA have a llama.cpp "
                "architecture ('dream', 'llada')\n",
                dir);
        goto done;
    }
    char *tp = NULL;
    if (asprintf(&tp, "%s/tokenizer.json", dir) < 0)
        goto done;
    json_error_t je;
    tok = json_load_file(tp, 0, &je);
    free(tp);
    if (!tok) {
        fprintf(stderr, "infilld convert: %s/tokenizer.json: %s\n", dir, je.text);
        goto done;
    }
    const bool llada = in->family == ENG_FAMILY_LLADA;
    const char *arch = llada ? "llada" : "dream";
    const eng_weights *w = &m->w;
    /* the tensors, in the generator's order */
    const int L = in->n_layer;
    ts = calloc((size_t)(3 + 12 * L), sizeof *ts);
    if (!ts)
        goto done;
    int nt = 0;
#define CV_ADD(t, ...)                                                                             \
    do {                                                                                           \
        snprintf(ts[nt].name, sizeof ts[nt].name, __VA_ARGS__);                                    \
        ts[nt++].src = (t);                                                                        \
    } while (0)
    CV_ADD(&w->embed, "token_embd.weight");
    for (int l = 0; l < L; l++) {
        const eng_layer_w *lw = &w->layers[l];
        CV_ADD(&lw->attn_norm, "blk.%d.attn_norm.weight", l);
        CV_ADD(&lw->wq, "blk.%d.attn_q.weight", l);
        if (llada)
            ts[nt - 1].permute_heads = in->n_head;
        CV_ADD(&lw->wk, "blk.%d.attn_k.weight", l);
        if (llada)
            ts[nt - 1].permute_heads = in->n_kv_head;
        CV_ADD(&lw->wv, "blk.%d.attn_v.weight", l);
        if (lw->bq.data) {
            CV_ADD(&lw->bq, "blk.%d.attn_q.bias", l);
            CV_ADD(&lw->bk, "blk.%d.attn_k.bias", l);
            CV_ADD(&lw->bv, "blk.%d.attn_v.bias", l);
        }
        CV_ADD(&lw->wo, "blk.%d.attn_output.weight", l);
        CV_ADD(&lw->ffn_norm, "blk.%d.ffn_norm.weight", l);
        CV_ADD(&lw->w_gate, "blk.%d.ffn_gate.weight", l);
        CV_ADD(&lw->w_up, "blk.%d.ffn_up.weight", l);
        CV_ADD(&lw->w_down, "blk.%d.ffn_down.weight", l);
    }
    CV_ADD(&w->norm, "output_norm.weight");
    if (!in->tied_head)
        CV_ADD(&w->lm_head, "output.weight");
#undef CV_ADD
    uint64_t off = 0;
    int64_t kmax = 0;
    for (int i = 0; i < nt; i++) {
        ts[i].type = tensor_type(ts[i].name, ts[i].src, ftype, types[ti].t);
        ts[i].off = off;
        ts[i].bytes = eng__dtype_bytes(ts[i].type, ts[i].src->rows * ts[i].src->cols);
        off += (ts[i].bytes + 31) / 32 * 32;
        kmax = BASE_MAX(kmax, ts[i].src->cols);
    }
    /* header */
    cv_buf kv = {0};
    int n_kv = 0;
    char key[128], name[96];
    snprintf(name, sizeof name, "infilld-convert-%s", ftype);
    kv_str(&kv, "general.architecture", arch);
    kv_str(&kv, "general.name", name);
    kv_u32(&kv, "general.file_type", types[ti].ftype);
    n_kv += 3;
#define CV_KEY(s) (snprintf(key, sizeof key, "%s.%s", arch, s), key)
    kv_u32(&kv, CV_KEY("block_count"), (uint32_t)L);
    kv_u32(&kv, CV_KEY("embedding_length"), (uint32_t)in->d_model);
    kv_u32(&kv, CV_KEY("feed_forward_length"), (uint32_t)in->d_ff);
    kv_u32(&kv, CV_KEY("attention.head_count"), (uint32_t)in->n_head);
    kv_u32(&kv, CV_KEY("attention.head_count_kv"), (uint32_t)in->n_kv_head);
    kv_f32(&kv, CV_KEY("rope.freq_base"), in->rope_theta);
    kv_f32(&kv, CV_KEY("attention.layer_norm_rms_epsilon"), in->rms_eps);
    kv_bool(&kv, CV_KEY("attention.causal"), false);
    kv_u32(&kv, CV_KEY("context_length"), (uint32_t)in->max_context);
    kv_u32(&kv, CV_KEY("rope.dimension_count"), (uint32_t)in->head_dim);
    kv_u32(&kv, CV_KEY("attention.key_length"), (uint32_t)in->head_dim);
    kv_u32(&kv, CV_KEY("attention.value_length"), (uint32_t)in->head_dim);
    n_kv += 12;
#undef CV_KEY
    if (llada) {
        kv_bool(&kv, "diffusion.shift_logits", false);
        kv_bool(&kv, "tokenizer.ggml.add_bos_token", true);
        n_kv += 2;
    }
    if (!tokenizer_kvs(&kv, tok, in, &n_kv)) {
        fprintf(stderr,
                "infilld convert: %s/tokenizer.json: not a byte-level BPE tokenizer with a "
                "pre-tokenizer infilld knows (qwen2, llama-bpe, gpt-2)\n",
                dir);
        free(kv.p);
        goto done;
    }
    bput(&h, "GGUF", 4);
    bu32(&h, 3);
    bu64(&h, (uint64_t)nt);
    bu64(&h, (uint64_t)n_kv);
    bput(&h, kv.p, kv.n);
    free(kv.p);
    for (int i = 0; i < nt; i++) {
        bstr(&h, ts[i].name);
        const bool one = ts[i].src->rows == 1;
        bu32(&h, one ? 1 : 2);
        bu64(&h, (uint64_t)ts[i].src->cols);
        if (!one)
            bu64(&h, (uint64_t)ts[i].src->rows);
        bu32(&h, (uint32_t)ggml_type(ts[i].type));
        bu64(&h, ts[i].off);
    }
    static const uint8_t zero[32];
    bput(&h, zero, (32 - h.n % 32) % 32);
    if (h.oom)
        goto done;
    f = fopen(outp, "wb");
    if (!f) {
        fprintf(stderr, "infilld convert: %s: %s\n", outp, strerror(errno));
        goto done;
    }
    enum { CV_ROWS = 64 };
    rows = malloc((size_t)CV_ROWS * (size_t)kmax * sizeof(float));
    enc = malloc((size_t)CV_ROWS * (size_t)kmax * sizeof(float));
    if (!rows || !enc || fwrite(h.p, 1, h.n, f) != h.n)
        goto io;
    for (int i = 0; i < nt; i++) {
        const eng_tensor *s = ts[i].src;
        for (int64_t r0 = 0; r0 < s->rows; r0 += CV_ROWS) {
            const int n = (int)BASE_MIN(CV_ROWS, s->rows - r0);
            for (int r = 0; r < n; r++)
                eng__tensor_row_f32(s, src_row(&ts[i], r0 + r), 0, s->cols,
                                    rows + (int64_t)r * s->cols);
            encode(ts[i].type, rows, (int64_t)n * s->cols, enc);
            const size_t nb = (size_t)eng__dtype_bytes(ts[i].type, (int64_t)n * s->cols);
            if (fwrite(enc, 1, nb, f) != nb)
                goto io;
        }
        const size_t pad = (32 - ts[i].bytes % 32) % 32;
        if (pad && fwrite(zero, 1, pad, f) != pad)
            goto io;
    }
    if (fclose(f) != 0) {
        f = NULL;
        goto io;
    }
    f = NULL;
    {
        char mix[64] = "";
        for (int t = 0; t <= ENG_Q6_K; t++)
            for (int i = 0; i < nt; i++)
                if ((int)ts[i].type == t) {
                    snprintf(mix + strlen(mix), sizeof mix - strlen(mix), "%s%s", mix[0] ? "+" : "",
                             eng_dtype_name((eng_dtype)t));
                    break;
                }
        printf("%s: %d tensors (%s), %.1f MiB\n", outp, nt, mix,
               (double)(h.n + off) / (1024.0 * 1024.0));
    }
    rc = 0;
    goto done;
io:
    fprintf(stderr, "infilld convert: %s: write failed: %s\n", outp, strerror(errno));
done:
    if (f)
        fclose(f);
    free(rows);
    free(enc);
    free(h.p);
    free(ts);
    json_decref(tok);
    eng_model_free(m);
    return rc;
}
