/*
 * What cJSON would read differently: strings it would cut or echo as
 * bytes that are not JSON, and members named twice (webhook/jsoncheck.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/check.h"
#include "webhook/jsoncheck.h"

static int
text(const char *s, size_t len, char *msg, size_t size)
{
    msg[0] = '\0';
    return jsoncheck_text(s, len, msg, size);
}

/* Each row: bytes, 0 or -1, and how the reason begins. */
static void
test_text_table(void)
{
    static const struct {
        const char *in;
        int rc;
        const char *msg;
    } rows[] = {
        {"{\"a\":\"plain ascii, long enough for the word path\"}", 0, ""},
        {"{\"a\":\"x\\u0000y\"}", -1, "\\u0000 in a string at byte 7:"},
        {"{\"a\":\"\\u0000\"}", -1, "\\u0000 in a string at byte 6:"},
        {"{\"a\":\"\\\\u0000\"}", 0, ""}, /* an escaped backslash, then text */
        {"{\"a\":\"\\\\\\u0000\"}", -1, "\\u0000 in a string at byte 8:"},
        {"{\"a\":\"\\u0001 \\u001f \\u007f\"}", 0, ""},
        {"{\"a\":\"\\ud83d\\ude00\"}", 0, ""},
        {"{\"a\":\"\\uD83D\\uDE00\"}", 0, ""},
        {"{\"a\":\"\\ud800\"}", -1, "lone surrogate \\ud800 at byte 6:"},
        {"{\"a\":\"\\ud800x\\udc00\"}", -1, "lone surrogate \\ud800 at byte 6:"},
        {"{\"a\":\"\\ud800\\u0041\"}", -1, "lone surrogate \\ud800 at byte 6:"},
        {"{\"a\":\"\\udc00\"}", -1, "lone surrogate \\udc00 at byte 6:"},
        {"{\"a\":\"\\ude00\\ud83d\"}", -1, "lone surrogate \\ude00 at byte 6:"},
        {"\"\\ud800", -1, "lone surrogate \\ud800 at byte 1:"},
        {"\"\\u00", 0, ""}, /* cut escape: the parser's to refuse */
        {"\"\\uzzzz\"", 0, ""},
        {"{\"a\":\"caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80\"}", 0, ""},
        {"{\"a\":\"\xff\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xc3\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xc0\xaf\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xe0\x80\xaf\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xed\xa0\x80\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xf4\x90\x80\x80\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xf0\x9f\x98\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"1\x01\"}", -1, "control character 0x01 at byte 7:"},
        {"{\"a\":\t\r\n\"1\"}", 0, ""},
        {"0123456789abcdef\x7f", 0, ""},
    };
    char msg[256];

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int rc = text(rows[i].in, strlen(rows[i].in), msg, sizeof(msg));

        if (rc != rows[i].rc ||
            strncmp(msg, rows[i].msg, strlen(rows[i].msg)) != 0)
            fprintf(stderr, "row %zu: %s\n", i, msg);
        CHECK_INT(rc, rows[i].rc);
        CHECK(strncmp(msg, rows[i].msg, strlen(rows[i].msg)) == 0);
    }
    /* A raw NUL byte, which strlen() would not see. */
    CHECK_INT(text("{\"a\":\"x\0y\"}", 11, msg, sizeof(msg)), -1);
    CHECK_STR(msg, "control character 0x00 at byte 7: JSON needs it escaped");
}

/* RFC 3629 from the bits: the oracle for jsoncheck_utf8(). */
static size_t
utf8_reference(const unsigned char *s, size_t avail)
{
    size_t n;
    uint32_t cp;

    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xE0) == 0xC0)
        n = 2, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0)
        n = 3, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
        (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

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
            if (jsoncheck_utf8(s, avail) != utf8_reference(s, avail) &&
                bad++ < 5)
                fprintf(stderr, "%02x %02x %02x (avail %zu): %zu != %zu\n",
                        s[0], s[1], s[2], avail, jsoncheck_utf8(s, avail),
                        utf8_reference(s, avail));
    }
    for (uint32_t v = 0; v < (1u << 24); v += 7) {
        s[0] = (unsigned char)(0xF0 | (v >> 21));
        s[1] = (unsigned char)(v >> 14) | 0x80;
        s[2] = (unsigned char)(v >> 7);
        s[3] = (unsigned char)v ^ 0x80;
        if (jsoncheck_utf8(s, 4) != utf8_reference(s, 4) && bad++ < 10)
            fprintf(stderr, "%02x %02x %02x %02x: %zu != %zu\n", s[0], s[1],
                    s[2], s[3], jsoncheck_utf8(s, 4), utf8_reference(s, 4));
    }
    CHECK_INT(bad, 0);
}

/*
 * The word-at-a-time scan against the same rules a byte at a time: on
 * random texts of bytes that matter, at every alignment and length.
 */
static int
text_reference(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n;

        if (c >= 0x80) {
            if ((n = utf8_reference(s + i, len - i)) == 0)
                return -1;
            i += n;
        } else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            return -1;
        } else if (c == '\\' && i + 5 < len && s[i + 1] == 'u' &&
                   strspn((const char *)s + i + 2, "0123456789abcdefABCDEF") >=
                       4) {
            unsigned long cp = strtoul(
                (char[]){(char)s[i + 2], (char)s[i + 3], (char)s[i + 4],
                         (char)s[i + 5], 0},
                NULL, 16);
            if (cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
                return -1;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned long lo;

                if (i + 12 > len)
                    return -1;
                if (s[i + 6] != '\\' || s[i + 7] != 'u' ||
                    strspn((const char *)s + i + 8,
                           "0123456789abcdefABCDEF") < 4)
                    return -1;
                lo = strtoul((char[]){(char)s[i + 8], (char)s[i + 9],
                                      (char)s[i + 10], (char)s[i + 11], 0},
                             NULL, 16);
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return -1;
                i += 12;
            } else {
                i += 6;
            }
        } else if (c == '\\') {
            i += 2;
        } else {
            i++;
        }
    }
    return 0;
}

static void
test_text_random(void)
{
    static const char *const pieces[] = {
        "a",  "bcdefghi", "\\",   "\\u", "0000", "d83d", "de00",    "dc00",
        "00e9", "\"",   "\n",     "\x01", "\xc3\xa9", "\xc3", "\xff",
        "\xe2\x80\xa8", "\xf0\x9f\x98\x80", "\\\\", "\\ud800", "\\udc00",
        "\\u0041",
    };
    const size_t n_pieces = sizeof(pieces) / sizeof(pieces[0]);
    /* One byte more than any text, so the reference may read s[len]. */
    unsigned char buf[160];
    char msg[128];
    unsigned int seed = 16;
    unsigned long bad = 0;

    for (int round = 0; round < 200000; round++) {
        size_t len = 0, off = (size_t)(rand_r(&seed) % 8);
        int k = rand_r(&seed) % 24;

        memset(buf, 'a', sizeof(buf));
        for (int j = 0; j < k; j++) {
            const char *p = pieces[rand_r(&seed) % n_pieces];
            size_t pl = strlen(p);

            if (off + len + pl + 16 >= sizeof(buf))
                break;
            memcpy(buf + off + len, p, pl);
            len += pl;
        }
        buf[off + len] = '\0';
        if (text((const char *)buf + off, len, msg, sizeof(msg)) !=
                text_reference(buf + off, len) &&
            bad++ < 5)
            fprintf(stderr, "differs on '%.*s' (%s)\n", (int)len, buf + off,
                    msg);
    }
    CHECK_INT(bad, 0);
}

static int
keys(const char *json, char *msg, size_t size)
{
    cJSON *root = cJSON_Parse(json);
    int rc;

    CHECK(root != NULL);
    msg[0] = '\0';
    rc = jsoncheck_unique_keys(root, msg, size);
    cJSON_Delete(root);
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

int
main(void)
{
    test_text_table();
    test_utf8_exhaustive();
    test_text_random();
    test_unique_keys();
    CHECK_DONE();
}
