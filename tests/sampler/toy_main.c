/* sampler_toy: runs eng_diffuse on the toy model and prints the hole of every
 * batch row as JSON, for comparison with the Python reference (toy_ref.py). */
#include "toy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int toy_parse_ids(const char *s, int32_t *out, int cap) {
    int n = 0;
    while (s && *s && n < cap) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s)
            return -1;
        out[n++] = (int32_t)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv) {
    eng_model_info info;
    bool expand = false;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--expand") == 0)
            expand = true;
    toy_info(&info, expand);
    eng_diff_params p;
    eng_diff_params_default(&p);
    int32_t prefix[256], suffix[256];
    int n_prefix = toy_parse_ids("1,2,3,4,5", prefix, 256);
    int n_suffix = toy_parse_ids("10,11,12", suffix, 256);
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--expand") == 0) {
            i--;
            continue;
        }
        if (strcmp(k, "--alg") == 0) {
            if (!eng_alg_parse(v, &p.alg))
                return 2;
        } else if (strcmp(k, "--n") == 0)
            p.n_hole = atoi(v);
        else if (strcmp(k, "--steps") == 0)
            p.steps = atoi(v);
        else if (strcmp(k, "--block") == 0)
            p.block = atoi(v);
        else if (strcmp(k, "--temperature") == 0)
            p.temperature = strtof(v, NULL);
        else if (strcmp(k, "--top-p") == 0)
            p.top_p = strtof(v, NULL);
        else if (strcmp(k, "--top-k") == 0)
            p.top_k = atoi(v);
        else if (strcmp(k, "--alg-temp") == 0)
            p.alg_temp = strtof(v, NULL);
        else if (strcmp(k, "--eps") == 0)
            p.eps = strtof(v, NULL);
        else if (strcmp(k, "--threshold") == 0)
            p.threshold = strtof(v, NULL);
        else if (strcmp(k, "--factor") == 0)
            p.factor = strtof(v, NULL);
        else if (strcmp(k, "--eos-penalty") == 0)
            p.eos_penalty = strtof(v, NULL);
        else if (strcmp(k, "--candidates") == 0)
            p.candidates = atoi(v);
        else if (strcmp(k, "--seed") == 0)
            p.seed = strtoull(v, NULL, 10);
        else if (strcmp(k, "--max-steps") == 0)
            p.max_steps = atoi(v);
        else if (strcmp(k, "--prefix-ids") == 0)
            n_prefix = toy_parse_ids(v, prefix, 256);
        else if (strcmp(k, "--suffix-ids") == 0)
            n_suffix = toy_parse_ids(v, suffix, 256);
        else
            return 2;
    }
    if (n_prefix < 0 || n_suffix < 0)
        return 2;
    eng_diff_prompt pr = {prefix, n_prefix, suffix, n_suffix};
    eng_error err;
    eng_diffuser *d = eng_diffuser_new(&info, p.candidates, 1024, &err);
    if (!d) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    eng_stepper st = {toy_step, NULL};
    eng_diff_result res;
    base_status s = eng_diffuse(d, &st, &pr, &p, &res);
    if (s != BASE_OK) {
        fprintf(stderr, "eng_diffuse: %s\n", base_status_str(s));
        eng_diffuser_free(d);
        return 1;
    }
    printf("{\"steps_run\": %d, \"cands\": [", res.steps_run);
    for (int b = 0; b < res.n_candidates; b++) {
        const eng_diff_candidate *c = NULL;
        for (int j = 0; j < res.n_candidates; j++)
            if (res.cand[j].index == b)
                c = &res.cand[j];
        printf("%s[", b ? ", " : "");
        for (int i = 0; i < c->n_tokens; i++)
            printf("%s%d", i ? ", " : "", c->tokens[i]);
        printf("]");
    }
    printf("]}\n");
    eng_diffuser_free(d);
    return 0;
}
