/* lsp document store: text as bytes plus a table of line starts, kept in step
 * with every edit, so that a position converts in O(log lines + line length)
 * and an edit costs one splice plus one shift of the line table. */
#define _POSIX_C_SOURCE 200809L
#include "document.h"

#include <stdlib.h>
#include <string.h>

#define LSP__MAX_LISTENERS 8

struct lsp_doc {
    lsp_doc_store *store;
    char *uri;
    char *language_id;
    int64_t version;
    base_buf text;
    size_t *lines; /* lines[i]: byte offset where line i starts; lines[0] == 0 */
    size_t n_lines;
    size_t cap_lines;
    uint64_t touched; /* the store's sequence at the last open or edit */
};

struct lsp_doc_store {
    lsp_doc **docs;
    size_t n_docs, cap_docs;
    lsp_doc_listener listeners[LSP__MAX_LISTENERS];
    size_t n_listeners;
    uint64_t seq; /* counts opens and edits: recency for lsp_doc_touched */
};

lsp_doc_store *lsp_doc_store_new(void) { return calloc(1, sizeof(lsp_doc_store)); }

static void lsp__doc_free(lsp_doc *d) {
    if (!d)
        return;
    free(d->uri);
    free(d->language_id);
    base_buf_deinit(&d->text);
    free(d->lines);
    free(d);
}

void lsp_doc_store_free(lsp_doc_store *s) {
    if (!s)
        return;
    for (size_t i = 0; i < s->n_docs; i++) {
        for (size_t k = 0; k < s->n_listeners; k++)
            if (s->listeners[k].closed)
                s->listeners[k].closed(s->listeners[k].ud, s->docs[i]);
        lsp__doc_free(s->docs[i]);
    }
    free(s->docs);
    free(s);
}

base_status lsp_doc_store_listen(lsp_doc_store *s, const lsp_doc_listener *l) {
    if (!s || !l)
        return BASE_ERR_INVALID;
    if (s->n_listeners >= LSP__MAX_LISTENERS)
        return BASE_ERR_TOO_LARGE;
    s->listeners[s->n_listeners++] = *l;
    return BASE_OK;
}

static size_t lsp__find(const lsp_doc_store *s, const char *uri) {
    for (size_t i = 0; i < s->n_docs; i++)
        if (strcmp(s->docs[i]->uri, uri) == 0)
            return i;
    return (size_t)-1;
}

lsp_doc *lsp_doc_get(lsp_doc_store *s, const char *uri) {
    if (!s || !uri)
        return NULL;
    size_t i = lsp__find(s, uri);
    return i == (size_t)-1 ? NULL : s->docs[i];
}

size_t lsp_doc_count(const lsp_doc_store *s) { return s ? s->n_docs : 0; }

lsp_doc *lsp_doc_at(lsp_doc_store *s, size_t i) { return s && i < s->n_docs ? s->docs[i] : NULL; }

uint64_t lsp_doc_touched(const lsp_doc *d) { return d ? d->touched : 0; }

static base_status lsp__lines_reserve(lsp_doc *d, size_t extra) {
    if (d->n_lines + extra <= d->cap_lines)
        return BASE_OK;
    size_t cap = d->cap_lines ? d->cap_lines : 64;
    while (cap < d->n_lines + extra)
        cap *= 2;
    size_t *p = realloc(d->lines, cap * sizeof(size_t));
    if (!p)
        return BASE_ERR_NOMEM;
    d->lines = p;
    d->cap_lines = cap;
    return BASE_OK;
}

static size_t lsp__count_nl(const char *s, size_t n) {
    size_t c = 0;
    const char *p = s, *end = s + n;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        c++;
        p++;
    }
    return c;
}

/* Rebuilds the line table from scratch. */
static base_status lsp__lines_rebuild(lsp_doc *d) {
    size_t nl = lsp__count_nl(d->text.data, d->text.len);
    d->n_lines = 0;
    base_status st = lsp__lines_reserve(d, nl + 1);
    if (st != BASE_OK)
        return st;
    d->lines[d->n_lines++] = 0;
    const char *p = d->text.data, *end = d->text.data + d->text.len;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        p++;
        d->lines[d->n_lines++] = (size_t)(p - d->text.data);
    }
    return BASE_OK;
}

static base_status lsp__set_text(lsp_doc *d, const char *text, size_t len) {
    d->text.len = 0;
    base_status st = base_buf_append(&d->text, text ? text : "", len);
    if (st == BASE_OK && d->text.cap == 0)
        st = base_buf_reserve(&d->text, 1);
    if (st != BASE_OK)
        return st;
    d->text.data[d->text.len] = '\0';
    return lsp__lines_rebuild(d);
}

base_status lsp_doc_open(lsp_doc_store *s, const char *uri, const char *language_id,
                         int64_t version, const char *text, size_t len) {
    if (!s || !uri || (!text && len))
        return BASE_ERR_INVALID;
    size_t idx = lsp__find(s, uri);
    if (idx != (size_t)-1) {
        /* Re-opening an open document replaces it (a client bug we tolerate). */
        lsp_doc *d = s->docs[idx];
        char *lang = strdup(language_id ? language_id : "");
        if (!lang)
            return BASE_ERR_NOMEM;
        free(d->language_id);
        d->language_id = lang;
        return lsp_doc_replace_all(d, version, text, len);
    }
    if (s->n_docs == s->cap_docs) {
        size_t cap = s->cap_docs ? s->cap_docs * 2 : 8;
        lsp_doc **p = realloc(s->docs, cap * sizeof(*p));
        if (!p)
            return BASE_ERR_NOMEM;
        s->docs = p;
        s->cap_docs = cap;
    }
    lsp_doc *d = calloc(1, sizeof(*d));
    if (!d)
        return BASE_ERR_NOMEM;
    d->store = s;
    d->version = version;
    d->touched = ++s->seq;
    base_buf_init(&d->text);
    d->uri = strdup(uri);
    d->language_id = strdup(language_id ? language_id : "");
    if (!d->uri || !d->language_id || lsp__set_text(d, text, len) != BASE_OK) {
        lsp__doc_free(d);
        return BASE_ERR_NOMEM;
    }
    s->docs[s->n_docs++] = d;
    for (size_t k = 0; k < s->n_listeners; k++)
        if (s->listeners[k].opened)
            s->listeners[k].opened(s->listeners[k].ud, d);
    return BASE_OK;
}

base_status lsp_doc_close(lsp_doc_store *s, const char *uri) {
    if (!s || !uri)
        return BASE_ERR_INVALID;
    size_t idx = lsp__find(s, uri);
    if (idx == (size_t)-1)
        return BASE_ERR_NOT_FOUND;
    lsp_doc *d = s->docs[idx];
    for (size_t k = 0; k < s->n_listeners; k++)
        if (s->listeners[k].closed)
            s->listeners[k].closed(s->listeners[k].ud, d);
    s->docs[idx] = s->docs[--s->n_docs];
    lsp__doc_free(d);
    return BASE_OK;
}

/* Index of the line holding byte offset off (off <= text length). */
static size_t lsp__line_of(const lsp_doc *d, size_t off) {
    size_t lo = 0, hi = d->n_lines; /* lines[lo] <= off < lines[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->lines[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

lsp_point lsp_doc_offset_to_point(const lsp_doc *d, size_t offset) {
    lsp_point p = {0, 0};
    if (!d)
        return p;
    if (offset > d->text.len)
        offset = d->text.len;
    size_t line = lsp__line_of(d, offset);
    p.row = (uint32_t)line;
    p.column = (uint32_t)(offset - d->lines[line]);
    return p;
}

/* Bytes of line i without its terminator (\n or \r\n). */
static void lsp__line_span(const lsp_doc *d, size_t i, size_t *start, size_t *len) {
    size_t s = d->lines[i];
    size_t e = i + 1 < d->n_lines ? d->lines[i + 1] - 1 : d->text.len; /* at \n or end */
    if (i + 1 < d->n_lines && e > s && d->text.data[e - 1] == '\r')
        e--;
    *start = s;
    *len = e - s;
}

base_status lsp_doc_pos_to_offset(const lsp_doc *d, lsp_pos_encoding enc, uint32_t line,
                                  uint32_t character, size_t *offset) {
    if (!d || !offset)
        return BASE_ERR_INVALID;
    if (line >= d->n_lines) {
        /* The position just past the last line, character 0, is the end of the
         * document (some clients use it in whole-document ranges). */
        if (line == d->n_lines && character == 0) {
            *offset = d->text.len;
            return BASE_OK;
        }
        return BASE_ERR_RANGE;
    }
    size_t ls, ll, off = 0;
    lsp__line_span(d, line, &ls, &ll);
    const char *s = d->text.data + ls;
    switch (enc) {
    case LSP_ENC_UTF8:
        off = character <= ll ? character : ll;
        /* Never split a UTF-8 sequence: back up to the start of a code point. */
        while (off > 0 && off < ll && ((unsigned char)s[off] & 0xC0) == 0x80)
            off--;
        break;
    case LSP_ENC_UTF16:
        /* Past the line end clamps to it; inside a surrogate pair snaps to the
         * start of that code point. */
        (void)base_utf16_to_byte(s, ll, character, &off);
        break;
    case LSP_ENC_UTF32:
        (void)base_utf32_to_byte(s, ll, character, &off);
        break;
    default:
        return BASE_ERR_INVALID;
    }
    *offset = ls + off;
    return BASE_OK;
}

base_status lsp_doc_offset_to_pos(const lsp_doc *d, lsp_pos_encoding enc, size_t offset,
                                  uint32_t *line, uint32_t *character) {
    if (!d || !line || !character)
        return BASE_ERR_INVALID;
    if (offset > d->text.len)
        return BASE_ERR_RANGE;
    size_t i = lsp__line_of(d, offset);
    size_t ls = d->lines[i];
    const char *s = d->text.data + ls;
    size_t n = offset - ls;
    size_t ch;
    switch (enc) {
    case LSP_ENC_UTF8:
        ch = n;
        break;
    case LSP_ENC_UTF16:
        ch = base_utf16_len(s, n);
        break;
    case LSP_ENC_UTF32:
        ch = base_utf32_len(s, n);
        break;
    default:
        return BASE_ERR_INVALID;
    }
    *line = (uint32_t)i;
    *character = (uint32_t)ch;
    return BASE_OK;
}

static void lsp__publish(lsp_doc *d, const lsp_edit_event *ev) {
    lsp_doc_store *s = d->store;
    for (size_t k = 0; k < s->n_listeners; k++)
        if (s->listeners[k].edited)
            s->listeners[k].edited(s->listeners[k].ud, d, ev);
}

/* Replaces bytes [start, end) with text and updates the line table. */
static base_status lsp__splice(lsp_doc *d, size_t start, size_t end, const char *text, size_t len) {
    lsp_edit_event ev;
    ev.start_byte = start;
    ev.old_end_byte = end;
    ev.new_end_byte = start + len;
    ev.start_point = lsp_doc_offset_to_point(d, start);
    ev.old_end_point = lsp_doc_offset_to_point(d, end);

    size_t nl_new = lsp__count_nl(text, len);
    size_t first = ev.start_point.row + 1; /* first line entry that may change */
    size_t last = ev.old_end_point.row;    /* entries first..last start inside the old range */
    size_t removed = last + 1 - first;
    if (nl_new > removed) {
        base_status st = lsp__lines_reserve(d, nl_new - removed);
        if (st != BASE_OK)
            return st;
    }
    base_status st = base_buf_splice(&d->text, start, end - start, text, len);
    if (st != BASE_OK)
        return st;
    /* Shift the entries after the old range, then write the new ones. */
    size_t tail = d->n_lines - (last + 1);
    memmove(d->lines + first + nl_new, d->lines + last + 1, tail * sizeof(size_t));
    d->n_lines = first + nl_new + tail;
    size_t delta_add = len, delta_sub = end - start;
    for (size_t i = first + nl_new; i < d->n_lines; i++)
        d->lines[i] = d->lines[i] + delta_add - delta_sub;
    size_t k = first;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n')
            d->lines[k++] = start + i + 1;

    ev.new_end_point = lsp_doc_offset_to_point(d, ev.new_end_byte);
    lsp__publish(d, &ev);
    return BASE_OK;
}

base_status lsp_doc_replace_all(lsp_doc *d, int64_t version, const char *text, size_t len) {
    if (!d || (!text && len))
        return BASE_ERR_INVALID;
    base_status st = lsp__splice(d, 0, d->text.len, text ? text : "", len);
    if (st == BASE_OK) {
        d->version = version;
        d->touched = ++d->store->seq;
    }
    return st;
}

base_status lsp_doc_apply(lsp_doc *d, lsp_pos_encoding enc, uint32_t start_line,
                          uint32_t start_char, uint32_t end_line, uint32_t end_char,
                          const char *text, size_t len) {
    if (!d || (!text && len))
        return BASE_ERR_INVALID;
    size_t a, b;
    base_status st = lsp_doc_pos_to_offset(d, enc, start_line, start_char, &a);
    if (st != BASE_OK)
        return st;
    st = lsp_doc_pos_to_offset(d, enc, end_line, end_char, &b);
    if (st != BASE_OK)
        return st;
    if (b < a)
        return BASE_ERR_RANGE;
    st = lsp__splice(d, a, b, text ? text : "", len);
    if (st == BASE_OK)
        d->touched = ++d->store->seq;
    return st;
}

void lsp_doc_set_version(lsp_doc *d, int64_t version) {
    if (d)
        d->version = version;
}

const char *lsp_doc_uri(const lsp_doc *d) { return d ? d->uri : NULL; }
const char *lsp_doc_language_id(const lsp_doc *d) { return d ? d->language_id : NULL; }
int64_t lsp_doc_version(const lsp_doc *d) { return d ? d->version : 0; }

const char *lsp_doc_text(const lsp_doc *d, size_t *len) {
    if (!d) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = d->text.len;
    return d->text.data;
}

size_t lsp_doc_line_count(const lsp_doc *d) { return d ? d->n_lines : 0; }
