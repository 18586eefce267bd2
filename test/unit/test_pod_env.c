/*
 * pod_env(): an env entry is found by its name whether "name" is its
 * first member (as the apiserver writes it) or not (as a person may).
 */
#include "policy/pod.h"
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

int
main(void)
{
    test_env();
    CHECK_DONE();
}
