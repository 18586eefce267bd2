/*
 * placement.c - instance type candidates of a pod.
 *
 * A nodeSelector pins one value. Required node affinity ORs its terms and
 * ANDs the expressions inside a term, so a key constrains the pod only when
 * every term constrains it; the candidates are then the union over terms.
 */
#include "placement.h"

#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "pod.h"

#define MAX_VALUES 64

static const char *const type_keys[] = {
    LABEL_INSTANCE_TYPE, "beta.kubernetes.io/instance-type", NULL};
static const char *const gpu_count_keys[] = {
    "karpenter.k8s.aws/instance-gpu-count", NULL};
static const char *const family_keys[] = {"karpenter.k8s.aws/instance-family",
                                          NULL};

struct values {
    const char *v[MAX_VALUES];
    size_t n;
    bool constrained;
};

static bool
key_in(const char *key, const char *const *keys)
{
    for (size_t i = 0; key && keys[i]; i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

static void
add_value(struct values *vs, const char *v)
{
    for (size_t i = 0; i < vs->n; i++)
        if (strcmp(vs->v[i], v) == 0)
            return;
    if (vs->n < MAX_VALUES)
        vs->v[vs->n++] = v;
}

/* Values of `In` expressions on keys within one term; false: no such. */
static bool
term_values(const cJSON *term, const char *const *keys, struct values *out)
{
    const cJSON *e;
    bool found = false;

    cJSON_ArrayForEach(
        e, cJSON_GetObjectItemCaseSensitive(term, "matchExpressions"))
    {
        const char *op = json_string(e, "operator");
        const cJSON *v;

        if (!key_in(json_string(e, "key"), keys) || op == NULL ||
            strcmp(op, "In") != 0)
            continue;
        /* Two In expressions in one term intersect; keep it simple and
         * take the first, which already bounds the candidates. */
        if (found)
            continue;
        found = true;
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(e, "values"))
        {
            if (cJSON_IsString(v))
                add_value(out, v->valuestring);
        }
    }
    return found;
}

static void
affinity_values(const cJSON *spec, const char *const *keys, struct values *out)
{
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(spec, "affinity"), "nodeAffinity");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(
        na, "requiredDuringSchedulingIgnoredDuringExecution");
    const cJSON *terms =
        cJSON_GetObjectItemCaseSensitive(req, "nodeSelectorTerms");
    const cJSON *term;

    if (cJSON_GetArraySize(terms) == 0)
        return;
    cJSON_ArrayForEach(term, terms)
    {
        if (!term_values(term, keys, out)) {
            out->n = 0; /* one free term: the key does not pin the pod */
            return;
        }
    }
    out->constrained = true;
}

/* nodeSelector wins over affinity: the two must both hold anyway. */
static void
constraint(const cJSON *spec, const char *const *keys, struct values *out,
           const char **via)
{
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(spec, "nodeSelector");

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; keys[i]; i++) {
        const char *v = json_string(sel, keys[i]);
        if (v) {
            add_value(out, v);
            out->constrained = true;
            *via = "nodeSelector";
            return;
        }
    }
    affinity_values(spec, keys, out);
    if (out->constrained)
        *via = "node affinity";
}

static bool
family_matches(const struct instance_type *t, const struct values *families)
{
    size_t len = strcspn(t->name, ".");

    if (!families->constrained)
        return true;
    for (size_t i = 0; i < families->n; i++)
        if (strlen(families->v[i]) == len &&
            strncmp(families->v[i], t->name, len) == 0)
            return true;
    return false;
}

static bool
count_matches(const struct instance_type *t, const struct values *counts)
{
    if (!counts->constrained)
        return true;
    for (size_t i = 0; i < counts->n; i++) {
        char *end;
        long n = strtol(counts->v[i], &end, 10);
        if (*end == '\0' && end != counts->v[i] && n == t->count)
            return true;
    }
    return false;
}

/* Karpenter NodePools label nodes with GPU count and family, not type. */
static void
karpenter_candidates(const struct snapshot *s, const cJSON *spec,
                     struct placement *p)
{
    struct values counts, families;
    const char *via = NULL;

    constraint(spec, gpu_count_keys, &counts, &via);
    constraint(spec, family_keys, &families, &via);
    if (!counts.constrained && !families.constrained)
        return;
    p->pinned = true;
    p->via = "Karpenter labels";
    for (size_t i = 0; i < s->n_types && p->n_types < PLACEMENT_MAX; i++) {
        const struct instance_type *t = &s->types[i];
        if (strcmp(t->resource, RESOURCE_GPU) == 0 &&
            count_matches(t, &counts) && family_matches(t, &families))
            p->types[p->n_types++] = t;
    }
}

void
placement_read(const struct snapshot *s, const cJSON *pod, struct placement *p)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    struct values names;

    memset(p, 0, sizeof(*p));
    constraint(spec, type_keys, &names, &p->via);
    if (!names.constrained) {
        karpenter_candidates(s, spec, p);
        return;
    }
    p->pinned = true;
    for (size_t i = 0; i < names.n; i++) {
        const struct instance_type *t = snapshot_lookup(s, names.v[i]);
        if (t == NULL) {
            if (p->unknown == NULL)
                p->unknown = names.v[i];
        } else if (p->n_types < PLACEMENT_MAX) {
            p->types[p->n_types++] = t;
        }
    }
}
