/* Framing: split reads, Content-Type, and every malformed header resumes at
 * the next message. */
#include "check.h"
#include "lsp.h"

#include <stdlib.h>
#include <string.h>

/* Pushes s in chunks of `chunk` bytes and collects frames as "M:<body>" or
 * "E:<status>" joined by '|'. */
static void run(const char *s, size_t len, size_t chunk, size_t max, char *out, size_t out_len) {
    lsp_framer *f = lsp_framer_new(max);
    out[0] = '\0';
    for (size_t i = 0; i < len; i += chunk) {
        lsp_framer_push(f, s + i, BASE_MIN(chunk, len - i));
        for (;;) {
            lsp_frame fr;
            lsp_framer_next(f, &fr);
            if (fr.kind == LSP_FRAME_NONE)
                break;
            size_t o = strlen(out);
            if (fr.kind == LSP_FRAME_MESSAGE)
                snprintf(out + o, out_len - o, "M:%.*s|", (int)fr.len, fr.body);
            else
                snprintf(out + o, out_len - o, "E:%s|", base_status_name(fr.status));
        }
    }
    lsp_framer_free(f);
}

static void both(const char *s, size_t max, const char *want) {
    char out[1024];
    run(s, strlen(s), strlen(s) ? strlen(s) : 1, max, out, sizeof(out));
    CHECK_STR(out, want);
    run(s, strlen(s), 1, max, out, sizeof(out)); /* byte by byte */
    CHECK_STR(out, want);
}

int main(void) {
    both("Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]", 0, "M:{}|M:[1]|");
    both("Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}",
         0, "M:{}|");
    both("content-length:2\r\n\r\n{}", 0, "M:{}|");
    /* Missing, non-numeric, negative, overflowing lengths; each resumes. */
    both("Content-Type: x\r\n\r\nContent-Length: 2\r\n\r\n{}", 0, "E:ERR_PARSE|M:{}|");
    both("Content-Length: abc\r\n\r\n{}Content-Length: 2\r\n\r\n{}", 0, "E:ERR_PARSE|M:{}|");
    both("Content-Length: -5\r\n\r\n{}Content-Length: 2\r\n\r\n{}", 0, "E:ERR_PARSE|M:{}|");
    both("Content-Length: 99999999999999999999999\r\n\r\nContent-Length: 2\r\n\r\n{}", 0,
         "E:ERR_PARSE|M:{}|");
    both("Content-Length: 1 2\r\n\r\nContent-Length: 2\r\n\r\n{}", 0, "E:ERR_PARSE|M:{}|");
    /* Too large for the limit: reported, its body skipped. */
    both("Content-Length: 100\r\n\r\n" /* 100 bytes: */
         "0123456789012345678901234567890123456789012345678901234567890123456789"
         "012345678901234567890123456789"
         "Content-Length: 2\r\n\r\n{}",
         64, "E:ERR_TOO_LARGE|M:{}|");
    /* Junk before a header is skipped. */
    both("garbage\r\nContent-Length: 2\r\n\r\n{}", 0, "M:{}|");
    /* A header line without a colon. */
    both("Content-Length: 2\r\nbogus\r\n\r\nContent-Length: 2\r\n\r\n{}", 0, "E:ERR_PARSE|M:{}|");
    /* Truncated: nothing yet, bytes stay buffered. */
    {
        lsp_framer *f = lsp_framer_new(0);
        const char *t = "Content-Length: 10\r\n\r\n{\"a\"";
        lsp_framer_push(f, t, strlen(t));
        lsp_frame fr;
        lsp_framer_next(f, &fr);
        CHECK_EQ_I(fr.kind, LSP_FRAME_NONE);
        lsp_framer_free(f);
        f = lsp_framer_new(0);
        t = "Content-Len";
        lsp_framer_push(f, t, strlen(t));
        lsp_framer_next(f, &fr);
        CHECK_EQ_I(fr.kind, LSP_FRAME_NONE);
        CHECK(lsp_framer_buffered(f) > 0);
        lsp_framer_free(f);
    }
    /* An endless header is cut off. */
    {
        lsp_framer *f = lsp_framer_new(0);
        char big[9000];
        memcpy(big, "Content-Length: 1\r\nX-A: ", 24);
        memset(big + 24, 'a', sizeof(big) - 24);
        lsp_framer_push(f, big, sizeof(big));
        lsp_frame fr;
        lsp_framer_next(f, &fr);
        CHECK_EQ_I(fr.kind, LSP_FRAME_ERROR);
        lsp_framer_free(f);
    }
    /* A 1 MB body read in 64 KiB pieces, then small messages: the buffer
     * a large message needed is released once consumed (issue 17, RSS), and
     * framing goes on exactly, also with a message split across that point. */
    {
        lsp_framer *f = lsp_framer_new(0);
        size_t n = (size_t)1 << 20;
        base_buf m;
        base_buf_init(&m);
        char *body = malloc(n);
        CHECK(body != NULL);
        memset(body, 'x', n);
        body[0] = '"';
        body[n - 1] = '"';
        lsp_frame_write(&m, body, n);
        lsp_frame_write(&m, "{\"a\":1}", 7);
        lsp_frame_write(&m, "{\"b\":2}", 7);
        size_t split = m.len - 10; /* inside the last message */
        lsp_frame fr;
        int got = 0;
        for (size_t off = 0; off < split; off += 65536) {
            size_t k = BASE_MIN((size_t)65536, split - off);
            CHECK_EQ_I(lsp_framer_push(f, m.data + off, k), BASE_OK);
            for (lsp_framer_next(f, &fr); fr.kind == LSP_FRAME_MESSAGE; lsp_framer_next(f, &fr)) {
                if (got == 0)
                    CHECK(fr.len == n && memcmp(fr.body, body, n) == 0);
                else
                    CHECK(fr.len == 7 && memcmp(fr.body, "{\"a\":1}", 7) == 0);
                got++;
            }
        }
        CHECK_EQ_I(got, 2);
        CHECK_EQ_I(lsp_framer_push(f, m.data + split, m.len - split), BASE_OK);
        lsp_framer_next(f, &fr);
        CHECK(fr.kind == LSP_FRAME_MESSAGE && fr.len == 7 && memcmp(fr.body, "{\"b\":2}", 7) == 0);
        lsp_framer_next(f, &fr);
        CHECK_EQ_I(fr.kind, LSP_FRAME_NONE);
        CHECK_EQ_U(lsp_framer_buffered(f), 0);
        free(body);
        base_buf_deinit(&m);
        lsp_framer_free(f);
    }
    base_buf b;
    base_buf_init(&b);
    lsp_frame_write(&b, "{}", 2);
    CHECK_STR(b.data, "Content-Length: 2\r\n\r\n{}");
    base_buf_deinit(&b);
    return check_finish("test_framing");
}
