/* Segmented trees against whole-buffer parses on real code: every file of a
 * corpus is parsed as one tree (ifl_tree_set_segment_bytes 0) and as
 * segments, cut at every sound place (1 byte) and at the default size; a file
 * that parses without errors must give the same S-expression all three ways.
 * Files with syntax errors are parsed too (no crash, no leak) and their
 * differences counted, not failed: there the segments keep an error local
 * where a whole-buffer parse may recover differently.
 *
 * Corpus: the syntax cases, the HumanEval-Infilling programs (prompt +
 * canonical solution + suffix), the npm packages the build installs
 * (tree-sitter's C runtime, grammar sources, the tokenizer library, the
 * VS Code extension's dependencies), and, where installed, Python's standard
 * library, Neovim's Lua runtime and git's contributed scripts. Files are
 * visited in sorted order, at most PER_LANG per language, so runs are
 * repeatable. Usage: test_syntax_segments [dir...] (default: the corpus). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "grammars.h"
#include "syntax.h"

#include <dirent.h>
#include <jansson.h>
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PER_LANG = 120, MAX_BYTES = 256 * 1024, MAX_LANGS = 32 };

typedef struct stats {
    size_t files, clean, errorful, errorful_diffs, segments;
} stats;

static stats per_lang[MAX_LANGS];
static size_t mismatches;

static size_t lang_index(const char *lang) {
    for (size_t i = 0; i < gr_language_count() && i < MAX_LANGS; i++)
        if (strcmp(gr_language_name(i), lang) == 0)
            return i;
    return MAX_LANGS;
}

static char *sexp_with(const char *lang, const char *text, size_t len, size_t seg_bytes,
                       size_t *errors, size_t *segments) {
    ifl_tree *t = ifl_tree_new(lang, NULL);
    if (!t)
        return NULL;
    ifl_tree_set_segment_bytes(t, seg_bytes);
    char *s = ifl_tree_sexp(t, text, len);
    if (errors)
        *errors = ifl_tree_error_count(t, text, len);
    if (segments)
        *segments = ifl_tree_segment_count(t);
    ifl_tree_free(t);
    return s;
}

static void report_diff(const char *name, const char *what, const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    size_t from = i > 120 ? i - 120 : 0;
    fprintf(stderr,
            "%s: %s differs from the whole-buffer parse at %zu\n  whole: ...%.240s\n  seg:   "
            "...%.240s\n",
            name, what, i, a + from, b + from);
}

static void check_text(const char *lang, const char *name, const char *text, size_t len) {
    size_t li = lang_index(lang);
    if (li >= MAX_LANGS)
        return;
    stats *st = &per_lang[li];
    size_t errors = 0, segs = 0;
    char *whole = sexp_with(lang, text, len, 0, &errors, NULL);
    char *fine = sexp_with(lang, text, len, 1, NULL, &segs);
    char *dflt = sexp_with(lang, text, len, IFL_TREE_SEGMENT_BYTES, NULL, NULL);
    CHECK(whole && fine && dflt);
    if (whole && fine && dflt) {
        st->files++;
        st->segments += segs;
        if (errors == 0) {
            st->clean++;
            if (strcmp(whole, fine) != 0) {
                if (mismatches++ < 5)
                    report_diff(name, "cut everywhere", whole, fine);
            } else if (strcmp(whole, dflt) != 0) {
                if (mismatches++ < 5)
                    report_diff(name, "default segments", whole, dflt);
            }
        } else {
            st->errorful++;
            st->errorful_diffs += strcmp(whole, fine) != 0;
        }
    }
    free(whole);
    free(fine);
    free(dflt);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_file(const char *path) {
    const char *lang = gr_language_for_path(path);
    /* The case inputs carry a cursor marker and end in .in. */
    char buf[4096];
    size_t pl = strlen(path);
    if (!lang && pl > 3 && strcmp(path + pl - 3, ".in") == 0 && pl - 3 < sizeof(buf)) {
        memcpy(buf, path, pl - 3);
        buf[pl - 3] = 0;
        lang = gr_language_for_path(buf);
    }
    if (!lang || lang_index(lang) >= MAX_LANGS || per_lang[lang_index(lang)].files >= PER_LANG)
        return;
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char *text = malloc(MAX_BYTES + 1);
    size_t n = text ? fread(text, 1, MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (text && n > 0 && n <= MAX_BYTES && !memchr(text, 0, n)) {
        text[n] = 0;
        check_text(lang, path, text, n);
    }
    free(text);
}

static void walk(const char *dir, int depth) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **v = realloc(names, cap * sizeof(*v));
            if (!v)
                break;
            names = v;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        struct stat sb;
        if (names[i] && lstat(path, &sb) == 0) {
            if (S_ISDIR(sb.st_mode) && depth < 12)
                walk(path, depth + 1);
            else if (S_ISREG(sb.st_mode))
                check_file(path);
        }
        free(names[i]);
    }
    free(names);
}

/* A corpus folder the repository or a pinned npm package provides: missing
 * means a broken checkout (run ./bootstrap.sh), which must fail, not pass on
 * fewer files. */
static void walk_root(const char *dir) {
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "missing corpus folder %s\n", dir);
        CHECK(!"corpus folder present");
        return;
    }
    walk(dir, 0);
}

/* The 164 HumanEval programs, whole: prompt + canonical solution + suffix of
 * each task's first single-line problem. */
static void humaneval(const char *path) {
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "gzip -dc '%s' 2>/dev/null", path);
    FILE *f = popen(cmd, "r");
    if (!f)
        return;
    char *line = NULL, last[64] = "";
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *j = json_loads(line, 0, NULL);
        const char *task = j ? json_string_value(json_object_get(j, "task_id")) : NULL;
        const char *p = j ? json_string_value(json_object_get(j, "prompt")) : NULL;
        const char *m = j ? json_string_value(json_object_get(j, "canonical_solution")) : NULL;
        const char *s = j ? json_string_value(json_object_get(j, "suffix")) : NULL;
        if (task && p && m && s) {
            /* "HumanEval/12/3": one program per task. */
            const char *slash = strrchr(task, '/');
            size_t tl = slash ? (size_t)(slash - task) : strlen(task);
            if (tl < sizeof(last) && (strlen(last) != tl || memcmp(last, task, tl) != 0)) {
                memcpy(last, task, tl);
                last[tl] = 0;
                size_t n = strlen(p) + strlen(m) + strlen(s);
                char *text = malloc(n + 1);
                if (text) {
                    snprintf(text, n + 1, "%s%s%s", p, m, s);
                    check_text("python", task, text, n);
                    free(text);
                }
            }
        }
        json_decref(j);
    }
    free(line);
    pclose(f);
}

int main(int argc, char **argv) {
    base_log_set_level(BASE_LOG_WARN);
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            walk(argv[i], 0);
    } else {
        walk_root(SEGMENTS_SOURCE_DIR "/tests/syntax/cases");
        humaneval(SEGMENTS_SOURCE_DIR
                  "/../shared/data/humaneval-infilling/HumanEval-SingleLineInfilling.jsonl.gz");
        walk_root(SEGMENTS_SOURCE_DIR "/grammars/node_modules");
        walk_root(SEGMENTS_SOURCE_DIR "/tests/node_modules");
        walk_root(SEGMENTS_SOURCE_DIR "/editors/vscode/node_modules");
        /* Python, Lua, C++, shell... copied into the repository (see
         * tests/corpus/SOURCES.md), never files of the machine. */
        walk_root(SEGMENTS_SOURCE_DIR "/tests/corpus");
    }
    size_t clean = 0;
    for (size_t i = 0; i < gr_language_count() && i < MAX_LANGS; i++) {
        const stats *st = &per_lang[i];
        if (!st->files)
            continue;
        clean += st->clean;
        printf("%-10s %4zu files (%4zu error-free, %3zu with errors: %3zu differ), %5zu segments "
               "when cut everywhere\n",
               gr_language_name(i), st->files, st->clean, st->errorful, st->errorful_diffs,
               st->segments);
    }
    printf("%zu error-free files, %zu differ from the whole-buffer parse\n", clean, mismatches);
    CHECK_EQ_U(mismatches, 0);
    /* A corpus that lost its files would pass vacuously. */
    CHECK(clean >= 100);
    return check_finish("test_syntax_segments");
}
