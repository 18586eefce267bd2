/*
 * expand_other.c - kinds whose pods topogate governs only where the
 * policy opts them in (the topogate.io/managed label): Training Operator
 * v1's JAXJob; and any other kind whose pod templates ask for GPUs, read
 * through those templates. Ray, Volcano, LeaderWorkerSet and the
 * v1alpha2 MPIJob have files of their own (expand_ray.c ...). The labels are the controllers' own, so that
 * a pod reads in the audit as it would in the cluster.
 */
#include <stdio.h>
#include <string.h>

#include "policy/kinds/expand_internal.h"
#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"
#include "policy/kinds/podbuild.h"

/* Deepest a pod template is looked for in an unknown kind. */
#define TEMPLATE_DEPTH 8
/* Most pod templates read from one unknown object. */
#define TEMPLATE_MAX 16

/*
 * JAXJob: Workers only, labelled as every Training Operator v1 pod
 * (operator jaxjob-controller), with the coordinator env of
 * pkg/controller.v1/jax/envvar.go.
 */
int
expand_jaxjob(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    const cJSON *w =
        json_get(json_get(json_get(obj, "spec"), "jaxReplicaSpecs"), "Worker");
    long replicas = podbuild_long(w, "replicas", 1);
    const char *labels[] = {LABEL_OPERATOR,      "jaxjob-controller",
                            LABEL_JOB_NAME,      e->name,
                            LABEL_REPLICA_TYPE,  "worker",
                            LABEL_REPLICA_INDEX, "0",
                            NULL};
    char n[24], coord[300];

    (void)rt;
    if (w == NULL)
        return podbuild_note(e, "no Worker in spec.jaxReplicaSpecs");
    if (podbuild_group_with(e, "Worker", replicas, json_get(w, "template"), labels) < 0)
        return -1;
    snprintf(n, sizeof(n), "%ld", replicas);
    snprintf(coord, sizeof(coord), "%s-worker-0", e->name);
    return podbuild_env_all(e->groups[0].pod, "PYTHONUNBUFFERED", "1") < 0 ||
                   podbuild_env_all(e->groups[0].pod, "COORDINATOR_ADDRESS",
                                    coord) < 0 ||
                   podbuild_env_all(e->groups[0].pod, "NUM_PROCESSES", n) < 0 ||
                   podbuild_env_all(e->groups[0].pod, "PROCESS_ID", "0") < 0
               ? -1
               : 0;
}

struct found {
    const cJSON *templates[TEMPLATE_MAX];
    const cJSON *owners[TEMPLATE_MAX]; /* the object holding "template" */
    char roles[TEMPLATE_MAX][64];
    size_t n;
    bool too_many;
};

static bool
is_pod_template(const cJSON *t)
{
    return cJSON_IsObject(t) &&
           cJSON_IsArray(json_get(json_get(t, "spec"), "containers"));
}

static void
look(const cJSON *v, const char *key, int depth, struct found *f)
{
    const cJSON *kv;

    if (depth > TEMPLATE_DEPTH || f->too_many)
        return;
    cJSON_ArrayForEach(kv, v)
    {
        const char *k = kv->string ? kv->string : key;
        if (kv->string && strcmp(kv->string, "template") == 0 &&
            is_pod_template(kv)) {
            const char *name = json_string(v, "name");
            if (f->n == TEMPLATE_MAX) {
                f->too_many = true;
                return;
            }
            f->templates[f->n] = kv;
            f->owners[f->n] = v;
            snprintf(f->roles[f->n], sizeof(f->roles[0]), "%s",
                     name ? name : key ? key : "");
            f->n++;
            continue;
        }
        if (cJSON_IsObject(kv) || cJSON_IsArray(kv))
            look(kv, k, depth + 1, f);
    }
}

int
expand_unknown(const cJSON *obj, struct expansion *e, const char *what)
{
    struct found f = {0};
    bool gpus = false;

    look(json_get(obj, "spec"), NULL, 0, &f);
    for (size_t i = 0; i < f.n; i++) {
        cJSON *pod =
            podbuild_from_template(f.templates[i], e->namespace, e->name);
        if (pod == NULL)
            return -1;
        gpus = gpus || workload_asks_gpu(pod);
        cJSON_Delete(pod);
    }
    if (!gpus || f.too_many)
        return 1; /* nothing to read: skipped as before */
    for (size_t i = 0; i < f.n; i++)
        if (podbuild_group_with(e, f.roles[i],
                       podbuild_long(f.owners[i], "replicas", 1),
                       f.templates[i], NULL) < 0)
            return -1;
    return podbuild_note(e,
                         "%s: a kind topogate does not know; audited "
                         "through its pod template%s, as plain pods",
                         what, f.n == 1 ? "" : "s");
}
