/* zones.c - see zones.h. */
#include "zones.h"

#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "pod.h"
#include "strbuf.h"

#define ZONE "topology.kubernetes.io/zone"
#define ZONE_BETA "failure-domain.beta.kubernetes.io/zone"

static bool
is_zone_key(const char *key)
{
    return strcmp(key, ZONE) == 0 || strcmp(key, ZONE_BETA) == 0;
}

/* A required pod affinity term on the zone keeps the job's pods together. */
static bool
pod_affinity_on_zone(const cJSON *spec)
{
    const cJSON *terms =
        json_get(json_get(json_get(spec, "affinity"), "podAffinity"),
                 "requiredDuringSchedulingIgnoredDuringExecution");
    const cJSON *t;

    if (!cJSON_IsArray(terms))
        return false;
    cJSON_ArrayForEach(t, terms)
    {
        const char *key = json_string(t, "topologyKey");
        if (key && is_zone_key(key))
            return true;
    }
    return false;
}

static bool
held_in_one_zone(const cJSON *spec)
{
    struct match m;
    bool pinned;

    if (pod_affinity_on_zone(spec))
        return true;
    if (match_parse(spec, &m) < 0)
        return true; /* out of memory: say nothing rather than guess */
    pinned = match_pins(&m, is_zone_key);
    match_free(&m);
    return pinned;
}

int
zones_warn(const struct zone_set *z, long pods, const cJSON *spec,
           struct decision *d)
{
    struct strbuf sb = {0};
    char *zones;
    int rc;

    if (pods < 2 || !z->nics || z->n < 2 || held_in_one_zone(spec))
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
