/* engine: a small, strict JSON reader. jansson spends ~270 ms on the 11 MB Qwen
 * tokenizer.json; this one builds a flat, arena-allocated tree in a few tens
 * of milliseconds because strings are decoded in place in a private copy. */
#include "tokenizer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 128

struct eng__json_doc {
    char *text;      /* private, writable copy; strings point into it */
    base_arena *mem; /* arrays of eng__json */
    eng__json root;
};

typedef struct json_parser {
    char *p, *end, *start;
    base_arena *mem;
    /* Scratch stack of values of the open containers; copied into the arena
     * when a container closes. */
    eng__json *stack;
    size_t sp, cap;
    const char *err;
} json_parser;

static void json_ws(json_parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
        ps->p++;
}

static int json_hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

/* Decodes the string starting after the opening quote, in place. */
static bool json_string(json_parser *ps, eng__json *out) {
    char *w = ps->p, *r = ps->p;
    for (;;) {
        /* Fast path: copy plain bytes. */
        while (r < ps->end && *r != '"' && *r != '\\' && (unsigned char)*r >= 0x20)
            *w++ = *r++;
        if (r >= ps->end) {
            ps->err = "unterminated string";
            return false;
        }
        if (*r == '"')
            break;
        if ((unsigned char)*r < 0x20) {
            ps->err = "control character in string";
            return false;
        }
        /* escape */
        if (r + 1 >= ps->end) {
            ps->err = "unterminated escape";
            return false;
        }
        char c = r[1];
        r += 2;
        switch (c) {
        case '"':
            *w++ = '"';
            break;
        case '\\':
            *w++ = '\\';
            break;
        case '/':
            *w++ = '/';
            break;
        case 'b':
            *w++ = '\b';
            break;
        case 'f':
            *w++ = '\f';
            break;
        case 'n':
            *w++ = '\n';
            break;
        case 'r':
            *w++ = '\r';
            break;
        case 't':
            *w++ = '\t';
            break;
        case 'u': {
            if (ps->end - r < 4 || json_hex4(r) < 0) {
                ps->err = "bad \\u escape";
                return false;
            }
            uint32_t cp = (uint32_t)json_hex4(r);
            r += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && ps->end - r >= 6 && r[0] == '\\' && r[1] == 'u') {
                int lo = json_hex4(r + 2);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                    r += 6;
                }
            }
            /* A lone surrogate cannot be UTF-8: it becomes U+FFFD. */
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0xFFFD;
            /* The escape took >= 6 input bytes; UTF-8 needs <= 4. */
            w += base_utf8_encode(cp, w);
            break;
        }
        default:
            ps->err = "bad escape";
            return false;
        }
    }
    out->type = ENG_JSON_STR;
    out->n = (uint32_t)(w - ps->p);
    out->u.s = ps->p;
    *w = '\0'; /* w <= r, and r points at the closing quote */
    ps->p = r + 1;
    return true;
}

static bool json_number(json_parser *ps, eng__json *out) {
    const char *s = ps->p;
    char *q = ps->p;
    if (q < ps->end && *q == '-')
        q++;
    if (q >= ps->end || *q < '0' || *q > '9') {
        ps->err = "bad number";
        return false;
    }
    bool integral = true;
    int64_t iv = 0;
    int digits = 0;
    while (q < ps->end && *q >= '0' && *q <= '9') {
        if (digits < 18)
            iv = iv * 10 + (*q - '0');
        digits++;
        q++;
    }
    if (q < ps->end && (*q == '.' || *q == 'e' || *q == 'E'))
        integral = false;
    out->type = ENG_JSON_NUM;
    if (integral && digits <= 18) {
        out->u.num = (double)(*s == '-' ? -iv : iv);
        ps->p = q;
        return true;
    }
    /* strtod needs a terminated copy: numbers here are short. */
    char tmp[64];
    size_t n = 0;
    q = ps->p;
    while (q < ps->end && n < sizeof tmp - 1 && strchr("+-0123456789.eE", *q))
        tmp[n++] = *q++;
    tmp[n] = '\0';
    char *e = NULL;
    out->u.num = strtod(tmp, &e);
    if (e == tmp) {
        ps->err = "bad number";
        return false;
    }
    ps->p += e - tmp;
    return true;
}

static bool json_push(json_parser *ps, const eng__json *v) {
    if (ps->sp == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 1024;
        eng__json *s = realloc(ps->stack, cap * sizeof *s);
        if (!s) {
            ps->err = "out of memory";
            return false;
        }
        ps->stack = s;
        ps->cap = cap;
    }
    ps->stack[ps->sp++] = *v;
    return true;
}

static bool json_lit(json_parser *ps, const char *lit) {
    size_t n = strlen(lit);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, lit, n) != 0) {
        ps->err = "unexpected character";
        return false;
    }
    ps->p += n;
    return true;
}

static bool json_value(json_parser *ps, eng__json *out, int depth);

/* Parses the members of an array (close = ']') or object (close = '}'). */
static bool json_container(json_parser *ps, eng__json *out, char close, int depth) {
    if (depth >= JSON_MAX_DEPTH) {
        ps->err = "nesting too deep";
        return false;
    }
    size_t base = ps->sp;
    uint32_t count = 0;
    ps->p++; /* the opening bracket */
    json_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
    } else {
        for (;;) {
            eng__json v;
            json_ws(ps);
            if (close == '}') {
                if (ps->p >= ps->end || *ps->p != '"') {
                    ps->err = "expected a key";
                    return false;
                }
                ps->p++;
                if (!json_string(ps, &v) || !json_push(ps, &v))
                    return false;
                json_ws(ps);
                if (ps->p >= ps->end || *ps->p != ':') {
                    ps->err = "expected ':'";
                    return false;
                }
                ps->p++;
            }
            if (!json_value(ps, &v, depth + 1) || !json_push(ps, &v))
                return false;
            count++;
            json_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                break;
            }
            ps->err = close == '}' ? "expected ',' or '}'" : "expected ',' or ']'";
            return false;
        }
    }
    size_t n = ps->sp - base;
    out->type = close == '}' ? ENG_JSON_OBJ : ENG_JSON_ARR;
    out->n = count;
    out->u.items = NULL;
    if (n) {
        out->u.items = base_arena_alloc(ps->mem, n * sizeof(eng__json));
        if (!out->u.items) {
            ps->err = "out of memory";
            return false;
        }
        memcpy(out->u.items, ps->stack + base, n * sizeof(eng__json));
    }
    ps->sp = base;
    return true;
}

static bool json_value(json_parser *ps, eng__json *out, int depth) {
    json_ws(ps);
    if (ps->p >= ps->end) {
        ps->err = "unexpected end of input";
        return false;
    }
    memset(out, 0, sizeof *out);
    switch (*ps->p) {
    case '{':
        return json_container(ps, out, '}', depth);
    case '[':
        return json_container(ps, out, ']', depth);
    case '"':
        ps->p++;
        return json_string(ps, out);
    case 't':
        out->type = ENG_JSON_BOOL;
        out->u.b = true;
        return json_lit(ps, "true");
    case 'f':
        out->type = ENG_JSON_BOOL;
        return json_lit(ps, "false");
    case 'n':
        out->type = ENG_JSON_NULL;
        return json_lit(ps, "null");
    default:
        return json_number(ps, out);
    }
}

eng__json_doc *eng__json_parse_owned(char *text, size_t len, eng_error *err) {
    eng__json_doc *d = calloc(1, sizeof *d);
    if (!d) {
        free(text);
        goto fail_nomem;
    }
    d->text = text;
    /* Chunks of 1 MiB for real files (megabytes), smaller for small ones: a
     * fresh 1 MiB chunk per parse of a few-KiB text (fuzz_tokenizer_json) was
     * mostly page faults. */
    d->mem = base_arena_new(BASE_MIN(BASE_MAX(len * 4, (size_t)64 << 10), (size_t)1 << 20));
    if (!d->mem)
        goto fail_nomem;
    json_parser ps = {.p = d->text, .end = d->text + len, .start = d->text, .mem = d->mem};
    bool ok = json_value(&ps, &d->root, 0);
    if (ok) {
        json_ws(&ps);
        if (ps.p != ps.end) {
            ps.err = "trailing characters";
            ok = false;
        }
    }
    free(ps.stack);
    if (!ok) {
        if (err) {
            err->status = BASE_ERR_PARSE;
            snprintf(err->msg, sizeof err->msg, "JSON: %s at byte %zu", ps.err,
                     (size_t)(ps.p - ps.start));
        }
        eng__json_free(d);
        return NULL;
    }
    return d;

fail_nomem:
    if (err) {
        err->status = BASE_ERR_NOMEM;
        snprintf(err->msg, sizeof err->msg, "JSON: out of memory");
    }
    eng__json_free(d);
    return NULL;
}

eng__json_doc *eng__json_parse(const char *text, size_t len, eng_error *err) {
    char *copy = malloc(len + 1);
    if (!copy) {
        if (err) {
            err->status = BASE_ERR_NOMEM;
            snprintf(err->msg, sizeof err->msg, "JSON: out of memory");
        }
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    return eng__json_parse_owned(copy, len, err);
}

void eng__json_free(eng__json_doc *d) {
    if (!d)
        return;
    free(d->text);
    base_arena_free(d->mem);
    free(d);
}

const eng__json *eng__json_root(const eng__json_doc *d) { return &d->root; }

const eng__json *eng__json_get(const eng__json *o, const char *key) {
    if (!o || o->type != ENG_JSON_OBJ)
        return NULL;
    size_t kl = strlen(key);
    for (uint32_t i = 0; i < o->n; i++) {
        const eng__json *k = &o->u.items[2 * i];
        if (k->n == kl && memcmp(k->u.s, key, kl) == 0)
            return &o->u.items[2 * i + 1];
    }
    return NULL;
}

const char *eng__json_str(const eng__json *v) {
    return v && v->type == ENG_JSON_STR ? v->u.s : NULL;
}

bool eng__json_bool(const eng__json *v, bool fallback) {
    return v && v->type == ENG_JSON_BOOL ? v->u.b : fallback;
}

bool eng__json_int(const eng__json *v, int64_t *out) {
    if (!v || v->type != ENG_JSON_NUM)
        return false;
    double d = v->u.num;
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || (double)(int64_t)d != d)
        return false;
    *out = (int64_t)d;
    return true;
}

base_status eng__json_write_str(base_buf *b, const char *s, size_t n) {
    base_status st = base_buf_append(b, "\"", 1);
    size_t i = 0;
    while (st == BASE_OK && i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            size_t j = i;
            while (j < n && (unsigned char)s[j] >= 0x20 && (unsigned char)s[j] < 0x80 &&
                   s[j] != '"' && s[j] != '\\')
                j++;
            st = base_buf_append(b, s + i, j - i);
            i = j;
            continue;
        }
        if (c < 0x80) {
            char esc[8];
            switch (c) {
            case '"':
                st = base_buf_append(b, "\\\"", 2);
                break;
            case '\\':
                st = base_buf_append(b, "\\\\", 2);
                break;
            case '\n':
                st = base_buf_append(b, "\\n", 2);
                break;
            case '\r':
                st = base_buf_append(b, "\\r", 2);
                break;
            case '\t':
                st = base_buf_append(b, "\\t", 2);
                break;
            default:
                snprintf(esc, sizeof esc, "\\u%04x", c);
                st = base_buf_append(b, esc, 6);
            }
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = base_utf8_decode(s + i, n - i, &cp);
        bool valid = base_utf8_valid(s + i, k);
        if (valid)
            st = base_buf_append(b, s + i, k);
        else
            st = base_buf_append(b, "\xEF\xBF\xBD", 3);
        i += k;
    }
    if (st == BASE_OK)
        st = base_buf_append(b, "\"", 1);
    return st;
}
