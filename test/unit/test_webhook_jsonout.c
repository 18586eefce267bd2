/*
 * The response writer against cJSON's own printer, and the reader's
 * arena: a tree read there prints as cJSON's own does, over several
 * blocks and after resets, and what cJSON makes of it is malloc()'s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/check.h"
#include "json/jsonread.h"
#include "base/jsonout.h"

/*
 * Every ASCII byte but NUL, in a string: the escapes must be cJSON's.
 * (Bytes from 0x80 on are UTF-8 or \ufffd: test_string_not_utf8.)
 */
static void
test_string_escapes(void)
{
    char all[128];
    struct jsonout o = {0};
    cJSON *s;
    char *want, *got;

    for (int i = 1; i < 128; i++)
        all[i - 1] = (char)i;
    all[127] = '\0';
    s = cJSON_CreateString(all);
    want = cJSON_PrintUnformatted(s);
    jsonout_string(&o, all);
    jsonout_lit(&o, ",");
    jsonout_string(&o, NULL);
    got = jsonout_take(&o, NULL);
    CHECK(want != NULL && got != NULL);
    CHECK(strncmp(got, want, strlen(want)) == 0);
    CHECK_STR(got + strlen(want), ",\"\"");
    free(want);
    free(got);
    cJSON_Delete(s);
}

/*
 * UTF-8 is copied as cJSON copies it; a byte that does not start a whole
 * sequence (cut, overlong, a surrogate, past U+10FFFF) becomes \ufffd, so
 * the text is UTF-8 JSON whatever the string held; but for 0xFF, the
 * NUL of a string the reader read.
 */
static void
test_string_not_utf8(void)
{
    static const char *const cases[][2] = {
        {"caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80",
         "\"caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80\""},
        {"a\xfe", "\"a\\ufffd\""},
        /* 0xFF is the reader's NUL (base/utf8.h): \u0000 again. */
        {"a\xff", "\"a\\u0000\""},
        {"cut \xe2\x80", "\"cut \\ufffd\\ufffd\""},
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},
        {"\x80\xbf\"", "\"\\ufffd\\ufffd\\\"\""},
    };
    char all[256];
    struct jsonout o = {0};
    char *got;
    cJSON *back;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        jsonout_string(&o, cases[i][0]);
        got = jsonout_take(&o, NULL);
        CHECK_STR(got, cases[i][1]);
        free(got);
    }
    /* Every byte but NUL: what comes out parses, as UTF-8 text. */
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = '\0';
    jsonout_string(&o, all);
    got = jsonout_take(&o, NULL);
    back = got != NULL ? cJSON_Parse(got) : NULL;
    CHECK(cJSON_IsString(back));
    CHECK(got != NULL && strstr(got, "~\x7f\\ufffd") != NULL);
    cJSON_Delete(back);
    free(got);
}

/* Values of every kind, large enough to need the buffer to grow. */
static void
test_values(void)
{
    const char *doc = "{\"a\":[1,2.5,-3e+40,true,false,null,\"x\\ty\"],"
                      "\"b\":{\"c\":{}},\"d\":[]}";
    cJSON *v = cJSON_Parse(doc);
    struct jsonout o = {0};
    char *want = cJSON_PrintUnformatted(v), *got;
    size_t len = 0;

    for (int i = 0; i < 100; i++)
        jsonout_value(&o, v);
    got = jsonout_take(&o, &len);
    CHECK_INT(len, 100 * strlen(want));
    CHECK(got != NULL && strncmp(got, want, strlen(want)) == 0);
    CHECK_STR(got + 99 * strlen(want), want);
    free(want);
    free(got);
    cJSON_Delete(v);

    /* Nothing written is the empty text, not NULL. */
    got = jsonout_take(&o, &len);
    CHECK_STR(got, "");
    CHECK_INT(len, 0);
    free(got);
}

/* A document of n objects, each with a key, a string and a number. */
static char *
big_doc(int n)
{
    struct jsonout o = {0};

    jsonout_lit(&o, "[");
    for (int i = 0; i < n; i++) {
        char name[32];

        snprintf(name, sizeof(name), "item-%d", i);
        if (i > 0)
            jsonout_lit(&o, ",");
        jsonout_lit(&o, "{\"name\":");
        jsonout_string(&o, name);
        jsonout_lit(&o, ",\"n\":");
        jsonout_int(&o, i);
        jsonout_lit(&o, "}");
    }
    jsonout_lit(&o, "]");
    return jsonout_take(&o, NULL);
}

/* xorshift: the same trees on every run. */
static unsigned long rng_state = 88172645463325252UL;

static unsigned long
rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ASCII text with every kind of escape cJSON writes, and UTF-8. */
static void
random_text(char *out, size_t size)
{
    static const char *const parts[] = {"a", "Z", "0", " ", "\"", "\\", "/",
                                        "\b", "\f", "\n", "\r", "\t", "\x01",
                                        "\x1f", "\x7f", "~", "\xc3\xa9",
                                        "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    size_t n = rng() % 12, len = 0;

    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *p = parts[rng() % (sizeof(parts) / sizeof(parts[0]))];

        if (len + strlen(p) + 1 > size)
            break;
        strcpy(out + len, p);
        len += strlen(p);
    }
}

/*
 * Numbers on both of jsonout's paths: whole ones under 10^15 (written by
 * jsonout) and the rest, -0 and 2^31 among them (printed by cJSON).
 */
static double
random_number(void)
{
    static const double some[] = {0.0,       -0.0,      1.0,       -1.0,
                                  2147483647, -2147483648.0, 2147483648.0,
                                  1e300,     -1e-300,   0.1,       2.5,
                                  1.0 / 3.0, 123456789012345678.0};

    if (rng() % 2)
        return (double)(long)(rng() % 2000001) - 1000000.0;
    return some[rng() % (sizeof(some) / sizeof(some[0]))];
}

static cJSON *
random_value(int depth)
{
    char text[64];
    cJSON *v;
    int kinds = depth < 4 ? 9 : 7;

    switch (rng() % (unsigned long)kinds) {
    case 0:
        return cJSON_CreateNull();
    case 1:
        return cJSON_CreateBool(rng() % 2);
    case 2:
    case 3:
        return cJSON_CreateNumber(random_number());
    case 4:
    case 5:
        random_text(text, sizeof(text));
        return cJSON_CreateString(text);
    case 6:
        return cJSON_CreateRaw("{\"raw\":[1,2]}");
    case 7:
        v = cJSON_CreateArray();
        for (unsigned long i = rng() % 4; i > 0; i--)
            cJSON_AddItemToArray(v, random_value(depth + 1));
        return v;
    default:
        v = cJSON_CreateObject();
        for (unsigned long i = rng() % 4; i > 0; i--) {
            random_text(text, sizeof(text));
            cJSON_AddItemToObject(v, text, random_value(depth + 1));
        }
        return v;
    }
}

/*
 * 20,000 random trees (valid UTF-8 strings: where cJSON and jsonout part,
 * on bytes that are not UTF-8, test_string_not_utf8 says how) printed as
 * cJSON prints them, byte for byte.
 */
static void
test_values_random(void)
{
    int differ = 0;

    for (int i = 0; i < 20000; i++) {
        cJSON *v = random_value(0);
        struct jsonout o = {0};
        char *want = cJSON_PrintUnformatted(v), *got;

        jsonout_value(&o, v);
        got = jsonout_take(&o, NULL);
        if (want == NULL || got == NULL || strcmp(want, got) != 0) {
            if (differ++ < 3)
                fprintf(stderr, "cJSON: %s\njsonout: %s\n", want, got);
        }
        free(want);
        free(got);
        cJSON_Delete(v);
    }
    CHECK_INT(differ, 0);
}

/* What cJSON cannot print fails the output, as it fails cJSON's. */
static void
test_values_unprintable(void)
{
    cJSON invalid = {0}, raw = {.type = cJSON_Raw};
    struct jsonout o = {0};

    jsonout_value(&o, &invalid);
    CHECK(o.failed);
    CHECK(cJSON_PrintUnformatted(&invalid) == NULL);
    jsonout_free(&o);
    o = (struct jsonout){0};
    jsonout_value(&o, &raw);
    CHECK(o.failed);
    jsonout_free(&o);
    o = (struct jsonout){0};
    jsonout_value(&o, NULL);
    CHECK(o.failed);
    jsonout_free(&o);
}

static void
test_arena(void)
{
    /* Small (one block) and large (several blocks, then one kept). */
    const int sizes[] = {3, 20000, 20000, 3};
    struct jsonarena *arena = jsonarena_new();
    const cJSON *refused;
    char msg[256];

    CHECK(arena != NULL);
    if (arena == NULL)
        return;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        char *doc = big_doc(sizes[k]);
        cJSON *plain = cJSON_Parse(doc), *outside;
        char *want = cJSON_PrintUnformatted(plain), *got;
        const cJSON *in_arena = NULL;

        CHECK_INT(jsonread(arena, doc, strlen(doc), &in_arena, msg,
                           sizeof(msg)),
                  JSONREAD_OK);
        CHECK(in_arena != NULL);
        /* Printed by cJSON (with malloc()): the same text. */
        got = cJSON_PrintUnformatted(in_arena);
        CHECK_STR(got, want);
        CHECK_STR(
            cJSON_GetArrayItem(in_arena, sizes[k] - 1)->child->valuestring,
            cJSON_GetArrayItem(plain, sizes[k] - 1)->child->valuestring);
        /*
         * What cJSON makes is malloc()'s, freed one by one, arena or not:
         * a copy of the arena's tree outlives its reset.
         */
        outside = cJSON_Duplicate(in_arena, 1);
        jsonarena_reset(arena);
        CHECK(cJSON_Compare(outside, plain, 1));
        cJSON_Delete(outside);
        cJSON_Delete(plain);
        free(got);
        free(want);
        free(doc);
    }
    /* A parse refused half-built leaves nothing to free but the arena. */
    CHECK_INT(jsonread(arena, "{\"a\":[1,2,{\"b\":", 15, &refused, msg,
                       sizeof(msg)),
              JSONREAD_MALFORMED);
    CHECK(refused == NULL);
    jsonarena_free(arena);
    jsonarena_free(NULL);
    jsonarena_reset(NULL);
}

int
main(void)
{
    test_string_escapes();
    test_string_not_utf8();
    test_values();
    test_values_random();
    test_values_unprintable();
    test_arena();
    CHECK_DONE();
}
