/*
 * json/jsonskim.c, the fieldsV1 check by bit masks, against the
 * parser's own byte-by-byte check of the same text (jsonread.h, inside a
 * managedFields array under a member not named fieldsV1):
 * - a table of tries and near-tries, each with the byte it must end at
 *   or none;
 * - one trie slid a byte at a time across the 64-byte blocks (escapes
 *   and quotes on their edges), ending with the text or before more,
 *   cut short, and with bytes broken;
 * - random texts of trie pieces and of pieces that break it;
 * - every fieldsV1 in the repository's reviews and the bench fixtures,
 *   taken as they are and with a byte changed, dropped or added.
 * Wherever the skim vouches for an object, the parser must take exactly
 * those bytes as JSON; and the skim a byte at a time, by SSE2 and by AVX2
 * (this file compiles the source again to reach each) must agree on
 * every text (and the AVX2 skim's prefix XOR, a carry-less multiply,
 * with the shifts the others use, word by word). Each text is in a
 * buffer of its own size, so that ASan sees a read past its end.
 */
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/check.h"
#include "lib/file.h"
#include "json/jsonread.h"
#include "json/jsonskim.h"

/* The source again, for its skim with each classifier. */
const unsigned char *jsonskim_again(const unsigned char *p,
                                    const unsigned char *end,
                                    unsigned depth_room);
#define jsonskim_fieldsv1 jsonskim_again
#include "json/jsonskim.c"
#undef jsonskim_fieldsv1

#define ROOM 1000

struct tally {
    unsigned long texts, vouched, wrong;
};

/* Whether the parser takes text[0..len) as JSON, checked as fieldsV1 is
 * when the skim does not vouch for it (0 when out of memory too). */
static int
parser_takes(const char *text, size_t len)
{
    static const char head[] = "{\"managedFields\":[{\"fieldsV2\":";
    size_t n = sizeof(head) - 1;
    static struct jsonarena *arena; /* kept, reset after each text */
    char *doc = malloc(n + len + 3), msg[200];
    const cJSON *root = NULL;
    int rc;

    if (arena == NULL)
        arena = jsonarena_new();
    if (doc == NULL || arena == NULL) {
        free(doc);
        return 0;
    }
    memcpy(doc, head, n);
    memcpy(doc + n, text, len);
    memcpy(doc + n + len, "}]}", 3);
    rc = jsonread(arena, doc, n + len + 3, &root, msg, sizeof(msg));
    jsonarena_reset(arena);
    free(doc);
    return rc == JSONREAD_OK;
}

/* Whether the skim a byte at a time, by SSE2 and by AVX2 (where this CPU
 * has it) all say what the one chosen for this CPU said. */
static int
classifiers_agree(const unsigned char *p, const unsigned char *end,
                  const unsigned char *chosen)
{
    int same = skim_bytes(p, end, ROOM) == chosen;

#ifdef SKIM_X86
    same = same && skim_sse2(p, end, ROOM) == chosen;
    if (has_avx2())
        same = same && skim_avx2(p, end, ROOM) == chosen;
#endif
    return same;
}

/*
 * Skims text[0..len) copied into a buffer of its own size; the bytes
 * vouched for (-1: none). Counts a disagreement between the classifiers,
 * or with the parser, as wrong.
 */
static long
skim_and_check(const char *text, size_t len, struct tally *t)
{
    unsigned char *buf = malloc(len > 0 ? len : 1);
    const unsigned char *end, *ours;
    long n;

    if (buf == NULL)
        return -1;
    memcpy(buf, text, len);
    end = buf + len;
    ours = jsonskim_fieldsv1(buf, end, ROOM);
    n = ours != NULL ? (long)(ours - buf) : -1;
    t->texts++;
    if (!classifiers_agree(buf, end, ours)) {
        if (t->wrong++ < 5)
            fprintf(stderr, "the classifiers differ on '%.*s'\n",
                    (int)(len < 300 ? len : 300), text);
    } else if (ours != NULL) {
        t->vouched++;
        if (!parser_takes(text, (size_t)n) && t->wrong++ < 5)
            fprintf(stderr, "vouched for what the parser refuses: '%.*s'\n",
                    (int)(n < 300 ? n : 300), text);
    }
    free(buf);
    return n;
}

/* Each row: the text and how many bytes the skim vouches for (-1: none). */
static void
test_table(void)
{
    static const struct {
        const char *text;
        long end;
    } rows[] = {
        {"{}", 2},
        {"{},\"x\":1}", 2},
        {"{\"f:a\":{}}", 10},
        {"{\"\":{}}", 7},
        {"{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"t\\\"}\":"
         "{\".\":{},\"f:name\":{}}}}}]",
         71},
        {"{\"a\":{}}}", 8},        /* the first object's end */
        {"{\"a\":{\"b\":{}}},{}", 14},
        {"{\"a,}:{\":{}}", 12},    /* tokens inside a name are text */
        {"{\"a\\\"\":{}}", 10},    /* an escaped quote inside a name */
        {"{\"a\":1}", -1},         /* a number */
        {"{\"a\":\"b\"}", -1},     /* a string value */
        {"{\"a\":[]}", -1},        /* an array */
        {"{\"a\":true}", -1},
        {"{ }", -1},               /* a space */
        {"{\"a\" :{}}", -1},
        {"{\"a\":{}\n}", -1},
        {"{\"\\u0041\":{}}", -1},  /* an escape other than \" */
        {"{\"\\\\\":{}}", -1},     /* \\ */
        {"{\"\\/\":{}}", -1},
        {"{\"\xc3\xa9\":{}}", -1}, /* not ASCII */
        {"{\"a\x01\":{}}", -1},    /* a control character */
        {"{\"a\x7f\":{}}", 9},     /* DEL is text to JSON */
        {"{\"a\":{},}", -1},
        {"{,\"a\":{}}", -1},
        {"{\"a\"}", -1},
        {"{\"a\":}", -1},
        {"{\"a\"::{}}", -1},
        {"{\"a\":{}\"b\":{}}", -1},
        {"{\"a\":{},,\"b\":{}}", -1},
        {"{{}}", -1},
        {"{\"a\":{}}{", 8},
        {"{\"a\":{}", -1},         /* the text ends first */
        {"{\"a\":{", -1},
        {"{\"a", -1},
        {"{", -1},
        {"", -1},
        {"[]", -1},
        {"{\"a\":{}}\\", 8},       /* what follows is the caller's */
        {"\\{}", -1},
    };
    struct tally t = {0};

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        long got = skim_and_check(rows[i].text, strlen(rows[i].text), &t);

        if (got != rows[i].end) {
            fprintf(stderr, "row %zu '%s': %ld, not %ld\n", i, rows[i].text,
                    got, rows[i].end);
            check_failures++;
        }
    }
    CHECK_INT(t.wrong, 0);
}

/* A trie slid by one byte at a time over the block boundaries. */
static void
test_blocks(void)
{
    static const char body[] =
        "\":{\"k:{\\\"name\\\":\\\"NCCL_DEBUG\\\"}\":{\".\":{},\"f:name\":{},"
        "\"f:value\":{}},\"f:ports\":{\"k:{\\\"containerPort\\\":29500}\":"
        "{}}},\"f:spec\":{}}";
    char text[512];
    struct tally t = {0};

    for (size_t pad = 0; pad < 200; pad++) {
        size_t n = 0;

        text[n++] = '{';
        text[n++] = '"';
        memset(text + n, 'a', pad);
        n += pad;
        memcpy(text + n, body, sizeof(body) - 1);
        n += sizeof(body) - 1;
        /* Ending with the text, and before more. */
        CHECK_INT(skim_and_check(text, n, &t), (long)n);
        memcpy(text + n, ",\"x\":1}", 7);
        CHECK_INT(skim_and_check(text, n + 7, &t), (long)n);
        /* Cut anywhere: not an object yet, nothing vouched for. */
        CHECK_INT(skim_and_check(text, n - 1 - pad % (n - 1), &t), -1);
        /* One byte broken: a space, a lone backslash, a comma. */
        for (size_t at = 1; at < n; at += 7) {
            char was = text[at];

            text[at] = "\\ ,"[at % 3];
            skim_and_check(text, n, &t);
            text[at] = was;
        }
    }
    CHECK_INT(t.wrong, 0);
    CHECK(t.vouched >= 400);
}

static void
test_random(void)
{
    /* The trie's own pieces first, then what breaks it. */
    static const char *const pieces[] = {
        "{", "}", "{}", ":", ",", "\"f:a\"", "\"f:metadata\":{", "\".\":{}",
        "\"k:{\\\"name\\\":\\\"x\\\"}\"", "\"f:a\":{},", "\"f:b\":{}}",
        "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
        "\"", "\\", "\\\"", "\\\\", " ", "[", "1", "\xc3\xa9", "\x01",
    };
    const size_t own = 12;
    const size_t npieces = sizeof(pieces) / sizeof(pieces[0]);
    char text[2048];
    unsigned int seed = 2026;
    struct tally t = {0};

    for (int round = 0; round < 200000; round++) {
        size_t len = 1;
        int k = rand_r(&seed) % 40;

        text[0] = '{';
        for (int j = 0; j < k; j++) {
            /* Mostly the trie's own pieces, now and then a breaker. */
            const char *p = pieces[rand_r(&seed) % 8 == 0
                                       ? (size_t)rand_r(&seed) % npieces
                                       : (size_t)rand_r(&seed) % own];
            size_t pl = strlen(p);

            if (len + pl >= sizeof(text))
                break;
            memcpy(text + len, p, pl);
            len += pl;
        }
        skim_and_check(text, len, &t);
    }
    printf("# random texts: %lu, vouched for %lu\n", t.texts, t.vouched);
    CHECK_INT(t.wrong, 0);
    CHECK(t.vouched >= 10000);
}

/* Each fieldsV1 of each file, as it is and changed; returns how many
 * were vouched for as they are. */
static unsigned long
fields_of_file(const char *s, size_t len, struct tally *t, unsigned *seed)
{
    static const char name[] = "\"fieldsV1\":";
    static const char bytes[] = "{}\":, \\a\x01\xc3[1";
    unsigned long whole = 0;
    char *m = malloc(len + 1);

    if (m == NULL)
        return 0;
    for (const char *at = s; (at = strstr(at, name)) != NULL; at++) {
        const char *v = at + sizeof(name) - 1;
        size_t left = len - (size_t)(v - s);
        long n = skim_and_check(v, left, t);

        if (n < 0)
            continue;
        whole++;
        for (int k = 0; k < 600; k++) {
            size_t pos = (size_t)rand_r(seed) % (size_t)n, mn = left;
            char b = bytes[rand_r(seed) % (sizeof(bytes) - 1)];

            memcpy(m, v, left);
            switch (k % 3) {
            case 0: m[pos] = b; break;
            case 1: memmove(m + pos, m + pos + 1, left - pos - 1), mn--;
                    break;
            default: memmove(m + pos + 1, m + pos, left - pos), m[pos] = b,
                     mn++;
            }
            skim_and_check(m, mn, t);
        }
    }
    free(m);
    return whole;
}

static void
test_corpus(void)
{
    static const char *const where[] = {
        "test/golden/cases/*.in.json",
        "test/fuzz/corpus/review/*",
        "test/fuzz/corpus/jsonread/*",
        "test/data/corpus/admissionreviews/*.json",
        "../shared/corpus/admissionreviews/*.json",
        "../shared/bench/fixtures/*.json",
    };
    struct tally t = {0};
    unsigned long whole = 0;
    unsigned seed = 11;

    for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
        glob_t g;

        if (glob(where[w], 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            size_t len = 0;
            char *s = file_read(g.gl_pathv[i], SIZE_MAX, &len);

            if (s != NULL)
                whole += fields_of_file(s, len, &t, &seed);
            free(s);
        }
        globfree(&g);
    }
    printf("# fieldsV1 in files: %lu vouched for as they are; %lu texts "
           "with their mutants, %lu vouched for\n",
           whole, t.texts, t.vouched);
    /* The fuzz seed's at least; the bench fixtures' four beside it. */
    CHECK(whole >= 1);
    CHECK_INT(t.wrong, 0);
}

/* Nesting: the room given is never exceeded, a leaf's level counted. */
static void
test_depth(void)
{
    char text[700];
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)text;

    for (int i = 0; i < 100; i++) {
        memcpy(text + n, "{\"a\":", 5);
        n += 5;
    }
    text[n++] = '{';
    text[n++] = '}';
    memset(text + n, '}', 100);
    n += 100;
    /* 101 objects open at once, the innermost a leaf: vouched for with
     * room for 101, never with 100 or fewer. */
    CHECK(jsonskim_fieldsv1(p, p + n, 101) == p + n);
    CHECK(jsonskim_fieldsv1(p, p + n, 100) == NULL);
    CHECK(jsonskim_fieldsv1(p, p + n, 50) == NULL);
    CHECK(jsonskim_fieldsv1(p, p + n, 1) == NULL);
}

#ifdef SKIM_X86
/* How many words the two prefix XORs disagree on; compiled for the
 * carry-less multiply, which only a CPU with AVX2 is asked to run. */
__attribute__((target("pclmul"))) static int
clmul_differs(void)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    int differ = 0;

    for (int i = 0; i < 64; i++)
        differ += prefix_xor_clmul((uint64_t)1 << i) !=
                  prefix_xor((uint64_t)1 << i);
    differ += prefix_xor_clmul(0) != 0;
    differ += prefix_xor_clmul(~(uint64_t)0) != prefix_xor(~(uint64_t)0);
    differ += prefix_xor_clmul((uint64_t)1 << 63 | 1) != ~(uint64_t)0 >> 1;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        differ += prefix_xor_clmul(x) != prefix_xor(x);
    }
    return differ;
}
#endif

/* The carry-less multiply's prefix XOR against the shifts', on words
 * with every bit alone, bits at both ends and pseudo-random ones. */
static void
test_prefix_xor(void)
{
#ifdef SKIM_X86
    if (has_avx2())
        CHECK_INT(clmul_differs(), 0);
#endif
}

int
main(void)
{
    test_prefix_xor();
    test_table();
    test_blocks();
    test_random();
    test_corpus();
    test_depth();
    CHECK_DONE();
}
