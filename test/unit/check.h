/*
 * check.h - the smallest test harness: each CHECK prints both operands on
 * failure (after libuv's ASSERT_EQ) and the test binary exits non-zero.
 */
#ifndef TOPOGATE_CHECK_H
#define TOPOGATE_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
                    #cond);                                                  \
            check_failures++;                                                \
        }                                                                    \
    } while (0)

#define CHECK_INT(a, b)                                                      \
    do {                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                  \
        if (a_ != b_) {                                                      \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",        \
                    __FILE__, __LINE__, #a, #b, a_, b_);                     \
            check_failures++;                                                \
        }                                                                    \
    } while (0)

#define CHECK_STR(a, b)                                                      \
    do {                                                                     \
        const char *a_ = (a), *b_ = (b);                                     \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) {               \
            fprintf(stderr, "%s:%d: %s == %s failed:\n  '%s'\n  '%s'\n",     \
                    __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",          \
                    b_ ? b_ : "(null)");                                     \
            check_failures++;                                                \
        }                                                                    \
    } while (0)

#define CHECK_DONE()                                                         \
    do {                                                                     \
        if (check_failures) {                                                \
            fprintf(stderr, "not ok - %s: %d failed\n", __FILE__,            \
                    check_failures);                                         \
            return 1;                                                        \
        }                                                                    \
        printf("ok - %s\n", __FILE__);                                       \
        return 0;                                                            \
    } while (0)

#endif
