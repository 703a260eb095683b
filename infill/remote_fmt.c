/* infill remote formats: the per-model FIM prompt table for
 * openai-completions-template, and the openai-chat instruction with the
 * clean-up of a chat model's answer (thinking, fences, prose, echoes).
 *
 * The markers are the model cards' own (Qwen2.5-Coder README "fill in the
 * middle", StarCoder/StarCoder2 tokenizer_config, Code Llama paper §2.3 and
 * its tokenizer's <PRE>/<SUF>/<MID>/<EOT>, DeepSeek-Coder README "code
 * insertion", CodeGemma model card "FIM", Codestral's [SUFFIX]/[PREFIX]). */
#define _POSIX_C_SOURCE 200809L
#include "source.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const ifl_fim_template ifl__tmpl[] = {
    {"qwen2.5-coder",
     {"qwen2.5-coder", "qwen2.5coder", "qwen2-5-coder", "qwen3-coder"},
     "<|fim_prefix|>",
     "<|fim_suffix|>",
     "<|fim_middle|>",
     false,
     {"<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|im_end|>"}},
    {"codegemma",
     {"codegemma", NULL, NULL, NULL},
     "<|fim_prefix|>",
     "<|fim_suffix|>",
     "<|fim_middle|>",
     false,
     {"<|file_separator|>", "<end_of_turn>", "<eos>", NULL}},
    {"starcoder",
     {"starcoder", "santacoder", "stable-code", NULL},
     "<fim_prefix>",
     "<fim_suffix>",
     "<fim_middle>",
     false,
     {"<|endoftext|>", "<file_sep>", NULL, NULL}},
    {"codellama",
     {"codellama", "code-llama", "code_llama", NULL},
     "<PRE> ",
     " <SUF>",
     " <MID>",
     false,
     {"<EOT>", NULL, NULL, NULL}},
    {"deepseek-coder",
     {"deepseek-coder", "deepseekcoder", NULL, NULL},
     "<\xef\xbd\x9c"
     "fim\xe2\x96\x81"
     "begin\xef\xbd\x9c>",
     "<\xef\xbd\x9c"
     "fim\xe2\x96\x81"
     "hole\xef\xbd\x9c>",
     "<\xef\xbd\x9c"
     "fim\xe2\x96\x81"
     "end\xef\xbd\x9c>",
     false,
     {"<\xef\xbd\x9c"
      "end\xe2\x96\x81"
      "of\xe2\x96\x81"
      "sentence\xef\xbd\x9c>",
      "<|EOT|>", NULL, NULL}},
    /* Suffix first: [SUFFIX]suffix[PREFIX]prefix. */
    {"codestral",
     {"codestral", NULL, NULL, NULL},
     "[PREFIX]",
     "[SUFFIX]",
     "",
     true,
     {"</s>", NULL, NULL, NULL}},
};

const char *ifl_fim_template_names(void) {
    return "qwen2.5-coder, codegemma, starcoder, codellama, deepseek-coder, codestral";
}

const ifl_fim_template *ifl_fim_template_find(const char *name, const char *model) {
    size_t n = sizeof ifl__tmpl / sizeof ifl__tmpl[0];
    if (name) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(ifl__tmpl[i].name, name) == 0)
                return &ifl__tmpl[i];
        return NULL;
    }
    if (!model)
        return NULL;
    char low[256];
    size_t k = 0;
    for (; model[k] && k < sizeof low - 1; k++)
        low[k] = (char)tolower((unsigned char)model[k]);
    low[k] = 0;
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 4 && ifl__tmpl[i].match[j]; j++)
            if (strstr(low, ifl__tmpl[i].match[j]))
                return &ifl__tmpl[i];
    return NULL;
}

static char *ifl__cat(const char *const *parts, const size_t *lens, int n, size_t *len) {
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += lens[i];
    char *s = malloc(total + 1);
    if (!s)
        return NULL;
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        memcpy(s + o, parts[i], lens[i]);
        o += lens[i];
    }
    s[o] = 0;
    if (len)
        *len = o;
    return s;
}

char *ifl_fim_render(const ifl_fim_template *t, const char *pre, size_t pl, const char *suf,
                     size_t sl, size_t *len) {
    if (t->spm) {
        const char *p[] = {t->suf, suf, t->pre, pre, t->mid};
        size_t l[] = {strlen(t->suf), sl, strlen(t->pre), pl, strlen(t->mid)};
        return ifl__cat(p, l, 5, len);
    }
    const char *p[] = {t->pre, pre, t->suf, suf, t->mid};
    size_t l[] = {strlen(t->pre), pl, strlen(t->suf), sl, strlen(t->mid)};
    return ifl__cat(p, l, 5, len);
}

const char ifl_chat_instruction[] =
    "You are a code completion engine. The user sends a file in which one gap is marked "
    "<|HOLE|>. Reply with only the text that replaces <|HOLE|>: no explanation, no markdown "
    "fences, and none of the code before or after the gap.";

char *ifl_chat_user(const char *pre, size_t pl, const char *suf, size_t sl) {
    const char *p[] = {pre, IFL_CHAT_HOLE, suf};
    size_t l[] = {pl, sizeof IFL_CHAT_HOLE - 1, sl};
    return ifl__cat(p, l, 3, NULL);
}

static const char *ifl__find(const char *s, size_t n, const char *w) {
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (memcmp(s + i, w, wl) == 0)
            return s + i;
    return NULL;
}

static bool ifl__blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return false;
    return true;
}

/* A line of chat framing rather than code: "Here is the code:", "Sure!". */
static bool ifl__prose_line(const char *s, size_t n) {
    static const char *const open[] = {"here ",       "here's",   "sure",    "certainly",
                                       "below ",      "okay",     "ok,",     "this ",
                                       "the missing", "the code", "the gap", "to fill"};
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0)
        return false;
    bool ends = s[n - 1] == ':' || s[n - 1] == '.' || s[n - 1] == '!';
    for (size_t i = 0; i < sizeof open / sizeof open[0]; i++) {
        size_t ol = strlen(open[i]);
        if (n >= ol && strncasecmp(s, open[i], ol) == 0 && (ends || ol >= 8))
            return true;
    }
    return false;
}

base_status ifl_chat_clean(const char *pre, size_t pl, const char *suf, size_t sl, const char *text,
                           size_t len, char **out, size_t *out_len) {
    const char *a = text, *e = text + len;
    /* A thinking block first (thinking should be off; some servers ignore that). */
    const char *th = ifl__find(a, (size_t)(e - a), "<think>");
    if (th && ifl__blank(a, (size_t)(th - a))) {
        const char *te = ifl__find(th, (size_t)(e - th), "</think>");
        a = te ? te + 8 : e;
    }
    /* A fenced block: its body, without the prose around it. */
    const char *f = ifl__find(a, (size_t)(e - a), "```");
    if (f) {
        const char *body = memchr(f, '\n', (size_t)(e - f));
        body = body ? body + 1 : e;
        const char *close = ifl__find(body, (size_t)(e - body), "```");
        const char *be = close ? close : e;
        /* The newline before the closing fence belongs to the fence. */
        if (close && be > body && be[-1] == '\n')
            be--;
        a = body;
        e = be;
    } else {
        /* No fence: leading prose lines go. */
        while (a < e) {
            const char *nl = memchr(a, '\n', (size_t)(e - a));
            if (!nl || !ifl__prose_line(a, (size_t)(nl - a)))
                break;
            a = nl + 1;
            while (a < e && *a == '\n')
                a++;
        }
    }
    /* The marker itself, echoed. */
    const char *hm = ifl__find(a, (size_t)(e - a), IFL_CHAT_HOLE);
    size_t hl = sizeof IFL_CHAT_HOLE - 1;
    base_buf b;
    base_buf_init(&b);
    base_status st = BASE_OK;
    if (hm) {
        st = base_buf_append(&b, a, (size_t)(hm - a));
        if (st == BASE_OK)
            st = base_buf_append(&b, hm + hl, (size_t)(e - hm - hl));
    } else {
        st = base_buf_append(&b, a, (size_t)(e - a));
    }
    if (st != BASE_OK) {
        base_buf_deinit(&b);
        return st;
    }
    const char *c = b.data ? b.data : "";
    size_t cs = 0, ce = b.len;
    /* An echo of the text before the hole: the longest tail of the prefix
     * that starts at a line start and that the answer starts with. */
    size_t best = 0;
    for (size_t k = 1; k <= pl && k <= ce; k++) {
        size_t at = pl - k;
        if (at > 0 && pre[at - 1] != '\n')
            continue;
        if (memcmp(pre + at, c, k) == 0 && !ifl__blank(pre + at, k))
            best = k;
    }
    cs = best;
    /* An echo of the text after the hole: the longest head of the suffix,
     * ending at a line end and spanning a line break, that the answer ends
     * with. (An echo of the rest of the cursor's line alone is the
     * post-processing's to drop: "g(1)" before ")" may be meant.) */
    best = 0;
    for (size_t k = 1; k <= sl && k <= ce - cs; k++) {
        if (k < sl && suf[k] != '\n')
            continue;
        const char *nl = memchr(suf, '\n', k);
        if (!nl || ifl__blank(nl, (size_t)(suf + k - nl)))
            continue;
        if (memcmp(suf, c + ce - k, k) == 0)
            best = k;
    }
    ce -= best;
    *out_len = ce - cs;
    *out = malloc(*out_len + 1);
    if (!*out) {
        base_buf_deinit(&b);
        return BASE_ERR_NOMEM;
    }
    memcpy(*out, c + cs, *out_len);
    (*out)[*out_len] = 0;
    base_buf_deinit(&b);
    return BASE_OK;
}
