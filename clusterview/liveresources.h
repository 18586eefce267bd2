/*
 * liveresources.h - what the live audit watches (serve --live-audit):
 * the GPU pods of training workloads, one watch per label key that a
 * training controller sets on every pod it makes, and topogate's own
 * PolicyReports (to know whether the CRD is served and ours to write,
 * and which reports a run before this one left). Shared by
 * topogate-kubewatch, which lists and watches them and cuts each pod
 * down to what decide() reads, and serve, which judges them
 * (liveaudit.c). Static data and pure functions over cJSON.
 */
#ifndef TOPOGATE_LIVERESOURCES_H
#define TOPOGATE_LIVERESOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/kube.h"

/* The name of the PolicyReports resource in live_resources(). */
#define LIVE_REPORTS "policyreports"
/* The report's name in each namespace, and the label on it. */
#define LIVE_REPORT_NAME "topogate"
#define LIVE_MANAGED_BY "app.kubernetes.io/managed-by"
#define LIVE_REPORT_GROUP "wgpolicyk8s.io"
#define LIVE_REPORT_VERSION "v1alpha2"

/* The resources, n of them: the pod watches, then LIVE_REPORTS. */
const struct kube_resource *live_resources(size_t *n);

/* The index of a resource in live_resources(), or -1. */
int live_resource_index(const char *name);

/* A workload as its pods name it. Strings are borrowed from the pod or
 * static. */
struct live_owner {
    const char *label;       /* the label key that named it */
    const char *name;        /* its value: the workload's name */
    const char *api_version; /* "kubeflow.org/v1" */
    const char *kind;        /* "PyTorchJob" */
    const char *uid;         /* from the pod's controller reference, or
                                NULL */
};

/*
 * The workload a pod belongs to: the first label key of the watched
 * ones that it carries, in a fixed order (so a pod that two watches
 * deliver lands in one workload); the kind and apiVersion from the
 * pod's controller reference when that names the same object, else the
 * label's own controller. false when it carries none.
 */
bool live_owner(const cJSON *pod, struct live_owner *out);

/* The nvidia.com/gpu a pod's containers ask for (limits, else
 * requests; init containers count as the largest one). */
long live_pod_gpus(const cJSON *pod);

/*
 * What decide() reads of a pod, and no more: metadata (name, namespace,
 * uid, labels, annotations, the controller reference), spec without
 * projected volumes' sources, status.phase. NULL when the pod asks for
 * no nvidia.com/gpu and has no DRA claim but ComputeDomain channels' (or
 * out of memory): it is not watched.
 */
cJSON *live_slim_pod(const cJSON *pod);

#endif
