/* The harness's own correctness on HumanEval-Infilling (read from
 * ../shared/data at test time; never copied into the repository):
 *   - every problem of the single-line, multi-line and random-span-light sets
 *     with its canonical middle passes through the sandbox (the 7,012
 *     programs are 451 distinct texts; each distinct program runs once);
 *   - a deliberately wrong middle fails: for the first 40 single-line
 *     problems, the middle's line replaced by `pass` at its indentation
 *     plus one extra level (an indentation error or a wrong result).
 * Skipped (77) without the data, except under CI=true, where that fails. */
#define _GNU_SOURCE
#include "check.h"
#include "eval.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct prog {
    char *text;
    size_t len;
    const char *task; /* the first task giving this program */
    bool expect_pass;
    ifl_sandbox_outcome outcome;
    base_status status;
} prog;

static prog *progs;
static size_t n_progs, cap_progs;
static atomic_size_t next_prog;

static int cmp_prog(const void *a, const void *b) {
    const prog *x = a, *y = b;
    if (x->expect_pass != y->expect_pass)
        return x->expect_pass ? -1 : 1;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->text, y->text, x->len);
}

static void add_prog(char *text, size_t len, const char *task, bool expect_pass) {
    if (n_progs == cap_progs) {
        cap_progs = cap_progs ? 2 * cap_progs : 1024;
        progs = realloc(progs, cap_progs * sizeof *progs);
        if (!progs)
            abort();
    }
    progs[n_progs++] = (prog){text, len, task, expect_pass, IFL_SANDBOX_FAIL, BASE_OK};
}

static void *runner(void *arg) {
    unsigned slot = (unsigned)(uintptr_t)arg;
    ifl_sandbox_opts o;
    ifl_sandbox_opts_default(&o);
    o.slot = slot;
    for (;;) {
        size_t i = atomic_fetch_add(&next_prog, 1);
        if (i >= n_progs)
            break;
        ifl_sandbox_result r;
        progs[i].status = ifl_sandbox_run(&o, progs[i].text, progs[i].len, &r);
        progs[i].outcome = r.outcome;
        if (progs[i].status == BASE_OK && (r.outcome == IFL_SANDBOX_PASS) != progs[i].expect_pass)
            fprintf(stderr, "%s: %s, expected %s\n%s\n", progs[i].task,
                    ifl_sandbox_outcome_name(r.outcome), progs[i].expect_pass ? "pass" : "fail",
                    r.output);
    }
    return NULL;
}

int main(void) {
    static const char *const files[] = {
        "HumanEval-SingleLineInfilling.jsonl.gz",
        "HumanEval-MultiLineInfilling.jsonl.gz",
        "HumanEval-RandomSpanInfillingLight.jsonl.gz",
    };
    ifl_eval_set sets[3];
    size_t problems = 0;
    for (size_t s = 0; s < 3; s++) {
        char path[4096], err[512] = "";
        snprintf(path, sizeof path, "%s/%s", HUMANEVAL_DIR, files[s]);
        if (access(path, R_OK) != 0) {
            const char *ci = getenv("CI");
            fprintf(stderr, "test_eval_humaneval: %s is missing\n", path);
            return ci && strcmp(ci, "true") == 0 ? 1 : 77;
        }
        base_status st = ifl_eval_set_load(path, 0, &sets[s], err, sizeof err);
        CHECK_EQ_I(st, BASE_OK);
        if (st != BASE_OK) {
            fprintf(stderr, "%s\n", err);
            return check_finish("test_eval_humaneval");
        }
        problems += sets[s].n;
        for (size_t i = 0; i < sets[s].n; i++) {
            const ifl_eval_task *t = &sets[s].tasks[i];
            size_t len = 0;
            char *p = ifl_eval_humaneval_program(t, t->middle, t->middle_len, &len);
            CHECK(p != NULL);
            if (p)
                add_prog(p, len, t->id, true);
            if (s == 0 && i < 40) {
                /* The wrong middle: `pass`, one level deeper than the line. */
                size_t ind = 0;
                while (ind < t->middle_len && t->middle[ind] == ' ')
                    ind++;
                char wrong[256];
                snprintf(wrong, sizeof wrong, "%.*s    pass\n", (int)ind, t->middle);
                p = ifl_eval_humaneval_program(t, wrong, strlen(wrong), &len);
                if (p)
                    add_prog(p, len, t->id, false);
            }
        }
    }
    CHECK_EQ_I((int)problems, 1033 + 5815 + 164);
    /* Distinct programs only: identical texts give identical outcomes. */
    qsort(progs, n_progs, sizeof *progs, cmp_prog);
    size_t k = 0;
    for (size_t i = 0; i < n_progs; i++) {
        if (k > 0 && cmp_prog(&progs[k - 1], &progs[i]) == 0) {
            free(progs[i].text);
            continue;
        }
        progs[k++] = progs[i];
    }
    n_progs = k;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = (int)(nc < 1 ? 1 : nc > 8 ? 8 : nc);
    pthread_t th[8];
    for (int j = 0; j < jobs; j++)
        pthread_create(&th[j], NULL, runner, (void *)(uintptr_t)j);
    for (int j = 0; j < jobs; j++)
        pthread_join(th[j], NULL);
    size_t pass_ok = 0, n_pass = 0, fail_ok = 0, n_fail = 0, errors = 0;
    for (size_t i = 0; i < n_progs; i++) {
        errors += progs[i].status != BASE_OK;
        if (progs[i].expect_pass) {
            n_pass++;
            pass_ok += progs[i].status == BASE_OK && progs[i].outcome == IFL_SANDBOX_PASS;
        } else {
            n_fail++;
            fail_ok += progs[i].status == BASE_OK && progs[i].outcome != IFL_SANDBOX_PASS;
        }
        free(progs[i].text);
    }
    fprintf(stderr,
            "humaneval: %zu problems, %zu distinct canonical programs, %zu pass; "
            "%zu wrong middles, %zu fail; %zu sandbox errors\n",
            problems, n_pass, pass_ok, n_fail, fail_ok, errors);
    CHECK_EQ_I((int)errors, 0);
    CHECK_EQ_I((int)pass_ok, (int)n_pass);
    CHECK_EQ_I((int)fail_ok, (int)n_fail);
    CHECK(n_fail >= 30);
    free(progs);
    for (size_t s = 0; s < 3; s++)
        ifl_eval_set_free(&sets[s]);
    return check_finish("test_eval_humaneval");
}
