/* infill syntax: one incrementally edited tree per open document of an lsp
 * document store. Trees follow the store's edit events (ts_tree_edit) and are
 * reparsed lazily, when a completion needs them. */
#include "syntax.h"

#include "syntax_impl.h"

#include <stdlib.h>

typedef struct ifl__doctree {
    const lsp_doc *doc; /* borrowed; the store outlives the entry */
    ifl_tree *tree;     /* NULL for an unsupported language */
} ifl__doctree;

struct ifl_syntax {
    lsp_doc_store *store;
    ifl__doctree *docs;
    size_t n, cap;
};

static ifl__doctree *ifl__find(ifl_syntax *s, const lsp_doc *doc) {
    for (size_t i = 0; i < s->n; i++)
        if (s->docs[i].doc == doc)
            return &s->docs[i];
    return NULL;
}

static void ifl__on_open(void *ud, const lsp_doc *doc) {
    ifl_syntax *s = ud;
    if (ifl__find(s, doc))
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        ifl__doctree *v = realloc(s->docs, cap * sizeof(*v));
        if (!v)
            return; /* the document then gets line-based spans */
        s->docs = v;
        s->cap = cap;
    }
    const char *lang = ifl_syntax_language(lsp_doc_language_id(doc), lsp_doc_uri(doc));
    s->docs[s->n].doc = doc;
    s->docs[s->n].tree = lang ? ifl_tree_new(lang, NULL) : NULL;
    s->n++;
}

static void ifl__on_edit(void *ud, const lsp_doc *doc, const lsp_edit_event *ev) {
    ifl__doctree *d = ifl__find(ud, doc);
    if (d && d->tree)
        ifl_tree_edit(d->tree, ev);
}

static void ifl__on_close(void *ud, const lsp_doc *doc) {
    ifl_syntax *s = ud;
    ifl__doctree *d = ifl__find(s, doc);
    if (!d)
        return;
    ifl_tree_free(d->tree);
    *d = s->docs[--s->n];
}

ifl_syntax *ifl_syntax_new(lsp_doc_store *store) {
    if (!store)
        return NULL;
    ifl_syntax *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->store = store;
    lsp_doc_listener l = {ifl__on_open, ifl__on_edit, ifl__on_close, s};
    if (lsp_doc_store_listen(store, &l) != BASE_OK) {
        free(s);
        return NULL;
    }
    return s;
}

void ifl_syntax_free(ifl_syntax *s) {
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        ifl_tree_free(s->docs[i].tree);
    free(s->docs);
    free(s);
}

static ifl_tree *ifl__tree(ifl_syntax *s, const lsp_doc *doc);

ifl_tree *ifl_syntax_tree(ifl_syntax *s, const lsp_doc *doc) {
    return s && doc ? ifl__tree(s, doc) : NULL;
}

/* The document's tree, created on first use when the document was opened
 * before this subscriber existed. NULL for unsupported languages. */
static ifl_tree *ifl__tree(ifl_syntax *s, const lsp_doc *doc) {
    ifl__doctree *d = ifl__find(s, doc);
    if (!d) {
        ifl__on_open(s, doc);
        d = ifl__find(s, doc);
    }
    return d ? d->tree : NULL;
}

base_status ifl_syntax_locate(ifl_syntax *s, const lsp_doc *doc, size_t cursor, size_t sel_start,
                              size_t sel_end, ifl_span *out) {
    if (!s || !doc || !out)
        return BASE_ERR_INVALID;
    size_t len = 0;
    const char *text = lsp_doc_text(doc, &len);
    ifl_tree *t = ifl__tree(s, doc);
    if (!t) {
        const char *lang = ifl_syntax_language(lsp_doc_language_id(doc), lsp_doc_uri(doc));
        return ifl_syntax_locate_text(lang, text, len, cursor, sel_start, sel_end, out);
    }
    return ifl_tree_locate(t, text, len, cursor, sel_start, sel_end, out);
}

base_status ifl_syntax_postprocess(ifl_syntax *s, const lsp_doc *doc, const ifl_span *span,
                                   const char *candidate, size_t cand_len, const ifl_post_opts *o,
                                   char **out, size_t *out_len) {
    if (!s || !doc || !span || !out)
        return BASE_ERR_INVALID;
    size_t len = 0;
    const char *text = lsp_doc_text(doc, &len);
    ifl_tree *t = ifl__tree(s, doc);
    if (!t)
        return ifl_syntax_postprocess_text(NULL, text, len, span, candidate, cand_len, o, out,
                                           out_len);
    return ifl_tree_postprocess(t, text, len, span, candidate, cand_len, o, out, out_len);
}
