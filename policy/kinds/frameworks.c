/*
 * frameworks.c - see frameworks.h. A size read here is what the
 * controller wrote on the pod; where it writes none, the pod is counted
 * as one of several only where the kind cannot run alone (an MPI
 * worker, a gang), and the fix then asks for whole nodes (pods_known
 * false: advice.c).
 */
#include "policy/kinds/frameworks.h"

#include <string.h>

#include "policy/k8s/pod.h"

/* A worker of a job that always has more than one pod, size unsaid. */
static void
several(struct workload *w)
{
    if (!w->launcher)
        w->pods = 2;
}

static void
known(struct workload *w, long n)
{
    w->pods = n;
    w->pods_known = true;
}

/* The first literal value of env name among the pod's containers. */
static const char *
any_env(const cJSON *pod, const char *name)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, json_get(json_get(pod, "spec"), "containers"))
    {
        const char *v = pod_env_value(c, name);
        if (v)
            return v;
    }
    return NULL;
}

/* Hosts in a comma-separated list: "a.j,b.j" is 2; "" is 0. */
static long
hosts_in(const char *list)
{
    long n = 0;

    if (list == NULL || list[0] == '\0')
        return 0;
    for (n = 1; *list; list++)
        n += *list == ',';
    return n;
}

/*
 * Volcano (volcano-sh/volcano pkg/controllers/job/plugins/
 * distributed-framework): the pytorch plugin gives every container
 * WORLD_SIZE, the sum of the master and worker tasks' replicas, that
 * is the job's pods (pytorch.go OnPodCreate, getTotalReplicas); the mpi
 * plugin gives the master task's containers MPI_HOST, the worker pods'
 * host names joined by commas (mpi.go OnPodCreate, generateTaskHosts),
 * and the workers nothing. A master without GPUs only runs mpirun.
 */
void
framework_read_volcano(const cJSON *pod, struct workload *w)
{
    long n = pod_text_count(any_env(pod, "WORLD_SIZE"));
    const char *hosts = any_env(pod, "MPI_HOST");

    if (n > 0) {
        known(w, n);
        return;
    }
    if (hosts) {
        /* A master with GPUs runs ranks too, maybe: at least the
         * workers and itself, size not known. */
        w->launcher = !w->any_gpu;
        w->pods = hosts_in(hosts) + 1;
        return;
    }
    several(w);
}

/*
 * LeaderWorkerSet: every pod of a group carries the group's size,
 * leader included, as an annotation, and the pod webhook gives every
 * container LWS_GROUP_SIZE (kubernetes-sigs/lws
 * api/leaderworkerset/v1/leaderworkerset_types.go SizeAnnotationKey,
 * LwsGroupSize; pkg/webhooks/pod_webhook.go). Groups (replicas) are
 * independent copies: one group is the job.
 */
void
framework_read_lws(const cJSON *pod, struct workload *w)
{
    long n =
        pod_text_count(pod_annotation(pod, "leaderworkerset.sigs.k8s.io/size"));

    if (n <= 0)
        n = pod_text_count(any_env(pod, "LWS_GROUP_SIZE"));
    if (n > 0)
        known(w, n);
}

/*
 * JobSet: a pod carries the count of Jobs, over the whole set
 * (global-replicas) and in its replicated job (replicatedjob-replicas),
 * but not the parallelism of each Job (kubernetes-sigs/jobset
 * api/jobset/v1alpha2/jobset_types.go GlobalReplicasKey,
 * ReplicatedJobReplicas; pkg/controllers/jobset_controller.go
 * labelAndAnnotateObject). So the job has at least that many pods: its
 * size is not known, and a fix asks for whole nodes.
 */
void
framework_read_jobset(const cJSON *pod, struct workload *w)
{
    long n =
        pod_text_count(pod_label(pod, "jobset.sigs.k8s.io/global-replicas"));

    if (n <= 0)
        n = pod_text_count(
            pod_label(pod, "jobset.sigs.k8s.io/replicatedjob-replicas"));
    if (n >= 2)
        w->pods = n;
}

/*
 * mpi-operator's kubeflow.org/v1alpha2 controller labels its pods
 * mpi_role_type: launcher or worker, and sets no size on the workers,
 * a StatefulSet (kubeflow/mpi-operator pkg/controllers/v1alpha2/
 * mpi_job_controller.go at 8943cf73, labelMPIRoleType, newWorker,
 * newLauncher).
 */
void
framework_read_mpi_v1alpha2(const cJSON *pod, struct workload *w)
{
    const char *role = pod_label(pod, "mpi_role_type");

    w->launcher = role && strcmp(role, "launcher") == 0;
    several(w);
}

/*
 * A pod of a Kubernetes PodGroup, the gang of KEP-4671: it names its
 * group (spec.schedulingGroup.podGroupName in 1.36, spec.workloadRef in
 * 1.35), whose size (the gang's minCount) is in the PodGroup or
 * Workload object, not on the pod. A gang is scheduled together, so it
 * has more than one pod.
 */
void
framework_read_gang(const cJSON *pod, struct workload *w)
{
    (void)pod;
    several(w);
}
