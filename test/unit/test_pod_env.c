/*
 * pod_env(): an env entry is found by its name whether "name" is its
 * first member (as the apiserver writes it) or not (as a person may).
 * pod_env_all(): the same entries as pod_env() name by name, in one pass.
 * pod_text_count(): a count as env values write one, and nothing else.
 */
#include "policy/k8s/pod.h"
#include "test/unit/check.h"

static void
test_env(void)
{
    cJSON *c = cJSON_Parse(
        "{\"name\":\"trainer\",\"env\":["
        "{\"name\":\"NCCL_DEBUG\",\"value\":\"INFO\"},"
        "{\"value\":\"efa\",\"name\":\"FI_PROVIDER\"},"
        "{\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}},"
        "\"name\":\"POD\"},"
        "{\"name\":null,\"value\":\"x\"},"
        "{\"nam\":\"SHORT\",\"value\":\"1\"},"
        "{\"names\":\"LONG\",\"value\":\"2\"},"
        "{\"name\":\"NCCL_DEBUG_SUBSYS\",\"value\":\"ALL\"}]}");

    CHECK(c != NULL);
    CHECK_STR(pod_env_value(c, "NCCL_DEBUG"), "INFO");
    CHECK_STR(pod_env_value(c, "FI_PROVIDER"), "efa");
    CHECK(pod_env(c, "POD") != NULL);
    CHECK(pod_env_value(c, "POD") == NULL); /* valueFrom: no value */
    CHECK_STR(pod_env_value(c, "NCCL_DEBUG_SUBSYS"), "ALL");
    CHECK(pod_env(c, "SHORT") == NULL);
    CHECK(pod_env(c, "LONG") == NULL);
    CHECK(pod_env(c, "NCCL") == NULL);
    CHECK(pod_env(c, "") == NULL);
    CHECK(pod_env(c, NULL) == NULL);
    cJSON_Delete(c);
    /* No env at all. */
    c = cJSON_Parse("{\"name\":\"x\"}");
    CHECK(pod_env(c, "A") == NULL);
    cJSON_Delete(c);
}

/* Names twice (the first entry counts), folded first bytes that meet
 * ('!' and 'a' are both 33 in 64), "name" not first, a NULL name, no
 * name at all, an empty one. */
static const char env_many[] =
    "{\"env\":["
    "{\"name\":\"NCCL_DEBUG\",\"value\":\"INFO\"},"
    "{\"value\":\"efa\",\"name\":\"FI_PROVIDER\"},"
    "{\"name\":\"a1\",\"value\":\"x\"},"
    "{\"name\":null,\"value\":\"y\"},"
    "{\"value\":\"z\"},"
    "{\"name\":\"NCCL_DEBUG\",\"value\":\"WARN\"},"
    "{\"name\":\"NCCL_DEBUG_SUBSYS\",\"value\":\"ALL\"},"
    "{\"name\":\"\",\"value\":\"empty\"}]}";

static void
test_env_all(void)
{
    cJSON *c = cJSON_Parse(env_many);
    static const char *const names[] = {
        "NCCL_DEBUG", "FI_PROVIDER", "!1", "a1", NULL, "NCCL_DEBUG",
        "NCCL_DEBUG_SUBSYS", "NCCL", "", "FI_EFA_USE_DEVICE_RDMA",
    };
    const size_t n = sizeof(names) / sizeof(names[0]);
    const cJSON *found[sizeof(names) / sizeof(names[0])];
    cJSON *none = cJSON_Parse("{\"name\":\"x\"}");

    CHECK(c != NULL);
    pod_env_all(c, names, n, found);
    for (size_t k = 0; k < n; k++) {
        if (found[k] != pod_env(c, names[k]))
            fprintf(stderr, "pod_env_all: '%s' not pod_env()'s entry\n",
                    names[k] ? names[k] : "(null)");
        CHECK(found[k] == pod_env(c, names[k]));
    }
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(found[0], "value")),
              "INFO");
    CHECK(found[2] == NULL && found[3] != NULL && found[4] == NULL);
    CHECK(found[8] != NULL); /* an empty name is a name */
    /* No env; no names. */
    pod_env_all(none, names, n, found);
    for (size_t k = 0; k < n; k++)
        CHECK(found[k] == NULL);
    pod_env_all(c, names, 0, found);
    cJSON_Delete(none);
    cJSON_Delete(c);
}

static void
test_text_count(void)
{
    static const struct {
        const char *text;
        long want;
    } cases[] = {
        {"8", 8},        {"1", 1},          {"00012", 12},
        {"999999", 999999}, {"0", -1},      {"1000000", -1},
        {"99999999999999999999999", -1},    {"+8", -1},
        {"-8", -1},      {" 8", -1},        {"8 ", -1},
        {"8x", -1},      {"1:4", -1},       {"auto", -1},
        {"", -1},        {"8\n", -1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK_INT(pod_text_count(cases[i].text), cases[i].want);
    CHECK_INT(pod_text_count(NULL), -1);
}

int
main(void)
{
    test_env();
    test_env_all();
    test_text_count();
    CHECK_DONE();
}
