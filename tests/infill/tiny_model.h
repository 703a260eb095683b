/* The tiny model the build generates, as the infill unit tests open it:
 * on the CPU, two threads, no cost measurement at load. Include after
 * check.h and infill.h. */
#ifndef INFILLD_TESTS_TINY_MODEL_H
#define INFILLD_TESTS_TINY_MODEL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* True when dir holds no model; *rc is then the test's exit code: 77
 * (skipped) on a developer's machine, a failure under CI=true. */
static inline bool tiny_model_missing(const char *dir, const char *name, int *rc) {
    char cfg[4096];
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    if (access(cfg, R_OK) == 0)
        return false;
    const char *ci = getenv("CI");
    fprintf(stderr, "no tiny model at %s (build tiny_model)\n", dir);
    if (!(ci && strcmp(ci, "true") == 0)) {
        *rc = check_finish(name) ? 1 : 77;
        return true;
    }
    CHECK(false);
    *rc = check_finish(name);
    return true;
}

/* Fills *o and opens dir with it; NULL (a failed check) when it does not open. */
static inline ifl_model *tiny_model_open(const char *dir, ifl_model_opts *o) {
    ifl_model_opts_default(o);
    o->load.device = ENG_DEVICE_CPU;
    o->load.n_threads = 2;
    o->no_cost = true;
    eng_error err = {0};
    ifl_model *m = ifl_model_open(dir, o, &err);
    if (!m)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(m != NULL);
    return m;
}

#endif
