/* engine: `infilld tokenize` — the tokenizer from the command line, for people
 * and for the agreement tests that compare it with Hugging Face tokenizers.
 *
 *   infilld tokenize --model DIR            stdin text → one line of ids
 *   infilld tokenize --model DIR --decode   ids on stdin → text bytes
 *   infilld tokenize --model DIR --jsonl    each line a JSON string → its ids
 *   infilld tokenize --model DIR --decode --jsonl
 *                                           each line ids → a JSON string */
#include "cli.h"
#include "tokenizer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tok_cli_usage(FILE *f) {
    fprintf(f, "usage: infilld tokenize (--model DIR | --tokenizer DIR) [--decode] [--jsonl] "
               "[--skip-special]\n"
               "  encodes stdin as plain text (special-token strings stay text) and prints\n"
               "  the ids; --decode reads ids and prints the text; --jsonl works per line\n"
               "  (JSON strings in, id lines out; or id lines in, JSON strings out)\n");
    return f == stderr ? 2 : 0;
}

static base_status tok_cli_read_stdin(base_buf *in) {
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        if (base_buf_append(in, chunk, got) != BASE_OK)
            return BASE_ERR_NOMEM;
    return ferror(stdin) ? BASE_ERR_IO : BASE_OK;
}

static base_status tok_cli_ids_line(base_buf *out, const int32_t *ids, size_t n) {
    base_status st = BASE_OK;
    for (size_t i = 0; st == BASE_OK && i < n; i++)
        st = base_buf_printf(out, i ? " %d" : "%d", (int)ids[i]);
    if (st == BASE_OK)
        st = base_buf_append(out, "\n", 1);
    return st;
}

/* Parses integers separated by spaces, commas or brackets from s[0..n). */
static base_status tok_cli_parse_ids(const char *s, size_t n, int32_t **ids, size_t *n_ids) {
    size_t cap = 64, k = 0;
    int32_t *v = malloc(cap * sizeof *v);
    if (!v)
        return BASE_ERR_NOMEM;
    size_t i = 0;
    while (i < n) {
        char c = s[i];
        if (c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r' || c == '[' || c == ']') {
            i++;
            continue;
        }
        long long x = 0;
        size_t digits = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9' && digits < 10) {
            x = x * 10 + (s[i] - '0');
            i++;
            digits++;
        }
        if (!digits || x > INT32_MAX || (i < n && s[i] >= '0' && s[i] <= '9')) {
            free(v);
            return BASE_ERR_PARSE;
        }
        if (k == cap) {
            cap *= 2;
            int32_t *p = realloc(v, cap * sizeof *p);
            if (!p) {
                free(v);
                return BASE_ERR_NOMEM;
            }
            v = p;
        }
        v[k++] = (int32_t)x;
    }
    *ids = v;
    *n_ids = k;
    return BASE_OK;
}

int dmn_cli_tokenize(int argc, char **argv) {
    const char *dir = NULL;
    bool decode = false, jsonl = false, skip_special = false;
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--model") == 0 || strcmp(argv[i], "--tokenizer") == 0) &&
            i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--decode") == 0)
            decode = true;
        else if (strcmp(argv[i], "--jsonl") == 0)
            jsonl = true;
        else if (strcmp(argv[i], "--skip-special") == 0)
            skip_special = true;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return tok_cli_usage(stdout);
        else
            return tok_cli_usage(stderr);
    }
    if (!dir)
        return tok_cli_usage(stderr);

    eng_error err = {0};
    eng_tokenizer *t = eng_tokenizer_load(dir, &err);
    if (!t) {
        fprintf(stderr, "infilld tokenize: %s\n", err.msg);
        return 1;
    }
    base_buf in, out;
    base_buf_init(&in);
    base_buf_init(&out);
    int rc = 0;
    base_status st = tok_cli_read_stdin(&in);
    if (st != BASE_OK) {
        fprintf(stderr, "infilld tokenize: reading stdin: %s\n", base_status_str(st));
        rc = 1;
        goto done;
    }
    const char *text = in.data ? in.data : "";

    if (!jsonl) {
        int32_t *ids = NULL;
        size_t n = 0;
        if (decode) {
            char *s = NULL;
            size_t sl = 0;
            st = tok_cli_parse_ids(text, in.len, &ids, &n);
            if (st == BASE_OK)
                st = eng_detokenize(t, ids, n, skip_special, &s, &sl);
            if (st == BASE_OK)
                st = base_buf_append(&out, s, sl);
            free(s);
        } else {
            st = eng_tokenize(t, text, in.len, &ids, &n);
            if (st == BASE_OK)
                st = tok_cli_ids_line(&out, ids, n);
        }
        free(ids);
        if (st != BASE_OK) {
            fprintf(stderr, "infilld tokenize: %s\n", base_status_str(st));
            rc = 1;
        }
        goto done;
    }

    /* One output line per non-empty input line; a bad line gives an empty
     * output line, a message naming it and exit code 1. */
    size_t line = 0;
    for (size_t i = 0; i < in.len;) {
        const char *nl = memchr(text + i, '\n', in.len - i);
        size_t e = nl ? (size_t)(nl - text) : in.len;
        line++;
        size_t le = e;
        if (le > i && text[le - 1] == '\r')
            le--;
        if (le > i) {
            int32_t *ids = NULL;
            size_t n = 0;
            if (decode) {
                char *s = NULL;
                size_t sl = 0;
                st = tok_cli_parse_ids(text + i, le - i, &ids, &n);
                if (st == BASE_OK)
                    st = eng_detokenize(t, ids, n, skip_special, &s, &sl);
                if (st == BASE_OK)
                    st = eng__json_write_str(&out, s, sl);
                if (st == BASE_OK)
                    st = base_buf_append(&out, "\n", 1);
                free(s);
            } else {
                eng_error jerr = {0};
                eng__json_doc *doc = eng__json_parse(text + i, le - i, &jerr);
                const eng__json *v = doc ? eng__json_root(doc) : NULL;
                if (!v || v->type != ENG_JSON_STR)
                    st = BASE_ERR_PARSE;
                else
                    st = eng_tokenize(t, v->u.s, v->n, &ids, &n);
                if (st == BASE_OK)
                    st = tok_cli_ids_line(&out, ids, n);
                eng__json_free(doc);
            }
            free(ids);
            if (st != BASE_OK) {
                fprintf(stderr, "infilld tokenize: line %zu: %s\n", line, base_status_str(st));
                rc = 1;
                if (st == BASE_ERR_NOMEM || base_buf_append(&out, "\n", 1) != BASE_OK)
                    break;
            }
        }
        i = e + 1;
    }

done:
    if (out.len && fwrite(out.data, 1, out.len, stdout) != out.len)
        rc = 1;
    if (fflush(stdout) != 0)
        rc = 1;
    base_buf_deinit(&in);
    base_buf_deinit(&out);
    eng_tokenizer_free(t);
    return rc;
}
