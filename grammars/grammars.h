/* grammars: the compiled-in tree-sitter languages and their query files.
 *
 * Languages are named canonically ("c", "cpp", "python", "javascript",
 * "typescript", "tsx", "go", "rust", "java", "lua", "bash", "json"). Languages
 * and query texts are static data: nothing here allocates or needs freeing.
 * Thread-safe. */
#ifndef INFILLD_GRAMMARS_H
#define INFILLD_GRAMMARS_H

#include "base.h"

#include <tree_sitter/api.h>

/* The language for a canonical name; NULL when not compiled in. */
const TSLanguage *gr_language(const char *name);

/* Number of compiled-in languages and the canonical name of the i-th. */
size_t gr_language_count(void);
const char *gr_language_name(size_t i);

/* Canonical name (a static string) for an LSP languageId such as
 * "typescriptreact" or "sh"; NULL when unsupported. */
const char *gr_language_for_id(const char *language_id);

/* Canonical name for a path or uri by its file extension ("x/y.rs" → "rust");
 * NULL when unknown. */
const char *gr_language_for_path(const char *path);

/* Text of the query file grammars/queries/<lang>/<name>.scm, embedded at build
 * time; NUL-terminated, static. NULL (and *len 0) when there is none. */
const char *gr_query_source(const char *lang, const char *name, size_t *len);

#endif
