/* Unit tests for base/: UTF-8/16/32 positions, buffer splicing, arena, rng. */
#include "base.h"
#include "check.h"

#include <string.h>

static void test_utf16_positions(void) {
    /* "a😀b": a (1 unit), 😀 (2 units, 4 bytes), b */
    const char *s = "a\xF0\x9F\x98\x80"
                    "b";
    size_t n = strlen(s), off = 99;
    CHECK_EQ_U(base_utf16_len(s, n), 4);
    CHECK_EQ_U(base_utf32_len(s, n), 3);
    CHECK(base_utf16_to_byte(s, n, 1, &off));
    CHECK_EQ_U(off, 1);
    CHECK(!base_utf16_to_byte(s, n, 2, &off)); /* inside the surrogate pair */
    CHECK_EQ_U(off, 1);
    CHECK(base_utf16_to_byte(s, n, 3, &off));
    CHECK_EQ_U(off, 5);
    CHECK(!base_utf16_to_byte(s, n, 9, &off)); /* past the end */
    CHECK_EQ_U(off, 6);
    CHECK(base_utf32_to_byte(s, n, 2, &off));
    CHECK_EQ_U(off, 5);
}

static void test_utf8_invalid(void) {
    uint32_t cp;
    CHECK_EQ_U(base_utf8_decode("\xC0\xAF", 2, &cp), 1); /* overlong */
    CHECK_EQ_U(cp, 0xFFFD);
    CHECK_EQ_U(base_utf8_decode("\xED\xA0\x80", 3, &cp), 1); /* surrogate */
    CHECK(!base_utf8_valid("ab\xFF", 3));
    CHECK(base_utf8_valid("h\xC3\xA9llo", 6));
    char out[4];
    CHECK_EQ_U(base_utf8_encode(0x1F600, out), 4);
    CHECK(memcmp(out, "\xF0\x9F\x98\x80", 4) == 0);
    CHECK_EQ_U(base_utf8_encode(0xD800, out), 0);
}

static void test_buf_splice(void) {
    base_buf b;
    base_buf_init(&b);
    CHECK_EQ_I(base_buf_appends(&b, "hello world"), BASE_OK);
    CHECK_EQ_I(base_buf_splice(&b, 6, 5, "there", 5), BASE_OK);
    CHECK_STR(b.data, "hello there");
    CHECK_EQ_I(base_buf_splice(&b, 11, 0, "!", 1), BASE_OK);
    CHECK_STR(b.data, "hello there!");
    CHECK_EQ_I(base_buf_splice(&b, 12, 1, "", 0), BASE_ERR_RANGE);
    CHECK_EQ_I(base_buf_splice(&b, 0, 6, "", 0), BASE_OK);
    CHECK_STR(b.data, "there!");
    base_buf_consume(&b, 5);
    CHECK_STR(b.data, "!");
    base_buf_deinit(&b);
}

static void test_arena(void) {
    base_arena *a = base_arena_new(64);
    char *p = base_arena_printf(a, "%d-%s", 42, "x");
    CHECK_STR(p, "42-x");
    void *big = base_arena_alloc(a, 1000); /* larger than a chunk */
    CHECK(big != NULL);
    CHECK(((uintptr_t)big & 15) == 0);
    base_arena_reset(a);
    CHECK_EQ_U(base_arena_used(a), 0);
    base_arena_free(a);
}

static void test_rng(void) {
    base_rng r1, r2;
    base_rng_seed(&r1, 7);
    base_rng_seed(&r2, 7);
    for (int i = 0; i < 100; i++)
        CHECK(base_rng_next(&r1) == base_rng_next(&r2));
    /* splitmix64(7) first output, a published constant of the algorithm's definition */
    base_rng_seed(&r1, 0);
    CHECK(r1.s[0] == 0xE220A8397B1DCDAFull);
    double u = base_rng_uniform(&r1);
    CHECK(u >= 0.0 && u < 1.0);
}

static void test_status(void) {
    CHECK_STR(base_status_str(BASE_ERR_NOMEM), "out of memory");
    CHECK_STR(base_status_name(BASE_ERR_RANGE), "ERR_RANGE");
}

int main(void) {
    test_utf16_positions();
    test_utf8_invalid();
    test_buf_splice();
    test_arena();
    test_rng();
    test_status();
    return check_finish("test_base");
}
