/*
 * expand_other.c - kinds whose pods topogate governs only where the
 * policy opts them in (the topogate.io/managed label): Training Operator
 * v1's JAXJob, Volcano's batch.volcano.sh Job, KubeRay's RayCluster and
 * RayJob; and any other kind whose pod templates ask for GPUs, read
 * through those templates. The labels are the controllers' own, so that
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

static int
group_with(struct expansion *e, const char *role, long replicas,
           const cJSON *template, const char *const *labels)
{
    cJSON *pod = podbuild_from_template(template, e->namespace, e->name);

    for (; pod && labels && labels[0]; labels += 2)
        if (podbuild_label(pod, labels[0], labels[1]) < 0) {
            cJSON_Delete(pod);
            return -1;
        }
    return pod ? podbuild_group(e, role, replicas, pod) : -1;
}

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
    if (group_with(e, "Worker", replicas, json_get(w, "template"), labels) < 0)
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

/* Volcano Job: one group per task (volcano.sh/task-spec). */
int
expand_volcano_job(const cJSON *obj, const struct runtimes *rt,
                   struct expansion *e)
{
    const cJSON *task;

    (void)rt;
    cJSON_ArrayForEach(task, json_get(json_get(obj, "spec"), "tasks"))
    {
        const char *name = json_string(task, "name");
        const char *labels[] = {"volcano.sh/job-name", e->name,
                                "volcano.sh/task-spec", name ? name : "",
                                NULL};
        if (group_with(e, name ? name : "", podbuild_long(task, "replicas", 1),
                       json_get(task, "template"), labels) < 0)
            return -1;
    }
    if (e->n_groups == 0)
        return podbuild_note(e, "no spec.tasks");
    return 0;
}

/* RayCluster, or RayJob's spec.rayClusterSpec: head and worker groups. */
int
expand_ray(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    const cJSON *spec = json_get(obj, "spec"), *g;

    (void)rt;
    if (json_get(spec, "rayClusterSpec"))
        spec = json_get(spec, "rayClusterSpec");
    if (json_get(spec, "headGroupSpec")) {
        const char *labels[] = {"ray.io/cluster", e->name, "ray.io/node-type",
                                "head", NULL};
        if (group_with(e, "head", 1,
                       json_get(json_get(spec, "headGroupSpec"), "template"),
                       labels) < 0)
            return -1;
    }
    cJSON_ArrayForEach(g, json_get(spec, "workerGroupSpecs"))
    {
        const char *name = json_string(g, "groupName");
        const char *labels[] = {"ray.io/cluster", e->name, "ray.io/node-type",
                                "worker", "ray.io/group", name ? name : "",
                                NULL};
        /* The autoscaler may grow a group to maxReplicas. */
        long n = podbuild_long(g, "maxReplicas",
                               podbuild_long(g, "replicas",
                                             podbuild_long(g, "minReplicas",
                                                           1)));
        if (group_with(e, name ? name : "worker", n, json_get(g, "template"),
                       labels) < 0)
            return -1;
    }
    if (e->n_groups == 0)
        return podbuild_note(e, "no headGroupSpec or workerGroupSpecs");
    return 0;
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
        if (group_with(e, f.roles[i],
                       podbuild_long(f.owners[i], "replicas", 1),
                       f.templates[i], NULL) < 0)
            return -1;
    return podbuild_note(e,
                         "%s: a kind topogate does not know; audited "
                         "through its pod template%s, as plain pods",
                         what, f.n == 1 ? "" : "s");
}
