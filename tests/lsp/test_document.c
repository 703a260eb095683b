/* Document store: positions in all three encodings, surrogate pairs, CRLF,
 * edits at the very end, range errors, and the published edit events. */
#include "check.h"
#include "document.h"

#include <stdlib.h>
#include <string.h>

static lsp_edit_event last_ev;
static int n_events, n_opened, n_closed;

static void on_edit(void *ud, const lsp_doc *d, const lsp_edit_event *ev) {
    (void)ud;
    (void)d;
    last_ev = *ev;
    n_events++;
}
static void on_open(void *ud, const lsp_doc *d) {
    (void)ud;
    (void)d;
    n_opened++;
}
static void on_close(void *ud, const lsp_doc *d) {
    (void)ud;
    (void)d;
    n_closed++;
}

static const char *text_of(lsp_doc *d) { return lsp_doc_text(d, NULL); }

static void test_encodings(lsp_doc_store *s) {
    /* "a😀b" : 😀 is 4 UTF-8 bytes, 2 UTF-16 units, 1 code point. */
    const char *t = "x\na\xF0\x9F\x98\x80"
                    "b\n";
    CHECK_EQ_I(lsp_doc_open(s, "file:///e", "c", 1, t, strlen(t)), BASE_OK);
    lsp_doc *d = lsp_doc_get(s, "file:///e");
    size_t off;
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF16, 1, 3, &off), BASE_OK);
    CHECK_EQ_U(off, 2 + 5); /* after the emoji */
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF32, 1, 2, &off), BASE_OK);
    CHECK_EQ_U(off, 7);
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF8, 1, 5, &off), BASE_OK);
    CHECK_EQ_U(off, 7);
    /* Inside the surrogate pair: snaps to the start of the code point. */
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF16, 1, 2, &off), BASE_OK);
    CHECK_EQ_U(off, 3);
    /* Inside the UTF-8 sequence: snaps back too. */
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF8, 1, 3, &off), BASE_OK);
    CHECK_EQ_U(off, 3);
    /* Past the line end clamps to it (before the \n). */
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF16, 1, 99, &off), BASE_OK);
    CHECK_EQ_U(off, 8);
    /* Past the last line: an error, except (lines, 0) = end of document. */
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF16, 4, 0, &off), BASE_ERR_RANGE);
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF16, 3, 1, &off), BASE_ERR_RANGE);
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF16, 3, 0, &off), BASE_OK);
    CHECK_EQ_U(off, strlen(t));
    uint32_t line, ch;
    CHECK_EQ_I(lsp_doc_offset_to_pos(d, LSP_ENC_UTF16, 7, &line, &ch), BASE_OK);
    CHECK_EQ_U(line, 1);
    CHECK_EQ_U(ch, 3);
    CHECK_EQ_I(lsp_doc_offset_to_pos(d, LSP_ENC_UTF32, 7, &line, &ch), BASE_OK);
    CHECK_EQ_U(ch, 2);
    CHECK_EQ_I(lsp_doc_offset_to_pos(d, LSP_ENC_UTF8, 7, &line, &ch), BASE_OK);
    CHECK_EQ_U(ch, 5);
    CHECK_EQ_I(lsp_doc_offset_to_pos(d, LSP_ENC_UTF8, 999, &line, &ch), BASE_ERR_RANGE);
    /* Replace the emoji (UTF-16 1:1-1:3) by "Z". */
    CHECK_EQ_I(lsp_doc_apply(d, LSP_ENC_UTF16, 1, 1, 1, 3, "Z", 1), BASE_OK);
    CHECK_STR(text_of(d), "x\naZb\n");
    CHECK_EQ_U(last_ev.start_byte, 3);
    CHECK_EQ_U(last_ev.old_end_byte, 7);
    CHECK_EQ_U(last_ev.new_end_byte, 4);
    CHECK_EQ_U(last_ev.old_end_point.column, 5);
    CHECK_EQ_U(last_ev.new_end_point.column, 2);
    CHECK_EQ_I(lsp_doc_close(s, "file:///e"), BASE_OK);
}

static void test_crlf_and_end(lsp_doc_store *s) {
    const char *t = "ab\r\ncd\r\n";
    CHECK_EQ_I(lsp_doc_open(s, "file:///c", "c", 1, t, strlen(t)), BASE_OK);
    lsp_doc *d = lsp_doc_get(s, "file:///c");
    CHECK_EQ_U(lsp_doc_line_count(d), 3);
    size_t off;
    /* The \r is not part of the line: a character past the end stops before it. */
    CHECK_EQ_I(lsp_doc_pos_to_offset(d, LSP_ENC_UTF16, 0, 5, &off), BASE_OK);
    CHECK_EQ_U(off, 2);
    /* Insert a line break in the middle of line 1. */
    CHECK_EQ_I(lsp_doc_apply(d, LSP_ENC_UTF16, 1, 1, 1, 1, "\r\n", 2), BASE_OK);
    CHECK_STR(text_of(d), "ab\r\nc\r\nd\r\n");
    CHECK_EQ_U(lsp_doc_line_count(d), 4);
    CHECK_EQ_U(last_ev.new_end_point.row, 2);
    CHECK_EQ_U(last_ev.new_end_point.column, 0);
    /* Edits at the very end of the document. */
    CHECK_EQ_I(lsp_doc_apply(d, LSP_ENC_UTF16, 3, 0, 3, 0, "end", 3), BASE_OK);
    CHECK_STR(text_of(d), "ab\r\nc\r\nd\r\nend");
    CHECK_EQ_I(lsp_doc_apply(d, LSP_ENC_UTF8, 3, 3, 3, 3, "!", 1), BASE_OK);
    CHECK_STR(text_of(d), "ab\r\nc\r\nd\r\nend!");
    /* Delete across lines. */
    CHECK_EQ_I(lsp_doc_apply(d, LSP_ENC_UTF16, 0, 1, 3, 1, "", 0), BASE_OK);
    CHECK_STR(text_of(d), "and!");
    CHECK_EQ_U(lsp_doc_line_count(d), 1);
    CHECK_EQ_U(last_ev.old_end_point.row, 3);
    CHECK_EQ_U(last_ev.new_end_point.row, 0);
    /* Out of range and reversed ranges leave the text untouched. */
    int before = n_events;
    CHECK_EQ_I(lsp_doc_apply(d, LSP_ENC_UTF16, 5, 0, 5, 0, "x", 1), BASE_ERR_RANGE);
    CHECK_EQ_I(lsp_doc_apply(d, LSP_ENC_UTF16, 0, 3, 0, 1, "x", 1), BASE_ERR_RANGE);
    CHECK_STR(text_of(d), "and!");
    CHECK_EQ_I(n_events, before);
    /* Full replacement is one edit. */
    CHECK_EQ_I(lsp_doc_replace_all(d, 9, "new\ntext", 8), BASE_OK);
    CHECK_STR(text_of(d), "new\ntext");
    CHECK_EQ_I(lsp_doc_version(d), 9);
    CHECK_EQ_U(last_ev.old_end_byte, 4);
    CHECK_EQ_U(last_ev.new_end_point.row, 1);
    CHECK_EQ_I(lsp_doc_close(s, "file:///c"), BASE_OK);
    CHECK_EQ_I(lsp_doc_close(s, "file:///c"), BASE_ERR_NOT_FOUND);
}

/* Many random edits agree with a naive reference implementation. */
static void test_random(lsp_doc_store *s) {
    base_rng r;
    base_rng_seed(&r, 42);
    char ref[4096];
    size_t n = 0;
    ref[0] = '\0';
    CHECK_EQ_I(lsp_doc_open(s, "file:///r", "txt", 1, "", 0), BASE_OK);
    lsp_doc *d = lsp_doc_get(s, "file:///r");
    static const char *pieces[] = {"a", "\n", "xy\nz", "\xC3\xA9", "\r\n", ""};
    int bad = 0;
    for (int i = 0; i < 2000; i++) {
        size_t a = n ? base_rng_next(&r) % (n + 1) : 0;
        size_t b = a + (n - a ? base_rng_next(&r) % (BASE_MIN(n - a, 4) + 1) : 0);
        /* Keep both ends on code point starts, as a client would. */
        while (a < n && ((unsigned char)ref[a] & 0xC0) == 0x80)
            a++;
        while (b < n && ((unsigned char)ref[b] & 0xC0) == 0x80)
            b++;
        if (b < a)
            b = a;
        const char *ins = pieces[base_rng_next(&r) % BASE_ARRAY_LEN(pieces)];
        size_t il = strlen(ins);
        if (n - (b - a) + il >= sizeof(ref))
            continue;
        uint32_t la, ca, lb, cb;
        lsp_doc_offset_to_pos(d, LSP_ENC_UTF8, a, &la, &ca);
        lsp_doc_offset_to_pos(d, LSP_ENC_UTF8, b, &lb, &cb);
        /* A position right after \r of CRLF maps back to before it (clamped);
         * skip those rare cases. */
        size_t ca_off, cb_off;
        lsp_doc_pos_to_offset(d, LSP_ENC_UTF8, la, ca, &ca_off);
        lsp_doc_pos_to_offset(d, LSP_ENC_UTF8, lb, cb, &cb_off);
        if (ca_off != a || cb_off != b)
            continue;
        if (lsp_doc_apply(d, LSP_ENC_UTF8, la, ca, lb, cb, ins, il) != BASE_OK)
            bad++;
        memmove(ref + a + il, ref + b, n - b + 1);
        memcpy(ref + a, ins, il);
        n = n - (b - a) + il;
        if (strcmp(text_of(d), ref) != 0) {
            bad++;
            break;
        }
    }
    CHECK_EQ_I(bad, 0);
    size_t nl = 1;
    for (size_t i = 0; i < n; i++)
        nl += ref[i] == '\n';
    CHECK_EQ_U(lsp_doc_line_count(d), nl);
}

/* lsp_doc_at walks every open document; lsp_doc_touched orders them by the
 * last open or edit (llama-infill's input_extra sends the newest first). */
static void test_recency(void) {
    lsp_doc_store *s = lsp_doc_store_new();
    CHECK_EQ_I(lsp_doc_open(s, "file:///a", "c", 1, "a\n", 2), BASE_OK);
    CHECK_EQ_I(lsp_doc_open(s, "file:///b", "c", 1, "b\n", 2), BASE_OK);
    lsp_doc *a = lsp_doc_get(s, "file:///a"), *b = lsp_doc_get(s, "file:///b");
    CHECK(lsp_doc_touched(b) > lsp_doc_touched(a));
    CHECK_EQ_I(lsp_doc_apply(a, LSP_ENC_UTF8, 0, 0, 0, 0, "x", 1), BASE_OK);
    CHECK(lsp_doc_touched(a) > lsp_doc_touched(b));
    CHECK_EQ_I(lsp_doc_replace_all(b, 2, "c\n", 2), BASE_OK);
    CHECK(lsp_doc_touched(b) > lsp_doc_touched(a));
    /* A failed edit does not count. */
    uint64_t ta = lsp_doc_touched(a);
    CHECK_EQ_I(lsp_doc_apply(a, LSP_ENC_UTF8, 9, 0, 9, 0, "x", 1), BASE_ERR_RANGE);
    CHECK_EQ_U(lsp_doc_touched(a), ta);
    int seen = 0;
    for (size_t i = 0; lsp_doc_at(s, i); i++)
        seen += lsp_doc_at(s, i) == a || lsp_doc_at(s, i) == b;
    CHECK_EQ_I(seen, 2);
    CHECK(lsp_doc_at(s, 2) == NULL);
    CHECK_EQ_U(lsp_doc_touched(NULL), 0);
    lsp_doc_store_free(s);
}

int main(void) {
    lsp_doc_store *s = lsp_doc_store_new();
    lsp_doc_listener l = {.opened = on_open, .edited = on_edit, .closed = on_close};
    CHECK_EQ_I(lsp_doc_store_listen(s, &l), BASE_OK);
    test_encodings(s);
    test_crlf_and_end(s);
    test_random(s);
    test_recency();
    CHECK_EQ_I(n_opened, 3);
    CHECK_EQ_I(n_closed, 2);
    CHECK_EQ_U(lsp_doc_count(s), 1);
    CHECK(lsp_doc_get(s, "file:///nope") == NULL);
    lsp_doc_store_free(s); /* closes the last one */
    CHECK_EQ_I(n_closed, 3);
    return check_finish("test_document");
}
