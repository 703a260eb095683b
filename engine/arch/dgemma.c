/* DiffusionGemma (DiffusionGemmaForBlockDiffusion, model_type diffusion_gemma):
 * config.json (root + text_config) -> eng_dg_info, the Hugging Face tensor
 * names bound (shared/design/DIFFUSIONGEMMA.md §2 and §5.1), special and stop
 * ids, the sampler defaults of generation_config.json. The backbone is stored
 * once under model.decoder.*; the encoder keeps only its layer scalars. The
 * vision tower is not loaded (text in, text out). */
#define _GNU_SOURCE
#include "arch/dgemma_impl.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG__MOD "engine"

bool eng__dg_is_config(void *cfgp) {
    json_t *cfg = cfgp;
    json_t *archs = json_object_get(cfg, "architectures");
    json_t *a0 = json_is_array(archs) ? json_array_get(archs, 0) : NULL;
    if (json_is_string(a0))
        return strcmp(json_string_value(a0), "DiffusionGemmaForBlockDiffusion") == 0;
    json_t *mt = json_object_get(cfg, "model_type");
    return json_is_string(mt) && strcmp(json_string_value(mt), "diffusion_gemma") == 0;
}

/* Integer field: 1 ok, 0 absent/null, -1 not an integer. */
static int dg_int(json_t *o, const char *k, long long *v) {
    json_t *j = json_object_get(o, k);
    if (!j || json_is_null(j))
        return 0;
    if (json_is_integer(j)) {
        *v = json_integer_value(j);
        return 1;
    }
    if (json_is_real(j) && json_real_value(j) == floor(json_real_value(j))) {
        *v = (long long)json_real_value(j);
        return 1;
    }
    return -1;
}

static base_status dg_dim(json_t *o, const char *path, const char *k, long long def, long long max,
                          int *out, eng_error *err) {
    long long v = def;
    int r = dg_int(o, k, &v);
    if (r < 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is not an integer", path, k);
    if (r == 0 && def <= 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: missing '%s'", path, k);
    if (v <= 0 || v > max)
        return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is %lld (1 to %lld)", path, k, v, max);
    *out = (int)v;
    return BASE_OK;
}

static bool dg_num(json_t *o, const char *k, double *v) {
    json_t *j = json_object_get(o, k);
    if (!json_is_number(j))
        return false;
    *v = json_number_value(j);
    return true;
}

/* RoPE of one layer kind from rope_parameters[kind]. */
static base_status dg_rope(json_t *tc, const char *kind, const char *path, float *theta,
                           float *partial, bool global, eng_error *err) {
    json_t *rp = json_object_get(tc, "rope_parameters");
    json_t *r = json_is_object(rp) ? json_object_get(rp, kind) : NULL;
    double th = global ? 1e6 : 1e4, pf = global ? 0.25 : 1.0;
    if (json_is_object(r)) {
        json_t *ty = json_object_get(r, "rope_type");
        const char *t = json_is_string(ty) ? json_string_value(ty) : "default";
        if (strcmp(t, "default") == 0)
            pf = 1.0;
        else if (strcmp(t, "proportional") != 0)
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: rope_parameters.%s.rope_type '%s' is not supported (default, "
                            "proportional)",
                            path, kind, t);
        dg_num(r, "rope_theta", &th);
        dg_num(r, "partial_rotary_factor", &pf);
        double f = 1.0;
        if (dg_num(r, "factor", &f) && f != 1.0)
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: rope_parameters.%s.factor %g is not supported", path, kind, f);
    } else if (!global) {
        dg_num(tc, "rope_theta", &th);
        pf = 1.0;
    }
    if (!(th > 0) || !isfinite(th) || !(pf > 0) || pf > 1)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: rope_parameters.%s: theta must be positive, partial_rotary_factor "
                        "in (0, 1]",
                        path, kind);
    *theta = (float)th;
    *partial = (float)pf;
    return BASE_OK;
}

/* The mask-model info the rest of the engine reads (doctor, --explain), from either
 * file format's hyper-parameters. */
static void dg_fill_info(eng_model_info *mi, const eng_dg_info *in) {
    mi->family = ENG_FAMILY_DIFFUSION_GEMMA;
    mi->n_layer = in->n_layer;
    mi->d_model = in->d_model;
    mi->n_head = in->n_head;
    mi->n_kv_head = in->n_kv_sliding;
    mi->head_dim = in->hd_sliding;
    mi->d_ff = in->d_ff;
    mi->vocab_size = in->vocab_size;
    mi->rope_theta = in->theta_sliding;
    mi->rms_eps = in->rms_eps;
    mi->shift_logits = false;
}

static base_status dg_config(eng__dg_model *dg, eng_model_info *mi, json_t *cfg, const char *path,
                             eng_error *err) {
    eng_dg_info *in = &dg->info;
    json_t *tc = json_object_get(cfg, "text_config");
    if (!json_is_object(tc))
        tc = cfg; /* a flat config */
    if (json_is_object(json_object_get(cfg, "vision_config")))
        BASE_LOGI(ENG__MOD, "%s: the vision tower is not loaded (infilld reads text only)", path);
    base_status st;
    if ((st = dg_dim(tc, path, "hidden_size", 0, 65536, &in->d_model, err)) ||
        (st = dg_dim(tc, path, "num_hidden_layers", 0, 1024, &in->n_layer, err)) ||
        (st = dg_dim(tc, path, "num_attention_heads", 0, 1024, &in->n_head, err)) ||
        (st = dg_dim(tc, path, "num_key_value_heads", in->n_head, 1024, &in->n_kv_sliding, err)) ||
        (st = dg_dim(tc, path, "num_global_key_value_heads", in->n_kv_sliding, 1024,
                     &in->n_kv_global, err)) ||
        (st = dg_dim(tc, path, "head_dim", 0, 2048, &in->hd_sliding, err)) ||
        (st = dg_dim(tc, path, "global_head_dim", in->hd_sliding, 2048, &in->hd_global, err)) ||
        (st = dg_dim(tc, path, "intermediate_size", 0, 1 << 20, &in->d_ff, err)) ||
        (st = dg_dim(tc, path, "vocab_size", 0, 1 << 22, &in->vocab_size, err)) ||
        (st = dg_dim(tc, path, "sliding_window", 1024, 1 << 24, &in->sliding_window, err)))
        return st;
    if (in->n_head % in->n_kv_sliding || in->n_head % in->n_kv_global)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: %d attention heads are not a multiple of the K/V heads (%d, %d)", path,
                        in->n_head, in->n_kv_sliding, in->n_kv_global);
    if (in->hd_sliding % 2 || in->hd_global % 2)
        return eng__err(err, BASE_ERR_MODEL, "%s: odd head dimension (RoPE needs pairs)", path);
    in->moe = json_is_true(json_object_get(tc, "enable_moe_block"));
    if (in->moe) {
        const char *ek = json_object_get(tc, "num_experts") ? "num_experts" : "num_local_experts";
        const char *kk =
            json_object_get(tc, "top_k_experts") ? "top_k_experts" : "num_experts_per_tok";
        if ((st = dg_dim(tc, path, ek, 0, 4096, &in->n_expert, err)) ||
            (st = dg_dim(tc, path, kk, 0, 4096, &in->top_k, err)) ||
            (st = dg_dim(tc, path, "moe_intermediate_size", 0, 1 << 20, &in->d_expert, err)))
            return st;
        if (in->top_k > in->n_expert)
            return eng__err(err, BASE_ERR_MODEL, "%s: top_k_experts %d > num_experts %d", path,
                            in->top_k, in->n_expert);
    }
    in->k_eq_v = json_is_true(json_object_get(tc, "attention_k_eq_v"));
    json_t *act = json_object_get(tc, "hidden_activation");
    if (json_is_string(act) && strcmp(json_string_value(act), "gelu_pytorch_tanh") != 0)
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: hidden_activation '%s' is not supported (gelu_pytorch_tanh)", path,
                        json_string_value(act));
    if ((st =
             dg_rope(tc, "sliding_attention", path, &in->theta_sliding, &(float){0}, false, err)) ||
        (st = dg_rope(tc, "full_attention", path, &in->theta_global, &in->partial_rotary, true,
                      err)))
        return st;
    double eps = 1e-6, cap = 0;
    if (dg_num(tc, "rms_norm_eps", &eps) && !(eps > 0 && eps < 1))
        return eng__err(err, BASE_ERR_MODEL, "%s: rms_norm_eps must be in (0, 1)", path);
    in->rms_eps = (float)eps;
    if (dg_num(tc, "final_logit_softcapping", &cap) && cap < 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: negative final_logit_softcapping", path);
    in->softcap = (float)cap;
    if (dg_num(tc, "attn_logit_softcapping", &cap) && cap > 0)
        return eng__err(err, BASE_ERR_UNSUPPORTED, "%s: attn_logit_softcapping is not supported",
                        path);
    in->embed_scale = sqrtf((float)in->d_model);
    if ((st = dg_dim(cfg, path, "canvas_length", 256, 65536, &in->canvas_len, err)))
        return st;

    /* Layer kinds: layer_types, else every sliding_window_pattern-th is global. */
    dg->is_global = calloc((size_t)in->n_layer, 1);
    if (!dg->is_global)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    json_t *lt = json_object_get(tc, "layer_types");
    if (json_is_array(lt)) {
        if ((int)json_array_size(lt) != in->n_layer)
            return eng__err(err, BASE_ERR_MODEL, "%s: layer_types has %zu entries for %d layers",
                            path, json_array_size(lt), in->n_layer);
        for (int i = 0; i < in->n_layer; i++) {
            json_t *t = json_array_get(lt, (size_t)i);
            const char *s = json_is_string(t) ? json_string_value(t) : "";
            if (strcmp(s, "full_attention") == 0)
                dg->is_global[i] = 1;
            else if (strcmp(s, "sliding_attention") != 0)
                return eng__err(err, BASE_ERR_MODEL, "%s: layer_types[%d] '%s' is unknown", path, i,
                                s);
        }
    } else {
        int pat = 6;
        if ((st = dg_dim(tc, path, "sliding_window_pattern", 6, 1024, &pat, err)))
            return st;
        for (int i = 0; i < in->n_layer; i++)
            dg->is_global[i] = (i + 1) % pat == 0;
    }
    if (!dg->is_global[in->n_layer - 1])
        return eng__err(err, BASE_ERR_MODEL, "%s: the last layer must be full attention", path);
    in->is_global = dg->is_global;

    dg_fill_info(mi, in);
    mi->tied_head = !json_is_false(json_object_get(tc, "tie_word_embeddings"));
    mi->qkv_bias = false;
    long long maxpos = 0;
    dg_int(tc, "max_position_embeddings", &maxpos);
    mi->max_context = (int)(maxpos > 0 && maxpos < 32768 ? maxpos : 32768);
    return BASE_OK;
}

/* The GGUF name (llama.cpp PR #24423's diffusion-gemma names, §5.2) of a
 * Hugging Face name; names it does not know are returned unchanged. */
static const char *dg_gg_name(const char *hf, char *buf, size_t len) {
    static const char *const top[][2] = {
        {"model.decoder.embed_tokens.weight", "token_embd.weight"},
        {"model.decoder.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
        {"model.decoder.self_conditioning.pre_norm.weight", "self_cond_pre_norm.weight"},
        {"model.decoder.self_conditioning.gate_proj.weight", "self_cond_gate.weight"},
        {"model.decoder.self_conditioning.up_proj.weight", "self_cond_up.weight"},
        {"model.decoder.self_conditioning.down_proj.weight", "self_cond_down.weight"},
    };
    static const char *const lay[][2] = {
        {"input_layernorm.weight", "attn_norm.weight"},
        {"self_attn.q_proj.weight", "attn_q.weight"},
        {"self_attn.k_proj.weight", "attn_k.weight"},
        {"self_attn.v_proj.weight", "attn_v.weight"},
        {"self_attn.o_proj.weight", "attn_output.weight"},
        {"self_attn.q_norm.weight", "attn_q_norm.weight"},
        {"self_attn.k_norm.weight", "attn_k_norm.weight"},
        {"post_attention_layernorm.weight", "post_attention_norm.weight"},
        {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
        {"mlp.gate_proj.weight", "ffn_gate.weight"},
        {"mlp.up_proj.weight", "ffn_up.weight"},
        {"mlp.down_proj.weight", "ffn_down.weight"},
        {"post_feedforward_layernorm_1.weight", "post_ffw_norm_1.weight"},
        {"router.proj.weight", "ffn_gate_inp.weight"},
        {"router.scale", "ffn_gate_inp.scale"},
        {"router.per_expert_scale", "ffn_down_exps.scale"},
        {"pre_feedforward_layernorm_2.weight", "pre_ffw_norm_2.weight"},
        {"experts.gate_up_proj", "ffn_gate_up_exps.weight"},
        {"experts.down_proj", "ffn_down_exps.weight"},
        {"post_feedforward_layernorm_2.weight", "post_ffw_norm_2.weight"},
        {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
        {"layer_scalar", "layer_output_scale.weight"},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(top); i++)
        if (strcmp(hf, top[i][0]) == 0)
            return top[i][1];
    const char *pre[2] = {"model.decoder.layers.", "model.encoder.language_model.layers."};
    for (int k = 0; k < 2; k++) {
        size_t pl = strlen(pre[k]);
        if (strncmp(hf, pre[k], pl) != 0)
            continue;
        char *end;
        long l = strtol(hf + pl, &end, 10);
        if (end == hf + pl || *end != '.')
            return hf;
        for (size_t i = 0; i < BASE_ARRAY_LEN(lay); i++)
            if (strcmp(end + 1, lay[i][0]) == 0) {
                snprintf(buf, len, "blk.%ld.%s%s", l, k ? "enc_" : "", lay[i][1]);
                return buf;
            }
    }
    return hf;
}

/* The tensor for a Hugging Face name in either layout; GGUF files from
 * either llama.cpp port are read through their aliases. */
static const char *dg_name(eng_model *m, const char *hf, char *buf, size_t len) {
    if (!m->info.gguf)
        return hf;
    const char *g = dg_gg_name(hf, buf, len);
    if (eng__find(m, g))
        return g;
    /* aliases: PR #24427's self_cond_norm; scalars without ".weight";
     * an older enc_layer_out_scale */
    static const char *const alias[][2] = {
        {"self_cond_pre_norm.weight", "self_cond_norm.weight"},
        {"layer_output_scale.weight", "layer_output_scale"},
        {"enc_layer_output_scale.weight", "enc_layer_output_scale"},
        {"enc_layer_output_scale.weight", "enc_layer_out_scale.weight"},
        {"enc_layer_output_scale.weight", "enc_layer_out_scale"},
    };
    static _Thread_local char abuf[256];
    for (size_t i = 0; i < BASE_ARRAY_LEN(alias); i++) {
        size_t gl = strlen(g), al = strlen(alias[i][0]);
        if (gl >= al && strcmp(g + gl - al, alias[i][0]) == 0) {
            snprintf(abuf, sizeof abuf, "%.*s%s", (int)(gl - al), g, alias[i][1]);
            if (eng__find(m, abuf))
                return abuf;
        }
    }
    return g;
}

/* A 3-D tensor [a, b, c] bound as [a*b, c]. GGUF files store the experts
 * quantised (Q4_K_M: Q4_K gate/up, Q6_K down); the block types are computed
 * with by the int8 kernels (cpu/dgemma_cpu.c), a row of c being whole blocks. */
static base_status dg_bind3_as(eng_model *m, eng_tensor *out, const char *name, int64_t a,
                               int64_t b, int64_t c, eng_error *err);
static base_status dg_bind3(eng_model *m, eng_tensor *out, const char *hf, int64_t a, int64_t b,
                            int64_t c, eng_error *err) {
    char nb[256];
    const char *name = dg_name(m, hf, nb, sizeof nb);
    return dg_bind3_as(m, out, name, a, b, c, err);
}

static base_status dg_bind3_as(eng_model *m, eng_tensor *out, const char *name, int64_t a,
                               int64_t b, int64_t c, eng_error *err) {
    const eng__st_tensor *t = eng__find(m, name);
    if (!t)
        return eng__err(err, BASE_ERR_MODEL, "%s: required tensor '%s' is missing", m->dir, name);
    if (t->ndim != 3 || t->shape[0] != a || t->shape[1] != b || t->shape[2] != c)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: tensor '%s' must have shape [%lld, %lld, %lld] from %s",
                        m->files[t->file].path, name, (long long)a, (long long)b, (long long)c,
                        m->info.gguf ? "the GGUF metadata" : "config.json");
    if (t->gg_type >= 0) {
        if (!eng__dtype_from_gg(t->gg_type, &out->dtype))
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: expert tensor '%s' has type %s, which infilld cannot compute "
                            "with (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K)",
                            m->files[t->file].path, name, eng__gg_type_name((uint32_t)t->gg_type));
        if (eng__dtype_is_block(out->dtype) && c % 32 != 0)
            return eng__err(err, BASE_ERR_MODEL,
                            "%s: expert tensor '%s' rows of %lld are not whole blocks",
                            m->files[t->file].path, name, (long long)c);
    } else if (t->dtype == ENG__ST_OTHER) {
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: tensor '%s' has a dtype the engine cannot use (F32, F16, BF16 only)",
                        m->files[t->file].path, name);
    } else {
        out->dtype = t->dtype == ENG__ST_F32   ? ENG_F32
                     : t->dtype == ENG__ST_F16 ? ENG_F16
                                               : ENG_BF16;
    }
    out->name = t->name;
    out->rows = a * b;
    out->cols = c;
    out->data = t->data;
    return BASE_OK;
}

static base_status dg_scalar(eng_model *m, const char *hf, float *out, eng_error *err) {
    eng_tensor t;
    char nb[256];
    const char *name = dg_name(m, hf, nb, sizeof nb);
    base_status st = eng__bind(m, &t, name, 0, 1, false, err);
    if (st)
        return st;
    eng__tensor_row_f32(&t, 0, 0, 1, out);
    if (!isfinite(*out))
        return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is not finite", m->dir, name);
    return BASE_OK;
}

static base_status dg_bind(eng_model *m, eng__dg_model *dg, eng_error *err) {
    const eng_dg_info *in = &dg->info;
    const int64_t d = in->d_model, V = in->vocab_size, ff = in->d_ff;
    base_status st;
    char n[256];
    char gn[256];
#define DG_BIND(dst, r, c, ...)                                                                    \
    do {                                                                                           \
        snprintf(n, sizeof n, __VA_ARGS__);                                                        \
        if ((st = eng__bind(m, dst, dg_name(m, n, gn, sizeof gn), r, c, false, err)))              \
            return st;                                                                             \
    } while (0)
    const char *p = "model.decoder";
    DG_BIND(&dg->embed, V, d, "%s.embed_tokens.weight", p);
    DG_BIND(&dg->final_norm, 0, d, "%s.norm.weight", p);
    if (m->info.tied_head)
        dg->lm_head = dg->embed;
    else
        DG_BIND(&dg->lm_head, V, d, "lm_head.weight");
    dg->info.self_cond = eng__find(m, dg_name(m, "model.decoder.self_conditioning.gate_proj.weight",
                                              gn, sizeof gn)) != NULL;
    if (dg->info.self_cond) {
        DG_BIND(&dg->sc_pre_norm, 0, d, "%s.self_conditioning.pre_norm.weight", p);
        DG_BIND(&dg->sc_gate, ff, d, "%s.self_conditioning.gate_proj.weight", p);
        DG_BIND(&dg->sc_up, ff, d, "%s.self_conditioning.up_proj.weight", p);
        DG_BIND(&dg->sc_down, d, ff, "%s.self_conditioning.down_proj.weight", p);
    }
    dg->layers = calloc((size_t)in->n_layer, sizeof *dg->layers);
    if (!dg->layers)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    for (int i = 0; i < in->n_layer; i++) {
        eng__dg_layer *L = &dg->layers[i];
        L->global = dg->is_global[i];
        L->n_kv = L->global ? in->n_kv_global : in->n_kv_sliding;
        L->hd = L->global ? in->hd_global : in->hd_sliding;
        const int64_t qd = (int64_t)in->n_head * L->hd, kvd = (int64_t)L->n_kv * L->hd;
        const char *lp = "model.decoder.layers";
        DG_BIND(&L->in_norm, 0, d, "%s.%d.input_layernorm.weight", lp, i);
        DG_BIND(&L->wq, qd, d, "%s.%d.self_attn.q_proj.weight", lp, i);
        DG_BIND(&L->wk, kvd, d, "%s.%d.self_attn.k_proj.weight", lp, i);
        snprintf(n, sizeof n, "%s.%d.self_attn.v_proj.weight", lp, i);
        if (m->info.gguf && L->global) /* GGUF: V = K on the global layers without attn_v */
            dg->info.k_eq_v = !eng__find(m, dg_name(m, n, gn, sizeof gn));
        if (!(L->global && dg->info.k_eq_v))
            DG_BIND(&L->wv, kvd, d, "%s.%d.self_attn.v_proj.weight", lp, i);
        DG_BIND(&L->wo, d, qd, "%s.%d.self_attn.o_proj.weight", lp, i);
        DG_BIND(&L->q_norm, 0, L->hd, "%s.%d.self_attn.q_norm.weight", lp, i);
        DG_BIND(&L->k_norm, 0, L->hd, "%s.%d.self_attn.k_norm.weight", lp, i);
        DG_BIND(&L->post_attn_norm, 0, d, "%s.%d.post_attention_layernorm.weight", lp, i);
        DG_BIND(&L->pre_ffn_norm, 0, d, "%s.%d.pre_feedforward_layernorm.weight", lp, i);
        DG_BIND(&L->w_gate, ff, d, "%s.%d.mlp.gate_proj.weight", lp, i);
        DG_BIND(&L->w_up, ff, d, "%s.%d.mlp.up_proj.weight", lp, i);
        DG_BIND(&L->w_down, d, ff, "%s.%d.mlp.down_proj.weight", lp, i);
        DG_BIND(&L->post_ffn_norm, 0, d, "%s.%d.post_feedforward_layernorm.weight", lp, i);
        if (in->moe) {
            const int64_t E = in->n_expert, F = in->d_expert;
            DG_BIND(&L->post_ffn_norm1, 0, d, "%s.%d.post_feedforward_layernorm_1.weight", lp, i);
            DG_BIND(&L->pre_ffn_norm2, 0, d, "%s.%d.pre_feedforward_layernorm_2.weight", lp, i);
            DG_BIND(&L->post_ffn_norm2, 0, d, "%s.%d.post_feedforward_layernorm_2.weight", lp, i);
            DG_BIND(&L->router_w, E, d, "%s.%d.router.proj.weight", lp, i);
            DG_BIND(&L->router_scale, 0, d, "%s.%d.router.scale", lp, i);
            DG_BIND(&L->per_expert_scale, 0, E, "%s.%d.router.per_expert_scale", lp, i);
            snprintf(n, sizeof n, "%s.%d.experts.gate_up_proj", lp, i);
            char sg[64], su[64];
            snprintf(sg, sizeof sg, "blk.%d.ffn_gate_exps.weight", i);
            snprintf(su, sizeof su, "blk.%d.ffn_up_exps.weight", i);
            if (m->info.gguf && !eng__find(m, dg_name(m, n, gn, sizeof gn)) && eng__find(m, sg)) {
                /* GGUF with the split ffn_gate_exps / ffn_up_exps, each [E, F, d] */
                if ((st = dg_bind3_as(m, &L->exp_gate_up, sg, E, F, d, err)) ||
                    (st = dg_bind3_as(m, &L->exp_up, su, E, F, d, err)))
                    return st;
            } else if ((st = dg_bind3(m, &L->exp_gate_up, n, E, 2 * F, d, err))) {
                return st;
            }
            snprintf(n, sizeof n, "%s.%d.experts.down_proj", lp, i);
            if ((st = dg_bind3(m, &L->exp_down, n, E, d, F, err)))
                return st;
        }
        snprintf(n, sizeof n, "%s.%d.layer_scalar", lp, i);
        if ((st = dg_scalar(m, n, &L->dec_scalar, err)))
            return st;
        snprintf(n, sizeof n, "model.encoder.language_model.layers.%d.layer_scalar", i);
        if ((st = dg_scalar(m, n, &L->enc_scalar, err)))
            return st;
    }
#undef DG_BIND
    /* Bytes of one expert, per layer: quantised files mix types by layer
     * (llama.cpp's Q4_K_M gives some layers' ffn_down_exps Q6_K). */
    for (int i = 0; in->moe && i < in->n_layer; i++) {
        eng__dg_layer *L = &dg->layers[i];
        const int64_t F = in->d_expert;
        L->expert_bytes = (L->exp_up.data ? eng__dtype_bytes(L->exp_gate_up.dtype, F * d) +
                                                eng__dtype_bytes(L->exp_up.dtype, F * d)
                                          : eng__dtype_bytes(L->exp_gate_up.dtype, 2 * F * d)) +
                          eng__dtype_bytes(L->exp_down.dtype, d * F);
        dg->expert_bytes_all += L->expert_bytes * (uint64_t)in->n_expert;
    }
    m->w.embed = dg->embed;
    m->w.norm = dg->final_norm;
    m->w.lm_head = dg->lm_head;
    m->info.dtype = dg->embed.dtype;
    uint64_t bytes = 0;
    for (int i = 0; i < m->n_tensors; i++)
        bytes += m->tensors[i].end - m->tensors[i].begin;
    m->info.weight_bytes = bytes;
    return BASE_OK;
}

/* A token id field (an integer or the first of an array), or -1. */
static int32_t dg_id(json_t *o, const char *k) {
    json_t *j = o ? json_object_get(o, k) : NULL;
    if (json_is_array(j))
        j = json_array_get(j, 0);
    return json_is_integer(j) && json_integer_value(j) >= 0 && json_integer_value(j) < INT32_MAX
               ? (int32_t)json_integer_value(j)
               : -1;
}

static void dg_add_stop(eng_dg_info *in, int32_t id) {
    if (id < 0 || id >= in->vocab_size || in->n_stop >= ENG_DG_MAX_STOP)
        return;
    for (int i = 0; i < in->n_stop; i++)
        if (in->stop_ids[i] == id)
            return;
    in->stop_ids[in->n_stop++] = id;
}

/* Special ids, stop ids and sampler defaults (after the tokenizer is loaded). */
static void dg_ids(eng_model *m, eng__dg_model *dg, json_t *cfg) {
    eng_dg_info *in = &dg->info;
    char p[4096];
    snprintf(p, sizeof p, "%s/generation_config.json", m->dir);
    json_t *gen = json_load_file(p, 0, NULL);
    if (!json_is_object(gen)) {
        json_decref(gen);
        gen = NULL;
    }
    json_t *tc = json_object_get(cfg, "text_config");
    int32_t *dst[3] = {&in->bos_id, &in->eos_id, &in->pad_id};
    static const char *keys[3] = {"bos_token_id", "eos_token_id", "pad_token_id"};
    static const int32_t def[3] = {2, 1, 0}; /* Gemma's */
    for (int k = 0; k < 3; k++) {
        int32_t id = dg_id(cfg, keys[k]);
        if (id < 0)
            id = dg_id(tc, keys[k]);
        if (id < 0)
            id = dg_id(gen, keys[k]);
        *dst[k] = id >= 0 && id < in->vocab_size ? id : def[k];
    }
    /* Stop ids: generation_config's eos list ([1, 106] as converted), plus
     * <turn|> and <|tool_response>, which the Gemma-4 parsers also end on. */
    json_t *ge = gen ? json_object_get(gen, "eos_token_id") : NULL;
    if (json_is_array(ge)) {
        for (size_t i = 0; i < json_array_size(ge); i++)
            if (json_is_integer(json_array_get(ge, i)))
                dg_add_stop(in, (int32_t)json_integer_value(json_array_get(ge, i)));
    }
    dg_add_stop(in, in->eos_id);
    if (m->tok) {
        dg_add_stop(in, eng_token_special_id(m->tok, "<turn|>"));
        dg_add_stop(in, eng_token_special_id(m->tok, "<|tool_response>"));
    }
    double v;
    long long iv;
    in->eb_max_steps = 48;
    in->eb_t_min = 0.4f;
    in->eb_t_max = 0.8f;
    in->eb_entropy_bound = 0.1f;
    in->eb_stability = 1;
    in->eb_confidence = 0.005f;
    if (gen) {
        if (dg_int(gen, "max_denoising_steps", &iv) == 1 && iv > 0 && iv < 100000)
            in->eb_max_steps = (int)iv;
        if (dg_num(gen, "t_min", &v) && v > 0)
            in->eb_t_min = (float)v;
        if (dg_num(gen, "t_max", &v) && v > 0)
            in->eb_t_max = (float)v;
        json_t *sc = json_object_get(gen, "sampler_config");
        if (json_is_object(sc) && dg_num(sc, "entropy_bound", &v) && v >= 0)
            in->eb_entropy_bound = (float)v;
        if (dg_int(gen, "stability_threshold", &iv) == 1 && iv >= 0 && iv < 100000)
            in->eb_stability = (int)iv;
        if (dg_num(gen, "confidence_threshold", &v) && v >= 0)
            in->eb_confidence = (float)v;
    }
    json_decref(gen);
    m->info.bos_id = in->bos_id;
    m->info.eos_id = in->eos_id;
    m->info.pad_id = in->pad_id;
    m->info.mask_id = -1; /* uniform-state model: no mask token */
    m->info.expand_id = -1;
}

/* The ids the tokenizer covers; embedding rows above them get no token. */
static void dg_token_ids(const eng_model *m, eng_dg_info *in, const char *path) {
    const size_t nt = eng_tokenizer_vocab_size(m->tok);
    in->n_token_ids = nt > 0 && nt < (size_t)in->vocab_size ? (int)nt : in->vocab_size;
    if (in->n_token_ids < in->vocab_size)
        BASE_LOGI(ENG__MOD,
                  "%s: %d of the embedding's %d rows have no token (the tokenizer has %d ids); "
                  "the sampler never draws them",
                  path, in->vocab_size - in->n_token_ids, in->vocab_size, in->n_token_ids);
}

base_status eng__dg_load_hf(eng_model *m, void *cfgp, const char *path, eng_error *err) {
    json_t *cfg = cfgp;
    eng__dg_model *dg = calloc(1, sizeof *dg);
    if (!dg)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->dg = dg;
    json_t *archs = json_object_get(cfg, "architectures");
    json_t *a0 = json_is_array(archs) ? json_array_get(archs, 0) : NULL;
    m->arch = strdup(json_is_string(a0) ? json_string_value(a0) : "diffusion_gemma");
    if (!m->arch)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->info.arch = m->arch;
    base_status st;
    if ((st = dg_config(dg, &m->info, cfg, path, err)) || (st = eng__map_weights(m, err)) ||
        (st = dg_bind(m, dg, err)))
        return st;
    m->tok = eng_tokenizer_load(m->dir, err);
    if (!m->tok) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return eng__err(err, err->status ? err->status : BASE_ERR_MODEL, "%s: tokenizer: %s",
                        m->dir, msg);
    }
    if (eng_tokenizer_vocab_size(m->tok) > (size_t)dg->info.vocab_size)
        return eng__err(err, BASE_ERR_MODEL, "%s: the tokenizer has %zu ids, the embedding %d rows",
                        m->dir, eng_tokenizer_vocab_size(m->tok), dg->info.vocab_size);
    dg_token_ids(m, &dg->info, m->dir);
    dg_ids(m, dg, cfg);
    snprintf(m->info.quant_types, sizeof m->info.quant_types, "%s",
             eng_dtype_name(dg->embed.dtype));
    return BASE_OK;
}

void eng__dg_free(eng__dg_model *dg) {
    if (!dg)
        return;
    free(dg->layers);
    free(dg->is_global);
    free(dg);
}

const eng_dg_info *eng_dg_get_info(const eng_model *m) { return m && m->dg ? &m->dg->info : NULL; }

/* ---- GGUF (llama.cpp PR #24423's diffusion-gemma layout, §5.2) ------------------ */

static base_status dg_gg_u(const eng_model *m, const char *key, long long def, long long max,
                           int *out, eng_error *err) {
    char k[128];
    snprintf(k, sizeof k, "diffusion-gemma.%s", key);
    uint64_t v = 0;
    bool bad = false;
    if (!eng__gg_get_u64(&m->gg[0], k, &v, &bad)) {
        if (bad || def < 0)
            return eng__err(err, BASE_ERR_MODEL, "%s: %s '%s'", m->files[0].path,
                            bad ? "unusable" : "missing", k);
        v = (uint64_t)def;
    }
    if (v > (uint64_t)max)
        return eng__err(err, BASE_ERR_MODEL, "%s: '%s' is %llu (at most %lld)", m->files[0].path, k,
                        (unsigned long long)v, max);
    *out = (int)v;
    return BASE_OK;
}

static double dg_gg_f(const eng_model *m, const char *key, double def) {
    double v = def;
    bool bad = false;
    eng__gg_get_f64(&m->gg[0], key, &v, &bad);
    return bad ? def : v;
}

/* Element i of an integer or bool array value, or -1. */
static long long dg_gg_elem(const eng__gg_kv *kv, uint64_t i) {
    if (!kv || kv->type != ENG__GV_ARR || i >= kv->count)
        return -1;
    const uint8_t *p = kv->arr;
    switch (kv->elem) {
    case ENG__GV_U8:
    case ENG__GV_I8:
    case ENG__GV_BOOL:
        return p[i];
    case ENG__GV_U32:
    case ENG__GV_I32: {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    default:
        return -1;
    }
}

base_status eng__dg_load_gguf(eng_model *m, eng_error *err) {
    const char *path = m->files[0].path;
    const eng__gg_file *g = &m->gg[0];
    eng__dg_model *dg = calloc(1, sizeof *dg);
    if (!dg)
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->dg = dg;
    if (!(m->arch = strdup("diffusion-gemma")))
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    m->info.arch = m->arch;
    m->info.gguf = true;
    eng_dg_info *in = &dg->info;
    base_status st;
    int ctx = 0, rope_swa = 0, rope_g = 0;
    if ((st = dg_gg_u(m, "block_count", -1, 1024, &in->n_layer, err)) ||
        (st = dg_gg_u(m, "embedding_length", -1, 65536, &in->d_model, err)) ||
        (st = dg_gg_u(m, "feed_forward_length", -1, 1 << 20, &in->d_ff, err)) ||
        (st = dg_gg_u(m, "attention.head_count", -1, 1024, &in->n_head, err)) ||
        (st = dg_gg_u(m, "attention.key_length", -1, 2048, &in->hd_global, err)) ||
        (st = dg_gg_u(m, "attention.key_length_swa", in->hd_global, 2048, &in->hd_sliding, err)) ||
        (st = dg_gg_u(m, "rope.dimension_count", in->hd_global, 2048, &rope_g, err)) ||
        (st = dg_gg_u(m, "rope.dimension_count_swa", in->hd_sliding, 2048, &rope_swa, err)) ||
        (st = dg_gg_u(m, "attention.sliding_window", 1024, 1 << 24, &in->sliding_window, err)) ||
        (st = dg_gg_u(m, "context_length", 32768, 1 << 24, &ctx, err)) ||
        (st = dg_gg_u(m, "expert_count", 0, 4096, &in->n_expert, err)) ||
        (st = dg_gg_u(m, "expert_used_count", 0, 4096, &in->top_k, err)) ||
        (st = dg_gg_u(m, "expert_feed_forward_length", 0, 1 << 20, &in->d_expert, err)))
        return st;
    if (in->n_layer < 1 || in->d_model < 1 || in->n_head < 1 || in->hd_global < 2 ||
        in->hd_sliding < 2 || in->hd_sliding % 2 || in->hd_global % 2 || in->sliding_window < 1)
        return eng__err(err, BASE_ERR_MODEL, "%s: a diffusion-gemma dimension is zero or odd",
                        path);
    if (rope_g != in->hd_global || rope_swa != in->hd_sliding)
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: rope.dimension_count must equal the key length (the partial "
                        "rotation is in rope_freqs)",
                        path);
    in->moe = in->n_expert > 0;
    if (in->moe && (in->top_k < 1 || in->top_k > in->n_expert || in->d_expert < 1))
        return eng__err(err, BASE_ERR_MODEL, "%s: expert_used_count / expert_feed_forward_length",
                        path);
    /* per-layer K/V heads and layer kinds */
    if (!(dg->is_global = calloc((size_t)in->n_layer, 1)))
        return eng__err(err, BASE_ERR_NOMEM, "out of memory");
    in->is_global = dg->is_global;
    const eng__gg_kv *kvh = eng__gg_get(g, "diffusion-gemma.attention.head_count_kv");
    const eng__gg_kv *pat = eng__gg_get(g, "diffusion-gemma.attention.sliding_window_pattern");
    int kv_s = 0, kv_g = 0;
    for (int i = 0; i < in->n_layer; i++) {
        long long p = pat ? dg_gg_elem(pat, (uint64_t)i) : ((i + 1) % 6 != 0);
        if (p < 0)
            return eng__err(err, BASE_ERR_MODEL,
                            "%s: attention.sliding_window_pattern must be a bool array of %d", path,
                            in->n_layer);
        dg->is_global[i] = !p;
        long long h = kvh && kvh->type == ENG__GV_ARR ? dg_gg_elem(kvh, (uint64_t)i) : -1;
        if (h < 0 && kvh && kvh->type != ENG__GV_ARR)
            h = (long long)kvh->u;
        if (h <= 0 || h > in->n_head || in->n_head % h)
            return eng__err(err, BASE_ERR_MODEL, "%s: attention.head_count_kv[%d] is unusable",
                            path, i);
        int *dst = dg->is_global[i] ? &kv_g : &kv_s;
        if (*dst && *dst != h)
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: K/V head counts differ among layers of one kind", path);
        *dst = (int)h;
    }
    if (!dg->is_global[in->n_layer - 1])
        return eng__err(err, BASE_ERR_MODEL, "%s: the last layer must be full attention", path);
    in->n_kv_sliding = kv_s ? kv_s : kv_g;
    in->n_kv_global = kv_g;
    in->theta_global = (float)dg_gg_f(m, "diffusion-gemma.rope.freq_base", 1e6);
    in->theta_sliding = (float)dg_gg_f(m, "diffusion-gemma.rope.freq_base_swa", 1e4);
    in->rms_eps = (float)dg_gg_f(m, "diffusion-gemma.attention.layer_norm_rms_epsilon", 1e-6);
    in->softcap = (float)dg_gg_f(m, "diffusion-gemma.final_logit_softcapping", 0.0);
    if (!(in->theta_global > 0) || !(in->theta_sliding > 0) || !(in->rms_eps > 0) ||
        !(in->rms_eps < 1) || in->softcap < 0)
        return eng__err(err, BASE_ERR_MODEL, "%s: rope bases, epsilon or softcap out of range",
                        path);
    uint64_t cl = 0;
    bool bad = false;
    if (!eng__gg_get_u64(g, "diffusion.canvas_length", &cl, &bad) || cl < 1 || cl > 65536)
        return eng__err(err, BASE_ERR_MODEL, "%s: 'diffusion.canvas_length' is required (1..65536)",
                        path);
    in->canvas_len = (int)cl;
    /* proportional RoPE: rope_freqs holds 1 for rotated pairs, 1e30 for the others */
    in->partial_rotary = 1.0f;
    const eng__st_tensor *rf = eng__find(m, "rope_freqs.weight");
    if (rf) {
        eng_tensor t;
        if ((st = eng__bind(m, &t, "rope_freqs.weight", 0, in->hd_global / 2, false, err)))
            return st;
        float *f = malloc(sizeof(float) * (size_t)(in->hd_global / 2));
        if (!f)
            return eng__err(err, BASE_ERR_NOMEM, "out of memory");
        eng__tensor_row_f32(&t, 0, 0, in->hd_global / 2, f);
        int rot = 0;
        while (rot < in->hd_global / 2 && f[rot] == 1.0f)
            rot++;
        bool ok = true;
        for (int i = rot; i < in->hd_global / 2; i++)
            ok &= f[i] >= 1e20f;
        free(f);
        if (!ok || rot == 0)
            return eng__err(err, BASE_ERR_UNSUPPORTED,
                            "%s: rope_freqs is not a proportional-RoPE mask (1s then 1e30s)", path);
        in->partial_rotary = (float)rot * 2.0f / (float)in->hd_global;
    }
    const eng__st_tensor *emb = eng__find(m, "token_embd.weight");
    if (!emb || emb->ndim != 2 || emb->shape[0] < 1 || emb->shape[0] > (1 << 22) ||
        emb->shape[1] != in->d_model)
        return eng__err(err, BASE_ERR_MODEL, "%s: missing or misshapen 'token_embd.weight'", path);
    in->vocab_size = (int)emb->shape[0];
    in->embed_scale = sqrtf((float)in->d_model);

    eng_model_info *mi = &m->info;
    dg_fill_info(mi, in);
    mi->tied_head = !eng__find(m, "output.weight");
    mi->max_context = BASE_MIN(ctx, 32768);
    if ((st = dg_bind(m, dg, err)))
        return st;
    if (!(m->tok = eng__gg_tok_new(g, path, in->vocab_size, err)))
        return err->status ? err->status : BASE_ERR_MODEL;
    dg_token_ids(m, in, path);
    /* special ids, stop ids, sampler defaults */
    static const char *keys[3] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                  "tokenizer.ggml.padding_token_id"};
    int32_t *dst[3] = {&in->bos_id, &in->eos_id, &in->pad_id};
    static const int32_t def[3] = {2, 1, 0};
    for (int k = 0; k < 3; k++) {
        uint64_t v;
        bad = false;
        *dst[k] = eng__gg_get_u64(g, keys[k], &v, &bad) && v < (uint64_t)in->vocab_size ? (int32_t)v
                                                                                        : def[k];
    }
    dg_add_stop(in, in->eos_id);
    dg_add_stop(in, eng_token_special_id(m->tok, "<turn|>"));
    dg_add_stop(in, eng_token_special_id(m->tok, "<|tool_response>"));
    in->eb_max_steps = 48;
    uint64_t v;
    bad = false;
    if (eng__gg_get_u64(g, "diffusion.eb_max_steps", &v, &bad) && v > 0 && v < 100000)
        in->eb_max_steps = (int)v;
    in->eb_t_min = (float)dg_gg_f(m, "diffusion.eb_t_min", 0.4);
    in->eb_t_max = (float)dg_gg_f(m, "diffusion.eb_t_max", 0.8);
    in->eb_entropy_bound = (float)dg_gg_f(m, "diffusion.eb_entropy_bound", 0.1);
    in->eb_stability = 1;
    bad = false;
    if (eng__gg_get_u64(g, "diffusion.eb_stability_threshold", &v, &bad) && v < 100000)
        in->eb_stability = (int)v;
    in->eb_confidence = (float)dg_gg_f(m, "diffusion.eb_confidence_threshold", 0.005);
    mi->bos_id = in->bos_id;
    mi->eos_id = in->eos_id;
    mi->pad_id = in->pad_id;
    mi->mask_id = -1;
    mi->expand_id = -1;
    snprintf(mi->quant_types, sizeof mi->quant_types, "%s", eng_dtype_name(dg->embed.dtype));
    return BASE_OK;
}

bool eng_dg_memory_info(const eng_model *m, eng_dg_memory *o) {
    memset(o, 0, sizeof *o);
    if (!m || !m->dg)
        return false;
    const eng__dg_model *dg = m->dg;
    const eng_dg_info *in = &dg->info;
    size_t tl = 0;
    uint64_t seen = 0; /* dtypes named in expert_types */
    for (int l = 0; l < in->n_layer; l++) {
        const eng__dg_layer *L = &dg->layers[l];
        const uint64_t kv = 2ull * (uint64_t)L->n_kv * (uint64_t)L->hd * sizeof(float);
        if (L->global) {
            o->n_global++;
            o->kv_token_global = kv;
        } else {
            o->n_sliding++;
            o->kv_token_sliding = kv;
        }
        o->kv_token += kv;
        if (!in->moe)
            continue;
        o->expert_bytes_all += L->expert_bytes * (uint64_t)in->n_expert;
        o->expert_bytes_token += L->expert_bytes * (uint64_t)in->top_k;
        o->expert_bytes_one = BASE_MAX(o->expert_bytes_one, L->expert_bytes);
        const eng_tensor *ts[3] = {&L->exp_gate_up, &L->exp_up, &L->exp_down};
        for (int k = 0; k < 3; k++) {
            if (!ts[k]->data)
                continue;
            const unsigned t = (unsigned)ts[k]->dtype;
            if (t < 64 && (seen >> t & 1))
                continue;
            seen |= t < 64 ? 1ull << t : 0;
            const char *nm = eng_dtype_name(ts[k]->dtype);
            tl += (size_t)snprintf(o->expert_types + tl, sizeof o->expert_types - tl, "%s%s",
                                   tl ? ", " : "", nm);
            tl = BASE_MIN(tl, sizeof o->expert_types - 1);
        }
    }
    const uint64_t w = m->info.weight_bytes;
    o->dense_bytes = w > o->expert_bytes_all ? w - o->expert_bytes_all : 0;
    return true;
}
