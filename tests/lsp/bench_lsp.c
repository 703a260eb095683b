/* bench_lsp: LSP layer overheads (a benchmark program, not a test).
 *   1. per message: frame parse + dispatch + document edit (didChange), and
 *      frame parse + dispatch + provider call + response (inlineCompletion
 *      answered synchronously), p50 / p99;
 *   2. one incremental edit in a 10,000-line document (lsp_doc_apply), p50/p99;
 *   3. resident memory before and after 100,000 edits through the server.
 * Usage: bench_lsp [iterations] */
#include "lsp.h"
#include "rss.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t out_bytes;
static void sink(void *ud, const char *d, size_t n) {
    (void)ud;
    (void)d;
    out_bytes += n;
}
static void answer(void *ud, lsp_server *srv, const lsp_completion_req *r) {
    (void)ud;
    lsp_completion_item it = {
        .text = "foo(bar)", .len = 8, .start = r->cursor, .end = r->cursor, .confidence = -1};
    lsp_server_complete(srv, r->token, &it, 1, BASE_OK, NULL);
}
static void cancel(void *ud, lsp_server *srv, lsp_token t) {
    (void)ud;
    (void)srv;
    (void)t;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *ns, size_t n) {
    qsort(ns, n, sizeof(*ns), cmp_u64);
    printf("%-58s p50 %7.2f us  p99 %7.2f us  (n=%zu)\n", what, ns[n / 2] / 1e3,
           ns[n * 99 / 100] / 1e3, n);
}

static void framed(base_buf *b, const char *json) {
    b->len = 0;
    lsp_frame_write(b, json, strlen(json));
}

/* A document of `lines` lines of about 40 bytes, as a JSON string body. */
static char *make_text(int lines, size_t *len) {
    base_buf t;
    base_buf_init(&t);
    for (int i = 0; i < lines; i++)
        base_buf_printf(&t, "    value_%05d = compute(value_%05d, %d);\n", i, i, i);
    return base_buf_steal(&t, len);
}

int main(int argc, char **argv) {
    size_t iters = argc > 1 ? (size_t)atol(argv[1]) : 20000;
    base_log_set_level(BASE_LOG_OFF);
    lsp_server_hooks h = {.write = sink};
    lsp_provider_i p = {.complete = answer, .cancel = cancel};
    lsp_server *s = lsp_server_new(&h, &p, NULL, NULL);
    base_buf b;
    base_buf_init(&b);
    framed(&b,
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"capabilities\":"
           "{}}}");
    lsp_server_feed(s, b.data, b.len);
    size_t tl;
    char *text = make_text(1000, &tl);
    json_t *open = json_pack("{s:s,s:s,s:{s:{s:s,s:s,s:i,s:s}}}", "jsonrpc", "2.0", "method",
                             "textDocument/didOpen", "params", "textDocument", "uri",
                             "file:///b.py", "languageId", "python", "version", 1, "text", text);
    char *os = json_dumps(open, JSON_COMPACT);
    framed(&b, os);
    lsp_server_feed(s, b.data, b.len);
    free(os);
    json_decref(open);
    free(text);

    uint64_t *ns = malloc(iters * sizeof(*ns));
    char msg[512];
    /* 1a. didChange: insert one character in the middle of the document. */
    for (size_t i = 0; i < iters; i++) {
        snprintf(msg, sizeof(msg),
                 "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{"
                 "\"textDocument\":{\"uri\":\"file:///b.py\",\"version\":%zu},\"contentChanges\":"
                 "[{\"range\":{\"start\":{\"line\":500,\"character\":%zu},\"end\":{\"line\":500,"
                 "\"character\":%zu}},\"text\":\"%s\"}]}}",
                 i + 2, (size_t)4, i % 2 ? (size_t)5 : (size_t)4, i % 2 ? "" : "x");
        framed(&b, msg);
        uint64_t t0 = base_now_ns();
        lsp_server_feed(s, b.data, b.len);
        ns[i] = base_now_ns() - t0;
    }
    report("didChange (parse + dispatch + edit), 1,000-line doc", ns, iters);
    /* 1b. inlineCompletion request → synchronous provider → response. */
    for (size_t i = 0; i < iters; i++) {
        snprintf(msg, sizeof(msg),
                 "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"textDocument/inlineCompletion\","
                 "\"params\":{\"textDocument\":{\"uri\":\"file:///b.py\"},\"position\":{\"line\":"
                 "%zu,\"character\":20},\"context\":{\"triggerKind\":2}}}",
                 i + 1, i % 1000);
        framed(&b, msg);
        uint64_t t0 = base_now_ns();
        lsp_server_feed(s, b.data, b.len);
        ns[i] = base_now_ns() - t0;
    }
    report("inlineCompletion (parse + dispatch + answer + response)", ns, iters);

    /* 2. lsp_doc_apply in a 10,000-line document. */
    lsp_doc_store *st = lsp_doc_store_new();
    char *big = make_text(10000, &tl);
    lsp_doc_open(st, "file:///big.py", "python", 1, big, tl);
    free(big);
    lsp_doc *d = lsp_doc_get(st, "file:///big.py");
    base_rng r;
    base_rng_seed(&r, 1);
    for (size_t i = 0; i < iters; i++) {
        uint32_t line = (uint32_t)(base_rng_next(&r) % 10000);
        uint64_t t0 = base_now_ns();
        if (i % 2 == 0)
            lsp_doc_apply(d, LSP_ENC_UTF16, line, 10, line, 10, "ab", 2);
        else
            lsp_doc_apply(d, LSP_ENC_UTF16, line, 10, line, 12, "", 0);
        ns[i] = base_now_ns() - t0;
    }
    report("incremental edit, 10,000-line document, random line", ns, iters);
    for (size_t i = 0; i < iters; i++) {
        uint64_t t0 = base_now_ns();
        if (i % 2 == 0)
            lsp_doc_apply(d, LSP_ENC_UTF16, 5000, 10, 5000, 10, "a\nb", 3);
        else
            lsp_doc_apply(d, LSP_ENC_UTF16, 5000, 10, 5001, 1, "", 0);
        ns[i] = base_now_ns() - t0;
    }
    report("incremental edit, 10,000-line doc, mid-line newline", ns, iters);
    lsp_doc_store_free(st);

    /* 3. Memory over 100,000 edits through the server (insert / delete pairs). */
    long before = test_rss_kib();
    for (size_t i = 0; i < 100000; i++) {
        snprintf(msg, sizeof(msg),
                 "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{"
                 "\"textDocument\":{\"uri\":\"file:///b.py\",\"version\":%zu},\"contentChanges\":"
                 "[{\"range\":{\"start\":{\"line\":%zu,\"character\":4},\"end\":{\"line\":%zu,"
                 "\"character\":%d}},\"text\":\"%s\"}]}}",
                 i + iters + 2, i % 1000, i % 1000, i % 2 ? 8 : 4, i % 2 ? "" : "abcd");
        framed(&b, msg);
        lsp_server_feed(s, b.data, b.len);
        if (i == 999)
            before = test_rss_kib(); /* after warm-up */
    }
    long after = test_rss_kib();
    printf("RSS after 1,000 edits %ld KiB, after 100,000 edits %ld KiB (delta %ld KiB)\n", before,
           after, after - before);
    free(ns);
    base_buf_deinit(&b);
    lsp_server_free(s);
    return 0;
}
