/* Shared lsp test I/O (see lsp_test_io.h). */
#include "lsp_test_io.h"

#include <string.h>

base_buf lsp_test_out;

void lsp_test_write(void *ud, const char *data, size_t n) {
    (void)ud;
    base_buf_append(&lsp_test_out, data, n);
}

void lsp_test_no_complete(void *ud, lsp_server *s, const lsp_completion_req *r) {
    (void)ud;
    (void)s;
    (void)r;
}

void lsp_test_no_cancel(void *ud, lsp_server *s, lsp_token t) {
    (void)ud;
    (void)s;
    (void)t;
}

void lsp_test_send(lsp_server *s, const char *json) {
    base_buf b;
    base_buf_init(&b);
    lsp_frame_write(&b, json, strlen(json));
    lsp_server_feed(s, b.data, b.len);
    base_buf_deinit(&b);
}

json_t *lsp_test_drain(base_buf *out) {
    json_t *arr = json_array();
    lsp_framer *f = lsp_framer_new(0);
    lsp_framer_push(f, out->data ? out->data : "", out->len);
    for (;;) {
        lsp_frame fr;
        lsp_framer_next(f, &fr);
        if (fr.kind != LSP_FRAME_MESSAGE)
            break;
        json_array_append_new(arr, json_loadb(fr.body, fr.len, 0, NULL));
    }
    lsp_framer_free(f);
    out->len = 0;
    return arr;
}
