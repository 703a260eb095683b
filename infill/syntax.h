/* infill syntax: tree-sitter span location, candidate validation and
 * post-processing. Loop-thread only; everything here takes microseconds to a
 * few milliseconds. Unsupported languages fall back to line-based rules. */
#ifndef INFILLD_INFILL_SYNTAX_H
#define INFILLD_INFILL_SYNTAX_H

#include "base.h"
#include "document.h"

/* How the hole may be filled. */
typedef enum ifl_span_kind {
    IFL_SPAN_LINE_REST = 0, /* (a) mid-line, code after the cursor: single line */
    IFL_SPAN_BLOCK,         /* (b) opens a block / empty body: multi-line up to the block end */
    IFL_SPAN_STATEMENT,     /* (c) empty line between statements: one statement / few lines */
    IFL_SPAN_COMMENT,       /* (d) inside a comment or string: short, single line */
    IFL_SPAN_SELECTION,     /* (e) replace a selected range (regenerate) */
    IFL_SPAN_LINE_END,      /* end of a line with nothing special: finish the line */
} ifl_span_kind;

typedef struct ifl_span {
    ifl_span_kind kind;
    bool multiline;    /* may the completion contain newlines */
    size_t hole_start; /* byte offsets in the document; equal for an insertion */
    size_t hole_end;
    int n_tokens;         /* token budget N of the first run */
    int n_max;            /* largest budget the hole may grow to (docs/SAMPLERS.md) */
    int max_lines;        /* most lines the completion may have (1 when !multiline) */
    const char *language; /* canonical language name ("python"), or NULL when unsupported */
    const char *reason;   /* one-line explanation for --explain; static string */
} ifl_span;

typedef struct ifl_syntax ifl_syntax; /* per-document trees, subscribed to a doc store */

/* Subscribes to the store's edit events and keeps one tree per open document. */
ifl_syntax *ifl_syntax_new(lsp_doc_store *store);
void ifl_syntax_free(ifl_syntax *s);

/* The document's tree (borrowed; valid until the document closes), created
 * on first use; NULL for a language without a grammar. Reparsed lazily: call
 * ifl_tree_update with the document's text before reading it. */
typedef struct ifl_tree ifl_tree;
ifl_tree *ifl_syntax_tree(ifl_syntax *s, const lsp_doc *doc);

/* Canonical language name for an LSP languageId or, failing that, a file
 * extension of the uri/path; NULL when unsupported. */
const char *ifl_syntax_language(const char *language_id, const char *uri);
/* Caps the CPU time of every tree-sitter parse of this process, in ms (the
 * "parseBudgetMs" setting); 0 keeps only the built-in budget of 100 ms plus
 * 10 ms per KiB. A parse past it gives up and the span uses the line rules. */
void ifl_syntax_set_parse_budget(unsigned ms);

/* Locates the span for a completion at cursor (byte offset), or for a selection
 * [sel_start, sel_end) when sel_end > sel_start (widened to token boundaries). */
base_status ifl_syntax_locate(ifl_syntax *s, const lsp_doc *doc, size_t cursor, size_t sel_start,
                              size_t sel_end, ifl_span *out);

/* Post-processes a raw candidate for the span: trims to the span, drops a
 * duplicate of the following text, normalises indentation; then (when validate)
 * rejects it if prefix + candidate + suffix has more syntax errors than the
 * document with the hole left empty. Returns ERR_PARSE for a rejected
 * candidate, with *out NULL. *out is malloc'ed; caller frees. */
typedef struct ifl_post_opts {
    bool validate;
} ifl_post_opts;

base_status ifl_syntax_postprocess(ifl_syntax *s, const lsp_doc *doc, const ifl_span *span,
                                   const char *candidate, size_t cand_len, const ifl_post_opts *o,
                                   char **out, size_t *out_len);

/* Same, for text that is not an open document (the one-shot CLI): */
base_status ifl_syntax_locate_text(const char *language, const char *text, size_t len,
                                   size_t cursor, size_t sel_start, size_t sel_end, ifl_span *out);
base_status ifl_syntax_postprocess_text(const char *language, const char *text, size_t len,
                                        const ifl_span *span, const char *candidate,
                                        size_t cand_len, const ifl_post_opts *o, char **out,
                                        size_t *out_len);

/* Validation alone: does replacing [hole_start, hole_end) of text with the
 * candidate add syntax errors (tree-sitter ERROR/MISSING nodes) or unbalance
 * brackets, compared with the text with the hole left empty? OK when not,
 * ERR_PARSE when it does, ERR_UNSUPPORTED for a language without a grammar. */
base_status ifl_syntax_validate_text(const char *language, const char *text, size_t len,
                                     size_t hole_start, size_t hole_end, const char *candidate,
                                     size_t cand_len);

/* ---- one incrementally parsed buffer -------------------------------------
 * What ifl_syntax keeps per open document, usable without a document store
 * (tests, benchmarks, the CLI). The caller owns the text and applies each edit
 * to its text and to the tree (ifl_tree_edit); the tree is reparsed lazily. */

/* NULL with *err = ERR_UNSUPPORTED for a language without a grammar. */
ifl_tree *ifl_tree_new(const char *language, base_status *err);
void ifl_tree_free(ifl_tree *t); /* NULL-safe */
const char *ifl_tree_language(const ifl_tree *t);
/* Forgets the text and its trees, keeping the parser and the segment size:
 * the next update parses afresh, exactly as a new tree would (tests reuse
 * one tree for many fresh parses). */
void ifl_tree_reset(ifl_tree *t);
/* Records an edit already applied to the text; the next use reparses. */
void ifl_tree_edit(ifl_tree *t, const lsp_edit_event *ev);
/* Reparses (incrementally) when edited since the last parse. */
base_status ifl_tree_update(ifl_tree *t, const char *text, size_t len);
/* The tree's S-expression (after ifl_tree_update); malloc'ed, caller frees. */
char *ifl_tree_sexp(ifl_tree *t, const char *text, size_t len);
/* Number of ERROR and MISSING nodes of the current tree. */
size_t ifl_tree_error_count(ifl_tree *t, const char *text, size_t len);
/* As ifl_syntax_locate / ifl_syntax_postprocess, on text the tree follows. */
base_status ifl_tree_locate(ifl_tree *t, const char *text, size_t len, size_t cursor,
                            size_t sel_start, size_t sel_end, ifl_span *out);
base_status ifl_tree_postprocess(ifl_tree *t, const char *text, size_t len, const ifl_span *span,
                                 const char *candidate, size_t cand_len, const ifl_post_opts *o,
                                 char **out, size_t *out_len);

/* Segments: a tree is kept as top-level regions of about this many bytes,
 * parsed on their own, so that a reparse costs what the edited region costs
 * (docs/SPANS.md); IFL_TREE_SEGMENT_BYTES by default. 0 keeps one tree for
 * the whole buffer; small values are for tests, which cut at every sound
 * place. Takes effect on the next update. */
#define IFL_TREE_SEGMENT_BYTES 512
void ifl_tree_set_segment_bytes(ifl_tree *t, size_t bytes);
size_t ifl_tree_segment_count(const ifl_tree *t);
/* A construct the line lexer's cuts split in pieces (a C return type on its
 * own line, a Lua function whose body has lines in column 0) is mended by
 * parsing the pieces as one, tried with up to this many bytes of segments;
 * IFL_TREE_MEND_BYTES by default. Small values are for tests of the line
 * lexer itself, whose misplaced cuts a wide mend would hide. */
#define IFL_TREE_MEND_BYTES (8 * IFL_TREE_SEGMENT_BYTES)
void ifl_tree_set_mend_bytes(ifl_tree *t, size_t bytes);

/* Memory: a tree takes about 40 bytes per byte of text, so after each
 * update only the segments within this many bytes of the focus (the last
 * edit, span location or validation), the focus's neighbours and segments
 * over 16 KiB keep theirs; the others keep their error counts, and a later
 * read or edit there parses the segment afresh (a 512-byte segment: about
 * 0.1 ms). SIZE_MAX keeps every tree; 0 keeps only the focus's segment, its
 * neighbours and the large ones. Takes effect on the next update. */
#define IFL_TREE_KEEP_BYTES (16 * 1024)
void ifl_tree_set_keep_bytes(ifl_tree *t, size_t bytes);
/* Segments holding a tree now. */
size_t ifl_tree_kept_count(const ifl_tree *t);

/* Short lowercase name of a span kind ("line_rest", "block", ...). */
const char *ifl_span_kind_name(ifl_span_kind k);

#endif
