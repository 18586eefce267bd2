/* zones.c - see zones.h. */
#include "policy/pod/zones.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "policy/k8s/labels.h"
#include "policy/k8s/match.h"
#include "policy/k8s/pod.h"
#include "base/strbuf.h"

#define ZONE "topology.kubernetes.io/zone"
#define ZONE_BETA "failure-domain.beta.kubernetes.io/zone"

static bool
is_zone_key(const char *key)
{
    return strcmp(key, ZONE) == 0 || strcmp(key, ZONE_BETA) == 0;
}

static bool
held_in_one_zone(const cJSON *spec)
{
    struct match m;
    bool pinned;

    /* A required pod affinity term on the zone keeps the job together. */
    if (pod_affinity_on(spec, is_zone_key))
        return true;
    if (match_parse(spec, &m) < 0)
        return true; /* out of memory: say nothing rather than guess */
    pinned = match_pins(&m, is_zone_key);
    match_free(&m);
    return pinned;
}

/* A multi-pod job with RDMA NICs whose nodes may be in several zones. */
static bool
may_span_zones(const struct zone_set *z, long pods, const cJSON *spec)
{
    return pods >= 2 && z->nics && z->n >= 2 && !held_in_one_zone(spec);
}

int
zones_warn(const struct zone_set *z, long pods, const cJSON *spec,
           struct decision *d)
{
    struct strbuf sb = {0};
    char *zones;
    int rc;

    if (!may_span_zones(z, pods, spec))
        return 0;
    for (size_t i = 0; i < z->n; i++)
        strbuf_printf(&sb, "%s%s", i ? ", " : "", z->names[i]);
    if ((zones = strbuf_take(&sb)) == NULL)
        return -1;
    rc = decision_warn(d,
                       "the nodes it can land on span zones %s: EFA/RDMA "
                       "traffic does not cross zones",
                       zones);
    free(zones);
    if (rc == 0)
        rc = decision_warn(d, "keep the job in one zone: nodeSelector " ZONE
                              ", a podAffinity on it, or a one-zone node "
                              "group");
    return rc;
}

/* The labels that name the pod's job, by operator (labels.h). */
static cJSON *
job_labels(const cJSON *pod)
{
    static const char *const sets[][2] = {
        {LABEL_JOBSET, NULL},
        {LABEL_JOB_NAME, LABEL_OPERATOR},
    };
    cJSON *m;

    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        if (pod_label(pod, sets[i][0]) == NULL ||
            (sets[i][1] && pod_label(pod, sets[i][1]) == NULL))
            continue;
        if ((m = cJSON_CreateObject()) == NULL)
            return NULL;
        for (size_t k = 0; k < 2 && sets[i][k]; k++)
            cJSON_AddStringToObject(m, sets[i][k], pod_label(pod, sets[i][k]));
        return m;
    }
    return cJSON_CreateNull(); /* none: warn instead */
}

/* The affinity term, wrapped in as many parents as the pod lacks. */
static int
add_term(const cJSON *spec, cJSON *term, struct decision *d)
{
    static const char *const keys[] = {
        "affinity", "podAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution"};
    const cJSON *at = spec;
    char path[160] = "/spec";
    size_t depth = 0;
    cJSON *value;

    while (depth < 3 && json_get(at, keys[depth])) {
        at = json_get(at, keys[depth]);
        snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s",
                 keys[depth]);
        depth++;
    }
    if (depth == 3)
        return decision_add_at(d, term, path, "-");
    /* Build the missing parents around the term, innermost first. */
    value = json_one_item(term);
    for (size_t k = 2; k > depth && value != NULL; k--)
        value = json_wrap(keys[k], value);
    if (value == NULL)
        return -1;
    return decision_add_at(d, value, path, keys[depth]);
}

int
zones_patch(const struct zone_set *z, long pods, const cJSON *pod,
            struct decision *d)
{
    const cJSON *spec = json_get(pod, "spec");
    cJSON *labels, *term;

    if (!may_span_zones(z, pods, spec))
        return 0;
    if ((labels = job_labels(pod)) == NULL)
        return -1;
    if (cJSON_IsNull(labels)) {
        cJSON_Delete(labels);
        return zones_warn(z, pods, spec, d);
    }
    cJSON *selector = cJSON_CreateObject();
    if ((term = cJSON_CreateObject()) == NULL || selector == NULL ||
        !cJSON_AddItemToObject(selector, "matchLabels", labels)) {
        cJSON_Delete(labels);
        cJSON_Delete(selector);
        cJSON_Delete(term);
        return -1;
    }
    if (!cJSON_AddItemToObject(term, "labelSelector", selector)) {
        cJSON_Delete(selector);
        cJSON_Delete(term);
        return -1;
    }
    if (!cJSON_AddStringToObject(term, "topologyKey", ZONE)) {
        cJSON_Delete(term);
        return -1;
    }
    if (add_term(spec, term, d) < 0)
        return -1;
    return decision_warn(d, "the nodes it can land on span zones: kept in "
                            "one with a required podAffinity on " ZONE);
}
