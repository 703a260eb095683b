/* Minimal assertion helpers for C unit tests: failures are counted and
 * reported with file and line; check_finish() gives the exit code. */
#ifndef INFILLD_TESTS_CHECK_H
#define INFILLD_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check__failures;
static int check__count;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check__count++;                                                                            \
        if (!(cond)) {                                                                             \
            check__failures++;                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_I(a, b)                                                                           \
    do {                                                                                           \
        long long check__a = (long long)(a), check__b = (long long)(b);                            \
        check__count++;                                                                            \
        if (check__a != check__b) {                                                                \
            check__failures++;                                                                     \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,  \
                    check__a, check__b);                                                           \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U(a, b)                                                                           \
    do {                                                                                           \
        unsigned long long check__a = (unsigned long long)(a), check__b = (unsigned long long)(b); \
        check__count++;                                                                            \
        if (check__a != check__b) {                                                                \
            check__failures++;                                                                     \
            fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__, #a, #b,  \
                    check__a, check__b);                                                           \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *check__a = (a), *check__b = (b);                                               \
        check__count++;                                                                            \
        if (!check__a || !check__b || strcmp(check__a, check__b) != 0) {                           \
            check__failures++;                                                                     \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a,  \
                    #b, check__a ? check__a : "(null)", check__b ? check__b : "(null)");           \
        }                                                                                          \
    } while (0)

static inline int check_finish(const char *name) {
    fprintf(stderr, "%s: %d checks, %d failed\n", name, check__count, check__failures);
    return check__failures ? 1 : 0;
}

#endif
