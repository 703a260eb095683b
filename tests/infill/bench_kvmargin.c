/* bench_kvmargin: how far the context K/V kept between requests
 * (contextCache) moves the answers, by re-encode margin, on a typing session
 * replayed straight through the pipeline (a benchmark program, not a test;
 * docs/PERFORMANCE.md).
 *
 *   bench_kvmargin MODEL_DIR FILE FIRST_LINE LAST_LINE CTX_BUDGET [CHARS_PER_REQ]
 *
 * FILE's lines FIRST..LAST are removed and typed back CHARS_PER_REQ
 * characters at a time (default 1), with a request (cached mode, a 16-token
 * hole, 16 steps, one candidate, context budget CTX_BUDGET tokens) after
 * each, 64 requests in all. The reference runs without the store; each
 * margin runs the same requests with the store on (stale refresh off, any
 * window allowed) and prints the requests whose hole tokens are identical,
 * those with the same first token, the share of equal tokens and the rows
 * reused per request. */
#include "infill.h"
#include "kvstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NREQ = 64, NHOLE = 16 };

typedef struct answer {
    int32_t t[256];
    int n;
} answer;

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = l >= 0 ? malloc((size_t)l + 1) : NULL;
    *n = b ? fread(b, 1, (size_t)l, f) : 0;
    if (b)
        b[*n] = 0;
    fclose(f);
    return b;
}

/* The document is txt[0:a] + txt[a:a+k] (typed so far) + txt[b:]. */
static int replay(ifl_model *m, const char *txt, size_t a, size_t b, int chars, const char *key,
                  int ctx, answer *out, long *reused) {
    for (int r = 0; r < NREQ; r++) {
        size_t k = BASE_MIN((size_t)r * (size_t)chars, b - a);
        ifl_text_req q;
        memset(&q, 0, sizeof q);
        q.prefix = txt;
        q.prefix_len = a + k;
        q.suffix = txt + b;
        q.suffix_len = strlen(txt + b);
        eng_diff_params_default(&q.params);
        q.params.n_hole = NHOLE;
        q.params.steps = NHOLE;
        q.params.mode = ENG_CACHE_CACHED;
        q.kv_key = key;
        q.ctx_budget = ctx;
        ifl_text_res res;
        base_status st = ifl_infill_text(m, &q, NULL, &res);
        if (st != BASE_OK) {
            fprintf(stderr, "bench_kvmargin: request %d: %s\n", r, base_status_str(st));
            return 1;
        }
        out[r].n = BASE_MIN(res.n_tokens, 256);
        memcpy(out[r].t, res.tokens, sizeof(int32_t) * (size_t)out[r].n);
        *reused += res.kv_reused;
        ifl_text_res_free(&res);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: bench_kvmargin MODEL_DIR FILE FIRST_LINE LAST_LINE CTX_BUDGET "
                        "[CHARS_PER_REQ]\n");
        return 2;
    }
    int first = atoi(argv[3]), last = atoi(argv[4]), ctx = atoi(argv[5]);
    int chars = argc > 6 ? atoi(argv[6]) : 1;
    size_t n = 0;
    char *txt = slurp(argv[2], &n);
    if (!txt || first < 1 || last < first || chars < 1) {
        fprintf(stderr, "bench_kvmargin: cannot read %s or bad lines\n", argv[2]);
        return 2;
    }
    size_t a = SIZE_MAX, b = SIZE_MAX;
    for (size_t i = 0, ln = 1; i <= n && b == SIZE_MAX; i++) {
        if (ln == (size_t)first && a == SIZE_MAX)
            a = i;
        if (i < n && txt[i] == '\n' && ++ln == (size_t)last + 1)
            b = i + 1;
    }
    if (a == SIZE_MAX || b == SIZE_MAX) {
        fprintf(stderr, "bench_kvmargin: %s has no lines %d..%d\n", argv[2], first, last);
        return 2;
    }
    ifl_model_opts mo;
    ifl_model_opts_default(&mo);
    mo.no_cost = true;
    mo.max_candidates = 1;
    eng_error err = {0};
    ifl_model *m = ifl_model_open(argv[1], &mo, &err);
    if (!m) {
        fprintf(stderr, "bench_kvmargin: %s\n", err.msg);
        return 1;
    }
    static answer ref[NREQ], got[NREQ];
    long none = 0;
    int rc = replay(m, txt, a, b, chars, NULL, ctx, ref, &none);
    static const int margins[] = {0, 4, 16, 64, 256, 100000};
    for (size_t mi = 0; rc == 0 && mi < sizeof margins / sizeof margins[0]; mi++) {
        ifl_kv_opts o;
        ifl_kv_opts_default(&o);
        o.enabled = true;
        o.margin = margins[mi];
        o.stale_edits = 1000000;
        o.stale_share = 2.0;
        o.max_window = 1.01;
        ifl_kv_set_opts(ifl_model_kv(m), &o);
        long reused = 0;
        rc = replay(m, txt, a, b, chars, "doc", ctx, got, &reused);
        int same = 0, first_tok = 0;
        long eq = 0, all = 0;
        /* request 0 is cold: the rest are the store's */
        for (int r = 1; r < NREQ; r++) {
            same += got[r].n == ref[r].n &&
                    memcmp(got[r].t, ref[r].t, sizeof(int32_t) * (size_t)ref[r].n) == 0;
            first_tok += got[r].n > 0 && ref[r].n > 0 && got[r].t[0] == ref[r].t[0];
            for (int i = 0; i < BASE_MIN(got[r].n, ref[r].n); i++)
                eq += got[r].t[i] == ref[r].t[i];
            all += BASE_MAX(got[r].n, ref[r].n);
        }
        printf("margin %6d: identical %d/%d, first token %d, tokens %.1f %%, rows reused per "
               "request %.0f\n",
               margins[mi], same, NREQ - 1, first_tok, 100.0 * (double)eq / (double)(all ? all : 1),
               (double)reused / (NREQ - 1));
    }
    ifl_model_close(m);
    free(txt);
    return rc;
}
