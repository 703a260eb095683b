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

#include "arch/dgemma_impl.h"
#include "tokenizer/tokenizer_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

bool eng__dtype_from_gg(int gg_type, eng_dtype *out) {
    static const struct {
        int gg;
        eng_dtype dt;
    } map[] = {{ENG__GG_F32, ENG_F32},   {ENG__GG_F16, ENG_F16},   {ENG__GG_BF16, ENG_BF16},
               {ENG__GG_Q8_0, ENG_Q8_0}, {ENG__GG_Q4_0, ENG_Q4_0}, {ENG__GG_Q4_K, ENG_Q4_K},
               {ENG__GG_Q5_K, ENG_Q5_K}, {ENG__GG_Q6_K, ENG_Q6_K}};
    for (size_t i = 0; i < BASE_ARRAY_LEN(map); i++)
        if (map[i].gg == gg_type) {
            *out = map[i].dt;
            return true;
        }
    return false;
}

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
    f->guard = -1;
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
    f->dev = (unsigned long)sb.st_dev;
    f->ino = (unsigned long)sb.st_ino;
    f->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    if (f->size > 0) {
        f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (f->map == MAP_FAILED) {
            f->map = NULL;
            close(fd);
            return eng__err(err, BASE_ERR_IO, "%s: mmap failed: %s", f->path, strerror(errno));
        }
        f->guard = eng__mapguard_add(f->map, f->size);
    }
    close(fd);
    return eng__st_parse(f->map ? f->map : (const uint8_t *)"", f->size, f->path, m->n_files - 1,
                         &m->tensors, &m->n_tensors, err);
}

static int eng__tensor_cmp(const void *a, const void *b) {
    return strcmp(((const eng__st_tensor *)a)->name, ((const eng__st_tensor *)b)->name);
}

base_status eng__map_weights(eng_model *m, eng_error *err) {
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

/* The llama.cpp (GGUF) name of a tensor given by its Hugging Face name in the
 * family's convention; unknown names are returned unchanged. */
static const char *eng__gg_tensor_name(eng_family fam, const char *hf, char *buf, size_t len) {
    static const char *const top[][2] = {
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
        {"model.transformer.wte.weight", "token_embd.weight"},
        {"model.transformer.ln_f.weight", "output_norm.weight"},
        {"model.transformer.ff_out.weight", "output.weight"},
    };
    static const char *const qwen[][2] = {
        {"input_layernorm.weight", "attn_norm.weight"},
        {"post_attention_layernorm.weight", "ffn_norm.weight"},
        {"self_attn.q_proj.weight", "attn_q.weight"},
        {"self_attn.k_proj.weight", "attn_k.weight"},
        {"self_attn.v_proj.weight", "attn_v.weight"},
        {"self_attn.q_proj.bias", "attn_q.bias"},
        {"self_attn.k_proj.bias", "attn_k.bias"},
        {"self_attn.v_proj.bias", "attn_v.bias"},
        {"self_attn.o_proj.weight", "attn_output.weight"},
        {"mlp.gate_proj.weight", "ffn_gate.weight"},
        {"mlp.up_proj.weight", "ffn_up.weight"},
        {"mlp.down_proj.weight", "ffn_down.weight"},
    };
    static const char *const olmo[][2] = {
        {"attn_norm.weight", "attn_norm.weight"},
        {"ff_norm.weight", "ffn_norm.weight"},
        {"q_proj.weight", "attn_q.weight"},
        {"k_proj.weight", "attn_k.weight"},
        {"v_proj.weight", "attn_v.weight"},
        {"q_proj.bias", "attn_q.bias"},
        {"k_proj.bias", "attn_k.bias"},
        {"v_proj.bias", "attn_v.bias"},
        {"attn_out.weight", "attn_output.weight"},
        {"ff_proj.weight", "ffn_gate.weight"},
        {"up_proj.weight", "ffn_up.weight"},
        {"ff_out.weight", "ffn_down.weight"},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(top); i++)
        if (strcmp(hf, top[i][0]) == 0)
            return top[i][1];
    const bool llada = fam == ENG_FAMILY_LLADA;
    const char *pre = llada ? "model.transformer.blocks." : "model.layers.";
    size_t pl = strlen(pre);
    if (strncmp(hf, pre, pl) != 0)
        return hf;
    char *end;
    long layer = strtol(hf + pl, &end, 10);
    if (end == hf + pl || *end != '.')
        return hf;
    const char *rest = end + 1;
    const char *const(*tab)[2] = llada ? olmo : qwen;
    const size_t n = llada ? BASE_ARRAY_LEN(olmo) : BASE_ARRAY_LEN(qwen);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rest, tab[i][0]) == 0) {
            snprintf(buf, len, "blk.%ld.%s", layer, tab[i][1]);
            return buf;
        }
    return hf;
}

const eng__st_tensor *eng__find(const eng_model *m, const char *name) {
    eng__st_tensor key = {.name = (char *)name};
    return bsearch(&key, m->tensors, (size_t)m->n_tensors, sizeof key, eng__tensor_cmp);
}

/* Binds tensor `name` with expected shape (rows, cols) (rows = 0: 1-D of cols). */
base_status eng__bind(eng_model *m, eng_tensor *out, const char *name, int64_t rows, int64_t cols,
                      bool optional, eng_error *err) {
    memset(out, 0, sizeof *out);
    char ggname[256];
    const char *src = m->info.gguf ? "the GGUF metadata" : "config.json";
    if (m->info.gguf)
        name = eng__gg_tensor_name(m->info.family, name, ggname, sizeof ggname);
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
                            "%s: tensor '%s' has shape [%s], expected [%lld] from %s", file, name,
                            got, (long long)cols, src);
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: tensor '%s' has shape [%s], expected [%lld, %lld] from %s", file, name,
                        got, (long long)rows, (long long)cols, src);
    }
    if (t->gg_type >= 0) {
        if (!eng__dtype_from_gg(t->gg_type, &out->dtype))
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: tensor '%s' has type %s, which infilld cannot compute with", file,
                            name, eng__gg_type_name((uint32_t)t->gg_type));
    } else if (t->dtype == ENG__ST_OTHER) {
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: tensor '%s' has a dtype the engine cannot use (F32, F16, BF16 only)",
                        file, name);
    } else {
        out->dtype = t->dtype == ENG__ST_F32   ? ENG_F32
                     : t->dtype == ENG__ST_F16 ? ENG_F16
                                               : ENG_BF16;
    }
    out->name = t->name;
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

/* ---- GGUF files ------------------------------------------------------------------ */

/* Maps one GGUF file (a full path) and parses its header into m->gg[]. */
static base_status eng__gg_map(eng_model *m, const char *path, eng_error *err) {
    eng__st_file *nf = realloc(m->files, (size_t)(m->n_files + 1) * sizeof *nf);
    if (!nf)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->files = nf;
    eng__gg_file *ng = realloc(m->gg, (size_t)(m->n_files + 1) * sizeof *ng);
    if (!ng)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->gg = ng;
    eng__st_file *f = &m->files[m->n_files];
    memset(f, 0, sizeof *f);
    memset(&m->gg[m->n_files], 0, sizeof m->gg[0]);
    if (!(f->path = strdup(path)))
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->n_files++;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return eng__err(err, errno == ENOENT ? BASE_ERR_NOT_FOUND : BASE_ERR_IO, "%s: %s", path,
                        strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return eng__err(err, BASE_ERR_IO, "%s: not a regular file", path);
    }
    f->size = (size_t)sb.st_size;
    if (f->size > 0) {
        f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (f->map == MAP_FAILED) {
            f->map = NULL;
            close(fd);
            return eng__err(err, BASE_ERR_IO, "%s: mmap failed: %s", path, strerror(errno));
        }
    }
    close(fd);
    return eng__gg_parse(f->map ? f->map : (const uint8_t *)"", f->size, path, m->n_files - 1,
                         &m->gg[m->n_files - 1], &m->tensors, &m->n_tensors, err);
}

/* True when path names a split file "PREFIX-0000K-of-0000N.gguf"; *plen is
 * the prefix length, *n the count. */
static bool eng__gg_split_name(const char *path, size_t *plen, int *k, int *n) {
    size_t l = strlen(path);
    const char *tail = "-00000-of-00000.gguf";
    size_t tl = strlen(tail);
    if (l < tl)
        return false;
    const char *t = path + l - tl;
    for (size_t i = 0; i < tl; i++)
        if (tail[i] == '0' ? !(t[i] >= '0' && t[i] <= '9') : t[i] != tail[i])
            return false;
    *k = atoi(t + 1);
    *n = atoi(t + 10);
    *plen = l - tl;
    return *k >= 1 && *n >= 1 && *k <= *n;
}

/* Maps the file (and, for a split file, every part in order). */
static base_status eng__gg_map_all(eng_model *m, const char *path, eng_error *err) {
    size_t plen;
    int k, n;
    base_status st;
    if (!eng__gg_split_name(path, &plen, &k, &n))
        return eng__gg_map(m, path, err);
    for (int i = 1; i <= n; i++) {
        char part[4096];
        snprintf(part, sizeof part, "%.*s-%05d-of-%05d.gguf", (int)plen, path, i, n);
        if ((st = eng__gg_map(m, part, err)))
            return st;
        uint64_t v;
        bool bad = false;
        if (eng__gg_get_u64(&m->gg[i - 1], "split.count", &v, &bad) && v != (uint64_t)n)
            return eng__err(err, BASE_ERR_MODEL, "%s: split.count is %llu but the name says %d",
                            part, (unsigned long long)v, n);
        if (eng__gg_get_u64(&m->gg[i - 1], "split.no", &v, &bad) && v != (uint64_t)(i - 1))
            return eng__err(err, BASE_ERR_MODEL, "%s: split.no is %llu, expected %d", part,
                            (unsigned long long)v, i - 1);
    }
    uint64_t total;
    bool bad = false;
    if (eng__gg_get_u64(&m->gg[0], "split.tensors.count", &total, &bad) &&
        total != (uint64_t)m->n_tensors)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: split.tensors.count is %llu but the %d parts hold %d tensors", path,
                        (unsigned long long)total, n, m->n_tensors);
    return BASE_OK;
}

/* A dimension key "{arch}.suffix": required unless def > 0, 1 <= v <= max. */
static base_status eng__gg_dim(const eng_model *m, const char *arch, const char *suffix, int def,
                               long long max, int *out, eng_error *err) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    uint64_t v = 0;
    bool bad = false;
    if (!eng__gg_get_u64(&m->gg[0], key, &v, &bad)) {
        if (bad)
            return eng__err(err, BASE_ERR_MODEL,
                            "%s: '%s' is not a non-negative integer (per-layer arrays are not "
                            "supported)",
                            m->files[0].path, key);
        if (def > 0) {
            *out = def;
            return BASE_OK;
        }
        return eng__err(err, BASE_ERR_MODEL, "%s: missing '%s'", m->files[0].path, key);
    }
    if (v == 0 || v > (uint64_t)max)
        return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is %llu (1 to %lld)", m->files[0].path, key,
                        (unsigned long long)v, max);
    *out = (int)v;
    return BASE_OK;
}

/* Family and hyper-parameters from general.architecture and the {arch}.* keys,
 * with the conventions of llama.cpp's converters (docs: MODELS.md section 5). */
static base_status eng__gg_config(eng_model *m, eng_error *err) {
    eng_model_info *in = &m->info;
    const eng__gg_file *g = &m->gg[0];
    const char *path = m->files[0].path;
    char arch[64];
    bool bad = false;
    if (!eng__gg_get_str(g, "general.architecture", arch, sizeof arch, &bad))
        return eng__err(err, BASE_ERR_MODEL, "%s: missing 'general.architecture'", path);
    if (strcmp(arch, "dream") == 0)
        in->family = ENG_FAMILY_DREAM;
    else if (strcmp(arch, "llada") == 0)
        in->family = ENG_FAMILY_LLADA;
    else
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: unsupported GGUF architecture '%s'; supported: dream (Dream, "
                        "Dream-Coder, DiffuCoder), llada (LLaDA)",
                        path, arch);
    if (!(m->arch = strdup(arch)))
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    in->arch = m->arch;
    in->gguf = true;
    base_status st;
    int ctx = 0;
    if ((st = eng__gg_dim(m, arch, "block_count", 0, 1024, &in->n_layer, err)) ||
        (st = eng__gg_dim(m, arch, "embedding_length", 0, 65536, &in->d_model, err)) ||
        (st = eng__gg_dim(m, arch, "feed_forward_length", 0, 1 << 20, &in->d_ff, err)) ||
        (st = eng__gg_dim(m, arch, "attention.head_count", 0, 1024, &in->n_head, err)) ||
        (st = eng__gg_dim(m, arch, "attention.head_count_kv", in->n_head, 1024, &in->n_kv_head,
                          err)) ||
        (st = eng__gg_dim(m, arch, "context_length", 4096, 1 << 24, &ctx, err)))
        return st;
    if (in->d_model % in->n_head)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: embedding_length %d is not divisible by the %d attention heads", path,
                        in->d_model, in->n_head);
    if ((st = eng__gg_dim(m, arch, "attention.key_length", in->d_model / in->n_head, 1024,
                          &in->head_dim, err)))
        return st;
    int rope_dim = 0;
    if ((st = eng__gg_dim(m, arch, "rope.dimension_count", in->head_dim, 1024, &rope_dim, err)))
        return st;
    if (rope_dim != in->head_dim)
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: RoPE over %d of %d head dimensions (partial rotary) is not supported",
                        path, rope_dim, in->head_dim);
    if (in->head_dim % 2)
        return eng__err(err, BASE_ERR_MODEL, "%s: head dimension %d is odd (RoPE needs pairs)",
                        path, in->head_dim);
    if (in->n_head % in->n_kv_head)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: head_count %d is not a multiple of head_count_kv %d", path, in->n_head,
                        in->n_kv_head);
    char key[128], sval[64];
    snprintf(key, sizeof key, "%s.rope.scaling.type", arch);
    if (eng__gg_get_str(g, key, sval, sizeof sval, &bad) && strcmp(sval, "none") != 0)
        return eng__err(err, BASE_ERR_UNSUPPORTED, "%s: rope scaling '%s' is not supported", path,
                        sval);
    double theta = 10000.0, eps = in->family == ENG_FAMILY_LLADA ? 1e-5 : 1e-6;
    bad = false;
    snprintf(key, sizeof key, "%s.rope.freq_base", arch);
    eng__gg_get_f64(g, key, &theta, &bad);
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", arch);
    eng__gg_get_f64(g, key, &eps, &bad);
    if (bad || !(theta > 0) || !isfinite(theta) || !(eps > 0) || !(eps < 1))
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: rope.freq_base must be positive and layer_norm_rms_epsilon in (0, 1)",
                        path);
    in->rope_theta = (float)theta;
    in->rms_eps = (float)eps;
    /* The vocabulary is the embedding's row count (the token list is padded to it). */
    const eng__st_tensor *emb = eng__find(m, "token_embd.weight");
    if (!emb || emb->ndim != 2)
        return eng__err(err, BASE_ERR_MODEL, "%s: missing 2-D tensor 'token_embd.weight'", path);
    if (emb->shape[0] <= 0 || emb->shape[0] > (1 << 22))
        return eng__err(err, BASE_ERR_MODEL, "%s: token_embd.weight has %lld rows", path,
                        (long long)emb->shape[0]);
    in->vocab_size = (int)emb->shape[0];
    int vs = 0;
    if ((st = eng__gg_dim(m, arch, "vocab_size", in->vocab_size, 1 << 22, &vs, err)))
        return st;
    if (vs != in->vocab_size)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: %s.vocab_size %d but token_embd.weight has %d rows", path, arch, vs,
                        in->vocab_size);
    in->tied_head = !eng__find(m, "output.weight");
    in->qkv_bias = in->family == ENG_FAMILY_DREAM || eng__find(m, "blk.0.attn_q.bias");
    /* Dream files do not write diffusion.shift_logits; LLaDA files write false. */
    bool shift = in->family == ENG_FAMILY_DREAM;
    bad = false;
    eng__gg_get_bool(g, "diffusion.shift_logits", &shift, &bad);
    if (bad)
        return eng__err(err, BASE_ERR_MODEL, "%s: diffusion.shift_logits is not a bool", path);
    in->shift_logits = shift;
    in->max_context = in->family == ENG_FAMILY_DREAM ? 2048 : BASE_MIN(ctx, 4096);
    return BASE_OK;
}

/* llama.cpp's LLaDA converter permutes the rows of Q and K within each head
 * (HF rotate-half order -> interleaved pairs, for its NORM RoPE): GGUF row
 * h*hd + 2i + j holds HF row h*hd + j*hd/2 + i. Rows are whole blocks in every
 * type, so a copy in HF order makes the forward pass that of the safetensors
 * model. */
static base_status eng__gg_unpermute(eng_model *m, eng_tensor *t, int n_head, eng_error *err) {
    if (!t->data)
        return BASE_OK;
    const int64_t hd = t->rows / n_head;
    const uint64_t rb = eng__dtype_bytes(t->dtype, t->cols);
    uint8_t *dst = malloc((size_t)(rb * (uint64_t)t->rows));
    void **no = realloc(m->owned, (size_t)(m->n_owned + 1) * sizeof *no);
    if (!dst || !no) {
        free(dst);
        if (no)
            m->owned = no;
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    }
    m->owned = no;
    m->owned[m->n_owned++] = dst;
    const uint8_t *src = t->data;
    for (int64_t h = 0; h < n_head; h++)
        for (int64_t j = 0; j < 2; j++)
            for (int64_t i = 0; i < hd / 2; i++)
                memcpy(dst + (size_t)(h * hd + j * hd / 2 + i) * rb,
                       src + (size_t)(h * hd + 2 * i + j) * rb, (size_t)rb);
    t->data = dst;
    return BASE_OK;
}

/* SentencePiece-style tokenizer.ggml.* (Gemma: "gemma4" with merges, "llama"
 * with scores only): tokens, scores, token_type, merges where present. */
static eng_tokenizer *eng__gg_tok_spm(const eng__gg_file *g, const char *path, const char *model,
                                      int vocab_size, eng_error *err) {
    const eng__gg_kv *tk = eng__gg_get(g, "tokenizer.ggml.tokens");
    const eng__gg_kv *ty = eng__gg_get(g, "tokenizer.ggml.token_type");
    const eng__gg_kv *sc = eng__gg_get(g, "tokenizer.ggml.scores");
    const eng__gg_kv *mg = eng__gg_get(g, "tokenizer.ggml.merges");
    if (!tk || tk->type != ENG__GV_ARR || tk->elem != ENG__GV_STR) {
        eng__err(err, BASE_ERR_MODEL, "%s: missing string array 'tokenizer.ggml.tokens'", path);
        return NULL;
    }
    if ((mg && (mg->type != ENG__GV_ARR || mg->elem != ENG__GV_STR)) ||
        (ty && (ty->type != ENG__GV_ARR || ty->elem != ENG__GV_I32 || ty->count != tk->count)) ||
        (sc && (sc->type != ENG__GV_ARR || sc->elem != ENG__GV_F32 || sc->count != tk->count))) {
        eng__err(err, BASE_ERR_MODEL,
                 "%s: tokenizer.ggml.merges must be strings, token_type i32 and scores f32 "
                 "arrays as long as the token list",
                 path);
        return NULL;
    }
    if (vocab_size > 0 && tk->count > (uint64_t)vocab_size) {
        eng__err(err, BASE_ERR_MODEL, "%s: %llu tokens but the embedding has %d rows", path,
                 (unsigned long long)tk->count, vocab_size);
        return NULL;
    }
    /* llama.cpp's default for SentencePiece files is a space prefix; Gemma's
     * converter writes false. */
    bool prefix = strcmp(model, "llama") == 0, bad = false;
    eng__gg_get_bool(g, "tokenizer.ggml.add_space_prefix", &prefix, &bad);
    if (bad) {
        eng__err(err, BASE_ERR_MODEL, "%s: 'tokenizer.ggml.add_space_prefix' is not a bool", path);
        return NULL;
    }
    size_t n = (size_t)tk->count;
    /* Packed little-endian elements may be unaligned: copied out. */
    int32_t *types = ty ? malloc((n ? n : 1) * sizeof *types) : NULL;
    float *scores = sc ? malloc((n ? n : 1) * sizeof *scores) : NULL;
    if ((ty && !types) || (sc && !scores)) {
        free(types);
        free(scores);
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (types)
        memcpy(types, ty->arr, n * sizeof *types);
    if (scores)
        memcpy(scores, sc->arr, n * sizeof *scores);
    eng_tokenizer *t =
        eng__tokenizer_from_gguf_spm(path, tk->strs, n, scores, types, mg ? mg->strs : NULL,
                                     mg ? (size_t)mg->count : 0, prefix, err);
    free(types);
    free(scores);
    return t;
}

/* The tokenizer of tokenizer.ggml.* (vocab_size: the embedding's rows, or 0). */
eng_tokenizer *eng__gg_tok_new(const eng__gg_file *g, const char *path, int vocab_size,
                               eng_error *err) {
    char model[32], pre[64] = "default";
    bool bad = false;
    if (!eng__gg_get_str(g, "tokenizer.ggml.model", model, sizeof model, &bad)) {
        eng__err(err, BASE_ERR_MODEL, "%s: missing 'tokenizer.ggml.model'", path);
        return NULL;
    }
    if (strcmp(model, "gemma4") == 0 || strcmp(model, "llama") == 0)
        return eng__gg_tok_spm(g, path, model, vocab_size, err);
    if (strcmp(model, "gpt2") != 0) {
        eng__err(err, BASE_ERR_UNSUPPORTED,
                 "%s: tokenizer.ggml.model '%s' (infilld reads byte-level BPE 'gpt2' and "
                 "SentencePiece-style 'gemma4' / 'llama')",
                 path, model);
        return NULL;
    }
    eng__gg_get_str(g, "tokenizer.ggml.pre", pre, sizeof pre, &bad);
    const eng__gg_kv *tk = eng__gg_get(g, "tokenizer.ggml.tokens");
    const eng__gg_kv *ty = eng__gg_get(g, "tokenizer.ggml.token_type");
    const eng__gg_kv *mg = eng__gg_get(g, "tokenizer.ggml.merges");
    if (!tk || tk->type != ENG__GV_ARR || tk->elem != ENG__GV_STR) {
        eng__err(err, BASE_ERR_MODEL, "%s: missing string array 'tokenizer.ggml.tokens'", path);
        return NULL;
    }
    if (!mg || mg->type != ENG__GV_ARR || mg->elem != ENG__GV_STR) {
        eng__err(err, BASE_ERR_MODEL, "%s: missing string array 'tokenizer.ggml.merges'", path);
        return NULL;
    }
    if (ty && (ty->type != ENG__GV_ARR || ty->elem != ENG__GV_I32 || ty->count != tk->count)) {
        eng__err(err, BASE_ERR_MODEL,
                 "%s: 'tokenizer.ggml.token_type' must be an i32 array as long as the token list",
                 path);
        return NULL;
    }
    if (vocab_size > 0 && tk->count > (uint64_t)vocab_size) {
        eng__err(err, BASE_ERR_MODEL, "%s: %llu tokens but the embedding has %d rows", path,
                 (unsigned long long)tk->count, vocab_size);
        return NULL;
    }
    int32_t *types = NULL;
    if (ty) {
        types = malloc((size_t)(ty->count ? ty->count : 1) * sizeof *types);
        if (!types) {
            eng__err(err, BASE_ERR_NOMEM, "out of memory");
            return NULL;
        }
        memcpy(types, ty->arr, (size_t)ty->count * sizeof *types);
    }
    eng_tokenizer *t = eng__tokenizer_from_gguf(path, pre, tk->strs, (size_t)tk->count, types,
                                                mg->strs, (size_t)mg->count, err);
    free(types);
    return t;
}

eng_tokenizer *eng__tokenizer_load_gguf(const char *path, eng_error *err) {
    eng_model *m = calloc(1, sizeof *m);
    if (!m || !(m->dir = strdup(path))) {
        free(m);
        eng__err(err, BASE_ERR_NOMEM, "out of memory");
        return NULL;
    }
    eng_tokenizer *t = NULL;
    if (eng__gg_map(m, path, err) == BASE_OK)
        t = eng__gg_tok_new(&m->gg[0], path, 0, err);
    eng_model_free(m);
    return t;
}

/* Special ids and the tokenizer from tokenizer.ggml.*. */
static base_status eng__gg_tokenizer(eng_model *m, eng_error *err) {
    const eng__gg_file *g = &m->gg[0];
    const char *path = m->files[0].path;
    bool bad = false;
    m->tok = eng__gg_tok_new(g, path, m->info.vocab_size, err);
    if (!m->tok)
        return err->status ? err->status : BASE_ERR_MODEL;

    eng_model_info *in = &m->info;
    static const char *keys[4] = {"tokenizer.ggml.mask_token_id", "tokenizer.ggml.bos_token_id",
                                  "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id"};
    int32_t *dst[4] = {&in->mask_id, &in->bos_id, &in->eos_id, &in->pad_id};
    for (int k = 0; k < 4; k++) {
        uint64_t v;
        bad = false;
        *dst[k] = -1;
        if (eng__gg_get_u64(g, keys[k], &v, &bad) && v < (uint64_t)in->vocab_size)
            *dst[k] = (int32_t)v;
        else if (bad)
            return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is not a token id", path, keys[k]);
    }
    /* A file may mark BOS but not use it; the prompt layout decides. */
    if (m->opts.mask_token >= 0)
        in->mask_id = m->opts.mask_token;
    static const char *mask_names[] = {"<|mask|>", "<M>", "<|mdm_mask|>"};
    for (size_t i = 0; in->mask_id < 0 && i < BASE_ARRAY_LEN(mask_names); i++)
        in->mask_id = eng_token_special_id(m->tok, mask_names[i]);
    if (in->mask_id < 0 || in->mask_id >= in->vocab_size)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: no mask token (tokenizer.ggml.mask_token_id or a <|mask|> / "
                        "<|mdm_mask|> token)",
                        path);
    in->expand_id = eng_token_special_id(m->tok, "<|expand|>");
    if (in->expand_id >= in->vocab_size)
        in->expand_id = -1;
    return BASE_OK;
}

/* The GGUF file that a directory holds (the first part of a split), or NULL. */
static char *eng__gg_in_dir(const char *dir) {
    char p[4096];
    snprintf(p, sizeof p, "%s/config.json", dir);
    if (access(p, F_OK) == 0)
        return NULL; /* a Hugging Face directory */
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char *best = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), pl;
        int k, n;
        if (l < 6 || strcmp(e->d_name + l - 5, ".gguf") != 0)
            continue;
        if (eng__gg_split_name(e->d_name, &pl, &k, &n) && k != 1)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (!best || strcmp(p, best) < 0) {
            free(best);
            best = strdup(p);
        }
    }
    closedir(d);
    return best;
}

/* Summary of the storage types for doctor / --explain. */
static void eng__quant_summary(eng_model *m) {
    bool seen[ENG_Q6_K + 1] = {0};
    const eng_tensor *all[] = {&m->w.embed, &m->w.lm_head, &m->w.norm};
    for (size_t i = 0; i < BASE_ARRAY_LEN(all); i++)
        if (all[i]->data)
            seen[all[i]->dtype] = true;
    for (int l = 0; l < m->info.n_layer; l++) {
        const eng_tensor *t = &m->layers[l].attn_norm;
        for (size_t k = 0; k < sizeof(eng_layer_w) / sizeof(eng_tensor); k++)
            if (t[k].data)
                seen[t[k].dtype] = true;
    }
    char *o = m->info.quant_types;
    size_t left = sizeof m->info.quant_types;
    o[0] = '\0';
    for (int t = ENG_Q6_K; t >= 0; t--)
        if (seen[t]) {
            int w = snprintf(o, left, "%s%s", o == m->info.quant_types ? "" : "+",
                             eng_dtype_name((eng_dtype)t));
            if (w < 0 || (size_t)w >= left)
                break;
            o += w, left -= (size_t)w;
        }
}

static base_status eng__gg_load(eng_model *m, const char *path, eng_error *err) {
    base_status st;
    if ((st = eng__gg_map_all(m, path, err)))
        return st;
    qsort(m->tensors, (size_t)m->n_tensors, sizeof *m->tensors, eng__tensor_cmp);
    for (int i = 1; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i - 1].name, m->tensors[i].name) == 0)
            return eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s' appears in two parts", path,
                            m->tensors[i].name);
    char ga[32];
    bool gbad = false;
    if (eng__gg_get_str(&m->gg[0], "general.architecture", ga, sizeof ga, &gbad) &&
        strcmp(ga, "diffusion-gemma") == 0)
        return eng__dg_load_gguf(m, err); /* arch/dgemma.c */
    if ((st = eng__gg_config(m, err)) || (st = eng__bind_weights(m, err)))
        return st;
    if (m->info.family == ENG_FAMILY_LLADA)
        for (int l = 0; l < m->info.n_layer; l++)
            if ((st = eng__gg_unpermute(m, &m->layers[l].wq, m->info.n_head, err)) ||
                (st = eng__gg_unpermute(m, &m->layers[l].wk, m->info.n_kv_head, err)))
                return st;
    return eng__gg_tokenizer(m, err);
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
    /* Dream-Coder's demos decode with an annealed EOS/pad penalty; a model
     * folder may name its own default (the request's eosPenalty overrides). */
    in->eos_penalty = 0.0f;
    json_t *ep = json_object_get(gen, "eos_penalty");
    if (ep && !json_is_null(ep)) {
        double v = json_is_number(ep) ? json_number_value(ep) : -1.0;
        if (!(v >= 0.0 && v <= ENG_EOS_PENALTY_MAX)) {
            json_decref(gen);
            json_decref(tcfg);
            return eng__err(err, BASE_ERR_MODEL,
                            "%s: generation_config.json eos_penalty must be a number in [0, 100]",
                            m->dir);
        }
        in->eos_penalty = (float)v;
    }
    /* More than one candidate for automatic requests: sampled at temperature
     * 0.6, ranked, the best valid one answered (a small model answers more
     * often so; docs/QUALITY.md). */
    in->candidates = 0;
    json_t *nc = json_object_get(gen, "candidates");
    if (nc && !json_is_null(nc)) {
        json_int_t v = json_is_integer(nc) ? json_integer_value(nc) : -1;
        if (v < 1 || v > ENG_DIFF_MAX_CANDIDATES) {
            json_decref(gen);
            json_decref(tcfg);
            return eng__err(err, BASE_ERR_MODEL,
                            "%s: generation_config.json candidates must be an integer in [1, %d]",
                            m->dir, ENG_DIFF_MAX_CANDIDATES);
        }
        in->candidates = (int)v;
    }
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
    json_t *cfg = NULL;
    struct stat sb;
    char *ggpath = NULL;
    if (stat(m->dir, &sb) == 0 && S_ISREG(sb.st_mode))
        ggpath = strdup(m->dir);
    else if (stat(m->dir, &sb) == 0 && S_ISDIR(sb.st_mode))
        ggpath = eng__gg_in_dir(m->dir);
    if (ggpath) {
        base_status gst = eng__gg_load(m, ggpath, err);
        free(ggpath);
        if (gst)
            goto fail;
        if (m->dg)
            goto dgemma;
        goto loaded;
    }
    char cpath[4096];
    snprintf(cpath, sizeof cpath, "%s/config.json", m->dir);
    cfg = eng__json_file(m->dir, "config.json", true, err, &failed);
    if (!cfg)
        goto fail;
    if (eng__dg_is_config(cfg)) {
        /* DiffusionGemma: its own config, names and backend (arch/dgemma.c). */
        if (eng__dg_load_hf(m, cfg, cpath, err))
            goto fail;
        json_decref(cfg);
        cfg = NULL;
    dgemma:
        m->info.resident_bytes = 0;
        for (int i = 0; i < m->n_files; i++)
            m->info.resident_bytes += m->files[i].size;
        eng__prefault(m);
        if (m->opts.device == ENG_DEVICE_CUDA) {
            eng__err(err, BASE_ERR_UNSUPPORTED,
                     "%s: DiffusionGemma runs on the CPU only in this version", m->dir);
            goto fail;
        }
        if (!(m->be = eng__dg_backend_new(m, err)))
            goto fail;
        m->bi = &eng__dg_backend;
        return m;
    }
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
loaded:
    eng__quant_summary(m);
    m->info.resident_bytes = 0;
    for (int i = 0; i < m->n_files; i++)
        m->info.resident_bytes += m->files[i].size;
    for (int l = 0; m->n_owned && l < m->info.n_layer; l++)
        m->info.resident_bytes +=
            eng__dtype_bytes(m->layers[l].wq.dtype, m->layers[l].wq.rows * m->layers[l].wq.cols) +
            eng__dtype_bytes(m->layers[l].wk.dtype, m->layers[l].wk.rows * m->layers[l].wk.cols);
    eng__prefault(m);

    /* Backend: CUDA when asked or (AUTO) when it initialises, else the CPU. */
    const eng_backend_i *cuda = eng_backend_cuda_get();
    if (m->opts.device == ENG_DEVICE_CUDA && !cuda) {
        eng__err(err, BASE_ERR_UNSUPPORTED, "this infilld was built without CUDA");
        goto fail;
    }
    /* Quantised blocks run on CUDA only when asked (--device cuda): the CUDA
     * quant kernels are compiled and host-checked (tests/engine/test_qblock.c)
     * but have not yet executed on a GPU, so AUTO keeps such files on the CPU. */
    bool blocks = false;
    for (int i = 0; i < m->n_tensors; i++)
        blocks |= m->tensors[i].gg_type >= 0 && m->tensors[i].dtype == ENG__ST_OTHER;
    if (cuda &&
        (m->opts.device == ENG_DEVICE_CUDA || (m->opts.device != ENG_DEVICE_CPU && !blocks))) {
        eng_error cerr = {0};
        m->be = cuda->init(&m->w, &m->opts, &cerr);
        if (m->be) {
            m->bi = cuda;
        } else if (m->opts.device == ENG_DEVICE_CUDA) {
            *err = cerr;
            goto fail;
        } else {
            /* Once per process: a reload on the same machine would only repeat it. */
            static atomic_bool said;
            if (!atomic_exchange(&said, true))
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
    for (int i = 0; m->gg && i < m->n_files; i++)
        eng__gg_file_deinit(&m->gg[i]);
    free(m->gg);
    for (int i = 0; i < m->n_owned; i++)
        free(m->owned[i]);
    free(m->owned);
    for (int i = 0; i < m->n_files; i++) {
        eng__mapguard_remove(m->files[i].guard);
        if (m->files[i].map)
            munmap(m->files[i].map, m->files[i].size);
        free(m->files[i].path);
    }
    free(m->files);
    eng__dg_free(m->dg);
    free(m->layers);
    free(m->arch);
    free(m->dir);
    free(m);
}

const char *eng_model_files_damaged(const eng_model *m) {
    for (int i = 0; m && i < m->n_files; i++) {
        const eng__st_file *f = &m->files[i];
        if (!f->map)
            continue;
        if (eng__mapguard_faults(f->guard) > 0)
            return f->path;
        /* Truncated but not read since: the same file, shorter. A file
         * deleted or replaced keeps the old one mapped, intact. */
        struct stat sb;
        if (stat(f->path, &sb) == 0 && (unsigned long)sb.st_dev == f->dev &&
            (unsigned long)sb.st_ino == f->ino &&
            ((size_t)sb.st_size < f->size ||
             (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec != f->mtime_ns))
            return f->path;
    }
    return NULL;
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

int eng_ctx_resumable(const eng_ctx *c) {
    return c && c->m->bi->resumable ? c->m->bi->resumable(c->bc) : 0;
}

void eng_ctx_set_layer_hook(eng_ctx *c, void (*fn)(void *ud, int layer), void *ud) {
    if (c && c->m->bi->set_layer_hook)
        c->m->bi->set_layer_hook(c->bc, fn, ud);
}

size_t eng_ctx_kv_row_floats(const eng_ctx *c) {
    const eng_model_info *in = &c->m->info;
    return (size_t)in->n_layer * 2 * (size_t)in->n_kv_head * (size_t)in->head_dim;
}

base_status eng_ctx_kv_export(eng_ctx *c, int n, float *out) {
    if (!c || n < 0 || (n > 0 && !out))
        return BASE_ERR_INVALID;
    if (!c->m->bi->kv_export)
        return BASE_ERR_UNSUPPORTED;
    return c->m->bi->kv_export(c->bc, n, out);
}

base_status eng_ctx_kv_row(eng_ctx *c, int layer, int b, int i, float *k, float *v) {
    if (!c || !k || !v || layer < 0 || layer >= c->m->info.n_layer)
        return BASE_ERR_INVALID;
    if (!c->m->bi->kv_row)
        return BASE_ERR_UNSUPPORTED;
    return c->m->bi->kv_row(c->bc, layer, b, i, k, v);
}

static base_status eng__check_batch(const eng_ctx *c, const eng_batch *b);

base_status eng_ctx_kv_import(eng_ctx *c, const eng_batch *batch, const float *saved,
                              const int32_t *src, int n_saved) {
    if (!c || !src || n_saved < 0 || (n_saved > 0 && !saved))
        return BASE_ERR_INVALID;
    base_status st = eng__check_batch(c, batch);
    if (st)
        return st;
    for (int i = 0; i < batch->len; i++)
        if (src[i] >= n_saved)
            return BASE_ERR_RANGE;
    if (batch->valid)
        for (int64_t i = 0; i < (int64_t)batch->n_seq * batch->len; i++)
            if (!batch->valid[i])
                return BASE_ERR_UNSUPPORTED;
    if (!c->m->bi->kv_import)
        return BASE_ERR_UNSUPPORTED;
    return c->m->bi->kv_import(c->bc, batch, saved, src, n_saved);
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
