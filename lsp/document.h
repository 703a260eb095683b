/* lsp document store: the server's exact copy of every open buffer.
 *
 * Text is UTF-8 bytes as the client sent them (CRLF kept). Positions from the
 * client are converted in exactly one place (lsp_doc_pos_to_offset) according to
 * the negotiated position encoding. Every applied edit is published to
 * subscribers so that infill/ can keep syntax trees in step; lsp/ never
 * includes tree-sitter. Loop-thread only. */
#ifndef INFILLD_LSP_DOCUMENT_H
#define INFILLD_LSP_DOCUMENT_H

#include "base.h"

typedef enum lsp_pos_encoding {
    LSP_ENC_UTF16 = 0, /* the LSP default */
    LSP_ENC_UTF8,
    LSP_ENC_UTF32,
} lsp_pos_encoding;

typedef struct lsp_point {
    uint32_t row;    /* 0-based line (lines end at \n) */
    uint32_t column; /* byte offset within the line */
} lsp_point;

/* One applied edit in tree-sitter's terms (bytes and byte points). */
typedef struct lsp_edit_event {
    size_t start_byte, old_end_byte, new_end_byte;
    lsp_point start_point, old_end_point, new_end_point;
} lsp_edit_event;

typedef struct lsp_doc lsp_doc;
typedef struct lsp_doc_store lsp_doc_store;

/* Subscriber callbacks, all optional. `ud` is the subscriber's. */
typedef struct lsp_doc_listener {
    void (*opened)(void *ud, const lsp_doc *doc);
    void (*edited)(void *ud, const lsp_doc *doc, const lsp_edit_event *ev); /* after applying */
    void (*closed)(void *ud, const lsp_doc *doc);                           /* before freeing */
    void *ud;
} lsp_doc_listener;

lsp_doc_store *lsp_doc_store_new(void);
void lsp_doc_store_free(lsp_doc_store *s); /* NULL-safe; closes every document */
/* At most 8 listeners; returns ERR_TOO_LARGE past that. */
base_status lsp_doc_store_listen(lsp_doc_store *s, const lsp_doc_listener *l);

base_status lsp_doc_open(lsp_doc_store *s, const char *uri, const char *language_id,
                         int64_t version, const char *text, size_t len);
base_status lsp_doc_close(lsp_doc_store *s, const char *uri);
lsp_doc *lsp_doc_get(lsp_doc_store *s, const char *uri); /* borrowed; NULL if not open */
size_t lsp_doc_count(const lsp_doc_store *s);
/* The i-th open document (any order; NULL past the end), for walking them all. */
lsp_doc *lsp_doc_at(lsp_doc_store *s, size_t i);

/* Replaces the whole text (full sync). Published as one edit. */
base_status lsp_doc_replace_all(lsp_doc *d, int64_t version, const char *text, size_t len);
/* Applies one incremental change. Returns ERR_RANGE (document untouched) when
 * the range lies outside the document or is reversed. A position whose
 * character lies past the end of its line is clamped to the line end (LSP). */
base_status lsp_doc_apply(lsp_doc *d, lsp_pos_encoding enc, uint32_t start_line,
                          uint32_t start_char, uint32_t end_line, uint32_t end_char,
                          const char *text, size_t len);
void lsp_doc_set_version(lsp_doc *d, int64_t version);

const char *lsp_doc_uri(const lsp_doc *d);
const char *lsp_doc_language_id(const lsp_doc *d);
int64_t lsp_doc_version(const lsp_doc *d);
/* Grows with every open and edit in the store: larger = more recently touched. */
uint64_t lsp_doc_touched(const lsp_doc *d);
/* Current text, NUL-terminated; valid until the next edit. */
const char *lsp_doc_text(const lsp_doc *d, size_t *len);
size_t lsp_doc_line_count(const lsp_doc *d);

/* LSP position → byte offset (and back). pos_to_offset clamps a character past
 * the line end to the line end and returns ERR_RANGE for a line past the end. */
base_status lsp_doc_pos_to_offset(const lsp_doc *d, lsp_pos_encoding enc, uint32_t line,
                                  uint32_t character, size_t *offset);
base_status lsp_doc_offset_to_pos(const lsp_doc *d, lsp_pos_encoding enc, size_t offset,
                                  uint32_t *line, uint32_t *character);
/* Byte point (row, byte column) of a byte offset. */
lsp_point lsp_doc_offset_to_point(const lsp_doc *d, size_t offset);

#endif
