/* HumanEval-Infilling (single-line and multi-line sets), cursor at the end of
 * `prompt`, the canonical middle as the candidate:
 *   - validation accepts every canonical middle;
 *   - validation rejects every canonical middle with one bracket deleted
 *     (a bracket outside string literals, chosen by a seeded generator);
 *   - reports how often the located span admits the canonical middle (post-
 *     processing without validation returns it unchanged);
 *   - compares the token budget with the middle's length ("oracle"): its real
 *     token count when built with the engine's tokenizer and the Qwen
 *     tokenizer.json is installed (tests/node_modules), else bytes / 3.5.
 *     Initial N is the first run's budget; effective N is the first value of
 *     the doubling schedule (N, 2N, 4N, ... capped at the span's n_max) that
 *     is at least the oracle, or the cap: the budget the pipeline's growth
 *     rule reaches when the model fills every too-small hole without EOS.
 *     Checks, per set: effective N >= oracle in >= 90 % of problems, median
 *     effective N / oracle <= 3, median initial N / oracle <= 3.
 * Skipped (77) when the data set is absent. Prints two summary lines per set;
 * `--tsv FILE` also writes per-problem rows. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "syntax.h"

#include <jansson.h>
#ifdef SYNTAX_QWEN_TOKENIZER_DIR
#include "engine.h"
#endif
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Offsets of brackets outside '...' and "..." literals and # comments. */
static size_t code_brackets(const char *s, size_t n, size_t *pos, size_t max) {
    size_t k = 0;
    char q = 0;
    bool comment = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (comment) {
            comment = c != '\n';
        } else if (q) {
            if (c == '\\')
                i++;
            else if (c == q || c == '\n')
                q = 0;
        } else if (c == '#') {
            comment = true;
        } else if (c == '"' || c == '\'') {
            q = c;
        } else if (strchr("()[]{}", c) && k < max) {
            pos[k++] = i;
        }
    }
    return k;
}

static const void *tokenizer; /* eng_tokenizer when built with the engine */

/* Token count of the middle with the real tokenizer; -1 without one. */
static long real_tokens(const char *s, size_t n) {
#ifdef SYNTAX_QWEN_TOKENIZER_DIR
    int32_t *ids = NULL;
    size_t n_ids = 0;
    if (tokenizer && eng_tokenize(tokenizer, s, n, &ids, &n_ids) == BASE_OK) {
        free(ids);
        return (long)n_ids;
    }
#else
    (void)s;
    (void)n;
#endif
    return -1;
}

static double median_of(double *v, size_t n) {
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void run_set(const char *name, const char *path, FILE *tsv) {
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", path);
    FILE *f = popen(cmd, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    base_rng rng;
    base_rng_seed(&rng, 4);
    size_t problems = 0, accepted = 0, broken = 0, broken_rejected = 0, admitted = 0;
    size_t covered = 0, covered_eff = 0, runs = 0, n_real = 0;
    size_t cap = 8192;
    double *ratios = malloc(cap * sizeof(double));
    double *ratios_eff = malloc(cap * sizeof(double));
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t got;
    while ((got = getline(&line, &line_cap, f)) > 0 && ratios && ratios_eff) {
        json_error_t jerr;
        json_t *j = json_loads(line, 0, &jerr);
        if (!j)
            continue;
        const char *prompt = json_string_value(json_object_get(j, "prompt"));
        const char *suffix = json_string_value(json_object_get(j, "suffix"));
        const char *mid = json_string_value(json_object_get(j, "canonical_solution"));
        const char *task = json_string_value(json_object_get(j, "task_id"));
        if (!prompt || !suffix || !mid) {
            json_decref(j);
            continue;
        }
        size_t pl = strlen(prompt), sl = strlen(suffix), ml = strlen(mid);
        char *text = malloc(pl + sl + 1);
        memcpy(text, prompt, pl);
        memcpy(text + pl, suffix, sl + 1);
        problems++;

        base_status st = ifl_syntax_validate_text("python", text, pl + sl, pl, pl, mid, ml);
        if (st == BASE_OK)
            accepted++;
        else
            fprintf(stderr, "%s %s: canonical middle rejected (%s)\n", name, task,
                    base_status_name(st));

        size_t pos[4096];
        size_t nb = code_brackets(mid, ml, pos, BASE_ARRAY_LEN(pos));
        if (nb > 0) {
            size_t del = pos[base_rng_next(&rng) % nb];
            char *bad = malloc(ml);
            memcpy(bad, mid, del);
            memcpy(bad + del, mid + del + 1, ml - del - 1);
            broken++;
            st = ifl_syntax_validate_text("python", text, pl + sl, pl, pl, bad, ml - 1);
            if (st == BASE_ERR_PARSE)
                broken_rejected++;
            else
                fprintf(stderr, "%s %s: middle without '%c' at %zu accepted\n", name, task,
                        mid[del], del);
            free(bad);
        }

        ifl_span sp;
        st = ifl_syntax_locate_text("python", text, pl + sl, pl, 0, 0, &sp);
        CHECK_EQ_I(st, BASE_OK);
        ifl_post_opts o = {.validate = false};
        char *out = NULL;
        size_t out_len = 0;
        /* Admitted: returned unchanged, up to trailing whitespace (a
         * completion on an empty line does not add a line break). */
        size_t mt = ml;
        while (mt > 0 && strchr(" \t\r\n", mid[mt - 1]))
            mt--;
        bool admits = ifl_syntax_postprocess_text("python", text, pl + sl, &sp, mid, ml, &o, &out,
                                                  &out_len) == BASE_OK;
        if (admits) {
            while (out_len > 0 && strchr(" \t\r\n", out[out_len - 1]))
                out_len--;
            admits = out_len == mt && memcmp(out, mid, mt) == 0;
        }
        free(out);
        admitted += admits;
        long toks = real_tokens(mid, ml);
        double oracle = toks > 0 ? (double)toks : (double)((2 * ml + 6) / 7);
        if (oracle < 1)
            oracle = 1;
        n_real += toks > 0;
        /* The growth rule's schedule (infill/pipeline.c): double, capped. */
        int eff = sp.n_tokens, top = BASE_MAX(sp.n_max, sp.n_tokens), n_runs = 1;
        while (eff < oracle && eff < top) {
            eff = eff > top / 2 ? top : 2 * eff;
            n_runs++;
        }
        covered += sp.n_tokens >= oracle;
        covered_eff += eff >= oracle;
        runs += (size_t)n_runs;
        if (problems > cap) {
            cap *= 2;
            double *nr = realloc(ratios, cap * sizeof(double));
            if (nr)
                ratios = nr;
            double *ne = realloc(ratios_eff, cap * sizeof(double));
            if (ne)
                ratios_eff = ne;
            if (!nr || !ne)
                break;
        }
        ratios[problems - 1] = sp.n_tokens / oracle;
        ratios_eff[problems - 1] = eff / oracle;
        if (tsv)
            fprintf(tsv, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.0f\t%d\t%d\n", name, task,
                    ifl_span_kind_name(sp.kind), sp.n_tokens, sp.n_max, eff, sp.max_lines, oracle,
                    admits, (int)sp.multiline);
        free(text);
        json_decref(j);
    }
    free(line);
    pclose(f);
    CHECK(problems > 0);
    if (ratios && ratios_eff && problems > 0) {
        double median = median_of(ratios, problems), median_eff = median_of(ratios_eff, problems);
        double pct = 100.0 * covered / problems, pct_eff = 100.0 * covered_eff / problems;
        printf("%s: %zu problems; canonical accepted %zu (%.1f%%); one bracket deleted: rejected "
               "%zu of %zu (%.1f%%); mode admits canonical %.1f%%\n",
               name, problems, accepted, 100.0 * accepted / problems, broken_rejected, broken,
               broken ? 100.0 * broken_rejected / broken : 100.0, 100.0 * admitted / problems);
        printf("%s: oracle = %s; initial N >= oracle %.1f%%, median N/oracle %.2f; effective N "
               "(doubling up to n_max, assuming the model fills every too-small hole without "
               "EOS) >= oracle %.1f%%, median %.2f, %.2f runs on average\n",
               name,
               n_real == problems ? "Qwen tokens"
               : n_real == 0      ? "bytes / 3.5"
                                  : "Qwen tokens, else bytes / 3.5",
               pct, median, pct_eff, median_eff, (double)runs / problems);
        CHECK(pct_eff >= 90.0);
        CHECK(median_eff <= 3.0);
        CHECK(median <= 3.0);
    }
    free(ratios);
    free(ratios_eff);
    CHECK_EQ_U(accepted, problems);
    CHECK_EQ_U(broken_rejected, broken);
}

int main(int argc, char **argv) {
    const char *dir = HUMANEVAL_DIR;
    FILE *tsv = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tsv") == 0 && i + 1 < argc)
            tsv = fopen(argv[++i], "w");
        else
            dir = argv[i];
    }
    base_log_set_level(BASE_LOG_WARN);
    char single[1024], multi[1024];
    snprintf(single, sizeof(single), "%s/HumanEval-SingleLineInfilling.jsonl.gz", dir);
    snprintf(multi, sizeof(multi), "%s/HumanEval-MultiLineInfilling.jsonl.gz", dir);
    FILE *probe = fopen(single, "rb");
    if (!probe) {
        fprintf(stderr, "test_syntax_humaneval: %s not found, skipping\n", single);
        return 77;
    }
    fclose(probe);
#ifdef SYNTAX_QWEN_TOKENIZER_DIR
    eng_error eerr;
    memset(&eerr, 0, sizeof(eerr));
    tokenizer = eng_tokenizer_load(SYNTAX_QWEN_TOKENIZER_DIR, &eerr);
    if (!tokenizer)
        fprintf(stderr, "test_syntax_humaneval: no tokenizer (%s), byte estimate only\n", eerr.msg);
#endif
    run_set("single-line", single, tsv);
    run_set("multi-line", multi, tsv);
    if (tsv)
        fclose(tsv);
#ifdef SYNTAX_QWEN_TOKENIZER_DIR
    eng_tokenizer_free((eng_tokenizer *)tokenizer);
#endif
    return check_finish("test_syntax_humaneval");
}
