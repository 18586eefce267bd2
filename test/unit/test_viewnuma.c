/*
 * What the view reads of NodeResourceTopology objects
 * (policy/view/viewnuma.h) and what numafit.h makes of it: the objects of
 * NFD's and the API's own documents, the v1alpha2 attributes before the
 * deprecated list, zones most first; the map that holds them by node;
 * the index keeping one kind while only a zone's "available" moves; and
 * kubelet's admission of pods by policy, scope and QoS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/pod/numafit.h"
#include "policy/view/namemap.h"
#include "policy/view/view.h"
#include "policy/view/viewnuma.h"
#include "test/unit/check.h"

/*
 * kubernetes-sigs/node-feature-discovery 76e6cc8c
 * docs/usage/custom-resources.md, as JSON: three NUMA zones, CPUs and
 * two vendor NICs, no GPU.
 */
static const char nfd_doc[] =
    "{\"apiVersion\":\"topology.node.k8s.io/v1alpha1\","
    "\"kind\":\"NodeResourceTopology\",\"metadata\":{\"name\":\"node1\"},"
    "\"topologyPolicies\":[\"SingleNUMANodeContainerLevel\"],\"zones\":["
    "{\"name\":\"node-0\",\"type\":\"Node\",\"resources\":["
    "{\"name\":\"cpu\",\"capacity\":20,\"allocatable\":16,\"available\":10},"
    "{\"name\":\"vendor/nic1\",\"capacity\":3,\"allocatable\":3,"
    "\"available\":3}]},"
    "{\"name\":\"node-1\",\"type\":\"Node\",\"resources\":["
    "{\"name\":\"cpu\",\"capacity\":30,\"allocatable\":30,\"available\":15},"
    "{\"name\":\"vendor/nic2\",\"capacity\":6,\"allocatable\":6,"
    "\"available\":6}]},"
    "{\"name\":\"node-2\",\"type\":\"Node\",\"resources\":["
    "{\"name\":\"cpu\",\"capacity\":30,\"allocatable\":30,\"available\":15},"
    "{\"name\":\"vendor/nic1\",\"capacity\":3,\"allocatable\":3,"
    "\"available\":3}]}]}";

/* A two-NUMA-node GPU host as NFD's topology updater writes it
 * (v1alpha2), with policy, scope and available counts to choose. */
static cJSON *
nrt(const char *node, const char *policy, const char *scope,
    const char *deprecated, int gpu_available)
{
    char text[2048];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"topology.node.k8s.io/v1alpha2\","
             "\"kind\":\"NodeResourceTopology\",\"metadata\":{\"name\":\"%s\"},"
             "\"attributes\":[{\"name\":\"topologyManagerPolicy\","
             "\"value\":\"%s\"},{\"name\":\"topologyManagerScope\","
             "\"value\":\"%s\"},{\"name\":\"topologyManagerPolicy\","
             "\"value\":\"none\"},{\"name\":\"nodeTopologyPodsFingerprint\","
             "\"value\":\"pfp0v00%d\"}],"
             "\"topologyPolicies\":[\"%s\"],\"zones\":["
             "{\"name\":\"node-0\",\"type\":\"Node\",\"resources\":["
             "{\"name\":\"cpu\",\"capacity\":\"48\",\"allocatable\":\"47\","
             "\"available\":\"40\"},{\"name\":\"nvidia.com/gpu\","
             "\"capacity\":\"4\",\"allocatable\":\"4\",\"available\":\"%d\"}]},"
             "{\"name\":\"node-1\",\"type\":\"Node\",\"resources\":["
             "{\"name\":\"cpu\",\"capacity\":\"48\",\"allocatable\":\"48\","
             "\"available\":\"48\"},{\"name\":\"nvidia.com/gpu\","
             "\"capacity\":\"4\",\"allocatable\":\"4\",\"available\":\"4\"}]},"
             "{\"name\":\"socket-0\",\"type\":\"Socket\",\"resources\":["
             "{\"name\":\"nvidia.com/gpu\",\"capacity\":\"16\"}]}]}",
             node, policy, scope, gpu_available, deprecated, gpu_available);
    return cJSON_Parse(text);
}

static struct node_numa
read_one(cJSON *obj)
{
    struct node_numa n;

    CHECK(viewnuma_read(obj, &n) != NULL);
    cJSON_Delete(obj);
    return n;
}

static void
objects(void)
{
    struct node_numa n = read_one(cJSON_Parse(nfd_doc));

    CHECK_INT(n.policy, NUMA_SINGLE_NODE);
    CHECK(!n.pod_scope);
    CHECK_INT(n.zones, 3);
    CHECK_INT(n.cpus[0], 30);
    CHECK_INT(n.cpus[2], 20);
    CHECK_INT(n.gpus[0], 0);

    /* The attribute first (the first of two), the scope with it. */
    n = read_one(nrt("a", "restricted", "pod", "SingleNUMANodeContainerLevel",
                     4));
    CHECK_INT(n.policy, NUMA_RESTRICTED);
    CHECK(n.pod_scope);
    CHECK_INT(n.zones, 2); /* the Socket zone is no NUMA node */
    CHECK_INT(n.gpus[0], 4);
    CHECK_INT(n.gpus[1], 4);
    CHECK_INT(n.cpus[0], 48);

    /* A value kubelet does not have: the deprecated list speaks. */
    n = read_one(nrt("a", "bogus", "container", "BestEffortPodLevel", 4));
    CHECK_INT(n.policy, NUMA_BEST_EFFORT);
    CHECK(n.pod_scope);
    n = read_one(nrt("a", "bogus", "container", "Unheard", 4));
    CHECK_INT(n.policy, NUMA_NOT_SAID);

    /* The API's own example: "SingleNUMANode" alone. */
    n = read_one(cJSON_Parse("{\"metadata\":{\"name\":\"n\"},"
                             "\"topologyPolicies\":[\"SingleNUMANode\"]}"));
    CHECK_INT(n.policy, NUMA_SINGLE_NODE);
    CHECK(!n.pod_scope);
    CHECK_INT(n.zones, 0);

    /* No name: nothing to hold it by. */
    cJSON *nameless = cJSON_Parse("{\"topologyPolicies\":[\"None\"]}");
    CHECK(viewnuma_read(nameless, &n) == NULL);
    cJSON_Delete(nameless);

    /* More NUMA nodes than kubelet takes: zones not known. */
    cJSON *many = cJSON_Parse(
        "{\"metadata\":{\"name\":\"n\"},\"topologyPolicies\":[\"None\"],"
        "\"zones\":[]}");
    cJSON *zones = cJSON_GetObjectItem(many, "zones");
    for (int i = 0; i < NUMA_ZONES_MAX + 1; i++)
        cJSON_AddItemToArray(zones,
                             cJSON_Parse("{\"type\":\"Node\",\"resources\":"
                                         "[{\"name\":\"cpu\","
                                         "\"capacity\":8}]}"));
    n = read_one(many);
    CHECK_INT(n.policy, NUMA_NONE);
    CHECK_INT(n.zones, 0);
}

/* The map through growth, replacements and removals that shift
 * entries back; every value freed once (valgrind and ASan in make test
 * say so). */
static void
map(void)
{
    struct namemap *m = namemap_new(free);
    char name[32];

    for (int i = 0; i < 1000; i++) {
        int *v = malloc(sizeof(*v));
        *v = i % 7;
        snprintf(name, sizeof(name), "node-%d", i);
        CHECK_INT(namemap_set(m, name, v), 0);
    }
    int *again = malloc(sizeof(*again));
    *again = 42;
    CHECK_INT(namemap_set(m, "node-3", again), 0); /* the old one freed */
    CHECK_INT(namemap_count(m), 1000);
    for (int i = 0; i < 1000; i += 2) {
        snprintf(name, sizeof(name), "node-%d", i);
        CHECK_INT(namemap_del(m, name), 1);
        CHECK_INT(namemap_del(m, name), 0);
    }
    CHECK_INT(namemap_count(m), 500);
    for (int i = 0; i < 1000; i++) {
        const int *got;
        snprintf(name, sizeof(name), "node-%d", i);
        got = namemap_get(m, name);
        CHECK(i % 2 ? got != NULL && *got == (i == 3 ? 42 : i % 7)
                    : got == NULL);
    }
    namemap_free(m);
}

static cJSON *
gpu_node(const char *name)
{
    char text[512];

    snprintf(text, sizeof(text),
             "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":"
             "{\"node.kubernetes.io/instance-type\":\"p4d.24xlarge\"}},"
             "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"8\"}}}",
             name);
    return cJSON_Parse(text);
}

/* The one kind of a view, its policy; -1 when the view has no one kind. */
static int
policy_of_view(const struct view_index *x)
{
    struct view *v = view_build(x);
    int p = v && v->n_kinds == 1 ? (int)v->kinds[0].numa.policy : -1;

    view_unref(v);
    return p;
}

static void
put(struct view_index *x, cJSON *obj, int want)
{
    CHECK_INT(view_index_put_object(x, "NodeResourceTopology", obj), want);
    cJSON_Delete(obj);
}

static void
index_kinds(void)
{
    struct view_index *x = view_index_new();
    cJSON *a = gpu_node("a"), *b = gpu_node("b");
    struct view *v;

    /* Before its node, then the node: the kind has it. */
    put(x, nrt("a", "single-numa-node", "container", "", 4), 1);
    CHECK_INT(view_index_put_node(x, a), 1);
    CHECK_INT(policy_of_view(x), NUMA_SINGLE_NODE);
    /* Pods came and went: nothing kept changed. */
    put(x, nrt("a", "single-numa-node", "container", "", 1), 0);
    /* A second node without one: two kinds. */
    CHECK_INT(view_index_put_node(x, b), 1);
    v = view_build(x);
    CHECK_INT(v->n_kinds, 2);
    CHECK_INT(v->n_numa, 1);
    view_unref(v);
    /* Its object arrives: one kind of two nodes again. */
    put(x, nrt("b", "single-numa-node", "container", "", 4), 1);
    v = view_build(x);
    CHECK_INT(v->n_kinds, 1);
    CHECK_INT(v->kinds[0].nodes, 2);
    view_unref(v);
    /* A new policy on both (kubelets reconfigured), by a list. */
    cJSON *items = cJSON_CreateArray();
    cJSON_AddItemToArray(items, nrt("a", "restricted", "pod", "", 4));
    cJSON_AddItemToArray(items, nrt("b", "restricted", "pod", "", 4));
    CHECK_INT(view_index_replace(x, "NodeResourceTopology", items), 0);
    cJSON_Delete(items);
    CHECK_INT(policy_of_view(x), NUMA_RESTRICTED);
    /* Deleted: the kinds say nothing of it. */
    cJSON *gone = nrt("a", "restricted", "pod", "", 4);
    CHECK_INT(view_index_del_object(x, "NodeResourceTopology", gone), 1);
    CHECK_INT(view_index_del_object(x, "NodeResourceTopology", gone), 0);
    cJSON_Delete(gone);
    gone = nrt("b", "restricted", "pod", "", 4);
    CHECK_INT(view_index_del_object(x, "NodeResourceTopology", gone), 1);
    cJSON_Delete(gone);
    CHECK_INT(policy_of_view(x), NUMA_NOT_SAID);
    cJSON_Delete(a);
    cJSON_Delete(b);
    view_index_free(x);
}

/* numafit_say: counts sentences, keeps the first. */
struct heard {
    int n;
    char first[256];
};

static int
hear(void *arg, const char *s)
{
    struct heard *h = arg;

    if (h->n++ == 0)
        snprintf(h->first, sizeof(h->first), "%s", s);
    return 0;
}

/* A pod of one container "train" (and an init container when init_gpus
 * is not negative); cpu NULL: no CPU limit (Burstable). */
static cJSON *
pod(long gpus, const char *cpu, long init_gpus)
{
    char text[1024], init[256] = "";

    if (init_gpus >= 0)
        snprintf(init, sizeof(init),
                 "\"initContainers\":[{\"name\":\"warm\",\"resources\":"
                 "{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\","
                 "\"nvidia.com/gpu\":\"%ld\"}}}],",
                 init_gpus);
    snprintf(text, sizeof(text),
             "{\"spec\":{%s\"containers\":[{\"name\":\"train\",\"resources\":"
             "{\"limits\":{%s%s%s\"memory\":\"100Gi\","
             "\"nvidia.com/gpu\":\"%ld\"}}}]}}",
             init, cpu ? "\"cpu\":\"" : "", cpu ? cpu : "", cpu ? "\"," : "",
             gpus);
    return cJSON_Parse(text);
}

static int
heard_of(const struct node_kind *k, cJSON *p, long extra, struct heard *h)
{
    memset(h, 0, sizeof(*h));
    CHECK_INT(numafit_pod(k, "p4d.24xlarge", p, extra, hear, h), 0);
    cJSON_Delete(p);
    return h->n;
}

static void
admission(void)
{
    struct node_kind k = {0};
    struct heard h;

    k.numa.zones = 2;
    k.numa.gpus[0] = k.numa.gpus[1] = 4;
    k.numa.cpus[0] = k.numa.cpus[1] = 48;

    /* No policy, best-effort: kubelet admits anything. */
    CHECK_INT(heard_of(&k, pod(8, "16", -1), 0, &h), 0);
    k.numa.policy = NUMA_BEST_EFFORT;
    CHECK_INT(heard_of(&k, pod(8, "16", -1), 0, &h), 0);

    /* single-numa-node: GPUs of one NUMA node only, whatever the QoS. */
    k.numa.policy = NUMA_SINGLE_NODE;
    CHECK_INT(heard_of(&k, pod(4, NULL, -1), 0, &h), 0);
    CHECK_INT(heard_of(&k, pod(8, NULL, -1), 0, &h), 2);
    CHECK(strstr(h.first, "container 'train' asks for 8") != NULL);
    /* topogate's own fill counts. */
    CHECK_INT(heard_of(&k, pod(4, NULL, -1), 4, &h), 2);
    /* Whole CPUs of a Guaranteed pod, one NUMA node's at most. */
    CHECK_INT(heard_of(&k, pod(4, "48", -1), 0, &h), 0);
    CHECK_INT(heard_of(&k, pod(4, "49", -1), 0, &h), 2);
    CHECK(strstr(h.first, "holds 48 CPUs") != NULL);
    /* Not whole: shared CPUs, no CPU hint. */
    CHECK_INT(heard_of(&k, pod(4, "49500m", -1), 0, &h), 0);
    /* An init container is judged on its own in container scope. */
    CHECK_INT(heard_of(&k, pod(4, NULL, 8), 0, &h), 2);
    CHECK(strstr(h.first, "container 'warm'") != NULL);
    /* Pod scope: the sum, or the init container where it is larger. */
    k.numa.pod_scope = true;
    CHECK_INT(heard_of(&k, pod(4, NULL, 2), 0, &h), 0);
    CHECK_INT(heard_of(&k, pod(4, NULL, 5), 0, &h), 2);
    CHECK(strstr(h.first, "the pod asks for 5") != NULL);

    /* restricted: GPUs and whole CPUs must need as many NUMA nodes. */
    k.numa.policy = NUMA_RESTRICTED;
    k.numa.pod_scope = false;
    CHECK_INT(heard_of(&k, pod(8, "16", -1), 0, &h), 2);
    CHECK(strstr(h.first, "8 GPUs (2 NUMA nodes) and 16 whole CPUs (1)") !=
          NULL);
    CHECK_INT(heard_of(&k, pod(8, "90", -1), 0, &h), 0);
    CHECK_INT(heard_of(&k, pod(8, NULL, -1), 0, &h), 0);
    CHECK_INT(heard_of(&k, pod(2, "60", -1), 0, &h), 2);
    CHECK_INT(heard_of(&k, pod(2, "40", -1), 0, &h), 0);

    /* Zones that list no GPU: the device plugin gives kubelet no hint. */
    k.numa.policy = NUMA_SINGLE_NODE;
    k.numa.gpus[0] = k.numa.gpus[1] = 0;
    CHECK_INT(heard_of(&k, pod(8, NULL, -1), 0, &h), 0);
}

int
main(void)
{
    objects();
    map();
    index_kinds();
    admission();
    CHECK_DONE();
}
