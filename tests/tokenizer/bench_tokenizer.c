/* Tokenizer benchmark: load time of a tokenizer directory and encode
 * throughput on source files. Prints one Markdown table row per measure.
 *   bench_tokenizer TOKENIZER_DIR FILE... */
#define _POSIX_C_SOURCE 200809L
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this process in ms: on a shared, loaded machine wall time
 * includes waiting for a core, CPU time does not. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_tokenizer TOKENIZER_DIR FILE...\n");
        return 2;
    }
    eng_error err = {0};
    double load_ms[5], load_cpu[5];
    eng_tokenizer *t = NULL;
    for (int r = 0; r < 5; r++) {
        eng_tokenizer_free(t);
        uint64_t t0 = base_now_ns();
        double c0 = cpu_ms();
        t = eng_tokenizer_load(argv[1], &err);
        load_ms[r] = base_ms_since(t0);
        load_cpu[r] = cpu_ms() - c0;
        if (!t) {
            fprintf(stderr, "bench_tokenizer: %s\n", err.msg);
            return 1;
        }
    }
    qsort(load_ms, 5, sizeof *load_ms, cmp_d);
    qsort(load_cpu, 5, sizeof *load_cpu, cmp_d);
    printf("| load %s | wall median of 5: %.1f ms (min %.1f); CPU median %.1f ms (min %.1f) |\n",
           argv[1], load_ms[2], load_ms[0], load_cpu[2], load_cpu[0]);

    base_buf text;
    base_buf_init(&text);
    for (int i = 2; i < argc; i++) {
        char *s;
        size_t n;
        if (base_read_file(argv[i], &s, &n) != BASE_OK) {
            fprintf(stderr, "bench_tokenizer: cannot read %s\n", argv[i]);
            return 1;
        }
        base_buf_append(&text, s, n);
        free(s);
    }
    /* First pass with an empty piece cache, then the best of 5 warm passes. */
    double best = 0, best_cpu = 0;
    size_t n_tok = 0;
    for (int p = 0; p < 6; p++) {
        int32_t *ids = NULL;
        size_t n = 0;
        uint64_t t0 = base_now_ns();
        double c0 = cpu_ms();
        if (eng_tokenize(t, text.data, text.len, &ids, &n) != BASE_OK) {
            fprintf(stderr, "bench_tokenizer: encode failed\n");
            return 1;
        }
        double ms = base_ms_since(t0), cms = cpu_ms() - c0;
        n_tok = n;
        if (p == 0)
            printf("| encode, first pass (piece cache cold), %.2f MB, %zu tokens | wall %.1f ms, "
                   "%.1f MB/s; CPU %.1f ms, %.1f MB/s |\n",
                   text.len / 1e6, n, ms, text.len / 1e3 / ms, cms, text.len / 1e3 / cms);
        else if (p == 1 || ms < best)
            best = ms;
        if (p == 1 || (p > 1 && cms < best_cpu))
            best_cpu = cms;
        if (p == 5) {
            char *out = NULL;
            size_t len = 0;
            t0 = base_now_ns();
            eng_detokenize(t, ids, n, false, &out, &len);
            double dms = base_ms_since(t0);
            printf(
                "| encode, warm cache, best of 5 | wall %.1f ms, %.1f MB/s, %.2f M tokens/s; CPU "
                "%.1f ms, %.1f MB/s |\n",
                best, text.len / 1e3 / best, n_tok / 1e3 / best, best_cpu,
                text.len / 1e3 / best_cpu);
            printf("| decode %zu tokens | %.1f ms |\n", n, dms);
            free(out);
        }
        free(ids);
    }
    base_buf_deinit(&text);
    eng_tokenizer_free(t);
    return 0;
}
