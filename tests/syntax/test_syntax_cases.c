/* Data-driven span and post-processing cases: one folder per case under
 * tests/syntax/cases/<lang>/<case>/ holding
 *   input.<ext>.in  source with a cursor marker "█", or a selection «...»
 *                 (".in" keeps the CI format check off these fragments)
 *   expect.json   {"kind": "block", "multiline": true, "n_min": 16, "n_max": 64,
 *                  "grow_min": 128, "grow_max": 512 (range of the budget the
 *                  hole may grow to, span.n_max),
 *                  "hole_text": "selected text after widening" (optional),
 *                  "post": [{"in": "candidate", "out": "expected" | null,
 *                            "validate": true}]}
 * The language is the folder name; "out": null means the candidate is rejected. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "syntax.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static int n_cases, n_posts;

/* Removes the first occurrence of marker from buf; returns its offset or -1. */
static long take_marker(char *buf, size_t *len, const char *marker) {
    char *p = strstr(buf, marker);
    if (!p)
        return -1;
    size_t m = strlen(marker), off = (size_t)(p - buf);
    memmove(p, p + m, *len - off - m + 1);
    *len -= m;
    return (long)off;
}

static void run_case(const char *lang, const char *dir) {
    char path[2048];
    DIR *d = opendir(dir);
    if (!d)
        return;
    char input[2048] = "";
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "input.", 6) == 0)
            snprintf(input, sizeof(input), "%s/%s", dir, e->d_name);
    closedir(d);
    if (!input[0]) {
        fprintf(stderr, "%s: no input file\n", dir);
        CHECK(0);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    CHECK(base_read_file(input, &text, &len) == BASE_OK);
    if (!text)
        return;
    long cur = take_marker(text, &len, "\xe2\x96\x88"); /* █ */
    long s0 = take_marker(text, &len, "\xc2\xab");      /* « */
    long s1 = take_marker(text, &len, "\xc2\xbb");      /* » */
    size_t cursor = cur >= 0 ? (size_t)cur : (s1 >= 0 ? (size_t)s1 : 0);
    size_t ss = s0 >= 0 ? (size_t)s0 : 0, se = s1 >= 0 ? (size_t)s1 : 0;

    snprintf(path, sizeof(path), "%s/expect.json", dir);
    json_error_t jerr;
    json_t *ex = json_load_file(path, 0, &jerr);
    if (!ex) {
        fprintf(stderr, "%s: %s\n", path, jerr.text);
        CHECK(0);
        free(text);
        return;
    }
    n_cases++;
    ifl_span sp;
    base_status st = ifl_syntax_locate_text(lang, text, len, cursor, ss, se, &sp);
    CHECK_EQ_I(st, BASE_OK);
    const char *kind = json_string_value(json_object_get(ex, "kind"));
    int fails = check__failures;
    if (kind)
        CHECK_STR(ifl_span_kind_name(sp.kind), kind);
    json_t *ml = json_object_get(ex, "multiline");
    if (ml)
        CHECK_EQ_I(sp.multiline, json_is_true(ml));
    json_t *nmin = json_object_get(ex, "n_min"), *nmax = json_object_get(ex, "n_max");
    if (nmin)
        CHECK(sp.n_tokens >= json_integer_value(nmin));
    if (nmax)
        CHECK(sp.n_tokens <= json_integer_value(nmax));
    /* The hole only grows: the cap is at least the first run's budget. */
    CHECK(sp.n_max >= sp.n_tokens);
    json_t *gmin = json_object_get(ex, "grow_min"), *gmax = json_object_get(ex, "grow_max");
    if (gmin)
        CHECK(sp.n_max >= json_integer_value(gmin));
    if (gmax)
        CHECK(sp.n_max <= json_integer_value(gmax));
    const char *ht = json_string_value(json_object_get(ex, "hole_text"));
    if (ht) {
        CHECK_EQ_U(sp.hole_end - sp.hole_start, strlen(ht));
        CHECK(sp.hole_end - sp.hole_start == strlen(ht) &&
              memcmp(text + sp.hole_start, ht, strlen(ht)) == 0);
    }
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(ex, "post"), i, p) {
        n_posts++;
        const char *in = json_string_value(json_object_get(p, "in"));
        json_t *outj = json_object_get(p, "out");
        json_t *vj = json_object_get(p, "validate");
        ifl_post_opts o = {.validate = vj ? json_is_true(vj) : true};
        char *out = NULL;
        size_t out_len = 0;
        st = ifl_syntax_postprocess_text(lang, text, len, &sp, in, strlen(in), &o, &out, &out_len);
        if (json_is_string(outj)) {
            CHECK_EQ_I(st, BASE_OK);
            CHECK_STR(out, json_string_value(outj));
        } else {
            CHECK_EQ_I(st, BASE_ERR_PARSE);
            CHECK(out == NULL);
            if (out)
                fprintf(stderr, "  accepted: \"%s\"\n", out);
        }
        free(out);
    }
    if (check__failures != fails)
        fprintf(stderr, "  in case %s (kind %s, N %d up to %d, lines %d: %s)\n", dir,
                ifl_span_kind_name(sp.kind), sp.n_tokens, sp.n_max, sp.max_lines, sp.reason);
    json_decref(ex);
    free(text);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted subdirectory names of dir (caller frees each and the array). */
static size_t list_dirs(const char *dir, char ***out) {
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **nv = realloc(v, (n + 1) * sizeof(*v));
        if (!nv)
            break;
        v = nv;
        v[n++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (n)
        qsort(v, n, sizeof(*v), cmp_str);
    *out = v;
    return n;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : SYNTAX_CASES_DIR;
    const char *only = argc > 2 ? argv[2] : NULL;
    base_log_set_level(BASE_LOG_WARN);
    char **langs = NULL;
    size_t nl = list_dirs(root, &langs);
    CHECK(nl >= 8);
    for (size_t i = 0; i < nl; i++) {
        char ldir[1024];
        snprintf(ldir, sizeof(ldir), "%s/%s", root, langs[i]);
        char **cases = NULL;
        size_t nc = list_dirs(ldir, &cases);
        CHECK(nc >= 10);
        for (size_t j = 0; j < nc; j++) {
            char cdir[1400];
            snprintf(cdir, sizeof(cdir), "%s/%s", ldir, cases[j]);
            if (!only || strstr(cdir, only))
                run_case(langs[i], cdir);
            free(cases[j]);
        }
        free(cases);
        free(langs[i]);
    }
    free(langs);
    fprintf(stderr, "%d cases, %d post-processing checks\n", n_cases, n_posts);
    return check_finish("test_syntax_cases");
}
