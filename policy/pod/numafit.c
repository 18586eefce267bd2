/*
 * numafit.c - see numafit.h.
 *
 * How kubelet decides (docs/facts/topology-manager.md#how-kubelet-admits),
 * from kubernetes/kubernetes pkg/kubelet/cm/
 * (topologymanager/policy.go mergePermutation and HintMerger;
 * policy_restricted.go and policy_single_numa_node.go canAdmitPodResult;
 * devicemanager/topology_hints.go generateDeviceTopologyHints;
 * cpumanager/policy_static.go generateCPUTopologyHints and
 * guaranteedCPUs; topologymanager/scope_container.go, scope_pod.go):
 * - Each hint provider offers NUMA masks that can hold the request; a
 *   mask is preferred when it has as few NUMA nodes as any mask that
 *   holds the request among all the node's devices (or CPUs). The
 *   device manager offers hints for devices whose plugin reports
 *   topology (NFD then lists them per zone); the static CPU manager only
 *   for containers of Guaranteed pods that ask for whole CPUs.
 * - A merged hint is preferred only when every provider's hint is and
 *   all their masks are equal. restricted and single-numa-node admit a
 *   preferred merged hint only; single-numa-node also keeps only hints
 *   of one NUMA node. So: single-numa-node refuses GPUs (or exclusive
 *   CPUs) that no one NUMA node holds; restricted refuses GPUs and
 *   exclusive CPUs that need different numbers of NUMA nodes.
 * - Scope container judges each container on its own; scope pod the
 *   pod's sum (init containers run first: the larger of the two).
 * A refusal happens at the node, after scheduling: the pod fails with
 * TopologyAffinityError. The static CPU manager is not in the
 * NodeResourceTopology, so what rests on it is said as "may".
 */
#include "policy/pod/numafit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "policy/decision.h" /* WARNING_MAX */
#include "policy/k8s/pod.h"
#include "policy/k8s/quantity.h"

/* The fewest NUMA nodes (zones most first) that hold n; 0 when n is 0,
 * -1 when all of them together hold fewer (the scheduler's concern, and
 * no mask of kubelet's). */
static int
zones_for(const long *per_zone, int zones, long n)
{
    long sum = 0;

    if (n <= 0)
        return 0;
    for (int i = 0; i < zones; i++)
        if ((sum += per_zone[i]) >= n)
            return i + 1;
    return -1;
}

/* Whether the zones say anything of this resource. */
static bool
listed(const long *per_zone, int zones)
{
    return zones > 0 && per_zone[0] > 0;
}

/* One unit kubelet aligns: a container, or the whole pod. */
struct unit {
    const char *name; /* the container's, or NULL for the pod */
    long gpus;
    long cpus; /* exclusive: a Guaranteed pod's whole CPUs, else 0 */
};

/* A CPU or memory quantity of a map, or -1 when absent or unreadable. */
static double
quantity_of(const cJSON *map, const char *key)
{
    double q;

    return quantity_json(json_get(map, key), &q) == 0 ? q : -1;
}

/*
 * Guaranteed QoS: every container has CPU and memory limits, and its
 * requests (defaulted to the limits) equal them (k8s.io/kubernetes
 * pkg/apis/core/helper/qos GetPodQOS).
 */
static bool
container_guaranteed(const cJSON *c)
{
    static const char *const keys[] = {"cpu", "memory"};
    const cJSON *res = json_get(c, "resources");

    for (size_t i = 0; i < 2; i++) {
        double lim = quantity_of(json_get(res, "limits"), keys[i]);
        double req = quantity_of(json_get(res, "requests"), keys[i]);
        if (lim <= 0 || (req >= 0 && req != lim))
            return false;
    }
    return true;
}

static bool
pod_guaranteed(const cJSON *spec)
{
    static const char *const lists[] = {"initContainers", "containers"};
    const cJSON *c;

    for (size_t i = 0; i < 2; i++)
        cJSON_ArrayForEach(c, json_get(spec, lists[i]))
        {
            if (!container_guaranteed(c))
                return false;
        }
    return cJSON_GetArraySize(json_get(spec, "containers")) > 0;
}

/* A container's exclusive CPUs: whole CPU limits of a Guaranteed pod. */
static long
exclusive_cpus(const cJSON *c, bool guaranteed)
{
    double q = quantity_of(json_get(json_get(c, "resources"), "limits"), "cpu");

    return guaranteed && q >= 1 && q == floor(q) && q < 1e6 ? (long)q : 0;
}

static long
gpus_of(const cJSON *c)
{
    long n = 0;

    return pod_count(c, RESOURCE_GPU, &n) == COUNT_OK ? n : 0;
}

struct said {
    numafit_say *say;
    void *arg;
    const struct node_kind *k;
    const char *type;
};

/* The whole CPUs that need exactly zones NUMA nodes: lo to hi. */
static void
cpus_for(const struct node_numa *n, int zones, long *lo, long *hi)
{
    *lo = 1;
    *hi = 0;
    for (int i = 0; i < zones && i < n->zones; i++) {
        *lo = *hi + 1;
        *hi += n->cpus[i];
    }
}

static int
say_unit(const struct said *s, const struct unit *u)
{
    const struct node_numa *n = &s->k->numa;
    int g = listed(n->gpus, n->zones) ? zones_for(n->gpus, n->zones, u->gpus)
                                      : 0;
    int c = listed(n->cpus, n->zones) ? zones_for(n->cpus, n->zones, u->cpus)
                                      : 0;
    char who[80], line[2 * WARNING_MAX];
    long lo, hi;
    int rc;

    if (u->name)
        snprintf(who, sizeof(who), "container '%.63s'", u->name);
    else
        snprintf(who, sizeof(who), "the pod");
    if (n->policy == NUMA_SINGLE_NODE && (g > 1 || c > 1)) {
        snprintf(line, sizeof(line),
                 "%s: kubelet's Topology Manager is single-numa-node; one "
                 "NUMA node holds %ld %s, %s asks for %ld",
                 s->type, g > 1 ? n->gpus[0] : n->cpus[0],
                 g > 1 ? "GPUs" : "CPUs", who, g > 1 ? u->gpus : u->cpus);
        if ((rc = s->say(s->arg, line)) != 0)
            return rc;
        if (g > 1)
            snprintf(line, sizeof(line),
                     "kubelet fails such a pod with TopologyAffinityError: "
                     "ask for at most %ld GPUs a pod, or use other nodes",
                     n->gpus[0]);
        else
            snprintf(line, sizeof(line),
                     "with the static CPU manager kubelet fails it with "
                     "TopologyAffinityError: ask for at most %ld CPUs",
                     n->cpus[0]);
        return s->say(s->arg, line);
    }
    if (n->policy == NUMA_RESTRICTED && g > 0 && c > 0 && g != c) {
        snprintf(line, sizeof(line),
                 "%s: kubelet's Topology Manager is restricted; %s has %ld "
                 "GPUs (%d NUMA node%s) and %ld whole CPUs (%d)",
                 s->type, who, u->gpus, g, g == 1 ? "" : "s", u->cpus, c);
        if ((rc = s->say(s->arg, line)) != 0)
            return rc;
        cpus_for(n, g, &lo, &hi);
        snprintf(line, sizeof(line),
                 "with the static CPU manager kubelet fails it with "
                 "TopologyAffinityError: ask for %ld-%ld CPUs, or a count "
                 "not whole",
                 lo, hi);
        return s->say(s->arg, line);
    }
    return 0;
}

int
numafit_pod(const struct node_kind *k, const char *type, const cJSON *pod,
            long extra_gpus, numafit_say *say, void *arg)
{
    const cJSON *spec = json_get(pod, "spec"), *c;
    const cJSON *containers = json_get(spec, "containers");
    bool guaranteed = pod_guaranteed(spec);
    struct said s = {say, arg, k, type};
    struct unit pod_sum = {NULL, 0, 0}, init_max = {NULL, 0, 0}, biggest = {0};
    int rc;

    if (k->numa.policy != NUMA_RESTRICTED &&
        k->numa.policy != NUMA_SINGLE_NODE)
        return 0;
    cJSON_ArrayForEach(c, json_get(spec, "initContainers"))
    {
        struct unit u = {json_string(c, "name"), gpus_of(c),
                         exclusive_cpus(c, guaranteed)};
        if (!k->numa.pod_scope && (rc = say_unit(&s, &u)) != 0)
            return rc;
        if (u.gpus > init_max.gpus)
            init_max.gpus = u.gpus;
        if (u.cpus > init_max.cpus)
            init_max.cpus = u.cpus;
    }
    /* topogate's extra GPUs go to the container holding the most. */
    cJSON_ArrayForEach(c, containers)
    {
        struct unit u = {json_string(c, "name"), gpus_of(c),
                         exclusive_cpus(c, guaranteed)};
        if (biggest.name == NULL || u.gpus > biggest.gpus)
            biggest = u;
        pod_sum.gpus += u.gpus;
        pod_sum.cpus += u.cpus;
    }
    pod_sum.gpus += extra_gpus;
    if (k->numa.pod_scope) {
        if (init_max.gpus > pod_sum.gpus)
            pod_sum.gpus = init_max.gpus;
        if (init_max.cpus > pod_sum.cpus)
            pod_sum.cpus = init_max.cpus;
        return say_unit(&s, &pod_sum);
    }
    cJSON_ArrayForEach(c, containers)
    {
        struct unit u = {json_string(c, "name"), gpus_of(c),
                         exclusive_cpus(c, guaranteed)};
        if (biggest.name && u.name && strcmp(u.name, biggest.name) == 0)
            u.gpus += extra_gpus;
        if ((rc = say_unit(&s, &u)) != 0)
            return rc;
    }
    return 0;
}
