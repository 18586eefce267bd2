/*
 * viewnuma.c - see viewnuma.h.
 *
 * The facts, by source (docs/facts/topology-manager.md#where-the-policy-shows):
 * - NodeResourceTopology v1alpha2 has top-level "attributes" (name,
 *   value pairs), "zones" (name, type, resources: name, capacity,
 *   allocatable, available) and the deprecated "topologyPolicies";
 *   v1alpha1 has only the last two (k8stopologyawareschedwg/
 *   noderesourcetopology-api 7f99f9c2 pkg/apis/topology/v1alpha2/
 *   types.go, v1alpha1/types.go; manifests/crd-instance-example.yaml). An
 *   attribute named twice counts the first time (helper/attribute Get).
 * - NFD's topology updater writes the attributes topologyManagerPolicy
 *   and topologyManagerScope from the kubelet's configuration, names the
 *   object after the node and gives each NUMA node a zone of type "Node"
 *   (kubernetes-sigs/node-feature-discovery 76e6cc8c
 *   pkg/nfd-topology-updater/nfd-topology-updater.go
 *   createTopologyAttributes; pkg/topologypolicy/topology-policy.go maps
 *   policy and scope into the deprecated list: SingleNUMANodePodLevel,
 *   RestrictedContainerLevel, ... and None for "none" or anything else).
 * - A zone's capacity is what kubelet counts when it works out the
 *   fewest NUMA nodes a request fits in; available moves with every pod,
 *   so the facts keep capacity alone (allocatable where capacity is
 *   missing) and the kind does not change as pods come and go.
 */
#include "policy/view/viewnuma.h"

#include <stdlib.h>
#include <string.h>

#include "policy/k8s/pod.h"
#include "policy/k8s/quantity.h"

static const char *const policy_names[] = {
    [NUMA_NOT_SAID] = "",
    [NUMA_NONE] = "none",
    [NUMA_BEST_EFFORT] = "best-effort",
    [NUMA_RESTRICTED] = "restricted",
    [NUMA_SINGLE_NODE] = "single-numa-node",
};

const char *
viewnuma_policy_name(enum numa_policy p)
{
    return policy_names[p];
}

static enum numa_policy
policy_of(const char *s)
{
    for (size_t i = NUMA_NONE; s && i <= NUMA_SINGLE_NODE; i++)
        if (strcmp(s, policy_names[i]) == 0)
            return (enum numa_policy)i;
    return NUMA_NOT_SAID;
}

/* The first attribute of that name in a list, or NULL. */
static const char *
attribute(const cJSON *list, const char *name)
{
    const cJSON *a;

    cJSON_ArrayForEach(a, list)
    {
        const char *n = json_string(a, "name");
        if (n && strcmp(n, name) == 0)
            return json_string(a, "value");
    }
    return NULL;
}

/*
 * The deprecated list's first entry, as policy and scope: the names NFD
 * writes, and the bare "SingleNUMANode" of the API's own example.
 */
static void
deprecated_policy(const cJSON *list, enum numa_policy *p, bool *pod_scope)
{
    static const struct {
        const char *prefix;
        enum numa_policy policy;
    } rows[] = {
        {"SingleNUMANode", NUMA_SINGLE_NODE},
        {"Restricted", NUMA_RESTRICTED},
        {"BestEffort", NUMA_BEST_EFFORT},
        {"None", NUMA_NONE},
    };
    const cJSON *first = cJSON_GetArrayItem(list, 0);
    const char *s = cJSON_IsString(first) ? first->valuestring : NULL;

    for (size_t i = 0; s && i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t n = strlen(rows[i].prefix);
        if (strncmp(s, rows[i].prefix, n) != 0)
            continue;
        *p = rows[i].policy;
        *pod_scope = strcmp(s + n, "PodLevel") == 0;
        return;
    }
}

/* A zone's count of one resource, whole, or 0. */
static long
zone_count(const cJSON *zone, const char *resource)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, json_get(zone, "resources"))
    {
        const char *n = json_string(r, "name");
        const cJSON *v = json_get(r, "capacity");
        double q;

        if (n == NULL || strcmp(n, resource) != 0)
            continue;
        if (v == NULL)
            v = json_get(r, "allocatable");
        return quantity_json(v, &q) == 0 && q >= 1 && q < 1e9 ? (long)q : 0;
    }
    return 0;
}

static int
count_desc(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;

    return (x < y) - (x > y);
}

/* Each NUMA zone's GPUs and CPUs into out, most first; none past
 * NUMA_ZONES_MAX zones (more than kubelet takes). */
static void
zones_read(const cJSON *zones, struct node_numa *out)
{
    const cJSON *z;
    int n = 0;

    cJSON_ArrayForEach(z, zones)
    {
        const char *type = json_string(z, "type");
        if (type == NULL || strcmp(type, "Node") != 0)
            continue;
        if (n == NUMA_ZONES_MAX) {
            n = 0;
            break;
        }
        out->gpus[n] = zone_count(z, RESOURCE_GPU);
        out->cpus[n++] = zone_count(z, "cpu");
    }
    qsort(out->gpus, (size_t)n, sizeof(long), count_desc);
    qsort(out->cpus, (size_t)n, sizeof(long), count_desc);
    for (int i = n; i < NUMA_ZONES_MAX; i++)
        out->gpus[i] = out->cpus[i] = 0;
    out->zones = n;
}

const char *
viewnuma_read(const cJSON *nrt, struct node_numa *out)
{
    const char *node = json_string(json_get(nrt, "metadata"), "name");
    const cJSON *attrs = json_get(nrt, "attributes");
    const char *scope = attribute(attrs, "topologyManagerScope");

    memset(out, 0, sizeof(*out));
    out->policy = policy_of(attribute(attrs, "topologyManagerPolicy"));
    out->pod_scope = scope && strcmp(scope, "pod") == 0;
    if (out->policy == NUMA_NOT_SAID)
        deprecated_policy(json_get(nrt, "topologyPolicies"), &out->policy,
                          &out->pod_scope);
    zones_read(json_get(nrt, "zones"), out);
    return node;
}

bool
viewnuma_equal(const struct node_numa *a, const struct node_numa *b)
{
    if (a->policy != b->policy || a->pod_scope != b->pod_scope ||
        a->zones != b->zones)
        return false;
    for (int i = 0; i < a->zones; i++)
        if (a->gpus[i] != b->gpus[i] || a->cpus[i] != b->cpus[i])
            return false;
    return true;
}
