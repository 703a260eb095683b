/* `infilld logits`: raw logits of every position of one token sequence, for
 * golden tests and for comparing infilld with other implementations. */
#define _GNU_SOURCE
#include "cli.h"
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int eng__logits_usage(FILE *f) {
    fprintf(f, "usage: infilld logits --model DIR --tokens ID,ID,... [--out FILE]\n"
               "                      [--threads N] [--reference] [--device auto|cpu|cuda]\n"
               "                      [--mask-token ID]\n"
               "\n"
               "Runs one full bidirectional forward pass over the tokens and writes the raw\n"
               "(unshifted) logits of every position: len rows of vocab_size little-endian\n"
               "float32 values, row i = output position i, no header. Shifted families\n"
               "(Dream, Open-dCoder) predict token i from row i-1; this command does not shift.\n"
               "Without --out the binary rows go to stdout (refused when stdout is a terminal).\n"
               "A line 'len vocab_size' is printed on stderr.\n"
               "  --reference   use the plain scalar CPU path (INFILLD_CPU_REFERENCE=1)\n"
               "  --threads N   CPU compute threads (default: all cores)\n");
    return f == stderr ? 2 : 0;
}

/* Load progress as a percentage on stderr when it is a terminal. */
static void eng__logits_progress(void *ud, uint64_t done, uint64_t total) {
    int *last = ud;
    int pct = total ? (int)(done * 100 / total) : 100;
    if (pct != *last) {
        *last = pct;
        fprintf(stderr, "\rloading model %3d%%%s", pct, pct == 100 ? "\n" : "");
    }
}

static bool eng__parse_tokens(const char *s, int32_t **out, int *n) {
    int cap = 16, k = 0;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    if (!ids)
        return false;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > INT32_MAX || (*end && *end != ',')) {
            free(ids);
            return false;
        }
        if (k == cap) {
            int32_t *g = realloc(ids, (size_t)(cap *= 2) * sizeof *ids);
            if (!g) {
                free(ids);
                return false;
            }
            ids = g;
        }
        ids[k++] = (int32_t)v;
        s = *end ? end + 1 : end;
    }
    if (k == 0) {
        free(ids);
        return false;
    }
    *out = ids;
    *n = k;
    return true;
}

int dmn_cli_logits(int argc, char **argv) {
    const char *model = NULL, *tokens = NULL, *outp = NULL;
    eng_load_opts o;
    eng_load_opts_default(&o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool has = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return eng__logits_usage(stdout);
        if (strcmp(a, "--model") == 0 && has)
            model = argv[++i];
        else if (strcmp(a, "--tokens") == 0 && has)
            tokens = argv[++i];
        else if (strcmp(a, "--out") == 0 && has)
            outp = argv[++i];
        else if (strcmp(a, "--threads") == 0 && has)
            o.n_threads = atoi(argv[++i]);
        else if (strcmp(a, "--mask-token") == 0 && has)
            o.mask_token = atoi(argv[++i]);
        else if (strcmp(a, "--reference") == 0)
            setenv("INFILLD_CPU_REFERENCE", "1", 1);
        else if (strcmp(a, "--device") == 0 && has) {
            const char *d = argv[++i];
            if (strcmp(d, "cpu") == 0)
                o.device = ENG_DEVICE_CPU;
            else if (strcmp(d, "cuda") == 0)
                o.device = ENG_DEVICE_CUDA;
            else if (strcmp(d, "auto") == 0)
                o.device = ENG_DEVICE_AUTO;
            else
                return eng__logits_usage(stderr);
        } else {
            fprintf(stderr, "infilld logits: unknown or incomplete option '%s'\n", a);
            return eng__logits_usage(stderr);
        }
    }
    if (!model || !tokens)
        return eng__logits_usage(stderr);
    int32_t *ids = NULL;
    int n = 0;
    if (!eng__parse_tokens(tokens, &ids, &n)) {
        fprintf(stderr, "infilld logits: --tokens must be comma-separated non-negative ids\n");
        return 2;
    }
    if (!outp && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "infilld logits: refusing to write binary rows to a terminal; use --out\n");
        free(ids);
        return 2;
    }
    int last_pct = -1;
    if (isatty(STDERR_FILENO)) {
        o.progress = eng__logits_progress;
        o.progress_ud = &last_pct;
    }
    int rc = 1;
    eng_error err = {0};
    eng_ctx *ctx = NULL;
    float *logits = NULL;
    int32_t *rows = NULL;
    FILE *f = NULL;
    eng_model *m = eng_model_load(model, &o, &err);
    if (!m) {
        fprintf(stderr, "infilld logits: %s\n", err.msg);
        goto out;
    }
    const eng_model_info *in = eng_model_get_info(m);
    for (int i = 0; i < n; i++)
        if (ids[i] >= in->vocab_size) {
            fprintf(stderr, "infilld logits: token %d is outside the vocabulary (%d)\n", ids[i],
                    in->vocab_size);
            goto out;
        }
    ctx = eng_ctx_new(m, 1, n, &err);
    if (!ctx) {
        fprintf(stderr, "infilld logits: %s\n", err.msg);
        goto out;
    }
    logits = malloc((size_t)n * (size_t)in->vocab_size * sizeof(float));
    rows = malloc((size_t)n * sizeof *rows);
    if (!logits || !rows) {
        fprintf(stderr, "infilld logits: out of memory\n");
        goto out;
    }
    for (int i = 0; i < n; i++)
        rows[i] = i;
    eng_batch b = {.n_seq = 1, .len = n, .tokens = ids, .valid = NULL};
    base_status st = eng_forward(ctx, &b, rows, n, logits);
    if (st) {
        fprintf(stderr, "infilld logits: forward failed: %s\n", base_status_str(st));
        goto out;
    }
    f = outp ? fopen(outp, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "infilld logits: %s: %s\n", outp, strerror(errno));
        goto out;
    }
    /* x86-64 and aarch64 are little-endian: the rows are written as they are in memory. */
    size_t total = (size_t)n * (size_t)in->vocab_size;
    if (fwrite(logits, sizeof(float), total, f) != total || fflush(f) != 0) {
        fprintf(stderr, "infilld logits: write failed: %s\n", strerror(errno));
        goto out;
    }
    fprintf(stderr, "%d %d\n", n, in->vocab_size);
    rc = 0;
out:
    if (f && f != stdout && fclose(f) != 0 && rc == 0) {
        fprintf(stderr, "infilld logits: close failed: %s\n", strerror(errno));
        rc = 1;
    }
    free(rows);
    free(logits);
    eng_ctx_free(ctx);
    eng_model_free(m);
    free(ids);
    return rc;
}
