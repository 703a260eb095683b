/* libFuzzer harness over framing + JSON decoding + dispatch + document edits.
 * The first byte picks a mode:
 *   even: the rest is a byte stream fed to an initialized lsp_server (with an
 *         open document and a provider that answers at once), split into
 *         chunks at points chosen by the data;
 *   odd:  the rest is a list of edit operations applied to a document in all
 *         three encodings, checked against the store's own invariants. */
#include "lsp.h"

#include <stdlib.h>
#include <string.h>

static void sink(void *ud, const char *d, size_t n) {
    (void)ud;
    (void)d;
    (void)n;
}

static void answer(void *ud, lsp_server *srv, const lsp_completion_req *r) {
    (void)ud;
    /* Alternate a valid insertion with a bogus range and an error. */
    lsp_completion_item it = {
        .text = "x\xff()", .len = 4, .start = r->cursor, .end = r->cursor, .confidence = 0.5};
    if (r->token % 3 == 1)
        it.end = r->cursor + 7;
    lsp_server_complete(srv, r->token, &it, 1, r->token % 3 == 2 ? BASE_ERR_MODEL : BASE_OK, NULL);
}

static void cancel(void *ud, lsp_server *srv, lsp_token t) {
    (void)ud;
    (void)srv;
    (void)t;
}

/* The session's opening messages (initialize for each encoding, didOpen),
 * framed once: every input starts with the same bytes. Built on first use,
 * kept for the life of the process. */
static base_buf opening[3];

static const base_buf *framed(int k) {
    base_buf *b = &opening[k];
    if (b->len)
        return b;
    char json[256];
    if (k < 2)
        snprintf(json, sizeof(json),
                 "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                 "\"capabilities\":{\"general\":{\"positionEncodings\":[\"%s\"]}}}}",
                 k ? "utf-8" : "utf-16");
    else
        snprintf(json, sizeof(json), "%s",
                 "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{"
                 "\"textDocument\":{\"uri\":\"file:///f\",\"languageId\":\"c\",\"version\":1,"
                 "\"text\":\"int main() {\\r\\n  return \\ud83d\\ude00;\\n}\\n\"}}}");
    lsp_frame_write(b, json, strlen(json));
    return b;
}

static void feed_framed(lsp_server *s, int k) {
    const base_buf *b = framed(k);
    lsp_server_feed(s, b->data, b->len);
}

static void fuzz_server(const uint8_t *data, size_t size) {
    lsp_server_hooks h = {.write = sink};
    lsp_provider_i p = {.complete = answer, .cancel = cancel};
    /* A small message limit, so that inputs of a few KiB reach the
     * oversized-message paths (a 64 KiB limit needed 64 KiB inputs). */
    lsp_server_opts o = {.max_message = 1 << 12};
    lsp_server *s = lsp_server_new(&h, &p, &o, NULL);
    if (!s)
        return;
    feed_framed(s, size && (data[0] & 1)); /* initialize: utf-8 or utf-16 */
    feed_framed(s, 2);                     /* didOpen */
    size_t i = 0;
    while (i < size) {
        size_t n = 1 + (data[i] % 97);
        if (n > size - i)
            n = size - i;
        lsp_server_feed(s, (const char *)data + i, n);
        i += n;
    }
    lsp_server_eof(s);
    lsp_server_free(s);
}

static void fuzz_doc(const uint8_t *data, size_t size) {
    lsp_doc_store *st = lsp_doc_store_new();
    if (!st)
        return;
    lsp_doc_open(st, "u", "c", 1, "a\xC3\xA9\r\n\xF0\x9F\x98\x80z\n", 11);
    lsp_doc *d = lsp_doc_get(st, "u");
    size_t i = 0;
    while (i + 6 <= size) {
        lsp_pos_encoding enc = (lsp_pos_encoding)(data[i] % 3);
        uint32_t l0 = data[i + 1] % 8, c0 = data[i + 2] % 12, l1 = data[i + 3] % 8,
                 c1 = data[i + 4] % 12;
        size_t tl = data[i + 5] % 8;
        i += 6;
        if (tl > size - i)
            tl = size - i;
        lsp_doc_apply(d, enc, l0, c0, l1, c1, (const char *)data + i, tl);
        i += tl;
        /* Invariants: every offset maps to a position and back. */
        size_t len;
        const char *t = lsp_doc_text(d, &len);
        if (t[len] != '\0')
            abort();
        size_t lines = 1;
        for (size_t k = 0; k < len; k++)
            lines += t[k] == '\n';
        if (lines != lsp_doc_line_count(d))
            abort();
        uint32_t line, ch;
        size_t off;
        if (lsp_doc_offset_to_pos(d, LSP_ENC_UTF8, len, &line, &ch) != BASE_OK ||
            lsp_doc_pos_to_offset(d, LSP_ENC_UTF8, line, ch, &off) != BASE_OK || off != len)
            abort();
    }
    lsp_doc_store_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int quiet;
    if (!quiet) {
        base_log_set_level(BASE_LOG_OFF);
        /* jansson seeds its hash function from /dev/urandom by default; a
         * fixed seed keeps -seed=1 runs repeatable (tests/fuzz/run.sh). */
        json_object_seed(1);
        quiet = 1;
    }
    if (size == 0)
        return 0;
    if (data[0] & 2)
        fuzz_doc(data + 1, size - 1);
    else
        fuzz_server(data + 1, size - 1);
    return 0;
}
