/* kuberesources.c - see kuberesources.h. */
#include "clusterview/kuberesources.h"

#include <string.h>

/* The rows leave kube_resource.selector out: NULL, every object (the
 * live audit's pod watches set it: liveresources.c). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const char *const core_v1[] = {"v1", NULL};
static const char *const kueue_versions[] = {"v1beta2", "v1beta1", NULL};
static const char *const trainer_versions[] = {"v1alpha1", NULL};
/* DRA is GA in resource.k8s.io/v1 since Kubernetes 1.34; older clusters
 * serve none of it (or betas we do not read): settled as not served. */
static const char *const dra_versions[] = {"v1", NULL};
/* NFD's NodeResourceTopology (cluster-scoped, one per node, named after
 * it): v1alpha2 is the storage version, v1alpha1 still served
 * (k8stopologyawareschedwg/noderesourcetopology-api 7f99f9c2
 * manifests/crd.yaml); an older NFD or RTE may install only v1alpha1. */
static const char *const nrt_versions[] = {"v1alpha2", "v1alpha1", NULL};

static const struct kube_resource resources[] = {
    {"nodes", "", core_v1, "nodes", false},
    {"resourceflavors", "kueue.x-k8s.io", kueue_versions, "resourceflavors",
     true},
    {"clusterqueues", "kueue.x-k8s.io", kueue_versions, "clusterqueues", true},
    {"localqueues", "kueue.x-k8s.io", kueue_versions, "localqueues", true},
    {"clustertrainingruntimes", "trainer.kubeflow.org", trainer_versions,
     "clustertrainingruntimes", true},
    {"trainingruntimes", "trainer.kubeflow.org", trainer_versions,
     "trainingruntimes", true},
    {"deviceclasses", "resource.k8s.io", dra_versions, "deviceclasses", true},
    {"resourceslices", "resource.k8s.io", dra_versions, "resourceslices", true},
    {"resourceclaimtemplates", "resource.k8s.io", dra_versions,
     "resourceclaimtemplates", true},
    {"noderesourcetopologies", "topology.node.k8s.io", nrt_versions,
     "noderesourcetopologies", true},
};
/* The kind of each row's objects, in the rows' order. */
static const char *const kinds[] = {"Node",
                                    "ResourceFlavor",
                                    "ClusterQueue",
                                    "LocalQueue",
                                    "ClusterTrainingRuntime",
                                    "TrainingRuntime",
                                    "DeviceClass",
                                    "ResourceSlice",
                                    "ResourceClaimTemplate",
                                    "NodeResourceTopology"};
#define N_RESOURCES (sizeof(resources) / sizeof(resources[0]))
_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == N_RESOURCES,
               "one kind per resource");

const struct kube_resource *
kube_resources(size_t *n)
{
    *n = N_RESOURCES;
    return resources;
}

int
kube_resource_index(const char *name)
{
    for (size_t i = 0; name && i < N_RESOURCES; i++)
        if (strcmp(resources[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *
kube_resource_kind(const char *name)
{
    int i = kube_resource_index(name);

    return i < 0 ? NULL : kinds[i];
}

bool
kube_resource_settled(const struct kube_resource *r, bool synced,
                      const char *why)
{
    return synced || (r->optional && why &&
                      (strstr(why, "not served") || strstr(why, "forbidden")));
}
