#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct base__chunk {
    struct base__chunk *next;
    size_t cap;
    size_t used;
    _Alignas(16) unsigned char data[];
} base__chunk;

struct base_arena {
    base__chunk *head; /* current chunk; older ones follow via next */
    size_t chunk_size;
    size_t total_used;
};

static base__chunk *base__chunk_new(size_t cap) {
    base__chunk *c = malloc(sizeof(base__chunk) + cap);
    if (!c)
        return NULL;
    c->next = NULL;
    c->cap = cap;
    c->used = 0;
    return c;
}

base_arena *base_arena_new(size_t chunk_size) {
    base_arena *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    return a;
}

void base_arena_free(base_arena *a) {
    if (!a)
        return;
    base__chunk *c = a->head;
    while (c) {
        base__chunk *n = c->next;
        free(c);
        c = n;
    }
    free(a);
}

void base_arena_reset(base_arena *a) {
    if (!a || !a->head)
        return;
    /* Keep the oldest chunk (the tail of the list) for reuse. */
    base__chunk *c = a->head;
    while (c->next) {
        base__chunk *n = c->next;
        free(c);
        c = n;
    }
    c->used = 0;
    a->head = c;
    a->total_used = 0;
}

void *base_arena_alloc(base_arena *a, size_t n) {
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n)
        return NULL;
    base__chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > a->chunk_size ? need : a->chunk_size;
        base__chunk *nc = base__chunk_new(cap);
        if (!nc)
            return NULL;
        nc->next = c;
        a->head = nc;
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += need;
    a->total_used += need;
    return p;
}

void *base_arena_calloc(base_arena *a, size_t n) {
    void *p = base_arena_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

char *base_arena_strndup(base_arena *a, const char *s, size_t n) {
    char *p = base_arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *base_arena_strdup(base_arena *a, const char *s) {
    return base_arena_strndup(a, s, strlen(s));
}

char *base_arena_printf(base_arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return NULL;
    }
    char *p = base_arena_alloc(a, (size_t)n + 1);
    if (p)
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

size_t base_arena_used(const base_arena *a) { return a->total_used; }
