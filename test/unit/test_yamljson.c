/*
 * YAML read as kubectl reads it (policy/k8s/yamlresolve.h, yamljson.h):
 * the rows of test/unit/cases/yaml-kubectl.json are go-yaml v2.4.4's own
 * decode_test.go tables (unmarshalTests into interface{} maps,
 * unmarshalErrorTests) and sigs.k8s.io/yaml v1.6.0's TestYAMLToJSON,
 * each naming its source, with the JSON kubectl's converter gives or the
 * error it stops at; a few rows where topogate differs on purpose say
 * why. Then rows of the same rules that the upstream tables do not
 * spell out (yes/no/on/off as values and keys, tags, octal, NUL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/utf8.h"
#include "base/yamltree.h"
#include "policy/k8s/yamljson.h"
#include "test/unit/check.h"

#define CASES "test/unit/cases/yaml-kubectl.json"

/* The first document of text as JSON, or NULL with msg. Owned. */
static cJSON *
read_yaml(const char *text, char *msg, size_t size)
{
    struct load_error err;
    struct ytree *t = ytree_parse(text, strlen(text), &err);
    cJSON *out = NULL;

    if (t == NULL) {
        snprintf(msg, size, "invalid YAML: %s", err.message);
        return NULL;
    }
    if (t->n_docs == 0)
        snprintf(msg, size, "no document");
    else if ((out = yaml_to_json(t->docs[0], &err)) == NULL)
        snprintf(msg, size, "%s", err.message);
    ytree_free(t);
    return out;
}

/* One row: the JSON wanted (text), or NULL and the error's words. */
static void
row(const char *yaml, const char *want_json, const char *want_error,
    const char *source)
{
    char msg[300] = "";
    cJSON *got = read_yaml(yaml, msg, sizeof(msg));
    cJSON *want = want_json ? cJSON_Parse(want_json) : NULL;
    char *text = got ? cJSON_PrintUnformatted(got) : NULL;
    bool ok = want_json ? want != NULL && got != NULL &&
                              cJSON_Compare(got, want, true)
                        : got == NULL && strstr(msg, want_error) != NULL;

    if (!ok) {
        fprintf(stderr, "%s\n  yaml: %s\n  want: %s\n  got:  %s\n", source,
                yaml, want_json ? want_json : want_error, text ? text : msg);
        check_failures++;
    }
    free(text);
    cJSON_Delete(got);
    cJSON_Delete(want);
}

static void
test_upstream_tables(void)
{
    static char text[1 << 16];
    FILE *f = fopen(CASES, "rb");
    size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    cJSON *cases, *c;
    int n = 0;

    if (f)
        fclose(f);
    text[len] = '\0';
    cases = cJSON_Parse(text);

    CHECK(cases != NULL);
    cJSON_ArrayForEach(c, cases)
    {
        const cJSON *want = cJSON_GetObjectItem(c, "json");
        char *want_text = want ? cJSON_PrintUnformatted(want) : NULL;

        row(cJSON_GetStringValue(cJSON_GetObjectItem(c, "yaml")), want_text,
            cJSON_GetStringValue(cJSON_GetObjectItem(c, "error")),
            cJSON_GetStringValue(cJSON_GetObjectItem(c, "source")));
        free(want_text);
        n++;
    }
    printf("# %d rows of go-yaml's and sigs.k8s.io/yaml's tables\n", n);
    CHECK(n >= 80);
    cJSON_Delete(cases);
}

/* The same rules (go-yaml v2.4.4 resolve.go), on what manifests hold. */
static void
test_rules(void)
{
    static const char *const ok[][2] = {
        /* YAML 1.1 booleans, every spelling resolveMap has. */
        {"[y, Y, yes, Yes, YES, on, On, ON, true, True, TRUE]",
         "[true,true,true,true,true,true,true,true,true,true,true]"},
        {"[n, N, no, No, NO, off, Off, OFF, false, False, FALSE]",
         "[false,false,false,false,false,false,false,false,false,false,"
         "false]"},
        /* Not in resolveMap: text. */
        {"[yES, oN, nO, tRUE, 'yes', \"on\", Yes please]",
         "[\"yES\",\"oN\",\"nO\",\"tRUE\",\"yes\",\"on\",\"Yes please\"]"},
        /* Explicit tags win over the text; "!" and unknown tags: text. */
        {"[!!str yes, !!str 8, !!str ~, !!bool yes, !!bool 'true', !!int '12',"
         " !!float '8', !!null '', ! 12, !custom 12]",
         "[\"yes\",\"8\",\"~\",true,true,12,8,null,\"12\",\"12\"]"},
        /* ParseInt(s, 0, 64): octal with a leading 0, 0o, 0x, signs. */
        {"[0777, 0o17, 0x1F, -0x1F, +12, 0, -0, 1_000]",
         "[511,15,31,-31,12,0,0,1000]"},
        /* Not an octal, so yamlStyleFloat: 8. Out of float range: text. */
        {"[08, 1e999, .5e999, 1e-400]", "[8,\"1e999\",\".5e999\",0]"},
        /* Above int64 but within uint64, then a float. */
        {"[18446744073709551615, 18446744073709551616]",
         "[18446744073709551615,18446744073709551616]"},
        /* Keys as sigs.k8s.io/yaml names them. */
        {"{yes: a, off: b, 0x10: c, 1.5: d, 2015-01-01: e}",
         "{\"true\":\"a\",\"false\":\"b\",\"16\":\"c\",\"1.5\":\"d\","
         "\"2015-01-01\":\"e\"}"},
        {"{0.1: a, 1.0e6: b, 0.00001: c}",
         "{\"0.1\":\"a\",\"1e+06\":\"b\",\"1e-05\":\"c\"}"},
        /* A merge sets its members over the keys before it (go-yaml v2
         * decode.go: merge() unmarshals into the same map); keys after
         * it win. */
        {"{a: 1, <<: {a: 2, b: 3}, b: 4}", "{\"a\":2,\"b\":4}"},
        /* A timestamp with a time and a zone, tagged: still its text. */
        {"!!timestamp 2001-12-14t21:59:43.10-05:00",
         "\"2001-12-14t21:59:43.10-05:00\""},
    };
    static const char *const bad[][2] = {
        {"a: !!int yes", "cannot decode !!bool `yes` as a !!int"},
        {"a: !!int 1.5", "cannot decode !!float `1.5` as a !!int"},
        {"a: !!bool 1", "cannot decode !!int `1` as a !!bool"},
        {"a: !!null x", "cannot decode !!str `x` as a !!null"},
        {"a: !!timestamp 2015-02-30", "as a !!timestamp"},
        {"a: .nan", "JSON cannot hold (NaN)"},
        {"18446744073709551615: a", "above int64"},
        {"{yes: a, true: b}", "duplicate key 'true'"},
    };

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        row(ok[i][0], ok[i][1], NULL, "resolve.go rules");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        row(bad[i][0], NULL, bad[i][1], "resolve.go rules");
}

/* "\0" in double quotes: the whole text, NUL as its stand-in. */
static void
test_nul(void)
{
    char msg[300];
    cJSON *got = read_yaml("a: \"x\\0y\"\n\"k\\0\": 1\n", msg, sizeof(msg));
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(got, "a");

    CHECK(cJSON_IsString(a));
    CHECK_STR(cJSON_GetStringValue(a), "x\xffy");
    CHECK(cJSON_GetObjectItemCaseSensitive(got, "k\xff") != NULL);
    CHECK((unsigned char)UTF8_NUL_STANDIN == 0xff);
    cJSON_Delete(got);
}

int
main(void)
{
    test_upstream_tables();
    test_rules();
    test_nul();
    CHECK_DONE();
}
