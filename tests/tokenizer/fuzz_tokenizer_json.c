/* libFuzzer harness for the tokenizer file reader: any bytes given as a
 * tokenizer.json either load (then encode/decode a fixed string) or fail with
 * a status and a message — never a crash, leak or out-of-bounds read. */
#include "engine.h"
#include "tokenizer_impl.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    eng_error err = {0};
    eng_tokenizer *t = eng__tokenizer_from_json((const char *)data, size, "fuzz.json", &err);
    if (!t) {
        if (err.status == BASE_OK || err.msg[0] == '\0')
            abort();
        return 0;
    }
    static const char text[] = "int x = 1; // caf\xc3\xa9 \xff <|endoftext|>";
    int32_t *ids = NULL;
    size_t n = 0;
    if (eng_tokenize(t, text, sizeof text - 1, &ids, &n) == BASE_OK) {
        char *out = NULL;
        size_t len = 0;
        if (eng_detokenize(t, ids, n, false, &out, &len) == BASE_OK)
            free(out);
    }
    free(ids);
    eng_tokenizer_free(t);
    return 0;
}
