/* Edit scripts for fuzz_syntax_edits: the fuzzer's bytes are read as a
 * sequence of edit operations on a seed document rather than as text, so
 * that most comparisons are made on text that parses without errors (the
 * only ones that can fail under only_clean). */
#ifndef INFILLD_TESTS_SYNTAX_SCRIPT_H
#define INFILLD_TESTS_SYNTAX_SCRIPT_H

#include "base.h"

/* At most this many operations are read from one script. */
#define SYNTAX_SCRIPT_MAX_OPS 24

/* Runs the script ops[0..n) on text (which should parse without errors) with
 * a tree of syntax_edits_segment_bytes segments. Each operation reads its
 * opcode and operands (positions as 16-bit values modulo the length) from
 * ops; missing bytes read as 0. Operations:
 *   - arbitrary byte edits and fragments (brackets, quotes, keywords), kept
 *     pending: the document may have errors until they are undone;
 *   - reparse points (the edited tree is reparsed and compared in the
 *     errorful state it is in);
 *   - undo of all pending edits (in reverse, each an edit, or as one edit
 *     from the common prefix to the common suffix);
 *   - edits that tend to keep text parseable: duplicate or move a whole
 *     line, rename an identifier to another of the document, duplicate,
 *     empty or delete a balanced bracket range, toggle a line's or every
 *     line's CRLF, add a multi-byte character to an identifier; each is
 *     kept when the text then parses without errors, else undone;
 *   - delete a span and type it back byte by byte, or delete it and
 *     re-insert it in one edit.
 * Every undo returns to error-free text, which must equal a fresh parse.
 * Differences on error-free text are counted in *mismatches. */
base_status syntax_script_run(const char *lang, const char *text, size_t len, const uint8_t *ops,
                              size_t n, size_t *mismatches);

#endif
