/* Quantities as Kubernetes spells them, and counts of devices. */
#include <stdio.h>
#include <stdlib.h>

#include "policy/k8s/pod.h"
#include "policy/k8s/quantity.h"
#include "test/unit/check.h"

static double
q(const char *s)
{
    double v = -1;
    CHECK_INT(quantity_parse(s, &v), 0);
    return v;
}

static int
count(const char *json, long *out)
{
    cJSON *v = cJSON_Parse(json);
    int rc = quantity_count(v, out);
    cJSON_Delete(v);
    return rc;
}

/*
 * pod_quantity() on one container's resources, as JSON; pod_count() and
 * pod_resource() must say the same of them.
 */
static enum count_status
container_count(const char *resources, long *out, const char **null_map)
{
    char json[512];
    cJSON *c;
    struct pod_quantity q;
    long n = -1;

    snprintf(json, sizeof(json), "{\"name\":\"c\",\"resources\":%s}",
             resources);
    c = cJSON_Parse(json);
    q = pod_quantity(c, "nvidia.com/gpu");
    CHECK_INT(pod_count(c, "nvidia.com/gpu", &n), q.status);
    CHECK_INT(n, q.count);
    CHECK(pod_resource(c, "nvidia.com/gpu") == q.value);
    *out = q.count;
    *null_map = q.null_map;
    cJSON_Delete(c);
    return q.status;
}

/*
 * Random numbers ([+-], 1-20 digits, leading zeros, a fraction) with and
 * without a suffix: the value is strtod()'s of the number times the
 * suffix's factor, bit for bit, whichever way quantity_parse() read it.
 */
static void
test_numbers_random(void)
{
    static const char *const suffixes[] = {"", "", "", "Ki", "Gi", "m", "k"};
    unsigned int seed = 9;
    unsigned long bad = 0;

    for (int round = 0; round < 20000; round++) {
        char num[64], text[80];
        int len = 0, digits = 1 + rand_r(&seed) % 20;
        const char *suffix = suffixes[rand_r(&seed) % 7];
        double got = -1, unit = 1;

        if (rand_r(&seed) % 8 == 0)
            num[len++] = "+-"[rand_r(&seed) % 2];
        for (int i = 0; i < digits; i++)
            num[len++] = (char)('0' + (i == 0 && rand_r(&seed) % 3 == 0
                                           ? 0
                                           : rand_r(&seed) % 10));
        if (rand_r(&seed) % 6 == 0) {
            num[len++] = '.';
            num[len++] = (char)('0' + rand_r(&seed) % 10);
        }
        num[len] = '\0';
        snprintf(text, sizeof(text), "%s%s", num, suffix);
        if (suffix[0] != '\0')
            unit = q(suffix[0] == 'K'   ? "1Ki"
                     : suffix[0] == 'G' ? "1Gi"
                     : suffix[0] == 'm' ? "1m"
                                        : "1k");
        if (quantity_parse(text, &got) != 0 || got != strtod(num, NULL) * unit) {
            if (bad++ < 5)
                fprintf(stderr, "%s: %.17g\n", text, got);
        }
    }
    CHECK_INT(bad, 0);
}

int
main(void)
{
    long n = -1;

    test_numbers_random();
    CHECK(q("64Gi") == 64.0 * 1024 * 1024 * 1024);
    CHECK(q("22888Mi") == 22888.0 * 1024 * 1024);
    CHECK(q("1.5") == 1.5);
    CHECK(q("500m") == 0.5);
    CHECK(q("1e3") == 1000.0);
    CHECK(q("2k") == 2000.0);
    CHECK(q("8") == 8.0);
    double v;
    CHECK_INT(quantity_parse("", &v), -1);
    CHECK_INT(quantity_parse("Gi", &v), -1);
    CHECK_INT(quantity_parse("$GPU_PER_NODE", &v), -1);
    CHECK_INT(quantity_parse("8 ", &v), -1);
    CHECK_INT(quantity_parse("8gi", &v), -1);

    CHECK_INT(count("8", &n), 0);
    CHECK_INT(n, 8);
    CHECK_INT(count("\"16\"", &n), 0);
    CHECK_INT(n, 16);
    CHECK_INT(count("\"0\"", &n), 0);
    CHECK_INT(n, 0);
    CHECK_INT(count("\"1000m\"", &n), 0);
    CHECK_INT(n, 1);
    CHECK_INT(count("\"1.5\"", &n), -1);
    CHECK_INT(count("\"-1\"", &n), -1);
    CHECK_INT(count("true", &n), -1);
    CHECK_INT(count("\"${GPU_PER_WORKER}\"", &n), -1);
    CHECK_INT(count("1e9", &n), -1);

    /* YAML "nvidia.com/gpu:" with no value: a null, read as absent. */
    const char *null_map;
    CHECK_INT(container_count("{\"limits\":{\"nvidia.com/gpu\":null},"
                              "\"requests\":{\"nvidia.com/gpu\":\"8\"}}",
                              &n, &null_map),
              COUNT_OK);
    CHECK_INT(n, 8);
    CHECK_STR(null_map, "limits");
    CHECK_INT(container_count("{\"limits\":{\"nvidia.com/gpu\":null}}", &n,
                              &null_map),
              COUNT_ABSENT);
    CHECK_STR(null_map, "limits");
    CHECK_INT(container_count("{\"limits\":{\"nvidia.com/gpu\":4},"
                              "\"requests\":{\"nvidia.com/gpu\":null}}",
                              &n, &null_map),
              COUNT_OK);
    CHECK_INT(n, 4);
    CHECK_STR(null_map, "requests");
    CHECK_INT(container_count("{\"limits\":{\"nvidia.com/gpu\":\"2\"}}",
                              &n, &null_map),
              COUNT_OK);
    CHECK(null_map == NULL);
    CHECK_INT(container_count("{\"requests\":{\"nvidia.com/gpu\":null}}", &n,
                              &null_map),
              COUNT_ABSENT);
    CHECK_STR(null_map, "requests");
    CHECK_INT(container_count("{\"limits\":{\"nvidia.com/gpu\":\"1.5\"},"
                              "\"requests\":{\"nvidia.com/gpu\":null}}",
                              &n, &null_map),
              COUNT_INVALID);
    CHECK_INT(n, 0);
    CHECK_STR(null_map, "requests");
    CHECK_INT(container_count("{}", &n, &null_map), COUNT_ABSENT);
    CHECK(null_map == NULL);

    /* apimachinery's Quantity.UnmarshalJSON trims white space first. */
    CHECK_INT(count("\" 8\"", &n), 0);
    CHECK_INT(n, 8);
    CHECK_INT(count("\"4\\t\"", &n), 0);
    CHECK_INT(n, 4);
    /* What is wrong with a count, said as it is. */
    {
        static const struct {
            const char *json, *problem;
        } problems[] = {
            {"\"-1\"", "is negative"},
            {"-2", "is negative"},
            {"\"1e6\"", "is too large (1,000,000 or more)"},
            {"\"1.5\"", "is not a whole number"},
            {"\"500m\"", "is not a whole number"},
            {"\"$GPUS\"", "is not a quantity"},
            {"true", "is not a quantity"},
            {"\"8\"", NULL},
            {"\"1e3\"", NULL},
        };
        for (size_t i = 0; i < sizeof(problems) / sizeof(*problems); i++) {
            cJSON *item = cJSON_Parse(problems[i].json);
            const char *got = quantity_count_problem(item);
            if (problems[i].problem)
                CHECK_STR(got, problems[i].problem);
            else
                CHECK(got == NULL);
            cJSON_Delete(item);
        }
    }
    CHECK_DONE();
}
