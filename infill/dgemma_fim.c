/* DiffusionGemma prompt-level FIM and answer clean-up (dgemma_fim.h). */
#define _POSIX_C_SOURCE 200809L
#include "dgemma_fim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ifl__dg_instr[] =
    "Fill in the code at " IFL_DG_HOLE " in the file below. Reply with only the code that "
    "replaces " IFL_DG_HOLE ": no explanation, no markdown, and do not repeat the code "
    "around it.\n\n";

base_status ifl_dg_user_text(const char *prefix, size_t n_prefix, const char *suffix,
                             size_t n_suffix, const char *lang, char **out, size_t *len) {
    const char *l = lang ? lang : "";
    size_t cap = sizeof ifl__dg_instr + strlen(l) + n_prefix + n_suffix + 64;
    char *s = malloc(cap);
    if (!s)
        return BASE_ERR_NOMEM;
    size_t k = (size_t)snprintf(s, cap, "%s```%s\n", ifl__dg_instr, l);
    memcpy(s + k, prefix, n_prefix);
    k += n_prefix;
    k += (size_t)snprintf(s + k, cap - k, "%s", IFL_DG_HOLE);
    memcpy(s + k, suffix, n_suffix);
    k += n_suffix;
    if (k == 0 || s[k - 1] != '\n')
        s[k++] = '\n';
    k += (size_t)snprintf(s + k, cap - k, "```");
    *out = s;
    *len = k;
    return BASE_OK;
}

static base_status ifl__dg_append(int32_t **ids, int *n, int *cap, const int32_t *v, size_t k) {
    if (*n + (int)k > *cap) {
        int nc = (*cap + (int)k) * 2;
        int32_t *p = realloc(*ids, sizeof(int32_t) * (size_t)nc);
        if (!p)
            return BASE_ERR_NOMEM;
        *ids = p;
        *cap = nc;
    }
    memcpy(*ids + *n, v, sizeof(int32_t) * k);
    *n += (int)k;
    return BASE_OK;
}

static base_status ifl__dg_text(const eng_tokenizer *t, const char *s, size_t len, int32_t **ids,
                                int *n, int *cap) {
    int32_t *v = NULL;
    size_t k = 0;
    base_status st = eng_tokenize(t, s, len, &v, &k);
    if (st == BASE_OK)
        st = ifl__dg_append(ids, n, cap, v, k);
    free(v);
    return st;
}

base_status ifl_dg_prompt_ids(const eng_tokenizer *t, const char *user, size_t n_user,
                              int32_t **ids, int *n) {
    const int32_t bos = eng_token_special_id(t, "<bos>");
    const int32_t ton = eng_token_special_id(t, "<|turn>");
    const int32_t toff = eng_token_special_id(t, "<turn|>");
    *ids = NULL;
    *n = 0;
    if (bos < 0 || ton < 0 || toff < 0)
        return BASE_ERR_MODEL;
    int cap = 0;
    base_status st;
    if ((st = ifl__dg_append(ids, n, &cap, (int32_t[]){bos, ton}, 2)) ||
        (st = ifl__dg_text(t, "user\n", 5, ids, n, &cap)) ||
        (st = ifl__dg_text(t, user, n_user, ids, n, &cap)) ||
        (st = ifl__dg_append(ids, n, &cap, &toff, 1)) ||
        (st = ifl__dg_text(t, "\n", 1, ids, n, &cap)) ||
        (st = ifl__dg_append(ids, n, &cap, &ton, 1)) ||
        (st = ifl__dg_text(t, "model\n", 6, ids, n, &cap))) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return st;
}

/* Start of the line after position i (or n). */
static size_t ifl__eol(const char *s, size_t n, size_t i) {
    while (i < n && s[i] != '\n')
        i++;
    return i < n ? i + 1 : n;
}

/* A line of prose framing an answer: ends with ':' or starts like a sentence
 * addressed to the user. */
static bool ifl__prose(const char *s, size_t n) {
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    if (n == 0)
        return false;
    static const char *starts[] = {"Here is",     "Here's",    "Sure", "Certainly",
                                   "The missing", "This code", "Below"};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (n >= strlen(starts[i]) && strncmp(s, starts[i], strlen(starts[i])) == 0)
            return true;
    return s[n - 1] == ':' && memchr(s, ' ', n) != NULL && s[0] >= 'A' && s[0] <= 'Z';
}

base_status ifl_dg_clean(const char *ans, size_t n, const char *prefix, size_t n_prefix,
                         const char *suffix, size_t n_suffix, char **out, size_t *len) {
    size_t b = 0, e = n;
    /* a fenced block: its content */
    const char *f = NULL;
    for (size_t i = 0; i + 3 <= n; i = ifl__eol(ans, n, i))
        if (strncmp(ans + i, "```", 3) == 0) {
            f = ans + i;
            break;
        }
    if (f) {
        b = ifl__eol(ans, n, (size_t)(f - ans));
        e = n;
        for (size_t i = b; i + 3 <= n; i = ifl__eol(ans, n, i))
            if (strncmp(ans + i, "```", 3) == 0) {
                e = i;
                break;
            }
        if (e > b && ans[e - 1] == '\n')
            e--;
    } else {
        while (b < e) {
            size_t nl = ifl__eol(ans, e, b);
            if (!ifl__prose(ans + b, nl - b))
                break;
            b = nl;
        }
    }
    /* the hole marker echoed */
    const size_t hl = strlen(IFL_DG_HOLE);
    char *s = malloc(e - b + 1);
    if (!s)
        return BASE_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = b; i < e;) {
        if (e - i >= hl && memcmp(ans + i, IFL_DG_HOLE, hl) == 0) {
            i += hl;
            continue;
        }
        s[k++] = ans[i++];
    }
    /* echo of the prefix's tail at the start: the longest overlap of at least
     * 8 bytes (shorter ones are as likely real code) */
    size_t cut = 0;
    for (size_t o = BASE_MIN(n_prefix, k); o >= 8; o--)
        if (memcmp(prefix + n_prefix - o, s, o) == 0) {
            cut = o;
            break;
        }
    memmove(s, s + cut, k - cut);
    k -= cut;
    /* echo of the suffix's head at the end */
    cut = 0;
    for (size_t o = BASE_MIN(n_suffix, k); o >= 8; o--)
        if (memcmp(suffix, s + k - o, o) == 0) {
            cut = o;
            break;
        }
    k -= cut;
    s[k] = '\0';
    *out = s;
    *len = k;
    return BASE_OK;
}
