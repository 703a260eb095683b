#include "base.h"

/* Strict UTF-8 decoding (no overlongs, no surrogates, max U+10FFFF). An invalid
 * sequence consumes exactly one byte, so positions stay well defined. */
size_t base_utf8_decode(const char *str, size_t n, uint32_t *cp) {
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0) {
        *cp = 0;
        return 0;
    }
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if ((c & 0xE0) == 0xC0) {
        len = 2;
        v = c & 0x1F;
        min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3;
        v = c & 0x0F;
        min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        *cp = 0xFFFD;
        return 1;
    }
    if (n < len) {
        *cp = 0xFFFD;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = v;
    return len;
}

size_t base_utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0;
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp <= 0x10FFFF) {
        o[0] = (unsigned char)(0xF0 | (cp >> 18));
        o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (unsigned char)(0x80 | (cp & 0x3F));
        return 4;
    }
    return 0;
}

bool base_utf8_valid(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t l = base_utf8_decode(s + i, n - i, &cp);
        if (cp == 0xFFFD && l == 1 && (unsigned char)s[i] >= 0x80)
            return false;
        i += l;
    }
    return true;
}

size_t base_utf16_len(const char *s, size_t n) {
    size_t i = 0, units = 0;
    while (i < n) {
        uint32_t cp;
        i += base_utf8_decode(s + i, n - i, &cp);
        units += cp >= 0x10000 ? 2 : 1;
    }
    return units;
}

size_t base_utf32_len(const char *s, size_t n) {
    size_t i = 0, cps = 0;
    while (i < n) {
        uint32_t cp;
        i += base_utf8_decode(s + i, n - i, &cp);
        cps++;
    }
    return cps;
}

bool base_utf16_to_byte(const char *s, size_t n, size_t units, size_t *byte_off) {
    size_t i = 0, u = 0;
    while (i < n && u < units) {
        uint32_t cp;
        size_t l = base_utf8_decode(s + i, n - i, &cp);
        size_t w = cp >= 0x10000 ? 2 : 1;
        if (u + w > units) { /* position falls inside a surrogate pair */
            *byte_off = i;
            return false;
        }
        u += w;
        i += l;
    }
    *byte_off = i;
    return u == units;
}

bool base_utf32_to_byte(const char *s, size_t n, size_t cps, size_t *byte_off) {
    size_t i = 0, c = 0;
    while (i < n && c < cps) {
        uint32_t cp;
        i += base_utf8_decode(s + i, n - i, &cp);
        c++;
    }
    *byte_off = i;
    return c == cps;
}
