/* golden_engine: drives the engine library directly for the golden tests, where the
 * infilld CLI has no equivalent.
 *
 *   golden_engine forward --model DIR --seqs A;B;.. [--valid A;B;..] --out FILE
 *       Padded batch: sequences are comma-separated ids separated by ';', all of the
 *       same length; --valid gives 0/1 per slot (default all 1). Writes the raw
 *       logits of every slot as little-endian f32 rows [n_seq * len, vocab].
 *   golden_engine step --model DIR --tokens IDS [--positions P,..]
 *                      [--then IDS --window S,E]
 *       One full-forward step at temperature 0; prints "position token prob" per
 *       asked-for position (default: every position). The engine applies the
 *       family's logit shift, so this shows which output row predicts each position.
 *       With --then, a second step recomputes only the window [S, E) of the --then
 *       canvas over the context K/V cached by the first, and that one is printed.
 *   golden_engine noise SEED STEP POSITION V
 *       Prints eng_noise_uniform(SEED, STEP, POSITION, V) with 17 digits.
 *
 * Exit status 0 on success, 1 on any error (with a message on stderr). */
#include "engine.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses "1,2,3;4,5,6" into a flat array; *n_seq and *len receive the shape. */
static int parse_rows(const char *s, int32_t **out, int *n_seq, int *len) {
    size_t cap = strlen(s) + 1;
    int32_t *v = malloc(cap * sizeof *v);
    if (!v)
        return -1;
    int count = 0, rows = 1, row_len = 0, first_len = -1;
    const char *p = s;
    while (*p) {
        char *end = NULL;
        long x = strtol(p, &end, 10);
        if (end == p) {
            free(v);
            return -1;
        }
        v[count++] = (int32_t)x;
        row_len++;
        p = end;
        if (*p == ',') {
            p++;
        } else if (*p == ';') {
            if (first_len >= 0 && row_len != first_len) {
                free(v);
                return -1;
            }
            first_len = row_len;
            row_len = 0;
            rows++;
            p++;
        } else if (*p) {
            free(v);
            return -1;
        }
    }
    if (first_len >= 0 && row_len != first_len) {
        free(v);
        return -1;
    }
    *out = v;
    *n_seq = rows;
    *len = row_len;
    return 0;
}

static const char *arg_value(int argc, char **argv, const char *name) {
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return NULL;
}

static eng_model *load_model(const char *dir) {
    eng_load_opts opts;
    eng_load_opts_default(&opts);
    opts.device = ENG_DEVICE_CPU;
    eng_error err = {0};
    eng_model *m = eng_model_load(dir, &opts, &err);
    if (!m)
        fprintf(stderr, "golden_engine: cannot load %s: %s\n", dir, err.msg);
    return m;
}

static int cmd_forward(int argc, char **argv) {
    const char *dir = arg_value(argc, argv, "--model");
    const char *seqs = arg_value(argc, argv, "--seqs");
    const char *valid_s = arg_value(argc, argv, "--valid");
    const char *out_path = arg_value(argc, argv, "--out");
    if (!dir || !seqs || !out_path) {
        fprintf(stderr, "golden_engine forward: --model, --seqs and --out are required\n");
        return 1;
    }
    int32_t *tokens = NULL, *valid32 = NULL;
    int n_seq = 0, len = 0, vn = 0, vlen = 0;
    if (parse_rows(seqs, &tokens, &n_seq, &len) != 0) {
        fprintf(stderr, "golden_engine forward: bad --seqs\n");
        return 1;
    }
    uint8_t *valid = NULL;
    if (valid_s) {
        if (parse_rows(valid_s, &valid32, &vn, &vlen) != 0 || vn != n_seq || vlen != len) {
            fprintf(stderr, "golden_engine forward: --valid does not match --seqs\n");
            free(tokens);
            free(valid32);
            return 1;
        }
        valid = malloc((size_t)n_seq * (size_t)len);
        for (int i = 0; i < n_seq * len; i++)
            valid[i] = valid32[i] != 0;
        free(valid32);
    }
    int rc = 1;
    float *logits = NULL;
    int32_t *rows = NULL;
    eng_ctx *ctx = NULL;
    FILE *f = NULL;
    eng_model *m = load_model(dir);
    if (!m)
        goto done;
    const eng_model_info *info = eng_model_get_info(m);
    eng_error err = {0};
    ctx = eng_ctx_new(m, n_seq, len, &err);
    if (!ctx) {
        fprintf(stderr, "golden_engine: context: %s\n", err.msg);
        goto done;
    }
    int n_rows = n_seq * len;
    rows = malloc((size_t)n_rows * sizeof *rows);
    logits = malloc((size_t)n_rows * (size_t)info->vocab_size * sizeof *logits);
    if (!rows || !logits)
        goto done;
    for (int i = 0; i < n_rows; i++)
        rows[i] = i;
    eng_batch batch = {.n_seq = n_seq, .len = len, .tokens = tokens, .valid = valid};
    base_status st = eng_forward(ctx, &batch, rows, n_rows, logits);
    if (st != BASE_OK) {
        fprintf(stderr, "golden_engine: forward: %s\n", base_status_str(st));
        goto done;
    }
    f = fopen(out_path, "wb");
    if (!f || fwrite(logits, sizeof *logits, (size_t)n_rows * (size_t)info->vocab_size, f) !=
                  (size_t)n_rows * (size_t)info->vocab_size) {
        fprintf(stderr, "golden_engine: cannot write %s\n", out_path);
        goto done;
    }
    rc = 0;
done:
    if (f && fclose(f) != 0)
        rc = 1;
    eng_ctx_free(ctx);
    eng_model_free(m);
    free(logits);
    free(rows);
    free(valid);
    free(tokens);
    return rc;
}

/* One step at temperature 0. Plain: a FULL step on --tokens. With --then and --window
 * S,E: a FULL step on --tokens fills the context cache, then a WINDOW step over [S, E)
 * on the --then canvas (same length) is the one printed. */
static int cmd_step(int argc, char **argv) {
    const char *dir = arg_value(argc, argv, "--model");
    const char *toks = arg_value(argc, argv, "--tokens");
    const char *pos_s = arg_value(argc, argv, "--positions");
    const char *then_s = arg_value(argc, argv, "--then");
    const char *win_s = arg_value(argc, argv, "--window");
    if (!dir || !toks || (!then_s != !win_s)) {
        fprintf(stderr, "golden_engine step: --model and --tokens are required; "
                        "--then and --window go together\n");
        return 1;
    }
    int32_t *tokens = NULL, *positions = NULL, *then = NULL, *win = NULL;
    int n_seq = 0, len = 0, pn = 0, n_pos = 0, tn = 0, tlen = 0, wn = 0, wlen = 0;
    if (parse_rows(toks, &tokens, &n_seq, &len) != 0 || n_seq != 1) {
        fprintf(stderr, "golden_engine step: bad --tokens\n");
        free(tokens);
        return 1;
    }
    if (then_s && (parse_rows(then_s, &then, &tn, &tlen) != 0 || tn != 1 || tlen != len ||
                   parse_rows(win_s, &win, &wn, &wlen) != 0 || wn != 1 || wlen != 2)) {
        fprintf(stderr, "golden_engine step: bad --then or --window\n");
        free(tokens);
        free(then);
        free(win);
        return 1;
    }
    if (pos_s) {
        if (parse_rows(pos_s, &positions, &pn, &n_pos) != 0 || pn != 1) {
            fprintf(stderr, "golden_engine step: bad --positions\n");
            free(tokens);
            free(positions);
            free(then);
            free(win);
            return 1;
        }
    } else {
        positions = malloc((size_t)len * sizeof *positions);
        n_pos = len;
        for (int i = 0; positions && i < len; i++)
            positions[i] = i;
    }
    int rc = 1;
    eng_ctx *ctx = NULL;
    eng_row_result *res = NULL;
    eng_model *m = load_model(dir);
    if (!m || !positions)
        goto done;
    eng_error err = {0};
    ctx = eng_ctx_new(m, 1, len, &err);
    if (!ctx) {
        fprintf(stderr, "golden_engine: context: %s\n", err.msg);
        goto done;
    }
    res = calloc((size_t)n_pos, sizeof *res);
    if (!res)
        goto done;
    eng_batch batch = {.n_seq = 1, .len = len, .tokens = tokens, .valid = NULL};
    eng_step_req req;
    memset(&req, 0, sizeof req);
    req.mode = ENG_STEP_FULL;
    req.positions = positions;
    req.n_pos = n_pos;
    req.sampling.pick = ENG_PICK_DREAM;
    req.sampling.temperature = 0.0f;
    req.sampling.top_p = 1.0f;
    req.sampling.top_k = 0;
    base_status st = eng_step(ctx, &batch, &req, res);
    if (st != BASE_OK) {
        fprintf(stderr, "golden_engine: step: %s\n", base_status_str(st));
        goto done;
    }
    if (then) {
        eng_batch batch2 = {.n_seq = 1, .len = len, .tokens = then, .valid = NULL};
        req.mode = ENG_STEP_WINDOW;
        req.win_start = win[0];
        req.win_end = win[1];
        req.sampling.step = 1;
        st = eng_step(ctx, &batch2, &req, res);
        if (st != BASE_OK) {
            fprintf(stderr, "golden_engine: window step: %s\n", base_status_str(st));
            goto done;
        }
    }
    for (int i = 0; i < n_pos; i++)
        printf("%d %d %.9g\n", (int)positions[i], (int)res[i].token, (double)res[i].prob);
    rc = 0;
done:
    eng_ctx_free(ctx);
    eng_model_free(m);
    free(res);
    free(positions);
    free(tokens);
    free(then);
    free(win);
    return rc;
}

static int cmd_noise(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "golden_engine noise SEED STEP POSITION V\n");
        return 1;
    }
    uint64_t seed = strtoull(argv[2], NULL, 10);
    uint32_t step = (uint32_t)strtoul(argv[3], NULL, 10);
    uint32_t pos = (uint32_t)strtoul(argv[4], NULL, 10);
    uint32_t v = (uint32_t)strtoul(argv[5], NULL, 10);
    printf("%.17g\n", eng_noise_uniform(seed, step, pos, v));
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "forward") == 0)
        return cmd_forward(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "step") == 0)
        return cmd_step(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "noise") == 0)
        return cmd_noise(argc, argv);
    fprintf(stderr, "usage: golden_engine forward|step|noise ...\n");
    return 1;
}
