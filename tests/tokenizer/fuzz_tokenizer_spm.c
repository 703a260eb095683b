/* libFuzzer harness for the SentencePiece-style (Gemma) tokenizer: the input
 * is "tokenizer.json \0 tokenizer_config.json \0 text". The files either load
 * or fail with a status and a message; a loaded tokenizer encodes the text
 * and a fixed string, and decodes the ids — never a crash, leak, hang or
 * out-of-bounds read. When no <unk> is involved, decoding must give the text
 * back byte for byte (U+2581 as a space). */
#include "engine.h"
#include "tokenizer_impl.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const eng_tokenizer *t, const char *s, size_t n) {
    int32_t *ids = NULL;
    size_t k = 0;
    if (eng_tokenize(t, s, n, &ids, &k) != BASE_OK)
        return;
    char *out = NULL;
    size_t len = 0;
    if (eng_detokenize(t, ids, k, false, &out, &len) != BASE_OK)
        abort(); /* every id the encoder wrote decodes */
    free(out);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *p = (const char *)data, *end = p + size;
    const char *z1 = memchr(p, 0, size);
    const char *cfg = z1 ? z1 + 1 : NULL;
    const char *z2 = cfg ? memchr(cfg, 0, (size_t)(end - cfg)) : NULL;
    size_t json_len = z1 ? (size_t)(z1 - p) : size;
    size_t cfg_len = cfg ? (size_t)((z2 ? z2 : end) - cfg) : 0;
    const char *text = z2 ? z2 + 1 : end;
    eng_error err = {0};
    eng_tokenizer *t = eng__tokenizer_from_json_config(p, json_len, cfg_len ? cfg : NULL, cfg_len,
                                                       "fuzz.json", &err);
    if (!t) {
        if (err.status == BASE_OK || err.msg[0] == '\0')
            abort();
        return 0;
    }
    static const char fixed[] = "int x = 1;  // caf\xc3\xa9 \xe2\x96\x81 \xff\xed\xa0\x80 <mask>\n";
    round_trip(t, fixed, sizeof fixed - 1);
    round_trip(t, text, (size_t)(end - text));
    eng_tokenizer_free(t);
    return 0;
}
