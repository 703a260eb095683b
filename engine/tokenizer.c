/* engine tokenizer: Hugging Face byte-level BPE (stub until the real one lands). */
#include "engine.h"

#include <stdio.h>

eng_tokenizer *eng_tokenizer_load(const char *dir, eng_error *err) {
    (void)dir;
    if (err) {
        err->status = BASE_ERR_UNSUPPORTED;
        snprintf(err->msg, sizeof err->msg, "tokenizer: not implemented yet");
    }
    return NULL;
}

void eng_tokenizer_free(eng_tokenizer *t) { (void)t; }

base_status eng_tokenize(const eng_tokenizer *t, const char *text, size_t len, int32_t **ids,
                         size_t *n_ids) {
    (void)t;
    (void)text;
    (void)len;
    if (ids)
        *ids = NULL;
    if (n_ids)
        *n_ids = 0;
    return BASE_ERR_UNSUPPORTED;
}

base_status eng_detokenize(const eng_tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                           char **out, size_t *len) {
    (void)t;
    (void)ids;
    (void)n;
    (void)skip_special;
    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    return BASE_ERR_UNSUPPORTED;
}

const char *eng_token_bytes(const eng_tokenizer *t, int32_t id, size_t *len) {
    (void)t;
    (void)id;
    if (len)
        *len = 0;
    return NULL;
}

int32_t eng_token_special_id(const eng_tokenizer *t, const char *content) {
    (void)t;
    (void)content;
    return -1;
}

size_t eng_tokenizer_vocab_size(const eng_tokenizer *t) {
    (void)t;
    return 0;
}

int eng_cli_tokenize(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "infilld tokenize: not implemented yet\n");
    return 1;
}
