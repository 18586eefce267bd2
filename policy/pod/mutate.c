/*
 * mutate.c - JSON Patch ops for a governed pod, built one by one.
 *
 * Each op adds what is missing, creating a parent that does not exist in
 * the same op (RFC 6902 "add" needs the parent). A value the user set is
 * kept, and a warning says so when it differs from ours, unless the policy
 * says override. GPU-less containers and init containers are never touched.
 */
#include "policy/pod/mutate.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "policy/kinds/launch.h"
#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"
#include "base/pointer.h"
#include "policy/k8s/quantity.h"
#include "policy/pod/gpudirect.h"
#include "policy/pod/slowenv.h"
#include "policy/table/table.h"
#include "base/strbuf.h"

#define SHM_VOLUME "topogate-shm"
#define SHM_PATH "/dev/shm"
#define IPC_LOCK "IPC_LOCK"

/* --- helpers ------------------------------------------------------------ */

/* Writes one item of an array (its JSON text) into v. */
typedef void put_item(struct jsonout *v, const void *item);

/*
 * n items into the pod's array at path: an op each at "-" where the pod
 * has the array, else one op that adds the array of them.
 */
static int
append_all(struct decision *d, const cJSON *existing, const char *path,
           put_item *put, const void *const *items, size_t n)
{
    struct jsonout *v;

    if (n == 0)
        return 0;
    if (cJSON_IsArray(existing)) {
        for (size_t k = 0; k < n; k++) {
            put(decision_value(d), items[k]);
            if (decision_add_value(d, path, "-") < 0)
                return -1;
        }
        return 0;
    }
    v = decision_value(d);
    jsonout_lit(v, "[");
    for (size_t k = 0; k < n; k++) {
        if (k > 0)
            jsonout_lit(v, ",");
        put(v, items[k]);
    }
    jsonout_lit(v, "]");
    return decision_add_value(d, path, NULL);
}

/* {"key": then the value; the caller closes it with "}". */
static void
put_key(struct jsonout *v, const char *key)
{
    jsonout_lit(v, "{");
    jsonout_string(v, key);
    jsonout_lit(v, ":");
}

static long
container_gpus(const cJSON *c)
{
    long n;
    return pod_count(c, RESOURCE_GPU, &n) == COUNT_OK ? n : 0;
}

static bool
uses_claims(const cJSON *c)
{
    return cJSON_GetArraySize(json_get(json_get(c, "resources"), "claims")) > 0;
}

/* Whether c is one of the pod's GPU containers: it asks for GPUs, or,
 * in a pod whose GPUs are all claimed (none asks nvidia.com/gpu), it
 * uses a DRA claim. */
static bool
gpu_container(const cJSON *containers, const cJSON *c)
{
    const cJSON *o;

    if (container_gpus(c) > 0)
        return true;
    if (!uses_claims(c))
        return false;
    cJSON_ArrayForEach(o, containers)
    {
        if (container_gpus(o) > 0)
            return false;
    }
    return true;
}

/* The container that holds the most GPUs (the first of equals); with
 * none, the first that uses a DRA claim (its GPUs are claimed,
 * claims.c); or -1. */
static int
main_gpu_container(const cJSON *containers)
{
    long most = 0;
    int i = 0, main_i = -1, claims_i = -1;
    const cJSON *c;

    cJSON_ArrayForEach(c, containers)
    {
        long n = container_gpus(c);
        if (n > most) {
            most = n;
            main_i = i;
        }
        if (claims_i < 0 && uses_claims(c))
            claims_i = i;
        i++;
    }
    return main_i >= 0 ? main_i : claims_i;
}

/* --- target --------------------------------------------------------------- */

static bool
env_in(const struct instance_type *t, const struct env_var *e)
{
    for (size_t i = 0; i < t->n_env; i++)
        if (strcmp(t->env[i].name, e->name) == 0 &&
            strcmp(t->env[i].value, e->value) == 0)
            return true;
    return false;
}

void
target_agree(const struct instance_type *const *types, size_t n,
             struct target *t)
{
    const struct instance_type *first = types[0];

    memset(t, 0, sizeof(*t));
    t->name = first->name;
    t->gpus = first->count;
    t->efa = first->efa;
    t->nic = type_nic_resource(first);
    t->nic_annotation = first->nic_annotation;
    t->nics_need_evidence = first->nics_need_evidence;
    t->gpudirect = first->gke_gpudirect;
    t->shm = first->shm;
    t->shm_bytes = first->shm_bytes;
    for (size_t i = 1; i < n; i++) {
        if (types[i]->count != t->gpus)
            t->gpus = -1;
        t->nics_need_evidence |= types[i]->nics_need_evidence;
        if (types[i]->gke_gpudirect != t->gpudirect)
            t->gpudirect = GPUDIRECT_NONE;
        const char *nic = type_nic_resource(types[i]);
        if (types[i]->efa != t->efa || (nic == NULL) != (t->nic == NULL) ||
            (nic && strcmp(nic, t->nic) != 0))
            t->efa = -1;
        if (types[i]->nic_annotation == NULL || t->nic_annotation == NULL ||
            strcmp(types[i]->nic_annotation, t->nic_annotation) != 0)
            t->nic_annotation = NULL;
        if (types[i]->shm_bytes < t->shm_bytes) {
            t->shm = types[i]->shm;
            t->shm_bytes = types[i]->shm_bytes;
        }
    }
    for (size_t e = 0; e < first->n_env && t->n_env < TARGET_MAX_ENV; e++) {
        bool everywhere = true;
        for (size_t i = 1; i < n && everywhere; i++)
            everywhere = env_in(types[i], &first->env[e]);
        if (everywhere)
            t->env[t->n_env++] = &first->env[e];
    }
}

/* --- resources ------------------------------------------------------------ */

/*
 * Sets one extended resource in container i. Requests are kept equal to
 * limits where the container spells its requests out for GPUs.
 */
static int
set_resource(struct decision *d, const cJSON *c, int i, const char *resource,
             long value)
{
    const cJSON *res = json_get(c, "resources");
    const cJSON *requests = json_get(res, "requests");
    char prefix[96], count[DECIMAL_MAX];
    struct jsonout *v = decision_value(d);

    decimal_write(count, value);
    pointer_index(prefix, sizeof(prefix), "/spec/containers", i, "/resources");
    if (!cJSON_IsObject(res)) {
        jsonout_lit(v, "{\"limits\":");
        put_key(v, resource);
        jsonout_string(v, count);
        jsonout_lit(v, "}}");
        return decision_add_value(d, prefix, NULL);
    }
    if (!cJSON_IsObject(json_get(res, "limits"))) {
        put_key(v, resource);
        jsonout_string(v, count);
        jsonout_lit(v, "}");
        if (decision_add_value(d, prefix, "limits") < 0)
            return -1;
    } else {
        strcat(prefix, "/limits");
        jsonout_string(v, count);
        if (decision_add_value(d, prefix, resource) < 0)
            return -1;
        prefix[strlen(prefix) - strlen("/limits")] = '\0';
    }
    if (cJSON_IsObject(requests) &&
        (json_get(requests, RESOURCE_GPU) || json_get(requests, resource))) {
        strcat(prefix, "/requests");
        jsonout_string(decision_value(d), count);
        return decision_add_value(d, prefix, resource);
    }
    return 0;
}

/*
 * A job of one pod keeps all its traffic inside the node (NVLink, shared
 * memory): it needs no EFA device, and libfabric's FI_* env has nothing
 * to configure. A job whose size is unknown may span nodes.
 */
static bool
one_pod_job(const struct workload *w)
{
    return w->pods_known && w->pods < 2;
}

/*
 * EFA for the pod: all of the node's for a whole node, else a share. A
 * shared plugin's slots are not shared out by GPUs: one grants every HCA.
 */
static long
share_of(const struct workload *w, const struct target *t, int efa)
{
    if (efa <= 0 || t->gpus <= 0 || one_pod_job(w))
        return 0;
    if (t->nic && table_rdma_class(t->nic) == RDMA_SLOTS)
        return efa;
    return w->gpus >= t->gpus ? efa : (long)efa * w->gpus / t->gpus;
}

static long
efa_share(const struct workload *w, const struct target *t)
{
    return t->nic_hold == NIC_FREE ? share_of(w, t, t->efa) : 0;
}

long
mutate_efa_after(const struct workload *w, const struct target *t,
                 const struct inject *in, bool override)
{
    bool user_set = w->efa > 0 || w->efa_named;

    if (one_pod_job(w))
        return 0; /* the user's devices are kept, but get no FI_* env */
    if (user_set && (!override || t->nic_hold != NIC_FREE))
        return w->efa;
    return in->efa ? efa_share(w, t) : w->efa;
}

/* Why nics_narrow() held the NICs back, in one warning; held is the
 * share the pod would have had. */
static int
warn_nic_hold(const struct target *t, long held, struct decision *d)
{
    switch (t->nic_hold) {
    case NIC_OTHER:
        return decision_warn(d,
                             "pod asks for %s: topogate adds no %s "
                             "beside it",
                             t->nic_why, t->nic);
    case NIC_HOST:
        return decision_warn(d,
                             "hostNetwork pod reaches the host's RDMA "
                             "NICs (%s): topogate adds no %s",
                             t->nic_why, t->nic);
    case NIC_NODES:
        return decision_warn(d,
                             "not every node this pod can land on has %s "
                             "in allocatable: topogate adds none",
                             t->nic);
    case NIC_CLAIM:
        return decision_warn(d,
                             "DRA claim '%s' may give the pod its NICs: "
                             "topogate adds no %s",
                             t->nic_why, t->nic);
    case NIC_UNSEEN:
        /* Two warnings: each fits WARNING_MAX. */
        if (decision_warn(d,
                          "%s (nicsNeedEvidence): no node known here "
                          "advertises %s: topogate adds none",
                          t->name, t->nic) < 0)
            return -1;
        return decision_warn(d,
                             "ask for %s: %ld where the nodes have it, else "
                             "use hostNetwork with /dev/infiniband",
                             t->nic, held);
    case NIC_FREE:
        break;
    }
    return 0;
}

/*
 * SageMaker HyperPod names its nodes "ml.<type>", and its CLI gives a
 * multi-node job vpc.amazonaws.com/efa: 1 (aws/sagemaker-hyperpod-cli#318,
 * "When node_count > 1, vpc.amazonaws.com/efa: 1 will be added"); the
 * count is its --efa and --efa-limit (#345). A pod pinned there with 1
 * of the node's N is told the flags. 0, or -1 out of memory.
 */
static int
warn_hyperpod_efa(const cJSON *pod, const char *nic, long want,
                  struct decision *d)
{
    const cJSON *sel = json_get(json_get(pod, "spec"), "nodeSelector");
    const char *type = json_string(sel, LABEL_INSTANCE_TYPE);

    if (type == NULL)
        type = json_string(sel, "beta.kubernetes.io/instance-type");
    if (type == NULL || strncmp(type, "ml.", 3) != 0 ||
        strcmp(nic, RESOURCE_EFA) != 0)
        return 0;
    return decision_warn(d,
                         "HyperPod's CLI asks for 1 EFA per pod of a "
                         "multi-node job: give hyp create --efa %ld "
                         "--efa-limit %ld",
                         want, want);
}

static int
patch_efa(const cJSON *pod, const cJSON *containers, const struct workload *w,
          const struct target *t, bool override, struct decision *d)
{
    long want = efa_share(w, t);
    int main_i = main_gpu_container(containers);
    const char *nic = t->nic;
    const cJSON *c, *named;
    int i = 0;

    /* Said only where the pod would have had some. */
    if (t->nic_hold != NIC_FREE) {
        long held = share_of(w, t, t->efa_held);
        return held > 0 && main_i >= 0 ? warn_nic_hold(t, held, d) : 0;
    }
    if (t->efa < 0)
        return decision_warn(d, "the types this pod can land on differ in "
                                "RDMA NICs: none patched; pin one type");
    if (want < 1 || main_i < 0 || nic == NULL)
        return 0;
    /* A container that names EFA, even as 0, is the user's choice; for
     * EFA itself workload_read() already saw whether one does. */
    named = strcmp(nic, RESOURCE_EFA) != 0 || w->efa_named ? containers : NULL;
    cJSON_ArrayForEach(c, named)
    {
        long have;
        enum count_status st = pod_count(c, nic, &have);
        if (st != COUNT_ABSENT) {
            if (st == COUNT_OK && have == want)
                return 0;
            if (override && st == COUNT_OK)
                return set_resource(d, c, i, nic, want);
            if (decision_warn(d,
                              "container '%s' keeps %s: %ld (topogate "
                              "would set %ld on %s)",
                              json_string(c, "name"), nic, have, want,
                              t->name) < 0)
                return -1;
            return st == COUNT_OK && have == 1 && want > 1
                       ? warn_hyperpod_efa(pod, nic, want, d)
                       : 0;
        }
        i++;
    }
    return set_resource(d, cJSON_GetArrayItem(containers, main_i), main_i,
                        nic, want);
}

/*
 * A pod raised to the whole node still runs as many processes as it was
 * told: a number in PET_NPROC_PER_NODE or on torchrun's command line
 * leaves the added GPUs idle. Raising it here would change the job's
 * world size under the other pods and WORLD_SIZE; the user is told.
 */
static int
warn_idle_gpus(const cJSON *c, int gpus, struct decision *d)
{
    const char *where = "PET_NPROC_PER_NODE", *name = json_string(c, "name");
    long procs = pod_text_count(pod_env_value(c, "PET_NPROC_PER_NODE"));
    struct launch ln;

    launch_read(c, &ln);
    if (ln.nproc > 0) {
        procs = ln.nproc;
        where = "--nproc_per_node";
    }
    if (procs <= 0 || procs >= gpus)
        return 0;
    return decision_warn(d,
                         "topogate.io/whole-node: container '%s' runs %ld "
                         "process%s (%s): %ld of %d GPUs sit idle",
                         name ? name : "?", procs, procs == 1 ? "" : "es",
                         where, gpus - procs, gpus);
}

int
mutate_fill_gpus(const cJSON *pod, struct workload *w, const struct target *t,
                 struct decision *d)
{
    const cJSON *containers = json_get(json_get(pod, "spec"), "containers");
    int main_i = main_gpu_container(containers);
    const cJSON *c = cJSON_GetArrayItem(containers, main_i);
    long extra;


    if (t->gpus <= 0 || main_i < 0 || w->gpus >= t->gpus)
        return 0;
    extra = t->gpus - w->gpus;
    if (!json_get(json_get(json_get(c, "resources"), "limits"), RESOURCE_GPU))
        return decision_warn(d,
                             "topogate.io/whole-node: container '%s' has "
                             "no " RESOURCE_GPU " limit to raise",
                             json_string(c, "name"));
    if (set_resource(d, c, main_i, RESOURCE_GPU,
                     container_gpus(c) + extra) < 0)
        return -1;
    w->gpus = t->gpus;
    return warn_idle_gpus(c, t->gpus, d);
}

/* --- pod-level fields ----------------------------------------------------- */

/*
 * Whether other pods of the job can land on this pod's node: it holds
 * fewer GPUs than the node has, in a job of more than one pod (or of a
 * size unknown). Only then does hostIPC buy anything: the containers of
 * one pod already share an IPC namespace, and hostIPC makes Pod Security
 * "baseline" refuse the pod.
 */
static bool
may_share_node(const struct workload *w, const struct target *t)
{
    return !one_pod_job(w) && t->gpus > 0 && w->gpus < t->gpus;
}

static int
patch_host_ipc(const cJSON *spec, bool override, struct decision *d)
{
    const cJSON *v = json_get(spec, "hostIPC");

    if (cJSON_IsTrue(v))
        return 0;
    if (cJSON_IsFalse(v) && !override)
        return decision_warn(d, "pod keeps hostIPC: false; NCCL cannot use "
                                "shared memory with other pods on the node");
    jsonout_lit(decision_value(d), "true");
    return decision_add_value(d, "/spec/hostIPC", NULL);
}

/* put_item: the toleration of the taint keyed key (a string). */
static void
put_toleration(struct jsonout *v, const void *key)
{
    jsonout_lit(v, "{\"key\":");
    jsonout_string(v, key);
    jsonout_lit(v, ",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}");
}

/*
 * The device plugins' taints are keyed by resource and carry a value we
 * cannot know (EKS "true", GKE "present"): the pod tolerates one only
 * with a toleration that admits every value.
 */
static int
patch_tolerations(const cJSON *spec, const struct match *m,
                  const struct target *t, struct decision *d)
{
    const cJSON *have = json_get(spec, "tolerations");
    const char *keys[] = {RESOURCE_GPU, t->efa > 0 ? t->nic : NULL};
    const void *adds[2];
    size_t n = 0;

    for (size_t i = 0; i < 2; i++) {
        struct taint taint = {keys[i], NULL, "NoSchedule"};
        if (keys[i] && !match_tolerates(m, &taint))
            adds[n++] = keys[i];
    }
    return append_all(d, have, "/spec/tolerations", put_toleration, adds, n);
}

/* --- /dev/shm ---------------------------------------------------------------
 */

static const cJSON *
shm_mount(const cJSON *c)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, json_get(c, "volumeMounts"))
    {
        const char *path = json_string(m, "mountPath");
        if (path &&
            (strcmp(path, SHM_PATH) == 0 || strcmp(path, SHM_PATH "/") == 0))
            return m;
    }
    return NULL;
}

static const cJSON *
volume_named(const cJSON *spec, const char *name)
{
    const cJSON *v;

    cJSON_ArrayForEach(v, json_get(spec, "volumes"))
    {
        const char *n = json_string(v, "name");
        if (n && name && strcmp(n, name) == 0)
            return v;
    }
    return NULL;
}

/*
 * The sizeLimit to give: the table's, but no more than the smallest memory
 * limit of the GPU containers or the pod, since the kubelet charges a
 * memory emptyDir to them. Returns an owned quantity string.
 */
static char *
shm_size(const cJSON *spec, const struct target *t)
{
    const cJSON *c, *limit, *smallest = NULL;
    double best = (double)t->shm_bytes, v;

    cJSON_ArrayForEach(c, json_get(spec, "containers"))
    {
        if (!gpu_container(json_get(spec, "containers"), c))
            continue;
        limit = json_get(pod_maps(c).limits, "memory");
        if (quantity_json(limit, &v) == 0 && v < best) {
            best = v;
            smallest = limit;
        }
    }
    limit = json_get(json_get(json_get(spec, "resources"), "limits"), "memory");
    if (quantity_json(limit, &v) == 0 && v < best)
        smallest = limit;
    if (smallest == NULL)
        return strdup(t->shm);
    if (cJSON_IsString(smallest))
        return strdup(smallest->valuestring);
    return json_text(smallest);
}

/* Says so when a user's /dev/shm is smaller or slower than ours. */
static int
check_user_shm(const cJSON *spec, const cJSON *c, const cJSON *mount,
               const struct target *t, struct decision *d)
{
    const cJSON *vol = volume_named(spec, json_string(mount, "name"));
    const cJSON *ed = json_get(vol, "emptyDir");
    const char *medium = json_string(ed, "medium");
    const cJSON *limit = json_get(ed, "sizeLimit");
    const char *name = json_string(c, "name");
    double size;

    if (ed == NULL)
        return 0; /* hostPath /dev/shm and the like: the host's memory */
    if (medium == NULL || strcmp(medium, "Memory") != 0)
        return decision_warn(d,
                             "container '%s' keeps a disk-backed /dev/shm "
                             "(topogate would use medium: Memory)",
                             name);
    if (quantity_json(limit, &size) == 0 && size < (double)t->shm_bytes &&
        cJSON_IsString(limit))
        return decision_warn(d,
                             "container '%s' keeps its %s /dev/shm "
                             "(topogate would give %s on %s)",
                             name, limit->valuestring, t->shm, t->name);
    return 0;
}

/* put_item: our memory-backed volume, of the size given (a string). */
static void
put_shm_volume(struct jsonout *v, const void *size)
{
    jsonout_lit(v, "{\"name\":\"" SHM_VOLUME "\",\"emptyDir\":"
                   "{\"medium\":\"Memory\",\"sizeLimit\":");
    jsonout_string(v, size);
    jsonout_lit(v, "}}");
}

/* put_item: its mount (item unused). */
static void
put_shm_mount(struct jsonout *v, const void *unused)
{
    (void)unused;
    jsonout_lit(v, "{\"name\":\"" SHM_VOLUME "\",\"mountPath\":\"" SHM_PATH
                   "\"}");
}

static int
patch_shm(const cJSON *spec, const struct target *t, struct decision *d)
{
    const cJSON *containers = json_get(spec, "containers"), *c, *m;
    bool need_volume = false;
    char *size;
    int i = 0, rc;

    cJSON_ArrayForEach(c, containers)
    {
        if (!gpu_container(containers, c))
            continue;
        if ((m = shm_mount(c)) != NULL) {
            if (check_user_shm(spec, c, m, t, d) < 0)
                return -1;
        } else {
            need_volume = true;
        }
    }
    if (!need_volume)
        return 0;
    if (volume_named(spec, SHM_VOLUME))
        goto mounts;
    if ((size = shm_size(spec, t)) == NULL)
        return -1;
    rc = append_all(d, json_get(spec, "volumes"), "/spec/volumes",
                    put_shm_volume, (const void *[]){size}, 1);
    free(size);
    if (rc < 0)
        return -1;
mounts:
    i = 0;
    cJSON_ArrayForEach(c, containers)
    {
        char path[64];

        if (!gpu_container(containers, c) || shm_mount(c)) {
            i++;
            continue;
        }
        pointer_index(path, sizeof(path), "/spec/containers", i,
                      "/volumeMounts");
        if (append_all(d, json_get(c, "volumeMounts"), path, put_shm_mount,
                       (const void *[]){NULL}, 1) < 0)
            return -1;
        i++;
    }
    return 0;
}

/* --- per container: IPC_LOCK and env ------------------------------------- */

static bool
has_capability(const cJSON *adds, const char *cap)
{
    const cJSON *a;

    cJSON_ArrayForEach(a, adds)
    {
        if (cJSON_IsString(a) && (strcmp(a->valuestring, cap) == 0 ||
                                  (strncmp(a->valuestring, "CAP_", 4) == 0 &&
                                   strcmp(a->valuestring + 4, cap) == 0)))
            return true;
    }
    return false;
}

/* EFA registers memory with the NIC: it must be able to lock pages. */
static int
patch_ipc_lock(const cJSON *c, int i, struct decision *d)
{
    const cJSON *sc = json_get(c, "securityContext");
    const cJSON *caps = json_get(sc, "capabilities");
    const cJSON *adds = json_get(caps, "add");
    struct jsonout *v = decision_value(d);
    char path[96];

    if (has_capability(adds, IPC_LOCK))
        return 0;
    pointer_index(path, sizeof(path), "/spec/containers", i,
                  "/securityContext");
    if (cJSON_IsArray(adds)) {
        strcat(path, "/capabilities/add/-");
        jsonout_lit(v, "\"" IPC_LOCK "\"");
        return decision_add_value(d, path, NULL);
    }
    if (cJSON_IsObject(caps)) {
        strcat(path, "/capabilities");
        jsonout_lit(v, "[\"" IPC_LOCK "\"]");
        return decision_add_value(d, path, "add");
    }
    if (cJSON_IsObject(sc)) {
        jsonout_lit(v, "{\"add\":[\"" IPC_LOCK "\"]}");
        return decision_add_value(d, path, "capabilities");
    }
    jsonout_lit(v, "{\"capabilities\":{\"add\":[\"" IPC_LOCK "\"]}}");
    return decision_add_value(d, path, NULL);
}

/* put_item: an env entry of a struct env_var. */
static void
put_env_entry(struct jsonout *v, const void *item)
{
    const struct env_var *e = item;

    jsonout_lit(v, "{\"name\":");
    jsonout_string(v, e->name);
    jsonout_lit(v, ",\"value\":");
    jsonout_string(v, e->value);
    jsonout_lit(v, "}");
}

static int
env_index(const cJSON *c, const cJSON *entry)
{
    const cJSON *e;
    int i = 0;

    cJSON_ArrayForEach(e, json_get(c, "env"))
    {
        if (e == entry)
            return i;
        i++;
    }
    return -1;
}

/* FI_* variables configure libfabric, which a pod without EFA lacks. */
static bool
env_applies(const struct env_var *e, long efa)
{
    return efa > 0 || strncmp(e->name, "FI_", 3) != 0;
}

/* The env of t into container c, which is at JSON pointer cpath. */
static int
patch_env(const cJSON *c, const char *cpath,
          const struct target *t, long efa, bool override, struct decision *d)
{
    const char *name = json_string(c, "name");
    const void *adds[TARGET_MAX_ENV];
    const char *names[TARGET_MAX_ENV];
    const cJSON *had[TARGET_MAX_ENV];
    size_t n_adds = 0;
    char path[200];

    if (t->n_env == 0)
        return 0;
    /* Keys that envFrom brings are unknown here: adding could clash. */
    if (cJSON_GetArraySize(json_get(c, "envFrom")) > 0)
        return decision_warn(d,
                             "container '%s' uses envFrom: topogate adds "
                             "no env to it",
                             name);
    pointer_join(path, sizeof(path), cpath, "/env");
    for (size_t k = 0; k < t->n_env; k++)
        names[k] = t->env[k]->name;
    pod_env_all(c, names, t->n_env, had);
    for (size_t k = 0; k < t->n_env; k++) {
        const struct env_var *e = t->env[k];
        const cJSON *have = had[k];
        const char *value = json_string(have, "value");
        char at[220];

        if (!env_applies(e, efa))
            continue;
        if (have == NULL) {
            adds[n_adds++] = e;
            continue;
        }
        if (value && strcmp(value, e->value) == 0)
            continue;
        if (override) {
            /* The whole entry: a valueFrom must go too. */
            pointer_index(at, sizeof(at), path, env_index(c, have), NULL);
            put_env_entry(decision_value(d), e);
            if (decision_replace_value(d, at) < 0)
                return -1;
        } else if (decision_warn(d,
                                 "container '%s' keeps %s=%s (topogate would "
                                 "set %s on %s)",
                                 name, e->name, value ? value : "<valueFrom>",
                                 e->value, t->name) < 0) {
            return -1;
        }
    }
    return append_all(d, json_get(c, "env"), path, put_env_entry, adds,
                      n_adds);
}

/* slowenv_say: each sentence a warning. */
static int
warn_sentence(void *d, const char *sentence)
{
    return decision_warn(d, "%s", sentence);
}

/*
 * Whether the pod will drive RDMA NICs, which pin (register) memory past
 * the container's default RLIMIT_MEMLOCK: the NICs topogate gives, those
 * it asks for under another name or reaches from the host, or those a
 * multi-network annotation attaches. Only then does IPC_LOCK buy anything.
 */
static bool
uses_rdma(const struct workload *w, const struct target *t, long efa)
{
    return efa > 0 || t->nic_hold == NIC_OTHER || t->nic_hold == NIC_HOST ||
           t->nic_hold == NIC_CLAIM ||
           (t->nic_annotation && !one_pod_job(w));
}

int
mutate_pod(const cJSON *pod, const struct match *m, const struct workload *w,
           const struct target *t, const struct inject *in, bool override,
           struct decision *d)
{
    const cJSON *spec = json_get(pod, "spec");
    const cJSON *containers = json_get(spec, "containers"), *c;
    long efa = mutate_efa_after(w, t, in, override);
    struct fast_paths fast;
    int i = 0;

    /* GKE multi-networking: the NICs come by a pod annotation naming the
     * cluster's own networks, which only the policy can name. A
     * GPUDirect type's whole-node pod is told all it lacks. */
    if (t->gpudirect != GPUDIRECT_NONE && t->gpus > 0 &&
        w->gpus >= t->gpus) {
        if (gpudirect_pod(pod, w, t, d) < 0)
            return -1;
    } else if (t->nic_annotation && w->pods > 1 &&
               pod_annotation(pod, t->nic_annotation) == NULL &&
               decision_warn(d,
                             "%s attaches its RDMA NICs by the pod "
                             "annotation %s: topogate patches none",
                             t->name, t->nic_annotation) < 0)
        return -1;
    fast.gpus = w->gpus;
    fast.node_peers = may_share_node(w, t);
    fast.nics = !one_pod_job(w) && t->efa != 0 && t->nic ? t->nic : NULL;
    if ((in->host_ipc && may_share_node(w, t) &&
         patch_host_ipc(spec, override, d) < 0) ||
        (in->shm && patch_shm(spec, t, d) < 0) ||
        (in->tolerations && patch_tolerations(spec, m, t, d) < 0) ||
        (in->efa && patch_efa(pod, containers, w, t, override, d) < 0))
        return -1;
    cJSON_ArrayForEach(c, containers)
    {
        if (gpu_container(containers, c)) {
            char cpath[64];

            if (slowenv_each(c, &fast, warn_sentence, d) < 0)
                return -1;

            pointer_index(cpath, sizeof(cpath), "/spec/containers", i, NULL);
            /* A launcher that runs ranks too (runLauncherAsNode) passes
             * the env on to those it starts on the other nodes. */
            if ((in->ipc_lock && uses_rdma(w, t, efa) &&
                 patch_ipc_lock(c, i, d) < 0) ||
                (in->env && (w->starts_ranks
                                 ? mutate_launcher_env(c, cpath, t, efa,
                                                       override, d)
                                 : patch_env(c,
                                             cpath, t, efa, override, d)) < 0))
                return -1;
        }
        i++;
    }
    return 0;
}

/* --- MPI launchers ---------------------------------------------------------
 *
 * Ranks that mpirun starts over ssh (mpi-operator v2, Trainer v2's MPI
 * runtimes) inherit the environment of the daemon ssh starts, not of the
 * worker container: sshd passes none of its own (their sshd_config has
 * no PermitUserEnvironment, SetEnv or AcceptEnv). Open MPI exports to
 * every rank the OMPI_* variables of mpirun's environment, the variables
 * named by -x, and those named in the MCA parameter mca_base_env_list,
 * which OMPI_MCA_mca_base_env_list sets from the environment (mpirun(1)
 * of 4.1 and 5.0), as NAME=value or as NAME. Intel MPI's and MPICH's
 * Hydra pass all of the launcher's environment by default.
 *
 * Open MPI 3.x and 4.x refuse to mix the two ways: with -x on the line
 * and mca_base_env_list set, mpirun aborts ("Open MPI does not support
 * mixing these two methods", orte/mca/schizo/ompi/schizo_ompi.c, help
 * topic orterun:conflict-env-set; seen with Debian's 4.1.4). Open MPI 5
 * (PRRTE) no longer checks. So the list is set only where the command is
 * mpirun itself, on the line topogate reads, with no -x and no
 * mca_base_env_list of its own. Anywhere else (a -x on the line, a list
 * on the line, a script topogate cannot read) nothing is added and a
 * warning gives the -x flags to add: -x NAME=value works with 4 and 5 and
 * with whatever else the line exports.
 */

/* Why a launcher's env cannot carry the list, or NULL when it can. */
static const char *
list_conflict(const cJSON *c)
{
    if (launch_has_word(c, "mca_base_env_list"))
        return "sets mca_base_env_list on its command line";
    if (launch_has_word(c, "-x"))
        return "uses mpirun -x (Open MPI 4 aborts on -x with "
               "mca_base_env_list)";
    if (!launch_runs_mpirun(c))
        return "runs no mpirun line topogate can read";
    return NULL;
}

/*
 * Where the list cannot go, the fix to write instead: why, then one
 * warning per variable (each fits kubectl's line and runs as printed):
 * -x NAME=value on the mpirun line, or NAME=value for a list on the line.
 */
static int
advise_flags(struct decision *d, const char *name, const char *conflict,
             const cJSON *c, const struct target *lt, bool override)
{
    bool on_line = launch_has_word(c, "mca_base_env_list");

    if (name == NULL)
        name = "?";
    if (decision_warn(d, "container '%s' %s: topogate adds no env for its "
                         "ranks",
                      name, conflict) < 0)
        return -1;
    for (size_t k = 0; k < lt->n_env; k++) {
        const struct env_var *e = lt->env[k];
        /* A variable the user set in the launcher goes by name alone. */
        bool theirs = pod_env(c, e->name) && !override;
        const char *eq = theirs ? "" : "=", *v = theirs ? "" : e->value;

        if ((on_line ? decision_warn(d, "container '%s': add %s%s%s to its "
                                        "mca_base_env_list",
                                     name, e->name, eq, v)
                     : decision_warn(d, "container '%s': add -x %s%s%s to its "
                                        "mpirun line",
                                     name, e->name, eq, v)) < 0)
            return -1;
    }
    return 0;
}

int
mutate_launcher_env(const cJSON *c, const char *cpath, const struct target *t,
                    long efa, bool override, struct decision *d)
{
    const char *name = json_string(c, "name");
    const char *have = pod_env_value(c, LAUNCHER_ENV_LIST);
    const char *conflict = list_conflict(c);
    struct target lt = *t;
    struct env_var list = {.name = LAUNCHER_ENV_LIST};
    struct strbuf names = {0};
    int rc;

    /* What the command exports with -x is the user's to say. */
    lt.n_env = 0;
    for (size_t k = 0; k < t->n_env; k++) {
        const struct env_var *e = t->env[k];
        if (!env_applies(e, efa) || launch_exports(c, e->name))
            continue;
        lt.env[lt.n_env++] = e;
        /* NAME=value needs nothing else to reach the ranks; a variable
         * the user set in the launcher goes by name, with their value. */
        if (pod_env(c, e->name) && !override)
            strbuf_printf(&names, "%s%s", names.len ? ";" : "", e->name);
        else
            strbuf_printf(&names, "%s%s=%s", names.len ? ";" : "", e->name,
                          e->value);
    }
    if (lt.n_env == 0 || conflict) {
        strbuf_free(&names);
        return lt.n_env == 0 ? 0 : advise_flags(d, name, conflict, c, &lt, override);
    }
    if ((list.value = strbuf_take(&names)) == NULL)
        return -1;
    /* A list of the user's own is kept: it may name what we would. */
    if ((have == NULL || override) && lt.n_env < TARGET_MAX_ENV)
        lt.env[lt.n_env++] = &list;
    else if (strcmp(have, list.value) != 0 &&
             (decision_warn(d,
                            "container '%s' keeps its own " LAUNCHER_ENV_LIST
                            ": its ranks see only what it names",
                            name ? name : "?") < 0 ||
              decision_warn(d, "add to " LAUNCHER_ENV_LIST ": %s", list.value) < 0)) {
        free(list.value);
        return -1;
    }
    rc = patch_env(c, cpath, &lt, efa, override, d);
    free(list.value);
    return rc;
}
