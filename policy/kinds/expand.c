/*
 * expand.c - see expand.h. The dispatch through the table of kinds
 * (kinds.c), the built-in kinds and JobSet; Kubeflow elsewhere.
 */
#include "policy/kinds/expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/kinds/expand_internal.h"
#include "policy/kinds/kinds.h"
#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"
#include "policy/kinds/podbuild.h"

const char *
expand_api_group(const cJSON *obj, char *buf, size_t len)
{
    const char *api = json_string(obj, "apiVersion");
    const char *slash = api ? strchr(api, '/') : NULL;
    size_t n = slash ? (size_t)(slash - api) : 0;

    if (n >= len)
        n = len - 1;
    memcpy(buf, api ? api : "", n);
    buf[n] = '\0';
    return buf;
}

static const cJSON *
at(const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = json_get(obj, a);
    if (b)
        v = json_get(v, b);
    if (c)
        v = json_get(v, c);
    return v;
}

/* A kind whose pods come from one template at spec.template. */
static int
expand_templated(const cJSON *spec, long replicas, struct expansion *e)
{
    const cJSON *template = json_get(spec, "template");

    if (!cJSON_IsObject(template))
        return podbuild_note(e, "no pod template (spec.template)");
    return podbuild_group(
        e, "", replicas,
        podbuild_from_template(template, e->namespace, e->name));
}

int
expand_jobset(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    const cJSON *rj;

    (void)rt;
    cJSON_ArrayForEach(rj, at(obj, "spec", "replicatedJobs", NULL))
    {
        const char *name = json_string(rj, "name");
        const cJSON *job_spec = at(rj, "template", "spec", NULL);
        long replicas = podbuild_long(rj, "replicas", 1);
        long per_job = podbuild_long(job_spec, "parallelism", 1);
        char count[24];
        cJSON *pod = podbuild_from_template(json_get(job_spec, "template"),
                                            e->namespace, e->name);

        snprintf(count, sizeof(count), "%ld", replicas);
        if (pod == NULL || podbuild_label(pod, LABEL_JOBSET, e->name) < 0 ||
            podbuild_label(pod, LABEL_REPLICATED_JOB, name ? name : "") < 0 ||
            podbuild_label(pod, LABEL_RJ_REPLICAS, count) < 0 ||
            podbuild_label(pod, LABEL_JOB_INDEX, "0") < 0 ||
            podbuild_group(e, name ? name : "", replicas * per_job, pod) < 0) {
            cJSON_Delete(pod);
            return -1;
        }
    }
    return 0;
}

int
expand_pod(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    (void)rt;
    return podbuild_group(e, "", 1, cJSON_Duplicate(obj, true));
}

/* Deployment, ReplicaSet, StatefulSet: spec.replicas of one template. */
int
expand_replicated(const cJSON *obj, const struct runtimes *rt,
                  struct expansion *e)
{
    const cJSON *spec = json_get(obj, "spec");

    (void)rt;
    return expand_templated(spec, podbuild_long(spec, "replicas", 1), e);
}

int
expand_daemonset(const cJSON *obj, const struct runtimes *rt,
                 struct expansion *e)
{
    (void)rt;
    return expand_templated(json_get(obj, "spec"), -1, e);
}

int
expand_job(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    const cJSON *spec = json_get(obj, "spec");

    (void)rt;
    return expand_templated(spec, podbuild_long(spec, "parallelism", 1), e);
}

int
expand_cronjob(const cJSON *obj, const struct runtimes *rt,
               struct expansion *e)
{
    const cJSON *job = at(obj, "spec", "jobTemplate", "spec");

    (void)rt;
    return expand_templated(job, podbuild_long(job, "parallelism", 1), e);
}

bool
expand_is_runtime(const cJSON *obj)
{
    const char *kind = json_string(obj, "kind");
    char group[128];

    return kind &&
           strcmp(expand_api_group(obj, group, sizeof(group)),
                  "trainer.kubeflow.org") == 0 &&
           (strcmp(kind, "TrainingRuntime") == 0 ||
            strcmp(kind, "ClusterTrainingRuntime") == 0);
}

/* "Kind apiVersion: why", as a skipped expansion. */
static int
skip(struct expansion *e, const cJSON *obj, const char *why)
{
    const char *api = json_string(obj, "apiVersion");

    e->skipped = true;
    return podbuild_note(e, "%s %s: %s", e->kind, api ? api : "(no apiVersion)",
                         why);
}

int
expand(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    const cJSON *meta = json_get(obj, "metadata");
    const char *api = json_string(obj, "apiVersion");
    const struct kind *k, *near;
    char group[128];
    int rc;

    memset(e, 0, sizeof(*e));
    e->kind = json_string(obj, "kind");
    e->name = json_string(meta, "name");
    if (e->name == NULL)
        e->name = json_string(meta, "generateName");
    e->namespace = json_string(meta, "namespace");
    if (e->kind == NULL)
        e->kind = "";
    if (e->name == NULL)
        e->name = "";
    if (e->namespace == NULL)
        e->namespace = "";
    if (!cJSON_IsObject(obj) || e->kind[0] == '\0') {
        e->skipped = true;
        return podbuild_note(e, "not a Kubernetes object (no kind)");
    }
    expand_api_group(obj, group, sizeof(group));
    /* One row per kind (kinds.c); a kind with no row, or whose row has
     * no expander and does not skip it, is read through its pod
     * templates. */
    k = kinds_object(group, api, e->kind, &near);
    if (k == NULL && near)
        return skip(e, obj, near->other_api);
    if (k && k->expand)
        return k->expand(obj, rt, e);
    if (k && k->skip)
        return skip(e, obj, k->not_expanded);
    {
        char what[300];
        snprintf(what, sizeof(what), "%s %s", e->kind,
                 api ? api : "(no apiVersion)");
        if ((rc = expand_unknown(obj, e, what)) <= 0)
            return rc;
    }
    return skip(e, obj, "not a workload kind topogate expands");
}

/* Every member of was is in now, equal: now may only add members. */
static bool
adds_members(const cJSON *was, const cJSON *now)
{
    const cJSON *kv;

    if (was == NULL || cJSON_IsNull(was))
        return true;
    if (!cJSON_IsObject(was) || !cJSON_IsObject(now))
        return cJSON_Compare(was, now, true);
    cJSON_ArrayForEach(kv, was)
    {
        const cJSON *same = json_get(now, kv->string);
        if (!cJSON_Compare(kv, same, true))
            return false;
    }
    return true;
}

/* Every item of was is in now: now may only add items (tolerations). */
static bool
adds_items(const cJSON *was, const cJSON *now)
{
    const cJSON *a, *b;

    if (was == NULL || cJSON_IsNull(was))
        return true;
    if (!cJSON_IsArray(was) || !cJSON_IsArray(now))
        return false;
    cJSON_ArrayForEach(a, was)
    {
        bool found = false;
        cJSON_ArrayForEach(b, now)
        {
            if ((found = cJSON_Compare(a, b, true)))
                break;
        }
        if (!found)
            return false;
    }
    return true;
}

/*
 * One pod: what Kueue merges in from its ResourceFlavor (nodeSelector,
 * tolerations, labels, annotations, schedulingGates: kueue
 * pkg/podset/podset.go Merge) may grow; the rest must be equal.
 */
static bool
pod_narrows(const cJSON *was, const cJSON *now)
{
    static const char *const merged[] = {"nodeSelector", "tolerations",
                                         "schedulingGates"};
    const cJSON *wm = json_get(was, "metadata");
    const cJSON *nm = json_get(now, "metadata");
    const cJSON *ws = json_get(was, "spec"), *ns = json_get(now, "spec");
    cJSON *wrest, *nrest;
    bool same;

    if (!adds_members(json_get(wm, "labels"), json_get(nm, "labels")) ||
        !adds_members(json_get(wm, "annotations"),
                      json_get(nm, "annotations")) ||
        !adds_members(json_get(ws, "nodeSelector"),
                      json_get(ns, "nodeSelector")) ||
        !adds_items(json_get(ws, "tolerations"), json_get(ns, "tolerations")))
        return false;
    wrest = cJSON_Duplicate(ws, true);
    nrest = cJSON_Duplicate(ns, true);
    for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(wrest, merged[i]);
        cJSON_DeleteItemFromObjectCaseSensitive(nrest, merged[i]);
    }
    /* Out of memory reads as "not the same": the UPDATE is judged. */
    same = wrest && nrest && cJSON_Compare(wrest, nrest, true);
    cJSON_Delete(wrest);
    cJSON_Delete(nrest);
    return same;
}

bool
expand_narrows(const struct expansion *was, const struct expansion *now)
{
    const struct job_shape *a = &was->job, *b = &now->job;

    if (was->skipped || now->skipped || was->n_groups != now->n_groups ||
        a->owner != b->owner || a->nodes != b->nodes || a->procs != b->procs ||
        a->elastic != b->elastic || a->has_master != b->has_master)
        return false;
    for (size_t i = 0; i < now->n_groups; i++) {
        const struct pod_group *g = &was->groups[i], *h = &now->groups[i];
        if (strcmp(g->role, h->role) != 0 || g->replicas != h->replicas ||
            !pod_narrows(g->pod, h->pod))
            return false;
    }
    return true;
}

void
expansion_free(struct expansion *e)
{
    for (size_t i = 0; i < e->n_groups; i++) {
        free(e->groups[i].role);
        cJSON_Delete(e->groups[i].pod);
    }
    free(e->groups);
    free(e->note);
    memset(e, 0, sizeof(*e));
}
