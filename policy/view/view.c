/*
 * view.c - see view.h.
 *
 * The index keeps each GPU node as a name and a pointer to a shared kind:
 * nodes alike in labels (per-node ones left out), taints (condition ones
 * left out) and allocatable GPUs and NICs share one entry, so 5,000 nodes
 * of a few dozen kinds cost a few dozen label sets. A node update that
 * changes none of these finds its own kind again and is dropped.
 *
 * Labels that name one node are of two sorts. Those we know by name
 * (view_per_node_label()) are left out of every kind. Any other label
 * that differs from node to node (a serial number, a provider's ID) is
 * found by counting, when the kinds outgrow what a view can use
 * (VIEW_KINDS_MAX): a key with more values than that among the kinds
 * cannot group nodes into a usable view whatever the others do, and the
 * count is a floor of its values in the cluster, so no order the nodes
 * come in can make a pool label (500 node groups of 20 nodes: 500
 * values) look like one. Such a key is kept in each kind as present
 * with VIEW_PER_NODE_VALUE, so the nodes it split fall back into their
 * kinds. Counted again at each doubling of the kinds; once found, a key
 * stays so for the life of the index: a relist builds a new index and
 * counts again.
 */
#include "policy/view/view.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/pod.h"
#include "policy/k8s/quantity.h"
#include "policy/table/table.h"
#include "policy/view/namemap.h"
#include "policy/view/viewdra.h"

/* --- kinds ------------------------------------------------------------- */

struct kind_entry {
    struct node_kind k; /* k.nodes counts the nodes that point here */
    uint64_t hash;
};

struct node_entry {
    char *name;
    char *hostname; /* kubernetes.io/hostname, or NULL */
    struct kind_entry *kind;
};

/* The first count of kinds at which labels are counted; then at each
 * doubling. Below it, nodes of unique labels cost one kind each (a few
 * KiB: 513 of them are about 1.5 MiB). */
#define PER_NODE_CHECK (VIEW_KINDS_MAX + 1)
/*
 * Nodes without allocatable GPUs are kept too, out of the view, so that
 * ResourceSlices that come before or after them can make them GPU nodes.
 * Their kinds are not counted for per-node labels (they never reach a
 * view); past this many of them, a GPU-less node of a new kind is not
 * kept, and the view says so (idle_full).
 */
#define IDLE_KINDS_MAX (8 * VIEW_KINDS_MAX)

struct view_index {
    struct node_entry *nodes; /* sorted by name */
    size_t n_nodes, cap_nodes;
    struct kind_entry **kinds;
    size_t n_kinds, cap_kinds;
    char **per_node; /* keys found to differ per node, sorted */
    size_t n_per_node;
    size_t check_at; /* count labels when n_kinds reaches this */
    cJSON *flavors, *cluster_queues, *local_queues; /* name -> object */
    cJSON *runtimes, *cluster_runtimes; /* Trainer's, name -> object */
    cJSON *device_classes, *claim_templates; /* DRA's, kept whole */
    /* What the index keeps of each node's own objects, by node name
     * (namemap.h: an update of one node finds them at once). */
    struct namemap *slices;      /* ResourceSlice name -> its node */
    struct namemap *node_slices; /* node -> {slice name ->
                                    viewdra_slice_summary()} */
    struct namemap *numa; /* node -> its NodeResourceTopology's node_numa */
    size_t n_idle_kinds; /* kinds of no GPU: not in views */
    bool idle_full;      /* a GPU-less node was not kept */
};

/*
 * Labels that name one node, or a slot of hardware finer than a kind, and
 * never what it is: grouping by them would make each node its own kind.
 * Every other label is kept: a pod may select on any of them.
 */
bool
view_per_node_label(const char *key)
{
    static const char *const exact[] = {
        VIEW_HOSTNAME,
        "alpha.eksctl.io/instance-id",
        "cloud.google.com/gce-topology-host",
        "topology.k8s.aws/network-node-layer-1",
        "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3",
        "topology.k8s.aws/network-node-layer-4",
        "node.kubernetes.io/instance-id",
        "kubernetes.azure.com/nodename",
        /* When GPU Feature Discovery started on the node, in Unix
         * seconds (NVIDIA/gpu-feature-discovery
         * internal/lm/timestamp.go, NewTimestampLabeler). */
        "nvidia.com/gfd.timestamp",
        NULL,
    };
    for (size_t i = 0; exact[i]; i++)
        if (strcmp(key, exact[i]) == 0)
            return true;
    return false;
}

/*
 * The taints that say what state a node is in, not what it is: the node
 * lifecycle controller and the kubelet set and clear them with the node's
 * conditions (k8s.io/api core/v1 well_known_taints.go: not-ready,
 * unreachable, unschedulable, memory-pressure, disk-pressure,
 * network-unavailable, pid-pressure), and the cloud controller manager
 * removes its uninitialized taint once it has initialised the node
 * (k8s.io/cloud-provider api/well_known_taints.go). Any other taint,
 * node.kubernetes.io/ ones an admin sets among them, keeps pods off the
 * node for the scheduler and so for topogate.
 */
bool
view_condition_taint(const char *key)
{
    static const char *const conditions[] = {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/network-unavailable",
        "node.kubernetes.io/pid-pressure",
        "node.cloudprovider.kubernetes.io/uninitialized",
        NULL,
    };
    for (size_t i = 0; conditions[i]; i++)
        if (strcmp(key, conditions[i]) == 0)
            return true;
    return false;
}

static int
str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the index found key to differ from node to node. */
static bool
found_per_node(const struct view_index *x, const char *key)
{
    return x != NULL && x->n_per_node > 0 &&
           bsearch(&key, x->per_node, x->n_per_node, sizeof(char *),
                   str_cmp) != NULL;
}

static uint64_t
fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0xff) * 1099511628211ULL; /* ends every string */
}

static int
label_cmp(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->key,
                  ((const struct label *)b)->key);
}

static char *
dup(const char *s)
{
    return strdup(s ? s : "");
}

static void
labels_free(struct label *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)l[i].key);
        free((char *)l[i].value);
    }
    free(l);
}

static void
taints_free(struct taint *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)t[i].key);
        free((char *)t[i].value);
        free((char *)t[i].effect);
    }
    free(t);
}

static void
kind_clear(struct node_kind *k)
{
    labels_free(k->labels, k->n_labels);
    taints_free(k->taints, k->n_taints);
    for (size_t i = 0; i < k->n_nics; i++)
        free(k->nics[i].resource);
    free(k->dra_product);
    memset(k, 0, sizeof(*k));
}

/*
 * A string -> string map into owned, sorted labels. x: a node's, for
 * that index: per-node labels known by name are left out, and those it
 * found to differ per node read as VIEW_PER_NODE_VALUE; NULL: all kept.
 */
static int
labels_read(const cJSON *map, const struct view_index *x, struct label **out,
            size_t *n)
{
    const cJSON *it;
    size_t cap = (size_t)cJSON_GetArraySize(map);

    *out = NULL;
    *n = 0;
    if (!cJSON_IsObject(map) || cap == 0)
        return 0;
    if ((*out = calloc(cap, sizeof(**out))) == NULL)
        return -1;
    cJSON_ArrayForEach(it, map)
    {
        if (!cJSON_IsString(it) || (x && view_per_node_label(it->string)))
            continue;
        struct label *l = &(*out)[(*n)++];
        l->key = dup(it->string);
        l->value = dup(found_per_node(x, it->string) ? VIEW_PER_NODE_VALUE
                                                     : it->valuestring);
        if (!l->key || !l->value)
            return -1;
    }
    qsort(*out, *n, sizeof(**out), label_cmp);
    return 0;
}

/* spec.taints or a flavor's nodeTaints, as taints that schedule; a
 * node's without those of its condition, which come and go. */
static int
taints_read(const cJSON *arr, bool node, struct taint **out, size_t *n)
{
    const cJSON *it;

    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
        return 0;
    if ((*out = calloc((size_t)cJSON_GetArraySize(arr), sizeof(**out))) == NULL)
        return -1;
    cJSON_ArrayForEach(it, arr)
    {
        const char *key = json_string(it, "key");
        const char *effect = json_string(it, "effect");
        if (key == NULL || effect == NULL ||
            (node && view_condition_taint(key)))
            continue;
        struct taint *t = &(*out)[(*n)++];
        t->key = dup(key);
        t->value = dup(json_string(it, "value"));
        t->effect = dup(effect);
        if (!t->key || !t->value || !t->effect)
            return -1;
    }
    return 0;
}

static long
count_of(const cJSON *v)
{
    long n;
    return v && quantity_count(v, &n) == 0 && n > 0 ? n : 0;
}

/* What decisions read of a Node (its GPUs from allocatable alone:
 * dra_apply() adds its ResourceSlices'). */
static int
kind_read(const struct view_index *x, const cJSON *node, struct node_kind *k)
{
    const cJSON *alloc = json_get(json_get(node, "status"), "allocatable");
    const cJSON *resources = cJSON_IsObject(alloc) ? alloc : NULL, *it;
    double mem;

    memset(k, 0, sizeof(*k));
    k->gpus = k->alloc_gpus = count_of(json_get(alloc, RESOURCE_GPU));
    if (quantity_json(json_get(alloc, "memory"), &mem) == 0 && mem > 0)
        k->memory_gib = (long)(mem / (1024.0 * 1024 * 1024));
    cJSON_ArrayForEach(it, resources)
    {
        long n = count_of(it);
        /* RDMA NICs and shared slots, by the names device plugins give
         * them (table.h); placement reads which is which. */
        if (n == 0 || table_rdma_class(it->string) == RDMA_NONE ||
            k->n_nics == VIEW_NICS)
            continue;
        k->nics[k->n_nics].resource = dup(it->string);
        k->nics[k->n_nics++].count = n;
        if (k->nics[k->n_nics - 1].resource == NULL)
            return -1;
    }
    if (labels_read(json_get(json_get(node, "metadata"), "labels"), x,
                    &k->labels, &k->n_labels) < 0 ||
        taints_read(json_get(json_get(node, "spec"), "taints"), true,
                    &k->taints, &k->n_taints) < 0)
        return -1;
    return 0;
}

/*
 * A node's ResourceSlices into its kind: where it has no allocatable
 * nvidia.com/gpu, the driver's whole GPUs and their product are its
 * GPUs; its DRANET RDMA NICs in any case. -1 out of memory.
 */
static int
dra_apply(const struct view_index *x, const char *node, struct node_kind *k)
{
    struct dra_devices d;

    free(k->dra_product);
    k->dra_product = NULL;
    if (viewdra_node(node ? namemap_get(x->node_slices, node) : NULL, node,
                     &d) < 0)
        return -1;
    k->dra_nics = d.nics;
    k->dra = k->alloc_gpus == 0 && d.gpus > 0;
    k->gpus = k->dra ? d.gpus : k->alloc_gpus;
    if (k->dra)
        k->dra_product = d.product;
    else
        free(d.product);
    return 0;
}

/* A node's NodeResourceTopology into its kind. */
static void
numa_apply(const struct view_index *x, const char *node, struct node_kind *k)
{
    const struct node_numa *n = node ? namemap_get(x->numa, node) : NULL;

    if (n)
        k->numa = *n;
    else
        memset(&k->numa, 0, sizeof(k->numa));
}

/* What a node's own objects add to its kind; -1 out of memory. */
static int
node_extras(const struct view_index *x, const char *node, struct node_kind *k)
{
    numa_apply(x, node, k);
    return dra_apply(x, node, k);
}

static uint64_t
kind_hash(const struct node_kind *k)
{
    uint64_t h = 14695981039346656037ULL;

    for (size_t i = 0; i < k->n_labels; i++)
        h = fnv(fnv(h, k->labels[i].key), k->labels[i].value);
    for (size_t i = 0; i < k->n_taints; i++)
        h = fnv(fnv(fnv(h, k->taints[i].key), k->taints[i].value),
                k->taints[i].effect);
    for (size_t i = 0; i < k->n_nics; i++)
        h = fnv(h, k->nics[i].resource) ^ (uint64_t)k->nics[i].count;
    h = fnv(h, k->dra_product) ^ (uint64_t)k->dra_nics * 7 ^ (uint64_t)k->dra;
    h ^= ((uint64_t)k->numa.policy << 8 | (uint64_t)k->numa.zones) * 257 ^
         (uint64_t)k->numa.gpus[0] * 65537;
    return h ^ (uint64_t)k->gpus * 31 ^ (uint64_t)k->memory_gib ^
           (uint64_t)k->alloc_gpus * 131;
}

static bool
kind_equal(const struct node_kind *a, const struct node_kind *b)
{
    if (a->gpus != b->gpus || a->memory_gib != b->memory_gib ||
        a->n_labels != b->n_labels || a->n_taints != b->n_taints ||
        a->n_nics != b->n_nics || a->alloc_gpus != b->alloc_gpus ||
        a->dra != b->dra || a->dra_nics != b->dra_nics ||
        strcmp(a->dra_product ? a->dra_product : "",
               b->dra_product ? b->dra_product : "") != 0 ||
        !viewnuma_equal(&a->numa, &b->numa))
        return false;
    for (size_t i = 0; i < a->n_labels; i++)
        if (strcmp(a->labels[i].key, b->labels[i].key) ||
            strcmp(a->labels[i].value, b->labels[i].value))
            return false;
    for (size_t i = 0; i < a->n_taints; i++)
        if (strcmp(a->taints[i].key, b->taints[i].key) ||
            strcmp(a->taints[i].value, b->taints[i].value) ||
            strcmp(a->taints[i].effect, b->taints[i].effect))
            return false;
    for (size_t i = 0; i < a->n_nics; i++)
        if (strcmp(a->nics[i].resource, b->nics[i].resource) ||
            a->nics[i].count != b->nics[i].count)
            return false;
    return true;
}

/* The index's entry equal to k (taking k's contents), or a new one;
 * NULL out of memory, or with *full for a GPU-less kind past
 * IDLE_KINDS_MAX. */
static struct kind_entry *
kind_intern(struct view_index *x, struct node_kind *k, bool *full)
{
    uint64_t h = kind_hash(k);
    struct kind_entry *e;

    *full = false;
    for (size_t i = 0; i < x->n_kinds; i++)
        if (x->kinds[i]->hash == h && kind_equal(&x->kinds[i]->k, k)) {
            kind_clear(k);
            return x->kinds[i];
        }
    if (k->gpus == 0 && x->n_idle_kinds >= IDLE_KINDS_MAX) {
        *full = true;
        return NULL;
    }
    if (x->n_kinds == x->cap_kinds) {
        size_t cap = x->cap_kinds ? x->cap_kinds * 2 : 16;
        struct kind_entry **grown = realloc(x->kinds, cap * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        x->kinds = grown;
        x->cap_kinds = cap;
    }
    if ((e = calloc(1, sizeof(*e))) == NULL)
        return NULL;
    e->k = *k;
    e->k.nodes = 0;
    e->hash = h;
    memset(k, 0, sizeof(*k));
    x->kinds[x->n_kinds++] = e;
    x->n_idle_kinds += e->k.gpus == 0;
    return e;
}

/* One node fewer of this kind; the last one frees it. */
static void
kind_release(struct view_index *x, struct kind_entry *e)
{
    if (--e->k.nodes > 0)
        return;
    for (size_t i = 0; i < x->n_kinds; i++)
        if (x->kinds[i] == e) {
            x->kinds[i] = x->kinds[--x->n_kinds];
            break;
        }
    x->n_idle_kinds -= e->k.gpus == 0;
    kind_clear(&e->k);
    free(e);
}

/* --- nodes ------------------------------------------------------------ */

/* Where name is, or would be inserted; *found says which. */
static size_t
node_find(const struct view_index *x, const char *name, bool *found)
{
    size_t lo = 0, hi = x->n_nodes;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, x->nodes[mid].name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    *found = false;
    return lo;
}

static void
node_remove(struct view_index *x, size_t at)
{
    kind_release(x, x->nodes[at].kind);
    free(x->nodes[at].name);
    free(x->nodes[at].hostname);
    memmove(&x->nodes[at], &x->nodes[at + 1],
            (x->n_nodes - at - 1) * sizeof(x->nodes[0]));
    x->n_nodes--;
    /* A cluster that shrank gives its array back. */
    if (x->cap_nodes > 64 && x->n_nodes < x->cap_nodes / 4) {
        struct node_entry *less =
            realloc(x->nodes, x->cap_nodes / 2 * sizeof(*less));
        if (less != NULL) {
            x->nodes = less;
            x->cap_nodes /= 2;
        }
    }
}

/* --- labels that differ per node ---------------------------------------- */

static int kind_copy(const struct node_kind *from, struct node_kind *to);

struct key_value {
    const char *key, *value;
};

static int
key_value_cmp(const void *pa, const void *pb)
{
    const struct key_value *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);

    return c ? c : strcmp(a->value, b->value);
}

/* Adds key to x->per_node, kept sorted. -1 out of memory. */
static int
per_node_add(struct view_index *x, const char *key)
{
    char **grown = realloc(x->per_node, (x->n_per_node + 1) * sizeof(*grown));

    if (grown == NULL)
        return -1;
    x->per_node = grown;
    if ((x->per_node[x->n_per_node] = strdup(key)) == NULL)
        return -1;
    x->n_per_node++;
    qsort(x->per_node, x->n_per_node, sizeof(char *), str_cmp);
    return 0;
}

/* Counts each label's values across the kinds; a key with more than
 * VIEW_KINDS_MAX joins x->per_node. How many joined, or -1 out of
 * memory. */
static int
per_node_count(struct view_index *x)
{
    size_t n = 0, at = 0;
    struct key_value *kv;
    int found = 0;

    for (size_t i = 0; i < x->n_kinds; i++)
        n += x->kinds[i]->k.gpus ? x->kinds[i]->k.n_labels : 0;
    if (n == 0)
        return 0;
    if ((kv = calloc(n, sizeof(*kv))) == NULL)
        return -1;
    for (size_t i = 0; i < x->n_kinds; i++)
        for (size_t j = 0; x->kinds[i]->k.gpus && j < x->kinds[i]->k.n_labels;
             j++)
            kv[at++] = (struct key_value){x->kinds[i]->k.labels[j].key,
                                          x->kinds[i]->k.labels[j].value};
    qsort(kv, n, sizeof(*kv), key_value_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i, values = 0;

        for (; j < n && strcmp(kv[j].key, kv[i].key) == 0; j++)
            values += j == i || strcmp(kv[j].value, kv[j - 1].value) != 0;
        if (values > VIEW_KINDS_MAX && !found_per_node(x, kv[i].key)) {
            if (per_node_add(x, kv[i].key) < 0) {
                free(kv);
                return -1;
            }
            found++;
        }
        i = j;
    }
    free(kv);
    return found;
}

/* Whether a kind holds a value of a key now known to differ per node. */
static bool
kind_stale(const struct view_index *x, const struct node_kind *k)
{
    for (size_t i = 0; i < k->n_labels; i++)
        if (found_per_node(x, k->labels[i].key) &&
            strcmp(k->labels[i].value, VIEW_PER_NODE_VALUE) != 0)
            return true;
    return false;
}

/* Moves every node of a stale kind to the kind without those values. */
static int
per_node_regroup(struct view_index *x)
{
    for (size_t i = 0; i < x->n_nodes; i++) {
        struct kind_entry *old = x->nodes[i].kind, *e;
        struct node_kind k;

        if (!kind_stale(x, &old->k))
            continue;
        if (kind_copy(&old->k, &k) < 0) {
            kind_clear(&k);
            return -1;
        }
        for (size_t j = 0; j < k.n_labels; j++)
            if (found_per_node(x, k.labels[j].key)) {
                char *v = strdup(VIEW_PER_NODE_VALUE);
                if (v == NULL) {
                    kind_clear(&k);
                    return -1;
                }
                free((char *)k.labels[j].value);
                k.labels[j].value = v;
            }
        bool full;
        if ((e = kind_intern(x, &k, &full)) == NULL) {
            kind_clear(&k);
            if (full)
                continue; /* a GPU-less node keeps its old kind */
            return -1;
        }
        e->k.nodes++;
        x->nodes[i].kind = e;
        kind_release(x, old);
    }
    return 0;
}

/* At each check point: find the keys that differ per node, regroup. */
static int
per_node_check(struct view_index *x)
{
    int found;

    size_t gpu_kinds = x->n_kinds - x->n_idle_kinds;

    if (gpu_kinds < x->check_at)
        return 0;
    if ((found = per_node_count(x)) > 0 && per_node_regroup(x) < 0)
        return -1;
    x->check_at =
        gpu_kinds * 2 > PER_NODE_CHECK ? gpu_kinds * 2 : PER_NODE_CHECK;
    return found < 0 ? -1 : 0;
}

/* A node's hostname label changed (or came, or went): 0 same, 1 changed,
 * -1 out of memory. */
static int
hostname_set(struct node_entry *n, const char *hostname)
{
    char *copy;

    if (hostname == NULL ? n->hostname == NULL
                         : n->hostname && strcmp(n->hostname, hostname) == 0)
        return 0;
    if (hostname && (copy = strdup(hostname)) == NULL)
        return -1;
    free(n->hostname);
    n->hostname = hostname ? copy : NULL;
    return 1;
}

int
view_index_put_node(struct view_index *x, const cJSON *node)
{
    const char *name = json_string(json_get(node, "metadata"), "name");
    const char *hostname =
        json_string(json_get(json_get(node, "metadata"), "labels"),
                    VIEW_HOSTNAME);
    struct node_kind k;
    struct kind_entry *e;
    bool found, full, seen;
    size_t at;

    if (name == NULL)
        return 0;
    at = node_find(x, name, &found);
    if (kind_read(x, node, &k) < 0 || node_extras(x, name, &k) < 0) {
        kind_clear(&k);
        return -1;
    }
    if ((e = kind_intern(x, &k, &full)) == NULL) {
        kind_clear(&k);
        if (!full)
            return -1;
        x->idle_full = true;
        if (!found)
            return 0;
        seen = x->nodes[at].kind->k.gpus > 0;
        node_remove(x, at);
        return seen; /* a GPU node lost its GPUs: it leaves the view */
    }
    if (found) {
        int host = hostname_set(&x->nodes[at], hostname);
        struct kind_entry *old = x->nodes[at].kind;
        if (host < 0)
            return -1;
        if (old == e) /* a heartbeat, nothing decisions read */
            return e->k.gpus > 0 ? host : 0;
        seen = old->k.gpus > 0 || e->k.gpus > 0;
        e->k.nodes++;
        kind_release(x, old);
        x->nodes[at].kind = e;
        return per_node_check(x) < 0 ? -1 : seen;
    }
    if (x->n_nodes == x->cap_nodes) {
        size_t cap = x->cap_nodes ? x->cap_nodes * 2 : 64;
        struct node_entry *grown = realloc(x->nodes, cap * sizeof(*grown));
        if (grown == NULL)
            goto fail;
        x->nodes = grown;
        x->cap_nodes = cap;
    }
    memmove(&x->nodes[at + 1], &x->nodes[at],
            (x->n_nodes - at) * sizeof(x->nodes[0]));
    x->n_nodes++;
    x->nodes[at] = (struct node_entry){strdup(name), NULL, e};
    e->k.nodes++;
    if (x->nodes[at].name == NULL ||
        hostname_set(&x->nodes[at], hostname) < 0) {
        node_remove(x, at);
        return -1;
    }
    seen = e->k.gpus > 0; /* before a regroup may free e */
    return per_node_check(x) < 0 ? -1 : seen;
fail:
    e->k.nodes++;
    kind_release(x, e);
    return -1;
}

int
view_index_del_node(struct view_index *x, const cJSON *node)
{
    const char *name = json_string(json_get(node, "metadata"), "name");
    bool found;
    size_t at;

    if (name == NULL)
        return 0;
    at = node_find(x, name, &found);
    if (!found)
        return 0;
    found = x->nodes[at].kind->k.gpus > 0;
    node_remove(x, at);
    return found;
}

/* --- ResourceSlices ---------------------------------------------------- */

/* A node's kind again, its slices having changed: 1 when the view sees
 * the change, 0 not, -1 out of memory. */
static int
node_rekind(struct view_index *x, size_t at)
{
    struct kind_entry *old = x->nodes[at].kind, *e;
    struct node_kind k;
    bool full, seen;

    if (kind_copy(&old->k, &k) < 0 ||
        node_extras(x, x->nodes[at].name, &k) < 0) {
        kind_clear(&k);
        return -1;
    }
    if ((e = kind_intern(x, &k, &full)) == NULL) {
        kind_clear(&k);
        return full ? 0 : -1;
    }
    if (e == old)
        return 0;
    seen = old->k.gpus > 0 || e->k.gpus > 0;
    e->k.nodes++;
    x->nodes[at].kind = e;
    kind_release(x, old);
    return seen;
}

static int
rekind_name(struct view_index *x, const char *name)
{
    bool found;
    size_t at;

    if (name == NULL)
        return 0;
    at = node_find(x, name, &found);
    return found ? node_rekind(x, at) : 0;
}

static int
rekind_all(struct view_index *x)
{
    int rc = 0, r;

    for (size_t i = 0; i < x->n_nodes; i++) {
        if ((r = node_rekind(x, i)) < 0)
            return -1;
        rc |= r;
    }
    return per_node_check(x) < 0 ? -1 : rc;
}

/* The slice named name out of node's. */
static void
slice_forget(struct view_index *x, const char *node, const char *name)
{
    cJSON *mine = namemap_get(x->node_slices, node);

    cJSON_DeleteItemFromObjectCaseSensitive(mine, name);
    if (mine && cJSON_GetArraySize(mine) == 0)
        namemap_del(x->node_slices, node);
}

/* sum (taken, even on failure) as the slice named name of its node; 0,
 * or -1 out of memory. */
static int
slice_keep(struct view_index *x, const char *name, cJSON *sum)
{
    const char *node = json_string(sum, "node");
    cJSON *mine = namemap_get(x->node_slices, node);
    char *copy;

    if (mine == NULL && ((mine = cJSON_CreateObject()) == NULL ||
                         namemap_set(x->node_slices, node, mine) < 0)) {
        cJSON_Delete(mine);
        cJSON_Delete(sum);
        return -1;
    }
    if (!cJSON_AddItemToObject(mine, name, sum)) {
        cJSON_Delete(sum);
        return -1;
    }
    if ((copy = strdup(node)) == NULL ||
        namemap_set(x->slices, name, copy) < 0) {
        free(copy);
        slice_forget(x, node, name);
        return -1;
    }
    return 0;
}

/* A ResourceSlice in, or (obj NULL) the one named name out. */
static int
slice_put(struct view_index *x, const char *name, const cJSON *obj)
{
    const char *was;
    cJSON *sum = NULL, *old = NULL;
    char *old_node = NULL;
    bool per_node = false;
    int a, b;

    if (name == NULL)
        return 0;
    if (obj && (sum = viewdra_slice_summary(obj, &per_node)) == NULL &&
        per_node)
        return -1;
    if ((was = namemap_get(x->slices, name)) != NULL)
        old = cJSON_GetObjectItemCaseSensitive(
            namemap_get(x->node_slices, was), name);
    if (was == NULL && sum == NULL)
        return 0; /* no one node's devices, before or now */
    if (old && sum && cJSON_Compare(old, sum, 1)) {
        cJSON_Delete(sum);
        return 0;
    }
    if (was && (old_node = strdup(was)) == NULL) {
        cJSON_Delete(sum);
        return -1;
    }
    if (old_node) {
        slice_forget(x, old_node, name);
        namemap_del(x->slices, name);
    }
    if (sum && slice_keep(x, name, sum) < 0) {
        free(old_node);
        return -1;
    }
    a = rekind_name(x, old_node);
    b = sum ? rekind_name(x, json_string(sum, "node")) : 0;
    free(old_node);
    if (a < 0 || b < 0 || per_node_check(x) < 0)
        return -1;
    return 1; /* a slice of a node not seen yet waits for it */
}

/* --- NodeResourceTopologies ------------------------------------------- */

/* A node's NodeResourceTopology in, or (gone) out: 1 when what the kind
 * reads of it changed, 0 not, -1 out of memory. */
static int
numa_put(struct view_index *x, const cJSON *obj, bool gone)
{
    struct node_numa n;
    const char *name = viewnuma_read(obj, &n);
    int rc;

    if (name == NULL)
        return 0;
    /* 0: pods came or went, and nothing kept changed. */
    if (gone) {
        rc = namemap_del(x->numa, name);
    } else {
        const struct node_numa *old = namemap_get(x->numa, name);
        struct node_numa *keep;
        if (old && viewnuma_equal(old, &n))
            return 0;
        if ((keep = malloc(sizeof(*keep))) == NULL)
            return -1;
        *keep = n;
        if (namemap_set(x->numa, name, keep) < 0) {
            free(keep);
            return -1;
        }
        rc = 1;
    }
    if (rc <= 0)
        return rc;
    if (rekind_name(x, name) < 0 || per_node_check(x) < 0)
        return -1;
    return 1; /* one for a node not seen yet waits for it */
}

/* --- Kueue's queues, Trainer's runtimes -------------------------------- */

/* These objects are few: kept whole (kind, metadata, spec), keyed
 * "namespace/name". */
static cJSON **
object_map(struct view_index *x, const char *kind)
{
    if (strcmp(kind, "ResourceFlavor") == 0)
        return &x->flavors;
    if (strcmp(kind, "ClusterQueue") == 0)
        return &x->cluster_queues;
    if (strcmp(kind, "LocalQueue") == 0)
        return &x->local_queues;
    if (strcmp(kind, "TrainingRuntime") == 0)
        return &x->runtimes;
    if (strcmp(kind, "ClusterTrainingRuntime") == 0)
        return &x->cluster_runtimes;
    if (strcmp(kind, "DeviceClass") == 0)
        return &x->device_classes;
    if (strcmp(kind, "ResourceClaimTemplate") == 0)
        return &x->claim_templates;
    return NULL;
}

static void
object_key(const cJSON *obj, char *key, size_t len)
{
    const cJSON *meta = json_get(obj, "metadata");
    const char *ns = json_string(meta, "namespace");
    const char *name = json_string(meta, "name");

    snprintf(key, len, "%s/%s", ns ? ns : "", name ? name : "");
}

int
view_index_put_object(struct view_index *x, const char *kind,
                      const cJSON *obj)
{
    cJSON **map = object_map(x, kind), *keep, *old;
    char key[512];

    if (strcmp(kind, "ResourceSlice") == 0)
        return slice_put(x, json_string(json_get(obj, "metadata"), "name"),
                         obj);
    if (strcmp(kind, "NodeResourceTopology") == 0)
        return numa_put(x, obj, false);
    if (map == NULL || json_string(json_get(obj, "metadata"), "name") == NULL)
        return 0; /* not one of these kinds, or nameless: nothing to keep */
    object_key(obj, key, sizeof(key));
    /* Only the spec matters; status changes on every admission. */
    old = cJSON_GetObjectItemCaseSensitive(*map, key);
    if (old && cJSON_Compare(json_get(old, "spec"), json_get(obj, "spec"), 1))
        return 0;
    /* A spec may be missing (or null): kept as an empty one. */
    const cJSON *spec = json_get(obj, "spec");
    if ((keep = cJSON_CreateObject()) == NULL ||
        !cJSON_AddStringToObject(keep, "kind", kind) ||
        !cJSON_AddItemToObject(keep, "metadata",
                               cJSON_Duplicate(json_get(obj, "metadata"), 1)) ||
        !cJSON_AddItemToObject(keep, "spec",
                               cJSON_IsObject(spec) ? cJSON_Duplicate(spec, 1)
                                                    : cJSON_CreateObject())) {
        cJSON_Delete(keep);
        return -1;
    }
    if (old)
        cJSON_ReplaceItemInObjectCaseSensitive(*map, key, keep);
    else
        cJSON_AddItemToObject(*map, key, keep);
    return 1;
}

int
view_index_del_object(struct view_index *x, const char *kind,
                      const cJSON *obj)
{
    cJSON **map = object_map(x, kind), *old;
    char key[512];

    if (strcmp(kind, "ResourceSlice") == 0)
        return slice_put(x, json_string(json_get(obj, "metadata"), "name"),
                         NULL);
    if (strcmp(kind, "NodeResourceTopology") == 0)
        return numa_put(x, obj, true);
    if (map == NULL)
        return 0;
    object_key(obj, key, sizeof(key));
    old = cJSON_DetachItemFromObjectCaseSensitive(*map, key);
    cJSON_Delete(old);
    return old != NULL;
}

static void
json_free(void *obj)
{
    cJSON_Delete(obj);
}

/* *m empty, its values freed with free_value; -1 out of memory. */
static int
maps_reset(struct namemap **m, void (*free_value)(void *))
{
    struct namemap *fresh = namemap_new(free_value);

    if (fresh == NULL)
        return -1;
    namemap_free(*m);
    *m = fresh;
    return 0;
}

int
view_index_replace(struct view_index *x, const char *kind, const cJSON *items)
{
    const cJSON *it;

    if (strcmp(kind, "Node") == 0) {
        while (x->n_nodes > 0)
            node_remove(x, x->n_nodes - 1);
        cJSON_ArrayForEach(it, items)
        {
            if (view_index_put_node(x, it) < 0)
                return -1;
        }
        return 0;
    }
    if (strcmp(kind, "ResourceSlice") == 0) {
        if (maps_reset(&x->slices, free) < 0 ||
            maps_reset(&x->node_slices, json_free) < 0)
            return -1;
        cJSON_ArrayForEach(it, items)
        {
            if (slice_put(x, json_string(json_get(it, "metadata"), "name"),
                          it) < 0)
                return -1;
        }
        return rekind_all(x) < 0 ? -1 : 0;
    }
    if (strcmp(kind, "NodeResourceTopology") == 0) {
        if (maps_reset(&x->numa, free) < 0)
            return -1;
        cJSON_ArrayForEach(it, items)
        {
            if (numa_put(x, it, false) < 0)
                return -1;
        }
        return rekind_all(x) < 0 ? -1 : 0;
    }
    cJSON **map = object_map(x, kind);
    if (map == NULL)
        return -1;
    cJSON_Delete(*map);
    if ((*map = cJSON_CreateObject()) == NULL)
        return -1;
    cJSON_ArrayForEach(it, items)
    {
        if (view_index_put_object(x, kind, it) < 0)
            return -1;
    }
    return 0;
}

#define SWAP(a, b)                                                             \
    do {                                                                       \
        __typeof__(a) t_ = (a);                                                \
        (a) = (b);                                                             \
        (b) = t_;                                                              \
    } while (0)

int
view_index_take(struct view_index *x, const char *kind,
                 struct view_index *from)
{
    if (strcmp(kind, "Node") == 0) {
        SWAP(x->nodes, from->nodes);
        SWAP(x->n_nodes, from->n_nodes);
        SWAP(x->cap_nodes, from->cap_nodes);
        SWAP(x->kinds, from->kinds);
        SWAP(x->n_kinds, from->n_kinds);
        SWAP(x->cap_kinds, from->cap_kinds);
        SWAP(x->per_node, from->per_node);
        SWAP(x->n_per_node, from->n_per_node);
        SWAP(x->check_at, from->check_at);
        SWAP(x->n_idle_kinds, from->n_idle_kinds);
        SWAP(x->idle_full, from->idle_full);
        /* The list was read without x's slices. */
        return rekind_all(x) < 0 ? -1 : 0;
    }
    if (strcmp(kind, "ResourceSlice") == 0) {
        SWAP(x->slices, from->slices);
        SWAP(x->node_slices, from->node_slices);
        return rekind_all(x) < 0 ? -1 : 0;
    }
    if (strcmp(kind, "NodeResourceTopology") == 0) {
        SWAP(x->numa, from->numa);
        return rekind_all(x) < 0 ? -1 : 0;
    }
    cJSON **mine = object_map(x, kind), **theirs = object_map(from, kind);
    if (mine == NULL)
        return -1;
    SWAP(*mine, *theirs);
    return 0;
}

int
view_index_put(struct view_index *x, const cJSON *obj)
{
    const char *kind = json_string(obj, "kind");

    if (kind && strcmp(kind, "Node") == 0)
        return view_index_put_node(x, obj) < 0 ? -1 : 1;
    if (kind && (object_map(x, kind) || strcmp(kind, "ResourceSlice") == 0 ||
                 strcmp(kind, "NodeResourceTopology") == 0))
        return view_index_put_object(x, kind, obj) < 0 ? -1 : 1;
    return 0;
}

struct view_index *
view_index_new(void)
{
    struct view_index *x = calloc(1, sizeof(*x));

    if (x == NULL)
        return NULL;
    x->check_at = PER_NODE_CHECK;
    x->flavors = cJSON_CreateObject();
    x->cluster_queues = cJSON_CreateObject();
    x->local_queues = cJSON_CreateObject();
    x->runtimes = cJSON_CreateObject();
    x->cluster_runtimes = cJSON_CreateObject();
    x->device_classes = cJSON_CreateObject();
    x->claim_templates = cJSON_CreateObject();
    x->slices = namemap_new(free);
    x->node_slices = namemap_new(json_free);
    x->numa = namemap_new(free);
    if (!x->flavors || !x->cluster_queues || !x->local_queues || !x->runtimes ||
        !x->cluster_runtimes || !x->device_classes || !x->claim_templates ||
        !x->slices || !x->node_slices || !x->numa) {
        view_index_free(x);
        return NULL;
    }
    return x;
}

void
view_index_free(struct view_index *x)
{
    if (x == NULL)
        return;
    while (x->n_nodes > 0)
        node_remove(x, x->n_nodes - 1);
    free(x->nodes);
    free(x->kinds);
    for (size_t i = 0; i < x->n_per_node; i++)
        free(x->per_node[i]);
    free(x->per_node);
    cJSON_Delete(x->flavors);
    cJSON_Delete(x->cluster_queues);
    cJSON_Delete(x->local_queues);
    cJSON_Delete(x->runtimes);
    cJSON_Delete(x->cluster_runtimes);
    cJSON_Delete(x->device_classes);
    cJSON_Delete(x->claim_templates);
    namemap_free(x->slices);
    namemap_free(x->node_slices);
    namemap_free(x->numa);
    free(x);
}

/* --- the immutable view ----------------------------------------------- */

static int
kind_copy(const struct node_kind *from, struct node_kind *to)
{
    memset(to, 0, sizeof(*to));
    to->gpus = from->gpus;
    to->alloc_gpus = from->alloc_gpus;
    to->dra = from->dra;
    to->dra_nics = from->dra_nics;
    to->memory_gib = from->memory_gib;
    to->numa = from->numa;
    to->nodes = from->nodes;
    if (from->dra_product &&
        (to->dra_product = strdup(from->dra_product)) == NULL)
        return -1;
    if (from->n_labels &&
        (to->labels = calloc(from->n_labels, sizeof(*to->labels))) == NULL)
        return -1;
    for (; to->n_labels < from->n_labels; to->n_labels++) {
        struct label *l = &to->labels[to->n_labels];
        l->key = dup(from->labels[to->n_labels].key);
        l->value = dup(from->labels[to->n_labels].value);
        if (!l->key || !l->value) {
            to->n_labels++;
            return -1;
        }
    }
    to->set = (struct label_set){to->labels, to->n_labels};
    if (from->n_taints &&
        (to->taints = calloc(from->n_taints, sizeof(*to->taints))) == NULL)
        return -1;
    for (; to->n_taints < from->n_taints; to->n_taints++) {
        const struct taint *f = &from->taints[to->n_taints];
        struct taint *t = &to->taints[to->n_taints];
        t->key = dup(f->key);
        t->value = dup(f->value);
        t->effect = dup(f->effect);
        if (!t->key || !t->value || !t->effect) {
            to->n_taints++;
            return -1;
        }
    }
    for (; to->n_nics < from->n_nics; to->n_nics++) {
        to->nics[to->n_nics].count = from->nics[to->n_nics].count;
        if ((to->nics[to->n_nics].resource =
                 dup(from->nics[to->n_nics].resource)) == NULL)
            return -1;
    }
    return 0;
}

static int
flavor_read(const cJSON *obj, struct view_flavor *f)
{
    const cJSON *spec = json_get(obj, "spec");

    f->name = dup(json_string(json_get(obj, "metadata"), "name"));
    if (f->name == NULL ||
        labels_read(json_get(spec, "nodeLabels"), NULL, &f->labels,
                    &f->n_labels) < 0 ||
        taints_read(json_get(spec, "nodeTaints"), false, &f->taints,
                    &f->n_taints) < 0)
        return -1;
    f->set = (struct label_set){f->labels, f->n_labels};
    return 0;
}

static bool
covers_gpus(const cJSON *group)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, json_get(group, "coveredResources"))
    {
        if (cJSON_IsString(r) && strcmp(r->valuestring, RESOURCE_GPU) == 0)
            return true;
    }
    return false;
}

/* The flavors of the resource groups that cover GPUs, in order. */
static int
cluster_queue_read(const cJSON *obj, struct view_cluster_queue *q)
{
    const cJSON *group, *f;
    size_t n = 0;

    q->name = dup(json_string(json_get(obj, "metadata"), "name"));
    if (q->name == NULL)
        return -1;
    cJSON_ArrayForEach(group, json_get(json_get(obj, "spec"), "resourceGroups"))
    {
        if (covers_gpus(group))
            n += (size_t)cJSON_GetArraySize(json_get(group, "flavors"));
    }
    if (n && (q->flavors = calloc(n, sizeof(*q->flavors))) == NULL)
        return -1;
    cJSON_ArrayForEach(group, json_get(json_get(obj, "spec"), "resourceGroups"))
    {
        if (!covers_gpus(group))
            continue;
        cJSON_ArrayForEach(f, json_get(group, "flavors"))
        {
            const char *name = json_string(f, "name");
            if (name && (q->flavors[q->n_flavors++] = strdup(name)) == NULL)
                return -1;
        }
    }
    return 0;
}

static int
local_queue_read(const cJSON *obj, struct view_local_queue *q)
{
    const cJSON *meta = json_get(obj, "metadata");

    q->namespace = dup(json_string(meta, "namespace"));
    q->name = dup(json_string(meta, "name"));
    q->cluster_queue = dup(json_string(json_get(obj, "spec"), "clusterQueue"));
    return q->namespace && q->name && q->cluster_queue ? 0 : -1;
}

static void
view_free(struct view *v)
{
    for (size_t i = 0; i < v->n_kinds; i++)
        kind_clear(&v->kinds[i]);
    free(v->kinds);
    for (size_t i = 0; i < v->n_named; i++) {
        free(v->named[i].name);
        free(v->named[i].hostname);
    }
    free(v->named);
    for (size_t i = 0; i < v->n_flavors; i++) {
        free(v->flavors[i].name);
        labels_free(v->flavors[i].labels, v->flavors[i].n_labels);
        taints_free(v->flavors[i].taints, v->flavors[i].n_taints);
    }
    free(v->flavors);
    for (size_t i = 0; i < v->n_cluster_queues; i++) {
        free(v->cluster_queues[i].name);
        for (size_t j = 0; j < v->cluster_queues[i].n_flavors; j++)
            free(v->cluster_queues[i].flavors[j]);
        free(v->cluster_queues[i].flavors);
    }
    free(v->cluster_queues);
    for (size_t i = 0; i < v->n_local_queues; i++) {
        free(v->local_queues[i].namespace);
        free(v->local_queues[i].name);
        free(v->local_queues[i].cluster_queue);
    }
    free(v->local_queues);
    free(v->runtimes.items);
    cJSON_Delete(v->runtime_objects);
    cJSON_Delete(v->device_classes);
    cJSON_Delete(v->claim_templates);
    for (size_t i = 0; i < v->n_per_node; i++)
        free(v->per_node[i]);
    free(v->per_node);
    free(v);
}

static void *
array(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

/* Kinds in a stable order, for people and golden files: by labels. */
static int
kind_order(const void *pa, const void *pb)
{
    const struct node_kind *a = pa, *b = pb;
    int c;

    for (size_t i = 0; i < a->n_labels && i < b->n_labels; i++) {
        if ((c = strcmp(a->labels[i].key, b->labels[i].key)) != 0 ||
            (c = strcmp(a->labels[i].value, b->labels[i].value)) != 0)
            return c;
    }
    if (a->n_labels != b->n_labels)
        return a->n_labels < b->n_labels ? -1 : 1;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    return a->n_taints < b->n_taints ? -1 : a->n_taints > b->n_taints;
}

static int
entry_order(const void *pa, const void *pb)
{
    return kind_order(&(*(struct kind_entry *const *)pa)->k,
                      &(*(struct kind_entry *const *)pb)->k);
}

/* The index's nodes by name, each pointing at its kind in v (sorted[j]
 * became v->kinds[j]); nodes of kinds past VIEW_KINDS_MAX are left out. */
static int
named_copy(const struct view_index *x, struct kind_entry *const *sorted,
           struct view *v)
{
    if ((v->named = array(x->n_nodes, sizeof(*v->named))) == NULL)
        return -1;
    for (size_t i = 0; i < x->n_nodes; i++) {
        const struct node_entry *n = &x->nodes[i];
        size_t j = 0;
        while (j < v->n_kinds && sorted[j] != n->kind)
            j++;
        if (j == v->n_kinds)
            continue;
        struct view_node *to = &v->named[v->n_named++];
        to->kind = &v->kinds[j];
        to->name = strdup(n->name);
        to->hostname = n->hostname ? strdup(n->hostname) : NULL;
        if (to->name == NULL || (n->hostname && to->hostname == NULL))
            return -1;
    }
    return 0;
}

/* Trainer's runtimes as expand() takes them, owned by the view. */
static int
runtimes_copy(const struct view_index *x, struct view *v)
{
    size_t n = (size_t)cJSON_GetArraySize(x->runtimes) +
               (size_t)cJSON_GetArraySize(x->cluster_runtimes);
    const cJSON *maps[] = {x->runtimes, x->cluster_runtimes}, *it;

    if ((v->runtime_objects = cJSON_CreateArray()) == NULL ||
        (v->runtimes.items = array(n, sizeof(*v->runtimes.items))) == NULL)
        return -1;
    for (size_t m = 0; m < 2; m++)
        cJSON_ArrayForEach(it, maps[m])
        {
            cJSON *copy = cJSON_Duplicate(it, true);
            if (!cJSON_AddItemToArray(v->runtime_objects, copy)) {
                cJSON_Delete(copy);
                return -1;
            }
            v->runtimes.items[v->runtimes.n++] = copy;
        }
    return 0;
}

const struct runtimes *
view_runtimes(const struct view *v)
{
    return v && v->runtimes.n > 0 ? &v->runtimes : NULL;
}

struct view *
view_build(const struct view_index *x)
{
    struct view *v = calloc(1, sizeof(*v));
    size_t kinds = x->n_kinds - x->n_idle_kinds, at = 0;
    struct kind_entry **sorted = NULL;
    const cJSON *it;

    if (v == NULL)
        return NULL;
    v->refs = 1;
    v->n_slices = namemap_count(x->slices);
    v->n_numa = namemap_count(x->numa);
    v->n_unread = x->idle_full;
    if (kinds > VIEW_KINDS_MAX) {
        kinds = VIEW_KINDS_MAX;
        v->too_many = true;
    }
    v->kinds = array(kinds, sizeof(*v->kinds));
    v->flavors =
        array((size_t)cJSON_GetArraySize(x->flavors), sizeof(*v->flavors));
    v->cluster_queues = array((size_t)cJSON_GetArraySize(x->cluster_queues),
                              sizeof(*v->cluster_queues));
    v->local_queues = array((size_t)cJSON_GetArraySize(x->local_queues),
                            sizeof(*v->local_queues));
    sorted = array(kinds, sizeof(*sorted));
    if (!v->kinds || !v->flavors || !v->cluster_queues || !v->local_queues ||
        !sorted)
        goto fail;
    /* Every GPU node counts, kept out past VIEW_KINDS_MAX or not. */
    for (size_t i = 0; i < x->n_kinds; i++) {
        const struct node_kind *k = &x->kinds[i]->k;
        v->n_nodes += k->gpus ? k->nodes : 0;
        v->numa_strict = v->numa_strict ||
                         (k->gpus && (k->numa.policy == NUMA_RESTRICTED ||
                                      k->numa.policy == NUMA_SINGLE_NODE));
    }
    if (x->n_per_node &&
        (v->per_node = calloc(x->n_per_node, sizeof(char *))) == NULL)
        goto fail;
    for (; v->n_per_node < x->n_per_node; v->n_per_node++)
        if ((v->per_node[v->n_per_node] = strdup(x->per_node[v->n_per_node])) ==
            NULL)
            goto fail;
    /* Sorted before copying, so that nodes find their kind's place; GPU
     * kinds alone, the first VIEW_KINDS_MAX of them. */
    for (size_t i = 0; i < x->n_kinds && at < kinds; i++)
        if (x->kinds[i]->k.gpus > 0)
            sorted[at++] = x->kinds[i];
    qsort(sorted, kinds, sizeof(*sorted), entry_order);
    for (; v->n_kinds < kinds; v->n_kinds++) {
        struct node_kind *k = &v->kinds[v->n_kinds];
        if (kind_copy(&sorted[v->n_kinds]->k, k) < 0) {
            v->n_kinds++;
            goto fail;
        }
    }
    if (named_copy(x, sorted, v) < 0)
        goto fail;
    cJSON_ArrayForEach(it, x->flavors)
    {
        if (flavor_read(it, &v->flavors[v->n_flavors++]) < 0)
            goto fail;
    }
    cJSON_ArrayForEach(it, x->cluster_queues)
    {
        if (cluster_queue_read(it, &v->cluster_queues[v->n_cluster_queues++]) <
            0)
            goto fail;
    }
    cJSON_ArrayForEach(it, x->local_queues)
    {
        if (local_queue_read(it, &v->local_queues[v->n_local_queues++]) < 0)
            goto fail;
    }
    if (runtimes_copy(x, v) < 0 ||
        (v->device_classes = cJSON_Duplicate(x->device_classes, 1)) == NULL ||
        (v->claim_templates = cJSON_Duplicate(x->claim_templates, 1)) == NULL)
        goto fail;
    free(sorted);
    return v;
fail:
    free(sorted);
    view_free(v);
    return NULL;
}

struct view *
view_ref(struct view *v)
{
    if (v)
        atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    return v;
}

void
view_unref(struct view *v)
{
    if (v && atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1)
        view_free(v);
}

const struct view_flavor *
view_flavor(const struct view *v, const char *name)
{
    for (size_t i = 0; i < v->n_flavors; i++)
        if (strcmp(v->flavors[i].name, name) == 0)
            return &v->flavors[i];
    return NULL;
}

const struct view_cluster_queue *
view_queue(const struct view *v, const char *ns, const char *local_queue)
{
    for (size_t i = 0; i < v->n_local_queues; i++) {
        const struct view_local_queue *l = &v->local_queues[i];
        if (strcmp(l->namespace, ns) || strcmp(l->name, local_queue))
            continue;
        for (size_t j = 0; j < v->n_cluster_queues; j++)
            if (strcmp(v->cluster_queues[j].name, l->cluster_queue) == 0)
                return &v->cluster_queues[j];
    }
    return NULL;
}

const cJSON *
view_device_class(const struct view *v, const char *name)
{
    char key[512];

    if (v == NULL || name == NULL)
        return NULL;
    snprintf(key, sizeof(key), "/%s", name); /* object_key(): no namespace */
    return cJSON_GetObjectItemCaseSensitive(v->device_classes, key);
}

const cJSON *
view_claim_template(const struct view *v, const char *ns, const char *name)
{
    char key[512];

    if (v == NULL || name == NULL)
        return NULL;
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    return cJSON_GetObjectItemCaseSensitive(v->claim_templates, key);
}
