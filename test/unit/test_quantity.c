/* Quantities as Kubernetes spells them, and counts of devices. */
#include "policy/quantity.h"
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

int
main(void)
{
    long n = -1;

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
    CHECK_DONE();
}
