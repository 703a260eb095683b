#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void base_buf_init(base_buf *b) {
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void base_buf_deinit(base_buf *b) {
    free(b->data);
    base_buf_init(b);
}

base_status base_buf_reserve(base_buf *b, size_t extra) {
    if (extra > SIZE_MAX - b->len - 1)
        return BASE_ERR_TOO_LARGE;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return BASE_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return BASE_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    b->data[b->len] = '\0';
    return BASE_OK;
}

base_status base_buf_append(base_buf *b, const void *p, size_t n) {
    base_status st = base_buf_reserve(b, n);
    if (st)
        return st;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return BASE_OK;
}

base_status base_buf_appends(base_buf *b, const char *s) {
    return base_buf_append(b, s, strlen(s));
}

base_status base_buf_printf(base_buf *b, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return BASE_ERR_INVALID;
    }
    base_status st = base_buf_reserve(b, (size_t)n);
    if (st == BASE_OK) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
    return st;
}

void base_buf_consume(base_buf *b, size_t n) {
    if (n >= b->len) {
        b->len = 0;
    } else {
        memmove(b->data, b->data + n, b->len - n);
        b->len -= n;
    }
    if (b->data)
        b->data[b->len] = '\0';
}

base_status base_buf_splice(base_buf *b, size_t off, size_t del, const char *ins, size_t ins_len) {
    if (off > b->len || del > b->len - off)
        return BASE_ERR_RANGE;
    if (ins_len > del) {
        base_status st = base_buf_reserve(b, ins_len - del);
        if (st)
            return st;
    }
    if (!b->data) /* empty buffer, nothing to move, nothing inserted */
        return BASE_OK;
    memmove(b->data + off + ins_len, b->data + off + del, b->len - off - del);
    if (ins_len)
        memcpy(b->data + off, ins, ins_len);
    b->len = b->len - del + ins_len;
    b->data[b->len] = '\0';
    return BASE_OK;
}

char *base_buf_steal(base_buf *b, size_t *len) {
    char *p = b->data;
    if (len)
        *len = b->len;
    if (!p)
        p = calloc(1, 1);
    base_buf_init(b);
    return p;
}

base_status base_read_file(const char *path, char **out, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return BASE_ERR_IO;
    base_buf b;
    base_buf_init(&b);
    char tmp[65536];
    size_t n;
    base_status st = BASE_OK;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
        st = base_buf_append(&b, tmp, n);
        if (st)
            break;
    }
    if (!st && ferror(f))
        st = BASE_ERR_IO;
    fclose(f);
    if (st) {
        base_buf_deinit(&b);
        return st;
    }
    *out = base_buf_steal(&b, len);
    return BASE_OK;
}
