/* infill syntax: module-private parts shared by syntax.c (span location,
 * validation, post-processing), syntax_tree.c (ifl_tree) and syntax_doc.c
 * (the document-store binding). */
#ifndef INFILLD_INFILL_SYNTAX_IMPL_H
#define INFILLD_INFILL_SYNTAX_IMPL_H

#include "grammars.h"
#include "syntax.h"

/* One segment of a buffer (syntax_tree.c): [start, start + len), starting at
 * column 0 of row `row`, parsed on its own. */
typedef struct ifl__seg {
    size_t start, len;
    uint32_t row;       /* row of start in the buffer */
    uint32_t row_count; /* line breaks inside the segment */
    TSTree *tree;       /* positions relative to start; NULL: parse afresh */
    bool dirty;         /* edited since parsed */
    /* The tree was dropped to save memory (far from the focus, below) with
     * the text unchanged since its parse: errors still holds its count, and
     * whatever needs the tree parses the segment afresh. */
    bool evicted;
    long errors;      /* ERROR + MISSING nodes of tree; -1 when not counted yet */
    size_t split_len; /* length when a cut found nothing to cut at; 0: none */
} ifl__seg;

/* A C/C++ include guard, parsed as blanks (if_start is SIZE_MAX when
 * none): the `#ifndef NAME` at [if_start, if_end) and the `#endif` at
 * [endif_start, endif_end); the `#define NAME` after the #ifndef, which
 * makes it a guard, ends at head_end. Only offsets, so that a copy
 * compares with memcmp. */
typedef struct ifl__include_guard {
    size_t if_start, if_end, endif_start, endif_end, head_end;
} ifl__include_guard;

struct ifl_tree {
    const char *lang;     /* canonical name, static */
    const TSLanguage *ts; /* borrowed, static */
    TSParser *parser;     /* owned */
    ifl__seg *segs;       /* owned, in buffer order, covering [0, len) */
    size_t nseg, cap;
    size_t len;        /* buffer length the segments follow */
    size_t seg_bytes;  /* target segment size; 0: one segment */
    size_t mend_bytes; /* ifl_tree_set_mend_bytes */
    bool rebuild;      /* cut and parse afresh on the next update */
    bool dirty;        /* edited since the last update */
    bool timed_out;    /* the last update ran out of time on this text */
    long errors;       /* sum over segments; -1 when not counted yet */
    /* Trees are kept only for the segments within keep_bytes of the focus,
     * the byte of the last edit or tree read (SIZE_MAX: all of them). */
    size_t keep_bytes, focus;
    bool restored; /* a read parsed an evicted segment again since then */
    ifl__include_guard guard;
    /* Bytes edited since the last update, in current offsets (a union), so
     * that an edit of a preprocessor line looks for the guard again. */
    size_t edit_lo, edit_hi;
    bool edited;
    bool edit_deleted;    /* one of those edits removed bytes */
    TSQuery *spans;       /* borrowed (shared per language); NULL when absent */
    TSQueryCursor *qc;    /* owned */
    uint32_t cap_comment; /* capture ids in spans; UINT32_MAX when absent */
    uint32_t cap_string;
    uint32_t cap_body;
};

/* The root of the segment holding byte pos and that segment's start (node
 * positions are relative to it), parsing it again from s, the text t
 * follows, when its tree was evicted; pos becomes the focus. False before a
 * successful ifl_tree_update of the current text, or when that parse fails. */
bool ifl__tree_at(ifl_tree *t, const char *s, size_t pos, TSNode *root, size_t *base);

/* Parses text with t's parser (from old when non-NULL, unless
 * ifl__fresh_only says the reuse may go wrong) within a time budget
 * that grows with len; NULL with *st ERR_TIMEOUT when the grammar takes
 * pathological time (t may get a new parser), ERR_NOMEM otherwise. */
TSTree *ifl__parse(ifl_tree *t, const TSTree *old, const char *text, uint32_t len, base_status *st);

/* Is n bytes of text in t's language to be parsed from scratch, not from
 * an edited tree, because tree-sitter's incremental reparse may read it
 * otherwise than a fresh parse (bash up to IFL__FRESH_MAX; syntax_tree.c)? */
bool ifl__fresh_only(const ifl_tree *t, size_t n);

/* Letters, digits, '_' and any non-ASCII byte (syntax.c). */
bool ifl__word_char(char c);

/* ERROR and MISSING nodes under n; *inside (when non-NULL) counts those
 * within [a, b). */
size_t ifl__count_errors_in(TSNode n, size_t a, size_t b, size_t *inside);

/* ---- the bracket lexer (syntax.c) ---------------------------------------------
 * Counts (), [] and {} outside comments and strings, resumably. */
typedef struct ifl__lexdef {
    const char *line_comment; /* NULL: none */
    const char *block_open, *block_close;
    bool squote;       /* '...' is a literal */
    bool backtick;     /* `...` is a literal that may span lines */
    bool triple;       /* """...""" and '''...''' (Python) */
    bool hash_at_word; /* '#' starts a comment only at a word start (shell) */
    bool parens;       /* count () (shell `case` patterns have lone ')') */
    bool ml_quotes;    /* '...' and "..." may span lines (shell) */
    bool lua_long;     /* Lua long brackets: --[==[ comments ]==] and [==[ strings ]==] */
    bool char_lits;    /* 'c' is a character literal, 'a a lifetime (Rust) */
    bool comment_cont; /* a backslash before the line break continues a line comment (C) */
} ifl__lexdef;

typedef enum ifl__lexstate {
    IFL__LX_CODE = 0,
    IFL__LX_LINE_COMMENT,
    IFL__LX_BLOCK_COMMENT,
    IFL__LX_DQ,
    IFL__LX_SQ,
    IFL__LX_BT,
    IFL__LX_TDQ,
    IFL__LX_TSQ,
} ifl__lexstate;

typedef struct ifl__lex {
    ifl__lexstate st;
    long bal[3]; /* () [] {} */
    char prev;
    int level; /* '=' count of the open Lua long bracket */
} ifl__lex;

/* NULL for a language without lexer rules. */
const ifl__lexdef *ifl__lexdef_for(const char *lang);
void ifl__lex_run(const ifl__lexdef *d, ifl__lex *lx, const char *s, size_t n);

#endif
