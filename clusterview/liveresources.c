/* liveresources.c - see liveresources.h. */
#include "clusterview/liveresources.h"

#include <stdlib.h>
#include <string.h>

#include "policy/audit/audit.h"
#include "policy/k8s/labels.h"

static const char *const core_v1[] = {"v1", NULL};
static const char *const report_versions[] = {LIVE_REPORT_VERSION, NULL};

/*
 * The label keys, each set on every pod by its controller, and the
 * object that label names. Batch Jobs (batch.kubernetes.io/job-name)
 * are not watched: that label is on every Job's pods in the cluster
 * (CronJobs, backups, JobSet's own child Jobs), most of them no
 * training, and JobSet pods already come under their JobSet.
 */
struct live_label {
    const char *key, *api_version, *kind;
};
static const struct live_label labels[] = {
    /* Training Operator v1 and mpi-operator v2 (kubeflow/training-operator
     * pkg/apis/kubeflow.org/v1/common_types.go JobNameLabel); the kind
     * comes from the pod's controller reference (PyTorchJob, MPIJob...). */
    {LABEL_JOB_NAME, "kubeflow.org/v1", "PyTorchJob"},
    /* JobSet, and Trainer v2's TrainJobs, which run as JobSets
     * (kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go
     * JobSetNameKey). */
    {LABEL_JOBSET, "jobset.x-k8s.io/v1alpha2", "JobSet"},
    /* KubeRay (ray-project/kuberay ray-operator/controllers/ray/utils/
     * constant.go RayClusterLabelKey; common/pod.go labelPod). */
    {"ray.io/cluster", "ray.io/v1", "RayCluster"},
    /* Volcano (volcano-sh/volcano pkg/controllers/job/
     * job_controller_util.go createJobPod, JobNameKey). */
    {"volcano.sh/job-name", "batch.volcano.sh/v1alpha1", "Job"},
    /* LeaderWorkerSet (kubernetes-sigs/lws api/leaderworkerset/v1
     * SetNameLabelKey). */
    {"leaderworkerset.sigs.k8s.io/name", "leaderworkerset.x-k8s.io/v1",
     "LeaderWorkerSet"},
};
#define N_LABELS (sizeof(labels) / sizeof(labels[0]))

/* One watch of pods per label key ("key" alone selects the pods that
 * carry it: api-concepts, label selectors), then our reports. */
static const struct kube_resource resources[] = {
    {"pods-kubeflow", "", core_v1, "pods", false, LABEL_JOB_NAME},
    {"pods-jobset", "", core_v1, "pods", false, LABEL_JOBSET},
    {"pods-ray", "", core_v1, "pods", false, "ray.io/cluster"},
    {"pods-volcano", "", core_v1, "pods", false, "volcano.sh/job-name"},
    {"pods-lws", "", core_v1, "pods", false,
     "leaderworkerset.sigs.k8s.io/name"},
    {LIVE_REPORTS, LIVE_REPORT_GROUP, report_versions, "policyreports", true,
     LIVE_MANAGED_BY "=topogate"},
};
#define N_RESOURCES (sizeof(resources) / sizeof(resources[0]))

const struct kube_resource *
live_resources(size_t *n)
{
    *n = N_RESOURCES;
    return resources;
}

int
live_resource_index(const char *name)
{
    for (size_t i = 0; name && i < N_RESOURCES; i++)
        if (strcmp(resources[i].name, name) == 0)
            return (int)i;
    return -1;
}

static const cJSON *
get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

bool
live_owner(const cJSON *pod, struct live_owner *out)
{
    const cJSON *meta = get(pod, "metadata");
    const cJSON *lab = get(meta, "labels"), *ref;

    for (size_t i = 0; i < N_LABELS; i++) {
        const char *v = cJSON_GetStringValue(get(lab, labels[i].key));
        if (v == NULL || *v == '\0')
            continue;
        out->label = labels[i].key;
        out->name = v;
        out->api_version = labels[i].api_version;
        out->kind = labels[i].kind;
        out->uid = NULL;
        cJSON_ArrayForEach(ref, get(meta, "ownerReferences"))
        {
            const char *n = cJSON_GetStringValue(get(ref, "name"));
            const char *k = cJSON_GetStringValue(get(ref, "kind"));
            const char *a = cJSON_GetStringValue(get(ref, "apiVersion"));
            if (cJSON_IsTrue(get(ref, "controller")) && n && k && a &&
                strcmp(n, v) == 0) {
                out->kind = k;
                out->api_version = a;
                out->uid = cJSON_GetStringValue(get(ref, "uid"));
            }
        }
        return true;
    }
    return false;
}

/* A quantity of whole GPUs: "2", 2; anything else 0. */
static long
gpus_of(const cJSON *res)
{
    const cJSON *v = get(res, "nvidia.com/gpu");

    if (cJSON_IsNumber(v))
        return v->valuedouble > 0 ? (long)v->valuedouble : 0;
    if (cJSON_IsString(v)) {
        char *end;
        long n = strtol(v->valuestring, &end, 10);
        return *end == '\0' && n > 0 ? n : 0;
    }
    return 0;
}

static long
container_gpus(const cJSON *c)
{
    const cJSON *r = get(c, "resources");
    long n = gpus_of(get(r, "limits"));

    return n > 0 ? n : gpus_of(get(r, "requests"));
}

long
live_pod_gpus(const cJSON *pod)
{
    const cJSON *spec = get(pod, "spec"), *c;
    long sum = 0, init = 0;

    cJSON_ArrayForEach(c, get(spec, "containers")) sum += container_gpus(c);
    cJSON_ArrayForEach(c, get(spec, "initContainers"))
    {
        long n = container_gpus(c);
        init = n > init ? n : init;
    }
    return sum > init ? sum : init;
}

static void
copy(cJSON *to, const cJSON *from, const char *key)
{
    const cJSON *v = get(from, key);

    if (v)
        cJSON_AddItemToObject(to, key, cJSON_Duplicate(v, true));
}

cJSON *
live_slim_pod(const cJSON *pod)
{
    const cJSON *meta = get(pod, "metadata"), *ref;
    cJSON *out, *m, *spec, *vols, *st, *refs;

    /* A pod whose GPUs come from DRA claims is kept too: how many its
     * claims hold is read through the view's templates when it is
     * judged (the helper has no view). */
    if ((live_pod_gpus(pod) <= 0 && !audit_pod_claims(pod)) ||
        (out = cJSON_CreateObject()) == NULL)
        return NULL;
    cJSON_AddStringToObject(out, "apiVersion", "v1");
    cJSON_AddStringToObject(out, "kind", "Pod");
    m = cJSON_AddObjectToObject(out, "metadata");
    copy(m, meta, "name");
    copy(m, meta, "namespace");
    copy(m, meta, "uid");
    copy(m, meta, "labels");
    copy(m, meta, "annotations");
    refs = cJSON_AddArrayToObject(m, "ownerReferences");
    cJSON_ArrayForEach(ref, get(meta, "ownerReferences"))
    {
        if (cJSON_IsTrue(get(ref, "controller")))
            cJSON_AddItemToArray(refs, cJSON_Duplicate(ref, true));
    }
    spec = cJSON_Duplicate(get(pod, "spec"), true);
    if (spec == NULL)
        spec = cJSON_CreateObject();
    /* The service account's projected token volume is most of a small
     * pod's spec, and nothing decide() reads. */
    cJSON_ArrayForEach(vols, get(spec, "volumes"))
    {
        if (get(vols, "projected"))
            cJSON_ReplaceItemInObjectCaseSensitive(vols, "projected",
                                                   cJSON_CreateObject());
    }
    cJSON_AddItemToObject(out, "spec", spec);
    st = cJSON_AddObjectToObject(out, "status");
    copy(st, get(pod, "status"), "phase");
    if (m == NULL || refs == NULL || st == NULL) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}
