/* Model loading: config.json -> family and dimensions, safetensors shards ->
 * memory-mapped tensors bound to the family's names, tokenizer, special ids,
 * backend choice. Also the thin context / forward / step wrappers that check
 * arguments before handing them to the backend.
 *
 * Families are chosen from config.json (architectures[0], then model_type),
 * never from file names:
 *   DreamModel / "Dream"          -> ENG_FAMILY_DREAM  (Qwen2 names, q/k/v bias, shifted)
 *   Qwen2ForCausalLM / "qwen2"    -> ENG_FAMILY_OPEN_DCODER (needs a mask token, shifted)
 *   LLaDAModelLM / "llada"        -> ENG_FAMILY_LLADA  (OLMo names, unshifted)
 *
 * max_context (prompt + hole, tokens): 2048 for the Dream family (the usable
 * context its README states; less only when max_position_embeddings is smaller); for the
 * others min(max_position_embeddings or max_sequence_length, 4096). */
#define _GNU_SOURCE
#include "engine_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENG__MOD "engine"

void eng_load_opts_default(eng_load_opts *o) {
    memset(o, 0, sizeof *o);
    o->device = ENG_DEVICE_AUTO;
    o->n_threads = 0;
    o->mask_token = -1;
}

#ifndef INFILLD_HAVE_CUDA
const eng_backend_i *eng_backend_cuda_get(void) { return NULL; }

bool eng_cuda_describe(char *buf, size_t len) {
    snprintf(buf, len, "not built (configure with the CUDA toolkit to enable it)");
    return false;
}
#endif

/* ---- small JSON helpers ------------------------------------------------------ */

static json_t *eng__json_file(const char *dir, const char *name, bool required, eng_error *err,
                              bool *failed) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    *failed = false;
    if (access(path, F_OK) != 0) {
        if (required) {
            eng__err(err, BASE_ERR_NOT_FOUND, "%s: not found (is this a model directory?)", path);
            *failed = true;
        }
        return NULL;
    }
    json_error_t jerr;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!j || !json_is_object(j)) {
        eng__err(err, BASE_ERR_MODEL, "%s: not a valid JSON object: %s (line %d)", path,
                 j ? "top level is not an object" : jerr.text, j ? 0 : jerr.line);
        json_decref(j);
        *failed = true;
        return NULL;
    }
    return j;
}

/* Reads an integer config field. Returns 0 = absent, 1 = ok, -1 = present but
 * not an integer. */
static int eng__cfg_int(json_t *cfg, const char *key, long long *out) {
    json_t *j = json_object_get(cfg, key);
    if (!j || json_is_null(j))
        return 0;
    if (json_is_integer(j)) {
        *out = json_integer_value(j);
        return 1;
    }
    /* 4096.0 is an integer written as a float by some exporters. */
    if (json_is_real(j)) {
        double d = json_real_value(j);
        if (d == floor(d) && fabs(d) < 9e15) {
            *out = (long long)d;
            return 1;
        }
    }
    return -1;
}

static int eng__cfg_num(json_t *cfg, const char *key, double *out) {
    json_t *j = json_object_get(cfg, key);
    if (!j || json_is_null(j))
        return 0;
    if (!json_is_number(j))
        return -1;
    *out = json_number_value(j);
    return 1;
}

/* A dimension field: required, integer, 1 <= v <= max. */
static base_status eng__cfg_dim(json_t *cfg, const char *path, const char *key, long long max,
                                int *out, eng_error *err) {
    long long v = 0;
    int r = eng__cfg_int(cfg, key, &v);
    if (r == 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: missing '%s'", path, key);
    if (r < 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is not an integer", path, key);
    if (v <= 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is %lld; it must be positive", path, key, v);
    if (v > max)
        return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is %lld, larger than the supported %lld",
                        path, key, v, max);
    *out = (int)v;
    return BASE_OK;
}

/* A token id field: an integer, or the first integer of an array; -1 if absent. */
static int32_t eng__cfg_id(json_t *cfg, const char *key) {
    if (!cfg)
        return -1;
    json_t *j = json_object_get(cfg, key);
    if (json_is_array(j))
        j = json_array_get(j, 0);
    if (json_is_integer(j) && json_integer_value(j) >= 0 && json_integer_value(j) < INT32_MAX)
        return (int32_t)json_integer_value(j);
    return -1;
}

/* tokenizer_config.json names special tokens by content: "bos_token": "<s>" or
 * {"content": "<s>", ...}. */
static int32_t eng__tokcfg_id(json_t *tcfg, const eng_tokenizer *tok, const char *key) {
    if (!tcfg || !tok)
        return -1;
    json_t *j = json_object_get(tcfg, key);
    if (json_is_object(j))
        j = json_object_get(j, "content");
    if (!json_is_string(j))
        return -1;
    return eng_token_special_id(tok, json_string_value(j));
}

/* ---- config ------------------------------------------------------------------ */

static const char eng__supported[] =
    "DreamModel (Dream, Dream-Coder, DreamOn, DiffuCoder), Qwen2ForCausalLM with a mask token "
    "(Open-dCoder), LLaDAModelLM (LLaDA)";

static base_status eng__parse_config(eng_model *m, json_t *cfg, const char *path, eng_error *err) {
    eng_model_info *in = &m->info;
    json_t *archs = json_object_get(cfg, "architectures");
    const char *arch = NULL;
    if (json_is_array(archs) && json_is_string(json_array_get(archs, 0)))
        arch = json_string_value(json_array_get(archs, 0));
    json_t *jmt = json_object_get(cfg, "model_type");
    const char *mtype = json_is_string(jmt) ? json_string_value(jmt) : "";

    if ((arch && strcmp(arch, "DreamModel") == 0) || (!arch && strcasecmp(mtype, "dream") == 0))
        in->family = ENG_FAMILY_DREAM;
    else if ((arch && strcmp(arch, "Qwen2ForCausalLM") == 0) ||
             (!arch && strcmp(mtype, "qwen2") == 0))
        in->family = ENG_FAMILY_OPEN_DCODER;
    else if ((arch && strcmp(arch, "LLaDAModelLM") == 0) || (!arch && strcmp(mtype, "llada") == 0))
        in->family = ENG_FAMILY_LLADA;
    else
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: unsupported architecture '%s' (model_type '%s'); supported: %s", path,
                        arch ? arch : "(none)", mtype, eng__supported);
    m->arch = strdup(arch ? arch : mtype);
    if (!m->arch)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    in->arch = m->arch;

    base_status st;
    long long maxpos = 0;
    double theta = 10000.0, eps = 1e-6;
    int r;
    if (in->family == ENG_FAMILY_LLADA) {
        if ((st = eng__cfg_dim(cfg, path, "d_model", 65536, &in->d_model, err)) ||
            (st = eng__cfg_dim(cfg, path, "n_layers", 1024, &in->n_layer, err)) ||
            (st = eng__cfg_dim(cfg, path, "n_heads", 1024, &in->n_head, err)) ||
            (st = eng__cfg_dim(cfg, path, "mlp_hidden_size", 1 << 20, &in->d_ff, err)))
            return st;
        in->n_kv_head = in->n_head;
        if (json_object_get(cfg, "n_kv_heads") && !json_is_null(json_object_get(cfg, "n_kv_heads")))
            if ((st = eng__cfg_dim(cfg, path, "n_kv_heads", 1024, &in->n_kv_head, err)))
                return st;
        const char *vkey = json_object_get(cfg, "embedding_size") ? "embedding_size" : "vocab_size";
        if ((st = eng__cfg_dim(cfg, path, vkey, 1 << 22, &in->vocab_size, err)))
            return st;
        eps = 1e-5;
        json_t *tie = json_object_get(cfg, "weight_tying");
        in->tied_head = json_is_true(tie);
        in->qkv_bias = json_is_true(json_object_get(cfg, "include_qkv_bias"));
        if (json_is_true(json_object_get(cfg, "include_bias")))
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: include_bias=true (biases on every linear layer) is not supported",
                            path);
        in->shift_logits = false;
        if ((r = eng__cfg_int(cfg, "max_sequence_length", &maxpos)) < 0)
            return eng__err(err, BASE_ERR_MODEL, "%s: 'max_sequence_length' is not an integer",
                            path);
    } else {
        if ((st = eng__cfg_dim(cfg, path, "hidden_size", 65536, &in->d_model, err)) ||
            (st = eng__cfg_dim(cfg, path, "num_hidden_layers", 1024, &in->n_layer, err)) ||
            (st = eng__cfg_dim(cfg, path, "num_attention_heads", 1024, &in->n_head, err)) ||
            (st = eng__cfg_dim(cfg, path, "intermediate_size", 1 << 20, &in->d_ff, err)) ||
            (st = eng__cfg_dim(cfg, path, "vocab_size", 1 << 22, &in->vocab_size, err)))
            return st;
        in->n_kv_head = in->n_head;
        if (json_object_get(cfg, "num_key_value_heads") &&
            !json_is_null(json_object_get(cfg, "num_key_value_heads")))
            if ((st = eng__cfg_dim(cfg, path, "num_key_value_heads", 1024, &in->n_kv_head, err)))
                return st;
        in->tied_head = json_is_true(json_object_get(cfg, "tie_word_embeddings"));
        in->qkv_bias = true;
        in->shift_logits = true;
        if ((r = eng__cfg_int(cfg, "max_position_embeddings", &maxpos)) < 0)
            return eng__err(err, BASE_ERR_MODEL, "%s: 'max_position_embeddings' is not an integer",
                            path);
        json_t *sw = json_object_get(cfg, "use_sliding_window");
        if (json_is_true(sw))
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: use_sliding_window=true is not supported", path);
    }
    /* head_dim: an explicit field wins (as in newer Qwen2 code), else d/heads. */
    in->head_dim = 0;
    if (json_object_get(cfg, "head_dim") && !json_is_null(json_object_get(cfg, "head_dim"))) {
        if ((st = eng__cfg_dim(cfg, path, "head_dim", 1024, &in->head_dim, err)))
            return st;
    } else {
        if (in->d_model % in->n_head != 0)
            return eng__err(err, BASE_ERR_MODEL,
                            "%s: hidden size %d is not divisible by the %d attention heads", path,
                            in->d_model, in->n_head);
        in->head_dim = in->d_model / in->n_head;
    }
    if (in->head_dim % 2 != 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: head dimension %d is odd (RoPE needs pairs)",
                        path, in->head_dim);
    if (in->n_kv_head > in->n_head || in->n_head % in->n_kv_head != 0)
        return eng__err(
            err, BASE_ERR_MODEL, "%s: '%s' (%d) is not a multiple of '%s' (%d)", path,
            in->family == ENG_FAMILY_LLADA ? "n_heads" : "num_attention_heads", in->n_head,
            in->family == ENG_FAMILY_LLADA ? "n_kv_heads" : "num_key_value_heads", in->n_kv_head);
    if ((long long)in->n_head * in->head_dim > 65536)
        return eng__err(err, BASE_ERR_MODEL, "%s: heads x head_dim is absurdly large", path);

    if ((r = eng__cfg_num(cfg, "rope_theta", &theta)) < 0 || !(theta > 0) || !isfinite(theta))
        return eng__err(err, BASE_ERR_MODEL, "%s: 'rope_theta' must be a positive number", path);
    if ((r = eng__cfg_num(cfg, "rms_norm_eps", &eps)) < 0 || !(eps > 0) || !(eps < 1))
        return eng__err(err, BASE_ERR_MODEL, "%s: 'rms_norm_eps' must be in (0, 1)", path);
    in->rope_theta = (float)theta;
    in->rms_eps = (float)eps;
    json_t *rs = json_object_get(cfg, "rope_scaling");
    if (rs && !json_is_null(rs))
        return eng__err(err, BASE_ERR_UNSUPPORTED, "%s: rope_scaling is not supported", path);

    if (maxpos < 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: negative maximum position count", path);
    /* Dream: 2048, or fewer when max_position_embeddings says the model was trained
     * on shorter sequences (the trained default: 256); RoPE past them is untrained. */
    if (in->family == ENG_FAMILY_DREAM)
        in->max_context = (int)(maxpos > 0 && maxpos < 2048 ? maxpos : 2048);
    else
        in->max_context = (int)(maxpos > 0 && maxpos < 4096 ? maxpos : 4096);
    return BASE_OK;
}

/* ---- safetensors files -------------------------------------------------------- */

static base_status eng__map_file(eng_model *m, const char *name, eng_error *err) {
    if (strchr(name, '/') || strcmp(name, "..") == 0 || name[0] == '\0')
        return eng__err(err, BASE_ERR_MODEL, "%s: shard name '%s' must be a plain file name",
                        m->dir, name);
    for (int i = 0; i < m->n_files; i++) {
        const char *base = strrchr(m->files[i].path, '/');
        if (base && strcmp(base + 1, name) == 0)
            return BASE_OK; /* already mapped */
    }
    eng__st_file *nf = realloc(m->files, (size_t)(m->n_files + 1) * sizeof *nf);
    if (!nf)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->files = nf;
    eng__st_file *f = &m->files[m->n_files];
    memset(f, 0, sizeof *f);
    size_t plen = strlen(m->dir) + strlen(name) + 2;
    f->path = malloc(plen);
    if (!f->path)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    snprintf(f->path, plen, "%s/%s", m->dir, name);
    m->n_files++;

    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return eng__err(err, errno == ENOENT ? BASE_ERR_NOT_FOUND : BASE_ERR_IO, "%s: %s", f->path,
                        strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return eng__err(err, BASE_ERR_IO, "%s: not a regular file", f->path);
    }
    f->size = (size_t)sb.st_size;
    if (f->size > 0) {
        f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (f->map == MAP_FAILED) {
            f->map = NULL;
            close(fd);
            return eng__err(err, BASE_ERR_IO, "%s: mmap failed: %s", f->path, strerror(errno));
        }
    }
    close(fd);
    return eng__st_parse(f->map ? f->map : (const uint8_t *)"", f->size, f->path, m->n_files - 1,
                         &m->tensors, &m->n_tensors, err);
}

static int eng__tensor_cmp(const void *a, const void *b) {
    return strcmp(((const eng__st_tensor *)a)->name, ((const eng__st_tensor *)b)->name);
}

static base_status eng__map_weights(eng_model *m, eng_error *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", m->dir);
    base_status st;
    if (access(path, F_OK) == 0) {
        json_error_t jerr;
        json_t *idx = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
        json_t *wm = idx ? json_object_get(idx, "weight_map") : NULL;
        if (!json_is_object(wm)) {
            json_decref(idx);
            return eng__err(err, BASE_ERR_MODEL, "%s: no weight_map object%s%s", path,
                            idx ? "" : ": ", idx ? "" : jerr.text);
        }
        const char *key;
        json_t *val;
        st = BASE_OK;
        json_object_foreach(wm, key, val) {
            if (!json_is_string(val)) {
                st = eng__err(err, BASE_ERR_MODEL, "%s: weight_map['%s'] is not a file name", path,
                              key);
                break;
            }
            if ((st = eng__map_file(m, json_string_value(val), err)))
                break;
        }
        /* Every tensor the index names must be in the shard it names. */
        if (!st) {
            json_object_foreach(wm, key, val) {
                bool found = false;
                for (int i = 0; i < m->n_tensors && !found; i++) {
                    const char *base = strrchr(m->files[m->tensors[i].file].path, '/');
                    found = strcmp(m->tensors[i].name, key) == 0 &&
                            strcmp(base + 1, json_string_value(val)) == 0;
                }
                if (!found) {
                    st = eng__err(err, BASE_ERR_MODEL,
                                  "%s: tensor '%s' is listed in %s but missing from %s", m->dir,
                                  key, "model.safetensors.index.json", json_string_value(val));
                    break;
                }
            }
        }
        json_decref(idx);
        if (st)
            return st;
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors", m->dir);
        if (access(path, F_OK) != 0)
            return eng__err(err, BASE_ERR_NOT_FOUND,
                            "%s: no model.safetensors or model.safetensors.index.json", m->dir);
        if ((st = eng__map_file(m, "model.safetensors", err)))
            return st;
    }
    qsort(m->tensors, (size_t)m->n_tensors, sizeof *m->tensors, eng__tensor_cmp);
    for (int i = 1; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i - 1].name, m->tensors[i].name) == 0)
            return eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s' appears in two shards", m->dir,
                            m->tensors[i].name);
    return BASE_OK;
}

static const eng__st_tensor *eng__find(const eng_model *m, const char *name) {
    eng__st_tensor key = {.name = (char *)name};
    return bsearch(&key, m->tensors, (size_t)m->n_tensors, sizeof key, eng__tensor_cmp);
}

/* Binds tensor `name` with expected shape (rows, cols) (rows = 0: 1-D of cols). */
static base_status eng__bind(eng_model *m, eng_tensor *out, const char *name, int64_t rows,
                             int64_t cols, bool optional, eng_error *err) {
    memset(out, 0, sizeof *out);
    const eng__st_tensor *t = eng__find(m, name);
    if (!t) {
        if (optional)
            return BASE_OK;
        return eng__err(err, BASE_ERR_MODEL, "%s: required tensor '%s' is missing", m->dir, name);
    }
    const char *file = m->files[t->file].path;
    bool ok = rows == 0 ? (t->ndim == 1 && t->shape[0] == cols)
                        : (t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols);
    if (!ok) {
        char got[128] = "";
        size_t o = 0;
        for (int d = 0; d < t->ndim && o < sizeof got - 24; d++)
            o += (size_t)snprintf(got + o, sizeof got - o, "%s%lld", d ? ", " : "",
                                  (long long)t->shape[d]);
        if (rows == 0)
            return eng__err(err, BASE_ERR_MODEL,
                            "%s: tensor '%s' has shape [%s], expected [%lld] from config.json",
                            file, name, got, (long long)cols);
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: tensor '%s' has shape [%s], expected [%lld, %lld] from config.json",
                        file, name, got, (long long)rows, (long long)cols);
    }
    if (t->dtype == ENG__ST_OTHER)
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: tensor '%s' has a dtype the engine cannot use (F32, F16, BF16 only)",
                        file, name);
    out->name = t->name;
    out->dtype = t->dtype == ENG__ST_F32 ? ENG_F32 : t->dtype == ENG__ST_F16 ? ENG_F16 : ENG_BF16;
    out->rows = rows == 0 ? 1 : rows;
    out->cols = cols;
    out->data = t->data;
    return BASE_OK;
}

static base_status eng__bind_weights(eng_model *m, eng_error *err) {
    const eng_model_info *in = &m->info;
    const int64_t d = in->d_model, hd = in->head_dim, qd = (int64_t)in->n_head * hd,
                  kvd = (int64_t)in->n_kv_head * hd, ff = in->d_ff, V = in->vocab_size;
    const bool llada = in->family == ENG_FAMILY_LLADA;
    m->layers = calloc((size_t)in->n_layer, sizeof *m->layers);
    if (!m->layers)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->w.info = &m->info;
    m->w.layers = m->layers;
    base_status st;
    char n[256];
#define ENG__BIND(dst, r, c, opt, ...)                                                             \
    do {                                                                                           \
        snprintf(n, sizeof n, __VA_ARGS__);                                                        \
        if ((st = eng__bind(m, dst, n, r, c, opt, err)))                                           \
            return st;                                                                             \
    } while (0)
    if (llada) {
        ENG__BIND(&m->w.embed, V, d, false, "model.transformer.wte.weight");
        ENG__BIND(&m->w.norm, 0, d, false, "model.transformer.ln_f.weight");
        if (!in->tied_head)
            ENG__BIND(&m->w.lm_head, V, d, false, "model.transformer.ff_out.weight");
    } else {
        ENG__BIND(&m->w.embed, V, d, false, "model.embed_tokens.weight");
        ENG__BIND(&m->w.norm, 0, d, false, "model.norm.weight");
        if (!in->tied_head)
            ENG__BIND(&m->w.lm_head, V, d, false, "lm_head.weight");
    }
    if (in->tied_head)
        m->w.lm_head = m->w.embed;
    for (int i = 0; i < in->n_layer; i++) {
        eng_layer_w *L = &m->layers[i];
        if (llada) {
            const char *p = "model.transformer.blocks";
            ENG__BIND(&L->attn_norm, 0, d, false, "%s.%d.attn_norm.weight", p, i);
            ENG__BIND(&L->ffn_norm, 0, d, false, "%s.%d.ff_norm.weight", p, i);
            ENG__BIND(&L->wq, qd, d, false, "%s.%d.q_proj.weight", p, i);
            ENG__BIND(&L->wk, kvd, d, false, "%s.%d.k_proj.weight", p, i);
            ENG__BIND(&L->wv, kvd, d, false, "%s.%d.v_proj.weight", p, i);
            ENG__BIND(&L->wo, d, qd, false, "%s.%d.attn_out.weight", p, i);
            ENG__BIND(&L->w_gate, ff, d, false, "%s.%d.ff_proj.weight", p, i);
            ENG__BIND(&L->w_up, ff, d, false, "%s.%d.up_proj.weight", p, i);
            ENG__BIND(&L->w_down, d, ff, false, "%s.%d.ff_out.weight", p, i);
            if (in->qkv_bias) {
                ENG__BIND(&L->bq, 0, qd, false, "%s.%d.q_proj.bias", p, i);
                ENG__BIND(&L->bk, 0, kvd, false, "%s.%d.k_proj.bias", p, i);
                ENG__BIND(&L->bv, 0, kvd, false, "%s.%d.v_proj.bias", p, i);
            }
        } else {
            const char *p = "model.layers";
            ENG__BIND(&L->attn_norm, 0, d, false, "%s.%d.input_layernorm.weight", p, i);
            ENG__BIND(&L->ffn_norm, 0, d, false, "%s.%d.post_attention_layernorm.weight", p, i);
            ENG__BIND(&L->wq, qd, d, false, "%s.%d.self_attn.q_proj.weight", p, i);
            ENG__BIND(&L->wk, kvd, d, false, "%s.%d.self_attn.k_proj.weight", p, i);
            ENG__BIND(&L->wv, kvd, d, false, "%s.%d.self_attn.v_proj.weight", p, i);
            ENG__BIND(&L->wo, d, qd, false, "%s.%d.self_attn.o_proj.weight", p, i);
            ENG__BIND(&L->w_gate, ff, d, false, "%s.%d.mlp.gate_proj.weight", p, i);
            ENG__BIND(&L->w_up, ff, d, false, "%s.%d.mlp.up_proj.weight", p, i);
            ENG__BIND(&L->w_down, d, ff, false, "%s.%d.mlp.down_proj.weight", p, i);
            ENG__BIND(&L->bq, 0, qd, false, "%s.%d.self_attn.q_proj.bias", p, i);
            ENG__BIND(&L->bk, 0, kvd, false, "%s.%d.self_attn.k_proj.bias", p, i);
            ENG__BIND(&L->bv, 0, kvd, false, "%s.%d.self_attn.v_proj.bias", p, i);
        }
    }
#undef ENG__BIND
    m->info.dtype = m->w.embed.dtype;
    uint64_t bytes = 0;
    for (int i = 0; i < m->n_tensors; i++)
        bytes += m->tensors[i].end - m->tensors[i].begin;
    m->info.weight_bytes = bytes;
    return BASE_OK;
}

/* Touches every page of every shard so that loading (not the first request)
 * pays for reading the file, reporting bytes done / total. */
static void eng__prefault(eng_model *m) {
    uint64_t total = 0, done = 0;
    for (int i = 0; i < m->n_files; i++)
        total += m->files[i].size;
    const size_t chunk = (size_t)64 << 20, page = 4096;
    volatile uint8_t sink = 0;
    for (int i = 0; i < m->n_files; i++) {
        eng__st_file *f = &m->files[i];
        if (!f->map)
            continue;
        madvise(f->map, f->size, MADV_WILLNEED);
        for (size_t off = 0; off < f->size; off += chunk) {
            size_t end = BASE_MIN(f->size, off + chunk);
            for (size_t p = off; p < end; p += page)
                sink ^= ((const uint8_t *)f->map)[p];
            done += end - off;
            if (m->opts.progress)
                m->opts.progress(m->opts.progress_ud, done, total);
        }
    }
    (void)sink;
    if (m->opts.progress && total == 0)
        m->opts.progress(m->opts.progress_ud, 0, 0);
}

/* ---- special ids -------------------------------------------------------------- */

static base_status eng__special_ids(eng_model *m, json_t *cfg, eng_error *err) {
    eng_model_info *in = &m->info;
    bool failed;
    json_t *gen = eng__json_file(m->dir, "generation_config.json", false, err, &failed);
    json_t *tcfg = eng__json_file(m->dir, "tokenizer_config.json", false, err, &failed);
    const eng_tokenizer *tok = m->tok;

    in->mask_id = -1;
    if (m->opts.mask_token >= 0)
        in->mask_id = m->opts.mask_token;
    if (in->mask_id < 0)
        in->mask_id = eng__cfg_id(cfg, "mask_token_id");
    static const char *mask_names[] = {"<|mask|>", "<M>", "<|mdm_mask|>"};
    for (size_t i = 0; in->mask_id < 0 && tok && i < BASE_ARRAY_LEN(mask_names); i++)
        in->mask_id = eng_token_special_id(tok, mask_names[i]);
    if (in->mask_id < 0)
        in->mask_id = eng__tokcfg_id(tcfg, tok, "mask_token");

    static const char *keys[3] = {"bos_token_id", "eos_token_id", "pad_token_id"};
    static const char *tkeys[3] = {"bos_token", "eos_token", "pad_token"};
    int32_t *dst[3] = {&in->bos_id, &in->eos_id, &in->pad_id};
    for (int k = 0; k < 3; k++) {
        int32_t id = eng__cfg_id(cfg, keys[k]);
        if (id < 0)
            id = eng__cfg_id(gen, keys[k]);
        if (id < 0)
            id = eng__tokcfg_id(tcfg, tok, tkeys[k]);
        *dst[k] = id;
    }
    in->expand_id = tok ? eng_token_special_id(tok, "<|expand|>") : -1;
    json_decref(gen);
    json_decref(tcfg);

    for (int k = 0; k < 3; k++)
        if (*dst[k] >= in->vocab_size)
            *dst[k] = -1;
    if (in->expand_id >= in->vocab_size)
        in->expand_id = -1;
    if (in->mask_id < 0) {
        if (in->family == ENG_FAMILY_OPEN_DCODER)
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: Qwen2ForCausalLM without a mask token is an autoregressive model, "
                            "not a diffusion model; infilld needs a masked-diffusion model (or "
                            "give --mask-token ID if this one was trained with a mask token)",
                            m->dir);
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: no mask token id (config.json mask_token_id or a <|mask|> / <M> / "
                        "<|mdm_mask|> added token)",
                        m->dir);
    }
    if (in->mask_id >= in->vocab_size)
        return eng__err(err, BASE_ERR_MODEL, "%s: mask token id %d is outside the vocabulary (%d)",
                        m->dir, in->mask_id, in->vocab_size);
    return BASE_OK;
}

/* ---- load ------------------------------------------------------------------------- */

eng_model *eng_model_load(const char *dir, const eng_load_opts *opts, eng_error *err) {
    eng_error local;
    if (!err)
        err = &local;
    err->status = BASE_OK;
    err->msg[0] = '\0';
    if (!dir) {
        eng__err(err, BASE_ERR_INVALID, "no model directory given");
        return NULL;
    }
    eng_model *m = calloc(1, sizeof *m);
    if (!m || !(m->dir = strdup(dir))) {
        free(m);
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (opts)
        m->opts = *opts;
    else
        eng_load_opts_default(&m->opts);
    size_t dl = strlen(m->dir);
    while (dl > 1 && m->dir[dl - 1] == '/')
        m->dir[--dl] = '\0';

    bool failed = false;
    char cpath[4096];
    snprintf(cpath, sizeof cpath, "%s/config.json", m->dir);
    json_t *cfg = eng__json_file(m->dir, "config.json", true, err, &failed);
    if (!cfg)
        goto fail;
    if (eng__parse_config(m, cfg, cpath, err))
        goto fail;
    if (eng__map_weights(m, err) || eng__bind_weights(m, err))
        goto fail;
    m->tok = eng_tokenizer_load(m->dir, err);
    if (!m->tok) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        eng__err(err, err->status ? err->status : BASE_ERR_MODEL, "%s: tokenizer: %s", m->dir, msg);
        goto fail;
    }
    if (eng__special_ids(m, cfg, err))
        goto fail;
    json_decref(cfg);
    cfg = NULL;
    eng__prefault(m);

    /* Backend: CUDA when asked or (AUTO) when it initialises, else the CPU. */
    const eng_backend_i *cuda = eng_backend_cuda_get();
    if (m->opts.device == ENG_DEVICE_CUDA && !cuda) {
        eng__err(err, BASE_ERR_UNSUPPORTED, "this infilld was built without CUDA");
        goto fail;
    }
    if (cuda && m->opts.device != ENG_DEVICE_CPU) {
        eng_error cerr = {0};
        m->be = cuda->init(&m->w, &m->opts, &cerr);
        if (m->be) {
            m->bi = cuda;
        } else if (m->opts.device == ENG_DEVICE_CUDA) {
            *err = cerr;
            goto fail;
        } else {
            BASE_LOGI(ENG__MOD, "CUDA backend unavailable (%s); using the CPU", cerr.msg);
        }
    }
    if (!m->be) {
        m->be = eng_backend_cpu.init(&m->w, &m->opts, err);
        if (!m->be)
            goto fail;
        m->bi = &eng_backend_cpu;
    }
    return m;
fail:
    json_decref(cfg);
    if (!err->status)
        err->status = BASE_ERR_MODEL;
    eng_model_free(m);
    return NULL;
}

void eng_model_free(eng_model *m) {
    if (!m)
        return;
    if (m->bi && m->be)
        m->bi->free(m->be);
    eng_tokenizer_free(m->tok);
    eng__st_tensors_free(m->tensors, m->n_tensors);
    for (int i = 0; i < m->n_files; i++) {
        if (m->files[i].map)
            munmap(m->files[i].map, m->files[i].size);
        free(m->files[i].path);
    }
    free(m->files);
    free(m->layers);
    free(m->arch);
    free(m->dir);
    free(m);
}

const eng_model_info *eng_model_get_info(const eng_model *m) { return &m->info; }
const char *eng_model_backend_name(const eng_model *m) { return m->bi->name; }
const char *eng_model_device_desc(const eng_model *m) { return m->bi->device_desc(m->be); }
const eng_tokenizer *eng_model_tokenizer(const eng_model *m) { return m->tok; }

/* ---- context, forward, step ----------------------------------------------------------- */

eng_ctx *eng_ctx_new(eng_model *m, int max_batch, int max_len, eng_error *err) {
    if (!m || max_batch <= 0 || max_len <= 0 || max_batch > 4096 ||
        max_len > m->info.max_context * 2 || (int64_t)max_batch * max_len > (1 << 24)) {
        eng__err(err, BASE_ERR_INVALID, "context of %d x %d tokens is out of range", max_batch,
                 max_len);
        return NULL;
    }
    eng_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    c->m = m;
    c->bc = m->bi->ctx_new(m->be, max_batch, max_len, err);
    if (!c->bc) {
        free(c);
        return NULL;
    }
    return c;
}

void eng_ctx_free(eng_ctx *c) {
    if (!c)
        return;
    c->m->bi->ctx_free(c->bc);
    free(c);
}

void eng_ctx_set_cancel(eng_ctx *c, const volatile int *flag) {
    if (c && c->m->bi->set_cancel)
        c->m->bi->set_cancel(c->bc, flag);
}

static base_status eng__check_batch(const eng_ctx *c, const eng_batch *b) {
    if (!b || b->n_seq <= 0 || b->len <= 0 || !b->tokens)
        return BASE_ERR_INVALID;
    const int V = c->m->info.vocab_size;
    for (int64_t i = 0; i < (int64_t)b->n_seq * b->len; i++)
        if (b->tokens[i] < 0 || b->tokens[i] >= V)
            return BASE_ERR_RANGE;
    return BASE_OK;
}

base_status eng_forward(eng_ctx *c, const eng_batch *batch, const int32_t *rows, int n_rows,
                        float *logits) {
    if (!c)
        return BASE_ERR_INVALID;
    base_status st = eng__check_batch(c, batch);
    if (st)
        return st;
    if (n_rows < 0 || (n_rows > 0 && (!rows || !logits)))
        return BASE_ERR_INVALID;
    for (int i = 0; i < n_rows; i++)
        if (rows[i] < 0 || rows[i] >= batch->n_seq * batch->len)
            return BASE_ERR_RANGE;
    return c->m->bi->forward(c->bc, batch, rows, n_rows, logits);
}

base_status eng_step(eng_ctx *c, const eng_batch *batch, const eng_step_req *req,
                     eng_row_result *out) {
    if (!c || !req)
        return BASE_ERR_INVALID;
    base_status st = eng__check_batch(c, batch);
    if (st)
        return st;
    if (req->n_pos < 0 || (req->n_pos > 0 && (!req->positions || !out)))
        return BASE_ERR_INVALID;
    const eng_sampling *s = &req->sampling;
    if (!(s->temperature >= 0) || !(s->top_p > 0 && s->top_p <= 1) || s->top_k < 0 ||
        s->n_bias < 0 || (s->n_bias > 0 && !s->bias))
        return BASE_ERR_INVALID;
    for (int i = 0; i < s->n_bias; i++)
        if (s->bias[i].id < 0 || s->bias[i].id >= c->m->info.vocab_size)
            return BASE_ERR_RANGE;
    const int len = batch->len;
    for (int i = 0; i < req->n_pos; i++) {
        int p = req->positions[i];
        if (p < 0 || p >= batch->n_seq * len)
            return BASE_ERR_RANGE;
        if (req->mode == ENG_STEP_WINDOW) {
            int col = p % len;
            int row = c->m->info.shift_logits && col > 0 ? col - 1 : col;
            if (row < req->win_start || row >= req->win_end)
                return BASE_ERR_INVALID;
        }
    }
    if (req->mode == ENG_STEP_WINDOW &&
        (req->win_start < 0 || req->win_end > len || req->win_start >= req->win_end))
        return BASE_ERR_INVALID;
    if (req->mode != ENG_STEP_FULL && req->mode != ENG_STEP_WINDOW)
        return BASE_ERR_INVALID;
    return c->m->bi->step(c->bc, batch, req, out);
}
