/*
 * placement.c - instance type candidates of a pod.
 *
 * Each table row is judged as a node would be: it gets the labels a node
 * of that type carries (the instance type; on AWS also Karpenter's and
 * EKS Auto Mode's family, size, GPU name and count...) and the pod's
 * parsed placement is matched against them, keys the row cannot know
 * left out. A pod pins its type when every path to a node names it: the
 * candidates are then the values it names, else the rows its Karpenter
 * requirements admit.
 */
#include "policy/pod/placement.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"

#define LABEL_INSTANCE_TYPE_BETA "beta.kubernetes.io/instance-type"

/* The policy's Karpenter-style prefixes (nodeLabels instanceLabelPrefix:
 * Karpenter's, EKS Auto Mode's) each give a row NODELABELS_ATTRS labels. */
#define AWS_FACTS NODELABELS_ATTRS
#define ROW_LABELS (2 + AWS_FACTS * NODELABELS_PREFIXES)

struct row_labels {
    struct label items[ROW_LABELS];
    char values[AWS_FACTS][48];
    struct label_set set;
};

static bool
is_type_key(const char *key)
{
    return strcmp(key, LABEL_INSTANCE_TYPE) == 0 ||
           strcmp(key, LABEL_INSTANCE_TYPE_BETA) == 0;
}

static bool
is_aws_key(const char *key, const void *s)
{
    return nodelabels_prefixed(s, key);
}

/* AWS names read family.size, lowercase: "p4d.24xlarge", "p6-b200.48xlarge". */
static bool
is_aws_type(const char *name)
{
    const char *dot = strchr(name, '.');

    if (!islower((unsigned char)name[0]) || dot == NULL || strchr(dot + 1, '.'))
        return false;
    for (const char *c = name; *c; c++)
        if (isupper((unsigned char)*c) || *c == '_')
            return false;
    return true;
}

static int
label_cmp(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->key,
                  ((const struct label *)b)->key);
}

/* n bytes of s as a fact's value, cut to its 47 as "%.*s" would. */
static void
put_fact(char v[48], const char *s, size_t n)
{
    n = n < 47 ? n : 47;
    memcpy(v, s, n);
    v[n] = '\0';
}

/* Karpenter's values for an AWS row (karpenter-provider-aws labels.go),
 * in nodelabels_attrs' order, copied rather than formatted: a row is
 * labelled per review. */
static void
aws_facts(const struct instance_type *t, char v[AWS_FACTS][48])
{
    const char *dot = strchr(t->name, '.');
    size_t fam = (size_t)(dot - t->name), cat = 0, gen;
    size_t i;

    put_fact(v[0], t->name, fam);
    put_fact(v[1], dot + 1, strlen(dot + 1));
    while (cat < fam && islower((unsigned char)t->name[cat]))
        cat++;
    for (gen = cat; gen < fam && isdigit((unsigned char)t->name[gen]); gen++)
        ;
    put_fact(v[2], t->name, cat);
    put_fact(v[3], t->name + cat, gen - cat);
    decimal_write(v[4], t->count);
    /* "A10G" -> "a10g", "L40S" -> "l40s": Karpenter's gpu-name. */
    put_fact(v[5], t->accelerator, strlen(t->accelerator));
    for (i = 0; v[5][i]; i++)
        v[5][i] = v[5][i] == ' ' ? '-' : (char)tolower((unsigned char)v[5][i]);
    put_fact(v[6], "nvidia", 6);
}

static bool
sorted_by_key(const struct label *items, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (strcmp(items[i - 1].key, items[i].key) > 0)
            return false;
    return true;
}

/* The labels a node of type t carries; written is the type as pinned. */
static void
row_labels(const struct snapshot *s, const struct instance_type *t,
           const char *written, struct row_labels *r)
{
    size_t n = 0;

    /* The prefixes' labels come sorted (nodelabels.h); with the two type
     * keys around them the whole is sorted for the policy's own
     * prefixes, so the sort is only a check that nothing moved. */
    r->items[n++] = (struct label){LABEL_INSTANCE_TYPE_BETA, written};
    if (s->n_attr_keys && is_aws_type(t->name) &&
        strcmp(t->resource, RESOURCE_GPU) == 0) {
        aws_facts(t, r->values);
        for (size_t i = 0; i < s->n_attr_keys; i++)
            r->items[n++] = (struct label){s->attr_keys[i].key,
                                           r->values[s->attr_keys[i].attr]};
    }
    r->items[n++] = (struct label){LABEL_INSTANCE_TYPE, written};
    if (!sorted_by_key(r->items, n))
        qsort(r->items, n, sizeof(r->items[0]), label_cmp);
    r->set = (struct label_set){r->items, n};
}

/* A row is a candidate when its labels admit the pod. */
static bool
row_admits(const struct snapshot *s, const struct match *m,
           const struct instance_type *t, const char *written)
{
    struct row_labels r;

    row_labels(s, t, written, &r);
    return match_labels(m, &r.set, match_any_key);
}

/* Adds t once; false when the array is full (p->too_many is then set). */
static bool
add_type(struct placement *p, const struct instance_type *t)
{
    for (size_t i = 0; i < p->n_types; i++)
        if (p->types[i] == t)
            return true;
    if (p->n_types == PLACEMENT_MAX) {
        p->too_many = true;
        return false;
    }
    p->types[p->n_types++] = t;
    return true;
}

/* One instance type value the pod names: a candidate, or unknown. */
static bool
pinned_value(const struct snapshot *s, const struct match *m, const char *v,
             struct placement *p)
{
    const struct instance_type *t = snapshot_lookup(s, v);

    if (t == NULL) {
        if (p->unknown == NULL)
            p->unknown = v;
        p->n_unknown++;
        return true;
    }
    return !row_admits(s, m, t, v) || add_type(p, t);
}

static bool
pinned_values(const struct snapshot *s, const struct match *m,
              const struct match_expr *xs, size_t n, struct placement *p)
{
    const cJSON *v;

    for (size_t i = 0; i < n; i++) {
        if (xs[i].op != MATCH_IN || !is_type_key(xs[i].key))
            continue;
        if (cJSON_IsString(xs[i].values)) { /* a nodeSelector entry */
            if (!pinned_value(s, m, xs[i].values->valuestring, p))
                return false;
            continue;
        }
        cJSON_ArrayForEach(v, xs[i].values)
        {
            if (!pinned_value(s, m, v->valuestring, p))
                return false;
        }
    }
    return true;
}

/* The rows Karpenter's requirements admit, GPU types on AWS only. */
static void
karpenter_rows(const struct snapshot *s, const struct match *m,
               struct placement *p)
{
    for (size_t i = 0; i < s->n_types; i++) {
        const struct instance_type *t = &s->types[i];
        if (is_aws_type(t->name) && strcmp(t->resource, RESOURCE_GPU) == 0 &&
            row_admits(s, m, t, t->name) && !add_type(p, t))
            return;
    }
}

/*
 * Candidates too small for the pod cannot be where it lands, unless none
 * is big enough: then judging says "it can never be scheduled".
 */
static void
drop_too_small(long gpus, struct placement *p)
{
    size_t n = 0;

    for (size_t i = 0; i < p->n_types; i++)
        if (p->types[i]->count >= gpus)
            p->types[n++] = p->types[i];
    if (n > 0)
        p->n_types = n;
}

void
placement_clear(struct placement *p)
{
    memset(p, 0, offsetof(struct placement, rows));
}

void
placement_read(const struct snapshot *s, const struct match *m, long gpus,
               struct placement *p)
{
    placement_clear(p);
    p->node = match_named_node(m);
    if (match_pins(m, is_type_key)) {
        p->pinned = true;
        p->evidence = EVIDENCE_PIN;
        p->via = match_pins(&(struct match){.selector = m->selector,
                                            .n_selector = m->n_selector},
                            is_type_key)
                     ? "nodeSelector"
                     : "node affinity";
        if (pinned_values(s, m, m->selector, m->n_selector, p))
            for (size_t i = 0; i < m->n_terms; i++)
                if (!pinned_values(s, m, m->terms[i].exprs, m->terms[i].n, p))
                    break;
    } else if (match_pins_ctx(m, is_aws_key, s)) {
        p->pinned = true;
        p->evidence = EVIDENCE_PIN;
        p->via = "Karpenter labels";
        karpenter_rows(s, m, p);
    }
    if (gpus > 0)
        drop_too_small(gpus, p);
}

static bool
is_clique_key(const char *key)
{
    return strcmp(key, LABEL_GPU_CLIQUE) == 0;
}

void
placement_clique(const struct snapshot *s, const struct match *m,
                 const cJSON *spec, const struct workload *w,
                 struct placement *p)
{
    if (!w->cd_channel ||
        !(match_requires(m, is_clique_key) ||
          pod_affinity_on(spec, is_clique_key)))
        return;
    placement_clear(p);
    p->pinned = true;
    p->evidence = EVIDENCE_CLIQUE;
    p->via = "ComputeDomain claim on " LABEL_GPU_CLIQUE " nodes";
    for (size_t i = 0; i < s->n_types; i++) {
        const struct instance_type *t = &s->types[i];
        if (type_multinode_nvlink(t) && row_admits(s, m, t, t->name) &&
            !add_type(p, t))
            return;
    }
    if (w->gpus > 0)
        drop_too_small(w->gpus, p);
}

bool
placement_known(const struct placement *p)
{
    return p->n_types > 0 && p->unknown == NULL && p->unresolved == NULL &&
           !p->too_many;
}

const char *
evidence_name(enum evidence e)
{
    static const char *const names[] = {"none",  "pin",   "policy",
                                        "nodes", "queue", "clique"};
    return names[e];
}
