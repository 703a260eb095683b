/* Shared by test_syntax_edits and fuzz_syntax_edits: seed documents and the
 * edit-and-compare loop. */
#ifndef INFILLD_TESTS_SYNTAX_EDITS_H
#define INFILLD_TESTS_SYNTAX_EDITS_H

#include "base.h"
#include "syntax.h"

typedef struct syntax_edits_seed {
    const char *lang;
    const char *text;
} syntax_edits_seed;

extern const syntax_edits_seed syntax_edits_seeds[];
extern const size_t syntax_edits_nseeds;
/* Documents of several top-level constructs (segment cuts between them). */
extern const syntax_edits_seed syntax_edits_multi[];
extern const size_t syntax_edits_nmulti;

/* Segment size of the edited tree (ifl_tree_set_segment_bytes; 1 cuts at
 * every sound place). The fresh parse it is compared with is always one
 * tree for the whole buffer. */
extern size_t syntax_edits_segment_bytes;
/* Trees kept around the focus (ifl_tree_set_keep_bytes): 0 drops every tree
 * but the last edit's or read's after each update, so that the edited tree
 * is mostly segments parsed afresh when needed. The default's window covers
 * every seed document. */
extern size_t syntax_edits_keep_bytes;

/* How far the tree cut at every sound place in syntax_edits_cut_compare
 * mends a construct cut in pieces (ifl_tree_set_mend_bytes): tests of the
 * line lexer set it low, so that a misplaced cut shows. */
extern size_t syntax_edits_mend_bytes;

/* Applies `rounds` random edits drawn from rng to a copy of text and to an
 * ifl_tree, comparing the incremental tree with a fresh parse after every
 * edit batch; counts differing comparisons in *mismatches (and prints the
 * first). With only_clean, a difference is counted only when the fresh parse
 * has no syntax errors: tree-sitter's error recovery may legitimately take
 * another path when parsing resumes from an edited tree. */
base_status syntax_edits_run(const char *lang, const char *text, size_t len, base_rng *rng,
                             int rounds, bool only_clean, size_t *mismatches);

/* Over all calls: comparisons on documents that parse without errors, and
 * differences on documents with errors; syntax_edits_points counts every
 * comparison (every reparse of the edited tree checked against a fresh one,
 * clean or not). */
extern size_t syntax_edits_clean_compared, syntax_edits_errorful_diffs, syntax_edits_points;
/* When set, comparisons whose fresh parse has errors are not made at all
 * under only_clean (they could not count): errorful_diffs stays 0. */
extern bool syntax_edits_skip_errorful;

/* Applies one edit (replace del bytes at start by ins) to doc and to t. */
base_status syntax_edits_apply(ifl_tree *t, base_buf *doc, size_t start, size_t del,
                               const char *ins, size_t ins_len);

/* text read cut at every sound place against one fresh tree: whole (of
 * lang, segment bytes 0) is reset and parses it; *clean says it had no
 * syntax errors, and only then is a tree cut at every sound place parsed
 * and compared. When the two differ, *cut and *one hold their
 * S-expressions (the caller frees them), else NULL. */
base_status syntax_edits_cut_compare(const char *lang, ifl_tree *whole, const char *text,
                                     size_t len, bool *clean, char **cut, char **one);

/* The code-th string of len bytes over alpha[0..na), in out (len bytes):
 * every one for code = 0, 1, ... until it returns false (past na^len - 1),
 * for tests that try every short string. */
bool syntax_edits_nth_string(const char *alpha, size_t na, size_t len, size_t code, char *out);

/* One comparison of t (incremental) with a fresh parse of doc, counted in
 * *mismatches as in syntax_edits_run; *ref is the caller's reference tree
 * (created on first use; the caller frees it). *clean (may be NULL): the
 * fresh parse had no syntax errors. */
base_status syntax_edits_compare(const char *lang, ifl_tree *t, ifl_tree **ref, const base_buf *doc,
                                 bool only_clean, const char *what, size_t *mismatches,
                                 bool *clean);

/* Retyping sessions: deletes a random span of up to 40 bytes and types it
 * back one byte per edit, comparing the incremental tree with a fresh parse
 * after every one to three keystrokes (lazy reparse), `sessions` times. The
 * document returns to its original text after every session. */
base_status syntax_edits_retype(const char *lang, const char *text, size_t len, base_rng *rng,
                                int sessions, bool only_clean, size_t *mismatches,
                                size_t *compared);

/* One tree of lang that lives through a run of edits, as a buffer's does,
 * compared with a fresh parse after each edit. */
typedef struct syntax_edits_doc {
    const char *lang;
    ifl_tree *t, *ref; /* the edited tree and its fresh reference */
    base_buf doc;
    size_t compares, clean, mismatches; /* clean: comparisons without errors */
    bool last_clean;                    /* the last edit's fresh parse had no syntax errors */
} syntax_edits_doc;

/* e holds text[0..len) in a tree of seg segment bytes that keeps keep
 * bytes of trees (ifl_tree_set_segment_bytes, ifl_tree_set_keep_bytes).
 * Close e whatever it returns. */
base_status syntax_edits_doc_open(syntax_edits_doc *e, const char *lang, const char *text,
                                  size_t len, size_t seg, size_t keep);

/* Replaces del bytes at `at` by ins[0..n) and compares the edited tree
 * with a fresh parse (only_clean; what names the edit in the report of a
 * difference). */
base_status syntax_edits_doc_edit(syntax_edits_doc *e, size_t at, size_t del, const char *ins,
                                  size_t n, const char *what);

/* Compares the edited tree with a fresh parse of the text as it stands
 * (only_clean), counted as syntax_edits_doc_edit counts; *clean (may be
 * NULL): the fresh parse had no syntax errors. */
base_status syntax_edits_doc_check(syntax_edits_doc *e, const char *what, bool *clean);

void syntax_edits_doc_close(syntax_edits_doc *e);

#endif
