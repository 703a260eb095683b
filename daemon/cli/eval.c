/* `infilld eval`: completion quality through the real pipeline (docs/QUALITY.md).
 *
 * Every task becomes the request an editor would send (the document is
 * prefix + suffix, the cursor between them) and runs through
 * ifl_complete_doc, exactly as `infilld complete` does: span, hole planning
 * and growth, sampler, validation, post-processing. The answer is the first
 * item, as the LSP answer shows it; no item or an empty one is a null answer
 * and counts as a miss everywhere. HumanEval problems then run their tests in
 * the sandbox (infill/eval_sandbox.c). One table row per model and set;
 * --model may repeat so that the baselines share the table. */
#define _POSIX_C_SOURCE 200809L
#include "eval.h"
#include "cli.h"
#include "infill.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef DMN_EVAL_DATA_DIR
#define DMN_EVAL_DATA_DIR ""
#endif
#ifndef DMN_EVAL_HELDOUT_DIR
#define DMN_EVAL_HELDOUT_DIR ""
#endif

static const char DMN__EVAL_USAGE[] =
    "usage: infilld eval --set NAME [--set NAME ...] [--model M ...] [--json] [--limit N]\n"
    "                    [--jobs J] [--alg ALG] [--steps S] [--mode exact|cached]\n"
    "                    [--max-steps S] [--time-budget MS] [--max-hole TOKENS] [--seed X]\n"
    "                    [--eos-penalty L] [--candidates C]\n"
    "                    [--no-validate] [--device auto|cpu|cuda] [--threads N]\n"
    "                    [--data DIR] [--heldout DIR] [--timeout SECONDS] [--python PATH]\n"
    "                    [--items FILE] [--dgemma-infill prompt|pin] [--context-cache K]\n"
    "NAME: humaneval-single | humaneval-multi | humaneval-random-light | humaneval-random\n"
    "      | heldout-LANG (DIR/LANG.jsonl) | a .jsonl or .jsonl.gz file\n"
    "M:    a model folder | tiny (the embedded default) | baseline:copy\n"
    "      (default: tiny). Each model gives one row per set.\n"
    "--items FILE writes one JSON line per task (answer, scores) for every row.\n"
    "--context-cache K: the context K/V kept between requests, as the contextCache\n"
    "      setting keeps it: each task is first requested as it stood K, K-1, ..., 1\n"
    "      keystrokes earlier (the prefix's last characters not yet typed), and its\n"
    "      scored request reuses what those kept.\n";

typedef struct dmn__eval_cfg {
    const char *device;
    int threads, jobs;
    size_t limit;
    ifl_doc_req base; /* sampler settings copied into every request */
    int time_budget_ms;
    int context_cache; /* > 0: keystrokes typed before the scored request */
    ifl_sandbox_opts sbx;
} dmn__eval_cfg;

typedef struct dmn__item {
    bool done, answered, exact, first, valid, eos, ran, kv_warm;
    int pass; /* -1: no tests */
    double sim, ms;
    int steps;
    ifl_sandbox_outcome outcome;
    char *answer;
    size_t answer_len;
    base_status status;
} dmn__item;

/* DiffusionGemma's entropy-bound sampler settings of a run (what `complete
 * --json`/--explain report; the mask-model families use alg only). */
typedef struct dmn__eb {
    bool used, self_cond;
    int max_steps, stability, infill;
    float t_min, t_max, bound, confidence;
} dmn__eb;

/* A float setting as the decimal it was written as (0.8, not 0.800000011920929). */
static double dmn__f6(float x) {
    char b[32];
    snprintf(b, sizeof b, "%.6g", (double)x);
    return strtod(b, NULL);
}

static json_t *dmn__eb_json(const dmn__eb *e) {
    if (!e->used)
        return json_null();
    return json_pack("{s:i, s:f, s:f, s:f, s:i, s:f, s:b, s:s}", "max_steps", e->max_steps, "t_max",
                     dmn__f6(e->t_max), "t_min", dmn__f6(e->t_min), "entropy_bound",
                     dmn__f6(e->bound), "stability", e->stability, "confidence",
                     dmn__f6(e->confidence), "self_cond", e->self_cond, "infill",
                     ifl_dg_infill_name((ifl_dg_infill)e->infill));
}

typedef struct dmn__run {
    const dmn__eval_cfg *cfg;
    const ifl_eval_set *set;
    const char *model_dir; /* NULL: the copy baseline */
    dmn__item *items;
    atomic_size_t next, done;
    atomic_int passes, exacts, errors;
    atomic_int open_failed;
    char alg[32];
    dmn__eb eb;
    pthread_mutex_t mu;
} dmn__run;

typedef struct dmn__worker {
    dmn__run *run;
    unsigned slot;
    pthread_t th;
} dmn__worker;

static ifl_model *dmn__eval_open(const dmn__eval_cfg *cfg, const char *dir) {
    ifl_model_opts o;
    ifl_model_opts_default(&o);
    if (cfg->device && strcmp(cfg->device, "cpu") == 0)
        o.load.device = ENG_DEVICE_CPU;
    else if (cfg->device && strcmp(cfg->device, "cuda") == 0)
        o.load.device = ENG_DEVICE_CUDA;
    o.load.n_threads = cfg->threads;
    eng_error err = {0};
    ifl_model *m = ifl_model_open(dir, &o, &err);
    if (!m)
        fprintf(stderr, "infilld eval: %s: %s\n", dir, err.msg[0] ? err.msg : "cannot load model");
    return m;
}

/* The requests of the keystrokes before the scored one (--context-cache K):
 * the same document with the prefix's last k characters not yet typed, for k
 * = K..1, under the scored request's key, so that its context K/V is kept the
 * way an editor's typing keeps it. Their answers are not scored. */
static void dmn__eval_typing(const dmn__run *run, ifl_model *m, const ifl_doc_req *scored,
                             const ifl_eval_task *t) {
    /* Character starts in the prefix's tail, for k characters back. */
    size_t back[64];
    int nb = 0;
    const int want = BASE_MIN(run->cfg->context_cache, (int)BASE_ARRAY_LEN(back));
    for (size_t e = t->prefix_len; e > 0 && nb < want;) {
        size_t b = e - 1;
        while (b > 0 && ((unsigned char)t->prefix[b] & 0xC0) == 0x80)
            b--;
        back[nb++] = b;
        e = b;
    }
    char *s = malloc(t->prefix_len + t->suffix_len + 1);
    if (!s)
        return;
    for (int k = nb - 1; k >= 0; k--) {
        const size_t pl = back[k];
        memcpy(s, t->prefix, pl);
        memcpy(s + pl, t->suffix, t->suffix_len);
        s[pl + t->suffix_len] = 0;
        ifl_doc_req r = *scored;
        r.text = s;
        r.len = pl + t->suffix_len;
        r.cursor = r.sel_start = r.sel_end = pl;
        if (run->cfg->time_budget_ms > 0)
            r.deadline_ns = base_now_ns() + (uint64_t)run->cfg->time_budget_ms * 1000000u;
        ifl_doc_res res;
        if (ifl_complete_doc(m, &r, NULL, &res) == BASE_OK)
            ifl_doc_res_free(&res);
    }
    free(s);
}

static void dmn__eval_task(dmn__run *run, ifl_model *m, unsigned slot, size_t i) {
    const ifl_eval_task *t = &run->set->tasks[i];
    dmn__item *it = &run->items[i];
    it->pass = t->test ? 0 : -1;
    ifl_doc_req r;
    char *text = NULL;
    it->status = ifl_eval_task_doc(t, &r, &text);
    if (it->status != BASE_OK)
        return;
    const ifl_doc_req *b = &run->cfg->base;
    r.alg = b->alg;
    r.steps = b->steps;
    r.mode = b->mode;
    r.max_steps = b->max_steps;
    r.max_hole = b->max_hole;
    r.validate = b->validate;
    r.candidates = b->candidates;
    r.has_seed = true;
    r.seed = b->seed;
    r.dg_infill = b->dg_infill;
    r.eos_penalty = b->eos_penalty;
    if (m && run->cfg->context_cache > 0) {
        r.doc_key = t->id;
        dmn__eval_typing(run, m, &r, t);
    }
    uint64_t t0 = base_now_ns();
    if (run->cfg->time_budget_ms > 0)
        r.deadline_ns = t0 + (uint64_t)run->cfg->time_budget_ms * 1000000u;
    ifl_doc_res res;
    it->status = m ? ifl_complete_doc(m, &r, NULL, &res) : ifl_eval_baseline_copy(&r, &res);
    it->ms = base_ms_since(t0);
    if (it->status != BASE_OK) {
        atomic_fetch_add(&run->errors, 1);
        free(text);
        return;
    }
    it->steps = res.raw.steps_run;
    it->kv_warm = res.raw.kv_why && strncmp(res.raw.kv_why, "warm", 4) == 0;
    if (m) {
        const eng_model_info *info = ifl_model_info(m);
        /* DiffusionGemma's hole ends with a pad the pipeline appends (the hole
         * never grows): only a stop id or pad inside the canvas counts */
        const int nt = res.raw.eb.used ? res.raw.n_tokens - 1 : res.raw.n_tokens;
        for (int k = 0; k < nt; k++)
            if (res.raw.tokens[k] == info->eos_id || res.raw.tokens[k] == info->pad_id)
                it->eos = true;
        pthread_mutex_lock(&run->mu);
        if (!run->alg[0]) {
            /* DiffusionGemma's sampler is not a remasking algorithm: its name
             * and settings, as `complete --json` reports them */
            const bool eb = res.raw.eb.used;
            snprintf(run->alg, sizeof run->alg, "%s",
                     eb ? "entropy_bound" : eng_alg_name(res.raw.alg));
            if (eb)
                run->eb = (dmn__eb){true,
                                    res.raw.eb.self_cond,
                                    res.raw.eb.max_steps,
                                    res.raw.eb.stability,
                                    (int)res.raw.eb.infill,
                                    res.raw.eb.t_min,
                                    res.raw.eb.t_max,
                                    res.raw.eb.entropy_bound,
                                    res.raw.eb.confidence};
        }
        pthread_mutex_unlock(&run->mu);
    }
    const ifl_doc_item *best = res.n_items > 0 ? &res.items[0] : NULL;
    it->answered = best && best->len > 0;
    if (it->answered) {
        it->answer = malloc(best->len + 1);
        if (it->answer) {
            memcpy(it->answer, best->text, best->len);
            it->answer[best->len] = 0;
            it->answer_len = best->len;
        }
        it->exact = ifl_eval_exact(best->text, best->len, t->middle, t->middle_len);
        it->sim = ifl_eval_edit_sim(best->text, best->len, t->middle, t->middle_len);
        it->first = ifl_eval_first_line(best->text, best->len, t->middle, t->middle_len);
        it->valid = ifl_syntax_validate_text(r.language, r.text, r.len, best->start, best->end,
                                             best->text, best->len) == BASE_OK;
    }
    if (t->test && it->answered) {
        size_t plen = 0;
        char *prog = ifl_eval_humaneval_program(t, best->text, best->len, &plen);
        ifl_sandbox_opts so = run->cfg->sbx;
        so.slot = slot;
        ifl_sandbox_result sr = {0};
        base_status st = prog ? ifl_sandbox_run(&so, prog, plen, &sr) : BASE_ERR_NOMEM;
        free(prog);
        if (st == BASE_OK) {
            it->ran = true;
            it->outcome = sr.outcome;
            it->pass = sr.outcome == IFL_SANDBOX_PASS;
        } else {
            it->status = st;
            atomic_fetch_add(&run->errors, 1);
            fprintf(stderr, "infilld eval: %s: sandbox: %s %s\n", t->id, base_status_str(st),
                    sr.output);
        }
    }
    if (it->pass > 0)
        atomic_fetch_add(&run->passes, 1);
    if (it->exact)
        atomic_fetch_add(&run->exacts, 1);
    ifl_doc_res_free(&res);
    free(text);
}

static void *dmn__eval_worker(void *arg) {
    dmn__worker *w = arg;
    dmn__run *run = w->run;
    ifl_model *m = NULL;
    if (run->model_dir) {
        m = dmn__eval_open(run->cfg, run->model_dir);
        if (!m) {
            atomic_store(&run->open_failed, 1);
            return NULL;
        }
    }
    for (;;) {
        size_t i = atomic_fetch_add(&run->next, 1);
        if (i >= run->set->n || atomic_load(&run->open_failed))
            break;
        dmn__eval_task(run, m, w->slot, i);
        run->items[i].done = true;
        atomic_fetch_add(&run->done, 1);
    }
    ifl_model_close(m);
    return NULL;
}

typedef struct dmn__row {
    const char *set, *model, *kind;
    char alg[32];
    dmn__eb eb;
    size_t n, answered, exact, first, valid, eos, tested, passed, errors, kv_warm;
    size_t timeouts, signals;
    double sim_sum, ms_sum;
    long steps_sum;
} dmn__row;

static void dmn__row_add(dmn__row *row, const dmn__item *it) {
    row->n++;
    row->answered += it->answered;
    row->exact += it->exact;
    row->first += it->first;
    row->valid += it->valid;
    row->eos += it->eos;
    row->kv_warm += it->kv_warm;
    row->sim_sum += it->sim;
    row->ms_sum += it->ms;
    row->steps_sum += it->steps;
    row->errors += it->status != BASE_OK;
    if (it->pass >= 0) {
        row->tested++;
        row->passed += it->pass > 0;
        row->timeouts += it->ran && it->outcome == IFL_SANDBOX_TIMEOUT;
        row->signals += it->ran && it->outcome == IFL_SANDBOX_SIGNAL;
    }
}

static double dmn__pct(size_t k, size_t n) { return n ? 100.0 * (double)k / (double)n : 0; }

/* The set's file: a known name, heldout-LANG, or a path. */
static bool dmn__set_path(const char *name, const char *data, const char *heldout, char *out,
                          size_t cap) {
    static const char *const he[][2] = {
        {"humaneval-single", "HumanEval-SingleLineInfilling.jsonl.gz"},
        {"humaneval-multi", "HumanEval-MultiLineInfilling.jsonl.gz"},
        {"humaneval-random-light", "HumanEval-RandomSpanInfillingLight.jsonl.gz"},
        {"humaneval-random", "HumanEval-RandomSpanInfilling.jsonl.gz"},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(he); i++)
        if (strcmp(name, he[i][0]) == 0)
            return (size_t)snprintf(out, cap, "%s/humaneval-infilling/%s", data, he[i][1]) < cap;
    if (strncmp(name, "heldout-", 8) == 0)
        return (size_t)snprintf(out, cap, "%s/%s.jsonl", heldout, name + 8) < cap;
    return (size_t)snprintf(out, cap, "%s", name) < cap;
}

static void dmn__machine(char *out, size_t cap) {
    char model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) {
                    c++;
                    while (*c == ' ')
                        c++;
                    c[strcspn(c, "\n")] = 0;
                    snprintf(model, sizeof model, "%s", c);
                }
                break;
            }
        fclose(f);
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(out, cap, "%s, %ld cores", model, n);
}

/* A JSON string of bytes a model wrote: invalid UTF-8 (a random model's
 * half characters) becomes U+FFFD, as base_utf8_decode reads it. */
static json_t *dmn__text_json(const char *s, size_t n) {
    if (base_utf8_valid(s, n))
        return json_stringn(s, n);
    base_buf b;
    base_buf_init(&b);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = base_utf8_decode(s + i, n - i, &cp);
        char enc[4];
        base_buf_append(&b, enc, base_utf8_encode(cp, enc));
        i += k;
    }
    json_t *j = json_stringn(b.data ? b.data : "", b.len);
    base_buf_deinit(&b);
    return j;
}

static json_t *dmn__item_json(const dmn__row *row, const ifl_eval_task *t, const dmn__item *it) {
    json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:b, s:f, s:b, s:b, s:b, s:f, s:i}", "set",
                          row->set, "model", row->model, "id", t->id, "answered", it->answered,
                          "exact", it->exact, "edit_sim", it->sim, "first_line", it->first, "valid",
                          it->valid, "eos", it->eos, "ms", it->ms, "steps", it->steps);
    json_object_set_new(o, "answer",
                        it->answer ? dmn__text_json(it->answer, it->answer_len) : json_null());
    json_object_set_new(o, "pass", it->pass < 0 ? json_null() : json_boolean(it->pass > 0));
    if (it->ran)
        json_object_set_new(o, "sandbox", json_string(ifl_sandbox_outcome_name(it->outcome)));
    if (it->status != BASE_OK)
        json_object_set_new(o, "error", json_string(base_status_str(it->status)));
    return o;
}

static json_t *dmn__row_json(const dmn__row *r, const dmn__eval_cfg *cfg) {
    json_t *o = json_object();
    json_object_set_new(o, "set", json_string(r->set));
    json_object_set_new(o, "model", json_string(r->model));
    json_object_set_new(o, "kind", json_string(r->kind));
    json_object_set_new(o, "sampler", r->alg[0] ? json_string(r->alg) : json_null());
    json_object_set_new(o, "sampler_settings", dmn__eb_json(&r->eb));
    bool model = strcmp(r->kind, "model") == 0;
    const char *mode = cfg->base.mode == ENG_CACHE_EXACT ? "exact" : "cached";
    json_object_set_new(o, "mode", model ? json_string(mode) : json_null());
    json_object_set_new(o, "steps", json_integer(cfg->base.steps));
    json_object_set_new(o, "max_steps", json_integer(cfg->base.max_steps));
    json_object_set_new(o, "time_budget_ms", json_integer(cfg->time_budget_ms));
    json_object_set_new(o, "max_hole", json_integer(cfg->base.max_hole));
    json_object_set_new(o, "candidates", json_integer(cfg->base.candidates));
    /* null: the model's own default (generation_config.json eos_penalty, else 0) */
    json_object_set_new(o, "eos_penalty",
                        cfg->base.eos_penalty >= 0 ? json_real(cfg->base.eos_penalty)
                                                   : json_null());
    /* --context-cache K: keystrokes before each scored request, and how
     * many scored requests reused the kept context ("warm") */
    json_object_set_new(o, "context_cache", json_integer(model ? cfg->context_cache : 0));
    json_object_set_new(o, "context_warm", json_integer(model ? (json_int_t)r->kv_warm : 0));
    json_object_set_new(o, "n", json_integer((json_int_t)r->n));
    json_object_set_new(o, "answered", json_real(dmn__pct(r->answered, r->n) / 100));
    json_object_set_new(o, "exact", json_real(dmn__pct(r->exact, r->n) / 100));
    json_object_set_new(o, "edit_sim", json_real(r->n ? r->sim_sum / (double)r->n : 0));
    json_object_set_new(o, "first_line", json_real(dmn__pct(r->first, r->n) / 100));
    json_object_set_new(o, "valid", json_real(dmn__pct(r->valid, r->n) / 100));
    json_object_set_new(o, "eos_ended",
                        strcmp(r->kind, "model") == 0 ? json_real(dmn__pct(r->eos, r->n) / 100)
                                                      : json_null());
    json_object_set_new(o, "pass_at_1",
                        r->tested ? json_real(dmn__pct(r->passed, r->tested) / 100) : json_null());
    json_object_set_new(o, "tested", json_integer((json_int_t)r->tested));
    json_object_set_new(o, "sandbox_timeouts", json_integer((json_int_t)r->timeouts));
    json_object_set_new(o, "sandbox_signals", json_integer((json_int_t)r->signals));
    json_object_set_new(o, "errors", json_integer((json_int_t)r->errors));
    json_object_set_new(o, "steps_per_task",
                        json_real(r->n ? (double)r->steps_sum / (double)r->n : 0));
    json_object_set_new(o, "ms_per_task", json_real(r->n ? r->ms_sum / (double)r->n : 0));
    return o;
}

/* Runs one (model, set) pair with cfg->jobs threads; progress on stderr. */
static bool dmn__eval_row(const dmn__eval_cfg *cfg, const char *set_name, const ifl_eval_set *set,
                          const char *model_name, const char *model_dir, dmn__row *row,
                          FILE *items_out) {
    dmn__run run;
    memset(&run, 0, sizeof run);
    run.cfg = cfg;
    run.set = set;
    run.model_dir = model_dir;
    run.items = calloc(set->n ? set->n : 1, sizeof *run.items);
    pthread_mutex_init(&run.mu, NULL);
    int jobs = cfg->jobs > 0 ? cfg->jobs : 1;
    dmn__worker *ws = calloc((size_t)jobs, sizeof *ws);
    if (!run.items || !ws) {
        free(run.items);
        free(ws);
        return false;
    }
    uint64_t t0 = base_now_ns();
    int started = 0;
    for (int j = 0; j < jobs; j++) {
        ws[j].run = &run;
        ws[j].slot = (unsigned)j;
        if (pthread_create(&ws[j].th, NULL, dmn__eval_worker, &ws[j]) == 0)
            started++;
        else
            break;
    }
    bool tty = isatty(2);
    double last = 0;
    while (started > 0 && atomic_load(&run.done) < set->n && !atomic_load(&run.open_failed)) {
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
        double el = base_ms_since(t0) / 1000;
        if (el - last < (tty ? 1.0 : 10.0))
            continue;
        last = el;
        size_t d = atomic_load(&run.done);
        double eta = d ? el / (double)d * (double)(set->n - d) : 0;
        fprintf(stderr, "%seval %s %s: %zu/%zu, exact %d, pass %d, %.0f s, eta %.0f s%s",
                tty ? "\r" : "", set_name, model_name, d, set->n, atomic_load(&run.exacts),
                atomic_load(&run.passes), el, eta, tty ? "   " : "\n");
    }
    for (int j = 0; j < started; j++)
        pthread_join(ws[j].th, NULL);
    bool ok = started > 0 && !atomic_load(&run.open_failed);
    memset(row, 0, sizeof *row);
    row->set = set_name;
    row->model = model_name;
    row->kind = model_dir ? "model" : "baseline";
    snprintf(row->alg, sizeof row->alg, "%s", model_dir ? run.alg : "copy");
    row->eb = run.eb;
    for (size_t i = 0; ok && i < set->n; i++) {
        dmn__row_add(row, &run.items[i]);
        if (items_out) {
            json_t *o = dmn__item_json(row, &set->tasks[i], &run.items[i]);
            char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
            if (s)
                fprintf(items_out, "%s\n", s);
            free(s);
            json_decref(o);
        }
    }
    fprintf(stderr, "%seval %s %s: %zu tasks in %.1f s\n", tty ? "\r" : "", set_name, model_name,
            set->n, base_ms_since(t0) / 1000);
    for (size_t i = 0; i < set->n; i++)
        free(run.items[i].answer);
    free(run.items);
    free(ws);
    pthread_mutex_destroy(&run.mu);
    return ok;
}

static void dmn__print_table(const dmn__row *rows, size_t n, const dmn__eval_cfg *cfg) {
    printf("| set | model | sampler | mode | steps | budget | n | pass@1 | exact | EOS-ended | "
           "edit sim | first line | valid | answered | steps/task | ms/task |\n");
    printf("|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < n; i++) {
        const dmn__row *r = &rows[i];
        bool model = strcmp(r->kind, "model") == 0;
        char steps[32], budget[64], pass[32], eos[32];
        snprintf(steps, sizeof steps, "%s", "-");
        if (model) {
            if (cfg->base.steps > 0)
                snprintf(steps, sizeof steps, "%d", cfg->base.steps);
            else
                snprintf(steps, sizeof steps, "default");
        }
        if (!model || (cfg->base.max_steps == 0 && cfg->time_budget_ms == 0))
            snprintf(budget, sizeof budget, "none");
        else if (cfg->time_budget_ms == 0)
            snprintf(budget, sizeof budget, "%d steps", cfg->base.max_steps);
        else if (cfg->base.max_steps == 0)
            snprintf(budget, sizeof budget, "%d ms", cfg->time_budget_ms);
        else
            snprintf(budget, sizeof budget, "%d steps, %d ms", cfg->base.max_steps,
                     cfg->time_budget_ms);
        if (r->tested)
            snprintf(pass, sizeof pass, "%.1f %%", dmn__pct(r->passed, r->tested));
        else
            snprintf(pass, sizeof pass, "-");
        if (model)
            snprintf(eos, sizeof eos, "%.1f %%", dmn__pct(r->eos, r->n));
        else
            snprintf(eos, sizeof eos, "-");
        printf("| %s | %s | %s | %s | %s | %s | %zu | %s | %.1f %% | %s | %.1f %% | %.1f %% | "
               "%.1f %% | %.1f %% | %.1f | %.1f |\n",
               r->set, r->model, r->alg[0] ? r->alg : "-",
               model ? (cfg->base.mode == ENG_CACHE_EXACT ? "exact" : "cached") : "-", steps,
               budget, r->n, pass, dmn__pct(r->exact, r->n), eos,
               r->n ? 100 * r->sim_sum / (double)r->n : 0, dmn__pct(r->first, r->n),
               dmn__pct(r->valid, r->n), dmn__pct(r->answered, r->n),
               r->n ? (double)r->steps_sum / (double)r->n : 0, r->n ? r->ms_sum / (double)r->n : 0);
    }
    for (size_t i = 0; i < n; i++) {
        const dmn__eb *e = &rows[i].eb;
        if (e->used)
            printf("\n%s on %s: entropy_bound (step cap %d, temperature %.2f -> %.2f, entropy "
                   "bound %.3g nats, stability %d, confidence %.3g, self-conditioning %s, infill "
                   "%s)\n",
                   rows[i].model, rows[i].set, e->max_steps, (double)e->t_max, (double)e->t_min,
                   (double)e->bound, e->stability, (double)e->confidence,
                   e->self_cond ? "on" : "off", ifl_dg_infill_name((ifl_dg_infill)e->infill));
    }
}

int dmn_cli_eval(int argc, char **argv) {
    const char *sets[16], *models[16], *items_path = NULL;
    size_t n_sets = 0, n_models = 0;
    const char *data = DMN_EVAL_DATA_DIR, *heldout = DMN_EVAL_HELDOUT_DIR;
    bool json = false;
    dmn__eval_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    ifl_doc_req_default(&cfg.base);
    ifl_sandbox_opts_default(&cfg.sbx);
    cfg.jobs = 1;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        if (strcmp(k, "--json") == 0) {
            json = true;
            continue;
        }
        if (strcmp(k, "--no-validate") == 0) {
            cfg.base.validate = 0;
            continue;
        }
        if (strcmp(k, "--help") == 0 || strcmp(k, "-h") == 0) {
            fputs(DMN__EVAL_USAGE, stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "infilld eval: %s needs a value\n%s", k, DMN__EVAL_USAGE);
            return 2;
        }
        const char *v = argv[++i];
        bool ok = true;
        if (strcmp(k, "--set") == 0) {
            ok = n_sets < BASE_ARRAY_LEN(sets);
            if (ok)
                sets[n_sets++] = v;
        } else if (strcmp(k, "--model") == 0) {
            ok = n_models < BASE_ARRAY_LEN(models);
            if (ok)
                models[n_models++] = v;
        } else if (strcmp(k, "--data") == 0)
            data = v;
        else if (strcmp(k, "--heldout") == 0)
            heldout = v;
        else if (strcmp(k, "--items") == 0)
            items_path = v;
        else if (strcmp(k, "--limit") == 0)
            cfg.limit = strtoull(v, NULL, 10);
        else if (strcmp(k, "--jobs") == 0)
            ok = (cfg.jobs = atoi(v)) >= 1 && cfg.jobs <= 64;
        else if (strcmp(k, "--device") == 0)
            cfg.device = v;
        else if (strcmp(k, "--threads") == 0)
            cfg.threads = atoi(v);
        else if (strcmp(k, "--alg") == 0)
            ok = eng_alg_parse(v, &cfg.base.alg);
        else if (strcmp(k, "--dgemma-infill") == 0)
            ok = ifl_dg_infill_parse(v, &cfg.base.dg_infill);
        else if (strcmp(k, "--steps") == 0)
            ok = (cfg.base.steps = atoi(v)) >= 0;
        else if (strcmp(k, "--max-steps") == 0)
            ok = (cfg.base.max_steps = atoi(v)) >= 0;
        else if (strcmp(k, "--time-budget") == 0)
            ok = (cfg.time_budget_ms = atoi(v)) >= 0;
        else if (strcmp(k, "--max-hole") == 0)
            ok = (cfg.base.max_hole = atoi(v)) >= 0;
        else if (strcmp(k, "--eos-penalty") == 0)
            ok = (cfg.base.eos_penalty = strtof(v, NULL)) >= 0 &&
                 cfg.base.eos_penalty <= ENG_EOS_PENALTY_MAX;
        else if (strcmp(k, "--candidates") == 0)
            ok = (cfg.base.candidates = atoi(v)) >= 1 &&
                 cfg.base.candidates <= ENG_DIFF_MAX_CANDIDATES;
        else if (strcmp(k, "--context-cache") == 0)
            ok = (cfg.context_cache = atoi(v)) >= 0 && cfg.context_cache <= 64;
        else if (strcmp(k, "--seed") == 0)
            cfg.base.seed = strtoull(v, NULL, 10);
        else if (strcmp(k, "--timeout") == 0) {
            cfg.sbx.wall_s = strtod(v, NULL);
            cfg.sbx.cpu_s = (int)cfg.sbx.wall_s + 1;
            ok = cfg.sbx.wall_s > 0;
        } else if (strcmp(k, "--python") == 0)
            cfg.sbx.python = v;
        else if (strcmp(k, "--mode") == 0) {
            if (strcmp(v, "exact") == 0)
                cfg.base.mode = ENG_CACHE_EXACT;
            else if (strcmp(v, "cached") == 0)
                cfg.base.mode = ENG_CACHE_CACHED;
            else
                ok = false;
        } else {
            fprintf(stderr, "infilld eval: unknown option %s\n%s", k, DMN__EVAL_USAGE);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "infilld eval: bad value for %s: %s\n", k, v);
            return 2;
        }
    }
    if (n_sets == 0) {
        fputs(DMN__EVAL_USAGE, stderr);
        return 2;
    }
    if (n_models == 0)
        models[n_models++] = "tiny";
    /* Threads per model: the cores shared out among the jobs. */
    if (cfg.threads <= 0 && cfg.jobs > 1) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        cfg.threads = (int)BASE_MAX(1, nc / cfg.jobs);
    }
    char tiny[4096];
    const char *dirs[16];
    for (size_t i = 0; i < n_models; i++) {
        if (strcmp(models[i], "baseline:copy") == 0) {
            dirs[i] = NULL;
        } else if (strcmp(models[i], "tiny") == 0) {
            if (!ifl_default_model_dir(tiny, sizeof tiny)) {
                fprintf(stderr, "infilld eval: no embedded tiny model next to the binary\n");
                return 1;
            }
            dirs[i] = tiny;
        } else if (strncmp(models[i], "baseline:", 9) == 0) {
            fprintf(stderr, "infilld eval: unknown baseline %s (baseline:copy)\n", models[i]);
            return 2;
        } else {
            dirs[i] = models[i];
        }
    }
    FILE *items_out = NULL;
    if (items_path && !(items_out = fopen(items_path, "w"))) {
        fprintf(stderr, "infilld eval: cannot write %s\n", items_path);
        return 1;
    }
    dmn__row rows[256];
    size_t n_rows = 0;
    int rc = 0;
    for (size_t s = 0; s < n_sets && rc == 0; s++) {
        char path[4096];
        if (!dmn__set_path(sets[s], data, heldout, path, sizeof path)) {
            fprintf(stderr, "infilld eval: path too long for %s\n", sets[s]);
            rc = 2;
            break;
        }
        ifl_eval_set set;
        char err[512] = "";
        base_status st = ifl_eval_set_load(path, cfg.limit, &set, err, sizeof err);
        if (st != BASE_OK) {
            fprintf(stderr, "infilld eval: %s\n", err[0] ? err : base_status_str(st));
            rc = 1;
            break;
        }
        for (size_t m = 0; m < n_models && rc == 0; m++) {
            if (!dmn__eval_row(&cfg, sets[s], &set, models[m], dirs[m], &rows[n_rows], items_out))
                rc = 1;
            else
                n_rows++;
        }
        ifl_eval_set_free(&set);
    }
    if (items_out)
        fclose(items_out);
    if (rc != 0)
        return rc;
    char machine[320], date[64];
    dmn__machine(machine, sizeof machine);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
    ifl_sandbox_isolation iso;
    ifl_sandbox_get_isolation(&iso);
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "date", json_string(date));
        json_object_set_new(o, "machine", json_string(machine));
        json_object_set_new(o, "sandbox",
                            json_pack("{s:b, s:b, s:b, s:b, s:b, s:f, s:i, s:I, s:I, s:i}", "netns",
                                      iso.netns, "pidns", iso.pidns, "userns", iso.userns,
                                      "seccomp", iso.seccomp, "uid_drop", iso.uid_drop, "wall_s",
                                      cfg.sbx.wall_s, "cpu_s", cfg.sbx.cpu_s, "mem_bytes",
                                      (json_int_t)cfg.sbx.mem_bytes, "file_bytes",
                                      (json_int_t)cfg.sbx.file_bytes, "nproc", cfg.sbx.nproc));
        json_t *a = json_array();
        for (size_t i = 0; i < n_rows; i++)
            json_array_append_new(a, dmn__row_json(&rows[i], &cfg));
        json_object_set_new(o, "rows", a);
        char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (s)
            printf("%s\n", s);
        free(s);
        json_decref(o);
    } else {
        printf("%s, %s\n\n", date, machine);
        dmn__print_table(rows, n_rows, &cfg);
        printf("\nsandbox: network namespace %s, PID namespace %s, socket(2) %s, %s; "
               "limits %.0f s wall, %d s CPU, %zu MiB memory, %zu MiB files, %d processes\n",
               iso.netns ? "yes" : "NO (not permitted here)", iso.pidns ? "yes" : "no",
               iso.seccomp ? "refused" : "allowed", iso.uid_drop ? "unprivileged uid" : "own uid",
               cfg.sbx.wall_s, cfg.sbx.cpu_s, cfg.sbx.mem_bytes >> 20, cfg.sbx.file_bytes >> 20,
               cfg.sbx.nproc);
    }
    return 0;
}
