/* The tiny model's real Qwen tokenizer: the FIM markers are added tokens that
 * are NOT special (so skip_special detokenising keeps their text, the cause of
 * ghost text showing <|fim_suffix|>), and eng_token_is_added, which the
 * pipeline strips from every completion (docs/SAMPLERS.md), covers them.
 * Skipped (77) when the tiny_model target has not been built. */
#include "check.h"
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    const char *dir = TINY_MODEL_DIR;
    char cfg[4096];
    snprintf(cfg, sizeof cfg, "%s/tokenizer.json", dir);
    if (access(cfg, R_OK) != 0) {
        fprintf(stderr, "no tokenizer at %s (build tiny_model): skipped\n", dir);
        return 77;
    }
    eng_error err = {0};
    eng_tokenizer *t = eng_tokenizer_load(dir, &err);
    CHECK(t != NULL);
    if (!t)
        return check_finish("test_special_tokens");
    const char *markers[] = {"<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
                             "<|endoftext|>"};
    for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
        int32_t id = eng_token_special_id(t, markers[i]);
        CHECK(id >= 0);
        CHECK(eng_token_is_added(t, id));
    }
    int32_t fim = eng_token_special_id(t, "<|fim_suffix|>");
    /* skip_special alone keeps the marker's text: stripping must not rely on it. */
    char *out = NULL;
    size_t len = 0;
    CHECK_EQ_I(eng_detokenize(t, &fim, 1, true, &out, &len), BASE_OK);
    CHECK_STR(out ? out : "", "<|fim_suffix|>");
    free(out);
    /* Ordinary code tokens are not added. */
    int32_t *ids = NULL;
    size_t n = 0;
    CHECK_EQ_I(eng_tokenize(t, "def f(x): return x", 18, &ids, &n), BASE_OK);
    CHECK(n > 0);
    for (size_t i = 0; i < n; i++)
        CHECK(!eng_token_is_added(t, ids[i]));
    free(ids);
    CHECK(!eng_token_is_added(t, -1));
    CHECK(!eng_token_is_added(NULL, fim));
    eng_tokenizer_free(t);
    return check_finish("test_special_tokens");
}
