/* engine tokenizer: Hugging Face byte-level BPE (Qwen2/2.5/3, Dream, LLaDA).
 *
 * Pipeline of eng_tokenize, in the order of the Hugging Face `tokenizers`
 * library with encode_special_tokens (= transformers' split_special_tokens):
 *   1. non-special added tokens are cut out of the raw text (leftmost-longest);
 *      special ones are never matched, so user text cannot produce them;
 *   2. each remaining segment is split into maximal valid UTF-8 runs and
 *      invalid bytes; an invalid byte becomes its own byte-level token;
 *   3. a valid run is NFC-normalised (utf8proc) and split by the pre-tokenizer
 *      regexes (PCRE2, UTF + UCP, JIT; one stage per Split, Digits or
 *      ByteLevel(use_regex) entry, in order) into pieces, gaps kept
 *      ("Isolated");
 *   4. each piece is BPE-merged over raw bytes: vocabulary strings are mapped
 *      back from the GPT-2 byte↔unicode alphabet at load time, so no byte-level
 *      string is ever built while encoding.
 * Merges are a hash of (left id, right id) → (rank, merged id); a piece merges
 * its lowest-rank, leftmost pair until none applies (linear scan for short
 * pieces, a binary heap for long ones), and results are cached per piece.
 *
 * Invalid UTF-8 (which Hugging Face cannot even take as input): every byte
 * that starts no valid sequence (stray continuation bytes, truncated or
 * overlong sequences, surrogates, > U+10FFFF) is its own byte-level token;
 * the valid runs on either side are normalised and pre-tokenized separately,
 * so no piece spans an invalid byte. Decoding is exact: it writes each
 * token's raw bytes, so decode(encode(x)) == x byte for byte outside the
 * valid runs and == NFC(run) inside them (Hugging Face's decoder would turn
 * invalid sequences into U+FFFD instead). Likewise ids that end inside a
 * multi-byte character decode to the partial bytes.
 *
 * Thread safety: a loaded tokenizer is read-only except for the piece cache,
 * which has its own mutex, so eng_tokenize/eng_detokenize may be called from
 * several threads at once. */
#define _POSIX_C_SOURCE 200809L
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer_impl.h"

#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <utf8proc.h>

#define TOK_PRESENT 1u
#define TOK_ADDED 2u
#define TOK_SPECIAL 4u
#define TOK_BYTE 8u /* SentencePiece byte-fallback token <0xNN>: not in the vocab hash */

/* Pieces up to this many bytes merge by linear scan; longer ones use a heap. */
#define BPE_LINEAR_MAX 48
/* Ids at or above this are rejected as corrupt (the largest real vocabularies
 * have about 10^6 entries), so a bad file cannot make the id tables huge. */
#define TOK_MAX_ID (1 << 24)
/* Most regex pre-tokenizer stages in a Sequence. */
#define TOK_MAX_STAGES 4
/* Pieces longer than this are not cached. */
#define CACHE_PIECE_MAX 64
/* The piece cache's slots: about 4 per token, 256 .. 65536. A tiny test
 * vocabulary gets a tiny cache: each load of one (fuzz_tokenizer_json) spent
 * more time clearing and freeing 65,536 slots than parsing. */
#define CACHE_SLOTS_MAX 65536
#define CACHE_SLOTS_MIN 256

/* GPT-2 / Qwen2 pre-tokenizer patterns, for the forms that do not spell one. */
static const char TOK_GPT2_PATTERN[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char TOK_QWEN2_PATTERN[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
                                        "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                                        "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

typedef struct tok_added {
    uint32_t off, len; /* content bytes in the pool */
    int32_t id;
    bool special;
    bool lstrip, rstrip;
} tok_added;

typedef struct tok_cache_entry {
    uint64_t hash;
    char *key; /* piece bytes followed by ids (malloc'ed together); NULL = empty */
    uint32_t key_len, n_ids;
} tok_cache_entry;

struct eng_tokenizer {
    uint32_t n_ids;     /* highest id + 1 */
    uint32_t *tok_off;  /* [n_ids] byte offset of each token's raw bytes in pool */
    uint32_t *tok_len;  /* [n_ids] byte length */
    uint8_t *tok_flags; /* [n_ids] TOK_* */
    base_buf pool;      /* raw token bytes */

    uint64_t *vocab_slots; /* open addressing: hash tag << 32 | (id + 1); 0 = empty */
    uint32_t vocab_mask;

    uint64_t *merge_keys; /* (left << 32 | right); UINT64_MAX = empty */
    uint32_t *merge_rank; /* rank (line number in merges) */
    int32_t *merge_out;   /* id of left + right */
    uint32_t merge_mask;

    int32_t byte_id[256]; /* id of each single-byte token, -1 if none */
    int32_t unk_id;       /* -1 when none */
    bool nfc;
    bool ignore_merges;
    /* SentencePiece-style BPE (Gemma, Llama 2): vocabulary strings spell a
     * space as U+2581 and are stored with a plain space; characters outside
     * the vocabulary fall back to their <0xNN> byte tokens (byte_id); the
     * text is not pre-tokenized, so each segment between added tokens is one
     * BPE word. */
    bool spm;
    bool spm_prepend; /* normalizer Prepend("▁"): each segment starts with a space */
    bool fuse_unk;
    int32_t space_id;         /* spm: id of "▁", -1 if none */
    int32_t ascii_id[128];    /* spm: piece of each ASCII character, -1 if none */
    uint8_t spm_nosplit[256]; /* spm: see tok_spm_segment */

    tok_added *added; /* [n_added], longest content first */
    size_t n_added;
    /* 1 when a matchable (non-special) added token starts with the byte */
    uint8_t added_first[256];
    /* Matchable added tokens by content (index into added + 1; 0 = empty),
     * and per first byte the distinct content lengths, longest first
     * (added_lens[added_len_off[c] .. added_len_off[c + 1])): Gemma has 6,400
     * added tokens, most starting with '<', so a linear scan at every '<' or
     * newline would dominate encoding. */
    uint32_t *added_slots;
    uint32_t added_mask;
    uint32_t *added_lens;
    uint32_t added_len_off[257];

    /* Pre-tokenizer: regex splits applied in sequence, each to every piece of
     * the previous one (Split, Digits, ByteLevel's own regex); none = the whole
     * run is one piece. */
    pcre2_code *re[TOK_MAX_STAGES];
    int n_re;

    pthread_mutex_t cache_lock;
    tok_cache_entry *cache; /* [cache_mask + 1], direct-mapped by piece hash */
    size_t cache_mask;
};

/* ---- GPT-2 byte-level alphabet ---------------------------------------------
 * Printable Latin-1 bytes stand for themselves; the other 68 bytes map in
 * order to U+0100.. so every byte is a visible character. */

static int tok_unicode_to_byte(uint32_t cp) {
    if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 172) || (cp >= 174 && cp <= 255))
        return (int)cp;
    if (cp < 256 || cp >= 256 + 68)
        return -1;
    uint32_t k = cp - 256; /* k-th byte that is not printable */
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
        if (!printable && k-- == 0)
            return b;
    }
    return -1;
}

/* Converts a byte-level vocabulary string to raw bytes in out (room for n).
 * Returns the raw length, or SIZE_MAX when a character is outside the byte
 * alphabet (then the string is taken literally). */
static size_t tok_bytelevel_to_raw(const int16_t *u2b, const char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = base_utf8_decode(s + i, n - i, &cp);
        if (cp >= 324 || u2b[cp] < 0 || (l == 1 && (unsigned char)s[i] >= 0x80))
            return SIZE_MAX;
        out[o++] = (char)u2b[cp];
        i += l;
    }
    return o;
}

/* ---- SentencePiece pieces ----------------------------------------------------- */

#define TOK_SPM_SPACE "\xe2\x96\x81" /* U+2581, SentencePiece's space */

/* The byte of a "<0xNN>" piece (upper-case hex, as Hugging Face spells it), or -1. */
static int tok_spm_byte(const char *s, size_t n) {
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
        return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Copies s[0..n) to out (room for n) with every U+2581 as a space; returns
 * the new length. */
static size_t tok_spm_to_raw(const char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (n - i >= 3 && memcmp(s + i, TOK_SPM_SPACE, 3) == 0) {
            out[o++] = ' ';
            i += 3;
        } else {
            out[o++] = s[i++];
        }
    }
    return o;
}

static bool tok_spm_has_space(const char *s, size_t n) {
    for (size_t i = 0; i + 3 <= n; i++)
        if (memcmp(s + i, TOK_SPM_SPACE, 3) == 0)
            return true;
    return false;
}

/* ---- hashing ---------------------------------------------------------------- */

static uint64_t tok_hash(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

static uint64_t tok_mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint32_t tok_pow2(size_t n) {
    uint32_t c = 16;
    while (c < 2 * n)
        c <<= 1;
    return c;
}

static int32_t tok_vocab_find(const eng_tokenizer *t, const char *s, size_t n) {
    if (!t->vocab_slots)
        return -1;
    uint64_t h = tok_hash(s, n), tag = h >> 32 << 32;
    for (uint32_t i = (uint32_t)h & t->vocab_mask;; i = (i + 1) & t->vocab_mask) {
        uint64_t v = t->vocab_slots[i];
        if (!v)
            return -1;
        uint32_t id = (uint32_t)v - 1;
        if ((v >> 32 << 32) == tag && t->tok_len[id] == n &&
            memcmp(t->pool.data + t->tok_off[id], s, n) == 0)
            return (int32_t)id;
    }
}

static void tok_vocab_insert(eng_tokenizer *t, uint32_t id) {
    const char *s = t->pool.data + t->tok_off[id];
    size_t n = t->tok_len[id];
    if (t->tok_flags[id] & TOK_BYTE)
        return; /* "a" is the piece a, not the fallback byte <0x61> */
    uint64_t h = tok_hash(s, n), tag = h >> 32 << 32;
    for (uint32_t i = (uint32_t)h & t->vocab_mask;; i = (i + 1) & t->vocab_mask) {
        uint64_t v = t->vocab_slots[i];
        if (!v) {
            t->vocab_slots[i] = tag | (id + 1);
            return;
        }
        uint32_t o = (uint32_t)v - 1;
        if ((v >> 32 << 32) == tag && t->tok_len[o] == n &&
            memcmp(t->pool.data + t->tok_off[o], s, n) == 0)
            return; /* duplicate string: the first id wins */
    }
}

/* Rank and result of merging (a, b); false when the pair does not merge. */
static inline bool tok_merge_find(const eng_tokenizer *t, int32_t a, int32_t b, uint32_t *rank,
                                  int32_t *out) {
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    for (uint32_t i = (uint32_t)tok_mix64(key) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
        uint64_t k = t->merge_keys[i];
        if (k == key) {
            *rank = t->merge_rank[i];
            *out = t->merge_out[i];
            return true;
        }
        if (k == UINT64_MAX)
            return false;
    }
}

/* Inserts a merge; a pair seen before keeps its first (lowest) rank. */
static void tok_merge_insert(eng_tokenizer *t, int32_t a, int32_t b, uint32_t rank, int32_t out) {
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    for (uint32_t i = (uint32_t)tok_mix64(key) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
        if (t->merge_keys[i] == key)
            return;
        if (t->merge_keys[i] == UINT64_MAX) {
            t->merge_keys[i] = key;
            t->merge_rank[i] = rank;
            t->merge_out[i] = out;
            return;
        }
    }
}

/* ---- construction ------------------------------------------------------------ */

static void tok_set_err(eng_error *err, base_status st, const char *fmt, ...) BASE_PRINTF(3, 4);
static void tok_set_err(eng_error *err, base_status st, const char *fmt, ...) {
    if (!err)
        return;
    err->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

static eng_tokenizer *tok_new(void) {
    eng_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    base_buf_init(&t->pool);
    t->unk_id = -1;
    t->space_id = -1;
    for (int i = 0; i < 256; i++)
        t->byte_id[i] = -1;
    pthread_mutex_init(&t->cache_lock, NULL);
    return t;
}

/* Makes room for ids < n. */
static bool tok_reserve_ids(eng_tokenizer *t, uint32_t n) {
    if (n <= t->n_ids)
        return true;
    uint32_t *off = realloc(t->tok_off, n * sizeof *off);
    if (!off)
        return false;
    t->tok_off = off;
    uint32_t *len = realloc(t->tok_len, n * sizeof *len);
    if (!len)
        return false;
    t->tok_len = len;
    uint8_t *fl = realloc(t->tok_flags, n);
    if (!fl)
        return false;
    t->tok_flags = fl;
    for (uint32_t i = t->n_ids; i < n; i++) {
        off[i] = 0;
        len[i] = 0;
        fl[i] = 0;
    }
    t->n_ids = n;
    return true;
}

/* Sets the bytes of id (< TOK_MAX_ID). */
static bool tok_set_token(eng_tokenizer *t, int64_t id, const char *s, size_t n, uint8_t flags) {
    if (id < 0 || id >= TOK_MAX_ID || n >= UINT32_MAX || t->pool.len + n >= UINT32_MAX)
        return false;
    if (!tok_reserve_ids(t, (uint32_t)id + 1))
        return false;
    t->tok_off[id] = (uint32_t)t->pool.len;
    t->tok_len[id] = (uint32_t)n;
    t->tok_flags[id] |= flags | TOK_PRESENT;
    return base_buf_append(&t->pool, s, n) == BASE_OK;
}

/* Vocabulary from (string, id) pairs in byte-level form. */
typedef struct tok_builder {
    eng_tokenizer *t;
    int16_t u2b[324];
    bool spm;  /* strings are SentencePiece pieces, not byte-level */
    char *tmp; /* scratch for byte-level → raw conversions */
    size_t tmp_cap;
    const char *name;
    eng_error *err;
} tok_builder;

static bool tok_tmp(tok_builder *b, size_t n) {
    if (n <= b->tmp_cap)
        return true;
    char *p = realloc(b->tmp, n);
    if (!p)
        return false;
    b->tmp = p;
    b->tmp_cap = n;
    return true;
}

static bool tok_add_vocab(tok_builder *b, const char *s, size_t n, int64_t id) {
    if (!tok_tmp(b, n + 1))
        return false;
    bool ok;
    int byte = b->spm ? tok_spm_byte(s, n) : -1;
    if (byte >= 0) {
        char c = (char)byte;
        ok = tok_set_token(b->t, id, &c, 1, TOK_BYTE);
        if (ok && b->t->byte_id[byte] < 0)
            b->t->byte_id[byte] = (int32_t)id;
    } else if (b->spm) {
        ok = tok_set_token(b->t, id, b->tmp, tok_spm_to_raw(s, n, b->tmp), 0);
    } else {
        size_t raw = tok_bytelevel_to_raw(b->u2b, s, n, b->tmp);
        ok = raw == SIZE_MAX ? tok_set_token(b->t, id, s, n, 0)
                             : tok_set_token(b->t, id, b->tmp, raw, 0);
    }
    if (!ok)
        tok_set_err(b->err, BASE_ERR_MODEL, "%s: bad vocabulary entry (id %lld)", b->name,
                    (long long)id);
    return ok;
}

/* Id of a byte-level string in the vocabulary, or -1. */
static int32_t tok_lookup_bl(tok_builder *b, const char *s, size_t n) {
    if (!tok_tmp(b, n + 1))
        return -1;
    if (b->spm) {
        int byte = tok_spm_byte(s, n);
        if (byte >= 0)
            return b->t->byte_id[byte];
        return tok_vocab_find(b->t, b->tmp, tok_spm_to_raw(s, n, b->tmp));
    }
    size_t raw = tok_bytelevel_to_raw(b->u2b, s, n, b->tmp);
    return raw == SIZE_MAX ? tok_vocab_find(b->t, s, n) : tok_vocab_find(b->t, b->tmp, raw);
}

/* Hashes the vocabulary once every model token is in. */
static bool tok_index_vocab(eng_tokenizer *t) {
    uint32_t cap = tok_pow2(t->n_ids);
    t->vocab_slots = calloc(cap, sizeof *t->vocab_slots);
    if (!t->vocab_slots)
        return false;
    t->vocab_mask = cap - 1;
    for (uint32_t id = 0; id < t->n_ids; id++)
        if (t->tok_flags[id] & TOK_PRESENT)
            tok_vocab_insert(t, id);
    if (t->spm) { /* byte_id holds the <0xNN> tokens, set while reading them */
        t->space_id = tok_vocab_find(t, " ", 1);
        for (int c = 0; c < 128; c++) {
            char ch = (char)c;
            t->ascii_id[c] = tok_vocab_find(t, &ch, 1);
        }
        for (uint32_t id = 0; id < t->n_ids; id++) {
            if ((t->tok_flags[id] & TOK_BYTE) || !(t->tok_flags[id] & TOK_PRESENT))
                continue;
            const char *s = t->pool.data + t->tok_off[id];
            for (uint32_t k = 1; k < t->tok_len[id]; k++)
                if (s[k] == ' ' && s[k - 1] != ' ')
                    t->spm_nosplit[(unsigned char)s[k - 1]] = 1;
        }
        return true;
    }
    for (int c = 0; c < 256; c++) {
        char ch = (char)c;
        t->byte_id[c] = tok_vocab_find(t, &ch, 1);
    }
    return true;
}

static bool tok_alloc_merges(eng_tokenizer *t, size_t n) {
    uint32_t cap = tok_pow2(n);
    t->merge_keys = malloc(cap * sizeof *t->merge_keys);
    t->merge_rank = malloc(cap * sizeof *t->merge_rank);
    t->merge_out = malloc(cap * sizeof *t->merge_out);
    if (!t->merge_keys || !t->merge_rank || !t->merge_out)
        return false;
    memset(t->merge_keys, 0xff, cap * sizeof *t->merge_keys);
    t->merge_mask = cap - 1;
    return true;
}

/* One merge given as its two byte-level halves. */
static bool tok_add_merge(tok_builder *b, const char *l, size_t ln, const char *r, size_t rn,
                          uint32_t rank) {
    int32_t a = tok_lookup_bl(b, l, ln), c = tok_lookup_bl(b, r, rn);
    if (a < 0 || c < 0) {
        tok_set_err(b->err, BASE_ERR_MODEL, "%s: merge %u uses a token missing from the vocabulary",
                    b->name, rank);
        return false;
    }
    eng_tokenizer *t = b->t;
    if ((t->tok_flags[a] | t->tok_flags[c]) & TOK_BYTE) {
        /* Hugging Face would look up "<0xNN>..." as a string; no real
         * vocabulary has such a piece. */
        tok_set_err(b->err, BASE_ERR_UNSUPPORTED, "%s: merge %u joins a byte-fallback token",
                    b->name, rank);
        return false;
    }
    size_t la = t->tok_len[a], lc = t->tok_len[c];
    if (!tok_tmp(b, la + lc + 1))
        return false;
    memcpy(b->tmp, t->pool.data + t->tok_off[a], la);
    memcpy(b->tmp + la, t->pool.data + t->tok_off[c], lc);
    int32_t out = tok_vocab_find(t, b->tmp, la + lc);
    if (out < 0) {
        tok_set_err(b->err, BASE_ERR_MODEL,
                    "%s: merge %u produces a token missing from the vocabulary", b->name, rank);
        return false;
    }
    tok_merge_insert(t, a, c, rank, out);
    return true;
}

static bool tok_add_added(eng_tokenizer *t, const char *content, size_t n, int64_t id, bool special,
                          bool lstrip, bool rstrip) {
    if (n == 0 ||
        !tok_set_token(t, id, content, n, (uint8_t)(TOK_ADDED | (special ? TOK_SPECIAL : 0))))
        return false;
    tok_added *a = realloc(t->added, (t->n_added + 1) * sizeof *a);
    if (!a)
        return false;
    t->added = a;
    a[t->n_added++] = (tok_added){.off = t->tok_off[id],
                                  .len = (uint32_t)n,
                                  .id = (int32_t)id,
                                  .special = special,
                                  .lstrip = lstrip,
                                  .rstrip = rstrip};
    if (t->spm && tok_spm_has_space(content, n)) {
        /* Matched as written (Gemma's "\u2581\u2581" tokens match U+2581 text)
         * but decoded like every piece, U+2581 as a space. */
        char *raw = malloc(n);
        bool ok = raw && tok_set_token(t, id, raw, tok_spm_to_raw(content, n, raw), 0);
        free(raw);
        return ok;
    }
    return true;
}

static int tok_added_cmp(const void *x, const void *y) {
    const tok_added *a = x, *b = y;
    if (a->len != b->len)
        return a->len > b->len ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Appends a regex stage to the pre-tokenizer. */
static bool tok_compile(eng_tokenizer *t, const char *pattern, const char *name, eng_error *err) {
    int ec;
    PCRE2_SIZE eo;
    if (t->n_re == TOK_MAX_STAGES) {
        tok_set_err(err, BASE_ERR_UNSUPPORTED, "%s: more than %d pre-tokenizer splits", name,
                    TOK_MAX_STAGES);
        return false;
    }
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &ec, &eo, NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(ec, msg, sizeof msg);
        tok_set_err(err, BASE_ERR_UNSUPPORTED, "%s: pre-tokenizer regex at offset %zu: %s", name,
                    (size_t)eo, (const char *)msg);
        return false;
    }
    /* Without JIT (e.g. a hardened kernel) the interpreter gives the same result. */
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    t->re[t->n_re++] = re;
    return true;
}

/* Final steps shared by every form: added-token order and cache. */
static bool tok_finish(eng_tokenizer *t) {
    /* qsort's array must not be NULL even for 0 elements (UBSan, found by
     * fuzz_tokenizer_json: a file without added_tokens). */
    if (t->n_added > 1)
        qsort(t->added, t->n_added, sizeof *t->added, tok_added_cmp);
    uint32_t cap = tok_pow2(t->n_added);
    t->added_slots = calloc(cap, sizeof *t->added_slots);
    t->added_lens = malloc((t->n_added ? t->n_added : 1) * sizeof *t->added_lens);
    if (!t->added_slots || !t->added_lens)
        return false;
    t->added_mask = cap - 1;
    /* Per first byte, count then fill the distinct lengths; the sort above is
     * longest first, so each byte's list comes out in that order. */
    uint32_t count[256] = {0}, last[256] = {0};
    for (size_t i = 0; i < t->n_added; i++) {
        const tok_added *a = &t->added[i];
        if (a->special)
            continue;
        unsigned char c = (unsigned char)t->pool.data[a->off];
        t->added_first[c] = 1;
        if (last[c] != a->len)
            count[c]++;
        last[c] = a->len;
        const char *s = t->pool.data + a->off;
        for (uint32_t k = (uint32_t)tok_hash(s, a->len) & t->added_mask;;
             k = (k + 1) & t->added_mask) {
            uint32_t v = t->added_slots[k];
            if (!v) {
                t->added_slots[k] = (uint32_t)i + 1;
                break;
            }
            const tok_added *o = &t->added[v - 1];
            if (o->len == a->len && memcmp(t->pool.data + o->off, s, a->len) == 0)
                break; /* same content: the first (lower id) wins */
        }
    }
    t->added_len_off[0] = 0;
    for (int c = 0; c < 256; c++)
        t->added_len_off[c + 1] = t->added_len_off[c] + count[c];
    uint32_t fill[256];
    memcpy(fill, t->added_len_off, sizeof fill);
    memset(last, 0, sizeof last);
    for (size_t i = 0; i < t->n_added; i++) {
        const tok_added *a = &t->added[i];
        unsigned char c = (unsigned char)t->pool.data[a->off];
        if (!a->special && last[c] != a->len)
            t->added_lens[fill[c]++] = a->len;
        if (!a->special)
            last[c] = a->len;
    }
    size_t slots = CACHE_SLOTS_MIN;
    while (slots < CACHE_SLOTS_MAX && slots < 4 * (size_t)t->n_ids)
        slots *= 2;
    t->cache = calloc(slots, sizeof *t->cache);
    t->cache_mask = slots - 1;
    return t->cache != NULL;
}

/* The matchable added token spelled s[0..n), or NULL. */
static const tok_added *tok_added_lookup(const eng_tokenizer *t, const char *s, size_t n) {
    for (uint32_t k = (uint32_t)tok_hash(s, n) & t->added_mask;; k = (k + 1) & t->added_mask) {
        uint32_t v = t->added_slots[k];
        if (!v)
            return NULL;
        const tok_added *a = &t->added[v - 1];
        if (a->len == n && memcmp(t->pool.data + a->off, s, n) == 0)
            return a;
    }
}

static void tok_builder_init(tok_builder *b, eng_tokenizer *t, const char *name, eng_error *err) {
    memset(b, 0, sizeof *b);
    b->t = t;
    b->name = name;
    b->err = err;
    for (uint32_t cp = 0; cp < 324; cp++)
        b->u2b[cp] = (int16_t)tok_unicode_to_byte(cp);
}

/* Pre-tokenizer of tokenizer.json: a Sequence (or one) of Split (Regex,
 * Isolated), Digits and ByteLevel, each becoming a regex stage in order. */
static bool tok_json_pretok(eng_tokenizer *t, const eng__json *pt, const char *name,
                            eng_error *err) {
    const eng__json *list = pt;
    size_t n = 1;
    const char *type = eng__json_str(eng__json_get(pt, "type"));
    if (type && strcmp(type, "Sequence") == 0) {
        list = eng__json_get(pt, "pretokenizers");
        if (!list || list->type != ENG_JSON_ARR) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: pre_tokenizer Sequence without a list", name);
            return false;
        }
        n = list->n;
        list = list->u.items;
    }
    for (size_t i = 0; i < n; i++) {
        const eng__json *p = &list[i];
        type = eng__json_str(eng__json_get(p, "type"));
        if (type && strcmp(type, "Split") == 0) {
            const eng__json *pat = eng__json_get(p, "pattern");
            const char *re = eng__json_str(eng__json_get(pat, "Regex"));
            const char *behavior = eng__json_str(eng__json_get(p, "behavior"));
            if (!re || eng__json_bool(eng__json_get(p, "invert"), false) ||
                (behavior && strcmp(behavior, "Isolated") != 0)) {
                tok_set_err(err, BASE_ERR_UNSUPPORTED,
                            "%s: Split pre-tokenizers need a Regex pattern, behavior Isolated "
                            "and no invert",
                            name);
                return false;
            }
            if (!tok_compile(t, re, name, err))
                return false;
        } else if (type && strcmp(type, "Digits") == 0) {
            /* Hugging Face splits on char::is_numeric, i.e. \p{N}. */
            bool one = eng__json_bool(eng__json_get(p, "individual_digits"), false);
            if (!tok_compile(t, one ? "\\p{N}" : "\\p{N}+", name, err))
                return false;
        } else if (type && strcmp(type, "ByteLevel") == 0) {
            if (eng__json_bool(eng__json_get(p, "add_prefix_space"), false)) {
                tok_set_err(err, BASE_ERR_UNSUPPORTED, "%s: ByteLevel add_prefix_space", name);
                return false;
            }
            if (eng__json_bool(eng__json_get(p, "use_regex"), true) &&
                !tok_compile(t, TOK_GPT2_PATTERN, name, err))
                return false;
        } else {
            tok_set_err(err, BASE_ERR_UNSUPPORTED, "%s: pre-tokenizer type %s not supported", name,
                        type ? type : "(none)");
            return false;
        }
    }
    return true;
}

static bool tok_json_normalizer(eng_tokenizer *t, const eng__json *nm, const char *name,
                                eng_error *err) {
    if (!nm || nm->type == ENG_JSON_NULL)
        return true;
    const char *type = eng__json_str(eng__json_get(nm, "type"));
    const eng__json *list = nm;
    size_t n = 1;
    if (type && strcmp(type, "Sequence") == 0) {
        list = eng__json_get(nm, "normalizers");
        if (!list || list->type != ENG_JSON_ARR)
            goto unsupported;
        n = list->n;
        list = list->u.items;
    }
    for (size_t i = 0; i < n; i++) {
        type = eng__json_str(eng__json_get(&list[i], "type"));
        if (!type || strcmp(type, "NFC") != 0)
            goto unsupported;
        t->nfc = true;
    }
    return true;
unsupported:
    tok_set_err(err, BASE_ERR_UNSUPPORTED, "%s: normalizer %s not supported (NFC only)", name,
                type ? type : "(none)");
    return false;
}

static bool tok_json_is(const eng__json *o, const char *key, const char *want) {
    const char *v = eng__json_str(eng__json_get(o, key));
    return v && strcmp(v, want) == 0;
}

/* Normalizer, pre-tokenizer and decoder of a SentencePiece-style BPE as
 * Gemma's tokenizer.json spells them: Replace(" " -> U+2581), optionally with
 * Prepend(U+2581); no pre-tokenizer, or a Split on " " (which finds no space
 * once the normalizer has replaced them all); a decoder that undoes exactly
 * that: Replace(U+2581 -> " "), ByteFallback, optionally Fuse. Anything else
 * (Metaspace, Strip, ...) would tokenize or decode differently: refused. */
static bool tok_json_spm(eng_tokenizer *t, const eng__json *root, const char *name,
                         eng_error *err) {
    const eng__json *nm = eng__json_get(root, "normalizer"), *list = nm;
    size_t n = nm && nm->type == ENG_JSON_OBJ ? 1 : 0;
    if (tok_json_is(nm, "type", "Sequence")) {
        list = eng__json_get(nm, "normalizers");
        n = list && list->type == ENG_JSON_ARR ? list->n : 0;
        list = n ? list->u.items : NULL;
    }
    bool replace = false;
    for (size_t i = 0; i < n; i++) {
        const eng__json *x = &list[i];
        if (tok_json_is(x, "type", "Replace") &&
            tok_json_is(eng__json_get(x, "pattern"), "String", " ") &&
            tok_json_is(x, "content", TOK_SPM_SPACE))
            replace = true;
        else if (tok_json_is(x, "type", "Prepend") && tok_json_is(x, "prepend", TOK_SPM_SPACE))
            t->spm_prepend = true;
        else
            replace = false, n = 0;
    }
    if (!replace) {
        tok_set_err(err, BASE_ERR_UNSUPPORTED,
                    "%s: byte_fallback BPE needs the normalizer Replace(\" \" -> \"\u2581\") "
                    "(optionally with Prepend(\"\u2581\")) and nothing else",
                    name);
        return false;
    }
    const eng__json *pt = eng__json_get(root, "pre_tokenizer");
    if (pt && pt->type != ENG_JSON_NULL &&
        !(tok_json_is(pt, "type", "Split") &&
          tok_json_is(eng__json_get(pt, "pattern"), "String", " ") &&
          !eng__json_bool(eng__json_get(pt, "invert"), false))) {
        tok_set_err(err, BASE_ERR_UNSUPPORTED,
                    "%s: byte_fallback BPE supports no pre-tokenizer or Split on \" \" only", name);
        return false;
    }
    const eng__json *dc = eng__json_get(root, "decoder");
    list = dc;
    n = dc && dc->type == ENG_JSON_OBJ ? 1 : 0;
    if (tok_json_is(dc, "type", "Sequence")) {
        list = eng__json_get(dc, "decoders");
        n = list && list->type == ENG_JSON_ARR ? list->n : 0;
        list = n ? list->u.items : NULL;
    }
    bool unspace = false, fallback = false, ok = n > 0;
    for (size_t i = 0; ok && i < n; i++) {
        const eng__json *x = &list[i];
        if (tok_json_is(x, "type", "Replace") &&
            tok_json_is(eng__json_get(x, "pattern"), "String", TOK_SPM_SPACE) &&
            tok_json_is(x, "content", " "))
            unspace = true;
        else if (tok_json_is(x, "type", "ByteFallback"))
            fallback = true;
        else
            ok = tok_json_is(x, "type", "Fuse");
    }
    if (!ok || !unspace || !fallback) {
        tok_set_err(err, BASE_ERR_UNSUPPORTED,
                    "%s: byte_fallback BPE needs the decoder Replace(\"\u2581\" -> \" \"), "
                    "ByteFallback, Fuse and nothing else",
                    name);
        return false;
    }
    return true;
}

/* Marks the token spelled content[0..n) special: an added token already, or a
 * vocabulary piece that becomes one. A name the vocabulary lacks is skipped
 * (transformers would append a new id the model has no embedding for). */
static bool tok_mark_special(tok_builder *b, const char *content, size_t n) {
    eng_tokenizer *t = b->t;
    for (size_t k = 0; k < t->n_added; k++) {
        tok_added *a = &t->added[k];
        if (a->len == n && memcmp(t->pool.data + a->off, content, n) == 0) {
            a->special = true;
            t->tok_flags[a->id] |= TOK_SPECIAL;
            return true;
        }
    }
    int32_t id = n ? tok_lookup_bl(b, content, n) : -1;
    return id < 0 || tok_add_added(t, content, n, id, true, false, false);
}

/* The content of a token named in tokenizer_config.json: a string or an
 * AddedToken object ({"content": ...}); NULL otherwise. */
static const eng__json *tok_config_content(const eng__json *v) {
    if (v && v->type == ENG_JSON_STR)
        return v;
    const eng__json *c = eng__json_get(v, "content");
    return c && c->type == ENG_JSON_STR ? c : NULL;
}

/* tokenizer_config.json next to a SentencePiece-style tokenizer.json. Gemma 4
 * declares its control tokens there (added_tokens_decoder, the *_token names,
 * additional_special_tokens, extra_special_tokens); transformers adds them to
 * the tokenizer as special tokens, so user text never produces them. Nothing
 * about them is known in advance: they come from the model's own files. */
static bool tok_json_config(tok_builder *b, const eng__json *cfg, const char *name,
                            eng_error *err) {
    eng_tokenizer *t = b->t;
    if (!cfg || cfg->type != ENG_JSON_OBJ)
        return true;
    const eng__json *dec = eng__json_get(cfg, "added_tokens_decoder");
    for (uint32_t i = 0; dec && dec->type == ENG_JSON_OBJ && i < dec->n; i++) {
        const eng__json *a = &dec->u.items[2 * i + 1];
        const eng__json *content = eng__json_get(a, "content");
        char *endp;
        errno = 0;
        long long id = strtoll(dec->u.items[2 * i].u.s, &endp, 10);
        bool special = eng__json_bool(eng__json_get(a, "special"), false);
        if (!content || content->type != ENG_JSON_STR || content->n == 0 || *endp || errno ||
            id < 0 || id >= TOK_MAX_ID) {
            tok_set_err(err, BASE_ERR_MODEL,
                        "%s: tokenizer_config.json: added token %u is malformed", name, i);
            return false;
        }
        bool known = (uint64_t)id < t->n_ids && (t->tok_flags[id] & TOK_ADDED);
        bool ok = known ? (!special || tok_mark_special(b, content->u.s, content->n))
                        : tok_add_added(t, content->u.s, content->n, id, special,
                                        eng__json_bool(eng__json_get(a, "lstrip"), false),
                                        eng__json_bool(eng__json_get(a, "rstrip"), false));
        if (!ok)
            goto nomem;
    }
    for (uint32_t i = 0; i < cfg->n; i++) {
        const eng__json *k = &cfg->u.items[2 * i], *v = &cfg->u.items[2 * i + 1], *c;
        bool named = k->n > 6 && strcmp(k->u.s + k->n - 6, "_token") == 0;
        bool lists = strcmp(k->u.s, "additional_special_tokens") == 0 ||
                     strcmp(k->u.s, "extra_special_tokens") == 0;
        if (named && (c = tok_config_content(v)) && !tok_mark_special(b, c->u.s, c->n))
            goto nomem;
        if (!lists || (v->type != ENG_JSON_ARR && v->type != ENG_JSON_OBJ))
            continue;
        bool obj = v->type == ENG_JSON_OBJ; /* {name: token} or [token, ...] */
        for (uint32_t j = 0; j < v->n; j++)
            if ((c = tok_config_content(&v->u.items[obj ? 2 * j + 1 : j])) &&
                !tok_mark_special(b, c->u.s, c->n))
                goto nomem;
    }
    return true;
nomem:
    tok_set_err(err, BASE_ERR_NOMEM, "%s: out of memory", name);
    return false;
}

/* Builds a tokenizer from a parsed tokenizer.json (and, for SentencePiece-
 * style ones, the tokenizer_config.json beside it, NULL when none); frees doc. */
/* Stands for a tokenizer_config.json that exists but cannot be read or
 * parsed: byte-level tokenizers do not use the file, SentencePiece-style
 * ones refuse to load without their special tokens. */
static const eng__json tok_bad_config;

static eng_tokenizer *tok_from_doc(eng__json_doc *doc, const eng__json *config, const char *name,
                                   eng_error *err) {
    tok_builder b;
    eng_tokenizer *t = tok_new();
    if (!t || !doc) {
        if (doc || !t)
            tok_set_err(err, BASE_ERR_NOMEM, "%s: out of memory", name);
        else if (err) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            tok_set_err(err, BASE_ERR_PARSE, "%s: %s", name, m);
        }
        goto fail;
    }
    tok_builder_init(&b, t, name, err);
    const eng__json *root = eng__json_root(doc);
    const eng__json *model = eng__json_get(root, "model");
    const char *mtype = eng__json_str(eng__json_get(model, "type"));
    const eng__json *vocab = eng__json_get(model, "vocab");
    const eng__json *merges = eng__json_get(model, "merges");
    if (!model || (mtype && strcmp(mtype, "BPE") != 0) || !vocab || vocab->type != ENG_JSON_OBJ ||
        !merges || merges->type != ENG_JSON_ARR) {
        tok_set_err(err, BASE_ERR_UNSUPPORTED, "%s: not a BPE tokenizer (model.type %s)", name,
                    mtype ? mtype : "missing");
        goto fail_b;
    }
    const char *csp = eng__json_str(eng__json_get(model, "continuing_subword_prefix"));
    const char *eows = eng__json_str(eng__json_get(model, "end_of_word_suffix"));
    if ((csp && *csp) || (eows && *eows)) {
        tok_set_err(err, BASE_ERR_UNSUPPORTED,
                    "%s: BPE with a subword prefix/suffix is not supported", name);
        goto fail_b;
    }
    /* byte_fallback: the SentencePiece-style BPE of Gemma (and Llama 2). */
    t->spm = b.spm = eng__json_bool(eng__json_get(model, "byte_fallback"), false);
    t->fuse_unk = eng__json_bool(eng__json_get(model, "fuse_unk"), false);
    t->ignore_merges = eng__json_bool(eng__json_get(model, "ignore_merges"), false);
    if (!tok_reserve_ids(t, vocab->n))
        goto fail_nomem;
    for (uint32_t i = 0; i < vocab->n; i++) {
        const eng__json *k = &vocab->u.items[2 * i], *v = &vocab->u.items[2 * i + 1];
        int64_t id;
        if (!eng__json_int(v, &id) || id < 0 || id >= TOK_MAX_ID) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: vocabulary entry %u has a bad id", name, i);
            goto fail_b;
        }
        if (!tok_add_vocab(&b, k->u.s, k->n, id))
            goto fail_b;
    }
    if (!tok_index_vocab(t) || !tok_alloc_merges(t, merges->n))
        goto fail_nomem;
    for (uint32_t i = 0; i < merges->n; i++) {
        const eng__json *m = &merges->u.items[i];
        if (m->type == ENG_JSON_STR) {
            const char *sp = memchr(m->u.s, ' ', m->n);
            if (!sp || memchr(sp + 1, ' ', m->n - (size_t)(sp + 1 - m->u.s))) {
                tok_set_err(err, BASE_ERR_MODEL, "%s: merge %u is not \"a b\"", name, i);
                goto fail_b;
            }
            if (!tok_add_merge(&b, m->u.s, (size_t)(sp - m->u.s), sp + 1,
                               m->n - (size_t)(sp + 1 - m->u.s), i))
                goto fail_b;
        } else if (m->type == ENG_JSON_ARR && m->n == 2 && m->u.items[0].type == ENG_JSON_STR &&
                   m->u.items[1].type == ENG_JSON_STR) {
            if (!tok_add_merge(&b, m->u.items[0].u.s, m->u.items[0].n, m->u.items[1].u.s,
                               m->u.items[1].n, i))
                goto fail_b;
        } else {
            tok_set_err(err, BASE_ERR_MODEL, "%s: merge %u is neither \"a b\" nor [a, b]", name, i);
            goto fail_b;
        }
    }
    const char *unk = eng__json_str(eng__json_get(model, "unk_token"));
    if (unk)
        t->unk_id = tok_lookup_bl(&b, unk, strlen(unk));

    const eng__json *added = eng__json_get(root, "added_tokens");
    if (added && added->type == ENG_JSON_ARR) {
        for (uint32_t i = 0; i < added->n; i++) {
            const eng__json *a = &added->u.items[i];
            const eng__json *content = eng__json_get(a, "content");
            int64_t id;
            if (!content || content->type != ENG_JSON_STR ||
                !eng__json_int(eng__json_get(a, "id"), &id) ||
                !tok_add_added(t, content->u.s, content->n, id,
                               eng__json_bool(eng__json_get(a, "special"), false),
                               eng__json_bool(eng__json_get(a, "lstrip"), false),
                               eng__json_bool(eng__json_get(a, "rstrip"), false))) {
                tok_set_err(err, BASE_ERR_MODEL, "%s: added token %u is malformed", name, i);
                goto fail_b;
            }
        }
    }
    if (t->spm) {
        if (config == &tok_bad_config) {
            tok_set_err(err, BASE_ERR_PARSE,
                        "%s: the tokenizer_config.json beside it cannot be read or parsed", name);
            goto fail_b;
        }
        if (!tok_json_spm(t, root, name, err) || !tok_json_config(&b, config, name, err))
            goto fail_b;
    } else {
        if (!tok_json_normalizer(t, eng__json_get(root, "normalizer"), name, err))
            goto fail_b;
        const eng__json *pt = eng__json_get(root, "pre_tokenizer");
        if (pt && pt->type != ENG_JSON_NULL && !tok_json_pretok(t, pt, name, err))
            goto fail_b;
    }
    if (!tok_finish(t))
        goto fail_nomem;
    free(b.tmp);
    eng__json_free(doc);
    return t;

fail_nomem:
    tok_set_err(err, BASE_ERR_NOMEM, "%s: out of memory", name);
fail_b:
    free(b.tmp);
fail:
    eng__json_free(doc);
    eng_tokenizer_free(t);
    return NULL;
}

eng_tokenizer *eng__tokenizer_from_json(const char *text, size_t len, const char *name,
                                        eng_error *err) {
    return tok_from_doc(eng__json_parse(text, len, err), NULL, name, err);
}

eng_tokenizer *eng__tokenizer_from_json_config(const char *text, size_t len, const char *config,
                                               size_t config_len, const char *name,
                                               eng_error *err) {
    eng__json_doc *cfg = NULL;
    if (config) {
        cfg = eng__json_parse(config, config_len, err);
        if (!cfg) {
            if (err) {
                char m[sizeof err->msg];
                snprintf(m, sizeof m, "%s", err->msg);
                tok_set_err(err, BASE_ERR_PARSE, "%s: tokenizer_config.json: %s", name, m);
            }
            return NULL;
        }
    }
    eng_tokenizer *t =
        tok_from_doc(eng__json_parse(text, len, err), cfg ? eng__json_root(cfg) : NULL, name, err);
    eng__json_free(cfg);
    return t;
}

/* ---- GGUF metadata ----------------------------------------------------------- */

/* llama.cpp names the pre-tokenizer instead of spelling it (llama-vocab.cpp's
 * LLAMA_VOCAB_PRE_TYPE_*); these are the Hugging Face tokenizer.json regexes
 * of the families behind each name (tests/tokenizer checks "qwen2" against the
 * Qwen tokenizer.json). */
static const char TOK_LLAMA3_PATTERN[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const char *eng__tok_pre_regex(const char *pre, bool *nfc) {
    static const struct {
        const char *name;
        const char *re;
        bool nfc;
    } tab[] = {
        {"qwen2", TOK_QWEN2_PATTERN, true},       {"deepseek-r1-qwen", TOK_QWEN2_PATTERN, true},
        {"llama-bpe", TOK_LLAMA3_PATTERN, false}, {"llama3", TOK_LLAMA3_PATTERN, false},
        {"smaug-bpe", TOK_LLAMA3_PATTERN, false}, {"gpt-2", TOK_GPT2_PATTERN, false},
        {"default", TOK_GPT2_PATTERN, false},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(tab); i++)
        if (strcmp(pre, tab[i].name) == 0) {
            if (nfc)
                *nfc = tab[i].nfc;
            return tab[i].re;
        }
    return NULL;
}

eng_tokenizer *eng__tokenizer_from_gguf(const char *name, const char *pre,
                                        const eng__gg_str *tokens, size_t n_tokens,
                                        const int32_t *types, const eng__gg_str *merges,
                                        size_t n_merges, eng_error *err) {
    tok_builder b;
    bool nfc = false;
    const char *re = eng__tok_pre_regex(pre, &nfc);
    if (!re) {
        tok_set_err(err, BASE_ERR_UNSUPPORTED,
                    "%s: tokenizer.ggml.pre '%s' is not a pre-tokenizer infilld knows (qwen2, "
                    "deepseek-r1-qwen, llama-bpe, llama3, smaug-bpe, gpt-2, default)",
                    name, pre);
        return NULL;
    }
    if (n_tokens == 0 || n_tokens >= TOK_MAX_ID) {
        tok_set_err(err, BASE_ERR_MODEL, "%s: tokenizer.ggml.tokens has %zu entries", name,
                    n_tokens);
        return NULL;
    }
    eng_tokenizer *t = tok_new();
    if (!t) {
        tok_set_err(err, BASE_ERR_NOMEM, "%s: out of memory", name);
        return NULL;
    }
    tok_builder_init(&b, t, name, err);
    if (!tok_reserve_ids(t, (uint32_t)n_tokens))
        goto fail_nomem;
    for (size_t i = 0; i < n_tokens; i++) {
        const int32_t ty = types ? types[i] : ENG__TT_NORMAL;
        if (ty < ENG__TT_NORMAL || ty > ENG__TT_BYTE) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: token %zu has unknown type %d", name, i, ty);
            goto fail;
        }
        if (ty == ENG__TT_UNUSED || ty == ENG__TT_CONTROL || ty == ENG__TT_USER_DEFINED)
            continue; /* padding is no token; added ones come after the vocabulary */
        if (tokens[i].n == 0 || tokens[i].n > 4096) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: token %zu has length %llu", name, i,
                        (unsigned long long)tokens[i].n);
            goto fail;
        }
        if (!tok_add_vocab(&b, tokens[i].s, (size_t)tokens[i].n, (int64_t)i))
            goto fail;
        if (ty == ENG__TT_UNKNOWN)
            t->unk_id = (int32_t)i;
    }
    if (!tok_index_vocab(t) || !tok_alloc_merges(t, n_merges ? n_merges : 1))
        goto fail_nomem;
    for (size_t i = 0; i < n_merges; i++) {
        const eng__gg_str *m = &merges[i];
        const char *sp = m->n ? memchr(m->s, ' ', (size_t)m->n) : NULL;
        if (!sp || sp == m->s || sp + 1 == m->s + m->n ||
            memchr(sp + 1, ' ', (size_t)(m->s + m->n - (sp + 1)))) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: tokenizer.ggml.merges[%zu] is not \"a b\"", name,
                        i);
            goto fail;
        }
        if (!tok_add_merge(&b, m->s, (size_t)(sp - m->s), sp + 1, (size_t)(m->s + m->n - (sp + 1)),
                           (uint32_t)i))
            goto fail;
    }
    for (size_t i = 0; i < n_tokens; i++) {
        const int32_t ty = types ? types[i] : ENG__TT_NORMAL;
        if (ty != ENG__TT_CONTROL && ty != ENG__TT_USER_DEFINED)
            continue;
        if (tokens[i].n == 0 || tokens[i].n > 4096 ||
            !tok_add_added(t, tokens[i].s, (size_t)tokens[i].n, (int64_t)i, ty == ENG__TT_CONTROL,
                           false, false)) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: added token %zu is malformed", name, i);
            goto fail;
        }
    }
    t->nfc = nfc;
    if (!tok_compile(t, re, name, err))
        goto fail;
    if (!tok_finish(t))
        goto fail_nomem;
    free(b.tmp);
    return t;
fail_nomem:
    tok_set_err(err, BASE_ERR_NOMEM, "%s: out of memory loading the tokenizer", name);
fail:
    free(b.tmp);
    eng_tokenizer_free(t);
    return NULL;
}

/* ---- GGUF metadata, SentencePiece-style (tokenizer.ggml.model gemma4 / llama) -- */

typedef struct tok_scored {
    float score;
    uint32_t id;
} tok_scored;

static int tok_score_cmp(const void *x, const void *y) {
    const tok_scored *a = x, *b = y;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Without tokenizer.ggml.merges (llama.cpp's "llama" files, converted from a
 * SentencePiece model): every split of a piece into two pieces is a merge,
 * ranked by the score of the result, highest first (ties: lower id), which is
 * llama.cpp's SPM rule of merging the adjacent pair whose union scores best,
 * leftmost first. Byte-fallback tokens take part in no merge. */
static bool tok_merges_from_scores(tok_builder *b, const float *scores) {
    eng_tokenizer *t = b->t;
    tok_scored *order = malloc((size_t)t->n_ids * sizeof *order);
    uint32_t *rank = malloc((size_t)t->n_ids * sizeof *rank);
    size_t n_pairs = 0;
    bool ok = order && rank;
    for (uint32_t i = 0; ok && i < t->n_ids; i++) {
        /* NaN would break the sort's order: it ranks last. */
        order[i] = (tok_scored){scores[i] == scores[i] ? scores[i] : -INFINITY, i};
        n_pairs += t->tok_len[i] > 1 ? t->tok_len[i] - 1 : 0;
    }
    if (ok) {
        qsort(order, t->n_ids, sizeof *order, tok_score_cmp);
        for (uint32_t r = 0; r < t->n_ids; r++)
            rank[order[r].id] = r;
        ok = tok_alloc_merges(t, n_pairs ? n_pairs : 1);
    }
    for (uint32_t id = 0; ok && id < t->n_ids; id++) {
        uint8_t f = t->tok_flags[id];
        if (!(f & TOK_PRESENT) || (f & TOK_BYTE))
            continue;
        const char *p = t->pool.data + t->tok_off[id];
        size_t n = t->tok_len[id];
        for (size_t k = 1; k < n; k++) {
            if (((unsigned char)p[k] & 0xC0) == 0x80)
                continue; /* inside a character */
            int32_t l = tok_vocab_find(t, p, k), r = tok_vocab_find(t, p + k, n - k);
            if (l >= 0 && r >= 0)
                tok_merge_insert(t, l, r, rank[id], (int32_t)id);
        }
    }
    free(order);
    free(rank);
    return ok;
}

eng_tokenizer *eng__tokenizer_from_gguf_spm(const char *name, const eng__gg_str *tokens,
                                            size_t n_tokens, const float *scores,
                                            const int32_t *types, const eng__gg_str *merges,
                                            size_t n_merges, bool add_space_prefix,
                                            eng_error *err) {
    if (n_tokens == 0 || n_tokens >= TOK_MAX_ID) {
        tok_set_err(err, BASE_ERR_MODEL, "%s: tokenizer.ggml.tokens has %zu entries", name,
                    n_tokens);
        return NULL;
    }
    if (!n_merges && !scores) {
        tok_set_err(err, BASE_ERR_MODEL,
                    "%s: a SentencePiece-style tokenizer needs tokenizer.ggml.merges or "
                    "tokenizer.ggml.scores",
                    name);
        return NULL;
    }
    tok_builder b;
    eng_tokenizer *t = tok_new();
    if (!t) {
        tok_set_err(err, BASE_ERR_NOMEM, "%s: out of memory", name);
        return NULL;
    }
    tok_builder_init(&b, t, name, err);
    t->spm = b.spm = true;
    t->fuse_unk = true; /* as Gemma's tokenizer.json and llama.cpp's SPM tokenizer */
    t->spm_prepend = add_space_prefix;
    if (!tok_reserve_ids(t, (uint32_t)n_tokens))
        goto fail_nomem;
    /* Every entry is a piece (control and user-defined ones too, as in the
     * tokenizer.json vocabulary), so merges may produce any of them. */
    for (size_t i = 0; i < n_tokens; i++) {
        const int32_t ty = types ? types[i] : ENG__TT_NORMAL;
        if (ty < ENG__TT_NORMAL || ty > ENG__TT_BYTE) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: token %zu has unknown type %d", name, i, ty);
            goto fail;
        }
        if (tokens[i].n == 0 || tokens[i].n > 4096) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: token %zu has length %llu", name, i,
                        (unsigned long long)tokens[i].n);
            goto fail;
        }
        if (ty == ENG__TT_BYTE && tok_spm_byte(tokens[i].s, (size_t)tokens[i].n) < 0) {
            tok_set_err(err, BASE_ERR_MODEL, "%s: byte token %zu is not <0xNN>", name, i);
            goto fail;
        }
        if (!tok_add_vocab(&b, tokens[i].s, (size_t)tokens[i].n, (int64_t)i))
            goto fail;
        if (ty == ENG__TT_UNKNOWN)
            t->unk_id = (int32_t)i;
    }
    if (!tok_index_vocab(t))
        goto fail_nomem;
    if (n_merges) {
        if (!tok_alloc_merges(t, n_merges))
            goto fail_nomem;
        for (size_t i = 0; i < n_merges; i++) {
            const eng__gg_str *m = &merges[i];
            const char *sp = m->n ? memchr(m->s, ' ', (size_t)m->n) : NULL;
            if (!sp || sp == m->s || sp + 1 == m->s + m->n ||
                memchr(sp + 1, ' ', (size_t)(m->s + m->n - (sp + 1)))) {
                tok_set_err(err, BASE_ERR_MODEL, "%s: tokenizer.ggml.merges[%zu] is not \"a b\"",
                            name, i);
                goto fail;
            }
            if (!tok_add_merge(&b, m->s, (size_t)(sp - m->s), sp + 1,
                               (size_t)(m->s + m->n - (sp + 1)), (uint32_t)i))
                goto fail;
        }
    } else if (!tok_merges_from_scores(&b, scores)) {
        goto fail_nomem;
    }
    for (size_t i = 0; i < n_tokens; i++) {
        const int32_t ty = types ? types[i] : ENG__TT_NORMAL;
        if ((ty == ENG__TT_CONTROL || ty == ENG__TT_USER_DEFINED) &&
            !tok_add_added(t, tokens[i].s, (size_t)tokens[i].n, (int64_t)i, ty == ENG__TT_CONTROL,
                           false, false))
            goto fail_nomem;
    }
    if (!tok_finish(t))
        goto fail_nomem;
    free(b.tmp);
    return t;
fail_nomem:
    tok_set_err(err, BASE_ERR_NOMEM, "%s: out of memory loading the tokenizer", name);
fail:
    free(b.tmp);
    eng_tokenizer_free(t);
    return NULL;
}

/* ---- vocab.json + merges.txt (+ added_tokens.json, tokenizer_config.json) ---- */

static char *tok_path(const char *dir, const char *file) {
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* Reads dir/file; *text = NULL when it does not exist. */
static base_status tok_read(const char *dir, const char *file, char **text, size_t *len) {
    char *p = tok_path(dir, file);
    if (!p)
        return BASE_ERR_NOMEM;
    *text = NULL;
    struct stat st;
    base_status s = BASE_OK;
    if (stat(p, &st) == 0)
        s = base_read_file(p, text, len);
    free(p);
    return s;
}

static eng__json_doc *tok_read_json(const char *dir, const char *file, bool *missing,
                                    eng_error *err) {
    char *text;
    size_t len;
    *missing = false;
    if (tok_read(dir, file, &text, &len) != BASE_OK) {
        tok_set_err(err, BASE_ERR_IO, "%s/%s: cannot read", dir, file);
        return NULL;
    }
    if (!text) {
        *missing = true;
        return NULL;
    }
    eng__json_doc *d = eng__json_parse(text, len, err);
    free(text);
    if (!d && err) {
        char m[sizeof err->msg];
        snprintf(m, sizeof m, "%s", err->msg);
        tok_set_err(err, BASE_ERR_PARSE, "%s/%s: %s", dir, file, m);
    }
    return d;
}

static eng_tokenizer *tok_load_vocab_merges(const char *dir, eng_error *err) {
    tok_builder b;
    bool missing;
    char *merges = NULL;
    size_t mlen = 0;
    eng__json_doc *vocab = NULL, *added = NULL, *config = NULL;
    eng_tokenizer *t = tok_new();
    if (!t)
        goto fail_nomem;
    tok_builder_init(&b, t, "vocab.json", err);
    vocab = tok_read_json(dir, "vocab.json", &missing, err);
    if (!vocab) {
        if (missing)
            tok_set_err(err, BASE_ERR_NOT_FOUND,
                        "%s: no tokenizer (neither tokenizer.json nor vocab.json + merges.txt)",
                        dir);
        goto fail;
    }
    const eng__json *v = eng__json_root(vocab);
    if (v->type != ENG_JSON_OBJ) {
        tok_set_err(err, BASE_ERR_MODEL, "%s/vocab.json: not an object", dir);
        goto fail;
    }
    if (!tok_reserve_ids(t, v->n))
        goto fail_nomem;
    for (uint32_t i = 0; i < v->n; i++) {
        int64_t id;
        if (!eng__json_int(&v->u.items[2 * i + 1], &id) || id < 0 || id >= TOK_MAX_ID) {
            tok_set_err(err, BASE_ERR_MODEL, "%s/vocab.json: entry %u has a bad id", dir, i);
            goto fail;
        }
        if (!tok_add_vocab(&b, v->u.items[2 * i].u.s, v->u.items[2 * i].n, id))
            goto fail;
    }
    if (tok_read(dir, "merges.txt", &merges, &mlen) != BASE_OK || !merges) {
        tok_set_err(err, BASE_ERR_NOT_FOUND, "%s/merges.txt: missing or unreadable", dir);
        goto fail;
    }
    size_t n_lines = 1;
    for (size_t i = 0; i < mlen; i++)
        n_lines += merges[i] == '\n';
    if (!tok_index_vocab(t) || !tok_alloc_merges(t, n_lines))
        goto fail_nomem;
    b.name = "merges.txt";
    uint32_t rank = 0;
    for (size_t i = 0, line = 0; i < mlen; line++) {
        size_t e = i;
        while (e < mlen && merges[e] != '\n')
            e++;
        size_t le = e;
        if (le > i && merges[le - 1] == '\r')
            le--;
        bool header = line == 0 && le - i >= 8 && memcmp(merges + i, "#version", 8) == 0;
        if (le > i && !header) {
            const char *sp = memchr(merges + i, ' ', le - i);
            if (!sp || sp == merges + i || sp + 1 == merges + le ||
                memchr(sp + 1, ' ', (size_t)(merges + le - (sp + 1)))) {
                tok_set_err(err, BASE_ERR_MODEL, "%s/merges.txt: line %zu is not \"a b\"", dir,
                            line + 1);
                goto fail;
            }
            if (!tok_add_merge(&b, merges + i, (size_t)(sp - (merges + i)), sp + 1,
                               (size_t)(merges + le - (sp + 1)), rank++))
                goto fail;
        }
        i = e + 1;
    }

    /* Special flags come from tokenizer_config.json's added_tokens_decoder;
     * tokens only listed in added_tokens.json count as special. */
    config = tok_read_json(dir, "tokenizer_config.json", &missing, err);
    if (!config && !missing)
        goto fail;
    const eng__json *dec =
        eng__json_get(config ? eng__json_root(config) : NULL, "added_tokens_decoder");
    for (uint32_t i = 0; dec && dec->type == ENG_JSON_OBJ && i < dec->n; i++) {
        const eng__json *a = &dec->u.items[2 * i + 1];
        const eng__json *content = eng__json_get(a, "content");
        char *endp;
        errno = 0;
        long long id = strtoll(dec->u.items[2 * i].u.s, &endp, 10);
        if (!content || content->type != ENG_JSON_STR || *endp || errno || id < 0 ||
            !tok_add_added(t, content->u.s, content->n, id,
                           eng__json_bool(eng__json_get(a, "special"), true),
                           eng__json_bool(eng__json_get(a, "lstrip"), false),
                           eng__json_bool(eng__json_get(a, "rstrip"), false))) {
            tok_set_err(err, BASE_ERR_MODEL,
                        "%s/tokenizer_config.json: added token %u is malformed", dir, i);
            goto fail;
        }
    }
    added = tok_read_json(dir, "added_tokens.json", &missing, err);
    if (!added && !missing)
        goto fail;
    const eng__json *at = added ? eng__json_root(added) : NULL;
    for (uint32_t i = 0; at && at->type == ENG_JSON_OBJ && i < at->n; i++) {
        const eng__json *k = &at->u.items[2 * i];
        int64_t id;
        if (!eng__json_int(&at->u.items[2 * i + 1], &id) || id < 0 || id >= TOK_MAX_ID) {
            tok_set_err(err, BASE_ERR_MODEL, "%s/added_tokens.json: entry %u has a bad id", dir, i);
            goto fail;
        }
        if ((uint64_t)id < t->n_ids && (t->tok_flags[id] & TOK_ADDED))
            continue; /* already described by tokenizer_config.json */
        if (!tok_add_added(t, k->u.s, k->n, id, true, false, false))
            goto fail_nomem;
    }
    t->nfc = true;
    if (!tok_compile(t, TOK_QWEN2_PATTERN, "vocab.json", err))
        goto fail;
    if (!tok_finish(t))
        goto fail_nomem;
    free(b.tmp);
    free(merges);
    eng__json_free(vocab);
    eng__json_free(added);
    eng__json_free(config);
    return t;

fail_nomem:
    tok_set_err(err, BASE_ERR_NOMEM, "%s: out of memory loading the tokenizer", dir);
fail:
    if (t)
        free(b.tmp);
    free(merges);
    eng__json_free(vocab);
    eng__json_free(added);
    eng__json_free(config);
    eng_tokenizer_free(t);
    return NULL;
}

eng_tokenizer *eng_tokenizer_load(const char *dir, eng_error *err) {
    if (!dir) {
        tok_set_err(err, BASE_ERR_INVALID, "tokenizer: no directory given");
        return NULL;
    }
    struct stat st;
    char *path = NULL;
    if (stat(dir, &st) != 0) {
        tok_set_err(err, BASE_ERR_NOT_FOUND, "%s: %s", dir, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        path = tok_path(dir, "tokenizer.json");
        if (!path) {
            tok_set_err(err, BASE_ERR_NOMEM, "tokenizer: out of memory");
            return NULL;
        }
        if (stat(path, &st) != 0) {
            free(path);
            return tok_load_vocab_merges(dir, err);
        }
    }
    size_t dn = strlen(dir);
    if (!path && dn > 5 && strcmp(dir + dn - 5, ".gguf") == 0)
        return eng__tokenizer_load_gguf(dir, err); /* a GGUF file carries its tokenizer */
    const char *file = path ? path : dir;          /* a tokenizer.json given directly */
    char *text;
    size_t len;
    if (base_read_file(file, &text, &len) != BASE_OK) {
        tok_set_err(err, BASE_ERR_IO, "%s: cannot read", file);
        free(path);
        return NULL;
    }
    /* SentencePiece-style tokenizers take extra special tokens from
     * tokenizer_config.json (Gemma 4). */
    eng__json_doc *cfg = NULL;
    bool missing = true;
    const eng__json *config = NULL;
    if (path && !(cfg = tok_read_json(dir, "tokenizer_config.json", &missing, err)) && !missing)
        config = &tok_bad_config; /* fatal only where it would be used */
    else if (cfg)
        config = eng__json_root(cfg);
    if (err && config == &tok_bad_config)
        memset(err, 0, sizeof *err);
    eng_tokenizer *t = tok_from_doc(eng__json_parse_owned(text, len, err), config, file, err);
    eng__json_free(cfg);
    free(path);
    return t;
}

void eng_tokenizer_free(eng_tokenizer *t) {
    if (!t)
        return;
    if (t->cache) {
        for (size_t i = 0; i <= t->cache_mask; i++)
            free(t->cache[i].key);
        free(t->cache);
    }
    pthread_mutex_destroy(&t->cache_lock);
    for (int i = 0; i < t->n_re; i++)
        pcre2_code_free(t->re[i]);
    free(t->added);
    free(t->added_slots);
    free(t->added_lens);
    free(t->merge_keys);
    free(t->merge_rank);
    free(t->merge_out);
    free(t->vocab_slots);
    free(t->tok_off);
    free(t->tok_len);
    free(t->tok_flags);
    base_buf_deinit(&t->pool);
    free(t);
}

/* ---- encoding ----------------------------------------------------------------- */

typedef struct tok_out {
    int32_t *ids;
    size_t n, cap;
} tok_out;

static bool tok_push(tok_out *o, int32_t id) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        int32_t *p = realloc(o->ids, cap * sizeof *p);
        if (!p)
            return false;
        o->ids = p;
        o->cap = cap;
    }
    o->ids[o->n++] = id;
    return true;
}

/* Scratch reused across the pieces of one call. */
typedef struct tok_scratch {
    int32_t *sym;         /* symbol ids */
    int32_t *prev, *next; /* heap path: neighbour links, -1 = none */
    uint64_t *heap;       /* heap path: rank << 32 | position */
    size_t cap, heap_cap;
    pcre2_match_data *md[TOK_MAX_STAGES]; /* per regex stage, created on first use */
} tok_scratch;

static bool tok_scratch_fit(tok_scratch *s, size_t n) {
    if (n <= s->cap)
        return true;
    size_t cap = n < 64 ? 64 : n;
    int32_t *a = realloc(s->sym, cap * sizeof *a);
    if (!a)
        return false;
    s->sym = a;
    a = realloc(s->prev, cap * sizeof *a);
    if (!a)
        return false;
    s->prev = a;
    a = realloc(s->next, cap * sizeof *a);
    if (!a)
        return false;
    s->next = a;
    s->cap = cap;
    return true;
}

static bool heap_push(tok_scratch *s, size_t *hn, uint64_t v) {
    if (*hn == s->heap_cap) {
        size_t cap = s->heap_cap ? s->heap_cap * 2 : 128;
        uint64_t *h = realloc(s->heap, cap * sizeof *h);
        if (!h)
            return false;
        s->heap = h;
        s->heap_cap = cap;
    }
    uint64_t *h = s->heap;
    size_t i = (*hn)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
    return true;
}

static uint64_t heap_pop(tok_scratch *s, size_t *hn) {
    uint64_t *h = s->heap, top = h[0], last = h[--*hn];
    size_t i = 0, n = *hn;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (h[c] >= last)
            break;
        h[i] = h[c];
        i = c;
    }
    if (n)
        h[i] = last;
    return top;
}

/* Merges s->sym[0..n) in place; returns the number of symbols left or 0 on OOM.
 * The heap orders by (rank, position): the lowest rank merges first and, among
 * equal ranks, the leftmost — the same order as the linear scan. */
static size_t bpe_heap(const eng_tokenizer *t, tok_scratch *s, size_t n) {
    size_t hn = 0;
    for (size_t i = 0; i < n; i++) {
        s->prev[i] = (int32_t)i - 1;
        s->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    uint32_t rank;
    int32_t out;
    for (size_t i = 0; i + 1 < n; i++)
        if (tok_merge_find(t, s->sym[i], s->sym[i + 1], &rank, &out) &&
            !heap_push(s, &hn, (uint64_t)rank << 32 | i))
            return 0;
    while (hn) {
        uint64_t top = heap_pop(s, &hn);
        uint32_t r = (uint32_t)(top >> 32), pos = (uint32_t)top;
        if (s->sym[pos] < 0) /* merged away */
            continue;
        int32_t nx = s->next[pos];
        /* Stale when the pair changed since it was pushed. */
        if (nx < 0 || !tok_merge_find(t, s->sym[pos], s->sym[nx], &rank, &out) || rank != r)
            continue;
        s->sym[pos] = out;
        s->sym[nx] = -1;
        s->next[pos] = s->next[nx];
        if (s->next[nx] >= 0)
            s->prev[s->next[nx]] = (int32_t)pos;
        int32_t pv = s->prev[pos];
        if (pv >= 0 && tok_merge_find(t, s->sym[pv], out, &rank, &out) &&
            !heap_push(s, &hn, (uint64_t)rank << 32 | (uint32_t)pv))
            return 0;
        nx = s->next[pos];
        if (nx >= 0 && tok_merge_find(t, s->sym[pos], s->sym[nx], &rank, &out) &&
            !heap_push(s, &hn, (uint64_t)rank << 32 | pos))
            return 0;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s->sym[i] >= 0)
            s->sym[m++] = s->sym[i];
    return m;
}

static size_t bpe_linear(const eng_tokenizer *t, int32_t *sym, size_t n) {
    for (;;) {
        uint32_t best = UINT32_MAX, rank;
        int32_t best_out = -1, out;
        size_t at = 0;
        for (size_t i = 0; i + 1 < n; i++)
            if (tok_merge_find(t, sym[i], sym[i + 1], &rank, &out) && rank < best) {
                best = rank;
                best_out = out;
                at = i;
            }
        if (best_out < 0)
            return n;
        sym[at] = best_out;
        memmove(sym + at + 1, sym + at + 2, (n - at - 2) * sizeof *sym);
        n--;
    }
}

static bool tok_cache_get(eng_tokenizer *t, uint64_t h, const char *p, size_t n, tok_out *o,
                          bool *hit) {
    *hit = false;
    pthread_mutex_lock(&t->cache_lock);
    tok_cache_entry *e = &t->cache[h & t->cache_mask];
    bool ok = true;
    if (e->key && e->hash == h && e->key_len == n && memcmp(e->key, p, n) == 0) {
        int32_t id;
        for (uint32_t i = 0; ok && i < e->n_ids; i++) {
            memcpy(&id, e->key + n + i * sizeof id, sizeof id);
            ok = tok_push(o, id);
        }
        *hit = true;
    }
    pthread_mutex_unlock(&t->cache_lock);
    return ok;
}

/* Direct-mapped: a colliding piece replaces the old one. */
static void tok_cache_put(eng_tokenizer *t, uint64_t h, const char *p, size_t n, const int32_t *ids,
                          size_t k) {
    char *key = malloc(n + k * sizeof *ids);
    if (!key)
        return;
    memcpy(key, p, n);
    memcpy(key + n, ids, k * sizeof *ids);
    pthread_mutex_lock(&t->cache_lock);
    tok_cache_entry *e = &t->cache[h & t->cache_mask];
    free(e->key);
    *e = (tok_cache_entry){.hash = h, .key = key, .key_len = (uint32_t)n, .n_ids = (uint32_t)k};
    pthread_mutex_unlock(&t->cache_lock);
}

/* BPE of one pre-tokenized piece of raw bytes. */
static base_status tok_piece(eng_tokenizer *t, tok_scratch *s, const char *p, size_t n,
                             tok_out *o) {
    if (n == 0)
        return BASE_OK;
    if (n == 1 && t->byte_id[(unsigned char)p[0]] >= 0)
        return tok_push(o, t->byte_id[(unsigned char)p[0]]) ? BASE_OK : BASE_ERR_NOMEM;
    if (t->ignore_merges) {
        int32_t id = tok_vocab_find(t, p, n);
        if (id >= 0)
            return tok_push(o, id) ? BASE_OK : BASE_ERR_NOMEM;
    }
    uint64_t h = 0;
    bool cacheable = n <= CACHE_PIECE_MAX;
    if (cacheable) {
        bool hit;
        h = tok_hash(p, n);
        if (!tok_cache_get(t, h, p, n, o, &hit))
            return BASE_ERR_NOMEM;
        if (hit)
            return BASE_OK;
    }
    if (!tok_scratch_fit(s, n))
        return BASE_ERR_NOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t id = t->byte_id[(unsigned char)p[i]];
        if (id < 0)
            id = t->unk_id;
        if (id < 0)
            return BASE_ERR_UNSUPPORTED; /* not a byte-level vocabulary */
        s->sym[m++] = id;
    }
    m = m <= BPE_LINEAR_MAX ? bpe_linear(t, s->sym, m) : bpe_heap(t, s, m);
    if (m == 0)
        return BASE_ERR_NOMEM;
    for (size_t i = 0; i < m; i++)
        if (!tok_push(o, s->sym[i]))
            return BASE_ERR_NOMEM;
    if (cacheable)
        tok_cache_put(t, h, p, n, s->sym, m);
    return BASE_OK;
}

/* Splits p[0..n) with regex stage `stage` (matches and the gaps between them
 * are pieces, Hugging Face's "Isolated"), passes every piece to the next
 * stage, and BPE-encodes the pieces of the last one. */
static base_status tok_run(eng_tokenizer *t, tok_scratch *s, int stage, const char *p, size_t n,
                           tok_out *o) {
    if (n == 0)
        return BASE_OK;
    if (stage == t->n_re)
        return tok_piece(t, s, p, n, o);
    pcre2_code *re = t->re[stage];
    if (!s->md[stage]) {
        s->md[stage] = pcre2_match_data_create_from_pattern(re, NULL);
        if (!s->md[stage])
            return BASE_ERR_NOMEM;
    }
    pcre2_match_data *md = s->md[stage];
    size_t at = 0, gap = 0;
    while (at < n) {
        int rc = pcre2_match(re, (PCRE2_SPTR)p, n, at, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
            rc = pcre2_match(re, (PCRE2_SPTR)p, n, at, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            return BASE_ERR_RANGE; /* match limits: pathological input */
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t ms = ov[0], me = ov[1];
        if (me == ms) { /* empty match: step one character */
            uint32_t cp;
            at = ms + base_utf8_decode(p + ms, n - ms, &cp);
            continue;
        }
        base_status st = tok_run(t, s, stage + 1, p + gap, ms - gap, o);
        if (st == BASE_OK)
            st = tok_run(t, s, stage + 1, p + ms, me - ms, o);
        if (st != BASE_OK)
            return st;
        at = gap = me;
    }
    return tok_run(t, s, stage + 1, p + gap, n - gap, o);
}

/* Length of the valid UTF-8 prefix of s[0..n). */
static size_t tok_valid_prefix(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t l = base_utf8_decode(s + i, n - i, &cp);
        if (l == 1) /* a byte >= 0x80 that starts no valid sequence */
            break;
        i += l;
    }
    return i;
}

/* NFC of the valid UTF-8 s[0..n), appended to out. NFC only changes text
 * around non-ASCII characters, and a boundary just before an ASCII character
 * is stable (ASCII characters are starters that never compose with what
 * precedes them), so utf8proc only sees each non-ASCII span together with
 * the ASCII character before it (which may take a combining mark). Spans
 * whose lead bytes are all below 0xCC (characters below U+0300, which are
 * NFC-stable and no composition's second half) are copied as they are. */
static base_status tok_nfc(const char *s, size_t n, base_buf *out) {
    const unsigned char *u = (const unsigned char *)s;
    size_t k = 0;
    base_status st = base_buf_reserve(out, n + 16);
    while (st == BASE_OK && k < n) {
        size_t a = k;
        while (a < n && u[a] < 0x80)
            a++;
        size_t b = a;
        bool need = false;
        while (b < n && u[b] >= 0x80)
            need |= u[b++] >= 0xCC;
        if (!need) {
            st = base_buf_append(out, s + k, b - k);
            k = b;
            continue;
        }
        size_t from = a > k ? a - 1 : a;
        st = base_buf_append(out, s + k, from - k);
        if (st != BASE_OK)
            break;
        utf8proc_uint8_t *norm = NULL;
        utf8proc_ssize_t nl = utf8proc_map(u + from, (utf8proc_ssize_t)(b - from), &norm,
                                           UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        if (nl < 0)
            st = nl == UTF8PROC_ERROR_NOMEM ? BASE_ERR_NOMEM : BASE_ERR_INVALID;
        else
            st = base_buf_append(out, norm, (size_t)nl);
        free(norm);
        k = b;
    }
    return st;
}

/* A text segment without added tokens: valid runs normalised and split,
 * invalid bytes as single byte-level tokens. */
static base_status tok_segment(eng_tokenizer *t, tok_scratch *s, const char *p, size_t n,
                               tok_out *o) {
    size_t i = 0;
    while (i < n) {
        size_t v = tok_valid_prefix(p + i, n - i);
        if (v) {
            base_status st;
            bool need_nfc = false;
            for (size_t k = 0; t->nfc && k < v && !need_nfc; k++)
                need_nfc = (unsigned char)p[i + k] >= 0xCC;
            if (need_nfc) {
                base_buf norm;
                base_buf_init(&norm);
                st = tok_nfc(p + i, v, &norm);
                if (st == BASE_OK)
                    st = tok_run(t, s, 0, norm.data, norm.len, o);
                base_buf_deinit(&norm);
            } else {
                st = tok_run(t, s, 0, p + i, v, o);
            }
            if (st != BASE_OK)
                return st;
            i += v;
        }
        if (i < n) { /* one invalid byte */
            int32_t id = t->byte_id[(unsigned char)p[i]];
            if (id < 0)
                id = t->unk_id;
            if (id < 0)
                return BASE_ERR_UNSUPPORTED;
            if (!tok_push(o, id))
                return BASE_ERR_NOMEM;
            i++;
        }
    }
    return BASE_OK;
}

/* Pushes the symbols of one character c[0..n) (a space stands for U+2581):
 * its piece, else its bytes' <0xNN> tokens, else <unk>, fused with a pending
 * one as Hugging Face's BPE::merge_word does (a pending <unk> is written only
 * before the next vocabulary piece or at the end, even after fallback bytes).
 * False when nothing can stand for c. */
static bool tok_spm_char(const eng_tokenizer *t, const char *c, size_t n, bool valid, int32_t *sym,
                         size_t *m, bool *pend) {
    int32_t id = -1;
    if ((n == 1 && c[0] == ' ') || (n == 3 && memcmp(c, TOK_SPM_SPACE, 3) == 0)) {
        id = t->space_id;
        c = TOK_SPM_SPACE; /* the normalised character, for the byte fallback */
        n = 3;
    } else if (valid) {
        id = tok_vocab_find(t, c, n);
    }
    if (id >= 0) {
        if (*pend)
            sym[(*m)++] = t->unk_id;
        *pend = false;
        sym[(*m)++] = id;
        return true;
    }
    bool bytes = true;
    for (size_t k = 0; k < n; k++)
        bytes &= t->byte_id[(unsigned char)c[k]] >= 0;
    if (bytes) {
        for (size_t k = 0; k < n; k++)
            sym[(*m)++] = t->byte_id[(unsigned char)c[k]];
        return true;
    }
    if (t->unk_id < 0)
        return false;
    if (*pend && !t->fuse_unk)
        sym[(*m)++] = t->unk_id;
    *pend = true;
    return true;
}

/* One word of a SentencePiece-style segment (see tok_spm_segment), with a
 * U+2581 in front when prepend. Characters map to pieces (tok_spm_char);
 * invalid UTF-8 bytes, which Hugging Face cannot take, become their byte
 * tokens, so decoding restores them exactly. Long words merge through the
 * heap: O(n log n), never quadratic. */
static base_status tok_spm_word(eng_tokenizer *t, tok_scratch *s, const char *p, size_t n,
                                bool prepend, tok_out *o) {
    if (t->ignore_merges && !prepend) {
        int32_t id = tok_vocab_find(t, p, n);
        if (id >= 0)
            return tok_push(o, id) ? BASE_OK : BASE_ERR_NOMEM;
    }
    uint64_t h = 0;
    bool cacheable = n <= CACHE_PIECE_MAX && !prepend;
    if (cacheable) {
        bool hit;
        h = tok_hash(p, n);
        if (!tok_cache_get(t, h, p, n, o, &hit))
            return BASE_ERR_NOMEM;
        if (hit)
            return BASE_OK;
    }
    /* At most one symbol per byte, three for a prepended U+2581. */
    if (!tok_scratch_fit(s, n + 4))
        return BASE_ERR_NOMEM;
    size_t m = 0;
    bool pend = false;
    if (prepend && !tok_spm_char(t, " ", 1, true, s->sym, &m, &pend))
        return BASE_ERR_UNSUPPORTED;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x80 && t->ascii_id[c] >= 0) { /* the common case, without hashing */
            if (pend)
                s->sym[m++] = t->unk_id;
            pend = false;
            s->sym[m++] = t->ascii_id[c];
            i++;
            continue;
        }
        uint32_t cp;
        size_t l = c < 0x80 ? 1 : base_utf8_decode(p + i, n - i, &cp);
        bool valid = l > 1 || c < 0x80;
        if (!tok_spm_char(t, p + i, l, valid, s->sym, &m, &pend))
            return BASE_ERR_UNSUPPORTED;
        i += l;
    }
    if (pend)
        s->sym[m++] = t->unk_id;
    m = m <= BPE_LINEAR_MAX ? bpe_linear(t, s->sym, m) : bpe_heap(t, s, m);
    if (m == 0)
        return BASE_ERR_NOMEM;
    for (size_t i = 0; i < m; i++)
        if (!tok_push(o, s->sym[i]))
            return BASE_ERR_NOMEM;
    if (cacheable)
        tok_cache_put(t, h, p, n, s->sym, m);
    return BASE_OK;
}

static bool tok_spm_is_space_at(const char *p, size_t n, size_t i) {
    return p[i] == ' ' || (n - i >= 3 && memcmp(p + i, TOK_SPM_SPACE, 3) == 0);
}

/* A segment (text between added tokens) of a SentencePiece-style tokenizer.
 * Hugging Face BPE-merges it as one word: its pre-tokenizer (Split on " ")
 * finds no space once the normalizer has made every space U+2581. A merge
 * can only join two symbols into a vocabulary piece, so where no piece
 * contains "X U+2581" (X not a space) no merge ever crosses the start of a
 * space run after X, and the segment may be cut there into words that merge
 * independently, with the same ids, and are cached like byte-level pieces.
 * spm_nosplit marks the last bytes of such X (Gemma: only ">", from
 * ">U+2581</"); a segment of a tokenizer with ignore_merges stays whole. */
static base_status tok_spm_segment(eng_tokenizer *t, tok_scratch *s, const char *p, size_t n,
                                   tok_out *o) {
    if (n == 0)
        return BASE_OK;
    if (t->ignore_merges || t->space_id < 0)
        return tok_spm_word(t, s, p, n, t->spm_prepend, o);
    size_t w = 0;
    bool first = true;
    for (size_t i = 1; i < n; i++) {
        if (!tok_spm_is_space_at(p, n, i))
            continue;
        unsigned char prev = (unsigned char)p[i - 1];
        bool prev_space = prev == ' ' || (i >= 3 && memcmp(p + i - 3, TOK_SPM_SPACE, 3) == 0);
        if (prev_space || t->spm_nosplit[prev])
            continue;
        base_status st = tok_spm_word(t, s, p + w, i - w, first && t->spm_prepend, o);
        if (st != BASE_OK)
            return st;
        first = false;
        w = i;
    }
    return tok_spm_word(t, s, p + w, n - w, first && t->spm_prepend, o);
}

static bool tok_is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Leftmost-longest non-special added token at or after from; false if none. */
static bool tok_find_added(const eng_tokenizer *t, const char *p, size_t n, size_t from, size_t *ms,
                           size_t *me, int32_t *id) {
    for (size_t i = from; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (!t->added_first[c])
            continue;
        for (uint32_t k = t->added_len_off[c]; k < t->added_len_off[c + 1];
             k++) { /* longest first */
            if (t->added_lens[k] > n - i)
                continue;
            const tok_added *a = tok_added_lookup(t, p + i, t->added_lens[k]);
            if (!a)
                continue;
            size_t s = i, e = i + a->len;
            if (a->lstrip)
                while (s > from && tok_is_space(p[s - 1]))
                    s--;
            if (a->rstrip)
                while (e < n && tok_is_space(p[e]))
                    e++;
            *ms = s;
            *me = e;
            *id = a->id;
            return true;
        }
    }
    return false;
}

base_status eng_tokenize(const eng_tokenizer *tc, const char *text, size_t len, int32_t **ids,
                         size_t *n_ids) {
    if (!tc || (!text && len) || !ids || !n_ids)
        return BASE_ERR_INVALID;
    /* The cache is the only state that changes; it has its own lock. */
    eng_tokenizer *t = (eng_tokenizer *)tc;
    tok_out o = {0};
    tok_scratch s = {0};
    base_status st = BASE_OK;
    size_t at = 0;
    while (st == BASE_OK && at < len) {
        size_t ms = len, me = len;
        int32_t id = -1;
        if (!tok_find_added(t, text, len, at, &ms, &me, &id))
            ms = me = len;
        st = t->spm ? tok_spm_segment(t, &s, text + at, ms - at, &o)
                    : tok_segment(t, &s, text + at, ms - at, &o);
        if (st == BASE_OK && id >= 0 && !tok_push(&o, id))
            st = BASE_ERR_NOMEM;
        at = me;
    }
    free(s.sym);
    free(s.prev);
    free(s.next);
    free(s.heap);
    for (int i = 0; i < TOK_MAX_STAGES; i++)
        pcre2_match_data_free(s.md[i]);
    if (st != BASE_OK) {
        free(o.ids);
        *ids = NULL;
        *n_ids = 0;
        return st;
    }
    *ids = o.ids;
    *n_ids = o.n;
    return BASE_OK;
}

/* ---- decoding and lookups ------------------------------------------------------ */

base_status eng_detokenize(const eng_tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                           char **out, size_t *len) {
    if (!t || (!ids && n) || !out || !len)
        return BASE_ERR_INVALID;
    base_buf b;
    base_buf_init(&b);
    base_status st = base_buf_reserve(&b, n * 4 + 1);
    for (size_t i = 0; st == BASE_OK && i < n; i++) {
        int32_t id = ids[i];
        if (id < 0 || (uint32_t)id >= t->n_ids || !(t->tok_flags[id] & TOK_PRESENT)) {
            st = BASE_ERR_RANGE;
            break;
        }
        if (skip_special && (t->tok_flags[id] & TOK_SPECIAL))
            continue;
        st = base_buf_append(&b, t->pool.data + t->tok_off[id], t->tok_len[id]);
    }
    if (st != BASE_OK) {
        base_buf_deinit(&b);
        *out = NULL;
        *len = 0;
        return st;
    }
    *out = base_buf_steal(&b, len);
    return BASE_OK;
}

const char *eng_token_bytes(const eng_tokenizer *t, int32_t id, size_t *len) {
    if (!t || id < 0 || (uint32_t)id >= t->n_ids || !(t->tok_flags[id] & TOK_PRESENT)) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = t->tok_len[id];
    return t->pool.data + t->tok_off[id];
}

int32_t eng_token_special_id(const eng_tokenizer *t, const char *content) {
    if (!t || !content)
        return -1;
    size_t n = strlen(content);
    for (size_t i = 0; i < t->n_added; i++)
        if (t->added[i].len == n && memcmp(t->pool.data + t->added[i].off, content, n) == 0)
            return t->added[i].id;
    /* Ordinary vocabulary entries are not looked at: a model without a mask
     * token must not get one because some BPE piece happens to spell "<M>". */
    return -1;
}

bool eng_token_is_added(const eng_tokenizer *t, int32_t id) {
    return t && id >= 0 && (uint32_t)id < t->n_ids && (t->tok_flags[id] & TOK_ADDED);
}

size_t eng_tokenizer_vocab_size(const eng_tokenizer *t) { return t ? t->n_ids : 0; }
