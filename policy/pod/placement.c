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

/* Karpenter's label prefix, and EKS Auto Mode's for the same labels. */
#define KARPENTER_PREFIX "karpenter.k8s.aws/instance-"
#define AUTO_MODE_PREFIX "eks.amazonaws.com/instance-"
static const char *const aws_prefixes[] = {KARPENTER_PREFIX, AUTO_MODE_PREFIX};
#define N_AWS_PREFIXES (sizeof(aws_prefixes) / sizeof(aws_prefixes[0]))

/* family, size, category, generation, gpu-count, -name, -manufacturer */
#define AWS_FACTS 7
#define ROW_LABELS (2 + AWS_FACTS * N_AWS_PREFIXES)

/* The facts' keys under each prefix, written out: a row is labelled per
 * review, and formatting them was a tenth of decide()'s instructions. */
#define AWS_KEYS(prefix)                                                       \
    {prefix "family",    prefix "size",     prefix "category",                \
     prefix "generation", prefix "gpu-count", prefix "gpu-name",              \
     prefix "gpu-manufacturer"}
static const char *const aws_keys[N_AWS_PREFIXES][AWS_FACTS] = {
    AWS_KEYS(KARPENTER_PREFIX), AWS_KEYS(AUTO_MODE_PREFIX)};

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
is_aws_key(const char *key)
{
    for (size_t i = 0; i < N_AWS_PREFIXES; i++)
        if (strncmp(key, aws_prefixes[i], strlen(aws_prefixes[i])) == 0)
            return true;
    return false;
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
 * copied rather than formatted: a row is labelled per review. */
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
row_labels(const struct instance_type *t, const char *written,
           struct row_labels *r)
{
    size_t n = 0;

    /* Written in the keys' order (beta.kubernetes.io, eks.amazonaws.com,
     * karpenter.k8s.aws, node.kubernetes.io; each prefix's facts by
     * name), so a sort is only a check that nothing moved. */
    static const size_t prefix_order[N_AWS_PREFIXES] = {1, 0};
    static const size_t fact_order[AWS_FACTS] = {2, 0, 3, 4, 6, 5, 1};

    r->items[n++] = (struct label){LABEL_INSTANCE_TYPE_BETA, written};
    if (is_aws_type(t->name) && strcmp(t->resource, RESOURCE_GPU) == 0) {
        aws_facts(t, r->values);
        for (size_t p = 0; p < N_AWS_PREFIXES; p++)
            for (size_t f = 0; f < AWS_FACTS; f++, n++)
                r->items[n] = (struct label){
                    aws_keys[prefix_order[p]][fact_order[f]],
                    r->values[fact_order[f]]};
    }
    r->items[n++] = (struct label){LABEL_INSTANCE_TYPE, written};
    if (!sorted_by_key(r->items, n))
        qsort(r->items, n, sizeof(r->items[0]), label_cmp);
    r->set = (struct label_set){r->items, n};
}

/* A row is a candidate when its labels admit the pod. */
static bool
row_admits(const struct match *m, const struct instance_type *t,
           const char *written)
{
    struct row_labels r;

    row_labels(t, written, &r);
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
    return !row_admits(m, t, v) || add_type(p, t);
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
            row_admits(m, t, t->name) && !add_type(p, t))
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
    } else if (match_pins(m, is_aws_key)) {
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
        if (type_multinode_nvlink(t) && row_admits(m, t, t->name) &&
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
