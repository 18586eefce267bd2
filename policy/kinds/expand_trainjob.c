/*
 * expand_trainjob.c - a Trainer v2 TrainJob into the pods of its JobSet
 * (docs/facts/kubeflow-pods.md#trainer-v2 and
 * docs/facts/kubeflow-pods.md#trainjob-spec): the runtime's
 * replicated jobs, the trainer's fields on the "node" container, then the
 * user's overrides in whichever of the three API shapes they used:
 * podSpecOverrides (v2.0), podTemplateOverrides (v2.1), runtimePatches
 * (v2.2+).
 */
#include <stdio.h>
#include <string.h>

#include "policy/kinds/expand_internal.h"
#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"
#include "policy/kinds/podbuild.h"

#define TORCH_PORT "29500"

static bool
same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The runtime runtimeRef names, among those at hand. */
static const cJSON *
find_runtime(const struct runtimes *rt, const char *kind, const char *name,
             const char *ns)
{
    for (size_t i = 0; rt && i < rt->n; i++) {
        const cJSON *r = rt->items[i];
        const cJSON *meta = json_get(r, "metadata");
        const char *rns = json_string(meta, "namespace");

        if (!same(json_string(r, "kind"), kind) ||
            !same(json_string(meta, "name"), name))
            continue;
        /* A TrainingRuntime lives in the TrainJob's namespace. */
        if (strcmp(kind, "TrainingRuntime") == 0 && rns && *ns &&
            strcmp(rns, ns) != 0)
            continue;
        return r;
    }
    return NULL;
}

/* Replaces or appends array items that carry a "name", by name. */
static int
merge_named(cJSON *into, const cJSON *items)
{
    const cJSON *item;

    cJSON_ArrayForEach(item, items)
    {
        const char *name = json_string(item, "name");
        cJSON *copy = cJSON_Duplicate(item, true);
        int at = -1, i = 0;
        cJSON *old;

        if (copy == NULL)
            return -1;
        cJSON_ArrayForEach(old, into)
        {
            if (name && same(json_string(old, "name"), name))
                at = i;
            i++;
        }
        if (at >= 0 ? !cJSON_ReplaceItemInArray(into, at, copy)
                    : !cJSON_AddItemToArray(into, copy)) {
            cJSON_Delete(copy);
            return -1;
        }
    }
    return 0;
}

static cJSON *
array_member(cJSON *obj, const char *key)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (cJSON_IsArray(a))
        return a;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    return cJSON_AddArrayToObject(obj, key);
}

/* Object members of from copied over those of into, key by key. */
static int
merge_map(cJSON *into, const cJSON *from)
{
    const cJSON *kv;

    cJSON_ArrayForEach(kv, from)
    {
        cJSON *copy = cJSON_Duplicate(kv, true);
        cJSON_DeleteItemFromObjectCaseSensitive(into, kv->string);
        if (copy == NULL || !cJSON_AddItemToObject(into, kv->string, copy)) {
            cJSON_Delete(copy);
            return -1;
        }
    }
    return 0;
}

static int
replace_member(cJSON *obj, const char *key, const cJSON *value)
{
    cJSON *copy = cJSON_Duplicate(value, true);

    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    if (copy == NULL || !cJSON_AddItemToObject(obj, key, copy)) {
        cJSON_Delete(copy);
        return -1;
    }
    return 0;
}

/* A container override: env by name, volumeMounts appended. */
static int
override_containers(cJSON *pod_spec, const char *field, const cJSON *list)
{
    const cJSON *o;

    cJSON_ArrayForEach(o, list)
    {
        cJSON *c;
        cJSON_ArrayForEach(c, json_get(pod_spec, field))
        {
            if (!same(json_string(c, "name"), json_string(o, "name")))
                continue;
            if ((json_get(o, "env") &&
                 merge_named(array_member(c, "env"), json_get(o, "env")) < 0) ||
                (json_get(o, "volumeMounts") &&
                 merge_named(array_member(c, "volumeMounts"),
                             json_get(o, "volumeMounts")) < 0))
                return -1;
        }
    }
    return 0;
}

/* The pod spec fields an override may set, in any of the three shapes. */
static int
override_spec(cJSON *pod, const cJSON *o)
{
    static const char *const replaced[] = {
        "affinity", "serviceAccountName", "securityContext",
        "terminationGracePeriodSeconds", NULL};
    static const char *const appended[] = {
        "tolerations", "volumes", "schedulingGates", "imagePullSecrets", NULL};
    cJSON *spec = podbuild_object(pod, "spec");

    if (spec == NULL)
        return -1;
    if (cJSON_IsObject(json_get(o, "nodeSelector")) &&
        merge_map(podbuild_object(spec, "nodeSelector"),
                  json_get(o, "nodeSelector")) < 0)
        return -1;
    for (const char *const *f = replaced; *f; f++)
        if (json_get(o, *f) && replace_member(spec, *f, json_get(o, *f)) < 0)
            return -1;
    for (const char *const *f = appended; *f; f++)
        if (cJSON_IsArray(json_get(o, *f)) &&
            merge_named(array_member(spec, *f), json_get(o, *f)) < 0)
            return -1;
    if (override_containers(spec, "containers", json_get(o, "containers")) <
            0 ||
        override_containers(spec, "initContainers",
                            json_get(o, "initContainers")) < 0)
        return -1;
    return 0;
}

static int
override_metadata(cJSON *pod, const cJSON *meta)
{
    cJSON *m = podbuild_object(pod, "metadata");

    if (cJSON_IsObject(json_get(meta, "labels")) &&
        merge_map(podbuild_object(m, "labels"), json_get(meta, "labels")) < 0)
        return -1;
    if (cJSON_IsObject(json_get(meta, "annotations")) &&
        merge_map(podbuild_object(m, "annotations"),
                  json_get(meta, "annotations")) < 0)
        return -1;
    return 0;
}

static bool
targets(const cJSON *override, const char *role)
{
    const cJSON *t;

    cJSON_ArrayForEach(t, json_get(override, "targetJobs"))
    {
        if (same(json_string(t, "name"), role))
            return true;
    }
    return false;
}

/* v2.0 podSpecOverrides and v2.1 podTemplateOverrides. */
static int
apply_overrides(const cJSON *spec, struct pod_group *g)
{
    const cJSON *o;

    cJSON_ArrayForEach(o, json_get(spec, "podSpecOverrides"))
    {
        if (targets(o, g->role) && override_spec(g->pod, o) < 0)
            return -1;
    }
    cJSON_ArrayForEach(o, json_get(spec, "podTemplateOverrides"))
    {
        if (!targets(o, g->role))
            continue;
        if (override_metadata(g->pod, json_get(o, "metadata")) < 0 ||
            (json_get(o, "spec") &&
             override_spec(g->pod, json_get(o, "spec")) < 0))
            return -1;
    }
    return 0;
}

/* v2.2+ runtimePatches: a patch of the runtime's JobSet template. */
static int
apply_runtime_patches(const cJSON *spec, struct pod_group *g)
{
    const cJSON *p;

    cJSON_ArrayForEach(p, json_get(spec, "runtimePatches"))
    {
        const cJSON *tmpl =
            json_get(json_get(p, "trainingRuntimeSpec"), "template");
        const cJSON *rj;
        cJSON_ArrayForEach(rj,
                           json_get(json_get(tmpl, "spec"), "replicatedJobs"))
        {
            const cJSON *pt = json_get(
                json_get(json_get(rj, "template"), "spec"), "template");
            if (!same(json_string(rj, "name"), g->role))
                continue;
            if (override_metadata(g->pod, json_get(pt, "metadata")) < 0 ||
                (json_get(pt, "spec") &&
                 override_spec(g->pod, json_get(pt, "spec")) < 0))
                return -1;
        }
    }
    return 0;
}

/* spec.trainer onto the "node" container: the fields replace the runtime's. */
static int
apply_trainer(cJSON *pod, const cJSON *trainer)
{
    static const char *const replaced[] = {"image", "command", "args", NULL};
    cJSON *c = podbuild_container(pod, TRAINER_NODE);
    const cJSON *res = json_get(trainer, "resourcesPerNode");

    if (c == NULL)
        return 0;
    for (const char *const *f = replaced; *f; f++)
        if (json_get(trainer, *f) &&
            replace_member(c, *f, json_get(trainer, *f)) < 0)
            return -1;
    if (cJSON_IsArray(json_get(trainer, "env")) &&
        merge_named(array_member(c, "env"), json_get(trainer, "env")) < 0)
        return -1;
    /* v2.0-v2.2 replace the container's resources, v2.3 merges them; for
     * the GPU and EFA counts that are both set here the two agree. */
    if (cJSON_IsObject(res)) {
        cJSON *r = podbuild_object(c, "resources");
        if (r == NULL ||
            (cJSON_IsObject(json_get(res, "limits")) &&
             merge_map(podbuild_object(r, "limits"), json_get(res, "limits")) <
                 0) ||
            (cJSON_IsObject(json_get(res, "requests")) &&
             merge_map(podbuild_object(r, "requests"),
                       json_get(res, "requests")) < 0))
            return -1;
    }
    return 0;
}

/* What the Torch plugin sets on the node container. */
static int
torch_env(cJSON *pod, const char *job, long nodes, const char *nproc)
{
    cJSON *c = podbuild_container(pod, TRAINER_NODE);
    char n[24], master[320];

    if (c == NULL)
        return 0;
    snprintf(n, sizeof(n), "%ld", nodes);
    snprintf(master, sizeof(master), "%s-node-0-0.%s", job, job);
    return podbuild_env(c, "PET_NNODES", n) < 0 ||
                   podbuild_env(c, "PET_NPROC_PER_NODE", nproc) < 0 ||
                   podbuild_env(c, "PET_MASTER_ADDR", master) < 0 ||
                   podbuild_env(c, "PET_MASTER_PORT", TORCH_PORT) < 0
               ? -1
               : 0;
}

/* The "node" pod when the runtime is not at hand: the TrainJob's own. */
static cJSON *
bare_node_pod(const struct expansion *e)
{
    cJSON *tmpl = cJSON_Parse(
        "{\"spec\":{\"containers\":[{\"name\":\"" TRAINER_NODE "\"}]}}");
    cJSON *pod =
        tmpl ? podbuild_from_template(tmpl, e->namespace, e->name) : NULL;
    cJSON_Delete(tmpl);
    return pod;
}

static int
label_jobset(cJSON *pod, const struct expansion *e, const char *rj)
{
    return podbuild_label(pod, LABEL_JOBSET, e->name) < 0 ||
                   podbuild_label(pod, LABEL_REPLICATED_JOB, rj) < 0
               ? -1
               : 0;
}

/* numProcPerNode as the Torch plugin passes it: a number or "auto". */
static void
nproc_text(const cJSON *trainer, const cJSON *ml, char *buf, size_t len)
{
    const cJSON *v = json_get(trainer, "numProcPerNode");

    if (v == NULL)
        v = json_get(json_get(ml, "torch"), "numProcPerNode");
    if (v == NULL)
        v = json_get(json_get(ml, "mpi"), "numProcPerNode");
    if (cJSON_IsNumber(v))
        snprintf(buf, len, "%.0f", v->valuedouble);
    else if (cJSON_IsString(v))
        snprintf(buf, len, "%s", v->valuestring);
    else
        snprintf(buf, len, "auto");
}

/* The ssh Secret the MPI plugin mounts into the "node" container. */
static int
mpi_ssh(cJSON *pod, const struct expansion *e, const cJSON *mpi)
{
    cJSON *c = podbuild_container(pod, TRAINER_NODE);
    const char *at = json_string(mpi, "sshAuthMountPath");
    cJSON *vols = NULL, *mounts = NULL, *vol, *mount;
    char secret[300];
    int rc = -1;

    if (c == NULL)
        return 0;
    snprintf(secret, sizeof(secret), "%s-mpi-ssh-auth", e->name);
    /* cJSON_AddItemToArray() fails only on NULL, checked first. */
    if ((vols = cJSON_CreateArray()) == NULL ||
        (mounts = cJSON_CreateArray()) == NULL ||
        (vol = cJSON_CreateObject()) == NULL ||
        !cJSON_AddItemToArray(vols, vol) ||
        (mount = cJSON_CreateObject()) == NULL ||
        !cJSON_AddItemToArray(mounts, mount) ||
        !cJSON_AddStringToObject(vol, "name", TRAINER_MPI_SSH_VOLUME) ||
        !cJSON_AddStringToObject(cJSON_AddObjectToObject(vol, "secret"),
                                 "secretName", secret) ||
        !cJSON_AddStringToObject(mount, "name", TRAINER_MPI_SSH_VOLUME) ||
        !cJSON_AddStringToObject(mount, "mountPath", at ? at : "/root/.ssh"))
        goto out;
    if (merge_named(array_member(podbuild_object(pod, "spec"), "volumes"),
                    vols) == 0 &&
        merge_named(array_member(c, "volumeMounts"), mounts) == 0)
        rc = 0;
out:
    cJSON_Delete(vols);
    cJSON_Delete(mounts);
    return rc;
}

/* The OpenMPI env of the launcher's "node" container (mpi.go). */
static int
mpi_launcher_env(cJSON *pod, long slots)
{
    cJSON *c = podbuild_container(pod, TRAINER_NODE);
    char n[24];

    if (c == NULL)
        return 0;
    snprintf(n, sizeof(n), "%ld", slots);
    return podbuild_env(c, "OMPI_MCA_orte_default_hostfile",
                        "/etc/mpi/hostfile") < 0 ||
                   podbuild_env(c, "OMPI_MCA_orte_keep_fqdn_hostnames",
                                "true") < 0 ||
                   podbuild_env(c, "OMPI_MCA_orte_set_default_slots", n) < 0 ||
                   podbuild_env(c, "OMPI_MCA_plm_rsh_args",
                                "-o ConnectionAttempts=10") < 0
               ? -1
               : 0;
}

/*
 * An MPI runtime (MPI, DeepSpeed): slots per node are numProcPerNode,
 * or the GPUs of a node when that is 1 (EnforceMLPolicy); the launcher
 * gets them in its env. Its "node" pods carry no size of their own.
 */
static int
mpi_finish(const cJSON *trainer, const cJSON *mpi, struct expansion *e)
{
    long slots = podbuild_long(trainer, "numProcPerNode",
                               podbuild_long(mpi, "numProcPerNode", 1));
    struct pod_group *launcher = NULL;

    for (size_t i = 0; i < e->n_groups; i++) {
        struct workload w;
        if (strcmp(e->groups[i].role, TRAINER_LAUNCHER) == 0)
            launcher = &e->groups[i];
        if (strcmp(e->groups[i].role, TRAINER_NODE) != 0 ||
            json_get(trainer, "numProcPerNode"))
            continue;
        workload_read(e->groups[i].pod, &w);
        if (slots == 1 && w.gpus > 1)
            slots = w.gpus;
    }
    e->job.procs = slots;
    return launcher ? mpi_launcher_env(launcher->pod, slots) : 0;
}

static int
runtime_groups(const cJSON *runtime, const cJSON *trainer, bool torch,
               const char *nproc, struct expansion *e)
{
    const cJSON *mpi =
        json_get(json_get(json_get(runtime, "spec"), "mlPolicy"), "mpi");
    bool as_node = cJSON_IsTrue(json_get(mpi, "runLauncherAsNode"));
    const cJSON *rj;

    cJSON_ArrayForEach(
        rj, json_get(json_get(json_get(json_get(runtime, "spec"), "template"),
                              "spec"),
                     "replicatedJobs"))
    {
        const char *name = json_string(rj, "name");
        const cJSON *job_spec = json_get(json_get(rj, "template"), "spec");
        bool node = same(name, TRAINER_NODE);
        bool mpi_node = mpi && (node || same(name, TRAINER_LAUNCHER));
        long replicas = node ? e->job.nodes
                             : podbuild_long(rj, "replicas", 1) *
                                   podbuild_long(job_spec, "parallelism", 1);
        cJSON *pod = podbuild_from_template(json_get(job_spec, "template"),
                                            e->namespace, e->name);

        /* runLauncherAsNode: the launcher is one of the nodes. */
        if (node && as_node && replicas > 1)
            replicas--;
        if (pod == NULL || label_jobset(pod, e, name ? name : "") < 0 ||
            ((node || (mpi_node && as_node)) &&
             apply_trainer(pod, trainer) < 0) ||
            (mpi_node && mpi_ssh(pod, e, mpi) < 0) ||
            (node && torch &&
             torch_env(pod, e->name, e->job.nodes, nproc) < 0)) {
            cJSON_Delete(pod);
            return -1;
        }
        if (podbuild_group(e, name ? name : "", replicas, pod) < 0)
            return -1;
    }
    return mpi ? mpi_finish(trainer, mpi, e) : 0;
}

int
expand_trainjob(const cJSON *obj, const struct runtimes *rt,
                struct expansion *e)
{
    const cJSON *spec = json_get(obj, "spec");
    const cJSON *trainer = json_get(spec, "trainer");
    const cJSON *ref = json_get(spec, "runtimeRef");
    const char *kind = json_string(ref, "kind");
    const cJSON *runtime, *ml;
    char nproc[32];

    e->job.owner = OWNER_TRAINJOB;
    e->job.runtime = json_string(ref, "name");
    if (kind == NULL)
        kind = "ClusterTrainingRuntime";
    runtime = find_runtime(rt, kind, e->job.runtime, e->namespace);
    ml = json_get(json_get(runtime, "spec"), "mlPolicy");
    e->job.nodes =
        podbuild_long(trainer, "numNodes", podbuild_long(ml, "numNodes", 1));
    nproc_text(trainer, ml, nproc, sizeof(nproc));
    e->job.procs = podbuild_count(trainer, "numProcPerNode");
    if (e->job.procs == 0)
        e->job.procs = podbuild_count(json_get(ml, "torch"), "numProcPerNode");
    if (e->job.procs == 0)
        e->job.procs = podbuild_count(json_get(ml, "mpi"), "numProcPerNode");
    if (runtime) {
        /* Only the Torch plugin sets PET_*; an MPI runtime does not. */
        bool torch = json_get(ml, "mpi") == NULL;
        if (runtime_groups(runtime, trainer, torch, nproc, e) < 0)
            return -1;
    } else {
        cJSON *pod = bare_node_pod(e);
        e->job.runtime_missing = true;
        if (pod == NULL || label_jobset(pod, e, TRAINER_NODE) < 0 ||
            apply_trainer(pod, trainer) < 0 ||
            torch_env(pod, e->name, e->job.nodes, nproc) < 0) {
            cJSON_Delete(pod);
            return -1;
        }
        if (podbuild_group(e, TRAINER_NODE, e->job.nodes, pod) < 0 ||
            podbuild_note(e,
                          "%s '%s' is not in the input: judged from the "
                          "TrainJob's own fields, as a Torch job",
                          kind, e->job.runtime ? e->job.runtime : "?") < 0)
            return -1;
    }
    for (size_t i = 0; i < e->n_groups; i++)
        if (apply_overrides(spec, &e->groups[i]) < 0 ||
            apply_runtime_patches(spec, &e->groups[i]) < 0)
            return -1;
    return 0;
}
