/*
 * placement_view.c - candidates of a pod that pins no instance type, from
 * the cluster view: the kinds of node it fits, each read as a table row.
 *
 * A node fits a pod as the scheduler says (match.h), with two choices of
 * ours: taints that describe a node's condition (not-ready, unschedulable
 * and the others listed below) do not rule it out, since the hardware is
 * what matters here; and the tolerations topogate itself adds for the GPU
 * and EFA taints count as the pod's.
 */
#include "policy/pod/placement.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"
#include "policy/table/products.h"
#include "policy/table/table.h"
#include "policy/view/view.h"

/* The tolerations mutate.c adds (patch_tolerations). */
static const struct match_toleration added[] = {
    {RESOURCE_GPU, true, NULL, "NoSchedule", false},
    {RESOURCE_EFA, true, NULL, "NoSchedule", false},
};

static bool
keeps_pods_off(const struct taint *t)
{
    if (view_condition_taint(t->key))
        return false; /* a condition of the node, not what it is (view.c) */
    return strcmp(t->effect, "NoSchedule") == 0 ||
           strcmp(t->effect, "NoExecute") == 0;
}

static bool
fits(const struct match *m, const struct label_set *labels,
     const struct taint *taints, size_t n_taints, bool (*unknown)(const char *))
{
    return match_labels(m, labels, unknown) &&
           match_untolerated(m, taints, n_taints, keeps_pods_off, added,
                             sizeof(added) / sizeof(added[0])) == NULL;
}

/* Whether every label of the flavor is on the kind, as Kueue requires. */
static bool
flavor_holds(const struct view_flavor *f, const struct node_kind *k)
{
    for (size_t i = 0; i < f->n_labels; i++) {
        const char *v = label_get(&k->set, f->labels[i].key);
        if (v == NULL || strcmp(v, f->labels[i].value) != 0)
            return false;
    }
    return true;
}

/* The pod may be given this flavor: Kueue judges only the flavor's keys. */
static bool
flavor_admits(const struct match *m, const struct view_flavor *f)
{
    return fits(m, &f->set, f->taints, f->n_taints, match_any_key);
}

static long
nic_count(const struct node_kind *k, const char *resource)
{
    for (size_t i = 0; i < k->n_nics; i++)
        if (strcmp(k->nics[i].resource, resource) == 0)
            return k->nics[i].count;
    return 0;
}

/* The table's row, with the node's own counts; false: it cannot be. */
static bool
row_from_type(const struct instance_type *t, const struct node_kind *k,
              struct placement_row *r)
{
    const char *nic = type_nic_resource(t);

    /* More GPUs than the type has: MIG slices or shared GPUs. */
    if (k->gpus > t->count)
        return false;
    r->row = *t;
    r->row.count = (int)k->gpus;
    /* The node's own NIC count wins over the table's; a shared plugin's
     * slot count is no NIC count: the policy's stands where it has any. */
    if (nic && table_rdma_class(nic) == RDMA_SLOTS)
        r->row.efa = nic_count(k, nic) > 0 ? t->efa : 0;
    else if (nic)
        r->row.efa = (int)nic_count(k, nic);
    /* The nodes' count is the evidence nicsNeedEvidence asks for. */
    r->row.nics_need_evidence = false;
    return true;
}

/* A row from the GPU product alone; false when the product does not say
 * how its GPUs are joined at this count. */
static bool
row_from_product(const struct gpu_product *g, const char *value,
                 const struct node_kind *k, struct placement_row *r)
{
    enum interconnect link;
    long shm = k->memory_gib / 8;

    if (!product_link(g, (int)k->gpus, &link))
        return false;
    memset(&r->row, 0, sizeof(r->row));
    /* The table's /dev/shm rule: host memory / 8, at least 1Gi. */
    snprintf(r->shm, sizeof(r->shm), "%ldGi", shm > 0 ? shm : 1);
    /* The view's string: it outlives the decision; rows are never freed
     * or written through. */
    r->row.name = (char *)value;
    r->row.accelerator = g->accelerator;
    r->row.resource = RESOURCE_GPU;
    r->row.count = (int)k->gpus;
    r->row.memory = g->memory;
    r->row.link = link;
    r->row.nvlink_gbps = g->nvlink_gbps;
    r->row.shm = r->shm;
    r->row.shm_bytes = (uint64_t)(shm > 0 ? shm : 1) << 30;
    /* One NIC resource the pods can ask for, if the node has one (a
     * shared plugin's slots are not NICs to count); never GPUDirect RDMA
     * env: the product does not say. */
    const struct view_nic *nic = NULL;
    for (size_t i = 0; i < k->n_nics; i++) {
        if (table_rdma_class(k->nics[i].resource) != RDMA_NICS)
            continue;
        if (nic) {
            nic = NULL; /* two: which one pods take is not known */
            break;
        }
        nic = &k->nics[i];
    }
    if (nic) {
        r->row.efa = (int)nic->count;
        r->row.nic_resource = nic->resource;
    }
    return true;
}

const char *
placement_kind(const struct snapshot *s, const struct node_kind *k,
               struct placement_row *r)
{
    const struct instance_type *t;

    /* The policy's nodeLabels, in its order: the labels that name an
     * instance type, then those that name a GPU product (nodelabels.h). */
    for (size_t i = 0; i < s->n_type_keys; i++) {
        const char *type = label_get(&k->set, s->type_keys[i]);
        if (type && (t = snapshot_lookup(s, type)) != NULL)
            return row_from_type(t, k, r) ? s->type_keys[i] : NULL;
    }
    for (size_t i = 0; i < s->n_product_keys; i++) {
        const char *v = label_get(&k->set, s->product_keys[i]);
        const struct gpu_product *g = v ? snapshot_product(s, v) : NULL;
        if (g)
            return row_from_product(g, v, k, r) ? s->product_keys[i] : NULL;
    }
    /* GPUs known from the DRA driver's ResourceSlices alone (viewdra.h):
     * their productName, in GFD's form, through the same table. */
    const struct gpu_product *g = snapshot_product(s, k->dra_product);
    if (g)
        return row_from_product(g, k->dra_product, k, r)
                   ? "ResourceSlice productName"
                   : NULL;
    return NULL;
}

void
placement_describe(const struct snapshot *s, const struct node_kind *k,
                   char *buf, size_t len)
{
    const char *product = NULL;

    for (size_t i = 0; i < s->n_product_keys && product == NULL; i++)
        product = label_get(&k->set, s->product_keys[i]);
    if (product == NULL && k->dra_product)
        snprintf(buf, len, "nodes of %ld x '%s' GPUs (ResourceSlices)", k->gpus,
                 k->dra_product);
    else if (product)
        snprintf(buf, len, "nodes of %ld x '%s' GPUs", k->gpus, product);
    else
        snprintf(buf, len, "nodes of %ld GPUs of no named product", k->gpus);
}

static bool
in_queue(const struct view *v, const struct view_cluster_queue *q,
         const struct match *m, const struct node_kind *k)
{
    for (size_t i = 0; i < q->n_flavors; i++) {
        const struct view_flavor *f = view_flavor(v, q->flavors[i]);
        if (f && flavor_holds(f, k) && flavor_admits(m, f))
            return true;
    }
    return false;
}

/* The zone of a kind of node, once; past PLACEMENT_ZONES they are many
 * anyway, and the first eight say so well enough. */
static void
add_zone(struct placement *p, const struct node_kind *k)
{
    const char *z = label_get(&k->set, "topology.kubernetes.io/zone");

    if (z == NULL)
        z = label_get(&k->set, "failure-domain.beta.kubernetes.io/zone");
    if (z == NULL || p->zones.n == PLACEMENT_ZONES)
        return;
    for (size_t i = 0; i < p->zones.n; i++)
        if (strcmp(p->zones.names[i], z) == 0)
            return;
    p->zones.names[p->zones.n++] = z;
}

/* One kind as a candidate, nodes of it; false when p is full. */
static bool
add_kind(const struct snapshot *s, const struct node_kind *k, size_t nodes,
         struct placement *p)
{
    struct placement_row *r;
    const char *by, *type;

    if (p->n_rows == PLACEMENT_MAX) {
        p->too_many = true;
        return false;
    }
    r = &p->rows[p->n_rows];
    if ((by = placement_kind(s, k, r)) == NULL) {
        /* An instance type is named as one; a node without a type label
         * by what it says of itself (placement_describe()). */
        if (p->unresolved == NULL) {
            p->unresolved = label_get(&k->set, LABEL_INSTANCE_TYPE);
            p->unresolved_type = p->unresolved != NULL;
            if (p->unresolved == NULL) {
                placement_describe(s, k, p->what, sizeof(p->what));
                p->unresolved = p->what;
            }
        }
        return true;
    }
    /* Nodes of a pinned type the table lacks, known by their GPU
     * product: named as the pod names them (a view string). */
    type = label_get(&k->set, LABEL_INSTANCE_TYPE);
    if (p->type_pinned && type && strcmp(by, LABEL_INSTANCE_TYPE) != 0 &&
        snapshot_lookup(s, type) == NULL)
        r->row.name = (char *)type;
    r->nodes = nodes;
    r->kind = k;
    add_zone(p, k);
    p->zones.nics = p->zones.nics || type_nic_resource(&r->row) != NULL;
    p->n_rows++;
    p->types[p->n_types++] = &r->row;
    return true;
}

bool
placement_candidates(const struct placement *p, char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = '\0';
    if (p->evidence == EVIDENCE_CLIQUE && placement_known(p)) {
        /* Nothing named a type: say what the decision rests on. */
        snprintf(buf, len, "%s", PLACEMENT_CLIQUE_NOTE);
        return true;
    }
    if (p->n_rows < 2 ||
        (p->evidence != EVIDENCE_NODES && p->evidence != EVIDENCE_QUEUE))
        return false;
    at += (size_t)snprintf(buf, len, "the %s allow ", p->via);
    for (size_t i = 0; i < p->n_rows && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s (%zu node%s)",
                               i ? ", " : "", p->rows[i].row.name,
                               p->rows[i].nodes,
                               p->rows[i].nodes == 1 ? "" : "s");
    /* A pod that names its nodes, or pins its types, is pinned already:
     * the list is all there is to say. */
    if (at < len && !p->by_name && !p->type_pinned)
        snprintf(buf + at, len - at,
                 ": pin one with nodeSelector " LABEL_INSTANCE_TYPE);
    return true;
}

/*
 * A queue whose nodes do not exist yet (Karpenter, a node group at zero):
 * its flavors' own instance type, from the table, is where it will land.
 */
static void
flavor_rows(const struct snapshot *s, const struct view *v,
            const struct view_cluster_queue *q, const struct match *m,
            struct placement *c)
{
    for (size_t i = 0; i < q->n_flavors; i++) {
        const struct view_flavor *f = view_flavor(v, q->flavors[i]);
        const char *type = f ? label_get(&f->set, LABEL_INSTANCE_TYPE) : NULL;
        const struct instance_type *t;

        if (type == NULL && f)
            type = label_get(&f->set, "beta.kubernetes.io/instance-type");
        if (type == NULL || !flavor_admits(m, f))
            continue;
        if ((t = snapshot_lookup(s, type)) == NULL) {
            if (c->unresolved == NULL) {
                c->unresolved = type;
                c->unresolved_type = true;
            }
            continue;
        }
        if (c->n_types == PLACEMENT_MAX) {
            c->too_many = true;
            return;
        }
        c->types[c->n_types++] = t;
    }
}

/* Whether a kind of node can hold what the pod asks for, as the
 * scheduler's resource fit says: its GPUs, and its EFA devices. */
static bool
holds(const struct node_kind *k, const struct workload *w)
{
    return k->gpus >= w->gpus &&
           (w->efa <= 0 || nic_count(k, RESOURCE_EFA) >= w->efa);
}

/* Whether the pod can land on a kind of node: it holds the pod, admits
 * it (labels, taints) and, for a pod of queue q, is one of its flavors. */
static bool
candidate(const struct view *v, const struct view_cluster_queue *q,
          const struct match *m, const struct workload *w,
          const struct node_kind *k)
{
    return holds(k, w) &&
           fits(m, &k->set, k->taints, k->n_taints, view_per_node_label) &&
           (q == NULL || in_queue(v, q, m, k));
}

/* kubernetes.io/hostname is on a named node's labels; the other per-node
 * labels are still not known. */
static bool
unknown_but_hostname(const char *key)
{
    return view_per_node_label(key) && strcmp(key, VIEW_HOSTNAME) != 0;
}

/*
 * For a pod that names nodes: how many nodes of each kind (counts[i] for
 * v->kinds[i]) it can land on, each judged by its own name and hostname
 * (the scheduler's NodeName and NodeAffinity filters) besides its kind's
 * labels and taints. -1 out of memory.
 */
static int
named_counts(const struct view *v, const struct match *m, size_t *counts)
{
    size_t most = 0;
    struct label *buf;

    for (size_t i = 0; i < v->n_kinds; i++)
        if (v->kinds[i].n_labels > most)
            most = v->kinds[i].n_labels;
    if ((buf = calloc(most + 1, sizeof(*buf))) == NULL)
        return -1;
    for (size_t i = 0; i < v->n_named; i++) {
        const struct view_node *n = &v->named[i];
        const struct node_kind *k = n->kind;
        size_t at = 0, j = 0;
        /* The kind's labels with the node's hostname in its place. */
        for (; j < k->n_labels; j++) {
            if (n->hostname && at == j &&
                strcmp(k->labels[j].key, VIEW_HOSTNAME) > 0)
                buf[at++] = (struct label){VIEW_HOSTNAME, n->hostname};
            buf[at++] = k->labels[j];
        }
        if (n->hostname && at == j)
            buf[at++] = (struct label){VIEW_HOSTNAME, n->hostname};
        struct label_set set = {buf, at};
        if (match_node(m, &set, n->name, unknown_but_hostname) &&
            match_untolerated(m, k->taints, k->n_taints, keeps_pods_off, added,
                              sizeof(added) / sizeof(added[0])) == NULL)
            counts[k - v->kinds]++;
    }
    free(buf);
    return 0;
}

/*
 * How many nodes of each kind the pod can land on, into counts (n_kinds
 * long): a kind's every node, or for a pod that names nodes the ones it
 * names. -1 out of memory.
 */
static int
kind_counts(const struct view *v, const struct view_cluster_queue *q,
            const struct match *m, const struct workload *w, size_t *counts)
{
    bool named = match_names_nodes(m);

    if (named && named_counts(v, m, counts) < 0)
        return -1;
    for (size_t i = 0; i < v->n_kinds; i++) {
        const struct node_kind *k = &v->kinds[i];
        if (named)
            counts[i] = counts[i] && holds(k, w) &&
                                (q == NULL || in_queue(v, q, m, k))
                            ? counts[i]
                            : 0;
        else
            counts[i] = candidate(v, q, m, w, k) ? k->nodes : 0;
    }
    return 0;
}

static long fewest_of(const struct view *v, const struct match *m,
                      const struct workload *w, const char *ns,
                      const char *queue, const char *resource);

long
placement_nic_fewest(const struct view *v, const struct match *m,
                     const struct workload *w, const char *ns,
                     const char *queue, const char *resource)
{
    if (resource == NULL)
        return -1;
    return fewest_of(v, m, w, ns, queue, resource);
}

long
placement_dra_nics(const struct view *v, const struct match *m,
                   const struct workload *w, const char *ns, const char *queue)
{
    return fewest_of(v, m, w, ns, queue, NULL);
}

/* The fewest of resource's allocatable count (NULL: DRA NICs) among the
 * kinds the pod can land on; -1 when none is known. */
static long
fewest_of(const struct view *v, const struct match *m, const struct workload *w,
          const char *ns, const char *queue, const char *resource)
{
    const struct view_cluster_queue *q;
    long fewest = -1;
    size_t *counts;

    if (v == NULL || v->too_many)
        return -1;
    q = queue && ns ? view_queue(v, ns, queue) : NULL;
    if ((counts = calloc(v->n_kinds + 1, sizeof(*counts))) == NULL ||
        kind_counts(v, q, m, w, counts) < 0) {
        free(counts);
        return -1; /* out of memory: only the table speaks */
    }
    for (size_t i = 0; i < v->n_kinds && fewest != 0; i++) {
        const struct node_kind *k = &v->kinds[i];
        long n;
        if (counts[i] == 0)
            continue;
        n = resource ? nic_count(k, resource) : k->dra_nics;
        if (fewest < 0 || n < fewest)
            fewest = n;
    }
    free(counts);
    return fewest;
}

/*
 * The candidates from the view into p; pin (may be NULL) is what the pod
 * pinned itself, whose table rows stay candidates beside the view's.
 * Leaves p alone when no node fits (p->no_node set then, where the view
 * has GPU nodes). -1 out of memory (p left alone).
 */
static int
from_view(const struct snapshot *s, const struct view *v,
          const struct match *m, const struct workload *w, const char *ns,
          const char *queue, const struct placement *pin, struct placement *p)
{
    const struct view_cluster_queue *q;
    struct placement c;
    size_t *counts;

    if (v == NULL)
        return 0;
    q = queue && ns ? view_queue(v, ns, queue) : NULL;
    if (v->too_many || (v->n_kinds == 0 && q == NULL))
        return 0; /* an empty view says nothing */
    if ((counts = calloc(v->n_kinds + 1, sizeof(*counts))) == NULL ||
        kind_counts(v, q, m, w, counts) < 0) {
        free(counts);
        return -1;
    }
    placement_clear(&c);
    c.type_pinned = pin != NULL;
    for (size_t i = 0; i < v->n_kinds; i++) {
        if (counts[i] == 0)
            continue;
        if (!add_kind(s, &v->kinds[i], counts[i], &c))
            break;
    }
    free(counts);
    if (q && c.n_types == 0 && c.unresolved == NULL && !c.too_many)
        flavor_rows(s, v, q, m, &c);
    if (c.n_types == 0 && c.unresolved == NULL && !c.too_many) {
        p->no_node = v->n_kinds > 0; /* none yet: the view is no evidence */
        return 0;
    }
    c.pinned = true;
    c.evidence = q ? EVIDENCE_QUEUE : EVIDENCE_NODES;
    c.via = q ? "Kueue queue" : "cluster's nodes";
    c.by_name = match_names_nodes(m);
    if (c.by_name && !q)
        c.via = "nodes it names";
    if (pin) {
        c.type_pinned = true;
        c.via = "nodes of the pinned type";
    }
    c.node = p->node;
    if (c.unresolved && c.unresolved_type)
        c.unknown = c.unresolved;
    /* Rows point into c: move them, then point at the copies. Table rows
     * (a flavor's type) point into the snapshot and stay as they are. */
    memcpy(p, &c, offsetof(struct placement, rows));
    if (c.unresolved == c.what)
        p->unresolved = p->what; /* the copy's own description */
    memcpy(p->rows, c.rows, c.n_rows * sizeof(c.rows[0]));
    for (size_t i = 0; i < p->n_rows; i++) {
        if (p->rows[i].row.shm == c.rows[i].shm)
            p->rows[i].row.shm = p->rows[i].shm; /* a product's row */
        p->types[i] = &p->rows[i].row;
    }
    /* The pinned types the table knows and the view has no node of yet
     * (a group scaling from zero) stay candidates. */
    for (size_t i = 0; pin && i < pin->n_types && !p->too_many; i++) {
        bool seen = false;
        for (size_t j = 0; j < p->n_types && !seen; j++)
            seen = strcmp(p->types[j]->name, pin->types[i]->name) == 0;
        if (seen)
            continue;
        if (p->n_types == PLACEMENT_MAX)
            p->too_many = true;
        else
            p->types[p->n_types++] = pin->types[i];
    }
    return 0;
}

void
placement_from_view(const struct snapshot *s, const struct view *v,
                    const struct match *m, const struct workload *w,
                    const char *ns, const char *queue, struct placement *p)
{
    (void)from_view(s, v, m, w, ns, queue, NULL, p);
}

void
placement_pin_from_view(const struct snapshot *s, const struct view *v,
                        const struct match *m, const struct workload *w,
                        const char *ns, const char *queue,
                        struct placement *p)
{
    const struct view_cluster_queue *q;
    struct placement *pin;
    size_t *counts;
    bool seen = false;

    /* One unknown value: with more, the view would have to know each. */
    if (v == NULL || v->too_many || !p->pinned ||
        p->evidence != EVIDENCE_PIN || p->n_unknown != 1 || p->too_many)
        return;
    q = queue && ns ? view_queue(v, ns, queue) : NULL;
    if ((counts = calloc(v->n_kinds + 1, sizeof(*counts))) == NULL)
        return;
    if (kind_counts(v, q, m, w, counts) == 0)
        for (size_t i = 0; i < v->n_kinds && !seen; i++) {
            const char *t = label_get(&v->kinds[i].set, LABEL_INSTANCE_TYPE);
            if (t == NULL)
                t = label_get(&v->kinds[i].set,
                              "beta.kubernetes.io/instance-type");
            seen = counts[i] > 0 && t && strcmp(t, p->unknown) == 0;
        }
    free(counts);
    if (!seen)
        return; /* no node of that type yet: the pin alone speaks */
    /* The pin's table rows point into the snapshot: a shallow copy keeps
     * them while from_view() rewrites p. */
    if ((pin = malloc(sizeof(*pin))) == NULL)
        return;
    memcpy(pin, p, offsetof(struct placement, rows));
    (void)from_view(s, v, m, w, ns, queue, pin, p);
    free(pin);
}

void
placement_numa(const struct snapshot *s, const struct view *v,
               const struct match *m, const struct workload *w,
               const char *ns, const char *queue, struct placement *p)
{
    const struct view_cluster_queue *q;
    size_t *counts;

    p->n_numa = 0;
    p->numa_gpus = 0;
    /* Most clusters have none: no second look at the kinds. */
    if (v == NULL || v->too_many || v->n_kinds == 0 || !v->numa_strict)
        return;
    q = queue && ns ? view_queue(v, ns, queue) : NULL;
    if ((counts = calloc(v->n_kinds, sizeof(*counts))) == NULL ||
        kind_counts(v, q, m, w, counts) < 0) {
        free(counts);
        return; /* out of memory: no warning, no less a refusal */
    }
    for (size_t i = 0; i < v->n_kinds; i++) {
        const struct node_kind *k = &v->kinds[i];
        const struct node_numa *n = &k->numa;
        struct placement_row r;
        const char *by;

        if (counts[i] == 0 || (n->policy != NUMA_RESTRICTED &&
                               n->policy != NUMA_SINGLE_NODE))
            continue;
        if (n->policy == NUMA_SINGLE_NODE && n->zones > 0 &&
            n->gpus[0] > 0 && (p->numa_gpus == 0 || n->gpus[0] < p->numa_gpus))
            p->numa_gpus = n->gpus[0];
        if (p->n_numa == PLACEMENT_NUMA)
            continue;
        by = placement_kind(s, k, &r);
        p->numa[p->n_numa].kind = k;
        snprintf(p->numa[p->n_numa].name, sizeof(p->numa[0].name), "%s",
                 by ? r.row.name : "GPU");
        p->n_numa++;
    }
    free(counts);
}
