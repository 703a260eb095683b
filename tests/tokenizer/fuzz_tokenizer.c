/* libFuzzer harness for the tokenizer: any bytes encode without error, every
 * id is a real token, and decoding gives back the input — NFC-normalised
 * where it is valid UTF-8, byte for byte where it is not normalised (ASCII and
 * invalid bytes). Uses the Qwen tokenizer.json when present (TOK_QWEN_DIR),
 * else the tiny fixture. */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static eng_tokenizer *fuzz_tok;

static eng_tokenizer *fuzz_load(void) {
    eng_error err = {0};
    eng_tokenizer *t = eng_tokenizer_load(TOK_QWEN_DIR, &err);
    if (!t)
        t = eng_tokenizer_load(TOK_TEST_DATA "/tiny_json", &err);
    if (!t) {
        fprintf(stderr, "fuzz_tokenizer: %s\n", err.msg);
        abort();
    }
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!fuzz_tok)
        fuzz_tok = fuzz_load();
    const char *s = (const char *)data;
    int32_t *ids = NULL;
    size_t n = 0;
    if (eng_tokenize(fuzz_tok, s, size, &ids, &n) != BASE_OK)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!eng_token_bytes(fuzz_tok, ids[i], NULL))
            abort();
    char *out = NULL;
    size_t len = 0;
    if (eng_detokenize(fuzz_tok, ids, n, false, &out, &len) != BASE_OK)
        abort();
    free(ids);
    if (base_utf8_valid(s, size)) {
        utf8proc_uint8_t *nfc = NULL;
        utf8proc_ssize_t nl =
            utf8proc_map(data, (utf8proc_ssize_t)size, &nfc, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        if (nl < 0 || (size_t)nl != len || memcmp(nfc, out, len) != 0)
            abort();
        free(nfc);
    } else {
        /* Invalid input: the bytes outside valid runs come back unchanged, so
         * a pure-ASCII-plus-invalid input round-trips exactly. */
        bool plain = true;
        for (size_t i = 0; i < size && plain; i++)
            plain = data[i] < 0x80 || (data[i] >= 0xf8);
        if (plain && (len != size || memcmp(out, data, size) != 0))
            abort();
    }
    free(out);
    return 0;
}
