/*
 * The response writer against cJSON's own printer, and the parse arena:
 * a tree built there reads the same as one built with malloc(), and
 * cJSON outside the arena is untouched.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/check.h"
#include "webhook/jsonarena.h"
#include "webhook/jsonout.h"

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
 * the text is UTF-8 JSON whatever the string held.
 */
static void
test_string_not_utf8(void)
{
    static const char *const cases[][2] = {
        {"caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80",
         "\"caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80\""},
        {"a\xff", "\"a\\ufffd\""},
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

static void
test_arena(void)
{
    /* Small (one block) and large (several blocks, then one kept). */
    const int sizes[] = {3, 20000, 20000, 3};

    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        char *doc = big_doc(sizes[k]);
        cJSON *plain = cJSON_Parse(doc), *in_arena, *outside;
        char *want = cJSON_PrintUnformatted(plain), *got;

        CHECK_INT(jsonarena_begin(), 0);
        in_arena = cJSON_Parse(doc);
        CHECK(!jsonarena_end());
        CHECK(in_arena != NULL);
        /* Printed (with malloc()) after the arena closed: the same text. */
        got = cJSON_PrintUnformatted(in_arena);
        CHECK_STR(got, want);
        CHECK_STR(
            cJSON_GetArrayItem(in_arena, sizes[k] - 1)->child->valuestring,
            cJSON_GetArrayItem(plain, sizes[k] - 1)->child->valuestring);
        /* A tree made outside the arena is malloc()'s: freed one by one. */
        outside = cJSON_Duplicate(in_arena, 1);
        cJSON_Delete(in_arena); /* harmless: its pieces go with the reset */
        jsonarena_reset();
        CHECK(cJSON_Compare(outside, plain, 1));
        cJSON_Delete(outside);
        cJSON_Delete(plain);
        free(got);
        free(want);
        free(doc);
    }

    /* A parse error inside the arena: cJSON frees its partial tree. */
    CHECK_INT(jsonarena_begin(), 0);
    CHECK(cJSON_Parse("{\"a\":[1,2,{\"b\":") == NULL);
    CHECK(!jsonarena_end());
    jsonarena_reset();
}

int
main(void)
{
    test_string_escapes();
    test_string_not_utf8();
    test_values();
    test_arena();
    CHECK_DONE();
}
