/* lsp framing: splits a byte stream into JSON-RPC bodies framed by
 * "Content-Length: N\r\n[Content-Type: ...\r\n]\r\n".
 *
 * Bad input never stops the stream: a malformed header block is reported and
 * skipped, junk before a header is skipped up to the next "Content-Length",
 * and a body over the limit is reported and discarded as its bytes arrive
 * (never buffered). */
#define _POSIX_C_SOURCE 200809L
#include "lsp.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LSP__DEFAULT_MAX ((size_t)256 << 20)
/* A header block longer than this is garbage, not a header. */
#define LSP__MAX_HEADER 8192

struct lsp_framer {
    base_buf in;
    size_t pos;       /* start of unconsumed bytes in `in` */
    size_t max;       /* body size limit */
    size_t skip;      /* bytes of an oversized body still to discard */
    bool have_header; /* header parsed, waiting for `want` body bytes */
    size_t want;
};

lsp_framer *lsp_framer_new(size_t max_message) {
    lsp_framer *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    base_buf_init(&f->in);
    f->max = max_message ? max_message : LSP__DEFAULT_MAX;
    return f;
}

void lsp_framer_free(lsp_framer *f) {
    if (!f)
        return;
    base_buf_deinit(&f->in);
    free(f);
}

size_t lsp_framer_buffered(const lsp_framer *f) { return f ? f->in.len - f->pos : 0; }

/* Past this, an emptied buffer is freed rather than kept: one 1 MB paste
 * would otherwise pin 2 MB per session for the session's life (measured in
 * the soak: 21 MB over 9 sessions). */
#define LSP__KEEP_CAP ((size_t)256 << 10)

/* Drops consumed bytes once they dominate the buffer. */
static void lsp__compact(lsp_framer *f) {
    if (f->pos == f->in.len) {
        f->pos = 0;
        if (f->in.cap > LSP__KEEP_CAP) {
            base_buf_deinit(&f->in);
        } else {
            f->in.len = 0;
            if (f->in.data)
                f->in.data[0] = '\0';
        }
    } else if (f->pos > 4096 && f->pos * 2 > f->in.len) {
        base_buf_consume(&f->in, f->pos);
        f->pos = 0;
    }
}

base_status lsp_framer_push(lsp_framer *f, const char *data, size_t len) {
    if (!f || (!data && len))
        return BASE_ERR_INVALID;
    if (f->skip) {
        size_t n = BASE_MIN(f->skip, len);
        f->skip -= n;
        data += n;
        len -= n;
    }
    lsp__compact(f);
    return len ? base_buf_append(&f->in, data, len) : BASE_OK;
}

static bool lsp__ieq_prefix(const char *s, size_t n, const char *lit) {
    size_t l = strlen(lit);
    if (n < l)
        return false;
    for (size_t i = 0; i < l; i++)
        if (tolower((unsigned char)s[i]) != tolower((unsigned char)lit[i]))
            return false;
    return true;
}

/* Finds "Content-Length" (any case) in s[0..n); returns its index or n. */
static size_t lsp__find_cl(const char *s, size_t n) {
    for (size_t i = 0; i + 14 <= n; i++)
        if ((s[i] == 'C' || s[i] == 'c') && lsp__ieq_prefix(s + i, n - i, "content-length"))
            return i;
    return n;
}

/* Parses one header block h[0..n) (without the final blank line). */
static bool lsp__parse_header(lsp_framer *f, const char *h, size_t n, lsp_frame *out) {
    bool have_len = false;
    size_t len = 0;
    size_t i = 0;
    while (i < n) {
        const char *eol = memchr(h + i, '\n', n - i);
        size_t e = eol ? (size_t)(eol - h) : n;
        size_t le = e;
        if (le > i && h[le - 1] == '\r')
            le--;
        const char *line = h + i;
        size_t ll = le - i;
        const char *colon = memchr(line, ':', ll);
        if (!colon) {
            out->kind = LSP_FRAME_ERROR;
            out->status = BASE_ERR_PARSE;
            snprintf(out->error, sizeof(out->error), "malformed header line '%.*s'",
                     (int)BASE_MIN(ll, 60), line);
            return false;
        }
        size_t nl = (size_t)(colon - line);
        const char *v = colon + 1;
        size_t vl = ll - nl - 1;
        while (vl && (*v == ' ' || *v == '\t')) {
            v++;
            vl--;
        }
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
            vl--;
        if (nl == 14 && lsp__ieq_prefix(line, nl, "content-length")) {
            char num[32];
            bool ok = vl > 0;
            for (size_t k = 0; ok && k < vl; k++)
                ok = isdigit((unsigned char)v[k]) != 0;
            if (ok && vl >= 20) {
                snprintf(out->error, sizeof(out->error), "invalid Content-Length '%.*s': too big",
                         (int)BASE_MIN(vl, 40), v);
                out->kind = LSP_FRAME_ERROR;
                out->status = BASE_ERR_PARSE;
                return false;
            }
            if (!ok) {
                snprintf(out->error, sizeof(out->error),
                         "invalid Content-Length '%.*s': not a non-negative decimal number",
                         (int)BASE_MIN(vl, 40), v);
                out->kind = LSP_FRAME_ERROR;
                out->status = BASE_ERR_PARSE;
                return false;
            }
            memcpy(num, v, vl);
            num[vl] = '\0';
            errno = 0;
            unsigned long long x = strtoull(num, NULL, 10);
            if (errno == ERANGE || x > (unsigned long long)SIZE_MAX / 2) {
                snprintf(out->error, sizeof(out->error), "invalid Content-Length '%s': too big",
                         num);
                out->kind = LSP_FRAME_ERROR;
                out->status = BASE_ERR_PARSE;
                return false;
            }
            have_len = true;
            len = (size_t)x;
        } else if (nl == 12 && lsp__ieq_prefix(line, nl, "content-type")) {
            /* Only UTF-8 bodies exist in LSP; "utf8" is the historical alias. */
            const char *cs = NULL;
            for (size_t k = 0; k + 8 <= vl; k++)
                if (lsp__ieq_prefix(v + k, vl - k, "charset=")) {
                    cs = v + k + 8;
                    break;
                }
            if (cs && !lsp__ieq_prefix(cs, (size_t)(v + vl - cs), "utf-8") &&
                !lsp__ieq_prefix(cs, (size_t)(v + vl - cs), "utf8"))
                BASE_LOGW("lsp", "Content-Type '%.*s' ignored: bodies are read as UTF-8",
                          (int)BASE_MIN(vl, 60), v);
        }
        i = e + 1;
    }
    if (!have_len) {
        out->kind = LSP_FRAME_ERROR;
        out->status = BASE_ERR_PARSE;
        snprintf(out->error, sizeof(out->error), "missing Content-Length header");
        return false;
    }
    if (len > f->max) {
        out->kind = LSP_FRAME_ERROR;
        out->status = BASE_ERR_TOO_LARGE;
        snprintf(out->error, sizeof(out->error),
                 "message too large: Content-Length %zu exceeds the limit of %zu bytes", len,
                 f->max);
        f->skip = len;
        return false;
    }
    f->have_header = true;
    f->want = len;
    return true;
}

void lsp_framer_next(lsp_framer *f, lsp_frame *out) {
    memset(out, 0, sizeof(*out));
    out->kind = LSP_FRAME_NONE;
    if (!f)
        return;
    for (;;) {
        /* Discard what is buffered of an oversized body. */
        if (f->skip) {
            size_t n = BASE_MIN(f->skip, f->in.len - f->pos);
            f->skip -= n;
            f->pos += n;
            if (f->skip)
                return;
        }
        const char *p = f->in.data + f->pos;
        size_t n = f->in.len - f->pos;
        if (f->have_header) {
            if (n < f->want)
                return;
            f->have_header = false;
            f->pos += f->want;
            out->kind = LSP_FRAME_MESSAGE;
            out->body = p;
            out->len = f->want;
            return;
        }
        if (n == 0) {
            lsp__compact(f); /* everything consumed: a large buffer goes now */
            return;
        }
        /* Junk before a header: skip to the next Content-Length (or a
         * Content-Type that starts a header block). */
        if (!lsp__ieq_prefix(p, n, "content-") && n >= 8) {
            size_t k = lsp__find_cl(p, n);
            size_t t = n;
            for (size_t i = 0; i + 12 <= n && i < k; i++)
                if ((p[i] == 'C' || p[i] == 'c') && lsp__ieq_prefix(p + i, n - i, "content-type")) {
                    t = i;
                    break;
                }
            k = BASE_MIN(k, t);
            if (k == n) {
                /* Keep a tail that may be the start of a header name. */
                size_t keep = BASE_MIN(n, (size_t)13);
                if (n > keep) {
                    BASE_LOGD("lsp", "skipped %zu bytes of junk between messages", n - keep);
                    f->pos += n - keep;
                }
                return;
            }
            BASE_LOGD("lsp", "skipped %zu bytes of junk between messages", k);
            f->pos += k;
            continue;
        }
        const char *end = NULL;
        for (size_t i = 0; i + 3 < n; i++)
            if (p[i] == '\r' && p[i + 1] == '\n' && p[i + 2] == '\r' && p[i + 3] == '\n') {
                end = p + i;
                break;
            }
        if (!end) {
            if (n > LSP__MAX_HEADER) {
                out->kind = LSP_FRAME_ERROR;
                out->status = BASE_ERR_PARSE;
                snprintf(out->error, sizeof(out->error),
                         "header block longer than %d bytes without an empty line",
                         LSP__MAX_HEADER);
                f->pos += n;
            }
            return;
        }
        size_t hl = (size_t)(end - p);
        f->pos += hl + 4;
        if (lsp__parse_header(f, p, hl, out))
            continue;
        return;
    }
}

base_status lsp_frame_write(base_buf *out, const char *body, size_t len) {
    base_status st = base_buf_printf(out, "Content-Length: %zu\r\n\r\n", len);
    if (st != BASE_OK)
        return st;
    return base_buf_append(out, body, len);
}
