/*
 * expand_ray.c - KubeRay's RayCluster, and RayJob's spec.rayClusterSpec:
 * the head and each worker group, labelled as KubeRay labels its pods
 * (ray-project/kuberay ray-operator/controllers/ray/common/pod.go
 * labelPod; utils/constant.go). A Ray pod says nothing of the cluster's
 * size, so the object carries it: the pods of its groups with GPUs
 * (e->job.nodes), judged whole by decide_job(). The labels of the
 * object are KubeRay's too (utils/constant.go
 * RayOriginatedFromCRDLabelKey; its value is the CRD's name).
 */
#include <string.h>

#include "policy/kinds/expand_internal.h"
#include "policy/kinds/podbuild.h"
#include "policy/k8s/pod.h"

/* The most pods a Ray object's size is counted to, as podbuild_long()
 * bounds a count: the world size (pods x processes) then fits a long. */
#define RAY_PODS_MAX 1000000000L

static bool
serves(const cJSON *obj)
{
    const char *from = pod_label(obj, "ray.io/originated-from-crd");

    return from && strcmp(from, "RayService") == 0;
}

int
expand_ray(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    const cJSON *spec = json_get(obj, "spec"), *g;
    long gpu_pods = 0;

    (void)rt;
    if (json_get(spec, "rayClusterSpec"))
        spec = json_get(spec, "rayClusterSpec");
    if (json_get(spec, "headGroupSpec")) {
        const char *labels[] = {"ray.io/cluster", e->name, "ray.io/node-type",
                                "head", NULL};
        if (podbuild_group_with(
                e, "head", 1,
                json_get(json_get(spec, "headGroupSpec"), "template"),
                labels) < 0)
            return -1;
        if (workload_asks_gpu(e->groups[e->n_groups - 1].pod))
            gpu_pods++;
    }
    cJSON_ArrayForEach(g, json_get(spec, "workerGroupSpecs"))
    {
        const char *name = json_string(g, "groupName");
        const char *labels[] = {"ray.io/cluster",
                                e->name,
                                "ray.io/node-type",
                                "worker",
                                "ray.io/group",
                                name ? name : "",
                                NULL};
        /* The autoscaler may grow a group to maxReplicas; each replica
         * is numOfHosts pods (WorkerGroupSpec.NumOfHosts, multi-host). */
        long n =
            podbuild_long(g, "maxReplicas",
                          podbuild_long(g, "replicas",
                                        podbuild_long(g, "minReplicas", 1))) *
            podbuild_long(g, "numOfHosts", 1);
        if (podbuild_group_with(e, name ? name : "worker", n,
                                json_get(g, "template"), labels) < 0)
            return -1;
        /* A group's count is at most 1e18 (two counts of podbuild_long,
         * 1e9 each): the sum stops at RAY_PODS_MAX rather than overflow. */
        if (workload_asks_gpu(e->groups[e->n_groups - 1].pod))
            gpu_pods =
                n > RAY_PODS_MAX - gpu_pods ? RAY_PODS_MAX : gpu_pods + n;
    }
    if (e->n_groups == 0)
        return podbuild_note(e, "no headGroupSpec or workerGroupSpecs");
    e->job.owner = OWNER_FRAMEWORK;
    /* A RayService's cluster serves: its workers are replicas that do
     * not train together, so they make no job size (KubeRay labels it,
     * rayservice_controller.go constructRayClusterForRayService). */
    if (!serves(obj))
        e->job.nodes = gpu_pods;
    return 0;
}
