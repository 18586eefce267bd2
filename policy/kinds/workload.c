/*
 * workload.c - recognising Kubeflow training pods and their job shape.
 *
 * Labels and env names are the operators' own constants (see
 * docs/facts/kubeflow-pods.md).
 */
#include "policy/kinds/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/labels.h"
#include "policy/kinds/kinds.h"
#include "policy/kinds/launch.h"
#include "policy/k8s/pod.h"

const char *
owner_name(enum owner owner)
{
    static const char *const names[] = {
        [OWNER_NONE] = "none",           [OWNER_PYTORCHJOB] = "PyTorchJob",
        [OWNER_MPIJOB] = "MPIJob",       [OWNER_TRAINJOB] = "TrainJob",
        [OWNER_MANAGED] = "managed pod", [OWNER_FRAMEWORK] = "framework pod",
    };
    return names[owner];
}

static const cJSON *
spec_field(const cJSON *pod, const char *field)
{
    const cJSON *spec = json_get(pod, "spec");
    return json_get(spec, field);
}

static bool
is_true(const char *s)
{
    return s && strcmp(s, "true") == 0;
}

/*
 * Counts one resource in a container, remembering the first bad value
 * and the first null.
 */
static struct pod_quantity
count_or_note(const cJSON *c, const struct pod_maps *maps,
              const char *resource, struct workload *w)
{
    struct pod_quantity q = pod_quantity_in(maps, resource);

    if (q.status == COUNT_INVALID && !w->bad_value) {
        w->bad_container = json_string(c, "name");
        w->bad_value = q.value;
        w->bad_resource = resource;
    }
    if (q.null_map && !w->null_container) {
        const char *name = json_string(c, "name");
        w->null_container = name ? name : "?";
        w->null_resource = resource;
        w->null_map = q.null_map;
        w->null_other = q.value;
    }
    return q;
}

/*
 * Effective GPUs, as the scheduler counts them: app containers and native
 * sidecars run together; other init containers run one at a time first.
 */
static void
read_resources(const cJSON *pod, struct workload *w)
{
    const cJSON *c;
    long running = 0, init_max = 0;

    cJSON_ArrayForEach(c, spec_field(pod, "containers"))
    {
        struct pod_maps maps = pod_maps(c);
        struct pod_quantity efa;
        long gpus = count_or_note(c, &maps, RESOURCE_GPU, w).count;

        running += gpus;
        /* After the GPU count: the first bad or null value is noted. */
        efa = count_or_note(c, &maps, RESOURCE_EFA, w);
        w->efa += efa.count;
        w->efa_named = w->efa_named || efa.value != NULL;
    }
    cJSON_ArrayForEach(c, spec_field(pod, "initContainers"))
    {
        struct pod_maps maps = pod_maps(c);
        long n = count_or_note(c, &maps, RESOURCE_GPU, w).count;
        if (pod_is_sidecar(c))
            running += n;
        else if (n > init_max)
            init_max = n;
    }
    w->gpus = running > init_max ? running : init_max;
    w->any_gpu = running > 0 || init_max > 0;
}

/*
 * The first row of the table of kinds (kinds.c) whose marks the pod
 * carries names its owner, where that kind is governed; any other pod
 * is governed only where it opts in.
 */
static enum owner
read_owner(const cJSON *pod, struct workload *w)
{
    const struct kind_mark *mark;
    const struct kind *k = kinds_pod(pod, &mark);

    if (k && k->owner == OWNER_MPIJOB) {
        const char *rtype = pod_label(pod, LABEL_REPLICA_TYPE);
        const char *role = pod_label(pod, LABEL_JOB_ROLE);
        w->launcher = (rtype && strcmp(rtype, "launcher") == 0) ||
                      (role && strcmp(role, "launcher") == 0);
    }
    if (k && mark->mpi) {
        const char *rj = pod_label(pod, LABEL_REPLICATED_JOB);
        w->trainer_mpi = true;
        /* runLauncherAsNode: a launcher with GPUs runs ranks too. */
        w->launcher = strcmp(rj, TRAINER_LAUNCHER) == 0 && !w->any_gpu;
        w->starts_ranks = strcmp(rj, TRAINER_LAUNCHER) == 0;
    }
    if (k && k->framework != FRAMEWORK_NONE) {
        w->kind = k;
        w->framework = k->framework;
    }
    if (k && k->owner != OWNER_MANAGED && k->owner != OWNER_NONE &&
        k->owner != OWNER_FRAMEWORK)
        return k->owner;
    /* The label keeps its meaning: governed in the namespace's mode. */
    if (is_true(pod_label(pod, LABEL_MANAGED)))
        return OWNER_MANAGED;
    if (w->kind)
        return OWNER_FRAMEWORK;
    return OWNER_NONE;
}

/* The container that carries the job's env: the first one that has it. */
static const cJSON *
job_env_container(const cJSON *pod)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, spec_field(pod, "containers"))
        if (pod_env(c, "PET_NNODES"))
            return c;
    return NULL;
}

/* The first literal value of env name among the pod's containers. */
static const char *
containers_env(const cJSON *pod, const char *name)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, spec_field(pod, "containers"))
    {
        const char *v = pod_env_value(c, name);
        if (v)
            return v;
    }
    return NULL;
}

static void
read_shape(const cJSON *pod, struct workload *w)
{
    const cJSON *c = job_env_container(pod);
    const char *nnodes = pod_env_value(c, "PET_NNODES");
    const char *nproc = pod_env_value(c, "PET_NPROC_PER_NODE");
    const char *colon, *count_env;
    long n;

    w->pods = 1;
    /* Elastic jobs say "min:max"; the job can grow to max. */
    if (nnodes && (colon = strchr(nnodes, ':')) != NULL) {
        nnodes = colon + 1;
        w->elastic = true;
    }
    if ((n = pod_text_count(nnodes)) > 0) {
        w->pods = n;
        w->pods_known = true;
    }
    /* Else a kind's own count (a JAXJob's NUM_PROCESSES: kinds.c). */
    if (!w->pods_known && (count_env = kinds_count_env(pod)) != NULL &&
        (n = pod_text_count(containers_env(pod, count_env))) > 0) {
        w->pods = n;
        w->pods_known = true;
    }
    /* mpi-operator and Trainer's MPI plugin set no size on workers, and
     * there is always more than one process per job; count them as
     * multi-pod. */
    if ((w->owner == OWNER_MPIJOB || w->trainer_mpi) && !w->pods_known &&
        !w->launcher)
        w->pods = 2;
    /* Trainer's MPI plugin: the slots of the hostfile, on the launcher. */
    if (nproc == NULL && w->trainer_mpi)
        nproc = containers_env(pod, "OMPI_MCA_orte_set_default_slots");
    /* "auto" and "gpu" mean one process per GPU of the pod. */
    n = pod_text_count(nproc);
    w->procs = n > 0 ? n : (w->gpus > 0 ? w->gpus : 1);
    w->procs_from_gpus = n <= 0;
    w->has_master = pod_env(c, "MASTER_ADDR") != NULL ||
                    pod_env(c, "PET_MASTER_ADDR") != NULL;
}

static bool
has_dra_claims(const cJSON *pod)
{
    const cJSON *c;

    if (cJSON_GetArraySize(spec_field(pod, "resourceClaims")) > 0)
        return true;
    cJSON_ArrayForEach(c, spec_field(pod, "containers"))
    {
        const cJSON *res = json_get(c, "resources");
        if (cJSON_GetArraySize(json_get(res, "claims")) > 0)
            return true;
    }
    return false;
}

/*
 * A pod joins a ComputeDomain by claiming its IMEX channel: a
 * ResourceClaimTemplate the DRA driver makes under the name the
 * ComputeDomain gives in spec.channel.resourceClaimTemplate.name
 * (resource.nvidia.com ComputeDomain CRD). The pod alone does not say
 * which template that was, so the claim is known by its names: the
 * driver's examples and every public manifest read call it a channel
 * ("imex-channel-0", "<domain>-channel", "compute-domain-channel").
 * A GPU, RDMA NIC or other DRA claim is not one.
 */
/* Whether s (may be NULL) holds word, ignoring case. */
static bool
holds(const char *s, const char *word)
{
    return s && strcasestr(s, word) != NULL;
}

bool
workload_channel_claim(const cJSON *claim)
{
    static const char *const fields[] = {"name", "resourceClaimTemplateName",
                                         "resourceClaimName"};
    static const char *const words[] = {"channel", "imex", "compute-domain",
                                        "computedomain"};
    const cJSON *source = json_get(claim, "source"); /* before 1.31 */

    for (size_t f = 0; f < 3; f++)
        for (size_t i = 0; i < 4; i++)
            if (holds(json_string(claim, fields[f]), words[i]) ||
                holds(json_string(source, fields[f]), words[i]))
                return true;
    return false;
}

static bool
has_channel_claim(const cJSON *pod)
{
    const cJSON *claim;

    cJSON_ArrayForEach(claim, spec_field(pod, "resourceClaims"))
    {
        if (workload_channel_claim(claim))
            return true;
    }
    return false;
}

/*
 * IMEX channels a node daemon gives the pod without DRA (providers that
 * run the IMEX daemon on the host): the job then says so in its env,
 * NVIDIA_IMEX_CHANNELS naming the channels (NVIDIA container toolkit) or
 * NCCL_MNNVL_ENABLE=1 asking NCCL for multi-node NVLink (NCCL's env
 * documentation). Evidence the pods mean to meet over NVLink, as a
 * channel claim is.
 */
static bool
has_imex_env(const cJSON *pod)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, spec_field(pod, "containers"))
    {
        const char *mnnvl = pod_env_value(c, "NCCL_MNNVL_ENABLE");
        if (pod_env(c, "NVIDIA_IMEX_CHANNELS") ||
            (mnnvl && strcmp(mnnvl, "1") == 0))
            return true;
    }
    return false;
}

/*
 * A shape the first GPU container's command fixes: torchrun's flags beat
 * PET_NPROC_PER_NODE and PET_NNODES (the env is only their default), and
 * mpirun's -np and ranks per node beat the job's slots. A fix that
 * changes the spec alone would then run as before, or fail to map.
 */
static void
read_launch_fixed(const cJSON *pod, struct workload *w)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, spec_field(pod, "containers"))
    {
        long n;
        struct launch l;

        if (pod_count(c, RESOURCE_GPU, &n) != COUNT_OK || n <= 0)
            continue;
        launch_read(c, &l);
        if (launch_hardcoded(&l))
            snprintf(w->launch_fixed, sizeof(w->launch_fixed), "%s", l.written);
        return;
    }
}

void
workload_read(const cJSON *pod, struct workload *w)
{
    memset(w, 0, sizeof(*w));
    read_resources(pod, w);
    w->owner = read_owner(pod, w);
    read_shape(pod, w);
    /* A framework's own size marks, where PET_NNODES said nothing. */
    if (w->kind && w->kind->read && !w->pods_known)
        w->kind->read(pod, w);
    w->has_claims = has_dra_claims(pod);
    w->cd_channel = has_channel_claim(pod);
    w->imex_env = has_imex_env(pod);
    read_launch_fixed(pod, w);
}

/*
 * What the apiserver does with a null quantity, as read in its code
 * (kubernetes/kubernetes at 009f4971 and the v1 validation it shares):
 * - a Pod, or a built-in kind's pod template: Quantity.UnmarshalJSON
 *   reads "null" as 0 (staging/src/k8s.io/apimachinery/pkg/api/resource/
 *   quantity.go); SetDefaults_Pod copies a limit into requests only
 *   where requests lack the key (pkg/apis/core/v1/defaults.go); and
 *   ValidateResourceRequirements refuses an extended resource whose
 *   request differs from its limit ("must be equal to nvidia.com/gpu
 *   limit of 0") or that has a request and no limit ("Limit must be set
 *   for non overcommitable resources"), pkg/apis/core/validation.
 * - a custom resource (TrainJob, PyTorchJob, MPIJob): a null whose
 *   schema is not nullable and has no default is dropped before
 *   defaulting (k8s.io/apiextensions-apiserver pkg/apiserver/schema/
 *   defaulting/prunenulls.go, PruneNonNullableNullsWithoutDefaults);
 *   its pods then carry the other map alone.
 * So a null limit beside a request is refused either way (request 8,
 * limit 0; or request 8, no limit), and a null alone means no device.
 */
int
workload_warn_null(const struct workload *w, struct decision *d)
{
    const char *name = w->null_container, *map = w->null_map;
    const char *res = w->null_resource;
    bool in_limits = strcmp(map, "limits") == 0;
    bool alone = w->null_other == NULL;
    char *other = NULL;
    int rc;

    if (!alone &&
        (other = cJSON_IsString(w->null_other)
                     ? strdup(w->null_other->valuestring)
                     : json_text(w->null_other)) == NULL)
        return -1;
    if (!alone)
        rc = decision_warn(d,
                           "container '%s': %s %s is null (no value); "
                           "topogate read %s %s: %s",
                           name, map, res, in_limits ? "requests" : "limits",
                           res, other);
    else
        rc = decision_warn(d,
                           "container '%s': %s %s is null (no value); "
                           "topogate read it as absent",
                           name, map, res);
    free(other);
    if (rc < 0)
        return -1;
    if (alone)
        return decision_warn(d, "the apiserver reads a null quantity as 0 "
                                "(a custom resource drops it): no device; "
                                "give a number");
    if (in_limits)
        return decision_warn(d, "the apiserver refuses it: a null reads as "
                                "0 (a custom resource drops it) and requests "
                                "must equal limits; set the limit");
    return decision_warn(d, "a Pod with it is refused: a null reads as 0 and "
                            "requests must equal limits (a custom resource "
                            "drops it); remove it");
}

bool
workload_asks_gpu(const cJSON *pod)
{
    struct workload w;

    workload_read(pod, &w);
    return w.any_gpu || w.bad_value;
}

long
workload_world(const struct workload *w)
{
    return w->pods * w->procs;
}
