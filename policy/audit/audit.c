/* audit.c - see audit.h. */
#include "policy/audit/audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/decide.h"
#include "policy/jobs/job.h"
#include "policy/k8s/pod.h"
#include "policy/view/view.h"
#include "policy/kinds/workload.h"
#include "policy/pod/claims.h"

const char *
outcome_name(enum audit_outcome o)
{
    static const char *const names[] = {
        [OUTCOME_SKIPPED] = "skipped", [OUTCOME_ALLOW] = "allow",
        [OUTCOME_PATCH] = "patch",     [OUTCOME_WARN] = "warn",
        [OUTCOME_DENY] = "deny",
    };
    return names[o];
}

enum audit_outcome
outcome_of(const struct decision *d)
{
    switch (d->verdict) {
    case VERDICT_DENY:
        return OUTCOME_DENY;
    case VERDICT_WARN:
        return OUTCOME_WARN;
    case VERDICT_PATCH:
        return d->finding ? OUTCOME_WARN : OUTCOME_PATCH;
    default:
        /* Allowed, with a finding to read: unknown type, PCIe split. */
        return d->finding ? OUTCOME_WARN : OUTCOME_ALLOW;
    }
}

/* Why decide() did not govern a pod, in a few words. */
static const char *
why_ignored(const cJSON *pod)
{
    struct workload w;

    workload_read(pod, &w);
    if (!w.any_gpu && !w.bad_value)
        return "asks for no " RESOURCE_GPU;
    if (w.launcher)
        return "an MPI launcher: runs no ranks";
    if (w.owner == OWNER_FRAMEWORK)
        return "its framework is switched off (policy frameworks)";
    return "not a training pod: no Kubeflow operator labels and no "
           "topogate.io/managed label";
}

bool
audit_pod_claims(const cJSON *pod)
{
    const cJSON *claim;

    cJSON_ArrayForEach(claim, json_get(json_get(pod, "spec"), "resourceClaims"))
    {
        if (!workload_channel_claim(claim))
            return true;
    }
    return false;
}

long
audit_pod_gpus(const struct view *view, const cJSON *pod)
{
    struct workload w;

    workload_read(pod, &w);
    claims_read(view, json_string(json_get(pod, "metadata"), "namespace"), pod,
                &w);
    return w.gpus > 0 ? w.gpus : 0;
}

static struct admission
request_for(const struct expansion *e, const char *kind, const char *group,
            const cJSON *object, const struct view *view)
{
    return (struct admission){
        .view = view,
        .uid = "audit",
        .namespace = e->namespace,
        .operation = "CREATE",
        .kind = kind,
        .group = group,
        .object = object,
    };
}

static int
audit_pods(const struct snapshot *s, const struct view *view,
           struct audit_item *it)
{
    if (it->e.n_groups == 0)
        return 0;
    if ((it->pods = calloc(it->e.n_groups, sizeof(*it->pods))) == NULL)
        return -1;
    for (size_t i = 0; i < it->e.n_groups; i++) {
        struct audit_pod *p = &it->pods[it->n_pods++];
        struct admission req =
            request_for(&it->e, "Pod", "", it->e.groups[i].pod, view);
        enum audit_outcome o;

        p->group = &it->e.groups[i];
        decision_init(&p->d);
        if (decide(s, &req, &p->d) < 0)
            return -1;
        if (p->d.verdict == VERDICT_IGNORE && p->d.mode[0] == '\0')
            p->ignored = why_ignored(p->group->pod);
        o = outcome_of(&p->d);
        if (o > it->outcome)
            it->outcome = o;
    }
    return 0;
}

int
audit_object(const struct snapshot *s, const struct view *view,
             const cJSON *obj, const struct runtimes *rt,
             struct audit_item *it)
{
    char group[128];

    /* The runtimes among the files, else the cluster's. */
    if (rt == NULL || rt->n == 0)
        rt = view_runtimes(view);
    memset(it, 0, sizeof(*it));
    decision_init(&it->job);
    if (expand(obj, rt, &it->e) < 0)
        return -1;
    if (it->e.skipped)
        return 0;
    it->outcome = OUTCOME_ALLOW;
    expand_api_group(obj, group, sizeof(group));
    if (job_kind(group, it->e.kind)) {
        struct admission req =
            request_for(&it->e, it->e.kind, group, obj, view);
        req.runtimes = rt;
        it->has_job = true;
        if (decide(s, &req, &it->job) < 0)
            return -1;
        it->outcome = outcome_of(&it->job);
    }
    if (audit_pods(s, view, it) < 0)
        return -1;
    return lint_expansion(&it->e, &it->mistakes);
}

void
audit_item_free(struct audit_item *it)
{
    for (size_t i = 0; i < it->n_pods; i++)
        decision_free(&it->pods[i].d);
    free(it->pods);
    decision_free(&it->job);
    lint_free(&it->mistakes);
    expansion_free(&it->e);
    memset(it, 0, sizeof(*it));
}

/*
 * What follows a component named field in a dotted path: "x/y" for
 * "a.labels.x/y", "" when the path ends with it, NULL when it has none.
 */
static const char *
rest_after(const char *path, const char *field)
{
    size_t n = strlen(field);

    for (const char *p = path; (p = strstr(p, field)) != NULL; p++) {
        if (p != path && p[-1] != '.')
            continue;
        if (p[n] == '.')
            return p + n + 1;
        if (p[n] == '\0')
            return "";
    }
    return NULL;
}

/* The pod group a path into the object's templates belongs to, or NULL. */
static const struct pod_group *
group_of(const struct audit_item *it, const char *path)
{
    static const char *const maps[] = {"spec.pytorchReplicaSpecs.",
                                       "spec.mpiReplicaSpecs.",
                                       "spec.replicaSpecs.", NULL};
    char role[64];
    size_t i;

    for (const char *const *m = maps; *m; m++) {
        size_t n = strlen(*m);
        const char *dot;
        if (strncmp(path, *m, n) != 0 || (dot = strchr(path + n, '.')) == NULL ||
            strncmp(dot, ".template.", 10) != 0 ||
            (size_t)(dot - path - n) >= sizeof(role))
            continue;
        snprintf(role, sizeof(role), "%.*s", (int)(dot - path - n), path + n);
        for (i = 0; i < it->e.n_groups; i++)
            if (strcmp(it->e.groups[i].role, role) == 0)
                return &it->e.groups[i];
        return NULL;
    }
    if (strcmp(it->e.kind, "JobSet") == 0 &&
        sscanf(path, "spec.replicatedJobs[%zu].template.", &i) == 1 &&
        i < it->e.n_groups)
        return &it->e.groups[i];
    if (it->e.n_groups == 1 && (strncmp(path, "spec.template.", 14) == 0 ||
                                strncmp(path, "spec.jobTemplate.", 17) == 0))
        return &it->e.groups[0];
    return NULL;
}

/* Labels topogate reads: the operators', JobSet's, Kueue's, its own. */
static bool
label_read(const char *key)
{
    static const char *const prefixes[] = {
        "training.kubeflow.org/", "jobset.sigs.k8s.io/", "topogate.io/",
        "kueue.x-k8s.io/", "trainer.kubeflow.org/", NULL};

    for (const char *const *p = prefixes; *p; p++)
        if (strncmp(key, *p, strlen(*p)) == 0)
            return true;
    return false;
}

/* A PyTorchJob's replicas, or elasticPolicy.minReplicas. */
static bool
elastic_size_field(const char *path)
{
    static const char prefix[] = "spec.pytorchReplicaSpecs.";
    const char *rest = path + sizeof(prefix) - 1, *dot;

    if (strcmp(path, "spec.elasticPolicy.minReplicas") == 0)
        return true;
    return strncmp(path, prefix, sizeof(prefix) - 1) == 0 &&
           (dot = strchr(rest, '.')) != NULL && strcmp(dot, ".replicas") == 0;
}

const char *
audit_unread_field(const struct audit_item *it, const cJSON *obj,
                   const char *path, bool key)
{
    const char *in_res = rest_after(path, "resources");
    const char *res = rest_after(path, "limits");
    const char *label = rest_after(path, "labels");
    const struct pod_group *g;
    bool governed = false, gpus = false;

    if (in_res == NULL)
        in_res = rest_after(path, "resourcesPerNode");
    if (res == NULL)
        res = rest_after(path, "requests");
    /* A GPU count, or a map that may hold one: whether it asks at all. */
    if (in_res && (key || res == NULL || res[0] == '\0' || strstr(res, "gpu")))
        return NULL;
    if (it->e.skipped)
        return expand_is_runtime(obj) ? NULL
                                      : "topogate does not expand this kind";
    /* Its pods are mostly the runtime's: what they ask is not known. */
    if (it->e.job.runtime_missing)
        return NULL;
    for (size_t i = 0; i < it->n_pods; i++) {
        governed = governed || it->pods[i].ignored == NULL;
        gpus = gpus || workload_asks_gpu(it->pods[i].group->pod);
    }
    if (!gpus)
        return "no pod of it asks for " RESOURCE_GPU;
    if (label)
        return key || label[0] == '\0' || label_read(label)
                   ? NULL
                   : "a label topogate does not read";
    if (!governed)
        return "topogate governs none of its pods";
    if ((g = group_of(it, path)) != NULL && !workload_asks_gpu(g->pod))
        return "in a pod template that asks for no " RESOURCE_GPU;
    if (it->e.job.elastic && elastic_size_field(path) &&
        cJSON_IsNumber(json_get(json_get(json_get(obj, "spec"),
                                         "elasticPolicy"),
                                "maxReplicas")))
        return "an elastic job's size is elasticPolicy.maxReplicas";
    if (res && strcmp(res, "cpu") == 0)
        return "topogate does not read cpu";
    return NULL;
}
