/* libFuzzer harness: the safetensors header parser must reject or accept any
 * byte string without reading outside it, leaking or crashing. */
#include "engine_impl.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    eng__st_tensor *t = NULL;
    int n = 0;
    eng_error err;
    base_status st = eng__st_parse(data, size, "fuzz.safetensors", 0, &t, &n, &err);
    /* An accepted file's tensors lie inside the input. */
    if (st == BASE_OK)
        for (int i = 0; i < n; i++)
            if ((const uint8_t *)t[i].data < data ||
                (const uint8_t *)t[i].data + (t[i].end - t[i].begin) > data + size)
                abort();
    eng__st_tensors_free(t, n);
    return 0;
}
