/*
 * kinds.c - see kinds.h. The table: one row per kind, governed kinds
 * first (workload_read() takes the first row whose marks a pod carries).
 *
 * The marks are the controllers' own labels and env (policy/k8s/labels.h;
 * docs/facts/kubeflow-pods.md), the ones the expanders stamp on the pods
 * they build.
 */
#include "policy/kinds/kinds.h"

#include <string.h>

#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"
#include "policy/kinds/expand_internal.h"
#include "policy/kinds/frameworks.h"

/* Plain pods: "use 2 pods x 8 GPUs", "request nvidia.com/gpu: 8 per pod". */
static const struct kind_fix fix_pods = {0};

/* Plain pods of a job whose size they do not say: "use fewer pods with
 * all 8 GPUs each" (advice.c). */
static const struct kind_fix fix_pods_sizeless = {
    .sizeless = true,
    .pods = "pods",
};

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

/* kubeflow.org/v1: Training Operator 1.x's; v2beta1: mpi-operator v2's;
 * v1alpha2: mpi-operator v0.2's, a framework row below. v1alpha1 pods
 * carry labels no controller of today sets, and the webhook does not
 * govern them either. */
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
        .job_level = true,
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
        .job_level = true,
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
        .job_level = true,
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
        .job_level = true,
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

    /* Governed by what their pods are, as far as the policy's
     * frameworks switch says (off, warn, enforce); a pod labelled
     * topogate.io/managed: "true" is governed as any opted-in pod. */
    {
        /* mpi-operator v0.2 (kubeflow/mpi-operator
         * pkg/controllers/v1alpha2/mpi_job_controller.go at 8943cf73:
         * labels group_name, mpi_job_name, mpi_role_type). */
        .name = "MPIJob v1alpha2 (mpi-operator v0.2)",
        .groups = {"kubeflow.org"},
        .kind = "MPIJob",
        .api = "kubeflow.org/v1alpha2",
        .other_api = MPI_OTHER_API,
        .owner = OWNER_FRAMEWORK,
        .marks = {{.label = "mpi_job_name"}},
        .framework = FRAMEWORK_MPI_V1ALPHA2,
        .read = framework_read_mpi_v1alpha2,
        .expand = expand_mpijob_v1alpha2,
        .fix = &fix_mpijob,
    },
    {
        /* With its mpi or pytorch plugin, known by the port each opens
         * on every container (frameworks.h); without one, a Volcano
         * pod is governed only where opted in. */
        .name = "Volcano Job (mpi, pytorch plugin)",
        .groups = {"batch.volcano.sh"},
        .kind = "Job",
        .owner = OWNER_FRAMEWORK,
        .marks = {{.label = "volcano.sh/job-name", .port = VOLCANO_MPI_PORT},
                  {.label = "volcano.sh/job-name",
                   .port = VOLCANO_PYTORCH_PORT}},
        .framework = FRAMEWORK_VOLCANO,
        .read = framework_read_volcano,
        .expand = expand_volcano_job,
        .fix = &fix_pods_sizeless,
    },
    {
        /* KubeRay labels every pod with its cluster (ray-project/kuberay
         * ray-operator/controllers/ray/common/pod.go labelPod,
         * utils/constant.go RayClusterLabelKey) and sets no size on it:
         * the size is the object's worker groups, judged whole. */
        .name = "RayJob",
        .groups = {"ray.io"},
        .kind = "RayJob",
        .owner = OWNER_FRAMEWORK,
        .marks = {{.label = "ray.io/cluster"}},
        .framework = FRAMEWORK_RAY,
        .expand = expand_ray,
        .job_level = true,
        .fix = &fix_pods,
    },
    {
        .name = "RayCluster",
        .groups = {"ray.io"},
        .kind = "RayCluster",
        .owner = OWNER_FRAMEWORK,
        .marks = {{.label = "ray.io/cluster"}},
        .framework = FRAMEWORK_RAY,
        .expand = expand_ray,
        .job_level = true,
        .fix = &fix_pods,
    },
    {
        /* Its pods carry the set's name and the group's size
         * (kubernetes-sigs/lws api/leaderworkerset/v1 SetNameLabelKey,
         * SizeAnnotationKey). */
        .name = "LeaderWorkerSet",
        .groups = {"leaderworkerset.x-k8s.io"},
        .kind = "LeaderWorkerSet",
        .owner = OWNER_FRAMEWORK,
        .marks = {{.label = "leaderworkerset.sigs.k8s.io/name"}},
        .framework = FRAMEWORK_LWS,
        .read = framework_read_lws,
        .expand = expand_lws,
        .fix = &fix_pods,
    },
    {
        /* One that Trainer did not make (TrainJob's row comes first). */
        .name = "JobSet",
        .groups = {"jobset.x-k8s.io"},
        .kind = "JobSet",
        .owner = OWNER_FRAMEWORK,
        .marks = {{.label = LABEL_JOBSET}},
        .framework = FRAMEWORK_JOBSET,
        .read = framework_read_jobset,
        .expand = expand_jobset,
        .fix = &fix_pods_sizeless,
    },
    {
        /* KEP-4671 gang scheduling: a pod names its PodGroup
         * (PodSpec.schedulingGroup, Kubernetes 1.36 OpenAPI) or, in
         * 1.35, its Workload's pod group (PodSpec.workloadRef). */
        .name = "PodGroup (gang)",
        .groups = {"scheduling.k8s.io"},
        .kind = "PodGroup",
        .owner = OWNER_FRAMEWORK,
        .marks = {{.field = "schedulingGroup"}, {.field = "workloadRef"}},
        .framework = FRAMEWORK_GANG,
        .read = framework_read_gang,
        .not_expanded = "no pods of its own: its pods name it in "
                        "spec.schedulingGroup",
        .skip = true,
        .fix = &fix_pods_sizeless,
    },
    {
        .name = "Workload (gang)",
        .groups = {"scheduling.k8s.io"},
        .kind = "Workload",
        .owner = OWNER_NONE,
        .not_expanded = "no pods of its own: its pods name it in "
                        "spec.workloadRef",
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

static bool
has_port(const cJSON *pod, const char *port)
{
    const cJSON *c, *p;

    cJSON_ArrayForEach(c, json_get(json_get(pod, "spec"), "containers"))
    {
        cJSON_ArrayForEach(p, json_get(c, "ports"))
        {
            const char *name = json_string(p, "name");
            if (name && strcmp(name, port) == 0)
                return true;
        }
    }
    return false;
}

bool
kinds_marked(const struct kind_mark *m, const cJSON *pod)
{
    const char *v = m->label ? pod_label(pod, m->label) : NULL;
    const cJSON *c;

    if (m->label == NULL && m->field)
        return cJSON_IsObject(json_get(json_get(pod, "spec"), m->field));
    if (v == NULL || (m->value && strcmp(v, m->value) != 0))
        return false;
    if (m->port && !has_port(pod, m->port))
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
            if ((kinds[i].marks[j].label || kinds[i].marks[j].field) &&
                kinds_marked(&kinds[i].marks[j], pod)) {
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

const struct kind_fix *
kinds_fix_for(const struct workload *w)
{
    if (w->owner == OWNER_FRAMEWORK && w->kind)
        return w->kind->fix;
    return kinds_fix(w->owner);
}

bool
kinds_job(const char *group, const char *kind)
{
    for (size_t i = 0; i < kinds_n; i++)
        if (kinds[i].job_level && strcmp(kinds[i].kind, kind) == 0 &&
            in_groups(&kinds[i], group))
            return true;
    return false;
}
