/* infill syntax: module-private parts shared by syntax.c (text level) and
 * syntax_doc.c (the document-store binding). */
#ifndef INFILLD_INFILL_SYNTAX_IMPL_H
#define INFILLD_INFILL_SYNTAX_IMPL_H

#include "grammars.h"
#include "syntax.h"

struct ifl_tree {
    const char *lang;     /* canonical name, static */
    const TSLanguage *ts; /* borrowed, static */
    TSParser *parser;     /* owned */
    TSTree *tree;         /* owned; NULL before the first parse */
    bool dirty;           /* edited since the last parse */
    long errors;          /* ERROR + MISSING nodes of tree; -1 when not counted yet */
    TSQuery *spans;       /* owned; the language's spans.scm, NULL when absent */
    TSQueryCursor *qc;    /* owned */
    uint32_t cap_comment; /* capture ids in spans; UINT32_MAX when absent */
    uint32_t cap_string;
    uint32_t cap_body;
};

#endif
