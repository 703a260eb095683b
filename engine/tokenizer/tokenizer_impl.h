/* engine tokenizer internals: a small JSON reader (fast enough for the 11 MB
 * tokenizer.json inside the daemon's start-up budget) and loaders shared by the
 * tokenizer, its CLI, its tests and its fuzz harness. Private to engine/. */
#ifndef INFILLD_ENGINE_TOKENIZER_IMPL_H
#define INFILLD_ENGINE_TOKENIZER_IMPL_H

#include "engine_impl.h"

#include <stddef.h>
#include <stdint.h>

/* ---- JSON ---------------------------------------------------------------- */

typedef enum eng__json_type {
    ENG_JSON_NULL = 0,
    ENG_JSON_BOOL,
    ENG_JSON_NUM,
    ENG_JSON_STR,
    ENG_JSON_ARR,
    ENG_JSON_OBJ,
} eng__json_type;

/* One value. Strings are decoded (escapes resolved, \u0000 allowed), NUL-
 * terminated and borrowed from the document; an object's items alternate key,
 * value (2 * n entries). */
typedef struct eng__json {
    eng__json_type type;
    uint32_t n; /* string bytes, array items or object members */
    union {
        bool b;
        double num;
        const char *s;
        struct eng__json *items;
    } u;
} eng__json;

typedef struct eng__json_doc eng__json_doc;

/* Parses text[0..len) (the buffer is copied). Returns NULL and fills err
 * (with byte offset) on malformed input or when nesting exceeds 128 levels. */
eng__json_doc *eng__json_parse(const char *text, size_t len, eng_error *err);
/* Same, parsing text[0..len) in place: takes ownership of the malloc'ed
 * buffer (freed with the document, or at once on failure). */
eng__json_doc *eng__json_parse_owned(char *text, size_t len, eng_error *err);
void eng__json_free(eng__json_doc *d); /* NULL-safe */
const eng__json *eng__json_root(const eng__json_doc *d);
/* Member of an object by key; NULL when absent or when o is not an object. */
const eng__json *eng__json_get(const eng__json *o, const char *key);
/* Typed accessors; NULL/fallback when v is NULL or of another type. */
const char *eng__json_str(const eng__json *v);
bool eng__json_bool(const eng__json *v, bool fallback);
bool eng__json_int(const eng__json *v, int64_t *out); /* integral numbers only */

/* ---- tokenizer loaders ---------------------------------------------------- */

/* Loads from the text of a tokenizer.json; name is used in messages. */
eng_tokenizer *eng__tokenizer_from_json(const char *text, size_t len, const char *name,
                                        eng_error *err);

/* Same, with the text of the tokenizer_config.json beside it (config NULL =
 * none); SentencePiece-style (byte_fallback) tokenizers take extra special
 * tokens from it, as eng_tokenizer_load does for a directory. */
eng_tokenizer *eng__tokenizer_from_json_config(const char *text, size_t len, const char *config,
                                               size_t config_len, const char *name, eng_error *err);

/* GGUF token types (tokenizer.ggml.token_type). */
enum {
    ENG__TT_NORMAL = 1,
    ENG__TT_UNKNOWN = 2,
    ENG__TT_CONTROL = 3,
    ENG__TT_USER_DEFINED = 4,
    ENG__TT_UNUSED = 5,
    ENG__TT_BYTE = 6,
};

/* Split regex of a llama.cpp pre-tokenizer name (tokenizer.ggml.pre), NULL
 * when unknown; *nfc says whether the family's tokenizer.json normalises NFC. */
const char *eng__tok_pre_regex(const char *pre, bool *nfc);

/* Builds a byte-level BPE tokenizer from GGUF metadata: tokens in byte-level
 * form (CONTROL / USER_DEFINED tokens as raw text, which become special /
 * matchable added tokens; UNUSED ones such as the [PAD i] padding are left
 * out), types per token (NULL = all normal), merges "a b" by rank, and the
 * pre-tokenizer name. name is used in messages. */
eng_tokenizer *eng__tokenizer_from_gguf(const char *name, const char *pre,
                                        const eng__gg_str *tokens, size_t n_tokens,
                                        const int32_t *types, const eng__gg_str *merges,
                                        size_t n_merges, eng_error *err);

/* Builds a SentencePiece-style BPE (byte fallback, U+2581 for a space) from
 * GGUF metadata (tokenizer.ggml.model "gemma4" or "llama"): tokens as pieces
 * (BYTE ones spell <0xNN>; CONTROL ones become special added tokens,
 * USER_DEFINED ones matchable added tokens), scores (NULL = none), types
 * (NULL = all normal), merges "a b" by rank when present, else merges derived
 * from the scores; add_space_prefix prepends U+2581 to each segment. */
eng_tokenizer *eng__tokenizer_from_gguf_spm(const char *name, const eng__gg_str *tokens,
                                            size_t n_tokens, const float *scores,
                                            const int32_t *types, const eng__gg_str *merges,
                                            size_t n_merges, bool add_space_prefix, eng_error *err);

/* The tokenizer of a GGUF file's metadata (engine/arch/model.c). */
eng_tokenizer *eng__tokenizer_load_gguf(const char *path, eng_error *err);

/* Appends the JSON string literal for bytes s[0..n) to b; invalid UTF-8 bytes
 * become U+FFFD (JSON cannot carry them). */
base_status eng__json_write_str(base_buf *b, const char *s, size_t n);

#endif
