/*
 * gpudirect.c - a whole-node pod on a GKE GPUDirect machine type: what
 * it needs so that NCCL does not fall back to TCP (issue 45 point 3).
 *
 * From GoogleCloudPlatform/container-engine-accelerators (992db812):
 *   tcpx   gpudirect-tcpx/nccl-test-latest.yaml: the two interface
 *          annotations, a "tcpx-daemon" container running the receive
 *          data path manager (image .../gpudirect-tcpx/tcpgpudmarxd-dev),
 *          and devices.gke.io/container.tcpx-daemon listing the GPU
 *          devices the NRI device injector gives it;
 *   tcpxo  gpudirect-tcpxo/nccl-test-latest.yaml: the same with
 *          "tcpxo-daemon" (.../gpudirect-tcpxo/tcpgpudmarxd-dev);
 *   rdma   gpudirect-rdma/nccl-test.yaml (a3-ultragpu), nccl-test-a4.yaml,
 *          nccl-test-imex-a4x.yaml: the interface annotations, hostPath
 *          /home/kubernetes/bin/gib mounted at /usr/local/gib, and
 *          `source /usr/local/gib/scripts/set_nccl_env.sh` before NCCL
 *          runs; nccl-test-managed-rdma.yaml attaches the NICs by a DRA
 *          claim of mrdma.google.com devices instead of the annotations.
 * A privileged sidecar sees every device and needs no NRI annotation; a
 * hostNetwork pod has the host's interfaces (the older TCPX manifests,
 * gpudirect-tcpx/nccl-test.yaml, run so). NVIDIA's AICR sets NCCL_NET=gIB
 * itself (docs.nvidia.com/aicr/integrator-guide/gke-gb-200-networking),
 * so an NCCL_NET of the user's counts as the env being set.
 */
#include "policy/pod/gpudirect.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "policy/k8s/pod.h"
#include "policy/kinds/launch.h"

#define RXDM_IMAGE "tcpgpudmarxd"
#define NRI_PREFIX "devices.gke.io/container."
#define GIB_HOST "/home/kubernetes/bin/gib"
#define GIB_MOUNT "/usr/local/gib"
#define GIB_ENV_SCRIPT "set_nccl_env.sh"

static const char *
stack_name(enum gpudirect g)
{
    switch (g) {
    case GPUDIRECT_TCPX:
        return "GPUDirect-TCPX";
    case GPUDIRECT_TCPXO:
        return "GPUDirect-TCPXO";
    case GPUDIRECT_RDMA:
        return "GPUDirect RDMA";
    case GPUDIRECT_NONE:
        break;
    }
    return "?";
}

static long
gpus_of(const cJSON *c)
{
    long n;
    return pod_count(c, RESOURCE_GPU, &n) == COUNT_OK ? n : 0;
}

/* The container with the most GPUs (the first of equals), or NULL. */
static const cJSON *
main_container(const cJSON *spec)
{
    const cJSON *c, *best = NULL;
    long most = 0;

    cJSON_ArrayForEach(c, json_get(spec, "containers"))
    {
        if (gpus_of(c) > most) {
            most = gpus_of(c);
            best = c;
        }
    }
    return best;
}

/* A DRA claim other than a ComputeDomain channel: it may be the NICs. */
static bool
nic_claim(const cJSON *spec)
{
    const cJSON *claim;

    cJSON_ArrayForEach(claim, json_get(spec, "resourceClaims"))
    {
        if (!workload_channel_claim(claim))
            return true;
    }
    return false;
}

/*
 * The receive data path manager: a container (or native sidecar) named
 * as Google's manifests name it, or running its image. NULL when none.
 */
static const cJSON *
rxdm_container(const cJSON *spec, const char *name)
{
    static const char *const lists[] = {"containers", "initContainers"};
    const cJSON *c;

    for (size_t l = 0; l < 2; l++) {
        cJSON_ArrayForEach(c, json_get(spec, lists[l]))
        {
            const char *n = json_string(c, "name");
            const char *image = json_string(c, "image");

            if (l == 1 && !pod_is_sidecar(c))
                continue;
            if ((n && strcmp(n, name) == 0) ||
                (image && strstr(image, RXDM_IMAGE)))
                return c;
        }
    }
    return NULL;
}

/* Whether c mounts a volume at path. */
static bool
mounts_at(const cJSON *c, const char *path)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, json_get(c, "volumeMounts"))
    {
        const char *p = json_string(m, "mountPath");
        if (p && strcmp(p, path) == 0)
            return true;
    }
    return false;
}

/* Both interface annotations, as the policy names the networks. */
static int
patch_interfaces(const cJSON *pod, const struct gke_networks *g,
                 struct decision *d)
{
    const cJSON *ann = json_get(json_get(pod, "metadata"), "annotations");
    cJSON *v;

    if (cJSON_IsObject(ann)) {
        if (pod_annotation(pod, ANNOTATION_GKE_DEFAULT_IF) == NULL &&
            decision_add_at(d, cJSON_CreateString(g->ifs[0].name),
                            "/metadata/annotations",
                            ANNOTATION_GKE_DEFAULT_IF) < 0)
            return -1;
        return decision_add_at(d, cJSON_CreateString(g->annotation),
                               "/metadata/annotations",
                               ANNOTATION_GKE_INTERFACES);
    }
    if ((v = cJSON_CreateObject()) == NULL ||
        !cJSON_AddStringToObject(v, ANNOTATION_GKE_DEFAULT_IF,
                                 g->ifs[0].name) ||
        !cJSON_AddStringToObject(v, ANNOTATION_GKE_INTERFACES, g->annotation)) {
        cJSON_Delete(v);
        return -1;
    }
    return decision_add(d, "/metadata/annotations", v);
}

static int
check_interfaces(const cJSON *pod, const struct target *t, const char *stack,
                 struct decision *d)
{
    const cJSON *spec = json_get(pod, "spec");

    if (pod_annotation(pod, ANNOTATION_GKE_INTERFACES) ||
        cJSON_IsTrue(json_get(spec, "hostNetwork")))
        return 0;
    /* Managed RDMA: a claim of mrdma.google.com devices attaches them. */
    if (t->gpudirect == GPUDIRECT_RDMA && nic_claim(spec))
        return 0;
    if (t->gke_net && cJSON_IsObject(json_get(pod, "metadata")))
        return patch_interfaces(pod, t->gke_net, d);
    if (decision_warn(d,
                      "%s (%s): no " ANNOTATION_GKE_INTERFACES
                      " annotation: NCCL runs over TCP",
                      t->name, stack) < 0)
        return -1;
    return decision_warn(d,
                         "name the cluster's networks for %s in the "
                         "policy's gkeNetworks, or annotate the pod",
                         t->name);
}

static int
check_rxdm(const cJSON *pod, const struct target *t, const char *stack,
           struct decision *d)
{
    const char *daemon =
        t->gpudirect == GPUDIRECT_TCPX ? "tcpx-daemon" : "tcpxo-daemon";
    const char *repo =
        t->gpudirect == GPUDIRECT_TCPX ? "gpudirect-tcpx" : "gpudirect-tcpxo";
    const cJSON *c = rxdm_container(json_get(pod, "spec"), daemon);
    const char *name;
    struct strbuf sb = {0};
    char *key;
    bool has;

    if (c == NULL)
        return decision_warn(d,
                             "%s (%s): no %s sidecar (receive data path "
                             "manager, %s/" RXDM_IMAGE ")",
                             t->name, stack, daemon, repo);
    if (cJSON_IsTrue(json_get(json_get(c, "securityContext"), "privileged")))
        return 0;
    name = json_string(c, "name") ? json_string(c, "name") : daemon;
    strbuf_printf(&sb, NRI_PREFIX "%s", name);
    if ((key = strbuf_take(&sb)) == NULL)
        return -1;
    has = pod_annotation(pod, key) != NULL;
    free(key);
    if (has)
        return 0;
    return decision_warn(d,
                         "no " NRI_PREFIX "%s annotation: the NRI device "
                         "injector gives its sidecar no GPUs",
                         name);
}

static int
check_gib(const cJSON *pod, const struct target *t, const char *stack,
          struct decision *d)
{
    const cJSON *c = main_container(json_get(pod, "spec"));

    if (c == NULL)
        return 0;
    if (!mounts_at(c, GIB_MOUNT) &&
        decision_warn(d,
                      "%s (%s): no gIB NCCL plugin: mount hostPath " GIB_HOST
                      " at " GIB_MOUNT,
                      t->name, stack) < 0)
        return -1;
    if (launch_mentions(c, GIB_ENV_SCRIPT) || pod_env(c, "NCCL_NET"))
        return 0;
    return decision_warn(d,
                         "%s: no gIB NCCL env: source " GIB_MOUNT
                         "/scripts/" GIB_ENV_SCRIPT " before NCCL starts",
                         t->name);
}

int
gpudirect_pod(const cJSON *pod, const struct workload *w,
              const struct target *t, struct decision *d)
{
    const char *stack = stack_name(t->gpudirect);

    /* Google: such a workload uses all GPUs and all GPU NICs of a node;
     * a one-pod job keeps its traffic inside the node. */
    if (t->gpudirect == GPUDIRECT_NONE || w->pods < 2 || t->gpus <= 0 ||
        w->gpus < t->gpus)
        return 0;
    if (check_interfaces(pod, t, stack, d) < 0)
        return -1;
    if (t->gpudirect == GPUDIRECT_RDMA)
        return check_gib(pod, t, stack, d);
    return check_rxdm(pod, t, stack, d);
}
