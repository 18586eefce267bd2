/*
 * quantity_parse() and quantity_json() against apimachinery's own tables
 * (test/unit/cases/quantity-apimachinery.json, copied from
 * pkg/api/resource/quantity_test.go with its commit): every input it
 * parses gives its value here too, with a leading '-' and '+' as well;
 * every input it refuses is refused; JSON strings are trimmed first.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "policy/k8s/quantity.h"
#include "test/unit/check.h"

#define CASES "test/unit/cases/quantity-apimachinery.json"

/* apimachinery rounds up to 1n; a double is exact to about 1e-16. */
static bool
agrees(double got, double want)
{
    double gap = fabs(got - want);
    return gap <= 1e-9 || gap <= 1e-12 * fabs(want);
}

static void
parse_signed(const char *sign, const char *in, double want)
{
    char buf[64];
    double got = NAN;

    snprintf(buf, sizeof(buf), "%s%s", sign, in);
    if (quantity_parse(buf, &got) != 0 || !agrees(got, want))
        fprintf(stderr, "quantity '%s': want %g, got %g\n", buf, want, got);
    CHECK(quantity_parse(buf, &got) == 0 && agrees(got, want));
}

static void
test_parse(const cJSON *rows)
{
    const cJSON *r;

    CHECK(cJSON_GetArraySize(rows) > 80);
    cJSON_ArrayForEach(r, rows)
    {
        const char *in = cJSON_GetStringValue(cJSON_GetObjectItem(r, "in"));
        double want = cJSON_GetObjectItem(r, "i")->valuedouble *
                      pow(10, cJSON_GetObjectItem(r, "exp")->valuedouble);

        parse_signed("", in, want);
        parse_signed("-", in, -want);
        parse_signed("+", in, want);
    }
}

/* Past int64: apimachinery saturates at 2^63-1; no count is that big. */
static void
test_saturated(const cJSON *rows)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, rows)
    {
        double got = 0;
        CHECK_INT(quantity_parse(r->valuestring, &got), 0);
        CHECK(got >= 9223372036854775807.0);
    }
}

static void
test_invalid(const cJSON *rows)
{
    const cJSON *r;

    CHECK(cJSON_GetArraySize(rows) >= 11);
    cJSON_ArrayForEach(r, rows)
    {
        double got;
        if (quantity_parse(r->valuestring, &got) == 0)
            fprintf(stderr, "quantity '%s' parsed, upstream refuses it\n",
                    r->valuestring);
        CHECK(quantity_parse(r->valuestring, &got) != 0);
    }
}

/* Quantity.UnmarshalJSON: " 1" and "1 " are 1, as are bare numbers. */
static void
test_json_whitespace(const cJSON *rows)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, rows)
    {
        cJSON *v = cJSON_Parse(
            cJSON_GetStringValue(cJSON_GetObjectItem(r, "json")));
        double got = NAN, want = cJSON_GetObjectItem(r, "value")->valuedouble;

        CHECK(v != NULL);
        CHECK(quantity_json(v, &got) == 0 && got == want);
        cJSON_Delete(v);
    }
}

int
main(void)
{
    FILE *f = fopen(CASES, "rb");
    static char text[1 << 16];
    size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    cJSON *doc;

    if (f)
        fclose(f);
    text[len] = '\0';
    doc = cJSON_Parse(text);
    CHECK(doc != NULL);
    test_parse(cJSON_GetObjectItem(doc, "parse"));
    test_saturated(cJSON_GetObjectItem(doc, "saturated"));
    test_invalid(cJSON_GetObjectItem(doc, "invalid"));
    test_json_whitespace(cJSON_GetObjectItem(doc, "json_whitespace"));
    cJSON_Delete(doc);
    CHECK_DONE();
}
