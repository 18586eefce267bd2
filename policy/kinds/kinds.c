/*
 * kinds.c - see kinds.h. The table: one row per kind, governed kinds
 * first (workload_read() takes the first row whose marks a pod carries).
 *
 * The marks are the controllers' own labels and env (policy/k8s/labels.h;
 * shared/research/topology-and-kubeflow-facts.md section 2), the ones the
 * expanders stamp on the pods they build.
 */
#include "policy/kinds/kinds.h"

#include <string.h>

#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"
#include "policy/kinds/expand_internal.h"

/* Plain pods: "use 2 pods x 8 GPUs", "request nvidia.com/gpu: 8 per pod". */
static const struct kind_fix fix_pods = {0};

static const struct kind_fix fix_pytorchjob = {
    .nodes = "Worker replicas",
    .procs = "nprocPerNode",
    .limits = "container limits",
    .worker = "Worker",
    .head = "Master",
    .elastic = "elasticPolicy.maxReplicas",
};

static const struct kind_fix fix_mpijob = {
    .nodes = "Worker replicas",
    .procs = "slotsPerWorker",
    .limits = "container limits",
    .worker = "Worker",
    .sizeless = true,
    .pods = "Workers",
    .np = "mpirun -np",
    .nproc = "torchrun --nproc_per_node",
};

/* Trainer v2: the fields of the TrainJob, not of its runtime. */
static const struct kind_fix fix_trainjob = {
    .nodes = "spec.trainer.numNodes",
    .procs = "numProcPerNode",
    .limits = "spec.trainer.resourcesPerNode limits",
    .pods = "nodes",
};

/* kubeflow.org/v1: Training Operator 1.x's; v2beta1: mpi-operator v2's.
 * v1alpha1/v1alpha2 pods carry labels no controller of today sets, and
 * the webhook does not govern them either. */
#define MPI_OTHER_API                                                         \
    "an MPI operator API older than kubeflow.org/v1 (Training Operator "      \
    "1.x) and v2beta1 (mpi-operator v2); its pods are not governed"

#define RUNTIME_SKIP "a template, judged through the TrainJobs that use it"

const struct kind kinds[] = {
    /* Governed: their pods are judged wherever they run. */
    {
        .name = "PyTorchJob",
        .groups = {"kubeflow.org"},
        .kind = "PyTorchJob",
        .api = "kubeflow.org/v1",
        .other_api = "only kubeflow.org/v1 is read",
        .owner = OWNER_PYTORCHJOB,
        .marks = {{.label = LABEL_OPERATOR, .value = "pytorchjob-controller"}},
        .expand = expand_pytorchjob,
        .fix = &fix_pytorchjob,
    },
    {
        .name = "MPIJob v1 (Training Operator 1.x)",
        .groups = {"kubeflow.org"},
        .kind = "MPIJob",
        .api = "kubeflow.org/v1",
        .other_api = MPI_OTHER_API,
        .owner = OWNER_MPIJOB,
        .marks = {{.label = LABEL_OPERATOR, .value = "mpijob-controller"}},
        .expand = expand_mpijob,
        .fix = &fix_mpijob,
    },
    {
        .name = "MPIJob v2beta1 (mpi-operator v2)",
        .groups = {"kubeflow.org"},
        .kind = "MPIJob",
        .api = "kubeflow.org/v2beta1",
        .other_api = MPI_OTHER_API,
        .owner = OWNER_MPIJOB,
        .marks = {{.label = LABEL_OPERATOR, .value = "mpi-operator"}},
        .expand = expand_mpijob,
        .fix = &fix_mpijob,
    },
    {
        /* Trainer v2 through JobSet: label, container name and env
         * agree. Its Torch plugin sets PET_NNODES on the container
         * "node"; its MPI plugin (the MPI and DeepSpeed runtimes) sets
         * no PET_*, but mounts its ssh Secret there in the launcher and
         * node pods, and gives the launcher's the OpenMPI env
         * (kubeflow/trainer pkg/runtime/framework/plugins/mpi/mpi.go
         * EnforceMLPolicy; pkg/constants MPISSHAuthVolumeName,
         * OpenMPIEnvHostFileLocation). */
        .name = "TrainJob",
        .groups = {"trainer.kubeflow.org"},
        .kind = "TrainJob",
        .owner = OWNER_TRAINJOB,
        .marks = {{.label = LABEL_REPLICATED_JOB,
                   .container = TRAINER_NODE,
                   .env = "PET_NNODES"},
                  {.label = LABEL_REPLICATED_JOB,
                   .container = TRAINER_NODE,
                   .env = "OMPI_MCA_orte_default_hostfile",
                   .mount = TRAINER_MPI_SSH_VOLUME,
                   .mpi = true}},
        .expand = expand_trainjob,
        .fix = &fix_trainjob,
    },
    {
        .name = "TrainingRuntime",
        .groups = {"trainer.kubeflow.org"},
        .kind = "TrainingRuntime",
        .owner = OWNER_NONE,
        .not_expanded = RUNTIME_SKIP,
        .skip = true,
        .fix = &fix_pods,
    },
    {
        .name = "ClusterTrainingRuntime",
        .groups = {"trainer.kubeflow.org"},
        .kind = "ClusterTrainingRuntime",
        .owner = OWNER_NONE,
        .not_expanded = RUNTIME_SKIP,
        .skip = true,
        .fix = &fix_pods,
    },

    /* Governed where opted in (topogate.io/managed: "true"). */
    {
        /* One JAX process per pod, NUM_PROCESSES of them (Training
         * Operator v1 pkg/controller.v1/jax/envvar.go setPodEnv). */
        .name = "JAXJob",
        .groups = {"kubeflow.org"},
        .kind = "JAXJob",
        .owner = OWNER_MANAGED,
        .marks = {{.label = LABEL_OPERATOR, .value = "jaxjob-controller"}},
        .count_env = "NUM_PROCESSES",
        .expand = expand_jaxjob,
        .fix = &fix_pods,
    },
    {
        .name = "JobSet",
        .groups = {"jobset.x-k8s.io"},
        .kind = "JobSet",
        .owner = OWNER_MANAGED,
        .marks = {{.label = LABEL_JOBSET}},
        .expand = expand_jobset,
        .fix = &fix_pods,
    },
    {
        .name = "Volcano Job",
        .groups = {"batch.volcano.sh"},
        .kind = "Job",
        .owner = OWNER_MANAGED,
        .marks = {{.label = "volcano.sh/job-name"}},
        .expand = expand_volcano_job,
        .fix = &fix_pods,
    },
    {
        .name = "RayJob",
        .groups = {"ray.io"},
        .kind = "RayJob",
        .owner = OWNER_MANAGED,
        .marks = {{.label = "ray.io/cluster"}},
        .expand = expand_ray,
        .fix = &fix_pods,
    },
    {
        .name = "RayCluster",
        .groups = {"ray.io"},
        .kind = "RayCluster",
        .owner = OWNER_MANAGED,
        .marks = {{.label = "ray.io/cluster"}},
        .expand = expand_ray,
        .fix = &fix_pods,
    },
    {
        /* Its pods carry the set's name (kubernetes-sigs/lws
         * api/leaderworkerset/v1 SetNameLabelKey). */
        .name = "LeaderWorkerSet",
        .groups = {"leaderworkerset.x-k8s.io"},
        .kind = "LeaderWorkerSet",
        .owner = OWNER_MANAGED,
        .marks = {{.label = "leaderworkerset.sigs.k8s.io/name"}},
        .not_expanded = "not expanded yet: no expander reads "
                        "leaderWorkerTemplate, and the search for pod "
                        "templates of a kind topogate does not know looks "
                        "only under keys named template",
        .fix = &fix_pods,
    },
    {
        .name = "Deployment",
        .groups = {"apps", "extensions"},
        .kind = "Deployment",
        .owner = OWNER_MANAGED,
        .expand = expand_replicated,
        .fix = &fix_pods,
    },
    {
        .name = "ReplicaSet",
        .groups = {"apps", "extensions"},
        .kind = "ReplicaSet",
        .owner = OWNER_MANAGED,
        .expand = expand_replicated,
        .fix = &fix_pods,
    },
    {
        .name = "StatefulSet",
        .groups = {"apps", "extensions"},
        .kind = "StatefulSet",
        .owner = OWNER_MANAGED,
        .expand = expand_replicated,
        .fix = &fix_pods,
    },
    {
        .name = "DaemonSet",
        .groups = {"apps", "extensions"},
        .kind = "DaemonSet",
        .owner = OWNER_MANAGED,
        .expand = expand_daemonset,
        .fix = &fix_pods,
    },
    {
        .name = "Job",
        .groups = {"batch"},
        .kind = "Job",
        .owner = OWNER_MANAGED,
        .expand = expand_job,
        .fix = &fix_pods,
    },
    {
        .name = "CronJob",
        .groups = {"batch"},
        .kind = "CronJob",
        .owner = OWNER_MANAGED,
        .expand = expand_cronjob,
        .fix = &fix_pods,
    },
    {
        .name = "Pod",
        .groups = {""},
        .kind = "Pod",
        .owner = OWNER_MANAGED,
        .expand = expand_pod,
        .fix = &fix_pods,
    },
};

const size_t kinds_n = sizeof(kinds) / sizeof(kinds[0]);

static bool
in_groups(const struct kind *k, const char *group)
{
    for (size_t i = 0; i < 2 && k->groups[i]; i++)
        if (strcmp(k->groups[i], group) == 0)
            return true;
    return false;
}

const struct kind *
kinds_object(const char *group, const char *api, const char *kind,
             const struct kind **near)
{
    if (near)
        *near = NULL;
    for (size_t i = 0; i < kinds_n; i++) {
        const struct kind *k = &kinds[i];
        if (strcmp(k->kind, kind) != 0 || !in_groups(k, group))
            continue;
        if (k->api == NULL || (api && strcmp(api, k->api) == 0))
            return k;
        if (near && *near == NULL)
            *near = k;
    }
    return NULL;
}

static bool
container_has(const cJSON *c, const struct kind_mark *m)
{
    const cJSON *v;

    if (m->env && pod_env(c, m->env))
        return true;
    if (m->mount == NULL)
        return false;
    cJSON_ArrayForEach(v, json_get(c, "volumeMounts"))
    {
        const char *vol = json_string(v, "name");
        if (vol && strcmp(vol, m->mount) == 0)
            return true;
    }
    return false;
}

bool
kinds_marked(const struct kind_mark *m, const cJSON *pod)
{
    const char *v = m->label ? pod_label(pod, m->label) : NULL;
    const cJSON *c;

    if (v == NULL || (m->value && strcmp(v, m->value) != 0))
        return false;
    if (m->container == NULL)
        return true;
    cJSON_ArrayForEach(c, json_get(json_get(pod, "spec"), "containers"))
    {
        const char *name = json_string(c, "name");
        if (name && strcmp(name, m->container) == 0 && container_has(c, m))
            return true;
    }
    return false;
}

const struct kind *
kinds_pod(const cJSON *pod, const struct kind_mark **mark)
{
    for (size_t i = 0; i < kinds_n; i++)
        for (size_t j = 0; j < 2; j++)
            if (kinds_marked(&kinds[i].marks[j], pod)) {
                if (mark)
                    *mark = &kinds[i].marks[j];
                return &kinds[i];
            }
    return NULL;
}

const char *
kinds_count_env(const cJSON *pod)
{
    for (size_t i = 0; i < kinds_n; i++)
        for (size_t j = 0; kinds[i].count_env && j < 2; j++)
            if (kinds_marked(&kinds[i].marks[j], pod))
                return kinds[i].count_env;
    return NULL;
}

const struct kind_fix *
kinds_fix(enum owner owner)
{
    for (size_t i = 0; i < kinds_n; i++)
        if (kinds[i].owner == owner)
            return kinds[i].fix;
    return &fix_pods;
}
