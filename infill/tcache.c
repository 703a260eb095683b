/* Typing-through cache: the completion shown last for each document, and
 * whether the user is typing into it. A small fixed table (one entry per
 * document key, least recently used evicted). */
#define _POSIX_C_SOURCE 200809L
#include "infill.h"

#include <stdlib.h>
#include <string.h>

#define IFL__TCACHE_SLOTS 8

typedef struct ifl__tentry {
    char *key;
    char *text; /* document text when the completion was shown */
    size_t len;
    size_t cursor;
    char *comp;
    size_t comp_len;
    uint64_t used;
} ifl__tentry;

struct ifl_tcache {
    ifl__tentry e[IFL__TCACHE_SLOTS];
    uint64_t clock;
};

ifl_tcache *ifl_tcache_new(void) { return calloc(1, sizeof(ifl_tcache)); }

static void ifl__tentry_clear(ifl__tentry *e) {
    free(e->key);
    free(e->text);
    free(e->comp);
    memset(e, 0, sizeof *e);
}

void ifl_tcache_free(ifl_tcache *c) {
    if (!c)
        return;
    for (int i = 0; i < IFL__TCACHE_SLOTS; i++)
        ifl__tentry_clear(&c->e[i]);
    free(c);
}

static ifl__tentry *ifl__tfind(ifl_tcache *c, const char *key) {
    for (int i = 0; i < IFL__TCACHE_SLOTS; i++)
        if (c->e[i].key && strcmp(c->e[i].key, key) == 0)
            return &c->e[i];
    return NULL;
}

base_status ifl_tcache_put(ifl_tcache *c, const char *key, const char *text, size_t len,
                           size_t cursor, const char *completion, size_t comp_len) {
    if (!c || !key || cursor > len)
        return BASE_ERR_INVALID;
    ifl__tentry *e = ifl__tfind(c, key);
    if (!e) {
        e = &c->e[0];
        for (int i = 1; i < IFL__TCACHE_SLOTS; i++)
            if (!c->e[i].key || (e->key && c->e[i].used < e->used))
                e = &c->e[i];
    }
    ifl__tentry_clear(e);
    if (comp_len == 0)
        return BASE_OK;
    e->key = strdup(key);
    e->text = malloc(len + 1);
    e->comp = malloc(comp_len + 1);
    if (!e->key || !e->text || !e->comp) {
        ifl__tentry_clear(e);
        return BASE_ERR_NOMEM;
    }
    memcpy(e->text, text, len);
    e->text[len] = 0;
    e->len = len;
    e->cursor = cursor;
    memcpy(e->comp, completion, comp_len);
    e->comp[comp_len] = 0;
    e->comp_len = comp_len;
    e->used = ++c->clock;
    return BASE_OK;
}

bool ifl_tcache_get(ifl_tcache *c, const char *key, const char *text, size_t len, size_t cursor,
                    const char **rest, size_t *rest_len) {
    if (!c || !key)
        return false;
    ifl__tentry *e = ifl__tfind(c, key);
    if (!e || cursor < e->cursor || cursor > len)
        return false;
    size_t typed = cursor - e->cursor;
    /* Same text before the old cursor, the typed run equal to the start of the
     * completion, same text after the cursor, and something left to show. */
    if (typed >= e->comp_len || len != e->len + typed)
        return false;
    if (memcmp(text, e->text, e->cursor) != 0 || memcmp(text + e->cursor, e->comp, typed) != 0 ||
        memcmp(text + cursor, e->text + e->cursor, e->len - e->cursor) != 0)
        return false;
    e->used = ++c->clock;
    *rest = e->comp + typed;
    *rest_len = e->comp_len - typed;
    return true;
}

void ifl_tcache_forget(ifl_tcache *c, const char *key) {
    if (!c || !key)
        return;
    ifl__tentry *e = ifl__tfind(c, key);
    if (e)
        ifl__tentry_clear(e);
}
