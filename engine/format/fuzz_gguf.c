/* libFuzzer harness: the GGUF header parser must reject or accept any byte
 * string without reading outside it, leaking or crashing, and every tensor of
 * an accepted file lies inside the input. */
#include "engine_impl.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    eng__st_tensor *t = NULL;
    int n = 0;
    eng__gg_file gf;
    eng_error err;
    base_status st = eng__gg_parse(data, size, "fuzz.gguf", 0, &gf, &t, &n, &err);
    if (st == BASE_OK) {
        for (int i = 0; i < n; i++)
            if ((const uint8_t *)t[i].data < data ||
                (const uint8_t *)t[i].data + (t[i].end - t[i].begin) > data + size)
                abort();
        /* The typed getters on whatever keys the input holds. */
        for (uint64_t i = 0; i < gf.n_kv; i++) {
            char key[80], buf[32];
            snprintf(key, sizeof key, "%.*s", (int)(gf.kv[i].key.n < 79 ? gf.kv[i].key.n : 79),
                     gf.kv[i].key.s);
            uint64_t u;
            double f;
            bool b, bad = false;
            (void)eng__gg_get_u64(&gf, key, &u, &bad);
            (void)eng__gg_get_f64(&gf, key, &f, &bad);
            (void)eng__gg_get_bool(&gf, key, &b, &bad);
            (void)eng__gg_get_str(&gf, key, buf, sizeof buf, &bad);
        }
        eng__gg_file_deinit(&gf);
    }
    eng__st_tensors_free(t, n);
    return 0;
}
