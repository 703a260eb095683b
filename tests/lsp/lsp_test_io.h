/* Shared by the lsp unit tests that drive an lsp_server in memory: framing
 * a message into the server, and reading back what it wrote. */
#ifndef INFILLD_TESTS_LSP_TEST_IO_H
#define INFILLD_TESTS_LSP_TEST_IO_H

#include "base.h"
#include "lsp.h"

#include <jansson.h>

/* What the server wrote: lsp_test_write (an lsp_server_hooks.write) appends
 * every byte here. */
extern base_buf lsp_test_out;
void lsp_test_write(void *ud, const char *data, size_t n);

/* A provider that answers nothing (for tests of the server's own work). */
void lsp_test_no_complete(void *ud, lsp_server *s, const lsp_completion_req *r);
void lsp_test_no_cancel(void *ud, lsp_server *s, lsp_token t);

/* Frames json (Content-Length header) and feeds it to the server. */
void lsp_test_send(lsp_server *s, const char *json);

/* The messages framed in out (everything the server wrote since the last
 * call), as a JSON array; empties out. */
json_t *lsp_test_drain(base_buf *out);

#endif
