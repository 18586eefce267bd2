/*
 * json/jsonread.c, the review's parser:
 * - a table of texts and the reason each is refused with;
 * - the values it builds, as cJSON would hold them; the nesting limit;
 * - managedFields' checking loop against the building reader: the same
 *   verdict and reason for the table's rows and random fragments;
 * - strings of random pieces against a byte-at-a-time reference decoder,
 *   alone and many to an array;
 * - every review in the repository (and ../shared's, when it is there),
 *   then each one cut, with a byte changed, dropped or added, against
 *   cJSON's own parser: whatever jsonread takes, cJSON takes too and
 *   builds the same tree (number bits, links and all), managedFields
 *   emptied.
 *
 * - the arena: a large tree's blocks are kept as one block across
 *   resets, given back after JSONARENA_QUIET small reads in a row, and
 *   never kept past JSONARENA_KEEP.
 *
 * Every text is read twice, from a copy in the arena and in place (the
 * way `serve` reads a review), and both must agree
 * (test/unit/jsonread_arena.h). The trees are the arena's: read, never
 * changed or deleted, and dropped by its reset before the next text.
 *
 * With --print FILE..., prints for each file "ok " and the tree (numbers
 * as %.17g), or "error " and the reason, one line each: what
 * test/unit/jsonread_oracle.py compares with Python's json module.
 */
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/check.h"
#include "test/unit/json_same.h"
#include "test/unit/jsonread_arena.h"
#include "test/unit/utf8_reference.h"
#include "lib/file.h"
#include "base/jsonout.h"
#include "json/jsonread.h"

/* The one arena of every test's trees. */
static struct jsonarena *arena;
static unsigned long texts_read, in_place_differs;

/*
 * jsonread() as every test here calls it, once the tree of the text before
 * is dropped: from a copy, then in place.
 */
static enum jsonread_status
read_json(const char *s, size_t len, const cJSON **root, char *msg,
          size_t size)
{
    const char *why;
    enum jsonread_status rc;

    jsonarena_reset(arena);
    rc = read_both_ways(arena, s, len, root, msg, size, &why);
    texts_read++;
    if (why != NULL && in_place_differs++ < 5)
        fprintf(stderr, "%s: '%.*s'\n", why, (int)(len < 200 ? len : 200),
                s);
    return rc;
}

/*
 * managedFields is checked by skip_value(), everything else by the
 * building reader: each row of the table, and random texts, inside a
 * managedFields array and inside an array of a member whose name is as
 * long, must give the same verdict and the same reason at the same byte.
 */
static void
same_verdict_skipped(const char *text, size_t len, unsigned long *bad)
{
    static const char *const names[] = {"managedFields", "managedFieldz"};
    char doc[2][512], msg[2][256];
    int rc[2];

    if (len + 32 > sizeof(doc[0]))
        return;
    for (int k = 0; k < 2; k++) {
        size_t n = (size_t)snprintf(doc[k], sizeof(doc[k]), "{\"%s\":[",
                                    names[k]);
        const cJSON *root = NULL;

        memcpy(doc[k] + n, text, len);
        memcpy(doc[k] + n + len, "]}", 2);
        rc[k] = read_json(doc[k], n + len + 2, &root, msg[k], sizeof(msg[k]));
    }
    if (rc[0] != rc[1] || (rc[0] != 0 && strcmp(msg[0], msg[1]) != 0)) {
        if ((*bad)++ < 5)
            fprintf(stderr, "skipped and built differ on '%.*s': %s / %s\n",
                    (int)len, text, msg[0], msg[1]);
    }
}

/* Each row: bytes, 0 or -1, and how the reason begins. */
static void
test_table(void)
{
    static const struct {
        const char *in;
        int rc;
        const char *msg;
    } rows[] = {
        {"{\"a\":\"plain ascii, long enough for the word path\"}", 0, ""},
        {"{\"a\":\"x\\u0000y\"}", 0, ""}, /* NUL: see test_nul() */
        {"{\"a\":\"\\u0000\"}", 0, ""},
        {"{\"a\":\"\\\\u0000\"}", 0, ""}, /* an escaped backslash, then text */
        {"{\"a\":\"\\\\\\u0000\"}", 0, ""},
        {"{\"a\\u0000\":1}", 0, ""},
        {"{\"a\":\"\\u0001 \\u001f \\u007f\"}", 0, ""},
        {"{\"a\":\"\\ud83d\\ude00\"}", 0, ""},
        {"{\"a\":\"\\uD83D\\uDE00\"}", 0, ""},
        {"{\"a\":\"\\ud800\"}", -1, "lone surrogate \\ud800 at byte 6:"},
        {"{\"a\":\"\\ud800x\\udc00\"}", -1, "lone surrogate \\ud800 at byte 6:"},
        {"{\"a\":\"\\ud800\\u0041\"}", -1, "lone surrogate \\ud800 at byte 6:"},
        {"{\"a\":\"\\udc00\"}", -1, "lone surrogate \\udc00 at byte 6:"},
        {"{\"a\":\"\\ude00\\ud83d\"}", -1, "lone surrogate \\ude00 at byte 6:"},
        {"\"\\ud800", -1, "lone surrogate \\ud800 at byte 1:"},
        {"\"\\u00", -1, "malformed JSON at byte 1: \\u needs four hex"},
        {"\"\\uzzzz\"", -1, "malformed JSON at byte 1: \\u needs four hex"},
        {"\"\\x\"", -1, "malformed JSON at byte 1: not a JSON escape"},
        {"\"\\", -1, "malformed JSON at byte 1: a string is not closed"},
        {"{\"a\":\"caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80\"}", 0, ""},
        {"{\"a\":\"\xff\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xc3\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xc0\xaf\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xe0\x80\xaf\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xed\xa0\x80\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xf4\x90\x80\x80\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\"\xf0\x9f\x98\"}", -1, "invalid UTF-8 at byte 6:"},
        {"{\"a\":\xff}", -1, "invalid UTF-8 at byte 5:"},
        {"{\"a\":\"1\x01\"}", -1, "control character 0x01 at byte 7:"},
        {"{\"a\":\"1\n\"}", -1, "control character 0x0a at byte 7:"},
        {"{\"a\":\x01\"1\"}", -1, "control character 0x01 at byte 5:"},
        {"{\"a\":\t\r\n\"1\"}", 0, ""},
        {" [ 1 , { } , [ ] , \"\" , null , true , false ] ", 0, ""},
        /* RFC 8259's numbers, and what cJSON let through */
        {"[0,-0,1,-1,0.5,-0.5e-3,1E+2,12345678901234567890,1e999]", 0, ""},
        {"01", -1, "malformed JSON at byte 1: a number does not begin with 0"},
        {"[-01]", -1, "malformed JSON at byte 3: a number does not begin"},
        {"1.", -1, "malformed JSON at byte 2: a number needs a digit after"},
        {"1.e5", -1, "malformed JSON at byte 2: a number needs a digit after"},
        {"1e", -1, "malformed JSON at byte 2: a number needs a digit in"},
        {"1e+", -1, "malformed JSON at byte 3: a number needs a digit in"},
        {"-", -1, "malformed JSON at byte 1: a number needs a digit here"},
        {"-a", -1, "malformed JSON at byte 1: a number needs a digit here"},
        {"+1", -1, "malformed JSON at byte 0: expected a value"},
        {".5", -1, "malformed JSON at byte 0: expected a value"},
        {"[1234567890123456789012345678901234567890123456789012345678901234]",
         -1, "malformed JSON at byte 1: a number longer than 63 bytes"},
        {"{\"a\":1}x", -1, "malformed JSON at byte 7: bytes after the JSON"},
        {"{\"a\":1}{}", -1, "malformed JSON at byte 7: bytes after the JSON"},
        {"\xef\xbb\xbf{}", -1, "malformed JSON at byte 0: expected a value"},
        {"", -1, "malformed JSON at byte 0: expected a value, the text ends"},
        {"   ", -1, "malformed JSON at byte 3: expected a value, the text"},
        {"{", -1, "malformed JSON at byte 1: expected a member's name"},
        {"{\"a\"", -1, "malformed JSON at byte 4: expected ':' after"},
        {"{\"a\":", -1, "malformed JSON at byte 5: expected a value, the"},
        {"{\"a\":1", -1, "malformed JSON at byte 6: expected ',' or '}'"},
        {"{\"a\":1,}", -1, "malformed JSON at byte 7: expected a member's"},
        {"{a:1}", -1, "malformed JSON at byte 1: expected a member's name"},
        {"[1,]", -1, "malformed JSON at byte 3: expected a value"},
        {"[1 2]", -1, "malformed JSON at byte 3: expected ',' or ']'"},
        {"[tru]", -1, "malformed JSON at byte 1: expected a value"},
        {"nul", -1, "malformed JSON at byte 0: expected a value"},
        {"[nulls]", -1, "malformed JSON at byte 5: expected ',' or ']'"},
    };
    char msg[256];
    unsigned long skip_bad = 0;

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const cJSON *root = NULL;
        int rc = read_json(rows[i].in, strlen(rows[i].in), &root, msg, sizeof(msg));

        if (rc != rows[i].rc ||
            strncmp(msg, rows[i].msg, strlen(rows[i].msg)) != 0)
            fprintf(stderr, "row %zu: %d %s\n", i, rc, msg);
        CHECK_INT(rc, rows[i].rc);
        CHECK(strncmp(msg, rows[i].msg, strlen(rows[i].msg)) == 0);
        CHECK((root != NULL) == (rc == 0));
        same_verdict_skipped(rows[i].in, strlen(rows[i].in), &skip_bad);
    }
    CHECK_INT(skip_bad, 0);
    /* A raw NUL byte, which strlen() would not see. */
    const cJSON *root;
    CHECK_INT(read_json("{\"a\":\"x\0y\"}", 11, &root, msg, sizeof(msg)), -1);
    CHECK_STR(msg, "control character 0x00 at byte 7: JSON needs it escaped");
}

/*
 * \u0000 is read whole, in names and values, as the byte that stands for
 * it (base/utf8.h), and jsonout writes it back as it came: the value the
 * apiserver stored, compared and echoed as it is.
 */
static void
test_nul(void)
{
    const char *in = "{\"a\":\"x\\u0000y\",\"k\\u0000\":\"\\u0000\","
                     "\"k\":\"true\\u0000\",\"managedFields\":[\"\\u0000\"]}";
    struct jsonout out = {0};
    char msg[256], *back;
    const cJSON *root, *a, *k;

    CHECK_INT(read_json(in, strlen(in), &root, msg, sizeof(msg)), 0);
    a = cJSON_GetObjectItemCaseSensitive(root, "a");
    CHECK(cJSON_IsString(a));
    CHECK_STR(a->valuestring, "x\xffy");
    CHECK_STR(a->next->string, "k\xff");
    CHECK_STR(a->next->valuestring, "\xff");
    k = cJSON_GetObjectItemCaseSensitive(root, "k");
    CHECK(k != NULL && strcmp(k->valuestring, "true") != 0);
    CHECK_STR(k->valuestring, "true\xff");
    jsonout_value(&out, root);
    back = jsonout_take(&out, NULL);
    CHECK_STR(back, "{\"a\":\"x\\u0000y\",\"k\\u0000\":\"\\u0000\","
                    "\"k\":\"true\\u0000\",\"managedFields\":[]}");
    free(back);
}

/* Values, as cJSON would hold them. */
static void
test_values(void)
{
    const char *in = "{\"s\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\te\\u00e9\\u20ac"
                     "\\ud83d\\ude00\",\"n\":-0,\"i\":3000000000,"
                     "\"f\":-2.5e-3,\"t\":true,\"z\":null,\"e\":[],\"o\":{}}";
    char msg[256];
    const cJSON *root, *n;

    CHECK_INT(read_json(in, strlen(in), &root, msg, sizeof(msg)), 0);
    CHECK_STR(cJSON_GetObjectItem(root, "s")->valuestring,
              "a\"b\\c/d\b\f\n\r\te\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    n = cJSON_GetObjectItem(root, "n");
    CHECK(cJSON_IsNumber(n) && n->valuedouble == 0 && 1 / n->valuedouble < 0);
    n = cJSON_GetObjectItem(root, "i");
    CHECK(n->valuedouble == 3e9 && n->valueint == 2147483647);
    CHECK(cJSON_GetObjectItem(root, "f")->valuedouble == -2.5e-3);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(root, "t")));
    CHECK(cJSON_GetObjectItem(root, "t")->valueint == 1);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(root, "z")));
    CHECK(cJSON_IsArray(cJSON_GetObjectItem(root, "e")));
    CHECK(cJSON_IsObject(cJSON_GetObjectItem(root, "o")));
    /* first->prev is the last child, as cJSON's own trees have it (the
     * tree is the arena's: nothing is appended to it) */
    CHECK(root->child->prev == cJSON_GetObjectItem(root, "o"));
    CHECK(root->child->prev->next == NULL);

    /* managedFields: an array of any depth, checked and not built */
    in = "{\"metadata\":{\"managedFields\":[{\"f:spec\":{\"f:x\":{}}},1],"
         "\"name\":\"p\"},\"managedFields\":\"kept: not an array\"}";
    CHECK_INT(read_json(in, strlen(in), &root, msg, sizeof(msg)), 0);
    n = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "metadata"),
                            "managedFields");
    CHECK(cJSON_IsArray(n) && n->child == NULL);
    CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "metadata"),
                                  "name")->valuestring,
              "p");
    CHECK_STR(cJSON_GetObjectItem(root, "managedFields")->valuestring,
              "kept: not an array");
    in = "{\"managedFields\":[{\"a\":\"\xff\"}]}";
    CHECK_INT(read_json(in, strlen(in), &root, msg, sizeof(msg)), -1);
    CHECK(strncmp(msg, "invalid UTF-8 at byte 24", 24) == 0);
    in = "{\"managedFields\":[1,]}";
    CHECK_INT(read_json(in, strlen(in), &root, msg, sizeof(msg)), -1);
}

static void
test_skip_same_as_build(void)
{
    static const char *const pieces[] = {
        "{", "}", "[", "]", ",", ":", "\"a\"", "\"\\u0000\"", "1", "-0.5e3",
        "01", "true", "nul", " ", "\"x\":", "{\"k\":[1,{}]}", "\xff", "\x01",
    };
    char text[128];
    unsigned int seed = 1000;
    unsigned long bad = 0;

    for (int round = 0; round < 100000; round++) {
        size_t len = 0;
        int k = 1 + rand_r(&seed) % 12;

        for (int j = 0; j < k; j++) {
            const char *p = pieces[rand_r(&seed) %
                                   (sizeof(pieces) / sizeof(pieces[0]))];
            size_t pl = strlen(p);

            if (len + pl >= sizeof(text))
                break;
            memcpy(text + len, p, pl);
            len += pl;
        }
        same_verdict_skipped(text, len, &bad);
    }
    CHECK_INT(bad, 0);
}

static void
test_depth(void)
{
    static char deep[2 * 1002 + 1];
    char msg[256];
    const cJSON *root;

    for (int d = 1000; d <= 1001; d++) {
        memset(deep, '[', (size_t)d);
        memset(deep + d, ']', (size_t)d);
        CHECK_INT(read_json(deep, 2 * (size_t)d, &root, msg, sizeof(msg)),
                  d <= 1000 ? 0 : -1);
    }
    CHECK_STR(msg, "malformed JSON at byte 1000: arrays and objects nested "
                   "deeper than 1000");
}

/* --- random strings against a byte-at-a-time reference ----------------- */

static int
hexval(const char *s)
{
    char h[5] = {s[0], s[1], s[2], s[3], 0};
    char *end;
    long v;

    if (strspn(h, "0123456789abcdefABCDEF") != 4)
        return -1;
    v = strtol(h, &end, 16);
    return (int)v;
}

/* Decodes a string's contents s[0..len) into out; -1 where JSON says no;
 * \u0000 as jsonread reads it (base/utf8.h). */
static int
reference_string(const char *s, size_t len, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        if (u[i] == '"' || u[i] < 0x20)
            return -1;
        if (u[i] >= 0x80) {
            size_t n = utf8_reference(u + i, len - i);
            if (n == 0)
                return -1;
            memcpy(out, s + i, n);
            out += n, i += n;
        } else if (u[i] != '\\') {
            *out++ = s[i++];
        } else {
            const char *esc = "\"\"\\\\//b\bf\fn\nr\rt\t";
            const char *e;
            long cp;

            if (i + 1 >= len)
                return -1;
            if (s[i + 1] != 'u') {
                for (e = esc; *e && *e != s[i + 1]; e += 2)
                    ;
                if (*e == '\0')
                    return -1;
                *out++ = e[1];
                i += 2;
                continue;
            }
            if (i + 6 > len || (cp = hexval(s + i + 2)) < 0 ||
                (cp >= 0xDC00 && cp <= 0xDFFF))
                return -1;
            i += 6;
            if (cp == 0) { /* read as the byte that stands for it */
                *out++ = (char)UTF8_NUL_STANDIN;
                continue;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo;
                if (i + 6 > len || s[i] != '\\' || s[i + 1] != 'u' ||
                    (lo = hexval(s + i + 2)) < 0xDC00 || lo > 0xDFFF)
                    return -1;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
            if (cp < 0x80) {
                *out++ = (char)cp;
            } else if (cp < 0x800) {
                *out++ = (char)(0xC0 | cp >> 6);
                *out++ = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                *out++ = (char)(0xE0 | cp >> 12);
                *out++ = (char)(0x80 | (cp >> 6 & 0x3F));
                *out++ = (char)(0x80 | (cp & 0x3F));
            } else {
                *out++ = (char)(0xF0 | cp >> 18);
                *out++ = (char)(0x80 | (cp >> 12 & 0x3F));
                *out++ = (char)(0x80 | (cp >> 6 & 0x3F));
                *out++ = (char)(0x80 | (cp & 0x3F));
            }
        }
    }
    *out = '\0';
    return 0;
}

/*
 * Pieces of string contents: the first PLAIN_PIECES are valid anywhere,
 * the rest only next to the right neighbours or never.
 */
static const char *const string_pieces[] = {
    "a",      "bcdefghi", "0000",     "d83d",     "de00",   "dc00",
    "00e9",   "\\\"",     "\xc3\xa9", "\xe2\x80\xa8", "\xf0\x9f\x98\x80", "\\\\",
    "\\u0041", "\\n",    "\\/",      " ",        "\x7f",
    "abcdefghijklmnopqrstuvwxyz0123456789-_.ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "\\",     "\\u",      "\n",       "\x01",     "\xc3",   "\xff",
    "\\ud800",  "\\udc00",  "\\q",      "\\uD83D",  "\\uDE00", "\"",
};
#define PLAIN_PIECES 18
#define ALL_PIECES (sizeof(string_pieces) / sizeof(string_pieces[0]))

/*
 * Up to k random pieces, of the first n, appended at doc[len] (below
 * room); the new len.
 */
static size_t
add_pieces(char *doc, size_t len, size_t room, int k, size_t n,
           unsigned int *seed)
{
    for (int j = 0; j < k; j++) {
        const char *p = string_pieces[rand_r(seed) % n];
        size_t pl = strlen(p);

        if (len + pl >= room)
            break;
        memcpy(doc + len, p, pl);
        len += pl;
    }
    return len;
}

static void
test_strings_random(void)
{
    char doc[256], want[256], msg[128];
    unsigned int seed = 16;
    unsigned long bad = 0, taken = 0;

    for (int round = 0; round < 200000; round++) {
        size_t len = 0, off = (size_t)(rand_r(&seed) % 8);
        int ok;
        const cJSON *root;
        enum jsonread_status rc;

        /* Alignments: the word scan starts anywhere. */
        memset(doc, ' ', off);
        len = off;
        doc[len++] = '"';
        len = add_pieces(doc, len, sizeof(doc) - 2, rand_r(&seed) % 24,
                         ALL_PIECES, &seed);
        ok = reference_string(doc + off + 1, len - off - 1, want) == 0;
        doc[len++] = '"';
        rc = read_json(doc, len, &root, msg, sizeof(msg));
        taken += rc == 0;
        if ((rc == 0) != ok ||
            (ok && strcmp(root->valuestring, want) != 0)) {
            if (bad++ < 5)
                fprintf(stderr, "differs on '%.*s': %s\n", (int)len, doc,
                        ok ? "reference took it" : msg);
        }
    }
    CHECK_INT(bad, 0);
    CHECK(taken > 10000); /* both sides of the line were tried */
}

/*
 * Arrays of random strings: many strings end in one 64-byte block that
 * the reader classified for the first of them, and strings cross block
 * edges at every offset. Each must read as the reference decodes it, and
 * the array is refused exactly when one of them is not a string.
 */
static void
test_string_runs(void)
{
    char doc[1024], want[16][1024], msg[128];
    unsigned int seed = 64;
    unsigned long bad = 0, taken = 0;

    for (int round = 0; round < 100000; round++) {
        size_t len = (size_t)(rand_r(&seed) % 70), from[16];
        int strings = 1 + rand_r(&seed) % 16, ok = 1;
        const cJSON *root;
        cJSON *item;

        memset(doc, ' ', len);
        doc[len++] = '[';
        for (int i = 0; i < strings; i++) {
            doc[len++] = '"';
            from[i] = len;
            /* Mostly plain, so that whole arrays are taken too. */
            len = add_pieces(doc, len, sizeof(doc) - 4, rand_r(&seed) % 8,
                             rand_r(&seed) % 16 != 0 ? PLAIN_PIECES
                                                     : ALL_PIECES,
                             &seed);
            ok &= reference_string(doc + from[i], len - from[i], want[i]) ==
                  0;
            doc[len++] = '"';
            doc[len++] = i + 1 < strings ? ',' : ']';
        }
        if (read_json(doc, len, &root, msg, sizeof(msg)) == JSONREAD_OK) {
            int i = 0;

            taken++;
            cJSON_ArrayForEach(item, root)
            {
                if (i < strings && strcmp(item->valuestring, want[i]) != 0)
                    ok = 0;
                i++;
            }
            ok = ok && i == strings;
        } else {
            ok = !ok;
        }
        if (!ok && bad++ < 5)
            fprintf(stderr, "differs on '%.*s'\n", (int)len, doc);
    }
    CHECK_INT(bad, 0);
    CHECK(taken > 5000);
}

/* --- against cJSON on reviews and their mutants ------------------------- */

struct tally {
    unsigned long inputs, taken, differ;
};

static void
against_cjson(const char *s, size_t len, const char *what, struct tally *t)
{
    char msg[256];
    const cJSON *mine = NULL;
    cJSON *theirs;

    t->inputs++;
    if (read_json(s, len, &mine, msg, sizeof(msg)) != JSONREAD_OK)
        return;
    t->taken++;
    theirs = cjson_parse_standin(s, len);
    if (theirs != NULL)
        empty_managed_fields(theirs);
    if (theirs == NULL || !same_tree(mine, theirs)) {
        if (t->differ++ < 5)
            fprintf(stderr, "%s: jsonread took it, cJSON %s\n", what,
                    theirs ? "built another tree" : "did not");
    }
    cJSON_Delete(theirs);
}

static void
test_against_cjson(void)
{
    static const char *const where[] = {
        "test/golden/cases/*.in.json",
        "test/fuzz/corpus/review/*",
        "../shared/corpus/admissionreviews/*.json",
        "../shared/bench/fixtures/*.json",
    };
    static const char bytes[] = "\"\\{}[],:0-.eE \n\x01\xc3\xff" "u1";
    struct tally t = {0};
    unsigned long files = 0;
    unsigned int seed = 7;

    for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
        glob_t g;

        if (glob(where[w], 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            size_t len = 0;
            char *s = file_read(g.gl_pathv[i], SIZE_MAX, &len), *m;
            char what[512];

            if (s == NULL || (m = malloc(len + 2)) == NULL) {
                free(s);
                continue;
            }
            files++;
            snprintf(what, sizeof(what), "%s", g.gl_pathv[i]);
            against_cjson(s, len, what, &t);
            for (int k = 0; k < 40 && len > 0; k++) {
                size_t at = (size_t)rand_r(&seed) % len, n = len;
                char b = bytes[rand_r(&seed) % (sizeof(bytes) - 1)];

                memcpy(m, s, len);
                switch (k % 4) {
                case 0: n = at; break;                          /* cut */
                case 1: m[at] = b; break;                       /* change */
                case 2: memmove(m + at, m + at + 1, len - at - 1), n--;
                        break;                                  /* drop */
                default: memmove(m + at + 1, m + at, len - at), m[at] = b,
                         n++;                                   /* add */
                }
                snprintf(what, sizeof(what), "%s, mutant %d at %zu",
                         g.gl_pathv[i], k, at);
                against_cjson(m, n, what, &t);
            }
            free(m);
            free(s);
        }
        globfree(&g);
    }
    printf("# jsonread against cJSON: %lu files, %lu inputs, %lu taken\n",
           files, t.inputs, t.taken);
    CHECK(files >= 100); /* the repository's own cases at least */
    CHECK_INT(t.differ, 0);
}

/* Numbers as "%.17g": cJSON's printer keeps 15 digits when they look close.
 * On a copy of the arena's tree, which is read-only. */
static void
exact_numbers(cJSON *node)
{
    for (cJSON *c = node->child; c != NULL; c = c->next)
        exact_numbers(c);
    if (cJSON_IsNumber(node)) {
        char text[32];

        if (node->valuedouble * 0 != 0)
            snprintf(text, sizeof(text), "null");
        else
            snprintf(text, sizeof(text), "%.17g", node->valuedouble);
        node->type = cJSON_Raw;
        node->valuestring = strdup(text);
    }
}

static int
print_files(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        size_t len = 0;
        char *s = file_read(argv[i], SIZE_MAX, &len), msg[256], *text;
        const cJSON *root;
        cJSON *copy;
        struct jsonout out = {0};

        if (s == NULL) {
            printf("error cannot read %s\n", argv[i]);
            continue;
        }
        if (read_json(s, len, &root, msg, sizeof(msg)) != JSONREAD_OK) {
            printf("error %s\n", msg);
        } else {
            if ((copy = cJSON_Duplicate(root, 1)) != NULL)
                exact_numbers(copy);
            /* jsonout writes a NUL back as \u0000, where cJSON would
             * print the byte that stands for it (base/utf8.h). */
            if (copy != NULL)
                jsonout_value(&out, copy);
            text = copy != NULL ? jsonout_take(&out, NULL) : NULL;
            printf("ok %s\n", text != NULL ? text : "(out of memory)");
            free(text);
            cJSON_Delete(copy);
        }
        free(s);
    }
    return 0;
}

/* "[{"k":"v0"},...]" of n members, a string the caller frees. */
static char *
array_of(int n, size_t *len)
{
    char *p = malloc((size_t)n * 24 + 3);
    size_t k = 0;

    if (p == NULL)
        return NULL;
    p[k++] = '[';
    for (int i = 0; i < n; i++)
        k += (size_t)sprintf(p + k, "%s{\"k\":\"v%d\"}", i > 0 ? "," : "",
                             i);
    p[k++] = ']';
    p[k] = '\0';
    *len = k;
    return p;
}

/* Reads text into a and checks it was read. */
static void
read_ok(struct jsonarena *a, const char *text, size_t len)
{
    const cJSON *root = NULL;
    char msg[128];

    CHECK_INT(jsonread(a, text, len, &root, msg, sizeof(msg)), JSONREAD_OK);
}

static void
test_arena_keeps(void)
{
    struct jsonarena *a = jsonarena_new();
    size_t big_len, huge_len, one, held;
    char *big = array_of(20000, &big_len), *huge = array_of(100000, &huge_len);

    CHECK(a != NULL && big != NULL && huge != NULL);
    if (a == NULL || big == NULL || huge == NULL)
        goto done;
    CHECK_INT(jsonarena_held(NULL), 0);
    /* The first read takes a chain of blocks; its reset keeps none. */
    read_ok(a, big, big_len);
    CHECK(jsonarena_held(a) > 1024 * 1024);
    jsonarena_reset(a);
    CHECK_INT(jsonarena_held(a), 0);
    /* The next takes one block that holds it all, which a reset keeps and
     * the same read again does not grow. */
    read_ok(a, big, big_len);
    one = jsonarena_held(a);
    CHECK(one > 1024 * 1024 && one <= JSONARENA_KEEP);
    jsonarena_reset(a);
    CHECK_INT(jsonarena_held(a), one);
    read_ok(a, big, big_len);
    CHECK_INT(jsonarena_held(a), one);
    jsonarena_reset(a);
    /* Small reads: the block stays for JSONARENA_QUIET - 1 of them in a
     * row, a large one in between starts the count again, and the
     * JSONARENA_QUIET-th gives it back. */
    for (int i = 0; i < JSONARENA_QUIET - 1; i++) {
        read_ok(a, "{\"k\":1}", 7);
        jsonarena_reset(a);
    }
    CHECK_INT(jsonarena_held(a), one);
    read_ok(a, big, big_len);
    jsonarena_reset(a);
    for (int i = 0; i < JSONARENA_QUIET - 1; i++) {
        read_ok(a, "{\"k\":1}", 7);
        jsonarena_reset(a);
    }
    CHECK_INT(jsonarena_held(a), one);
    read_ok(a, "{\"k\":1}", 7);
    jsonarena_reset(a);
    held = jsonarena_held(a);
    CHECK(held == 0);
    read_ok(a, "{\"k\":1}", 7);
    CHECK(jsonarena_held(a) > 0 && jsonarena_held(a) < one);
    jsonarena_reset(a);
    /* A tree past JSONARENA_KEEP is never kept, read after read. */
    for (int i = 0; i < 2; i++) {
        read_ok(a, huge, huge_len);
        CHECK(jsonarena_held(a) > JSONARENA_KEEP);
        jsonarena_reset(a);
        CHECK_INT(jsonarena_held(a), 0);
    }
done:
    free(big);
    free(huge);
    jsonarena_free(a);
}

int
main(int argc, char **argv)
{
    if ((arena = jsonarena_new()) == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--print") == 0)
        return print_files(argc - 2, argv + 2);
    test_table();
    test_values();
    test_nul();
    test_depth();
    test_skip_same_as_build();
    test_strings_random();
    test_string_runs();
    test_against_cjson();
    test_arena_keeps();
    printf("# read in place too: %lu texts\n", texts_read);
    CHECK(texts_read > 300000);
    CHECK_INT(in_place_differs, 0);
    jsonarena_free(arena);
    CHECK_DONE();
}
