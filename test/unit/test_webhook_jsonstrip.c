/*
 * managedFields stripping: exact bytes on hand-made cases, and on every
 * golden review (plus the bench fixtures when ../shared is there) the
 * stripped text parses to the original tree with those arrays emptied.
 */
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/check.h"
#include "webhook/file.h"
#include "webhook/jsonstrip.h"

/* want NULL: nothing is stripped. */
static void
check_strip(const char *in, const char *want)
{
    size_t n = 0;
    char *got = jsonstrip_managed_fields(in, strlen(in), &n);

    if (want == NULL) {
        if (got != NULL)
            fprintf(stderr, "stripped %s\n", in);
        CHECK(got == NULL);
    } else {
        CHECK(got != NULL && n == strlen(want) && memcmp(got, want, n) == 0);
        if (got != NULL && (n != strlen(want) || memcmp(got, want, n) != 0))
            fprintf(stderr, "  got  %.*s\n  want %s\n", (int)n, got, want);
    }
    free(got);
}

static void
test_cases(void)
{
    char deep[400];

    check_strip("{\"metadata\":{\"managedFields\":[{\"manager\":\"kubectl\","
                "\"fieldsV1\":{\"f:spec\":{}}}],\"name\":\"p\"}}",
                "{\"metadata\":{\"managedFields\":[],\"name\":\"p\"}}");
    check_strip("{ \"managedFields\" :\n [ 1, \"]\" ] }",
                "{ \"managedFields\" :\n [] }");
    /* Brackets, braces and quotes inside strings do not count. */
    check_strip("{\"managedFields\":[\"a\\\"]\\\\\",{\"b\":\"}[\"}],\"x\":1}",
                "{\"managedFields\":[],\"x\":1}");
    /* The object's and the oldObject's. */
    check_strip("{\"object\":{\"managedFields\":[1]},"
                "\"oldObject\":{\"managedFields\":[2]}}",
                "{\"object\":{\"managedFields\":[]},"
                "\"oldObject\":{\"managedFields\":[]}}");
    /* A value, not a member name; an escaped quote; not an array. */
    check_strip("{\"a\":\"managedFields\",\"b\":[\"managedFields\"]}", NULL);
    check_strip("{\"x\\\"managedFields\":[1]}", NULL);
    check_strip("{\"managedFields\":{\"a\":[1]}}", NULL);
    check_strip("{\"managedFields\":[]}", NULL);
    /* Brackets that do not pair, or do not close: left to the parser. */
    check_strip("{\"managedFields\":[{]}", NULL);
    check_strip("{\"managedFields\":[1,2", NULL);
    check_strip("{\"managedFields\":[\"open", NULL);
    /* Deeper than anything the apiserver writes: left alone. */
    strcpy(deep, "{\"managedFields\":");
    for (int i = 0; i < 200; i++)
        strcat(deep, "[");
    CHECK(strlen(deep) < sizeof(deep));
    check_strip(deep, NULL);
}

/* Every managedFields array in the tree made empty. */
static void
empty_managed_fields(cJSON *node)
{
    for (cJSON *c = node != NULL ? node->child : NULL; c != NULL; c = c->next) {
        if (c->string != NULL && strcmp(c->string, "managedFields") == 0 &&
            cJSON_IsArray(c)) {
            while (c->child != NULL)
                cJSON_Delete(cJSON_DetachItemViaPointer(c, c->child));
        } else {
            empty_managed_fields(c);
        }
    }
}

/* How many of the files had something stripped. */
static int
test_files(const char *pattern)
{
    glob_t g;
    int stripped = 0;

    if (glob(pattern, 0, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t len = 0, slen = 0;
        char *text = file_read(g.gl_pathv[i], SIZE_MAX, &len), *s, *want, *got;
        cJSON *orig, *strip;

        CHECK(text != NULL);
        if (text == NULL)
            continue;
        s = jsonstrip_managed_fields(text, len, &slen);
        if (s == NULL) {
            free(text);
            continue;
        }
        stripped++;
        orig = cJSON_ParseWithLength(text, len);
        strip = cJSON_ParseWithLength(s, slen);
        empty_managed_fields(orig);
        want = cJSON_PrintUnformatted(orig);
        got = cJSON_PrintUnformatted(strip);
        CHECK(want != NULL && got != NULL && strcmp(want, got) == 0);
        if (want == NULL || got == NULL || strcmp(want, got) != 0)
            fprintf(stderr, "  differs: %s\n", g.gl_pathv[i]);
        free(want);
        free(got);
        cJSON_Delete(orig);
        cJSON_Delete(strip);
        free(s);
        free(text);
    }
    globfree(&g);
    return stripped;
}

int
main(void)
{
    test_cases();
    /* Run from the top of the tree, as `make unit` does. */
    CHECK(test_files("test/golden/cases/*.in.json") > 0);
    test_files("../shared/bench/fixtures/*.json");
    test_files("../shared/corpus/admissionreviews/*.json");
    CHECK_DONE();
}
