/*
 * expand_lws.c - LeaderWorkerSet: each of spec.replicas groups is one
 * leader (leaderTemplate, else workerTemplate) and size - 1 workers,
 * labelled, annotated and given the env the LWS controller and its pod
 * webhook add (kubernetes-sigs/lws api/leaderworkerset/v1
 * leaderworkerset_types.go; pkg/webhooks/pod_webhook.go;
 * pkg/utils/pod/pod_utils.go AddLWSVariables: LWS_LEADER_ADDRESS is
 * <set>-<group>.<subdomain>.<namespace>, the subdomain the set's name).
 */
#include <stdio.h>

#include "policy/kinds/expand_internal.h"
#include "policy/kinds/podbuild.h"
#include "policy/k8s/pod.h"

#define LWS_NAME "leaderworkerset.sigs.k8s.io/name"

static int
lws_group(struct expansion *e, const char *role, long pods,
          const cJSON *template, const char *worker_index, const char *size)
{
    const char *labels[] = {LWS_NAME,
                            e->name,
                            "leaderworkerset.sigs.k8s.io/group-index",
                            "0",
                            "leaderworkerset.sigs.k8s.io/worker-index",
                            worker_index,
                            NULL};
    char leader[300];
    cJSON *pod;

    if (podbuild_group_with(e, role, pods, template, labels) < 0)
        return -1;
    pod = e->groups[e->n_groups - 1].pod;
    snprintf(leader, sizeof(leader), "%s-0.%s.%s", e->name, e->name,
             e->namespace);
    return podbuild_annotation(pod, "leaderworkerset.sigs.k8s.io/size", size) <
                       0 ||
                   podbuild_env_all(pod, "LWS_LEADER_ADDRESS", leader) < 0 ||
                   podbuild_env_all(pod, "LWS_GROUP_SIZE", size) < 0 ||
                   podbuild_env_all(pod, "LWS_WORKER_INDEX", worker_index) < 0
               ? -1
               : 0;
}

int
expand_lws(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    const cJSON *spec = json_get(obj, "spec");
    const cJSON *lwt = json_get(spec, "leaderWorkerTemplate");
    const cJSON *worker = json_get(lwt, "workerTemplate");
    const cJSON *leader = json_get(lwt, "leaderTemplate");
    long replicas = podbuild_long(spec, "replicas", 1);
    long size = podbuild_long(lwt, "size", 1);
    char n[24];

    (void)rt;
    if (worker == NULL)
        return podbuild_note(e, "no spec.leaderWorkerTemplate.workerTemplate");
    snprintf(n, sizeof(n), "%ld", size);
    if (lws_group(e, "leader", replicas, leader ? leader : worker, "0", n) < 0)
        return -1;
    if (size > 1 &&
        lws_group(e, "worker", replicas * (size - 1), worker, "1", n) < 0)
        return -1;
    return 0;
}
