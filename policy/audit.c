/* audit.c - see audit.h. */
#include "audit.h"

#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "job.h"
#include "pod.h"
#include "workload.h"

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
    return "not a training pod: no Kubeflow operator labels and no "
           "topogate.io/managed label";
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
