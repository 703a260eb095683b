/* `infilld infill` (one infill from text or ids) and `infilld complete` (one
 * completion of a file at a cursor, through the same pipeline as LSP). */
#define _POSIX_C_SOURCE 200809L
#include "infill.h"
#include "cli.h"
#include "provider.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ifl__parse_ids(const char *s, int32_t **out, int *n) {
    int cap = 16, k = 0;
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)cap);
    if (!ids)
        return -1;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > INT32_MAX) {
            free(ids);
            return -1;
        }
        if (k == cap) {
            cap *= 2;
            int32_t *g = realloc(ids, sizeof(int32_t) * (size_t)cap);
            if (!g) {
                free(ids);
                return -1;
            }
            ids = g;
        }
        ids[k++] = (int32_t)v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s) {
            free(ids);
            return -1;
        }
    }
    *out = ids;
    *n = k;
    return 0;
}

static json_t *ifl__timings_json(const ifl_timings *t, double load_ms) {
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "load", load_ms, "tokenize",
                     t->tokenize_ms, "span", t->span_ms, "diffuse", t->diffuse_ms, "forward",
                     t->step_ms, "detokenize", t->detok_ms, "postprocess", t->post_ms, "total",
                     t->total_ms);
}

static json_t *ifl__ids_json(const int32_t *ids, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_integer(ids[i]));
    return a;
}

/* The JSON "alg": the remasking algorithm's name, or "entropy_bound" for
 * DiffusionGemma, whose sampler is not one of them (a value added, the field
 * unchanged; fed back as the alg setting it falls back to the family's default,
 * the same sampler). */
static const char *ifl__alg_json(const ifl_text_res *r) {
    return r->eb.used ? "entropy_bound" : eng_alg_name(r->alg);
}

static void ifl__print_json(json_t *o) {
    char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (s)
        printf("%s\n", s);
    free(s);
    json_decref(o);
}

/* cost: measure the cost model at load (only a latency budget uses it). */
static ifl_model *ifl__open(const char *dir, const char *device, int threads, bool cost,
                            double *load_ms) {
    char def[4096];
    if (!dir) {
        if (!ifl_default_model_dir(def, sizeof def)) {
            fprintf(stderr, "infilld: no --model given and no embedded tiny model found next to "
                            "the binary (build the tiny_model target)\n");
            return NULL;
        }
        dir = def;
    }
    ifl_model_opts o;
    ifl_model_opts_default(&o);
    if (device && strcmp(device, "cpu") == 0)
        o.load.device = ENG_DEVICE_CPU;
    else if (device && strcmp(device, "cuda") == 0)
        o.load.device = ENG_DEVICE_CUDA;
    o.load.n_threads = threads;
    o.no_cost = !cost;
    eng_error err = {0};
    uint64_t t0 = base_now_ns();
    ifl_model *m = ifl_model_open(dir, &o, &err);
    *load_ms = base_ms_since(t0);
    if (!m)
        fprintf(stderr, "infilld: %s: %s\n", dir, err.msg[0] ? err.msg : "cannot load model");
    return m;
}

static const char IFL__INFILL_USAGE[] =
    "usage: infilld infill --model DIR (--prefix TEXT | --prefix-ids 1,2,3)\n"
    "                      (--suffix TEXT | --suffix-ids 4,5) --n N --steps S --alg ALG\n"
    "                      [--block B] [--temperature T] [--top-p P] [--top-k K]\n"
    "                      [--alg-temp A] [--eps E] [--threshold TAU] [--factor F]\n"
    "                      [--eos-penalty L] [--candidates C] [--mode exact|cached]\n"
    "                      [--refresh R] [--seed X] [--max-hole M] [--budget TOKENS]\n"
    "                      [--device auto|cpu|cuda] [--threads N] [--json]\n"
    "ALG: origin maskgit_plus topk_margin entropy low_confidence p2 threshold factor dreamon\n";

int dmn_cli_infill(int argc, char **argv) {
    const char *model = NULL, *device = NULL;
    ifl_text_req r;
    memset(&r, 0, sizeof r);
    eng_diff_params_default(&r.params);
    int32_t *pre_ids = NULL, *suf_ids = NULL;
    bool json = false, have_pre = false, have_suf = false;
    int threads = 0, rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        if (strcmp(k, "--json") == 0) {
            json = true;
            continue;
        }
        if (strcmp(k, "--help") == 0 || strcmp(k, "-h") == 0) {
            fputs(IFL__INFILL_USAGE, stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "infilld infill: %s needs a value\n%s", k, IFL__INFILL_USAGE);
            goto out;
        }
        const char *v = argv[++i];
        bool ok = true;
        if (strcmp(k, "--model") == 0)
            model = v;
        else if (strcmp(k, "--device") == 0)
            device = v;
        else if (strcmp(k, "--threads") == 0)
            threads = atoi(v);
        else if (strcmp(k, "--prefix") == 0) {
            r.prefix = v;
            r.prefix_len = strlen(v);
            have_pre = true;
        } else if (strcmp(k, "--suffix") == 0) {
            r.suffix = v;
            r.suffix_len = strlen(v);
            have_suf = true;
        } else if (strcmp(k, "--prefix-ids") == 0) {
            free(pre_ids);
            pre_ids = NULL;
            ok = ifl__parse_ids(v, &pre_ids, &r.n_prefix_ids) == 0;
            have_pre = true;
        } else if (strcmp(k, "--suffix-ids") == 0) {
            free(suf_ids);
            suf_ids = NULL;
            ok = ifl__parse_ids(v, &suf_ids, &r.n_suffix_ids) == 0;
            have_suf = true;
        } else if (strcmp(k, "--n") == 0)
            r.params.n_hole = atoi(v);
        else if (strcmp(k, "--steps") == 0)
            r.params.steps = atoi(v);
        else if (strcmp(k, "--alg") == 0)
            ok = eng_alg_parse(v, &r.params.alg);
        else if (strcmp(k, "--block") == 0)
            r.params.block = atoi(v);
        else if (strcmp(k, "--temperature") == 0)
            r.params.temperature = strtof(v, NULL);
        else if (strcmp(k, "--top-p") == 0)
            r.params.top_p = strtof(v, NULL);
        else if (strcmp(k, "--top-k") == 0)
            r.params.top_k = atoi(v);
        else if (strcmp(k, "--alg-temp") == 0)
            r.params.alg_temp = strtof(v, NULL);
        else if (strcmp(k, "--eps") == 0)
            r.params.eps = strtof(v, NULL);
        else if (strcmp(k, "--threshold") == 0)
            r.params.threshold = strtof(v, NULL);
        else if (strcmp(k, "--factor") == 0)
            r.params.factor = strtof(v, NULL);
        else if (strcmp(k, "--eos-penalty") == 0)
            r.params.eos_penalty = strtof(v, NULL);
        else if (strcmp(k, "--candidates") == 0)
            r.params.candidates = atoi(v);
        else if (strcmp(k, "--refresh") == 0)
            r.params.refresh = atoi(v);
        else if (strcmp(k, "--seed") == 0)
            r.params.seed = strtoull(v, NULL, 10);
        else if (strcmp(k, "--max-hole") == 0)
            r.params.dreamon_max_hole = atoi(v);
        else if (strcmp(k, "--budget") == 0)
            r.ctx_budget = atoi(v);
        else if (strcmp(k, "--mode") == 0) {
            if (strcmp(v, "exact") == 0)
                r.params.mode = ENG_CACHE_EXACT;
            else if (strcmp(v, "cached") == 0)
                r.params.mode = ENG_CACHE_CACHED;
            else
                ok = false;
        } else {
            fprintf(stderr, "infilld infill: unknown option %s\n%s", k, IFL__INFILL_USAGE);
            goto out;
        }
        if (!ok) {
            fprintf(stderr, "infilld infill: bad value for %s: %s\n", k, v);
            goto out;
        }
    }
    if (!have_pre || !have_suf || r.params.n_hole < 1 || r.params.candidates < 1 ||
        r.params.candidates > ENG_DIFF_MAX_CANDIDATES) {
        fputs(IFL__INFILL_USAGE, stderr);
        goto out;
    }
    r.prefix_ids = pre_ids;
    r.suffix_ids = suf_ids;
    if ((pre_ids == NULL) != (suf_ids == NULL)) {
        /* Mixed text and ids: ids win; the text side becomes empty ids. */
        if (!pre_ids)
            r.n_prefix_ids = 0;
        if (!suf_ids)
            r.n_suffix_ids = 0;
    }
    double load_ms = 0;
    rc = 1;
    ifl_model_opts mo;
    ifl_model_opts_default(&mo);
    ifl_model *m = ifl__open(model, device, threads, false, &load_ms);
    if (!m)
        goto out;
    ifl_text_res res;
    base_status st = ifl_infill_text(m, &r, NULL, &res);
    if (st != BASE_OK) {
        fprintf(stderr, "infilld infill: %s\n", base_status_str(st));
        ifl_model_close(m);
        goto out;
    }
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "tokens", ifl__ids_json(res.tokens, res.n_tokens));
        json_object_set_new(o, "text", json_stringn(res.cand[0].text, res.cand[0].len));
        json_object_set_new(o, "steps_run", json_integer(res.steps_run));
        json_object_set_new(o, "alg", json_string(ifl__alg_json(&res)));
        json_object_set_new(o, "forward_full", json_integer(res.n_forward_full));
        json_object_set_new(o, "forward_window", json_integer(res.n_forward_window));
        json_object_set_new(o, "prefix_tokens", json_integer(res.n_prefix_tokens));
        json_object_set_new(o, "suffix_tokens", json_integer(res.n_suffix_tokens));
        json_t *cands = json_array();
        for (int c = 0; c < res.n_cand; c++)
            json_array_append_new(
                cands, json_pack("{s:s%, s:f, s:i}", "text", res.cand[c].text, res.cand[c].len,
                                 "mean_conf", res.cand[c].mean_conf, "index", res.cand[c].index));
        json_object_set_new(o, "candidates", cands);
        json_object_set_new(o, "device", json_string(ifl_model_device(m)));
        json_object_set_new(o, "timings_ms", ifl__timings_json(&res.t, load_ms));
        ifl__print_json(o);
    } else {
        fwrite(res.cand[0].text, 1, res.cand[0].len, stdout);
        printf("\n-- %s, %d tokens, %d steps, %.1f ms (load %.1f ms, %s)\n", eng_alg_name(res.alg),
               res.n_tokens, res.steps_run, res.t.total_ms, load_ms, ifl_model_device(m));
    }
    ifl_text_res_free(&res);
    ifl_model_close(m);
    rc = 0;
out:
    free(pre_ids);
    free(suf_ids);
    return rc;
}

static const char IFL__COMPLETE_USAGE[] =
    "usage: infilld complete FILE --line L --col C [--json] [--explain] [--seed S]\n"
    "                        [--model DIR] [--candidates C] [--alg ALG] [--steps S]\n"
    "                        [--mode exact|cached] [--no-validate] [--device D] [--threads N]\n"
    "                        [--n TOKENS]   (hole size instead of the span's budget; no growth)\n"
    "                        [--time-budget MS] (latency budget: plan the request to it)\n"
    "                        [--eos-penalty L] (annealed EOS/pad penalty; default: the\n"
    "                        model's generation_config.json eos_penalty, else 0)\n"
    "                        [--grow restart|extend] (a grown hole starts again / keeps the\n"
    "                        last run's tokens; cached mode)\n"
    "                        [--dgemma-infill prompt|pin] (DiffusionGemma: FIM in the chat\n"
    "                        prompt, or the suffix pinned on the canvas after the hole)\n"
    "L and C are 1-based; C counts characters (code points) in the line.\n";

/* Byte offset of 1-based (line, col in code points); clamps col to the line end. */
static bool ifl__cursor(const char *text, size_t len, long line, long col, size_t *off) {
    if (line < 1 || col < 1)
        return false;
    size_t o = 0;
    for (long l = 1; l < line; l++) {
        const char *nl = memchr(text + o, '\n', len - o);
        if (!nl)
            return false;
        o = (size_t)(nl - text) + 1;
    }
    for (long c = 1; c < col && o < len && text[o] != '\n'; c++) {
        uint32_t cp;
        o += base_utf8_decode(text + o, len - o, &cp);
    }
    *off = o;
    return true;
}

int dmn_cli_complete(int argc, char **argv) {
    const char *file = NULL, *model = NULL, *device = NULL;
    long line = 0, col = 0;
    bool json = false, explain = false;
    int threads = 0;
    ifl_doc_req r;
    ifl_doc_req_default(&r);
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        if (strcmp(k, "--json") == 0) {
            json = true;
            continue;
        }
        if (strcmp(k, "--explain") == 0) {
            explain = true;
            continue;
        }
        if (strcmp(k, "--no-validate") == 0) {
            r.validate = 0;
            continue;
        }
        if (strcmp(k, "--help") == 0 || strcmp(k, "-h") == 0) {
            fputs(IFL__COMPLETE_USAGE, stdout);
            return 0;
        }
        if (k[0] != '-' && !file) {
            file = k;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "infilld complete: %s needs a value\n%s", k, IFL__COMPLETE_USAGE);
            return 2;
        }
        const char *v = argv[++i];
        bool ok = true;
        if (strcmp(k, "--line") == 0)
            line = strtol(v, NULL, 10);
        else if (strcmp(k, "--col") == 0)
            col = strtol(v, NULL, 10);
        else if (strcmp(k, "--seed") == 0) {
            r.has_seed = true;
            r.seed = strtoull(v, NULL, 10);
        } else if (strcmp(k, "--model") == 0)
            model = v;
        else if (strcmp(k, "--device") == 0)
            device = v;
        else if (strcmp(k, "--threads") == 0)
            threads = atoi(v);
        else if (strcmp(k, "--candidates") == 0)
            r.candidates = atoi(v);
        else if (strcmp(k, "--steps") == 0)
            r.steps = atoi(v);
        else if (strcmp(k, "--n") == 0)
            r.n_hole = atoi(v);
        else if (strcmp(k, "--eos-penalty") == 0)
            ok = (r.eos_penalty = strtof(v, NULL)) >= 0 && r.eos_penalty <= ENG_EOS_PENALTY_MAX;
        else if (strcmp(k, "--time-budget") == 0)
            ok = (r.time_budget_ms = atoi(v)) > 0;
        else if (strcmp(k, "--grow") == 0) {
            ok = strcmp(v, "extend") == 0 || strcmp(v, "restart") == 0;
            r.grow_extend = strcmp(v, "extend") == 0;
        } else if (strcmp(k, "--alg") == 0)
            ok = eng_alg_parse(v, &r.alg);
        else if (strcmp(k, "--dgemma-infill") == 0)
            ok = ifl_dg_infill_parse(v, &r.dg_infill);
        else if (strcmp(k, "--mode") == 0) {
            if (strcmp(v, "exact") == 0)
                r.mode = ENG_CACHE_EXACT;
            else if (strcmp(v, "cached") == 0)
                r.mode = ENG_CACHE_CACHED;
            else
                ok = false;
        } else {
            fprintf(stderr, "infilld complete: unknown option %s\n%s", k, IFL__COMPLETE_USAGE);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "infilld complete: bad value for %s: %s\n", k, v);
            return 2;
        }
    }
    if (!file || line < 1 || col < 1 || r.candidates < 1 ||
        r.candidates > ENG_DIFF_MAX_CANDIDATES) {
        fputs(IFL__COMPLETE_USAGE, stderr);
        return 2;
    }
    char *text = NULL;
    size_t len = 0;
    base_status st = base_read_file(file, &text, &len);
    if (st != BASE_OK) {
        fprintf(stderr, "infilld complete: %s: %s\n", file, base_status_str(st));
        return 1;
    }
    if (!ifl__cursor(text, len, line, col, &r.cursor)) {
        fprintf(stderr, "infilld complete: %s has no line %ld\n", file, line);
        free(text);
        return 1;
    }
    r.text = text;
    r.len = len;
    r.sel_start = r.sel_end = r.cursor;
    r.language = ifl_syntax_language(NULL, file);
    double load_ms = 0;
    ifl_model *m = ifl__open(model, device, threads, r.time_budget_ms > 0, &load_ms);
    if (!m) {
        free(text);
        return 1;
    }
    ifl_doc_res res;
    r.received_ns = base_now_ns(); /* the budget counts from here, after the load */
    st = ifl_complete_doc(m, &r, NULL, &res);
    if (st != BASE_OK) {
        fprintf(stderr, "infilld complete: %s\n", base_status_str(st));
        ifl_model_close(m);
        free(text);
        return 1;
    }
    /* No valid candidate (or none in the budget): null, as over LSP. */
    static const ifl_doc_item none = {NULL, 0, 0, 0, 0.0, false};
    const ifl_doc_item *best = res.n_items > 0 ? &res.items[0] : &none;
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "text",
                            best->text ? json_stringn(best->text, best->len) : json_null());
        json_object_set_new(o, "start", json_integer((json_int_t)best->start));
        json_object_set_new(o, "end", json_integer((json_int_t)best->end));
        json_object_set_new(o, "rejected", json_integer(res.n_rejected));
        json_object_set_new(o, "plan", dmn_plan_json(&res, res.raw.t.total_ms));
        json_t *items = json_array();
        for (int i = 0; i < res.n_items; i++)
            json_array_append_new(
                items, json_pack("{s:s%, s:I, s:I, s:f, s:b}", "text", res.items[i].text,
                                 res.items[i].len, "start", (json_int_t)res.items[i].start, "end",
                                 (json_int_t)res.items[i].end, "confidence",
                                 res.items[i].confidence, "valid", res.items[i].valid));
        json_object_set_new(o, "items", items);
        json_object_set_new(o, "span",
                            json_pack("{s:s, s:s, s:i, s:i, s:b, s:i}", "kind",
                                      ifl_span_kind_name(res.span.kind), "reason",
                                      res.span.reason ? res.span.reason : "", "n_tokens",
                                      res.span.n_tokens, "n_max", res.span.n_max, "multiline",
                                      res.span.multiline, "max_lines", res.span.max_lines));
        json_object_set_new(o, "hole",
                            json_pack("{s:i, s:i, s:i, s:i}", "runs", res.runs, "first",
                                      res.n_hole_first, "final", res.n_hole, "cap",
                                      res.n_hole_cap));
        json_object_set_new(o, "language", r.language ? json_string(r.language) : json_null());
        json_object_set_new(o, "tokens", ifl__ids_json(res.raw.tokens, res.raw.n_tokens));
        json_object_set_new(o, "alg", json_string(ifl__alg_json(&res.raw)));
        if (res.raw.eb.used)
            json_object_set_new(o, "dgemma_infill",
                                json_pack("{s:s, s:i, s:i}", "mode",
                                          ifl_dg_infill_name(res.raw.eb.infill), "hole_slots",
                                          res.raw.eb.n_hole_slots, "pinned", res.raw.eb.n_pinned));
        json_object_set_new(o, "steps_run", json_integer(res.raw.steps_run));
        json_object_set_new(o, "prefix_tokens", json_integer(res.raw.n_prefix_tokens));
        json_object_set_new(o, "suffix_tokens", json_integer(res.raw.n_suffix_tokens));
        json_object_set_new(o, "device", json_string(ifl_model_device(m)));
        json_object_set_new(o, "timings_ms", ifl__timings_json(&res.raw.t, load_ms));
        ifl__print_json(o);
    } else {
        if (explain) {
            printf("span: %s (%s), hole bytes [%zu, %zu), %d tokens (may grow to %d), %s, "
                   "language %s\n",
                   ifl_span_kind_name(res.span.kind), res.span.reason ? res.span.reason : "",
                   res.span.hole_start, res.span.hole_end, res.span.n_tokens, res.span.n_max,
                   res.span.multiline ? "multi-line" : "single line",
                   r.language ? r.language : "none");
            printf("hole: %d run(s), %d -> %d tokens (cap %d)%s\n", res.runs, res.n_hole_first,
                   res.n_hole, res.n_hole_cap,
                   res.n_hole < res.n_hole_cap ? "" : ", the cap was reached");
            printf("prompt: %d prefix tokens (%zu bytes cut), %d suffix tokens (%zu bytes cut)\n",
                   res.raw.n_prefix_tokens, res.raw.prefix_cut, res.raw.n_suffix_tokens,
                   res.raw.suffix_cut);
            const eng_model_info *mi = ifl_model_info(m);
            printf("weights: %s, types %s, resident %.1f MiB\n", mi->gguf ? "GGUF" : "safetensors",
                   mi->quant_types, (double)mi->resident_bytes / (1024.0 * 1024.0));
            printf("device: %s\n", ifl_model_device_desc(m));
            if (res.raw.eb.used)
                printf("sampler: entropy-bound (step cap %d, temperature %.2f -> %.2f, entropy "
                       "bound %.3g nats, stability %d, confidence %.3g, self-conditioning %s), "
                       "%d steps, %d candidate(s)\n",
                       res.raw.eb.max_steps, (double)res.raw.eb.t_max, (double)res.raw.eb.t_min,
                       (double)res.raw.eb.entropy_bound, res.raw.eb.stability,
                       (double)res.raw.eb.confidence, res.raw.eb.self_cond ? "on" : "off",
                       res.raw.steps_run, res.n_items);
            if (res.raw.eb.used && res.raw.eb.infill == IFL_DG_INFILL_PIN)
                printf("infill: suffix pinned on the canvas: %d hole slots, then %d suffix "
                       "tokens pinned\n",
                       res.raw.eb.n_hole_slots, res.raw.eb.n_pinned);
            else if (res.raw.eb.used)
                printf("infill: prompt-level FIM in the chat template\n");
            else
                printf("sampler: %s, %d steps (%d full + %d window forwards), %d candidate(s)\n",
                       eng_alg_name(res.raw.alg), res.raw.steps_run, res.raw.n_forward_full,
                       res.raw.n_forward_window, res.n_items);
            printf("timings: load %.1f ms, span %.2f ms, tokenize %.2f ms, diffuse %.1f ms "
                   "(forward %.1f ms), detokenize %.2f ms, post %.2f ms, total %.1f ms\n",
                   load_ms, res.raw.t.span_ms, res.raw.t.tokenize_ms, res.raw.t.diffuse_ms,
                   res.raw.t.step_ms, res.raw.t.detok_ms, res.raw.t.post_ms, res.raw.t.total_ms);
            const ifl_cost *c = ifl_model_cost(m);
            printf("cost model: %.4f ms/call + %.5f ms/row + %.3g ms/row/key + %.4f ms/position, "
                   "scale %.2f (%s)\n",
                   c->call_ms, c->row_ms, c->pair_ms, c->pos_ms, c->scale,
                   c->measured ? "measured at load" : "default");
            const ifl_plan *pl = &res.plan;
            if (pl->planned)
                printf("plan: budget %.0f ms (%.1f left at the first run): %s; context %d tokens, "
                       "%d candidate(s), hole %d (cap %d), step cap %d, full step %.2f ms, window "
                       "step %.2f ms, first run <= %.1f ms, growth %s%s\n",
                       pl->budget_ms, pl->left_ms, pl->why, pl->ctx_tokens, pl->candidates,
                       pl->n_hole, pl->n_cap, pl->max_steps, pl->full_ms, pl->window_ms, pl->run_ms,
                       pl->grow ? "predicted to fit" : "not predicted to fit",
                       res.grow_refused ? " (refused once)" : "");
            else
                printf("plan: no latency budget (--time-budget MS sets one)\n");
            if (res.n_rejected)
                printf("validation: %d candidate(s) rejected, not answered\n", res.n_rejected);
            printf("completion:%s\n", res.n_items ? "" : " null");
        }
        if (best->text)
            fwrite(best->text, 1, best->len, stdout);
        printf("\n-- %.1f ms for %d tokens in %d steps, %d run(s) (hole %d -> %d, cap %d) on %s "
               "(model load %.1f ms)\n",
               res.raw.t.total_ms, res.raw.n_tokens, res.raw.steps_run, res.runs, res.n_hole_first,
               res.n_hole, res.n_hole_cap, ifl_model_device(m), load_ms);
    }
    ifl_doc_res_free(&res);
    ifl_model_close(m);
    free(text);
    return 0;
}
