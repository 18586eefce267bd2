/*
 * UTF-8 sequences against RFC 3629 computed from the bits, and members
 * named twice (json/jsoncheck.c, called by the parse, jsonread.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/utf8.h"
#include "test/unit/check.h"
#include "test/unit/utf8_reference.h"
#include "json/jsoncheck.h"
#include "json/jsonread.h"

/* Every one-, two- and three-byte sequence; four-byte ones sampled. */
static void
test_utf8_exhaustive(void)
{
    unsigned char s[4];
    unsigned long bad = 0;

    for (uint32_t v = 0; v < (1u << 24); v++) {
        s[0] = (unsigned char)(v >> 16);
        s[1] = (unsigned char)(v >> 8);
        s[2] = (unsigned char)v;
        s[3] = 0x80;
        for (size_t avail = 1; avail <= 3; avail++)
            if (utf8_length(s, avail) != utf8_reference(s, avail) &&
                bad++ < 5)
                fprintf(stderr, "%02x %02x %02x (avail %zu): %zu != %zu\n",
                        s[0], s[1], s[2], avail, utf8_length(s, avail),
                        utf8_reference(s, avail));
    }
    for (uint32_t v = 0; v < (1u << 24); v += 7) {
        s[0] = (unsigned char)(0xF0 | (v >> 21));
        s[1] = (unsigned char)(v >> 14) | 0x80;
        s[2] = (unsigned char)(v >> 7);
        s[3] = (unsigned char)v ^ 0x80;
        if (utf8_length(s, 4) != utf8_reference(s, 4) && bad++ < 10)
            fprintf(stderr, "%02x %02x %02x %02x: %zu != %zu\n", s[0], s[1],
                    s[2], s[3], utf8_length(s, 4), utf8_reference(s, 4));
    }
    CHECK_INT(bad, 0);
}

/* Members named twice are refused by the parse (jsonread.c). */
static int
keys(const char *json, char *msg, size_t size)
{
    struct jsonarena *arena = jsonarena_new();
    const cJSON *root = NULL;
    int rc;

    msg[0] = '\0';
    if (arena == NULL)
        return snprintf(msg, size, "out of memory"), -1;
    rc = jsonread(arena, json, strlen(json), &root, msg, size) == JSONREAD_OK
             ? 0
             : -1;
    jsonarena_free(arena);
    return rc;
}

static void
test_unique_keys(void)
{
    char msg[256], big[8192];
    size_t n = 0;

    CHECK_INT(keys("{\"a\":1,\"b\":{\"a\":2},\"c\":[{\"a\":1},{\"a\":2}]}", msg,
                   sizeof(msg)),
              0);
    /* Two members, the parse's short way: first bytes apart or alike. */
    CHECK_INT(keys("{\"a\":1,\"b\":2}", msg, sizeof(msg)), 0);
    CHECK_INT(keys("{\"a\":1,\"ab\":2}", msg, sizeof(msg)), 0);
    CHECK_INT(keys("{\"a\":1,\"a\":2}", msg, sizeof(msg)), -1);
    CHECK_INT(keys("{\"\":1,\"\":2}", msg, sizeof(msg)), -1);
    CHECK_INT(keys("{\"a\":1,\"b\":2,\"a\":3}", msg, sizeof(msg)), -1);
    CHECK_STR(msg, "member 'a' twice in one object: the apiserver never "
                   "sends that, and which one counts is not agreed");
    CHECK_INT(keys("[1,{\"x\":{\"ab\":1,\"ac\":2,\"ab\":3}}]", msg, sizeof(msg)),
              -1);
    CHECK(strncmp(msg, "member 'ab' twice", 17) == 0);
    CHECK_INT(keys("{\"a\":1,\"A\":2}", msg, sizeof(msg)), 0);
    CHECK_INT(keys("\"text\"", msg, sizeof(msg)), 0);
    CHECK_INT(keys("{}", msg, sizeof(msg)), 0);

    /* Past the pair-by-pair size: sorted, the twin is the last member. */
    n += (size_t)snprintf(big + n, sizeof(big) - n, "{");
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, "\"k%d\":%d,", i, i);
    snprintf(big + n, sizeof(big) - n, "\"zz\":0}");
    CHECK_INT(keys(big, msg, sizeof(msg)), 0);
    snprintf(big + n, sizeof(big) - n, "\"k150\":0}");
    CHECK_INT(keys(big, msg, sizeof(msg)), -1);
    CHECK(strncmp(msg, "member 'k150' twice", 19) == 0);
}

/*
 * Random small objects (names that share first bytes, and bytes 64 apart
 * that share a bit) against the pair-by-pair rule: the same verdict, and
 * a twin named as the first member that has one.
 */
static void
test_unique_random(void)
{
    static const char *const names[] = {"a", "ab", "abc", "b", "ba", "!",
                                        "a!", "A", "", "\\u0001", "k"};
    const size_t n_names = sizeof(names) / sizeof(names[0]);
    unsigned int seed = 42;
    unsigned long bad = 0, twins = 0;

    for (int round = 0; round < 50000; round++) {
        char json[512], msg[256], want[256] = "";
        int n = 1 + rand_r(&seed) % 16, len = 0, rc;
        const char *pick[16];

        json[len++] = '{';
        for (int i = 0; i < n; i++) {
            pick[i] = names[rand_r(&seed) % n_names];
            len += snprintf(json + len, sizeof(json) - (size_t)len,
                            "%s\"%s\":%d", i ? "," : "", pick[i], i);
        }
        json[len++] = '}';
        json[len] = '\0';
        for (int i = 0; i < n && want[0] == '\0'; i++)
            for (int j = i + 1; j < n; j++)
                if (strcmp(pick[i], pick[j]) == 0) {
                    snprintf(want, sizeof(want), "member '%s' twice",
                             strcmp(pick[i], "\\u0001") == 0 ? "\x01"
                                                                : pick[i]);
                    break;
                }
        rc = keys(json, msg, sizeof(msg));
        twins += want[0] != '\0';
        if ((rc == 0) != (want[0] == '\0') ||
            (rc != 0 && strncmp(msg, want, strlen(want)) != 0)) {
            if (bad++ < 5)
                fprintf(stderr, "%s: %s (want %s)\n", json, msg,
                        want[0] ? want : "taken");
        }
    }
    CHECK_INT(bad, 0);
    CHECK(twins > 10000 && twins < 40000); /* both sides were tried */
}

int
main(void)
{
    test_utf8_exhaustive();
    test_unique_keys();
    test_unique_random();
    CHECK_DONE();
}
